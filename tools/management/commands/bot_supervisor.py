"""``manage.py bot_supervisor``: run the bots moderators added from the dashboard.

    manage.py bot_supervisor --url ws://127.0.0.1:8000 [--log-dir var/] [--every 1]

``serve`` starts it as one of its children. Every ``--every`` seconds it compares the wanted launches
(``competition.botlaunch.wanted``: wanted, match not ended) with its processes: it starts one
``manage.py runbot`` per new launch (the guesser's flags from ``botlaunch.known_guessers``, the seat's
token as ``--token=VALUE``, an API key only in the process environment), stops the process of a
launch that was stopped, replaced, deleted with its seat or whose match ended, restarts a process
that died (``tools.launcher.Supervisor``: backoff 1, 2, 4 … 30 s) and writes each launch's state
(running, restarting, stopped, failed; pid, restarts, the last exit) back for the dashboard. A bot
that exits 0 ("match over") is done, not restarted; one that crashed GIVE_UP_AFTER times in a row,
each within HEALTHY_AFTER of its start, is failed with the last line of its log as the reason (the
dashboard's Run starts it again, as a new generation of the launch). Each
bot's output goes to ``<log-dir>/bot-<seat id>.log``; each round that reached the database touches
``<log-dir>/bot_supervisor.alive`` (compose's health check reads its age). Ctrl-C or SIGTERM stops
every bot.
"""

from __future__ import annotations

import logging
import sys
import time
from pathlib import Path
from typing import Any

from django.conf import settings
from django.core.management.base import BaseCommand, CommandParser
from django.db import DatabaseError, close_old_connections

from competition import botlaunch
from competition.models import BotLaunch
from tools import launcher

log = logging.getLogger("tossup.bots")
State = BotLaunch.State
GIVE_UP_AFTER = 3
HEALTHY_AFTER = 600.0  # s: a first start may train a model for minutes before it connects


def last_line(path: Path | None, limit: int = 4096) -> str:
    """The last non-empty line of a bot's log (e.g. why it exited), or ""."""
    if path is None:
        return ""
    try:
        with open(path, "rb") as f:
            f.seek(max(0, f.seek(0, 2) - limit))
            lines = f.read().decode(errors="replace").splitlines()
    except OSError:
        return ""
    return next((line.strip() for line in reversed(lines) if line.strip()), "")[:200]


