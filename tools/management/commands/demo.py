"""The embedded demo: ``serve`` (Redis, the server, a Celery worker, the bot supervisor, all
supervised) plus a match on the bundled demo packet (``create_match``) whose bot seat the server
runs (``competition.botlaunch``), on SQLite.

The bot never trains on the demo packet (:func:`demo_bot`): with the qbreader dump in ``../shared`` it is
the reference TF-IDF bot trained on the sets up to 2020 and QANTA (cached under ``var/cache``) (the demo
packet is written for Tossup, in no set); without it, the Wikipedia bot (``buzzer.bots.wiki``), which
knows only the article summaries of an installed package. The dashboard's "Bots the server runs" shows
it like any bot a moderator added: its state, and why it failed if it did.

A crashed server or worker is restarted (see ``serve``), a crashed bot too (``bot_supervisor``); Ctrl-C
stops everything."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from django.core.management.base import BaseCommand

from competition import botlaunch
from competition.management.commands import create_match
from competition.vocabulary import SeatKind
from tools import launcher
from tools.management.commands import serve

HUMANS = ["Team A", "Team B"]
COMPUTER = "Computer"  # the bots' team: "TF-IDF bot (Computer) buzzed"


@dataclass(frozen=True)
class DemoBot:
    """The demo's bot: its seat ``name``, the ``guesser`` the server runs on it (a key of
    ``botlaunch.known_guessers``; "" for no bot) and one line saying what it knows."""

    name: str
    guesser: str
    note: str


def demo_bot() -> DemoBot:
    """The bot the demo seats, chosen by what this machine has (``botlaunch.known_guessers``: the
    ensemble bot when ``train_guesser`` has left its checkpoint, else the TF-IDF reference bot when
    its training file exists — its note then says how to train the ensemble — else the Wikipedia
    bot). Never trained on the demo packet."""
    registry = botlaunch.known_guessers()
    for key, name in (("ensemble", "Ensemble bot"), ("tfidf", "TF-IDF bot"), ("wiki", "Wikipedia bot")):
        known = registry.get(key)
        if known is not None:
            untrained = (
                [p for p in registry.problems if p.startswith("Ensemble bot:")] if key != "ensemble" else []
            )
            return DemoBot(
                name,
                key,
                f"{name}: {known.note}; it has never seen these questions"
                + "".join(f" ({p})" for p in untrained),
            )
    return DemoBot("", "", "none: " + "; ".join(registry.problems))


class Command(BaseCommand):
    help = "Start a live demo: server, worker, bot and a match on the demo packet; prints the URLs."

    def add_arguments(self, parser):
        parser.add_argument("--port", type=int, default=8000)
        parser.add_argument("--lan", action="store_true", help="listen on all interfaces so tablets can join")
        parser.add_argument("--workers", type=int, default=1, help="uvicorn processes sharing the port")
        parser.add_argument("--wpm", type=float, default=200.0)
        parser.add_argument("--preset", default="naqt")
        parser.add_argument(
            "--auto-rule", action="store_true", help="apply the judge's verdicts without a moderator"
        )
        parser.add_argument("--no-bot", action="store_true")
        parser.add_argument(
            "--teams",
            default=",".join(HUMANS),
            help=f"the human teams, comma-separated (default {','.join(HUMANS)}); the bot plays on {COMPUTER!r}",
        )

    def handle(self, *args: Any, **opts: Any) -> None:
        serve.setup_logging()
        port = opts["port"]
        if serve.port_in_use(port):
            port = launcher.free_port()
        bot = DemoBot("", "", "none (--no-bot)") if opts["no_bot"] else demo_bot()
        teams = [t.strip() for t in opts["teams"].split(",") if t.strip()]
        served = serve.build(port=port, workers=opts["workers"], lan=opts["lan"])  # migrates first
        match = create_match.create(
            packet="demo",
            teams=teams,
            bots=[bot.name] if bot.guesser else [],
            bot_team=COMPUTER,
            preset=opts["preset"],
            name="Demo match",
            config={"wpm": opts["wpm"], "auto_rule": opts["auto_rule"]},
        )
        if bot.guesser:  # the server's bot supervisor starts it once the server listens
            seat = match.players.get(kind=SeatKind.BOT)
            botlaunch.launch(match=match, player_id=seat.id, guesser=bot.guesser)
        info = create_match.describe(match, served.public_url)
        self.stdout.write(
            "\nTossup demo is starting (Ctrl-C stops it; crashed processes are restarted).\n"
            f"  Moderator dashboard: {info['dashboard_url']}\n"
            f"  Player page:         {info['player_url']}\n"
            f"  Join code:           {info['code']}   (teams: {', '.join(teams)})\n"
            f"  Scoreboard:          {info['scoreboard_url']}\n"
            f"  Analysis:            {served.public_url}/analysis/\n"
            f"  Logs:                {served.log_dir}/\n"
            f"  Bot:                 {bot.note}\n"
            "  More matches:        log in as an organiser (./run manage create_organiser NAME\n"
            "                       prints a password) or ./run manage create_match\n"
        )
        self.stdout.flush()
        serve.run(served)
