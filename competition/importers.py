"""Question importers: qbreader packet JSONL, QANTA JSON and Tossup's own demo packet JSON.

Parsing is pure (no Django import): ``parse_file`` reads a whole file, validates every record
that passes the filters and returns plain dataclasses, or raises ``QuestionFileError`` naming the
file and line. Only then does ``write_questions`` (Django, imported lazily) store everything in ONE
``transaction.atomic()``, so a bad file never leaves a half-written import. ``import_file`` does both.

Formats (``.gz`` is detected by its magic bytes, for any format):

* ``qbreader`` — JSON Lines, one object per line. Tossups:
  ``{"type": "tossup", "set", "year", "packet", "number", "question", "answer", "category", "subcategory"}``
  with the power mark ``(*)`` inline in ``question`` and the answer line in qbreader's HTML convention
  (``<b><u>`` = required part, ``[or …; prompt on …]`` directives). Bonuses:
  ``{"type": "bonus", …, "leadin", "parts": [str], "answers": [str]}``; every part is worth 10.
  One ``QuestionSet`` per ``set`` value; ``Packet.name`` = ``packet``.
* ``qanta`` — one JSON document: a list of questions, or ``{"questions": [...]}``; each question has
  ``text``, ``answer``, ``category``, ``subcategory``, ``tournament``, ``year``, ``qanta_id`` (and more,
  ignored). QANTA has no packets, so each (year, tournament) becomes a ``QuestionSet`` named
  ``"QANTA <year> <tournament>"`` and each file one ``Packet`` named after its ``fold`` (else the file
  stem). Tossups are numbered 1, 2, … in file order within (set, packet) *before* filtering, so numbers
  are stable across filtered imports; ``external_id`` = ``qanta_id``; answer line = ``answer`` as is.
* ``demo`` — Tossup's own packet format (``competition/demo_data/demo_packet.json``)::

      {"set": "Tossup Demo", "year": 2025,
       "packets": [{"name": "1",
                    "tossups": [{"question", "answer", "category", "subcategory"?}],
                    "bonuses": [{"leadin", "parts": [{"text", "answer", "value"?}],
                                 "category", "subcategory"?}]}]}

  Tossups and bonuses are numbered 1, 2, … in packet order; ``value`` defaults to 10; other keys are ignored.
* ``expo`` — the human-vs-computer exhibition CSVs (``expo/2024_470/<category>.csv``): ``id, answer, sent,
  text``, one row per sentence. Each ``id`` is one tossup whose text is its sentences joined with a space in
  ``sent`` order (so the whitespace words of the tossup are those of its sentences, in order: the replay
  bot's recorded positions are the server's token indexes). The path is a folder (every top-level
  ``*.csv`` but ``*.buzz.csv``/``*.final.csv``; team sub-folders are ignored) or one CSV. One
  ``QuestionSet`` per folder, named ``"<year> exhibition (<n>)"`` for a folder ``<year>_<n>`` (else
  ``"exhibition <folder>"``); one ``Packet`` per file, named after the file stem, which is also the
  category; tossups numbered 1, 2, … in first-appearance order; ``external_id`` = the expo ``id``.

Text is stored as in the source except for surrounding whitespace (stripped: the PDF-extracted qbreader
text has stray leading spaces). Power marks, answer-line HTML and directives and categories are kept.

Filters (every format): ``sets`` (exact set names, as stored), ``min_year``/``max_year`` (inclusive) and
``limit``: at most ``limit`` tossups and at most ``limit`` bonuses per file, in file order; the qbreader
stream stops reading as soon as both are reached.

Invalid records: a line that is not JSON, a missing field or a field of the wrong type always raises.
A record with empty content (empty question, answer, leadin-less empty parts, parts/answers of unequal
length) raises too unless ``skip_invalid=True``, which skips it and lists it in the result's ``skipped``
(the real qbreader dump has 77 such records, e.g. 2017-FRENCH tossups without answers).

Re-importing is idempotent: rows are keyed by (set name, packet name, number) and updated in place
when their content changed (row ids stay stable, so buzz logs keep pointing at them); nothing is ever
deleted, so a limited import followed by a full one just adds the rest.
"""

