"""Create a tournament from a JSON description and print its games (rooms, join codes, moderator
dashboards).

The file: ``{"name", "preset"?, "format": {"round_robin", "groups", "qualifier", "playoff"},
"set": "<question set name>", "packets"?: ["1", "2", …] (default: every packet of the set in
order), "tossups_per_game"?: n, "config"?: {match config}, "teams": [{"name", "players": [{"name",
"kind": "human" | "bot", "weight_class"?}]}]}`` — teams in seed order, best first.
``--director USERNAME``: the user who reviews its results (without: superusers only)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from django.contrib.auth import get_user_model
from django.core.management.base import BaseCommand, CommandError

from competition import services, tournaments
from competition.management.errors import command_error
from competition.models import QuestionSet


def _packet_order(name: str) -> tuple[int, str]:
    return (int(name), "") if name.isdigit() else (10**6, name)


class Command(BaseCommand):
    help = "Create a tournament (teams with human and AI players, packets, format) and schedule its games."

    def add_arguments(self, parser):
        parser.add_argument("file", help="the tournament's JSON description (see the module docstring)")
        parser.add_argument(
            "--director", default="", help="username of the tournament director (reviews the results)"
        )

    def handle(self, *args: Any, **opts: Any) -> None:
        path = Path(opts["file"])
        try:
            spec = json.loads(path.read_text())
        except (OSError, json.JSONDecodeError) as exc:
            raise CommandError(f"{path}: {exc}") from exc
        if not isinstance(spec, dict) or not {"name", "set", "teams"} <= set(spec):
            raise CommandError(f"{path}: needs at least name, set and teams")
        director = None
        if opts["director"]:
            director = get_user_model().objects.filter(username=opts["director"]).first()
            if director is None:
                raise CommandError(f"no user named {opts['director']!r} (create_organiser NAME makes one)")
        qset = QuestionSet.objects.filter(name=spec["set"]).first()
        if qset is None:
            raise CommandError(f"no question set named {spec['set']!r} (import it with import_questions)")
        packets = {p.name: p.id for p in qset.packets.all()}
        names = spec.get("packets") or sorted(packets, key=_packet_order)
        missing = [n for n in names if n not in packets]
        if missing:
            raise CommandError(f"set {spec['set']!r} has no packets named {missing}")
        try:
            t = tournaments.create_tournament(
                name=spec["name"],
                teams=spec["teams"],
                packet_ids=[packets[n] for n in names],
                fmt=spec.get("format", {}),
                preset=spec.get("preset", "naqt"),
                config=spec.get("config"),
                tossups_per_game=spec.get("tossups_per_game"),
                director=director,
            )
        except services.ServiceError as exc:
            raise command_error(exc) from exc
        self.stdout.write(f"tournament {t.id}: {t.name} — standings at /tournament/{t.id}/")
        self.stdout.write(
            f"control desk at /tournament/{t.id}/control/ (director: {opts['director'] or 'superusers'})"
        )
        for g in t.games.select_related("match", "home", "away"):
            self.stdout.write(
                f"round {g.round} {g.room}: {g.home.name} vs {g.away.name} — join {g.match.join_code}, "
                f"moderator /moderator/{g.match.join_code}/?token={g.match.moderator_token}"
            )