class BotSupervisor:
    """The processes of the wanted launches; :meth:`step` is one round of supervision."""

    def __init__(self, ws_url: str, env: dict[str, str], log_dir: Path, python: str = sys.executable):
        self.ws_url, self.env, self.log_dir, self.python = ws_url, env, log_dir, python
        self.supervisor = launcher.Supervisor()
        self.children: dict[int, tuple[int, launcher.Child]] = {}  # launch id -> (generation, child)
        self.over: set[tuple[int, int]] = set()  # (launch id, generation) done, failed or unknown
        self.reported: dict[int, tuple[Any, ...]] = {}  # launch id -> last state written
        self.heartbeat = log_dir / "bot_supervisor.alive"

    def step(self) -> None:
        """Start, stop and restart processes to match the wanted launches; report their states."""
        wanted = {row.id: row for row in botlaunch.wanted()}
        for launch_id, (generation, child) in list(self.children.items()):
            row = wanted.get(launch_id)
            if row is None or row.generation != generation:
                log.info("%s: stopping (launch %s)", child.name, "replaced" if row else "ended")
                self.supervisor.remove(child)
                del self.children[launch_id]
        # Notice deaths (and their exit codes) before the supervisor restarts them.
        for launch_id, (_, child) in self.children.items():
            if child.proc is not None and child.proc.poll() not in (None, 0):
                said = last_line(child.log_path)
                detail = f"exited with {child.proc.returncode}" + (f": {said}" if said else "")
                self._report(launch_id, State.RESTARTING, None, child.restarts, detail)
        registry: botlaunch.Registry | None = None
        for row in wanted.values():
            if row.id in self.children or (row.id, row.generation) in self.over:
                continue
            registry = registry or botlaunch.known_guessers()
            known = registry.get(row.guesser)
            if known is None:
                self.over.add((row.id, row.generation))
                self._report(row.id, State.FAILED, None, 0, f"this server no longer knows {row.guesser!r}")
                continue
            match = row.player.match
            child = launcher.Child(
                f"bot-{row.player_id}",
                known.command(self.python, self.ws_url, match.join_code, row.player.token),
                known.environment(self.env),
                log_path=self.log_dir / f"bot-{row.player_id}.log",
                exit_0_is_done=True,
                give_up_after=GIVE_UP_AFTER,
                healthy_after=HEALTHY_AFTER,
            )
            log.info("%s: starting %s for %s in %s", child.name, known.key, row.player.name, match.join_code)
            self.supervisor.start(child)
            self.children[row.id] = (row.generation, child)
        self.supervisor.poll()
        for launch_id, (generation, child) in list(self.children.items()):
            if child.done or child.gave_up:
                said = last_line(child.log_path)
                if child.done:
                    self._report(launch_id, State.STOPPED, None, child.restarts, said or "finished")
                else:
                    why = f"failed {child.failures} times in a row" + (f": {said}" if said else "")
                    self._report(launch_id, State.FAILED, None, child.restarts, why)
                log.info("%s: %s", child.name, "finished" if child.done else "given up")
                self.supervisor.remove(child)
                del self.children[launch_id]
                self.over.add((launch_id, generation))
        for launch_id, (_, child) in self.children.items():
            if child.proc is not None and child.proc.poll() is None:
                self._report(launch_id, State.RUNNING, child.proc.pid, child.restarts, None)
        # Launches without a process: stopped by the moderator or their match ended.
        for row in BotLaunch.objects.exclude(state__in=(State.STOPPED, State.FAILED)).exclude(
            id__in=list(self.children)
        ):
            if row.id not in wanted:
                self._report(row.id, State.STOPPED, None, row.restarts, None)
        self.heartbeat.touch()

    def _report(self, launch_id: int, state: str, pid: int | None, restarts: int, detail: str | None) -> None:
        """Write a launch's state when it changed (``detail`` None: keep the stored one)."""
        key = (state, pid, restarts, detail)
        if self.reported.get(launch_id) == key:
            return
        self.reported[launch_id] = key
        fields: dict[str, Any] = {"state": state, "pid": pid, "restarts": restarts}
        if detail is not None:
            fields["detail"] = detail[:300]
        BotLaunch.objects.filter(pk=launch_id).update(**fields)

    def stop_all(self) -> None:
        self.supervisor.stop_all()
        self.children.clear()


class Command(BaseCommand):
    help = "Run, restart and stop the bots moderators add from the dashboard (serve starts it)."

    def add_arguments(self, parser: CommandParser) -> None:
        parser.add_argument("--url", required=True, help="the server for the bots, e.g. ws://127.0.0.1:8000")
        parser.add_argument("--log-dir", type=Path, help="the bots' logs (default var/)")
        parser.add_argument("--every", type=float, default=1.0, help="seconds between rounds (default 1)")

    def handle(self, *args: Any, **opts: Any) -> None:
        logging.basicConfig(level=logging.INFO, format="%(asctime)s bots: %(message)s", datefmt="%H:%M:%S")
        log_dir = opts["log_dir"] or Path(settings.VAR_DIR)
        log_dir.mkdir(parents=True, exist_ok=True)
        launcher.exit_on_sigterm()
        bots = BotSupervisor(opts["url"], launcher.child_env(), log_dir)
        try:
            while True:
                try:
                    bots.step()
                except DatabaseError as exc:  # the database restarting: the bots play on meanwhile
                    log.warning("round failed (%s); retrying", exc)
                finally:
                    close_old_connections()
                time.sleep(opts["every"])
        except KeyboardInterrupt:
            pass
        finally:
            bots.stop_all()