from __future__ import annotations

import bisect
import csv
import gzip
import json
import json.decoder
import json.scanner
import re
from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass, field
from functools import partial
from pathlib import Path
from typing import IO, Any, Literal

FORMATS = ("qbreader", "qanta", "demo", "expo")
Format = Literal["auto", "qbreader", "qanta", "demo", "expo"]
EXPO_COLUMNS = ("id", "answer", "sent", "text")
DEMO_PACKET = Path(__file__).resolve().parent / "demo_data" / "demo_packet.json"
BONUS_PART_VALUE = 10


class QuestionFileError(ValueError):
    """A question file that cannot be imported; ``str`` is ``"path:LINE: message"``.

    ``line`` is 1-based, or ``None`` when the problem concerns the whole file (``"path: message"``).
    """

    def __init__(self, path: str | Path, line: int | None, message: str) -> None:
        self.path = str(path)
        self.line = line
        self.message = message
        where = self.path if line is None else f"{self.path}:{line}"
        super().__init__(f"{where}: {message}")


@dataclass(frozen=True)
class TossupRecord:
    """One parsed tossup. ``question`` keeps ``(*)``; ``answer_line`` keeps its HTML and directives.
    ``line`` is the 1-based source line where the record starts."""

    set_name: str
    year: int | None
    packet: str
    number: int
    question: str
    answer_line: str
    category: str
    subcategory: str
    external_id: str
    line: int


@dataclass(frozen=True)
class BonusPart:
    """One bonus part: ``value`` in points (10 in every supported source unless the demo says otherwise)."""

    text: str
    answer_line: str
    value: int = BONUS_PART_VALUE


@dataclass(frozen=True)
class BonusRecord:
    """One parsed bonus with its parts in reading order; ``line`` as for ``TossupRecord``."""

    set_name: str
    year: int | None
    packet: str
    number: int
    leadin: str
    parts: tuple[BonusPart, ...]
    category: str
    subcategory: str
    external_id: str
    line: int


@dataclass
class ParsedFile:
    """Everything one file yields after filtering: ``fmt`` ∈ FORMATS (also stored as
    ``QuestionSet.source``), ``skipped`` lists ``"path:LINE: message"`` of records skipped as invalid."""

    path: str
    fmt: str
    tossups: list[TossupRecord] = field(default_factory=list)
    bonuses: list[BonusRecord] = field(default_factory=list)
    skipped: list[str] = field(default_factory=list)


@dataclass(frozen=True)
class Filters:
    """Record filters; see the module docstring. ``sets`` None = every set."""

    sets: frozenset[str] | None = None
    min_year: int | None = None
    max_year: int | None = None
    limit: int | None = None

    def keeps(self, set_name: str, year: int | None) -> bool:
        """True if a record of ``set_name``/``year`` passes the set and year filters (an unknown year
        fails any year bound)."""
        if self.sets is not None and set_name not in self.sets:
            return False
        if self.min_year is not None and (year is None or year < self.min_year):
            return False
        return not (self.max_year is not None and (year is None or year > self.max_year))


class _InvalidRecord(Exception):
    """Content defect in one record: fatal unless ``skip_invalid``. ``line`` overrides the record's
    line when the defect sits deeper (a bonus part in a pretty-printed file)."""

    def __init__(self, message: str, line: int | None = None) -> None:
        super().__init__(message)
        self.line = line


