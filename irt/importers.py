"""Readers of external response sets into long-format rows for the shared response store (pure: no
Django). ``python manage.py import_responses`` stores what they return.

Formats (``FORMATS``):

``advscore``
    The ADVSCORE paper's matrices (Sung et al. 2025; shared/data/advscore/responses/*.csv): column
    ``item_id`` then one column per subject; a column named ``h_<name>`` is the human ``<name>``,
    any other column is a model (bot). Cells ``1``/``0`` (``1.0``/``0.0`` too); empty = not asked.
``advscore-text``
    The paper's raw ``*_text.csv`` layout (shared/data/advscore/text/): no item id (items are
    ``row<n>``, 1-based data row); text columns (question, claim, answer) are the ones holding
    anything but 0/1/empty and are skipped; a subject column named by digits, a 24-hex-digit
    crowd-worker id or a single letter is a human, any other (``GPT4``, ``DPR``…) a model.
``pyirt``
    py-irt jsonlines: one subject per line, ``{"subject_id": str, "responses": {item: 0|1}}``.
    Optional ``"kind": "human"|"bot"``; without it the ``h_`` prefix rule above applies.
``cycles``
    qb-tournament-runner's ``cycles.jsonl``: one game cycle (one tossup) per line,
    ``{"qid" | "question_id": str, "responses": [record, ...]}`` where a record is
    ``{"player" | "model" | "name": str, "isCorrect": bool, "position": int, "guess": str,
    "points": int, ["kind" | "type": "human"|"model"|"bot"]}``. Mapping: item = the qid; subject =
    the record's name, a bot when the record has ``model`` or its kind/type says model/bot, else a
    human; outcome = ``isCorrect`` (``points`` > 0 when ``isCorrect`` is absent); ``position`` (0-based
    token index of the buzz) is kept as the buzz position. The runner logs models' counterfactual
    answers on every tossup, humans only when they buzzed: a subject without a record on a cycle
    is left unobserved (not scored wrong), since who was still listening is not in the log. Several
    records of one subject on one qid (re-buzz after a lockout does not occur, but repeated cycles
    of a qid do) count as one response, correct if any was correct, at the earliest position.

Every error is a ``ResponseFormatError`` naming the file and line (1-based, the header is line 1).
"""

from __future__ import annotations

import csv
import json
import re
from collections.abc import Iterable, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

HUMAN_PREFIX = "h_"
_TEXT_HUMAN = re.compile(r"^(\d+|[0-9a-f]{24}|[A-Za-z])$")


class ResponseFormatError(ValueError):
    """A malformed response file; the message names the file and line."""

    def __init__(self, path: Path, line: int, message: str) -> None:
        super().__init__(f"{path}:{line}: {message}")
        self.path, self.line = path, line


@dataclass(frozen=True)
class ImportedResponse:
    """One observed outcome. subject: the subject's name as in the file (``h_`` prefix stripped);
    kind: ``human`` | ``bot``; item: the file's item id; correct: bool; position: 0-based token
    index of the buzz when the format has one, else None."""

    subject: str
    kind: str
    item: str
    correct: bool
    position: int | None = None


def kind_from_name(name: str) -> tuple[str, str]:
    """``h_<name>`` → (``human``, name); anything else → (``bot``, name) (ADVSCORE CSV convention)."""
    if name.startswith(HUMAN_PREFIX):
        return "human", name[len(HUMAN_PREFIX) :]
    return "bot", name


def _binary(cell: str) -> bool | None:
    """'' → None (not asked); '1', '1.0', '0', '0.0' → bool; anything else raises ValueError."""
    text = cell.strip()
    if text == "":
        return None
    value = float(text)
    if value not in (0.0, 1.0):
        raise ValueError(text)
    return value == 1.0


