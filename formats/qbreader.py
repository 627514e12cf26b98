"""qbreader packet dumps: JSON Lines, optionally gzipped (``packets/qbreader_packets_*.jsonl.gz``).

One object a line. Tossups::

    {"type": "tossup", "set": str, "year": int|null, "packet": str|int, "number": int,
     "question": str, "answer": str|null, "category"?: str, "subcategory"?: str}

with the power mark ``(*)`` inline in ``question`` and the answer line in qbreader's HTML convention
(``<b><u>`` = required part, ``[or …; prompt on …]`` directives). Bonuses::

    {"type": "bonus", "set", "year", "packet", "number", "leadin": str|null,
     "parts": [str], "answers": [str], "category"?, "subcategory"?}

every part worth 10 points. ``external_id`` = ``"qbreader:<set>:<packet>:<type>:<number>"``.

Two readers share one line decoder and one set/year filter:

* ``parse`` — the importer's strict reader: every line is checked for structure (even filtered-out
  ones: a malformed file is rejected whole); empty content is an invalid record (see
  ``formats.collect``). The real 2012–2022 dump has 77 such records.
* ``iter_tossups`` — the bots' training stream: ``(question, answer line)`` of each tossup, with only
  ``type`` looked at structurally, so partial dumps (no packet or number) train too.
"""

from __future__ import annotations

from collections.abc import Callable, Collection, Iterator
from functools import partial
from pathlib import Path
from typing import Any

from formats.collect import Collector, Filters, build_bonus, build_tossup, field, invalid
from formats.errors import FormatError
from formats.records import BONUS_PART_VALUE, BonusRecord, TossupRecord
from formats.textio import iter_json_lines


def parse(path: Path, collect: Collector) -> None:
    """Read every line of ``path`` into ``collect`` (stops once its limit is full).
    Raises FormatError ``"path:LINE: message"`` on the first defect."""
    p = str(path)
    for line, d in iter_json_lines(path):
        kind = field(p, line, d, "type", str)
        if kind not in ("tossup", "bonus"):
            raise FormatError(p, line, f"field 'type' must be 'tossup' or 'bonus', got {kind!r}")
        set_name = field(p, line, d, "set", str).strip()
        year = field(p, line, d, "year", int, nullable=True)
        packet = str(field(p, line, d, "packet", (str, int))).strip()
        meta = (set_name, year, packet, field(p, line, d, "number", int))
        external_id = f"qbreader:{set_name}:{packet}:{kind}:{meta[3]}"
        build: Callable[[], TossupRecord | BonusRecord]
        if kind == "tossup":
            field(p, line, d, "question", str)
            field(p, line, d, "answer", str, nullable=True)
            build = partial(build_tossup, p, line, d, "question", meta, external_id)
        else:
            field(p, line, d, "leadin", str, nullable=True)
            texts = field(p, line, d, "parts", list, nullable=True) or []
            answers = field(p, line, d, "answers", list, nullable=True) or []
            for key, items in (("parts", texts), ("answers", answers)):
                if any(x is not None and not isinstance(x, str) for x in items):
                    raise FormatError(p, line, f"field {key!r} must be a list of strings")
            if texts and len(texts) != len(answers):
                build = partial(invalid, f"bonus has {len(texts)} parts but {len(answers)} answers")
            else:  # no parts at all is reported by build_bonus
                parts = [(line, t, a, BONUS_PART_VALUE) for t, a in zip(texts, answers, strict=False)]
                build = partial(build_bonus, p, line, d, parts, meta, external_id)
        if collect.filters.keeps(set_name, year):
            collect.add(kind, line, build)
            if collect.full():
                return


def iter_items(
    path: str | Path,
    *,
    kind: str,
    min_year: int | None = None,
    max_year: int | None = None,
    sets: Collection[str] | None = None,
) -> Iterator[dict[str, Any]]:
    """Stream the raw JSON objects of ``kind`` (``"tossup"`` | ``"bonus"``) of a dump, in file order,
    unchecked beyond ``type`` (the bots' training stream: partial dumps train too).

    Year bounds are inclusive; an item without an integer year is kept only when no bound is given;
    ``sets`` keeps only those set names. Raises FormatError naming the file and line for a line that
    is not a JSON object."""
    filters = Filters(None if sets is None else frozenset(sets), min_year, max_year)
    for _, item in iter_json_lines(path):
        if item.get("type") != kind:
            continue
        year = item.get("year")
        if filters.keeps(item.get("set"), year if isinstance(year, int) else None):
            yield item


def iter_tossups(
    path: str | Path,
    *,
    min_year: int | None = None,
    max_year: int | None = None,
    sets: Collection[str] | None = None,
) -> Iterator[tuple[str, str]]:
    """Stream ``(question, answer line)`` for the tossups of a dump (:func:`iter_items`), as in the
    source (``""`` for a missing or null one: the trainer skips those)."""
    for item in iter_items(path, kind="tossup", min_year=min_year, max_year=max_year, sets=sets):
        yield item.get("question") or "", item.get("answer") or ""