class _Collector:
    """Accumulates records under the ``limit``, the invalid-record policy and a duplicate check."""

    def __init__(self, parsed: ParsedFile, filters: Filters, skip_invalid: bool) -> None:
        self.parsed = parsed
        self.filters = filters
        self.skip_invalid = skip_invalid
        self.first_line: dict[tuple[str, str, str, int], int] = {}

    def _bucket(self, kind: str) -> list[Any]:
        return self.parsed.tossups if kind == "tossup" else self.parsed.bonuses

    def full(self) -> bool:
        limit = self.filters.limit
        return limit is not None and len(self.parsed.tossups) >= limit and len(self.parsed.bonuses) >= limit

    def add(self, kind: str, line: int, build: Callable[[], TossupRecord | BonusRecord]) -> None:
        """Build and keep one ``kind`` ("tossup" | "bonus") record unless its quota is already full."""
        bucket = self._bucket(kind)
        if self.filters.limit is not None and len(bucket) >= self.filters.limit:
            return
        try:
            record = build()
        except _InvalidRecord as exc:
            where = exc.line or line
            if not self.skip_invalid:
                raise QuestionFileError(
                    self.parsed.path, where, f"{exc} (skip such records with skip_invalid / --skip-invalid)"
                ) from None
            self.parsed.skipped.append(str(QuestionFileError(self.parsed.path, where, str(exc))))
            return
        key = (kind, record.set_name, record.packet, record.number)
        if key in self.first_line:
            raise QuestionFileError(
                self.parsed.path,
                line,
                f"duplicate {kind} {record.set_name!r} packet {record.packet!r} number {record.number} "
                f"(first at line {self.first_line[key]})",
            )
        self.first_line[key] = line
        bucket.append(record)


# ---------------------------------------------------------------- field access


def _field(
    path: str, line: int, obj: Any, key: str, kind: type | tuple[type, ...], *, nullable: bool = False
) -> Any:
    """``obj[key]`` checked against ``kind``; structural errors are always fatal."""
    if not isinstance(obj, dict):
        raise QuestionFileError(path, line, f"expected a JSON object, got {type(obj).__name__}")
    if key not in obj:
        raise QuestionFileError(path, line, f"missing required field {key!r}")
    value = obj[key]
    if value is None and nullable:
        return None
    # bool is an int subclass; a year or number of true/false is a wrong type, not 1.
    if not isinstance(value, kind) or (isinstance(value, bool) and bool not in _as_tuple(kind)):
        expected = " or ".join(k.__name__ for k in _as_tuple(kind))
        raise QuestionFileError(path, line, f"field {key!r} must be {expected}, got {type(value).__name__}")
    return value


def _as_tuple(kind: type | tuple[type, ...]) -> tuple[type, ...]:
    return kind if isinstance(kind, tuple) else (kind,)


def _optional_text(path: str, line: int, obj: dict[str, Any], key: str) -> str:
    """A text field that may be absent or null (categories): returns ``""`` then."""
    if obj.get(key) is None:
        return ""
    return str(_field(path, line, obj, key, str)).strip()


def _content(path: str, line: int, obj: dict[str, Any], key: str, what: str) -> str:
    """A required text field: absent or non-string is fatal, null or blank is an invalid record."""
    value = _field(path, line, obj, key, str, nullable=True)
    if value is None or not value.strip():
        raise _InvalidRecord(f"empty {what}")
    return str(value).strip()


# ---------------------------------------------------------------- reading


def _open_text(path: Path) -> IO[str]:
    """Open ``path`` for reading text, gunzipping if it starts with the gzip magic bytes."""
    with path.open("rb") as fh:
        gz = fh.read(2) == b"\x1f\x8b"
    return gzip.open(path, "rt", encoding="utf-8") if gz else path.open(encoding="utf-8")


def _read_text(path: Path) -> str:
    """The whole (decompressed) text of ``path``."""
    try:
        with _open_text(path) as fh:
            return fh.read()
    except (OSError, UnicodeDecodeError, EOFError) as exc:
        raise QuestionFileError(path, None, f"cannot read: {exc}") from None


