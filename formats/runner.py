"""qb-tournament-runner files (qanta-org/qb-tournament-runner, ``shared/types.ts``; HYBRID.md):
the per-cycle record ``cycles.jsonl``, the per-system model response CSVs and the question CSVs.

Cycles: one JSON line per tossup+bonus cycle, keys in this order::

    {"tossupResponses": [{"tossupIndex": int, "qid": str,
                          "marker": {"player": {"id": str, "isStarter": bool, "name": str, "team": str},
                                     "position": int, "guess": str, "points": int, "isCorrect": bool}}],
     "bonusResponses": null | {"bonusIndex": int, "correctParts": [int], "receivingTeamName": str,
                               "parts": [{"teamName": str, "points": int, "responses": {name: guess},
                                          "finalGuess"?: str, "decision"?: "own"|"consult_ai"|"abstain",
                                          "aiRevealed"?: bool}]}}

``tossupIndex`` and ``bonusIndex`` are 0-based places in the packet; ``position`` is the runner's
word index at the buzz, i.e. the number of tokens revealed (Tossup's 0-based ``token_index`` + 1);
``correctParts`` 0-based part indexes. The runner names AI players ``ai_<n>``: ``read_cycles`` takes a
player id starting ``ai_`` for a bot, any other for a human.

Model response files, one pair per system: ``<system>.buzz.csv`` with ``question_id, token_position,
guess, confidence, buzz, correct`` (one row per question and 0-based token position; ``buzz`` 1 = it
buzzes there) and ``<system>.bonus.csv`` with ``question_id, part_num, guess, confidence,
explanation`` (``part_num`` 1-based; the runner's own loader reads the column as ``part_number``,
which ``read_bonus_responses`` accepts too).

Question files: ``tossups.csv`` (``question_id, text, answer, answerline``: ``text`` the display
tokens joined by spaces, so token positions agree), ``power.csv`` (``question, word``: the first
word read for fewer points) and ``bonuses.csv`` (``question_id, leadin, part1, answer1, answerline1``
… up to three parts, the runner's CSV layout).
"""

from __future__ import annotations

import csv
import io
import json
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from functools import partial
from pathlib import Path
from typing import Any

from formats.collect import Collector, build_bonus, build_tossup
from formats.errors import FormatError
from formats.records import BONUS_PART_VALUE, RecordedBuzz, ResponseRecord
from formats.textio import cell_bool, cell_float, cell_int, cell_text, csv_rows, header, iter_json_lines

BUZZ_COLUMNS = frozenset({"question_id", "token_position", "guess", "confidence", "buzz"})
#: Column order of the files the runner reads (HYBRID.md; ``server/data``).
BUZZ_CSV = ("question_id", "token_position", "guess", "confidence", "buzz", "correct")
BONUS_CSV = ("question_id", "part_num", "guess", "confidence", "explanation")
TOSSUPS_CSV = ("question_id", "text", "answer", "answerline")
POWER_CSV = ("question", "word")
BONUSES_CSV = (
    "question_id",
    "leadin",
    *(f"{k}{n}" for n in (1, 2, 3) for k in ("part", "answer", "answerline")),
)
#: The runner's id prefix of AI players (its rosters: ``ai_1``, ``ai_2``…).
AI_PREFIX = "ai_"


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


# ---------------------------------------------------------------- cycles.jsonl


@dataclass(frozen=True)
class TossupResponse:
    """One ruled buzz of a cycle: ``position`` the runner's (tokens revealed at the buzz)."""

    tossup_index: int
    qid: str
    player_id: str
    name: str
    team: str
    position: int
    guess: str
    points: int
    is_correct: bool
    is_starter: bool = True


@dataclass(frozen=True)
class BonusPart:
    team: str
    points: int
    responses: dict[str, str]
    final_guess: str | None = None
    decision: str | None = None
    ai_revealed: bool | None = None


@dataclass(frozen=True)
class BonusResponse:
    bonus_index: int
    receiving_team: str
    parts: tuple[BonusPart, ...]


@dataclass(frozen=True)
class Cycle:
    tossups: tuple[TossupResponse, ...]
    bonus: BonusResponse | None = None


def cycle_record(cycle: Cycle) -> dict[str, Any]:
    """The runner's JSON object for one cycle (keys and order as in the module docstring)."""
    bonus = cycle.bonus
    return {
        "tossupResponses": [
            {
                "tossupIndex": r.tossup_index,
                "qid": r.qid,
                "marker": {
                    "player": {"id": r.player_id, "isStarter": r.is_starter, "name": r.name, "team": r.team},
                    "position": r.position,
                    "guess": r.guess,
                    "points": r.points,
                    "isCorrect": r.is_correct,
                },
            }
            for r in cycle.tossups
        ],
        "bonusResponses": None
        if bonus is None
        else {
            "bonusIndex": bonus.bonus_index,
            "correctParts": [i for i, p in enumerate(bonus.parts) if p.points > 0],
            "receivingTeamName": bonus.receiving_team,
            "parts": [
                {
                    "teamName": p.team,
                    "points": p.points,
                    "responses": dict(p.responses),
                    **{
                        k: v
                        for k, v in (
                            ("finalGuess", p.final_guess),
                            ("decision", p.decision),
                            ("aiRevealed", p.ai_revealed),
                        )
                        if v is not None
                    },
                }
                for p in bonus.parts
            ],
        },
    }


