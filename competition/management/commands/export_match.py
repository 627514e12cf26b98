"""``manage.py export_match CODE --format cycles|qbj --out FILE``: a match's record for other tools."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from django.core.management.base import BaseCommand, CommandError

from competition.exports import FORMATS, render
from competition.models import Match


class Command(BaseCommand):
    help = "Export a match as qb-tournament-runner cycles.jsonl or a QBJ match record (see competition/exports.py)."

    def add_arguments(self, parser):
        parser.add_argument("code", help="the match's join code")
        parser.add_argument("--format", dest="fmt", choices=FORMATS, default="cycles")
        parser.add_argument("--out", help="output file (default: standard output)")

    def handle(self, *args: Any, **opts: Any) -> None:
        match = Match.objects.filter(join_code=opts["code"].strip().upper()).first()
        if match is None:
            raise CommandError(f"no match with join code {opts['code']!r}")
        text = render(match, opts["fmt"])
        if opts["out"]:
            Path(opts["out"]).write_text(text, encoding="utf-8")
            self.stdout.write(f"{opts['fmt']} export of match {match.join_code} written to {opts['out']}")
        else:
            self.stdout.write(text, ending="")
