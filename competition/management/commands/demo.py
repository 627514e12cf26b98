"""The embedded demo: ``serve`` (Redis, the server, a Celery worker, all supervised) plus a
match on the bundled demo packet (``create_match``) and a bot process, on SQLite.

The bot never trains on the demo packet (:func:`demo_bot`): with the qbreader dump in ``../shared`` it is
the reference TF-IDF bot trained on the sets up to 2020 and QANTA (cached under ``var/cache``) (the demo packet is written for Tossup, in no
set); without it, the Wikipedia bot (``buzzer.bots.wiki``), which knows only the article summaries of
an installed package.

A crashed server, worker or bot is restarted (see ``serve``); Ctrl-C stops everything."""

from __future__ import annotations

import sys
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from django.conf import settings
from django.core.management.base import BaseCommand

from competition.botlaunch import QBREADER  # under the shared data folder
from competition.management.commands import create_match, serve
from competition.models import Match
from config import launcher
from formats import FormatError, wikisummaries


@dataclass(frozen=True)
class DemoBot:
    """The demo's bot: its seat ``name``, the ``runbot`` flags that build it (empty: no bot) and one
    line saying what it knows."""

    name: str
    runbot_args: tuple[str, ...]
    note: str


def demo_bot(shared_data: str | Path | None = None) -> DemoBot:
    """The bot the demo seats, chosen by what this machine has; ``shared_data`` defaults to
    ``settings.SHARED_DATA_DIR`` (``TOSSUP_SHARED_DATA``). Never trained on the demo packet."""
    shared = Path(shared_data or settings.SHARED_DATA_DIR)
    qbreader = shared / QBREADER
    if qbreader.exists():
        extra = [
            a for q in sorted((shared / "qanta").glob("qanta.*.json.gz")) for a in ("--extra-train", str(q))
        ]
        cache = Path(settings.VAR_DIR) / "cache" / "demo-tfidf-2020.joblib"  # retrained if stale
        return DemoBot(
            "TF-IDF bot",
            (
                "--bot",
                "tfidf",
                "--train",
                str(qbreader),
                *extra,
                "--max-year",
                "2020",
                "--model-cache",
                str(cache),
            ),
            "the reference TF-IDF bot, trained on the qbreader tossups and bonuses up to 2020 and QANTA, with a "
            "learned, calibrated buzzer (the first start trains it: a few minutes; later starts load it); "
            "it has never seen these questions",
        )
    try:
        count, version = len(wikisummaries.read_articles()), wikisummaries.version()
    except FormatError as exc:
        return DemoBot("", (), f"none: ../shared/data is absent and the Wikipedia summaries are not ({exc})")
    return DemoBot(
        "Wikipedia bot",
        ("--bot", "wiki"),
        f"Wikipedia bot: knows the ~{count:,} Wikipedia vital-article summaries shipped by "
        f"{wikisummaries.DISTRIBUTION} {version}; it has never seen these questions",
    )


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

    def handle(self, *args: Any, **opts: Any) -> None:
        serve.setup_logging()
        port = opts["port"]
        if serve.port_in_use(port):
            port = launcher.free_port()
        bot = DemoBot("", (), "none (--no-bot)") if opts["no_bot"] else demo_bot()
        served = serve.build(port=port, workers=opts["workers"], lan=opts["lan"])  # migrates first
        match = create_match.create(
            packet="demo",
            teams=["Team A", "Team B"],
            bots=[bot.name] if bot.runbot_args else [],
            preset=opts["preset"],
            name="Demo match",
            config={"wpm": opts["wpm"], "auto_rule": opts["auto_rule"]},
        )
        if bot.runbot_args:
            served.supervisor.add(self._bot(match, served, bot))
        info = create_match.describe(match, served.public_url)
        self.stdout.write(
            "\nTossup demo is starting (Ctrl-C stops it; crashed processes are restarted).\n"
            f"  Moderator dashboard: {info['dashboard_url']}\n"
            f"  Player page:         {info['player_url']}\n"
            f"  Join code:           {info['code']}   (teams: Team A, Team B)\n"
            f"  Scoreboard:          {info['scoreboard_url']}\n"
            f"  Analysis:            {served.public_url}/analysis/\n"
            f"  Logs:                {served.log_dir}/\n"
            f"  Bot:                 {bot.note}\n"
            "  More matches:        log in as an organiser (./run manage create_organiser NAME\n"
            "                       prints a password) or ./run manage create_match\n"
        )
        self.stdout.flush()
        serve.run(served)

    def _bot(self, match: Match, served: serve.Served, demo: DemoBot) -> launcher.Child:
        """The bot as a supervised child: it connects once the server listens (it is started
        after the server) and is restarted if it dies."""
        bot = match.players.get(kind="bot")
        ws = served.local_url.replace("http://", "ws://", 1)
        cmd = [
            sys.executable, "manage.py", "runbot", "--url", ws,
            "--code", match.join_code, f"--token={bot.token}", *demo.runbot_args,
        ]  # fmt: skip
        return launcher.Child("bot", cmd, served.env, log_path=served.log_dir / "bot.log")
