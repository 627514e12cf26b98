"""A real server for page tests: a uvicorn process (``tools.launcher``) over a migrated scratch
database, set up with ``manage.py`` commands run against that database."""

from __future__ import annotations

import contextlib
import subprocess
import sys
from collections.abc import Callable, Iterator
from pathlib import Path

from tools import launcher
from tools.databases import scratch_database

BASE_DIR = Path(__file__).resolve().parents[2]


def manage(env: dict[str, str], *args: str, stdin: str | None = None) -> str:
    """Run ``manage.py args`` with ``env`` (the server's database); its stdout. CalledProcessError
    when the command fails."""
    done = subprocess.run(
        [sys.executable, "manage.py", *args],
        cwd=BASE_DIR,
        env=env,
        check=True,
        capture_output=True,
        timeout=300,
        input=stdin.encode() if stdin is not None else None,
    )
    return done.stdout.decode()


@contextlib.contextmanager
def live_server(
    tmp: Path, redis_url: str, setup: Callable[[dict[str, str]], None] = lambda env: None
) -> Iterator[tuple[str, dict[str, str]]]:
    """``(base URL, env)`` of a server whose scratch database is migrated, then prepared by
    ``setup(env)`` (e.g. ``manage(env, "import_questions", "--demo")``); stopped on exit, its log
    in ``tmp/server.log``."""
    with scratch_database(tmp) as db_url:
        env = launcher.child_env(DATABASE_URL=db_url, REDIS_URL=redis_url)
        manage(env, "migrate", "--noinput")
        setup(env)
        port = launcher.free_port()
        proc = launcher.start_server(port, env, log=tmp / "server.log")
        try:
            yield f"http://127.0.0.1:{port}", env
        finally:
            launcher.stop(proc)
