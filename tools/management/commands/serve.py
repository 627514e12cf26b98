"""`manage.py serve`: everything a real event needs, supervised.

    manage.py serve [--port 8000] [--workers N] [--lan] [--host H]

Applies migrations, then runs as child processes: Redis (only when ``REDIS_URL`` does not
answer), the ASGI server (uvicorn; with ``--workers N`` uvicorn's own multi-process mode:
N processes share the one listening socket and uvicorn restarts a dead one), a Celery
worker and the bot supervisor (``bot_supervisor``: the bots added from the dashboard). Any
child that dies is restarted (logged, with backoff); Ctrl-C or SIGTERM stops them all. Every ~5 s it sweeps the durable outbox (work stored with a commit whose
broadcast or queueing failed, e.g. the IRT fit of a match that ended during a Redis
outage). It creates no match: see ``create_match``, or ``demo`` for both at once.

The functions here are the library ``demo`` uses too.
"""

from __future__ import annotations

import logging
import os
import socket
import sys
import threading
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from django.conf import settings
from django.core.management import call_command
from django.core.management.base import BaseCommand, CommandError, CommandParser
from django.db import close_old_connections

from tools import launcher

log = logging.getLogger("tossup.serve")
SWEEP_EVERY = 5.0


@dataclass
class Served:
    """A configured (not yet started) set of supervised processes."""

    supervisor: launcher.Supervisor
    env: dict[str, str]
    port: int
    public_url: str  # how browsers and tablets reach the server
    local_url: str  # how processes on this machine reach it (bots)
    log_dir: Path


def setup_logging() -> None:
    """Supervision lines (starts, exits, restarts) on stderr with times, whatever LOG_LEVEL says."""
    if log.handlers:
        return
    handler = logging.StreamHandler(sys.stderr)
    handler.setFormatter(logging.Formatter("%(asctime)s serve: %(message)s", "%H:%M:%S"))
    log.addHandler(handler)
    log.setLevel(logging.INFO)
    log.propagate = False


def port_in_use(port: int) -> bool:
    with socket.socket() as s:
        return s.connect_ex(("127.0.0.1", port)) == 0


def build(
    *,
    port: int,
    workers: int = 1,
    lan: bool = False,
    host: str | None = None,
    log_dir: Path | None = None,
    control_dir: Path | None = None,
) -> Served:
    """Migrate, pick (or plan to start) Redis, and configure the supervised children.

    Raises CommandError when ``port`` is taken or ``workers`` < 1."""
    if workers < 1:
        raise CommandError("--workers must be at least 1")
    if port_in_use(port):
        raise CommandError(f"port {port} is already in use; choose another with --port")
    call_command("migrate", interactive=False, verbosity=0)
    log_dir = log_dir or Path(settings.VAR_DIR)
    log_dir.mkdir(parents=True, exist_ok=True)
    supervisor = launcher.Supervisor(control_dir=control_dir)

    redis_url = os.environ.get("REDIS_URL") or settings.REDIS_URL
    if not launcher.redis_ping(redis_url):
        redis_port = launcher.free_port()
        redis_url = f"redis://127.0.0.1:{redis_port}/0"
        supervisor.add(
            launcher.Child(
                "redis",
                launcher.redis_command(redis_port),
                launcher.child_env(),
                log_path=log_dir / "redis.log",
                ready=lambda proc: launcher.wait_for_port(redis_port, proc=proc),
            )
        )
        log.info("no Redis answered at %s: starting one on port %s", os.environ.get("REDIS_URL"), redis_port)
    launcher.point_django_at_redis(redis_url)  # the sweeper runs in this process

    bind = host or ("0.0.0.0" if lan else "127.0.0.1")
    extra = {"REDIS_URL": redis_url}
    if lan:
        # DEBUG stays off (settings' default); only this machine's names are served.
        hosts = launcher.machine_hosts()
        if host and host not in ("0.0.0.0", "::"):
            hosts.append(host)
        known = [h for h in os.environ.get("ALLOWED_HOSTS", "").split(",") if h.strip()]
        extra["ALLOWED_HOSTS"] = ",".join(dict.fromkeys(known + hosts))
    env = launcher.child_env(**extra)
    probe = "127.0.0.1" if bind in ("0.0.0.0", "::", "127.0.0.1") else bind
    supervisor.add(
        launcher.Child(
            "server",
            launcher.server_command(port, bind, workers),
            env,
            log_path=log_dir / "server.log",
            ready=lambda proc: launcher.wait_for_port(port, proc=proc, timeout=60, host=probe),
        )
    )
    supervisor.add(launcher.Child("worker", launcher.worker_command(), env, log_path=log_dir / "worker.log"))
    # The bots moderators add from the dashboard (``bot_supervisor``), connecting like any bot.
    bots = [
        sys.executable,
        "manage.py",
        "bot_supervisor",
        "--url",
        f"ws://{probe}:{port}",
        "--log-dir",
        str(log_dir),
    ]
    supervisor.add(launcher.Child("bots", bots, env, log_path=log_dir / "bots.log"))
    public = launcher.lan_address() if lan and not host else probe
    return Served(
        supervisor=supervisor,
        env=env,
        port=port,
        public_url=f"http://{public}:{port}",
        local_url=f"http://{probe}:{port}",
        log_dir=log_dir,
    )


