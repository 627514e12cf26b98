"""qb-tournament-runner logs: per-bot buzz logs (``*.buzz.csv``) and game cycles (``cycles.jsonl``).

Buzz logs: ``question_id, token_position, guess, confidence, buzz, correct``, one row per (question,
0-based token position); a row with ``buzz`` = 1 is a buzz (``read_buzz_log`` keeps the earliest).

Cycles: one game cycle (one tossup) per line, ``{"qid" | "question_id": str, "responses": [record,
...]}`` where a record is ``{"player" | "model" | "name": str, "isCorrect": bool, "position": int,
"guess": str, "points": int, ["kind" | "type": "human"|"model"|"bot"]}``. ``read_cycles`` maps them to
responses: item = the qid; subject = the record's name, a bot when the record has ``model`` or its
kind/type says model/bot, else a human; outcome = ``isCorrect`` (``points`` > 0 when ``isCorrect`` is
absent); ``position`` (0-based token index of the buzz) is kept. The runner logs models'
counterfactual answers on every tossup, humans only when they buzzed: a subject without a record on a
cycle is left unobserved (not scored wrong), since who was still listening is not in the log. Several
records of one subject on one qid (repeated cycles of a qid) count as one response, correct if any was
correct, at the earliest position.
"""

from __future__ import annotations

import csv
from pathlib import Path
from typing import Any

from formats.errors import FormatError
from formats.records import RecordedBuzz, ResponseRecord
from formats.textio import cell_bool, cell_float, cell_int, cell_text, iter_json_lines

BUZZ_COLUMNS = frozenset({"question_id", "token_position", "guess", "confidence", "buzz"})


def read_buzz_log(path: Path, reader: csv.DictReader[str]) -> dict[str, RecordedBuzz]:
    """The earliest buzz per question id of an open runner buzz log (``reader`` over ``path``).
    Questions never buzzed on are absent. Raises FormatError ``"path:LINE: message"`` for a missing
    value, a bad number or boolean or a negative position."""
    first: dict[str, RecordedBuzz] = {}
    for row in reader:
        line = reader.line_num
        qid = cell_text(path, line, row, "question_id")
        position = cell_int(path, line, row, "token_position")
        if cell_bool(path, line, row, "buzz"):
            buzz = RecordedBuzz(
                qid, position, row.get("guess") or "", cell_float(path, line, row, "confidence")
            )
            if qid not in first or position < first[qid].token_index:
                first[qid] = buzz
    return first


def _cycle_record(path: Path, line: int, rec: Any) -> tuple[str, str, bool, int | None]:
    if not isinstance(rec, dict):
        raise FormatError(path, line, "a response record must be an object")
    name = rec.get("player") or rec.get("model") or rec.get("name")
    if not isinstance(name, str):
        raise FormatError(path, line, "response record without 'player', 'model' or 'name'")
    label = str(rec.get("kind") or rec.get("type") or "").lower()
    kind = "bot" if "model" in rec or label in ("model", "bot") else "human"
    if "isCorrect" in rec:
        correct = rec["isCorrect"]
    elif "points" in rec:
        correct = isinstance(rec["points"], int) and rec["points"] > 0
    else:
        raise FormatError(path, line, f"record of {name!r} has neither 'isCorrect' nor 'points'")
    if not isinstance(correct, bool):
        raise FormatError(path, line, f"isCorrect of {name!r} must be true/false")
    position = rec.get("position")
    if position is not None and (not isinstance(position, int) or position < 0):
        raise FormatError(path, line, f"position of {name!r} must be a non-negative integer")
    return name, kind, correct, position


def read_cycles(path: Path) -> list[ResponseRecord]:
    """Responses of a ``cycles.jsonl`` (mapping in the module docstring). Raises FormatError for a
    cycle without a qid or a responses list, or a bad record."""
    merged: dict[tuple[str, str, str], ResponseRecord] = {}
    for line, cycle in iter_json_lines(path):
        qid = cycle.get("qid", cycle.get("question_id"))
        if not isinstance(qid, str | int) or qid == "":
            raise FormatError(path, line, "cycle without 'qid'")
        records = cycle.get("responses")
        if not isinstance(records, list):
            raise FormatError(path, line, "cycle without a 'responses' list")
        for rec in records:
            name, kind, correct, position = _cycle_record(path, line, rec)
            key = (kind, name, str(qid))
            old = merged.get(key)
            if old is not None:
                correct = correct or old.correct
                known = [p for p in (position, old.position) if p is not None]
                position = min(known) if known else None
            merged[key] = ResponseRecord(name, kind, str(qid), correct, position)
    return list(merged.values())
