"""``manage.py import_questions PATH … | --demo``: import question files, print counts per set."""

from __future__ import annotations

from typing import Any

from django.core.management.base import BaseCommand, CommandError, CommandParser

from competition.importers import DEMO_PACKET, FORMATS, QuestionFileError, parse_file, write_questions
from competition.management import progress


class Command(BaseCommand):
    help = (
        "Import qbreader packet JSONL, QANTA JSON, Tossup demo-packet files (optionally .gz), exhibition or "
        "qb-tournament-runner CSV and Word (.docx) packets. "
        "All files are parsed and validated first, then written in one transaction; re-importing updates "
        "in place. See competition/importers.py for the formats."
    )

    def add_arguments(self, parser: CommandParser) -> None:
        parser.add_argument("paths", nargs="*", metavar="PATH")
        parser.add_argument("--demo", action="store_true", help="import the bundled demo packet")
        parser.add_argument("--format", dest="fmt", choices=("auto", *FORMATS), default="auto")
        parser.add_argument(
            "--set", dest="sets", action="append", metavar="NAME", help="keep only this set (repeatable)"
        )
        parser.add_argument("--min-year", type=int)
        parser.add_argument("--max-year", type=int)
        parser.add_argument("--limit", type=int, help="at most N tossups and N bonuses per file")
        parser.add_argument(
            "--skip-invalid", action="store_true", help="skip records with empty content instead of failing"
        )
        progress.add_progress_flag(parser)

    def handle(self, *args: Any, **opts: Any) -> None:
        paths = list(opts["paths"])
        if opts["demo"]:
            paths.append(str(DEMO_PACKET))
        if not paths:
            raise CommandError("give at least one PATH, or --demo")
        if opts["limit"] is not None and opts["limit"] < 0:
            raise CommandError("--limit must be >= 0")
        try:
            parsed = [
                parse_file(
                    path,
                    fmt="demo" if path == str(DEMO_PACKET) else opts["fmt"],
                    sets=opts["sets"],
                    min_year=opts["min_year"],
                    max_year=opts["max_year"],
                    limit=opts["limit"],
                    skip_invalid=opts["skip_invalid"],
                )
                for path in progress.wrapper(opts, desc="reading", unit="file")(paths)
            ]
        except QuestionFileError as exc:
            raise CommandError(f"nothing imported: {exc}") from exc
        total = sum(len(f.tossups) + len(f.bonuses) for f in parsed)
        with progress.bar(opts, total=total, desc="writing", unit="question") as bar:
            counts = write_questions(parsed, progress=bar.update)
        n_sets = len(counts["sets"])
        for name, per_set in sorted(counts["sets"].items()):
            self.stdout.write(f"{name}: {per_set['tossups']} tossups, {per_set['bonuses']} bonuses")
        for message in (m for f in parsed for m in f.skipped):
            self.stderr.write(f"skipped {message}")
        self.stdout.write(
            self.style.SUCCESS(
                f"{counts['tossups']} tossups and {counts['bonuses']} bonuses "
                f"in {n_sets} set{'s' * (n_sets != 1)}: "
                f"{counts['created']} created, {counts['updated']} updated, {counts['unchanged']} unchanged, "
                f"{counts['skipped']} skipped"
            )
        )
