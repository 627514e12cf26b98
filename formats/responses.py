"""Response sets for IRT, by format name: ``read_responses(path, fmt)``.

``advscore`` and ``advscore-text``: ``formats.advscore``; ``pyirt``: ``formats.pyirt``; ``cycles``:
qb-tournament-runner's ``cycles.jsonl`` (``formats.runner``)."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

from formats import advscore, pyirt, runner
from formats.errors import FormatError
from formats.records import ResponseRecord

FORMATS: dict[str, Callable[[Path], list[ResponseRecord]]] = {
    "advscore": advscore.read_responses,
    "advscore-text": advscore.read_text_responses,
    "pyirt": pyirt.read_responses,
    "cycles": runner.read_cycles,
}


def read_responses(path: str | Path, fmt: str) -> list[ResponseRecord]:
    """The responses of ``path`` in format ``fmt`` (a key of ``FORMATS``). Raises ValueError for an
    unknown format, FormatError for a malformed file (naming file and line) or one with no
    responses."""
    if fmt not in FORMATS:
        raise ValueError(f"unknown format {fmt!r}; choose one of {', '.join(FORMATS)}")
    path = Path(path)
    rows = FORMATS[fmt](path)
    if not rows:
        raise FormatError(path, 1, "no responses in the file")
    return rows