def write_cycles(cycles: Iterable[Cycle]) -> str:
    """``cycles.jsonl``: one compact JSON line per cycle, as the runner appends them."""
    return "".join(
        json.dumps(cycle_record(c), ensure_ascii=False, separators=(",", ":")) + "\n" for c in cycles
    )


def _need(path: Path, line: int, obj: Any, key: str, kind: type | tuple[type, ...], where: str) -> Any:
    value = obj.get(key) if isinstance(obj, dict) else None
    if not isinstance(value, kind) or (kind is int and isinstance(value, bool)):
        raise FormatError(path, line, f"{where}.{key} missing or not {getattr(kind, '__name__', kind)}")
    return value


def parse_cycles(path: str | Path) -> list[Cycle]:
    """The cycles of a runner ``cycles.jsonl`` (``.gz`` too). Raises FormatError at the line of a
    record without ``tossupResponses``, or with a field missing or of the wrong type."""
    path = Path(path)
    out = []
    for line, rec in iter_json_lines(path):
        raw = _need(path, line, rec, "tossupResponses", list, "cycle")
        tossups = []
        for i, r in enumerate(raw):
            w = f"tossupResponses[{i}]"
            marker = _need(path, line, r, "marker", dict, w)
            player = _need(path, line, marker, "player", dict, f"{w}.marker")
            position = _need(path, line, marker, "position", int, f"{w}.marker")
            if position < 0:
                raise FormatError(path, line, f"{w}.marker.position must be ≥ 0")
            tossups.append(
                TossupResponse(
                    _need(path, line, r, "tossupIndex", int, w),
                    str(_need(path, line, r, "qid", (str, int), w)),
                    str(_need(path, line, player, "id", (str, int), f"{w}.marker.player")),
                    _need(path, line, player, "name", str, f"{w}.marker.player"),
                    _need(path, line, player, "team", str, f"{w}.marker.player"),
                    position,
                    str(marker.get("guess") or ""),
                    _need(path, line, marker, "points", int, f"{w}.marker"),
                    _need(path, line, marker, "isCorrect", bool, f"{w}.marker"),
                    player.get("isStarter", True) is not False,
                )
            )
        bonus = None
        if rec.get("bonusResponses") is not None:
            b = _need(path, line, rec, "bonusResponses", dict, "cycle")
            parts = []
            for i, p in enumerate(_need(path, line, b, "parts", list, "bonusResponses")):
                w = f"bonusResponses.parts[{i}]"
                responses = p.get("responses") or {} if isinstance(p, dict) else {}
                parts.append(
                    BonusPart(
                        _need(path, line, p, "teamName", str, w),
                        _need(path, line, p, "points", int, w),
                        {str(k): str(v) for k, v in responses.items()},
                        p.get("finalGuess"),
                        p.get("decision"),
                        p.get("aiRevealed"),
                    )
                )
            bonus = BonusResponse(
                _need(path, line, b, "bonusIndex", int, "bonusResponses"),
                _need(path, line, b, "receivingTeamName", str, "bonusResponses"),
                tuple(parts),
            )
        out.append(Cycle(tuple(tossups), bonus))
    return out


def read_cycles(path: Path) -> list[ResponseRecord]:
    """Responses for IRT of a runner ``cycles.jsonl``: item = ``qid``; subject = the player's name,
    a bot when its id starts ``ai_``; outcome = ``isCorrect``; position = the 0-based token index
    (the runner's ``position`` − 1). The runner records only who buzzed: a subject without a record
    on a cycle is left unobserved (not scored wrong). Several records of one subject on one qid (a
    replayed tossup) count as one response, correct if any was correct, at the earliest position.
    Raises FormatError as ``parse_cycles``."""
    merged: dict[tuple[str, str, str], ResponseRecord] = {}
    for cycle in parse_cycles(path):
        for r in cycle.tossups:
            kind = "bot" if r.player_id.startswith(AI_PREFIX) else "human"
            key = (kind, r.name, r.qid)
            position, correct = max(r.position - 1, 0), r.is_correct
            old = merged.get(key)
            if old is not None:
                correct = correct or old.correct
                position = min(position, old.position if old.position is not None else position)
            merged[key] = ResponseRecord(r.name, kind, r.qid, correct, position)
    return list(merged.values())


# ---------------------------------------------------------------- CSV files


def write_csv(columns: Sequence[str], rows: Iterable[Sequence[Any]]) -> str:
    """A CSV text with header ``columns`` (``\\n`` line ends, minimal quoting)."""
    buf = io.StringIO()
    writer = csv.writer(buf, lineterminator="\n")
    writer.writerow(columns)
    writer.writerows(rows)
    return buf.getvalue()