def _open_lines(path: Path) -> Iterator[str]:
    """Stream the (decompressed) lines of ``path`` without loading it whole."""
    try:
        with _open_text(path) as fh:
            yield from fh
    except (OSError, UnicodeDecodeError, EOFError) as exc:
        raise QuestionFileError(path, None, f"cannot read: {exc}") from None


class _LineDict(dict[str, Any]):
    """A decoded JSON object that remembers the 1-based line of its opening brace."""

    line: int


def _loads_with_lines(path: Path, text: str) -> Any:
    """``json.loads`` whose objects are ``_LineDict`` carrying their source line, so a missing field deep
    in a pretty-printed document can be reported at its line. Uses the stdlib's pure-Python scanner (the
    C scanner gives no hook for positions); fine for the few-MB QANTA and demo files."""
    newlines = [i for i, ch in enumerate(text) if ch == "\n"]
    decoder = json.JSONDecoder()

    def parse_object(s_and_end: tuple[str, int], *args: Any) -> tuple[_LineDict, int]:
        obj, end = json.decoder.JSONObject(s_and_end, *args)  # type: ignore[attr-defined]
        located = _LineDict(obj)
        located.line = bisect.bisect_left(newlines, s_and_end[1]) + 1
        return located, end

    decoder.parse_object = parse_object  # type: ignore[attr-defined]
    decoder.scan_once = json.scanner.py_make_scanner(decoder)  # type: ignore[attr-defined]
    try:
        return decoder.decode(text)
    except json.JSONDecodeError as exc:
        raise QuestionFileError(path, exc.lineno, f"invalid JSON: {exc.msg} (column {exc.colno})") from None


def _line_of(obj: Any, default: int = 1) -> int:
    return obj.line if isinstance(obj, _LineDict) else default


# ---------------------------------------------------------------- formats


def _tossup(
    path: str,
    line: int,
    d: dict[str, Any],
    text_key: str,
    meta: tuple[str, int | None, str, int],
    external_id: str,
) -> TossupRecord:
    """Content checks of a structurally valid tossup (raises _InvalidRecord). ``meta`` is
    (set name, year, packet, number)."""
    return TossupRecord(
        *meta,
        question=_content(path, line, d, text_key, "question"),
        answer_line=_content(path, line, d, "answer", "answer line"),
        category=_optional_text(path, line, d, "category"),
        subcategory=_optional_text(path, line, d, "subcategory"),
        external_id=external_id,
        line=line,
    )


def _bonus(
    path: str,
    line: int,
    d: dict[str, Any],
    parts: list[tuple[int, str | None, str | None, int]],
    meta: tuple[str, int | None, str, int],
    external_id: str,
) -> BonusRecord:
    """Content checks of a bonus; ``parts`` = [(line, text, answer line, value)] (raises _InvalidRecord)."""
    if not parts:
        raise _InvalidRecord("bonus has no parts")
    for i, (part_line, text, answer, _) in enumerate(parts, 1):
        if not (text or "").strip():
            raise _InvalidRecord(f"empty text in bonus part {i}", part_line)
        if not (answer or "").strip():
            raise _InvalidRecord(f"empty answer line in bonus part {i}", part_line)
    return BonusRecord(
        *meta,
        leadin=(d.get("leadin") or "").strip(),
        parts=tuple(BonusPart(str(t).strip(), str(a).strip(), v) for _, t, a, v in parts),
        category=_optional_text(path, line, d, "category"),
        subcategory=_optional_text(path, line, d, "subcategory"),
        external_id=external_id,
        line=line,
    )