def _check_unique(path: Path, rows: Iterable[tuple[int, ImportedResponse]]) -> list[ImportedResponse]:
    seen: dict[tuple[str, str, str], int] = {}
    out = []
    for line, row in rows:
        key = (row.kind, row.subject, row.item)
        if key in seen:
            raise ResponseFormatError(
                path, line, f"second response of {row.subject!r} on {row.item!r} (first on line {seen[key]})"
            )
        seen[key] = line
        out.append(row)
    return out


def read_advscore(path: Path) -> list[ImportedResponse]:
    """Responses of an ADVSCORE CSV matrix (``item_id`` + subject columns). Raises
    ResponseFormatError for a missing ``item_id`` column, a duplicate subject column or item id,
    or a cell that is not 0/1/empty."""
    with path.open(newline="") as fh:
        reader = csv.reader(fh)
        header = next(reader, None)
        if not header or header[0] != "item_id":
            raise ResponseFormatError(path, 1, "first column must be 'item_id'")
        subjects = [kind_from_name(name) for name in header[1:]]
        if len(set(subjects)) != len(subjects):
            raise ResponseFormatError(path, 1, "duplicate subject column")

        def rows() -> Iterator[tuple[int, ImportedResponse]]:
            for line, cells in enumerate(reader, start=2):
                if not cells:
                    continue
                if len(cells) != len(header):
                    raise ResponseFormatError(path, line, f"{len(cells)} cells, header has {len(header)}")
                item = cells[0].strip()
                if not item:
                    raise ResponseFormatError(path, line, "empty item_id")
                for (kind, name), cell in zip(subjects, cells[1:], strict=True):
                    try:
                        outcome = _binary(cell)
                    except ValueError:
                        raise ResponseFormatError(
                            path, line, f"cell {cell!r} of {name!r} is not 0, 1 or empty"
                        ) from None
                    if outcome is not None:
                        yield line, ImportedResponse(name, kind, item, outcome)

        return _check_unique(path, rows())


def read_advscore_text(path: Path) -> list[ImportedResponse]:
    """Responses of the raw ``*_text.csv`` layout (see the module docstring). Raises
    ResponseFormatError when no column looks like a subject or a row has the wrong length."""
    with path.open(newline="") as fh:
        reader = csv.reader(fh)
        header = next(reader, None) or []
        body = list(enumerate(reader, start=2))
    for line, cells in body:
        if cells and len(cells) != len(header):
            raise ResponseFormatError(path, line, f"{len(cells)} cells, header has {len(header)}")

    def is_subject(col: int) -> bool:
        try:
            for _, cells in body:
                if cells:
                    _binary(cells[col])
        except ValueError:
            return False
        return True

    columns = [c for c, name in enumerate(header) if name.strip() and is_subject(c)]
    if not columns:
        raise ResponseFormatError(path, 1, "no subject column (0/1/empty cells) found")
    out = []
    for line, cells in body:
        for c in columns:
            outcome = _binary(cells[c]) if cells else None
            if outcome is not None:
                name = header[c].strip()
                kind = "human" if _TEXT_HUMAN.match(name) else "bot"
                out.append(ImportedResponse(name, kind, f"row{line - 1}", outcome))
    return out


def _json_lines(path: Path) -> Iterator[tuple[int, dict[str, Any]]]:
    with path.open() as fh:
        for line, text in enumerate(fh, start=1):
            if not text.strip():
                continue
            try:
                record = json.loads(text)
            except json.JSONDecodeError as exc:
                raise ResponseFormatError(path, line, f"invalid JSON: {exc.msg}") from None
            if not isinstance(record, dict):
                raise ResponseFormatError(path, line, "expected a JSON object")
            yield line, record