def sweep_forever(stop: threading.Event, every: float = SWEEP_EVERY) -> None:
    """Call ``competition.outbox.sweep_outbox()`` every ``every`` s until ``stop`` is set;
    a failing sweep (Redis or the database down) is logged and retried next round."""
    from competition import outbox

    while not stop.wait(every):
        try:
            done = outbox.sweep_outbox()
            if done:
                log.info("outbox: %s stored item(s) dispatched", done)
        except Exception as exc:
            log.warning("outbox sweep failed (%s: %s); retrying in %.0f s", type(exc).__name__, exc, every)
        finally:
            close_old_connections()


def run(served: Served) -> None:
    """Start the children and the sweeper; supervise until Ctrl-C / SIGTERM; stop everything."""
    launcher.exit_on_sigterm()
    stop = threading.Event()
    sweeper = threading.Thread(target=sweep_forever, args=(stop,), name="outbox-sweeper", daemon=True)
    try:
        served.supervisor.start_all()
        sweeper.start()
        served.supervisor.run()
    except KeyboardInterrupt:
        pass
    finally:
        stop.set()
        served.supervisor.stop_all()


class Command(BaseCommand):
    help = "Run the server, a Celery worker (and Redis if needed), restarting any that dies."

    def add_arguments(self, parser: CommandParser) -> None:
        parser.add_argument("--port", type=int, default=8000)
        parser.add_argument("--workers", type=int, default=1, help="uvicorn processes sharing the port")
        parser.add_argument(
            "--lan", action="store_true", help="listen on all interfaces; allow this machine's addresses"
        )
        parser.add_argument("--host", help="bind address (default 127.0.0.1, or 0.0.0.0 with --lan)")
        parser.add_argument("--log-dir", type=Path, help="children's logs (default var/)")
        parser.add_argument(
            "--control-dir",
            type=Path,
            help="fault tests: children.json is written here and a file hold-<child> keeps that child down",
        )

    def handle(self, *args: Any, **opts: Any) -> None:
        setup_logging()
        served = build(
            port=opts["port"],
            workers=opts["workers"],
            lan=opts["lan"],
            host=opts["host"],
            log_dir=opts["log_dir"],
            control_dir=opts["control_dir"],
        )
        self.stdout.write(
            f"Tossup is serving on {served.public_url} ({opts['workers']} server process(es)); "
            f"logs in {served.log_dir}/. Ctrl-C stops it.\n"
            "Create a match: manage.py create_match --packet demo --teams Red,Blue "
            f"--base-url {served.public_url}\n"
        )
        self.stdout.flush()
        run(served)
