"""Opening and decoding files for every reader: gzip by magic bytes, JSON Lines and pretty-printed
JSON with line numbers, CSV rows and their typed cells. Every failure is a ``FormatError`` naming
the file (and the line when there is one)."""

from __future__ import annotations

import bisect
import csv
import gzip
import json
import json.decoder
import json.scanner
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import IO, Any

from formats.errors import FormatError

_TRUE = {"1", "true", "yes"}
_FALSE = {"0", "false", "no"}
# Errors met while reading an opened file (gzip.BadGzipFile is an OSError).
_READ_ERRORS = (OSError, UnicodeDecodeError, EOFError, csv.Error)


def open_text(path: str | Path, *, newline: str | None = None) -> IO[str]:
    """Open ``path`` as UTF-8 text, gunzipping when it starts with the gzip magic bytes (any
    extension). Raises FormatError ``"path: cannot open (reason)"``."""
    path = Path(path)
    try:
        with path.open("rb") as fh:
            gz = fh.read(2) == b"\x1f\x8b"
        if gz:
            return gzip.open(path, "rt", encoding="utf-8", newline=newline)
        return path.open(encoding="utf-8", newline=newline)
    except OSError as exc:
        raise FormatError(path, None, f"cannot open ({exc.strerror or exc})") from None


def read_text(path: str | Path) -> str:
    """The whole (decompressed) text of ``path``. Raises FormatError."""
    with open_text(path) as fh:
        try:
            return fh.read()
        except _READ_ERRORS as exc:
            raise FormatError(path, None, f"cannot read: {exc}") from None


def iter_lines(path: str | Path) -> Iterator[str]:
    """Stream the (decompressed) lines of ``path`` without loading it whole. Raises FormatError."""
    with open_text(path) as fh:
        try:
            yield from fh
        except _READ_ERRORS as exc:
            raise FormatError(path, None, f"cannot read: {exc}") from None


def iter_json_lines(path: str | Path) -> Iterator[tuple[int, dict[str, Any]]]:
    """``(line, object)`` for each non-blank line of a JSON Lines file (``.gz`` too), streamed.

    Raises FormatError ``"path:LINE: invalid JSON: … (column C)"`` for a line that is not JSON and
    ``"path:LINE: expected a JSON object, got list"`` for one that is not an object."""
    for line, raw in enumerate(iter_lines(path), 1):
        if not raw.strip():
            continue
        try:
            value = json.loads(raw)
        except json.JSONDecodeError as exc:
            raise FormatError(path, line, f"invalid JSON: {exc.msg} (column {exc.colno})") from None
        if not isinstance(value, dict):
            raise FormatError(path, line, f"expected a JSON object, got {type(value).__name__}")
        yield line, value


class LineDict(dict[str, Any]):
    """A decoded JSON object that remembers the 1-based line of its opening brace."""

    line: int


def load_json_with_lines(path: str | Path) -> Any:
    """Decode a whole JSON document whose objects are ``LineDict`` carrying their source line, so a
    defect deep in a pretty-printed file is reported at its line. Uses the stdlib's pure-Python
    scanner (the C one gives no hook for positions): fine for files of a few MB.
    Raises FormatError ``"path:LINE: invalid JSON: … (column C)"``."""
    text = read_text(path)
    newlines = [i for i, ch in enumerate(text) if ch == "\n"]
    decoder = json.JSONDecoder()

    def parse_object(s_and_end: tuple[str, int], *args: Any) -> tuple[LineDict, int]:
        obj, end = json.decoder.JSONObject(s_and_end, *args)  # type: ignore[attr-defined]
        located = LineDict(obj)
        located.line = bisect.bisect_left(newlines, s_and_end[1]) + 1
        return located, end

    decoder.parse_object = parse_object  # type: ignore[attr-defined]
    decoder.scan_once = json.scanner.py_make_scanner(decoder)  # type: ignore[attr-defined]
    try:
        return decoder.decode(text)
    except json.JSONDecodeError as exc:
        raise FormatError(path, exc.lineno, f"invalid JSON: {exc.msg} (column {exc.colno})") from None


def line_of(obj: Any, default: int = 1) -> int:
    """The source line of a ``LineDict`` (else ``default``)."""
    return obj.line if isinstance(obj, LineDict) else default


# ---------------------------------------------------------------- CSV


@contextmanager
def csv_rows(path: str | Path) -> Iterator[csv.DictReader[str]]:
    """A ``csv.DictReader`` over ``path`` (``.gz`` too); ``reader.line_num`` is the current row's
    1-based line. A decoding or CSV error while reading becomes FormatError ``"path: cannot read: …"``."""
    with open_text(path, newline="") as fh:
        try:
            yield csv.DictReader(fh)
        except (UnicodeDecodeError, EOFError, csv.Error) as exc:
            raise FormatError(path, None, f"cannot read: {exc}") from None


def header(reader: csv.DictReader[str]) -> set[str]:
    """The stripped column names of a CSV reader (empty for an empty file)."""
    return {c.strip() for c in reader.fieldnames or []}


def cell_text(path: str | Path, line: int, row: dict[str, str | None], name: str) -> str:
    """The stripped value of column ``name``. Raises FormatError ``missing value for 'name'``."""
    value = row.get(name)
    if value is None or not value.strip():
        raise FormatError(path, line, f"missing value for '{name}'")
    return value.strip()


def cell_int(path: str | Path, line: int, row: dict[str, str | None], name: str) -> int:
    """A non-negative integer cell. Raises FormatError for text or a negative number."""
    text = cell_text(path, line, row, name)
    try:
        value = int(text)
    except ValueError:
        raise FormatError(path, line, f"'{name}' must be an integer, got {text!r}") from None
    if value < 0:
        raise FormatError(path, line, f"'{name}' must be ≥ 0, got {value}")
    return value


def cell_float(path: str | Path, line: int, row: dict[str, str | None], name: str) -> float:
    """A number cell. Raises FormatError."""
    text = cell_text(path, line, row, name)
    try:
        return float(text)
    except ValueError:
        raise FormatError(path, line, f"'{name}' must be a number, got {text!r}") from None


def cell_bool(path: str | Path, line: int, row: dict[str, str | None], name: str) -> bool:
    """A boolean cell: 1/0, true/false, yes/no (any case). Raises FormatError."""
    text = cell_text(path, line, row, name).lower()
    if text in _TRUE:
        return True
    if text in _FALSE:
        return False
    raise FormatError(path, line, f"'{name}' must be 0/1 or true/false, got {text!r}")
