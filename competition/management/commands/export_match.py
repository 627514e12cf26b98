"""``manage.py export_match CODE… | --all [--tournament NAME] --format qbj|cycles|runner --out FILE``:
matches for other tools (see ``competition/exports.py``)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from django.core.management.base import BaseCommand, CommandError, CommandParser

from competition import exports
from competition.game import EventName
from competition.models import Match, MatchEvent


class Command(BaseCommand):
    help = (
        "Export matches: qbj = one QBJ tournament file of every match given; cycles = a match's "
        "qb-tournament-runner cycles.jsonl; runner = a zip of all its runner files (packet CSVs, "
        "cycles, bots' response CSVs)."
    )

    def add_arguments(self, parser: CommandParser) -> None:
        parser.add_argument("codes", nargs="*", help="join codes of the matches")
        parser.add_argument("--all", action="store_true", help="every ended match (qbj only)")
        parser.add_argument("--tournament", help="with --all: only the matches imported from this tournament")
        parser.add_argument("--format", dest="fmt", choices=exports.FORMATS, default="qbj")
        parser.add_argument("--out", help="output file (default: standard output; required for runner)")

    def handle(self, *args: Any, codes: list[str], fmt: str, out: str | None, **opts: Any) -> None:
        matches = self.select(codes, opts["all"], opts["tournament"])
        if fmt != "qbj" and len(matches) != 1:
            raise CommandError(f"--format {fmt} exports one match; give one join code")
        if fmt == "runner":
            if not out:
                raise CommandError("--format runner writes a zip: give --out FILE")
            Path(out).write_bytes(exports.runner_zip(matches[0]))
        else:
            text = (
                exports.render(matches[0], fmt)
                if fmt == "cycles"
                else json.dumps(exports.qbj_document(matches), ensure_ascii=False) + "\n"
            )
            if not out:
                self.stdout.write(text, ending="")
                return
            Path(out).write_text(text, encoding="utf-8")
        self.stderr.write(f"{fmt} export of {len(matches)} match(es) written to {out}")

    def select(self, codes: list[str], every: bool, tournament: str | None) -> list[Match]:
        if every == bool(codes):
            raise CommandError("give join codes or --all")
        if every:
            rows = Match.objects.filter(status=Match.Status.ENDED).order_by("id")
            if tournament:
                ids = MatchEvent.objects.filter(
                    event=EventName.MATCH_IMPORTED, payload__tournament=tournament
                )
                rows = rows.filter(id__in=ids.values("match_id"))
            found = list(rows)
            if not found:
                raise CommandError(
                    "no ended match to export" + (f" from {tournament!r}" if tournament else "")
                )
            return found
        wanted = [c.strip().upper() for c in codes]
        by_code = {m.join_code: m for m in Match.objects.filter(join_code__in=wanted)}
        missing = [c for c in wanted if c not in by_code]
        if missing:
            raise CommandError(f"no match with join code {', '.join(missing)}")
        return [by_code[c] for c in wanted]
