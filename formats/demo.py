"""Tossup's own packet format (``competition/demo_data/demo_packet.json``)::

    {"set": "Tossup Demo", "year": 2025,
     "packets": [{"name": "1",
                  "tossups": [{"question", "answer", "category", "subcategory"?}],
                  "bonuses": [{"leadin", "parts": [{"text", "answer", "value"?}],
                               "category", "subcategory"?}]}]}

Tossups and bonuses are numbered 1, 2, … in packet order; ``value`` (points) defaults to 10; other
keys are ignored. ``external_id`` = ``"demo:<set>:<packet>:<tossup|bonus>:<number>"``.
"""

from __future__ import annotations

from functools import partial
from pathlib import Path

from formats.collect import Collector, build_bonus, build_tossup, field
from formats.errors import FormatError
from formats.records import BONUS_PART_VALUE
from formats.textio import line_of, load_json_with_lines


def parse(path: Path, collect: Collector) -> None:
    """Read the packets of ``path`` into ``collect``. Raises FormatError ``"path:LINE: message"``."""
    p = str(path)
    doc = load_json_with_lines(path)
    top = line_of(doc)
    set_name = field(p, top, doc, "set", str).strip()
    if not set_name:
        raise FormatError(p, top, "empty set name")
    year = field(p, top, doc, "year", int, nullable=True)
    packets = field(p, top, doc, "packets", list)
    if not collect.filters.keeps(set_name, year):
        return
    for pk in packets:
        pline = line_of(pk, top)
        name = str(field(p, pline, pk, "name", (str, int))).strip()
        for number, t in enumerate(field(p, pline, pk, "tossups", list), 1):
            line = line_of(t, pline)
            field(p, line, t, "question", str)
            field(p, line, t, "answer", str)
            external_id = f"demo:{set_name}:{name}:tossup:{number}"
            meta = (set_name, year, name, number)
            collect.add("tossup", line, partial(build_tossup, p, line, t, "question", meta, external_id))
        for number, b in enumerate(field(p, pline, pk, "bonuses", list, nullable=True) or [], 1):
            line = line_of(b, pline)
            field(p, line, b, "leadin", str, nullable=True)
            parts = []
            for part in field(p, line, b, "parts", list):
                pl = line_of(part, line)
                value = part.get("value", BONUS_PART_VALUE) if isinstance(part, dict) else BONUS_PART_VALUE
                if isinstance(value, bool) or not isinstance(value, int):
                    raise FormatError(p, pl, f"field 'value' must be int, got {type(value).__name__}")
                parts.append((pl, field(p, pl, part, "text", str), field(p, pl, part, "answer", str), value))
            external_id = f"demo:{set_name}:{name}:bonus:{number}"
            meta = (set_name, year, name, number)
            collect.add("bonus", line, partial(build_bonus, p, line, b, parts, meta, external_id))
