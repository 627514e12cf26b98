"""`manage.py create_match`: a match from the command line, so an event can be scripted.

    manage.py create_match --packet demo --teams Red,Blue --bot tfidf --tossups 10 --json

prints the join code, the moderator dashboard URL (with the moderator token), the moderator
token and each bot's seat token (for ``runbot --token``). Human players take their seats
from the player page with the join code.
"""

from __future__ import annotations

import json
from typing import Any

from django.core.management.base import BaseCommand, CommandError, CommandParser

from competition import services
from competition.importers import import_demo_packet
from competition.management.errors import command_error
from competition.models import Match, QuestionSet
from competition.vocabulary import SeatKind


def question_set(packet: str) -> QuestionSet:
    """``demo``: the bundled demo packet (imported on first use); otherwise the question set
    of that name. Raises CommandError when no such set was imported."""
    if packet == "demo":
        found = QuestionSet.objects.filter(source="demo").order_by("id").first()
        if found is not None:
            return found
        return QuestionSet.objects.get(name=next(iter(import_demo_packet()["sets"])))
    try:
        return QuestionSet.objects.get(name=packet)
    except QuestionSet.DoesNotExist:
        known = ", ".join(QuestionSet.objects.order_by("name").values_list("name", flat=True)[:10])
        raise CommandError(
            f"no question set named {packet!r} (imported: {known or 'none'}; "
            "`import_questions` adds one, `--packet demo` uses the bundled packet)"
        ) from None


def create(
    *,
    packet: str = "demo",
    teams: list[str],
    bots: list[str] | None = None,
    bot_team: str | None = None,
    team_bots: list[dict[str, Any]] | None = None,
    tossups: int | None = None,
    preset: str = "naqt",
    name: str = "",
    config: dict[str, Any] | None = None,
) -> Match:
    """Create a match in the lobby on ``packet``'s tossups (the first ``tossups`` of them in
    packet order, default all) and bonuses, with human ``teams`` and one light-weight bot
    per name in ``bots`` (each on a team of its own, or all on the team ``bot_team``); ``team_bots``: bot seats on human teams (see
    :func:`team_bot`). ``config``: :class:`competition.game.MatchConfig`
    overrides (``wpm``, ``answer_window``, ``auto_rule``…).

    Raises CommandError with the reason (unknown set or preset, bad config, duplicate names)."""
    qset = question_set(packet)
    packets = list(qset.packets.order_by("id"))
    tossup_ids = [t.id for p in packets for t in p.tossups.order_by("number")]
    bonus_ids = [b.id for p in packets for b in p.bonuses.order_by("number")]
    if tossups is not None:
        if tossups < 1:
            raise CommandError("--tossups must be at least 1")
        tossup_ids = tossup_ids[:tossups]
    try:
        return services.create_match(
            name=name
            or f"{' vs '.join([*teams, *([bot_team] if bot_team and bots else bots or [])])} ({qset.name})",
            tossup_ids=tossup_ids,
            bonus_ids=bonus_ids,
            preset=preset,
            teams=teams,
            bots=[{"name": b, "weight_class": "light", "bot_team": bot_team or b} for b in bots or []]
            + list(team_bots or []),
            config=config or {},
        )
    except services.ServiceError as exc:
        raise command_error(exc) from None
    except (TypeError, ValueError) as exc:  # MatchConfig refuses unknown or bad settings
        raise CommandError(f"bad match config: {exc}") from None


def team_bot(spec: str) -> dict[str, Any]:
    """A ``--team-bot`` value ``NAME@TEAM[:WEIGHT[:MODE[:MIN_TOKEN]]]`` (weight light|mid|heavy,
    default mid; mode autonomous|semi_autonomous|muted, default autonomous) as a
    ``services.create_match`` bot. CommandError for a malformed value."""
    name, at, rest = spec.partition("@")
    team, *opts = rest.split(":")
    if not at or not name.strip() or not team.strip() or len(opts) > 3:
        raise CommandError(f"--team-bot {spec!r}: expected NAME@TEAM[:WEIGHT[:MODE[:MIN_TOKEN]]]")
    weight, mode, k = [*opts, "", "", ""][:3]
    if k and not k.isdigit():
        raise CommandError(f"--team-bot {spec!r}: MIN_TOKEN must be a whole number")
    return {
        "name": name.strip(),
        "team": team.strip(),
        "weight_class": weight or "mid",
        "buzz_mode": mode or "autonomous",
        "min_token": int(k or 0),
    }


