"""The plain records the readers return: questions, recorded buzzes and observed responses.

No behaviour beyond construction: the database, the bots and the IRT code each turn these into what
they need."""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass, field
from pathlib import Path

from formats.errors import FormatError
from formats.media import MediaBlob

#: Points of a bonus part when the source does not say (every supported source but the demo packet).
BONUS_PART_VALUE = 10


@dataclass(frozen=True)
class TossupRecord:
    """One parsed tossup. ``question`` keeps the power mark ``(*)``; ``answer_line`` keeps its HTML and
    directives (``[or …; prompt on …]``); both are stripped of surrounding whitespace. ``year`` None =
    unknown; ``number`` is 1-based within (set, packet); ``line`` is the 1-based source line where the
    record starts; ``external_id`` the source's id (or one built from set/packet/number)."""

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
    """One bonus part: ``value`` in points."""

    text: str
    answer_line: str
    value: int = BONUS_PART_VALUE


@dataclass(frozen=True)
class BonusRecord:
    """One parsed bonus with its parts in reading order; other fields as for ``TossupRecord``."""

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
    """Everything one question file yields after filtering: ``fmt`` is the format name
    (``formats.questions.FORMATS``); ``skipped`` lists ``"path:LINE: message"`` of records skipped as
    invalid; ``media`` the files the tossups' media markers name, by content hash (the markers in
    ``question`` are rewritten to ``sha256:…``: ``formats.media``)."""

    path: str
    fmt: str
    tossups: list[TossupRecord] = field(default_factory=list)
    bonuses: list[BonusRecord] = field(default_factory=list)
    skipped: list[str] = field(default_factory=list)
    media: dict[str, MediaBlob] = field(default_factory=dict)


@dataclass(frozen=True)
class RecordedBuzz:
    """A system's recorded first buzz on one question: ``token_index`` is the 0-based index of the
    last token seen at the buzz; ``guess`` its answer; ``confidence`` the system's own score (the
    log's unit: a probability for the runner, a raw weight for the exhibition)."""

    external_id: str
    token_index: int
    guess: str
    confidence: float


@dataclass(frozen=True)
class ResponseRecord:
    """One observed outcome. ``subject``: the subject's name as in the file (``h_`` prefix stripped
    where that prefix marks humans); ``kind``: ``human`` | ``bot``; ``item``: the file's item id;
    ``correct``: bool; ``position``: 0-based token index of the buzz when the format has one, else
    None."""

    subject: str
    kind: str
    item: str
    correct: bool
    position: int | None = None


def unique_responses(path: str | Path, rows: Iterable[tuple[int, ResponseRecord]]) -> list[ResponseRecord]:
    """The responses of ``(line, response)`` pairs, in order. Raises FormatError at the line of a
    second response of one subject (kind and name) on one item."""
    seen: dict[tuple[str, str, str], int] = {}
    out = []
    for line, row in rows:
        key = (row.kind, row.subject, row.item)
        if key in seen:
            raise FormatError(
                path, line, f"second response of {row.subject!r} on {row.item!r} (first on line {seen[key]})"
            )
        seen[key] = line
        out.append(row)
    return out