def _parse_qbreader(path: Path, collect: _Collector) -> None:
    p = str(path)
    for line, raw in enumerate(_open_lines(path), 1):
        if not raw.strip():
            continue
        try:
            d = json.loads(raw)
        except json.JSONDecodeError as exc:
            raise QuestionFileError(p, line, f"invalid JSON: {exc.msg} (column {exc.colno})") from None
        # Structural checks on every line, even filtered-out ones: a malformed file is rejected whole.
        kind = _field(p, line, d, "type", str)
        if kind not in ("tossup", "bonus"):
            raise QuestionFileError(p, line, f"field 'type' must be 'tossup' or 'bonus', got {kind!r}")
        set_name = _field(p, line, d, "set", str).strip()
        year = _field(p, line, d, "year", int, nullable=True)
        meta = (
            set_name,
            year,
            str(_field(p, line, d, "packet", (str, int))).strip(),
            _field(p, line, d, "number", int),
        )
        external_id = f"qbreader:{set_name}:{meta[2]}:{kind}:{meta[3]}"
        if kind == "tossup":
            _field(p, line, d, "question", str)
            _field(p, line, d, "answer", str, nullable=True)
            build: Callable[[], TossupRecord | BonusRecord] = partial(
                _tossup, p, line, d, "question", meta, external_id
            )
        else:
            _field(p, line, d, "leadin", str, nullable=True)
            texts = _field(p, line, d, "parts", list, nullable=True) or []
            answers = _field(p, line, d, "answers", list, nullable=True) or []
            for key, items in (("parts", texts), ("answers", answers)):
                if any(x is not None and not isinstance(x, str) for x in items):
                    raise QuestionFileError(p, line, f"field {key!r} must be a list of strings")
            if texts and len(texts) != len(answers):
                build = partial(_raise_invalid, f"bonus has {len(texts)} parts but {len(answers)} answers")
            else:  # no parts at all is reported by _bonus
                parts = [(line, t, a, BONUS_PART_VALUE) for t, a in zip(texts, answers, strict=False)]
                build = partial(_bonus, p, line, d, parts, meta, external_id)
        if collect.filters.keeps(set_name, year):
            collect.add(kind, line, build)
            if collect.full():
                return


def _raise_invalid(message: str) -> TossupRecord | BonusRecord:
    raise _InvalidRecord(message)


def _parse_qanta(path: Path, collect: _Collector) -> None:
    p = str(path)
    doc = _loads_with_lines(path, _read_text(path))
    questions = doc["questions"] if isinstance(doc, dict) and "questions" in doc else doc
    if not isinstance(questions, list):
        raise QuestionFileError(p, _line_of(doc), "expected a list of questions or {'questions': [...]}")
    numbers: dict[tuple[str, str], int] = {}
    for q in questions:
        line = _line_of(q)
        tournament = _field(p, line, q, "tournament", str).strip()
        year = _field(p, line, q, "year", int, nullable=True)
        qanta_id = _field(p, line, q, "qanta_id", (int, str))
        _field(p, line, q, "text", str)
        _field(p, line, q, "answer", str, nullable=True)
        fold = q.get("fold")
        packet = fold.strip() if isinstance(fold, str) and fold.strip() else path.name.split(".")[0]
        set_name = " ".join(x for x in ("QANTA", "" if year is None else str(year), tournament) if x)
        number = numbers[set_name, packet] = numbers.get((set_name, packet), 0) + 1
        if collect.filters.keeps(set_name, year):
            collect.add(
                "tossup",
                line,
                partial(_tossup, p, line, q, "text", (set_name, year, packet, number), str(qanta_id)),
            )