@dataclass(frozen=True)
class BonusGuess:
    """One row of a ``<system>.bonus.csv``: ``part_num`` 1-based."""

    question_id: str
    part_num: int
    guess: str
    confidence: float
    explanation: str


def read_bonus_responses(path: str | Path) -> list[BonusGuess]:
    """The rows of a ``<system>.bonus.csv`` (``part_num`` or the runner loader's ``part_number``).
    Raises FormatError ``"path:LINE: message"`` for a missing id, part or confidence."""
    path = Path(path)
    out = []
    with csv_rows(path) as reader:
        columns = header(reader)
        part = "part_num" if "part_num" in columns else "part_number"
        for row in reader:
            line = reader.line_num
            out.append(
                BonusGuess(
                    cell_text(path, line, row, "question_id"),
                    cell_int(path, line, row, part),
                    row.get("guess") or "",
                    cell_float(path, line, row, "confidence"),
                    row.get("explanation") or "",
                )
            )
    return out


# ---------------------------------------------------------------- question CSVs (import)

#: Columns that mark a runner question CSV (the loader also takes ``qid``/``id`` and ``question``).
TOSSUP_HEADER = frozenset({"question_id", "text"})
BONUS_HEADER = frozenset({"question_id", "leadin", "part1"})


def is_question_csv(columns: set[str]) -> bool:
    """True for the header of a runner ``tossups.csv`` or ``bonuses.csv``."""
    return columns >= TOSSUP_HEADER or columns >= BONUS_HEADER


def token_text(token: str | dict[str, Any]) -> str:
    """A tossup token as the runner's ``text`` holds it: a word as it is, an image, audio or delay
    token (Tossup's dict: ``kind``, ``sha256``, ``alt``) as a ``<multimodal …>`` tag (the asset
    ``img/<sha256>.*`` / ``audio/<sha256>.*`` is not written here)."""
    if isinstance(token, str):
        return token
    kind = {"image": "img"}.get(token["kind"], token["kind"])
    attrs = [f'type="{kind}"']
    if token.get("sha256"):
        attrs.append(f'hash="{token["sha256"]}"')
    if token.get("alt"):
        attrs.append('displayText="{}"'.format(str(token["alt"]).replace('"', "'")))
    if token.get("duration"):
        attrs.append(f'duration="{token["duration"]:g}"')
    return f"<multimodal {' '.join(attrs)}>"


def _power_words(folder: Path) -> dict[str, str]:
    path = folder / "power.csv"
    if not path.is_file():
        return {}
    with csv_rows(path) as reader:
        return {
            cell_text(path, reader.line_num, row, "question"): cell_text(path, reader.line_num, row, "word")
            for row in reader
        }


def _with_power_mark(text: str, word: str | None) -> str:
    """``text`` with ``(*)`` before the first word starting with ``word`` (the runner's rule: points
    drop to the default from that word on)."""
    if not word:
        return text
    words = text.split()
    at = next((i for i, w in enumerate(words) if w.lower().startswith(word.lower())), None)
    return text if at is None else " ".join([*words[:at], "(*)", *words[at:]])


def parse(path: Path, collect: Collector) -> None:
    """A runner packet into ``collect``: a folder with ``tossups.csv`` (and optionally
    ``bonuses.csv`` and ``power.csv``), or one of those CSVs. Set ``runner <folder>``, packet the
    folder's name, numbers in file order, external id = ``question_id``; a power word puts ``(*)``
    back before it. Raises FormatError for a missing id, text or answer."""
    folder = path if path.is_dir() else path.parent
    files = [folder / "tossups.csv", folder / "bonuses.csv"] if path.is_dir() else [path]
    name = f"runner {folder.name}"
    if not collect.filters.keeps(name, None):
        return
    power = _power_words(folder)
    for file in files:
        if not file.is_file():
            if file.name == "tossups.csv":
                raise FormatError(file, None, "a runner packet folder needs a tossups.csv")
            continue
        with csv_rows(file) as reader:
            columns = header(reader)
            bonuses = columns >= BONUS_HEADER
            for number, row in enumerate(reader, 1):
                line = reader.line_num
                qid = cell_text(file, line, row, "question_id")
                meta = (name, None, folder.name, number)
                if bonuses:
                    parts = [
                        (
                            line,
                            row.get(f"part{n}"),
                            row.get(f"answerline{n}") or row.get(f"answer{n}"),
                            BONUS_PART_VALUE,
                        )
                        for n in (1, 2, 3)
                        if (row.get(f"part{n}") or "").strip()
                    ]
                    collect.add(
                        "bonus",
                        line,
                        partial(
                            build_bonus, str(file), line, {"leadin": row.get("leadin")}, parts, meta, qid
                        ),
                    )
                else:
                    text = row.get("text") or row.get("question") or ""
                    d = {
                        "question": _with_power_mark(text, power.get(qid)),
                        "answer": row.get("answerline") or row.get("answer"),
                    }
                    collect.add(
                        "tossup", line, partial(build_tossup, str(file), line, d, "question", meta, qid)
                    )
