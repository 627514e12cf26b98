"""QANTA question dumps: one JSON document, a list of questions or ``{"questions": [...]}``.

Each question::

    {"text": str, "answer": str|null, "tournament": str, "year": int|null, "qanta_id": int|str,
     "category"?: str, "subcategory"?: str, "fold"?: str, …}   (other keys ignored)

QANTA has no packets: each (year, tournament) is a set named ``"QANTA <year> <tournament>"`` and each
file one packet named after the question's ``fold`` (else the file stem). Tossups are numbered 1, 2, …
in file order within (set, packet) *before* filtering, so numbers are stable across filtered reads;
``external_id`` = ``qanta_id``; answer line = ``answer`` as is.
"""

from __future__ import annotations

from functools import partial
from pathlib import Path

from formats.collect import Collector, build_tossup, field
from formats.errors import FormatError
from formats.textio import line_of, load_json_with_lines


def parse(path: Path, collect: Collector) -> None:
    """Read every question of ``path`` into ``collect``. Raises FormatError ``"path:LINE: message"``
    (the line of the question's opening brace)."""
    p = str(path)
    doc = load_json_with_lines(path)
    questions = doc["questions"] if isinstance(doc, dict) and "questions" in doc else doc
    if not isinstance(questions, list):
        raise FormatError(p, line_of(doc), "expected a list of questions or {'questions': [...]}")
    numbers: dict[tuple[str, str], int] = {}
    for q in questions:
        line = line_of(q)
        tournament = field(p, line, q, "tournament", str).strip()
        year = field(p, line, q, "year", int, nullable=True)
        qanta_id = field(p, line, q, "qanta_id", (int, str))
        field(p, line, q, "text", str)
        field(p, line, q, "answer", str, nullable=True)
        fold = q.get("fold")
        packet = fold.strip() if isinstance(fold, str) and fold.strip() else path.name.split(".")[0]
        set_name = " ".join(x for x in ("QANTA", "" if year is None else str(year), tournament) if x)
        number = numbers[set_name, packet] = numbers.get((set_name, packet), 0) + 1
        if collect.filters.keeps(set_name, year):
            meta = (set_name, year, packet, number)
            collect.add("tossup", line, partial(build_tossup, p, line, q, "text", meta, str(qanta_id)))