def _parse_demo(path: Path, collect: _Collector) -> None:
    p = str(path)
    doc = _loads_with_lines(path, _read_text(path))
    top = _line_of(doc)
    set_name = _field(p, top, doc, "set", str).strip()
    if not set_name:
        raise QuestionFileError(p, top, "empty set name")
    year = _field(p, top, doc, "year", int, nullable=True)
    packets = _field(p, top, doc, "packets", list)
    if not collect.filters.keeps(set_name, year):
        return
    for pk in packets:
        pline = _line_of(pk, top)
        name = str(_field(p, pline, pk, "name", (str, int))).strip()
        for number, t in enumerate(_field(p, pline, pk, "tossups", list), 1):
            line = _line_of(t, pline)
            _field(p, line, t, "question", str)
            _field(p, line, t, "answer", str)
            external_id = f"demo:{set_name}:{name}:tossup:{number}"
            collect.add(
                "tossup",
                line,
                partial(_tossup, p, line, t, "question", (set_name, year, name, number), external_id),
            )
        for number, b in enumerate(_field(p, pline, pk, "bonuses", list, nullable=True) or [], 1):
            line = _line_of(b, pline)
            _field(p, line, b, "leadin", str, nullable=True)
            parts = []
            for part in _field(p, line, b, "parts", list):
                pl = _line_of(part, line)
                value = part.get("value", BONUS_PART_VALUE) if isinstance(part, dict) else BONUS_PART_VALUE
                if isinstance(value, bool) or not isinstance(value, int):
                    raise QuestionFileError(p, pl, f"field 'value' must be int, got {type(value).__name__}")
                parts.append(
                    (pl, _field(p, pl, part, "text", str), _field(p, pl, part, "answer", str), value)
                )
            external_id = f"demo:{set_name}:{name}:bonus:{number}"
            collect.add(
                "bonus", line, partial(_bonus, p, line, b, parts, (set_name, year, name, number), external_id)
            )


def expo_set_name(folder: Path) -> tuple[str, int | None]:
    """``(set name, year)`` of an exhibition folder: ``2024_470`` → ``("2024 exhibition (470)", 2024)``."""
    m = re.fullmatch(r"(\d{4})_(\w+)", folder.name)
    if m:
        return f"{m[1]} exhibition ({m[2]})", int(m[1])
    return f"exhibition {folder.name}", None


def _expo_files(path: Path) -> list[Path]:
    if path.is_file():
        return [path]
    files = [
        f
        for f in sorted(path.glob("*.csv"))
        if not f.name.endswith((".buzz.csv", ".final.csv")) and f.is_file()
    ]
    if not files:
        raise QuestionFileError(path, None, "no exhibition <category>.csv files in this folder")
    return files


def _parse_expo(path: Path, collect: _Collector) -> None:
    set_name, year = expo_set_name(path if path.is_dir() else path.parent)
    if not collect.filters.keeps(set_name, year):
        return
    for file in _expo_files(path):
        p, category = str(file), file.stem
        # id → (first line, answer, {sent: text}) in first-appearance order.
        questions: dict[str, tuple[int, str, dict[int, str]]] = {}
        try:
            with file.open(newline="", encoding="utf-8") as fh:
                reader = csv.DictReader(fh)
                missing = [c for c in EXPO_COLUMNS if c not in (reader.fieldnames or [])]
                if missing:
                    raise QuestionFileError(
                        p, 1, f"missing column(s) {missing}; expected {list(EXPO_COLUMNS)}"
                    )
                for row in reader:
                    line = reader.line_num
                    qid, sent = (row.get("id") or "").strip(), (row.get("sent") or "").strip()
                    if not qid:
                        raise QuestionFileError(p, line, "empty 'id'")
                    if not sent.isdigit():
                        raise QuestionFileError(
                            p, line, f"'sent' must be a sentence number ≥ 0, got {sent!r}"
                        )
                    sentences = questions.setdefault(qid, (line, (row.get("answer") or "").strip(), {}))[2]
                    if int(sent) in sentences:
                        raise QuestionFileError(p, line, f"duplicate sentence {sent} of question {qid}")
                    sentences[int(sent)] = (row.get("text") or "").strip()
        except (OSError, UnicodeDecodeError, csv.Error) as exc:
            raise QuestionFileError(p, None, f"cannot read: {exc}") from None
        for number, (qid, (line, answer, sentences)) in enumerate(questions.items(), 1):
            d = {
                "question": " ".join(sentences[k] for k in sorted(sentences) if sentences[k]),
                "answer": answer,
                "category": category,
            }
            meta = (set_name, year, category, number)
            collect.add("tossup", line, partial(_tossup, p, line, d, "question", meta, qid))


