"""Fault-injection harness: a real ``manage.py serve`` (uvicorn + Celery worker) on a scratch
database, that a test can break — kill the server or the worker, stop Redis — and a
``Bystander`` client that records everything it is sent.

    def test_x(serve):
        srv = serve()                       # or serve(private_redis=True, workers=2)
        m = srv.create_match(players={"ada": "Red"}, config={"wpm": 240})
        url = srv.ws_url(m["code"], "watch")
        srv.kill_server(); ...; srv.start_server()

Every test in this folder is marked ``e2e``. Every wait is bounded.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import os
import signal
import subprocess
import sys
import time
import urllib.error
import urllib.request
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit

import pytest
import websockets
from websockets.asyncio.client import ClientConnection, connect

from tools import launcher
from tools.databases import scratch_database

ROOT = Path(__file__).resolve().parents[2]
Frame = dict[str, Any]
RESULT_MARK = "@@tossup-result@@"


def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    here = Path(__file__).parent
    for item in items:
        if here in Path(str(item.fspath)).parents:
            item.add_marker(pytest.mark.e2e)


# --- processes -------------------------------------------------------------------------------


def _group_pids(pgid: int) -> list[int]:
    """Live (non-zombie) processes in process group ``pgid`` (Linux /proc)."""
    pids = []
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit():
            continue
        with contextlib.suppress(OSError, ValueError, IndexError):
            stat = (entry / "stat").read_text()
            fields = stat[stat.rindex(")") + 2 :].split()
            if int(fields[2]) == pgid and fields[0] != "Z":
                pids.append(int(entry.name))
    return pids


def _rss_kb(pid: int) -> int:
    with contextlib.suppress(OSError):
        for line in Path(f"/proc/{pid}/status").read_text().splitlines():
            if line.startswith("VmRSS:"):
                return int(line.split()[1])
    return 0


def _wait(pred: Callable[[], bool], timeout: float, what: str, every: float = 0.1) -> float:
    """Poll ``pred`` until true; returns the seconds it took; TimeoutError naming ``what``."""
    start = time.monotonic()
    while time.monotonic() - start < timeout:
        if pred():
            return time.monotonic() - start
        time.sleep(every)
    raise TimeoutError(f"{what} not within {timeout:.0f} s")


class Served:
    """One ``manage.py serve --workers N`` subprocess (own process group) and its handles.

    ``redis``: the suite's Redis (``REDIS_URL``), or with ``private_redis`` one on a fixed
    free port that :meth:`stop_redis` / :meth:`start_redis` stop and restart in place."""

    def __init__(
        self,
        workdir: Path,
        db_url: str,
        redis_url: str,
        *,
        workers: int = 1,
        private_redis: bool = False,
        env: dict[str, str] | None = None,
    ):
        self.workdir = workdir
        self.control = workdir / "control"
        self.logs = workdir / "logs"
        self.control.mkdir(parents=True, exist_ok=True)
        self.logs.mkdir(exist_ok=True)
        self.workers = workers
        self.port = launcher.free_port()
        self.redis_proc: subprocess.Popen | None = None
        self.redis_port: int | None = None
        if private_redis:
            self.redis_port = launcher.free_port()
            redis_url = f"redis://127.0.0.1:{self.redis_port}/0"
            self.start_redis()
        self.redis_url = redis_url
        self.env = launcher.child_env(
            DATABASE_URL=db_url,
            REDIS_URL=redis_url,
            SECRET_KEY="tossup-fault-tests-not-secret",
            ALLOWED_HOSTS="127.0.0.1,localhost",
            **(env or {}),
        )
        self.proc: subprocess.Popen | None = None

    # -- addresses
    @property
    def base_url(self) -> str:
        return f"http://127.0.0.1:{self.port}"

    def ws_url(self, code: str, role: str, token: str = "") -> str:
        """``role``: play | moderate | watch."""
        query = f"?token={token}" if token else ""
        return f"ws://127.0.0.1:{self.port}/ws/match/{code}/{role}/{query}"

    # -- the serve process
    def start(self, timeout: float = 90.0) -> Served:
        cmd = [
            sys.executable, "manage.py", "serve", "--port", str(self.port), "--workers", str(self.workers),
            "--log-dir", str(self.logs), "--control-dir", str(self.control),
        ]  # fmt: skip
        out = open(self.logs / "serve.log", "ab")  # noqa: SIM115 - closed with the process
        self.proc = subprocess.Popen(
            cmd, cwd=ROOT, env=self.env, stdout=out, stderr=subprocess.STDOUT, start_new_session=True
        )
        self.wait_http(timeout)
        _wait(lambda: "worker" in self.children(), 30, "the Celery worker")
        return self

    def close(self) -> None:
        if self.proc is not None and self.proc.poll() is None:
            self.proc.send_signal(signal.SIGTERM)
            try:
                self.proc.wait(timeout=20)
            except subprocess.TimeoutExpired:
                self.proc.kill()
                self.proc.wait(timeout=10)
        # Children die with serve (PDEATHSIG); make sure, by process group.
        for pid in self.children().values():
            with contextlib.suppress(ProcessLookupError, PermissionError):
                os.killpg(pid, signal.SIGKILL)
        if self.redis_proc is not None:
            launcher.stop(self.redis_proc)
            self.redis_proc = None

    def serve_log(self) -> str:
        return (self.logs / "serve.log").read_text(errors="replace")

    def children(self) -> dict[str, int]:
        """``{name: pid}`` of serve's children (server, worker[, redis]) as serve last wrote it."""
        try:
            return json.loads((self.control / "children.json").read_text())
        except (OSError, ValueError):
            return {}

    def http_ok(self) -> bool:
        try:
            with urllib.request.urlopen(f"{self.base_url}/play/", timeout=2):
                return True
        except urllib.error.HTTPError as exc:
            return exc.code < 500
        except OSError:
            return False

    def wait_http(self, timeout: float = 60.0) -> float:
        def up() -> bool:
            if self.proc is not None and self.proc.poll() is not None:
                raise RuntimeError(f"serve exited ({self.proc.returncode}):\n{self.serve_log()[-3000:]}")
            return self.http_ok()

        return _wait(up, timeout, f"HTTP on {self.base_url}")

    def _kill_child(self, name: str, sig: int, hold: bool) -> int:
        """Kill child ``name``'s whole process group with ``sig``; with ``hold`` serve does not
        restart it until ``_release``. Returns the killed pid."""
        if hold:
            (self.control / f"hold-{name}").touch()
        pid = self.children()[name]
        os.killpg(pid, sig)
        _wait(lambda: not _group_pids(pid), 20, f"{name} (pid {pid}) to die")
        _wait(lambda: self.children().get(name) != pid, 10, f"serve to notice {name} died")
        return pid

    def _release(self, name: str, old_pid: int | None, timeout: float) -> None:
        with contextlib.suppress(FileNotFoundError):
            (self.control / f"hold-{name}").unlink()
        _wait(lambda: self.children().get(name, old_pid) != old_pid, timeout, f"serve to restart {name}")

    def kill_server(self, sig: int = signal.SIGKILL, hold: bool = True) -> int:
        """Kill the uvicorn process(es) only (``sig``, default SIGKILL: no shutdown, no flush).
        ``hold``: keep it down until :meth:`start_server`; else serve restarts it itself."""
        self._killed_server = self._kill_child("server", sig, hold)
        return self._killed_server

    def start_server(self, timeout: float = 60.0) -> float:
        """Let serve start the server again; returns the seconds until HTTP answered."""
        start = time.monotonic()
        self._release("server", getattr(self, "_killed_server", None), timeout)
        self.wait_http(timeout)
        return time.monotonic() - start

    def kill_worker(self, sig: int = signal.SIGKILL, hold: bool = True) -> int:
        self._killed_worker = self._kill_child("worker", sig, hold)
        return self._killed_worker

    def start_worker(self, timeout: float = 30.0) -> None:
        self._release("worker", getattr(self, "_killed_worker", None), timeout)

    def stop_redis(self, sig: int = signal.SIGKILL) -> None:
        """Stop the private Redis (its data goes with it: it never persists)."""
        assert self.redis_proc is not None, "serve(private_redis=True) to stop Redis"
        self.redis_proc.send_signal(sig)
        self.redis_proc.wait(timeout=10)

    def start_redis(self) -> None:
        """(Re)start the private Redis on the same port, empty."""
        assert self.redis_port is not None
        self.redis_proc = subprocess.Popen(
            launcher.redis_command(self.redis_port), stdout=subprocess.DEVNULL, stderr=subprocess.STDOUT
        )
        launcher.wait_for_port(self.redis_port, proc=self.redis_proc)

    def rss_mb(self) -> float:
        """Resident memory of the server process(es) (uvicorn master and workers), MB."""
        pid = self.children().get("server")
        return sum(_rss_kb(p) for p in _group_pids(pid)) / 1024 if pid else 0.0

    # -- the database, through the project's own code
    def manage(self, *args: str, timeout: float = 300) -> str:
        done = subprocess.run(
            [sys.executable, "manage.py", *args],
            cwd=ROOT,
            env=self.env,
            capture_output=True,
            text=True,
            timeout=timeout,
        )
        assert done.returncode == 0, f"manage.py {args[0]} failed:\n{done.stderr[-3000:]}"
        return done.stdout

    def db_query(self, snippet: str) -> Any:
        """Run ``snippet`` in ``manage.py shell -c`` against the server's database; it must
        assign ``result`` (anything JSON-serialisable), which is returned."""
        code = f"{snippet}\nimport json as _json\nprint({RESULT_MARK!r} + _json.dumps(result, default=str))"
        for line in reversed(self.manage("shell", "-c", code).splitlines()):
            if line.startswith(RESULT_MARK):
                return json.loads(line[len(RESULT_MARK) :])
        raise AssertionError("the snippet printed no result")

    def create_match(
        self,
        *,
        teams: tuple[str, ...] = ("Red", "Blue"),
        bots: tuple[str, ...] = (),
        players: dict[str, str] | None = None,
        tossups: int | None = None,
        packet: str = "demo",
        preset: str = "naqt",
        config: dict[str, Any] | None = None,
    ) -> dict[str, Any]:
        """``manage.py create_match --json`` plus ``players`` (name → team) seated through
        ``services.join_match``: its JSON, with ``players: {name: {player_id, token, team_id}}``."""
        args = ["--packet", packet, "--teams", ",".join(teams), "--preset", preset, "--json"]
        args += [a for b in bots for a in ("--bot", b)]
        args += ["--tossups", str(tossups)] if tossups else []
        args += ["--config", json.dumps(config or {}), "--base-url", self.base_url]
        seats = json.dumps(players or {})
        snippet = f"""
import io, json
from django.core.management import call_command
from competition import services
out = io.StringIO()
call_command("create_match", *{args!r}, stdout=out)
result = json.loads(out.getvalue())
result["players"] = {{}}
for name, team in json.loads({seats!r}).items():
    p = services.join_match(code=result["code"], name=name, team=team)
    result["players"][name] = {{"player_id": p.id, "token": p.token, "team_id": p.team_id}}
"""
        return self.db_query(snippet)

    def events(self, code: str, audiences: tuple[str, ...] | None = None) -> list[Frame]:
        """The match's event log (``seq``, ``event``, ``data``, ``audience``, ``actor``), oldest first."""
        snippet = f"""
from competition.models import MatchEvent
rows = MatchEvent.objects.filter(match__join_code={code!r}).order_by("seq")
aud = {list(audiences) if audiences else None!r}
if aud is not None:
    rows = rows.filter(audience__in=aud)
result = [dict(seq=r.seq, event=r.event, data=r.payload, audience=r.audience, actor=r.actor) for r in rows]
"""
        return self.db_query(snippet)