def describe(match: Match, base_url: str) -> dict[str, Any]:
    """What an organiser (or a script) needs to run ``match``: codes, tokens and URLs."""
    base = base_url.rstrip("/")
    return {
        "match_id": match.id,
        "name": match.name,
        "code": match.join_code,
        "moderator_token": match.moderator_token,
        "dashboard_url": f"{base}/moderator/{match.join_code}/?token={match.moderator_token}",
        "player_url": f"{base}/play/?code={match.join_code}",
        "scoreboard_url": f"{base}/watch/{match.join_code}/",
        "teams": [{"team_id": t.id, "name": t.name, "kind": t.kind} for t in match.teams.order_by("id")],
        "bots": [
            {"name": p.name, "player_id": p.id, "team_id": p.team_id, "token": p.token}
            for p in match.players.filter(kind=SeatKind.BOT).order_by("id")
        ],
        "tossups": len(match.tossup_ids),
    }


class Command(BaseCommand):
    help = "Create a match and print its join code, dashboard URL, moderator token and bot tokens."

    def add_arguments(self, parser: CommandParser) -> None:
        parser.add_argument("--packet", default="demo", help="'demo' or an imported question set's name")
        parser.add_argument("--teams", required=True, help="human team names, comma-separated: Red,Blue")
        parser.add_argument("--bot", action="append", default=[], help="a bot seat (repeatable)")
        parser.add_argument(
            "--bot-team",
            help="the team the --bot seats play on (default: each bot on a team of its own name)",
        )
        parser.add_argument(
            "--team-bot",
            action="append",
            default=[],
            help="a bot seat on a human team: NAME@TEAM[:WEIGHT[:MODE[:MIN_TOKEN]]] (repeatable)",
        )
        parser.add_argument("--tossups", type=int, help="play only the first N tossups")
        parser.add_argument("--preset", default="naqt")
        parser.add_argument("--name", default="")
        parser.add_argument("--wpm", type=float)
        parser.add_argument("--answer-window", type=float, help="seconds a buzzer has to answer")
        parser.add_argument("--auto-rule", action="store_true", help="apply the judge's verdicts at once")
        parser.add_argument("--config", default="{}", help="other MatchConfig fields as a JSON object")
        parser.add_argument("--base-url", default="http://127.0.0.1:8000", help="where the server is reached")
        parser.add_argument("--json", action="store_true", help="print one JSON object")

    def handle(self, *args: Any, **opts: Any) -> None:
        try:
            config = json.loads(opts["config"])
        except json.JSONDecodeError as exc:
            raise CommandError(f"--config is not JSON: {exc}") from None
        if not isinstance(config, dict):
            raise CommandError("--config must be a JSON object")
        for key in ("wpm", "answer_window"):
            if opts[key] is not None:
                config[key] = opts[key]
        if opts["auto_rule"]:
            config["auto_rule"] = True
        teams = [t.strip() for t in opts["teams"].split(",") if t.strip()]
        if not teams and not opts["bot"]:
            raise CommandError("--teams needs at least one team name")
        match = create(
            packet=opts["packet"],
            teams=teams,
            bots=opts["bot"],
            bot_team=opts["bot_team"],
            team_bots=[team_bot(s) for s in opts["team_bot"]],
            tossups=opts["tossups"],
            preset=opts["preset"],
            name=opts["name"],
            config=config,
        )
        info = describe(match, opts["base_url"])
        if opts["json"]:
            self.stdout.write(json.dumps(info))
            return
        lines = [
            f"Match {info['name']!r} is in the lobby ({info['tossups']} tossups).",
            f"  Join code:           {info['code']}   (teams: {', '.join(teams)})",
            f"  Moderator dashboard: {info['dashboard_url']}",
            f"  Moderator token:     {info['moderator_token']}",
            f"  Player page:         {info['player_url']}",
            f"  Scoreboard:          {info['scoreboard_url']}",
        ]
        lines += [f"  Bot {b['name']!r} token:    {b['token']}" for b in info["bots"]]
        self.stdout.write("\n".join(lines))