_PARSERS: dict[str, Callable[[Path, _Collector], None]] = {
    "qbreader": _parse_qbreader,
    "qanta": _parse_qanta,
    "demo": _parse_demo,
    "expo": _parse_expo,
}


def detect_format(path: str | Path) -> str:
    """Guess the format of ``path`` (one of FORMATS) from its name and first line.

    A folder, or a ``*.csv`` whose header has ``id, answer, sent, text`` → expo;
    ``*.jsonl``/``*.jsonl.gz`` or a first line that is a whole object with ``type`` → qbreader; else a
    top-level list or ``questions`` key → qanta; a ``packets`` key → demo. Raises QuestionFileError."""
    path = Path(path)
    if path.is_dir():
        return "expo"
    if path.suffix == ".csv":
        header = next(_open_lines(path), "")
        if set(EXPO_COLUMNS) <= {c.strip() for c in next(csv.reader([header]), [])}:
            return "expo"
        raise QuestionFileError(path, 1, f"CSV header lacks the exhibition columns {list(EXPO_COLUMNS)}")
    if ".jsonl" in path.suffixes:
        return "qbreader"
    first = next((ln for ln in _open_lines(path) if ln.strip()), "")
    try:
        head = json.loads(first)
    except json.JSONDecodeError:
        head = None
    if isinstance(head, dict) and head.get("type") in ("tossup", "bonus"):
        return "qbreader"
    text = _read_text(path)
    stripped = text.lstrip()
    if stripped.startswith("["):
        return "qanta"
    try:
        doc = json.loads(text)
    except json.JSONDecodeError as exc:
        raise QuestionFileError(path, exc.lineno, f"invalid JSON: {exc.msg} (column {exc.colno})") from None
    if isinstance(doc, dict) and "packets" in doc:
        return "demo"
    if isinstance(doc, dict) and "questions" in doc:
        return "qanta"
    raise QuestionFileError(
        path, None, "unknown question file format (expected qbreader, qanta, demo or expo)"
    )


def parse_file(
    path: str | Path,
    *,
    fmt: Format = "auto",
    sets: Iterable[str] | None = None,
    min_year: int | None = None,
    max_year: int | None = None,
    limit: int | None = None,
    skip_invalid: bool = False,
) -> ParsedFile:
    """Parse and validate a whole question file (no database access).

    ``fmt`` is "auto" or one of FORMATS; filters and ``skip_invalid`` as in the module docstring.
    Returns a ParsedFile; raises QuestionFileError (``"path:LINE: message"``) on the first bad record,
    ValueError on a bad argument."""
    path = Path(path)
    if limit is not None and limit < 0:
        raise ValueError(f"limit must be >= 0, got {limit}")
    if fmt == "auto":
        fmt = detect_format(path)  # type: ignore[assignment]
    if fmt not in _PARSERS:
        raise ValueError(f"unknown format {fmt!r}; expected auto or one of {FORMATS}")
    parsed = ParsedFile(path=str(path), fmt=fmt)
    filters = Filters(None if sets is None else frozenset(sets), min_year, max_year, limit)
    _PARSERS[fmt](path, _Collector(parsed, filters, skip_invalid))
    return parsed


# ---------------------------------------------------------------- database


