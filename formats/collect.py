"""What the four question readers share: filters, the invalid-record policy, the duplicate check
and the field checks that turn a decoded object into a ``TossupRecord``/``BonusRecord``.

Structural defects (not JSON, a missing field, a wrong type) always raise ``FormatError``; content
defects (empty question, answer line or part) raise ``InvalidRecord``, which ``Collector.add`` turns
into a FormatError, or into an entry of ``ParsedFile.skipped`` when ``skip_invalid``."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from formats.errors import FormatError
from formats.records import BonusPart, BonusRecord, ParsedFile, TossupRecord

#: (set name, year, packet, number) of a record.
Meta = tuple[str, int | None, str, int]


@dataclass(frozen=True)
class Filters:
    """Record filters: ``sets`` exact set names (None = every set), ``min_year``/``max_year``
    inclusive, ``limit`` at most that many tossups and at most that many bonuses per file."""

    sets: frozenset[str] | None = None
    min_year: int | None = None
    max_year: int | None = None
    limit: int | None = None

    def keeps(self, set_name: str | None, year: int | None) -> bool:
        """True if a record of ``set_name``/``year`` passes the set and year filters (an unknown year
        fails any year bound)."""
        if self.sets is not None and set_name not in self.sets:
            return False
        if self.min_year is not None and (year is None or year < self.min_year):
            return False
        return not (self.max_year is not None and (year is None or year > self.max_year))


class InvalidRecord(Exception):
    """Content defect in one record: fatal unless ``skip_invalid``. ``line`` overrides the record's
    line when the defect sits deeper (a bonus part in a pretty-printed file)."""

    def __init__(self, message: str, line: int | None = None) -> None:
        super().__init__(message)
        self.line = line


class Collector:
    """Accumulates records under the ``limit``, the invalid-record policy and a duplicate check on
    (kind, set, packet, number)."""

    def __init__(self, parsed: ParsedFile, filters: Filters, skip_invalid: bool) -> None:
        self.parsed = parsed
        self.filters = filters
        self.skip_invalid = skip_invalid
        self.first_line: dict[tuple[str, str, str, int], int] = {}

    def _bucket(self, kind: str) -> list[Any]:
        return self.parsed.tossups if kind == "tossup" else self.parsed.bonuses

    def full(self) -> bool:
        """True once both the tossup and the bonus quota are reached (readers may stop reading)."""
        limit = self.filters.limit
        return limit is not None and len(self.parsed.tossups) >= limit and len(self.parsed.bonuses) >= limit

    def add(self, kind: str, line: int, build: Callable[[], TossupRecord | BonusRecord]) -> None:
        """Build and keep one ``kind`` ("tossup" | "bonus") record unless its quota is already full.
        Raises FormatError for an invalid record (unless skipped) or a duplicate."""
        bucket = self._bucket(kind)
        if self.filters.limit is not None and len(bucket) >= self.filters.limit:
            return
        path = self.parsed.path
        try:
            record = build()
        except InvalidRecord as exc:
            where = exc.line or line
            if not self.skip_invalid:
                raise FormatError(
                    path, where, f"{exc} (skip such records with skip_invalid / --skip-invalid)"
                ) from None
            self.parsed.skipped.append(str(FormatError(path, where, str(exc))))
            return
        key = (kind, record.set_name, record.packet, record.number)
        if key in self.first_line:
            raise FormatError(
                path,
                line,
                f"duplicate {kind} {record.set_name!r} packet {record.packet!r} number {record.number} "
                f"(first at line {self.first_line[key]})",
            )
        self.first_line[key] = line
        bucket.append(record)


# ---------------------------------------------------------------- field checks


def field(
    path: str, line: int, obj: Any, key: str, kind: type | tuple[type, ...], *, nullable: bool = False
) -> Any:
    """``obj[key]`` checked against ``kind``. Raises FormatError (always fatal) for a non-object, a
    missing key or a wrong type (a bool is not an int here)."""
    if not isinstance(obj, dict):
        raise FormatError(path, line, f"expected a JSON object, got {type(obj).__name__}")
    if key not in obj:
        raise FormatError(path, line, f"missing required field {key!r}")
    value = obj[key]
    if value is None and nullable:
        return None
    kinds = kind if isinstance(kind, tuple) else (kind,)
    # bool is an int subclass; a year or number of true/false is a wrong type, not 1.
    if not isinstance(value, kinds) or (isinstance(value, bool) and bool not in kinds):
        expected = " or ".join(k.__name__ for k in kinds)
        raise FormatError(path, line, f"field {key!r} must be {expected}, got {type(value).__name__}")
    return value


def optional_text(path: str, line: int, obj: dict[str, Any], key: str) -> str:
    """A text field that may be absent or null (categories): ``""`` then."""
    if obj.get(key) is None:
        return ""
    return str(field(path, line, obj, key, str)).strip()


def content(path: str, line: int, obj: dict[str, Any], key: str, what: str) -> str:
    """A required text field: absent or non-string raises FormatError, null or blank InvalidRecord."""
    value = field(path, line, obj, key, str, nullable=True)
    if value is None or not value.strip():
        raise InvalidRecord(f"empty {what}")
    return str(value).strip()


def build_tossup(
    path: str, line: int, d: dict[str, Any], text_key: str, meta: Meta, external_id: str
) -> TossupRecord:
    """A tossup from a structurally valid object whose text is ``d[text_key]``. Raises InvalidRecord."""
    return TossupRecord(
        *meta,
        question=content(path, line, d, text_key, "question"),
        answer_line=content(path, line, d, "answer", "answer line"),
        category=optional_text(path, line, d, "category"),
        subcategory=optional_text(path, line, d, "subcategory"),
        external_id=external_id,
        line=line,
    )


def build_bonus(
    path: str,
    line: int,
    d: dict[str, Any],
    parts: list[tuple[int, str | None, str | None, int]],
    meta: Meta,
    external_id: str,
) -> BonusRecord:
    """A bonus from ``parts`` = [(line, text, answer line, value in points)]. Raises InvalidRecord
    for no parts or an empty part text or answer line."""
    if not parts:
        raise InvalidRecord("bonus has no parts")
    for i, (part_line, text, answer, _) in enumerate(parts, 1):
        if not (text or "").strip():
            raise InvalidRecord(f"empty text in bonus part {i}", part_line)
        if not (answer or "").strip():
            raise InvalidRecord(f"empty answer line in bonus part {i}", part_line)
    return BonusRecord(
        *meta,
        leadin=(d.get("leadin") or "").strip(),
        parts=tuple(BonusPart(str(t).strip(), str(a).strip(), v) for _, t, a, v in parts),
        category=optional_text(path, line, d, "category"),
        subcategory=optional_text(path, line, d, "subcategory"),
        external_id=external_id,
        line=line,
    )


def invalid(message: str) -> TossupRecord | BonusRecord:
    """A builder that always fails: for a defect found before building (unequal part/answer lists)."""
    raise InvalidRecord(message)
