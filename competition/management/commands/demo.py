"""The embedded demo: Redis, the server, a Celery worker and a TF-IDF bot as local
processes on SQLite, with a match ready on the bundled demo packet."""

from __future__ import annotations

import socket
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

from django.conf import settings
from django.core.management import call_command
from django.core.management.base import BaseCommand

from competition import services
from competition.importers import DEMO_PACKET, import_demo_packet
from competition.models import QuestionSet
from config import launcher

QBREADER = Path(settings.SHARED_DATA_DIR) / "packets" / "qbreader_packets_2012_2022.jsonl.gz"


def _lan_address() -> str:
    """The address other devices on the LAN reach this machine at (no packet is sent)."""
    with socket.socket(socket.AF_INET, socket.SOCK_DGRAM) as s:
        try:
            s.connect(("10.255.255.255", 1))
            return s.getsockname()[0]
        except OSError:
            return "127.0.0.1"


class Command(BaseCommand):
    help = "Start a live demo: server, worker, bot and a match on the demo packet; prints the URLs."

    def add_arguments(self, parser):
        parser.add_argument("--port", type=int, default=8000)
        parser.add_argument("--lan", action="store_true", help="listen on all interfaces so tablets can join")
        parser.add_argument("--wpm", type=float, default=200.0)
        parser.add_argument("--preset", default="naqt")
        parser.add_argument(
            "--auto-rule", action="store_true", help="apply the judge's verdicts without a moderator"
        )
        parser.add_argument("--no-bot", action="store_true")

    def handle(self, *args: Any, **opts: Any) -> None:
        call_command("migrate", verbosity=0)
        counts = import_demo_packet()
        qset = QuestionSet.objects.get(name=next(iter(counts["sets"])))
        tossups = [t.id for p in qset.packets.order_by("id") for t in p.tossups.order_by("number")]
        bonuses = [b.id for p in qset.packets.order_by("id") for b in p.bonuses.order_by("number")]
        match = services.create_match(
            name="Demo match",
            tossup_ids=tossups,
            bonus_ids=bonuses,
            preset=opts["preset"],
            teams=["Team A", "Team B"],
            bots=[] if opts["no_bot"] else [{"name": "tfidf", "weight_class": "light"}],
            config={"wpm": opts["wpm"], "auto_rule": opts["auto_rule"]},
        )
        launcher.exit_on_sigterm()
        redis_url, redis_proc = launcher.ensure_redis()
        env = launcher.child_env(REDIS_URL=redis_url)
        logs = Path(settings.BASE_DIR) / "var"
        logs.mkdir(exist_ok=True)
        host = "0.0.0.0" if opts["lan"] else "127.0.0.1"
        port = opts["port"]
        with socket.socket() as s:
            if s.connect_ex(("127.0.0.1", port)) == 0:
                port = launcher.free_port()
        procs: list[Any] = [redis_proc]
        try:
            procs.append(launcher.start_worker(env, log=logs / "worker.log"))
            procs.append(launcher.start_server(port, env, log=logs / "server.log", host=host))
            if not opts["no_bot"]:
                procs.append(self._start_bot(match, port, env, logs))
            public = _lan_address() if opts["lan"] else "127.0.0.1"
            base = f"http://{public}:{port}"
            self.stdout.write(
                "\nTossup demo is running (Ctrl-C stops it).\n"
                f"  Moderator dashboard: {base}/moderator/{match.join_code}/?token={match.moderator_token}\n"
                f"  Player page:         {base}/play/?code={match.join_code}\n"
                f"  Join code:           {match.join_code}   (teams: Team A, Team B)\n"
                f"  Scoreboard:          {base}/watch/{match.join_code}/\n"
                f"  Analysis:            {base}/analysis/\n"
                f"  Logs:                {logs}/\n"
                f"  Bot:                 {self._bot_note(opts)}\n"
            )
            while all(p is None or p.poll() is None for p in procs[1:3]):
                time.sleep(1)
            self.stderr.write("a demo process exited; see the logs")
        except KeyboardInterrupt:
            pass
        finally:
            launcher.stop(*reversed(procs))

    def _bot_note(self, opts: dict[str, Any]) -> str:
        if opts["no_bot"]:
            return "none"
        if QBREADER.exists():
            return "TF-IDF trained on the qbreader sets up to 2020 (ready in about 20 s)"
        return "TF-IDF trained on the demo packet itself (../shared/data is absent), so it knows every answer"

    def _start_bot(self, match, port: int, env: dict[str, str], logs: Path) -> subprocess.Popen:
        bot = match.players.get(kind="bot")
        train = (
            ["--train", str(QBREADER), "--max-year", "2020"]
            if QBREADER.exists()
            else ["--train", str(DEMO_PACKET)]
        )
        cmd = [
            sys.executable, "manage.py", "runbot", "--url", f"ws://127.0.0.1:{port}",
            "--code", match.join_code, "--token", bot.token, "--bot", "tfidf", *train,
        ]  # fmt: skip
        return subprocess.Popen(
            cmd, cwd=settings.BASE_DIR, env=env, stdout=open(logs / "bot.log", "ab"), stderr=subprocess.STDOUT
        )