def write_questions(parsed: Iterable[ParsedFile]) -> dict[str, Any]:
    """Store parsed files in ONE transaction (all or nothing); idempotent, see the module docstring.

    Returns ``{"sets": {name: {"tossups": n, "bonuses": m}}, "tossups", "bonuses", "created",
    "updated", "unchanged", "skipped"}`` — per-set counts of records in the input, and row counts
    (tossups + bonuses) created / updated in place / already identical; ``skipped`` = invalid records."""
    from django.db import transaction

    from competition.models import Bonus, Packet, QuestionSet, Tossup

    files = list(parsed)
    counts: dict[str, Any] = {
        "sets": {},
        "tossups": 0,
        "bonuses": 0,
        "created": 0,
        "updated": 0,
        "unchanged": 0,
    }
    counts["skipped"] = sum(len(f.skipped) for f in files)
    with transaction.atomic():
        set_ids: dict[str, int] = {}
        packet_ids: dict[tuple[str, str], int] = {}

        def packet_id(record: TossupRecord | BonusRecord, source: str) -> int:
            if record.set_name not in set_ids:
                qs, created = QuestionSet.objects.get_or_create(
                    name=record.set_name, defaults={"year": record.year, "source": source}
                )
                if not created and (qs.year, qs.source) != (record.year, source):
                    qs.year, qs.source = record.year, source
                    qs.save(update_fields=["year", "source"])
                set_ids[record.set_name] = qs.pk
            key = (record.set_name, record.packet)
            if key not in packet_ids:
                packet_ids[key] = Packet.objects.get_or_create(
                    question_set_id=set_ids[record.set_name], name=record.packet
                )[0].pk
            return packet_ids[key]

        for model, kind, fields in (
            (Tossup, "tossups", ("question", "answer_line", "category", "subcategory", "external_id")),
            (Bonus, "bonuses", ("leadin", "parts", "category", "subcategory", "external_id")),
        ):
            rows: dict[tuple[int, int], dict[str, Any]] = {}
            for f in files:
                for rec in f.tossups if kind == "tossups" else f.bonuses:
                    values = {name: getattr(rec, name) for name in fields if name != "parts"}
                    if isinstance(rec, BonusRecord):
                        values["parts"] = [
                            {"text": pt.text, "answer_line": pt.answer_line, "value": pt.value}
                            for pt in rec.parts
                        ]
                    rows[packet_id(rec, f.fmt), rec.number] = values
                    per_set = counts["sets"].setdefault(rec.set_name, {"tossups": 0, "bonuses": 0})
                    per_set[kind] += 1
                    counts[kind] += 1
            existing = {
                (obj.packet_id, obj.number): obj
                for obj in model.objects.filter(packet_id__in={pk for pk, _ in rows})  # type: ignore[attr-defined]
            }
            new, changed = [], []
            for (pk, number), values in rows.items():
                obj = existing.get((pk, number))
                if obj is None:
                    new.append(model(packet_id=pk, number=number, **values))
                elif any(getattr(obj, k) != v for k, v in values.items()):
                    for k, v in values.items():
                        setattr(obj, k, v)
                    changed.append(obj)
            model.objects.bulk_create(new, batch_size=500)  # type: ignore[attr-defined]
            model.objects.bulk_update(changed, list(fields), batch_size=500)  # type: ignore[attr-defined]
            counts["created"] += len(new)
            counts["updated"] += len(changed)
            counts["unchanged"] += len(rows) - len(new) - len(changed)
    return counts


def import_file(
    path: str | Path,
    *,
    fmt: Format = "auto",
    sets: Iterable[str] | None = None,
    min_year: int | None = None,
    max_year: int | None = None,
    limit: int | None = None,
    skip_invalid: bool = False,
) -> dict[str, Any]:
    """Parse ``path`` completely, then write it in one transaction; returns ``write_questions`` counts
    plus ``"format"``. Raises QuestionFileError before touching the database if the file is bad."""
    parsed = parse_file(
        path, fmt=fmt, sets=sets, min_year=min_year, max_year=max_year, limit=limit, skip_invalid=skip_invalid
    )
    counts = write_questions([parsed])
    counts["format"] = parsed.fmt
    return counts


def import_demo_packet() -> dict[str, Any]:
    """Import the bundled demo packet (``DEMO_PACKET``); same return value as ``import_file``."""
    return import_file(DEMO_PACKET, fmt="demo")
