"""``manage.py import_qbj FILE [--dry-run]``: a QBJ tournament file (schema 1.x/2.x or 0.5, ``.gz``
too) into teams, players and ended matches with their per-player answer counts (see
``competition.interchange``)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from django.core.management.base import BaseCommand, CommandError, CommandParser

from competition.interchange import import_tournament
from competition.management import progress
from formats.errors import FormatError
from formats.qbj import read_qbj


class Command(BaseCommand):
    help = "Import a QBJ tournament file (matches, teams, players, answer counts); nothing is stored on an error."

    def add_arguments(self, parser: CommandParser) -> None:
        parser.add_argument("path", type=Path)
        parser.add_argument("--dry-run", action="store_true", help="read and check the file, store nothing")
        progress.add_progress_flag(parser)

    def handle(self, *args: Any, path: Path, dry_run: bool, **opts: Any) -> None:
        try:
            t = read_qbj(path)
        except FormatError as exc:
            raise CommandError(str(exc)) from exc
        players = sum(len(team.players) for reg in t.registrations for team in reg.teams)
        if dry_run:
            self.stdout.write(f"{t.name}: {len(t.matches)} matches, {players} registered players (dry run)")
            return
        with progress.bar(opts, total=len(t.matches), unit="match", desc="import") as bar:
            try:
                done = import_tournament(t, path.name, progress=bar.update)
            except ValueError as exc:
                raise CommandError(str(exc)) from exc
        self.stdout.write(
            f"{done.tournament}: {done.matches} matches, {done.teams} match teams, {done.players} match players "
            f"imported from {path.name} in {done.seconds:.1f} s"
        )
