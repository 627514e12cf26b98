"""Question files, by format name: ``detect_format`` and ``parse_file``.

Formats (``FORMATS``; ``.gz`` is detected by its magic bytes, for any of them): ``qbreader``
(``formats.qbreader``), ``qanta`` (``formats.qanta``), ``demo`` (``formats.demo``), ``expo``
(``formats.expo``), ``runner`` (a qb-tournament-runner packet: ``formats.runner``) and ``docx`` (a Word
packet as writers send it, YAPP's conventions: ``formats.docx``). Text is kept as in the source except for surrounding whitespace (stripped: the
PDF-extracted qbreader text has stray leading spaces); power marks, answer-line HTML and directives
and categories are kept. A tossup's or bonus's media markers (``[[image:pics/x.png|alt|lockout=2]]``, the
runner's ``<multimodal …>`` tags: ``formats.media``) are read from the file's folder into
``ParsedFile.media`` and rewritten to their stored form (``sha256:…``).

Filters (every format, ``formats.collect.Filters``): ``sets`` (exact set names), ``min_year``/
``max_year`` (inclusive) and ``limit``: at most ``limit`` tossups and at most ``limit`` bonuses per
file, in file order; the qbreader stream stops reading as soon as both are reached.

Invalid records: a line that is not JSON, a missing field or a field of the wrong type always raises.
A record with empty content (empty question, answer, leadin-less empty parts, parts/answers of unequal
length) raises too unless ``skip_invalid=True``, which skips it and lists it in ``ParsedFile.skipped``.
A second record with the same (kind, set, packet, number) raises.
"""

from __future__ import annotations

import csv
import json
from collections.abc import Callable, Iterable, Iterator
from contextlib import contextmanager
from dataclasses import replace
from pathlib import Path
from typing import Literal

from formats import demo, docx, expo, qanta, qbreader, runner
from formats.collect import Collector, Filters
from formats.errors import FormatError
from formats.media import MarkerError, has_markers, store_markers
from formats.records import ParsedFile
from formats.textio import iter_lines, read_text

FORMATS = ("qbreader", "qanta", "demo", "expo", "runner", "docx")
Format = Literal["auto", "qbreader", "qanta", "demo", "expo", "runner", "docx"]

_PARSERS: dict[str, Callable[[Path, Collector], None]] = {
    "qbreader": qbreader.parse,
    "qanta": qanta.parse,
    "demo": demo.parse,
    "expo": expo.parse,
    "runner": runner.parse,
    "docx": docx.parse,
}


def detect_format(path: str | Path) -> str:
    """Guess the format of ``path`` (one of FORMATS) from its name and first line.

    ``*.docx`` → docx; a folder with a ``tossups.csv``, or a ``*.csv`` with the runner's question columns → runner;
    another folder, or a ``*.csv`` whose header has ``id, answer, sent, text`` → expo;
    ``*.jsonl``/``*.jsonl.gz`` or a first line that is a whole object with ``type`` → qbreader; else a
    top-level list or ``questions`` key → qanta; a ``packets`` key → demo. Raises FormatError."""
    path = Path(path)
    if path.suffix.lower() == ".docx":
        return "docx"
    if path.is_dir():
        return "runner" if (path / "tossups.csv").is_file() else "expo"
    if path.suffix == ".csv":
        first_line = next(iter_lines(path), "")
        columns = {c.strip() for c in next(csv.reader([first_line]), [])}
        if set(expo.QUESTION_COLUMNS) <= columns:
            return "expo"
        if runner.is_question_csv(columns):
            return "runner"
        raise FormatError(
            path,
            1,
            f"CSV header has neither the exhibition columns {list(expo.QUESTION_COLUMNS)} nor the runner's "
            f"{sorted(runner.TOSSUP_HEADER)} / {sorted(runner.BONUS_HEADER)}",
        )
    if ".jsonl" in path.suffixes:
        return "qbreader"
    first = next((ln for ln in iter_lines(path) if ln.strip()), "")
    try:
        head = json.loads(first)
    except json.JSONDecodeError:
        head = None
    if isinstance(head, dict) and head.get("type") in ("tossup", "bonus"):
        return "qbreader"
    text = read_text(path)
    if text.lstrip().startswith("["):
        return "qanta"
    try:
        doc = json.loads(text)
    except json.JSONDecodeError as exc:
        raise FormatError(path, exc.lineno, f"invalid JSON: {exc.msg} (column {exc.colno})") from None
    if isinstance(doc, dict) and "packets" in doc:
        return "demo"
    if isinstance(doc, dict) and "questions" in doc:
        return "qanta"
    raise FormatError(path, None, "unknown question file format (expected qbreader, qanta, demo or expo)")


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
    Returns a ParsedFile; raises FormatError (``"path:LINE: message"``) on the first bad record,
    ValueError on a bad argument."""
    path = Path(path)
    if limit is not None and limit < 0:
        raise ValueError(f"limit must be >= 0, got {limit}")
    name = detect_format(path) if fmt == "auto" else fmt
    if name not in _PARSERS:
        raise ValueError(f"unknown format {name!r}; expected auto or one of {FORMATS}")
    parsed = ParsedFile(path=str(path), fmt=name)
    filters = Filters(None if sets is None else frozenset(sets), min_year, max_year, limit)
    _PARSERS[name](path, Collector(parsed, filters, skip_invalid))
    _read_media(parsed, path if path.is_dir() else path.parent)
    return parsed


def _read_media(parsed: ParsedFile, folder: Path) -> None:
    """Read the files the media markers of tossups and of bonus lead-ins and parts name (relative to
    ``folder``) into ``parsed.media`` and rewrite the markers to their stored form
    (``formats.media``). Raises FormatError at the record's line for a bad marker or file."""
    runner = parsed.fmt == "runner"
    for i, rec in enumerate(parsed.tossups):
        if not has_markers(rec.question):
            continue
        with _at(parsed, folder, rec.line):
            question = store_markers(rec.question, folder, parsed.media, runner=runner)
        parsed.tossups[i] = replace(rec, question=question)
    for i, bonus in enumerate(parsed.bonuses):
        texts = [bonus.leadin, *(p.text for p in bonus.parts)]
        if not any(has_markers(t) for t in texts):
            continue
        with _at(parsed, folder, bonus.line):
            leadin = store_markers(bonus.leadin, folder, parsed.media, runner=runner)
            parts = tuple(
                replace(p, text=store_markers(p.text, folder, parsed.media, runner=runner))
                for p in bonus.parts
            )
        parsed.bonuses[i] = replace(bonus, leadin=leadin, parts=parts)


@contextmanager
def _at(parsed: ParsedFile, folder: Path, line: int) -> Iterator[None]:
    """Turn a MarkerError into a FormatError at ``line`` of the parsed file."""
    try:
        yield
    except MarkerError as exc:
        where = folder / "tossups.csv" if Path(parsed.path).is_dir() else parsed.path
        raise FormatError(where, line, str(exc)) from None
