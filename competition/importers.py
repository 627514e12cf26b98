"""Question import: read a question file with ``formats`` and store it in the database.

Parsing is pure and lives in ``formats`` (one module per format: ``formats.qbreader``, ``formats.qanta``,
``formats.demo``, ``formats.expo``, ``formats.runner``, ``formats.docx``; filters and the invalid-record policy in ``formats.questions``):
``parse_file`` reads a whole file, validates every record that passes the filters and returns plain
records, or raises ``QuestionFileError`` naming the file and line. Only then does ``write_questions``
(Django, imported lazily) store everything in ONE ``transaction.atomic()``, so a bad file never leaves a
half-written import. ``import_file`` does both.

Each format maps to rows so: one ``QuestionSet`` per set name (``source`` = the format name), one
``Packet`` per (set, packet name), tossups and bonuses numbered as the format says.

Media: a tossup's markers (and a bonus lead-in's or part's) (``[[image:pics/x.png|alt|lockout=2]]``, ``[[audio:…]]``, ``[[delay:2]]``;
the runner's ``<multimodal …>`` tags; ``formats.media``) are read from the file's folder while
parsing, stored as ``MediaFile`` rows by content hash in the same transaction, and kept in the
question text in their stored form (``[[image:sha256:…|alt|lockout=2|mime=image/png]]``).

Re-importing is idempotent: rows are keyed by (set name, packet name, number) and updated in place
when their content changed (row ids stay stable, so buzz logs keep pointing at them); nothing is ever
deleted, so a limited import followed by a full one just adds the rest.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Callable, Iterable
from pathlib import Path
from typing import Any

from formats.errors import FormatError
from formats.expo import QUESTION_COLUMNS as EXPO_COLUMNS
from formats.expo import set_name as expo_set_name
from formats.media import SHA256_RE
from formats.questions import FORMATS, Format, detect_format, parse_file
from formats.records import BONUS_PART_VALUE, BonusPart, BonusRecord, ParsedFile, TossupRecord

#: A question file that cannot be imported: ``formats``' one error (``"path:LINE: message"``).
QuestionFileError = FormatError
DEMO_PACKET = Path(__file__).resolve().parent / "demo_data" / "demo_packet.json"
WRITE_BATCH = 500  # rows per INSERT/UPDATE statement

__all__ = [
    "BONUS_PART_VALUE",
    "DEMO_PACKET",
    "EXPO_COLUMNS",
    "FORMATS",
    "BonusPart",
    "BonusRecord",
    "Format",
    "ParsedFile",
    "QuestionFileError",
    "TossupRecord",
    "detect_format",
    "expo_set_name",
    "import_demo_packet",
    "import_file",
    "parse_file",
    "rename_set",
    "write_questions",
]


# ---------------------------------------------------------------- database


def write_questions(
    parsed: Iterable[ParsedFile], progress: Callable[[int], None] | None = None
) -> dict[str, Any]:
    """Store parsed files in ONE transaction (all or nothing); idempotent, see the module docstring.
    ``progress(n)`` (optional) is called as each batch of ``n`` records is stored or found unchanged.

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
    report = progress or (lambda n: None)
    with transaction.atomic():
        _store_media(files)
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
            report(len(rows) - len(new) - len(changed))
            for start in range(0, len(new), WRITE_BATCH):
                batch = new[start : start + WRITE_BATCH]
                model.objects.bulk_create(batch)  # type: ignore[attr-defined]
                report(len(batch))
            for start in range(0, len(changed), WRITE_BATCH):
                batch = changed[start : start + WRITE_BATCH]
                model.objects.bulk_update(batch, list(fields))  # type: ignore[attr-defined]
                report(len(batch))
            counts["created"] += len(new)
            counts["updated"] += len(changed)
            counts["unchanged"] += len(rows) - len(new) - len(changed)
    return counts


def _store_media(files: list[ParsedFile]) -> None:
    """Store the files' media (``ParsedFile.media``) as ``MediaFile`` rows and files under
    ``MEDIA_ROOT`` (content-addressed: a file already stored is kept). Raises QuestionFileError at
    the record's line for a stored-form marker (``sha256:…`` in the source) naming no known file.
    A file written before a later error rolls the rows back stays on disk, unnamed by any row,
    and is reused by the next import of the same content."""
    from django.core.files.base import ContentFile

    from competition.models import MediaFile, media_path

    blobs = {sha: blob for f in files for sha, blob in f.media.items()}
    texts = [(f.path, t.line, t.question) for f in files for t in f.tossups] + [
        (f.path, b.line, text)
        for f in files
        for b in f.bonuses
        for text in (b.leadin, *(p.text for p in b.parts))
    ]
    named = {sha for _, _, text in texts for sha in SHA256_RE.findall(text)}
    known = set(MediaFile.objects.filter(sha256__in=named | blobs.keys()).values_list("sha256", flat=True))
    for path, line, text in texts:
        for sha in SHA256_RE.findall(text):
            if sha not in known and sha not in blobs:
                raise QuestionFileError(path, line, f"no stored media file has sha256 {sha}")
    storage = MediaFile._meta.get_field("file").storage  # type: ignore[union-attr]
    for sha, blob in blobs.items():
        if sha in known:
            continue
        name = media_path(sha)
        if not storage.exists(name):
            storage.save(name, ContentFile(blob.data))
        MediaFile.objects.create(sha256=sha, mime=blob.mime, size=len(blob.data), file=name)


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


def rename_set(parsed: ParsedFile, name: str) -> ParsedFile:
    """``parsed`` with every record moved into the set ``name`` (years kept), e.g. an uploaded file
    the organiser names. Raises QuestionFileError when the file holds more than one set: their
    packets would collide under one name."""
    names = sorted({t.set_name for t in parsed.tossups} | {b.set_name for b in parsed.bonuses})
    if len(names) > 1:
        shown = ", ".join(names[:3]) + (", …" if len(names) > 3 else "")
        raise QuestionFileError(
            parsed.path, None, f"holds {len(names)} sets ({shown}): import it under its own set names"
        )
    return dataclasses.replace(
        parsed,
        tossups=[dataclasses.replace(t, set_name=name) for t in parsed.tossups],
        bonuses=[dataclasses.replace(b, set_name=name) for b in parsed.bonuses],
    )


def import_demo_packet() -> dict[str, Any]:
    """Import the bundled demo packet (``DEMO_PACKET``); same return value as ``import_file``."""
    return import_file(DEMO_PACKET, fmt="demo")