def read_pyirt(path: Path) -> list[ImportedResponse]:
    """Responses of py-irt jsonlines. Raises ResponseFormatError for a missing ``subject_id`` or
    ``responses`` object, an outcome other than 0/1/true/false, or a subject given twice."""

    def rows() -> Iterator[tuple[int, ImportedResponse]]:
        for line, record in _json_lines(path):
            subject, responses = record.get("subject_id"), record.get("responses")
            if not isinstance(subject, str) or not subject:
                raise ResponseFormatError(path, line, "missing 'subject_id' string")
            if not isinstance(responses, dict):
                raise ResponseFormatError(path, line, "missing 'responses' object")
            kind, name = kind_from_name(subject)
            if "kind" in record:
                if record["kind"] not in ("human", "bot"):
                    raise ResponseFormatError(path, line, f"kind {record['kind']!r} is not human or bot")
                kind, name = record["kind"], subject
            for item, outcome in responses.items():
                if outcome not in (0, 1):  # True/False compare equal to 1/0
                    raise ResponseFormatError(path, line, f"outcome {outcome!r} of item {item!r} is not 0/1")
                yield line, ImportedResponse(name, kind, str(item), bool(outcome))

    return _check_unique(path, rows())


def _cycle_record(path: Path, line: int, rec: Any) -> tuple[str, str, bool, int | None]:
    if not isinstance(rec, dict):
        raise ResponseFormatError(path, line, "a response record must be an object")
    name = rec.get("player") or rec.get("model") or rec.get("name")
    if not isinstance(name, str):
        raise ResponseFormatError(path, line, "response record without 'player', 'model' or 'name'")
    label = str(rec.get("kind") or rec.get("type") or "").lower()
    kind = "bot" if "model" in rec or label in ("model", "bot") else "human"
    if "isCorrect" in rec:
        correct = rec["isCorrect"]
    elif "points" in rec:
        correct = isinstance(rec["points"], int) and rec["points"] > 0
    else:
        raise ResponseFormatError(path, line, f"record of {name!r} has neither 'isCorrect' nor 'points'")
    if not isinstance(correct, bool):
        raise ResponseFormatError(path, line, f"isCorrect of {name!r} must be true/false")
    position = rec.get("position")
    if position is not None and (not isinstance(position, int) or position < 0):
        raise ResponseFormatError(path, line, f"position of {name!r} must be a non-negative integer")
    return name, kind, correct, position


def read_cycles(path: Path) -> list[ImportedResponse]:
    """Responses of a qb-tournament-runner ``cycles.jsonl`` (mapping in the module docstring).
    Raises ResponseFormatError for a cycle without a qid or a responses list, or a bad record."""
    merged: dict[tuple[str, str, str], ImportedResponse] = {}
    for line, cycle in _json_lines(path):
        qid = cycle.get("qid", cycle.get("question_id"))
        if not isinstance(qid, str | int) or qid == "":
            raise ResponseFormatError(path, line, "cycle without 'qid'")
        records = cycle.get("responses")
        if not isinstance(records, list):
            raise ResponseFormatError(path, line, "cycle without a 'responses' list")
        for rec in records:
            name, kind, correct, position = _cycle_record(path, line, rec)
            key = (kind, name, str(qid))
            old = merged.get(key)
            if old is not None:
                correct = correct or old.correct
                known = [p for p in (position, old.position) if p is not None]
                position = min(known) if known else None
            merged[key] = ImportedResponse(name, kind, str(qid), correct, position)
    return list(merged.values())


FORMATS = {
    "advscore": read_advscore,
    "advscore-text": read_advscore_text,
    "pyirt": read_pyirt,
    "cycles": read_cycles,
}


def read_responses(path: Path, fmt: str) -> list[ImportedResponse]:
    """Dispatch on ``fmt`` (a key of ``FORMATS``). Raises ValueError for an unknown format,
    ResponseFormatError for a malformed file (naming file and line) or one with no responses."""
    if fmt not in FORMATS:
        raise ValueError(f"unknown format {fmt!r}; choose one of {', '.join(FORMATS)}")
    rows = FORMATS[fmt](path)
    if not rows:
        raise ResponseFormatError(path, 1, "no responses in the file")
    return rows