@pytest.fixture
def serve(tmp_path: Path, redis_url: str) -> Iterator[Callable[..., Served]]:
    """Factory: ``serve(workers=1, private_redis=False, env=None)`` starts a supervised server
    on a scratch database and returns a started :class:`Served`; all are stopped after the test."""
    made: list[Served] = []
    with contextlib.ExitStack() as stack:

        def factory(**opts: Any) -> Served:
            workdir = tmp_path / f"serve{len(made)}"
            workdir.mkdir()
            db_url = stack.enter_context(scratch_database(workdir))
            served = Served(workdir, db_url, redis_url, **opts)
            made.append(served)
            return served.start()

        try:
            yield factory
        finally:
            for served in made:
                served.close()


# --- a client that sees everything --------------------------------------------------------


class Bystander:
    """A client (any role) that records every frame with its arrival time (epoch s), answers
    heartbeats at once, asks for ``resync`` when a heartbeat says it missed events, and
    reconnects — like a tablet — when its connection ends or the server is silent for
    ``silent_after`` s, giving up after ``give_up_after`` s without a connection.

    Book-keeping for loss/duplication checks: ``applied`` (events applied, in order, each
    with a seq above everything applied or snapshotted before), ``covered`` (seq ranges
    ``(after, upto]`` a snapshot stood in for), ``duplicates`` (event seqs sent again after
    they were applied)."""

    def __init__(self, url: str, *, silent_after: float = 15.0, give_up_after: float = 120.0):
        self.url = url
        self.silent_after = silent_after
        self.give_up_after = give_up_after
        self.frames: list[tuple[float, Frame]] = []
        self.applied: list[Frame] = []
        self.covered: list[tuple[int, int]] = []
        self.duplicates: list[int] = []
        self.connects: list[float] = []
        self.disconnects: list[float] = []
        self.resyncs = 0
        self.last_seq = 0
        self._applied_seqs: set[int] = set()
        self._resync_pending = False
        self._ws: ClientConnection | None = None
        self._task: asyncio.Task | None = None
        self._new = asyncio.Event()
        self._closing = False

    async def start(self, timeout: float = 15.0) -> Bystander:
        """Connect and wait for the first snapshot."""
        self._task = asyncio.create_task(self._run())
        await self.wait_for(lambda f: f.get("type") == "snapshot", timeout)
        return self

    async def _run(self) -> None:
        down_since = time.monotonic()
        while not self._closing:
            try:
                ws = await connect(
                    self.url,
                    origin=f"http://{urlsplit(self.url).netloc}",  # type: ignore[arg-type]
                    ping_interval=None,
                    compression=None,
                    open_timeout=5,
                )
            except (OSError, TimeoutError, websockets.InvalidHandshake, websockets.ConnectionClosed):
                if time.monotonic() - down_since > self.give_up_after:
                    return
                await asyncio.sleep(0.25)
                continue
            self._ws = ws
            self._resync_pending = False
            self.connects.append(time.time())
            try:
                while True:
                    text = await asyncio.wait_for(ws.recv(), timeout=self.silent_after)
                    await self._on_frame(json.loads(text))
            except (TimeoutError, websockets.ConnectionClosed, OSError):
                pass
            finally:
                self._ws = None
                self.disconnects.append(time.time())
                down_since = time.monotonic()
                with contextlib.suppress(Exception):
                    await asyncio.wait_for(ws.close(), 2)
                self._new.set()

    async def _on_frame(self, frame: Frame) -> None:
        self.frames.append((time.time(), frame))
        kind = frame.get("type")
        if kind == "heartbeat":
            await self.send({"type": "heartbeat_ack", "server_time": frame.get("server_time")})
            if int(frame.get("seq") or 0) > self.last_seq and not self._resync_pending:
                self._resync_pending = True
                self.resyncs += 1
                await self.send({"type": "resync", "after_seq": self.last_seq})
        elif kind == "snapshot":
            seq = int(frame["seq"])
            if seq > self.last_seq:
                self.covered.append((self.last_seq, seq))
                self.last_seq = seq
            self._resync_pending = False
        elif kind == "event":
            seq = int(frame["seq"])
            if seq in self._applied_seqs:
                self.duplicates.append(seq)
            elif seq > self.last_seq:
                self.applied.append(frame)
                self._applied_seqs.add(seq)
                self.last_seq = seq
        self._new.set()

    async def send(self, msg: Frame) -> None:
        if self._ws is not None:
            with contextlib.suppress(websockets.ConnectionClosed):
                await self._ws.send(json.dumps(msg))

    async def wait_for(self, pred: Callable[[Frame], bool], timeout: float = 20.0, after: int = 0) -> Frame:
        """The first recorded frame from index ``after`` matching ``pred``; TimeoutError if none."""
        async with asyncio.timeout(timeout):
            seen = after
            while True:
                for _, frame in self.frames[seen:]:
                    if pred(frame):
                        return frame
                seen = len(self.frames)
                self._new.clear()
                await self._new.wait()

    def events(self, name: str) -> list[Frame]:
        return [f for f in self.applied if f["event"] == name]

    def arrivals(self, name: str) -> list[tuple[float, Frame]]:
        """(arrival time, frame) of every ``name`` event received (applied or not)."""
        return [(t, f) for t, f in self.frames if f.get("type") == "event" and f.get("event") == name]

    def accounted(self, seq: int) -> bool:
        """Whether event ``seq`` reached this client: applied, or inside a snapshot."""
        return seq in self._applied_seqs or any(a < seq <= b for a, b in self.covered)

    async def close(self) -> None:
        self._closing = True
        if self._ws is not None:
            with contextlib.suppress(Exception):
                await asyncio.wait_for(self._ws.close(), 2)
        if self._task is not None:
            self._task.cancel()
            with contextlib.suppress(BaseException):
                await self._task


def is_event(name: str) -> Callable[[Frame], bool]:
    return lambda f: f.get("type") == "event" and f.get("event") == name
