"""The embedded demo: ``serve`` (Redis, the server, a Celery worker, all supervised) plus a
match on the bundled demo packet (``create_match``) and a TF-IDF bot process, on SQLite.

A crashed server, worker or bot is restarted (see ``serve``); Ctrl-C stops everything."""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Any

from django.conf import settings
from django.core.management.base import BaseCommand

from competition.importers import DEMO_PACKET
from competition.management.commands import create_match, serve
from competition.models import Match
from config import launcher

QBREADER = Path(settings.SHARED_DATA_DIR) / "packets" / "qbreader_packets_2012_2022.jsonl.gz"


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
        served = serve.build(port=port, workers=opts["workers"], lan=opts["lan"])  # migrates first
        match = create_match.create(
            packet="demo",
            teams=["Team A", "Team B"],
            bots=[] if opts["no_bot"] else ["tfidf"],
            preset=opts["preset"],
            name="Demo match",
            config={"wpm": opts["wpm"], "auto_rule": opts["auto_rule"]},
        )
        if not opts["no_bot"]:
            served.supervisor.add(self._bot(match, served))
        info = create_match.describe(match, served.public_url)
        self.stdout.write(
            "\nTossup demo is starting (Ctrl-C stops it; crashed processes are restarted).\n"
            f"  Moderator dashboard: {info['dashboard_url']}\n"
            f"  Player page:         {info['player_url']}\n"
            f"  Join code:           {info['code']}   (teams: Team A, Team B)\n"
            f"  Scoreboard:          {info['scoreboard_url']}\n"
            f"  Analysis:            {served.public_url}/analysis/\n"
            f"  Logs:                {served.log_dir}/\n"
            f"  Bot:                 {self._bot_note(opts)}\n"
            "  More matches:        log in as an organiser (./run manage create_organiser NAME\n"
            "                       prints a password) or ./run manage create_match\n"
        )
        self.stdout.flush()
        serve.run(served)

    def _bot_note(self, opts: dict[str, Any]) -> str:
        if opts["no_bot"]:
            return "none"
        if QBREADER.exists():
            return "TF-IDF trained on the qbreader sets up to 2020 (ready in about 20 s)"
        return "TF-IDF trained on the demo packet itself (../shared/data is absent), so it knows every answer"

    def _bot(self, match: Match, served: serve.Served) -> launcher.Child:
        """The bot as a supervised child: it connects once the server listens (it is started
        after the server) and is restarted if it dies."""
        bot = match.players.get(kind="bot")
        train = (
            ["--train", str(QBREADER), "--max-year", "2020"]
            if QBREADER.exists()
            else ["--train", str(DEMO_PACKET)]
        )
        ws = served.local_url.replace("http://", "ws://", 1)
        cmd = [
            sys.executable, "manage.py", "runbot", "--url", ws,
            "--code", match.join_code, "--token", bot.token, "--bot", "tfidf", *train,
        ]  # fmt: skip
        return launcher.Child("bot", cmd, served.env, log_path=served.log_dir / "bot.log")
