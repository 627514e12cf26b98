"""Benchmark: the live path end to end — a real server, real websockets, real matches.

Starts a private Redis and one uvicorn process (``tools.launcher``) on 127.0.0.1 against a
scratch database (SQLite in a temporary directory, or ``DATABASE_URL`` if set — point it at a
scratch PostgreSQL database, never a real one: the benchmark migrates it and creates
matches), creates matches through ``competition.services`` and measures, from websocket
clients in this process:

(a) **first-word lateness** with N concurrent matches read at ``--rate`` words/s (one watcher
    per match): for each ``words`` frame, arrival time minus the time its first word was due
    (the engine stamps a batch with its last word's due time; earlier words were due one
    interval apart). From the N starts until a second after is reported on its own line; then
    the steady reading; then again while ``--burst`` extra clients connect at once from a
    process of their own, as from that many tablets (each reads its snapshot); then for
    ``CLOSE_S`` seconds from when they all close at once.
(b) **word latency at ``--room`` clients** in one match against a raw websocket broadcast
    server (``websockets.broadcast`` in a subprocess of this script) sending the same number
    of frames at the same rate: arrival time minus due time, for both (each server paced by
    its own asyncio timer, whose lateness both pay); ratio. The raw line "from send" counts
    from the raw server's send instead (its timer lateness left out), with its ratio too. From
    the start until a second after is reported apart, as in (a): the match's start is written
    by this process, so the server learns of it through Redis and reads the started row first.
(c) the same for a room of ``--big-room`` clients (where full garbage collections show).

Every phase is bounded (``--seconds``); all traffic stays on 127.0.0.1. Figures are
milliseconds. The clients share this process, so at 2,000 clients part of the measured
latency is the clients' own; the raw server pays the same.

    python -m tools.bench_live [--matches 20 100] [--seconds 12] [--rate 5] [--burst 1000]
                               [--room 100] [--big-room 2000]
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import gc
import json
import os
import subprocess
import sys
import tempfile
import time
from collections.abc import Awaitable, Callable, Iterator
from pathlib import Path
from typing import Any

import numpy as np

from competition.game import EventName

BASE_DIR = Path(__file__).resolve().parent.parent
CONNECT_CONCURRENCY = 200  # handshakes in flight at once while filling a room
START_S = 1.0  # seconds after the matches' starts reported apart in (a)
CLOSE_S = 2.0  # seconds read in (a) from when the burst's clients close at once
WORDS_PER_TOSSUP = 400  # longer than any phase: a phase never reaches dead time


def pct(values: list[float]) -> str:
    """``p50 / p99 / max`` in ms of ``values`` (seconds), or ``-`` when empty."""
    if not values:
        return "       -        -        -"
    p50, p99, top = np.percentile(np.array(values) * 1000, [50, 99, 100])
    return f"{p50:8.1f} {p99:8.1f} {top:8.1f}"


# --- the server under test ---------------------------------------------------------------------
class Server:
    """Redis + migrated scratch database + one uvicorn process, torn down by :meth:`stop`."""

    def __init__(self) -> None:
        from tools import launcher

        self.launcher = launcher
        self.tmp = tempfile.TemporaryDirectory(prefix="bench-live-")
        self.redis_url, self.redis = launcher.start_redis()
        db_url = os.environ.get("DATABASE_URL") or f"sqlite:///{self.tmp.name}/bench.sqlite3"
        self.env = launcher.child_env(REDIS_URL=self.redis_url, DATABASE_URL=db_url, DEBUG="0")
        os.environ.update(REDIS_URL=self.redis_url, DATABASE_URL=db_url)
        subprocess.run(
            [sys.executable, "manage.py", "migrate", "-v", "0"], cwd=BASE_DIR, env=self.env, check=True
        )
        self.port = launcher.free_port()
        self.proc = launcher.start_server(self.port, self.env, log=Path(self.tmp.name) / "server.log")

    def url(self, code: str, role: str = "watch", token: str = "") -> str:
        query = f"?token={token}" if token else ""
        return f"ws://127.0.0.1:{self.port}/ws/match/{code}/{role}/{query}"

    def stop(self) -> None:
        self.launcher.stop(self.proc)  # the server first: Redis going away first is logged as a fault
        self.launcher.stop(self.redis)
        log = Path(self.tmp.name) / "server.log"
        pauses = [
            line for line in log.read_text(errors="replace").splitlines() if "gc: full collection" in line
        ]
        if pauses:
            print(f"server: {len(pauses)} long full collections, e.g. {pauses[-1]}")
        errors = [line for line in log.read_text(errors="replace").splitlines() if "Traceback" in line]
        if errors:  # shown, not hidden: a benchmark of a failing server measures nothing
            print(f"server log: {len(errors)} tracebacks; its last lines:", file=sys.stderr)
            print("\n".join(log.read_text(errors="replace").splitlines()[-25:]), file=sys.stderr)
        self.tmp.cleanup()


def make_matches(n: int, wpm: float) -> list[tuple[int, str]]:
    """``n`` lobby matches of two long tossups each: ``[(match id, join code)]``."""
    from competition import services
    from competition.models import Packet, QuestionSet, Tossup

    qset, _ = QuestionSet.objects.get_or_create(name="bench", defaults={"year": 2024, "source": "bench"})
    packet, _ = Packet.objects.get_or_create(question_set=qset, name="bench")
    if not Tossup.objects.filter(packet=packet).exists():
        for i in range(2):
            words = [f"clue{i}w{k}" for k in range(WORDS_PER_TOSSUP)]
            words.insert(WORDS_PER_TOSSUP // 2, "(*)")
            Tossup.objects.create(
                packet=packet, number=i + 1, question=" ".join(words), answer_line="<b><u>bench</u></b>"
            )
    ids = list(Tossup.objects.filter(packet=packet).order_by("number").values_list("id", flat=True))
    out = []
    for k in range(n):
        m = services.create_match(name=f"bench {k}", tossup_ids=ids, teams=["A", "B"], config={"wpm": wpm})
        out.append((m.id, m.join_code))
    return out


def start_matches(ids: list[int]) -> None:
    from competition import game, services

    for match_id in ids:
        services.moderate(match_id=match_id, command=game.Start())


# --- clients -----------------------------------------------------------------------------------
async def open_ws(url: str) -> Any:
    """A connected client that has read its first frame (the snapshot)."""
    from websockets.asyncio.client import connect

    ws = await connect(url, max_size=None, compression=None, open_timeout=60, ping_interval=None)
    async with asyncio.timeout(60):
        while json.loads(await ws.recv()).get("type") != "snapshot":
            pass
    return ws


async def open_many(urls: list[str]) -> list[Any]:
    gate = asyncio.Semaphore(CONNECT_CONCURRENCY)

    async def one(url: str) -> Any:
        async with gate:
            return await open_ws(url)

    return list(await asyncio.gather(*(one(u) for u in urls)))


async def collect_words(
    ws: Any,
    interval: float,
    until: float | None,
    out: list[float],
    first: bool,
    from_send: list[float] | None = None,
) -> None:
    """Append, for each ``words`` frame before ``until`` (None: until cancelled), arrival minus
    due time (of the batch's first word when ``first``, else of the batch stamp) to ``out``, and
    arrival minus send time to ``from_send`` (frames of the raw server, which stamps
    ``sent_at``). A frame's arrival is when it is read: a client must be reading when it comes."""
    with contextlib.suppress(TimeoutError, Exception):
        async with asyncio.timeout(None if until is None else max(0.0, until - time.time())):
            async for raw in ws:
                now = time.time()
                frame = json.loads(raw)
                if frame.get("type") == "event" and frame.get("event") == EventName.WORDS:
                    data = frame["data"]
                    due = data["revealed_at"] - (interval * (len(data["words"]) - 1) if first else 0.0)
                    out.append(now - due)
                    if from_send is not None and "sent_at" in data:
                        from_send.append(now - data["sent_at"])


async def first_second(
    sockets: list[Any], interval: float, first: bool, begin: Callable[[], Awaitable[None]] | None = None
) -> list[float]:
    """The latencies (as :func:`collect_words`) of the frames that ``sockets`` read while
    ``begin()`` runs (the matches' starts) and for START_S seconds after: reading from before
    the starts, so that a word sent while they were being written is counted when it came, not
    when the writing was over."""
    out: list[float] = []
    reading = [asyncio.create_task(collect_words(ws, interval, None, out, first)) for ws in sockets]
    try:
        if begin is not None:
            await begin()
        await asyncio.sleep(START_S)
    finally:
        for task in reading:
            task.cancel()  # a cancelled ``recv`` loses no frame: the next phase reads it
        await asyncio.gather(*reading, return_exceptions=True)
    return out


@contextlib.contextmanager
def clients_heap_frozen() -> Iterator[None]:
    """Everything this process holds (Django, the clients) out of its cyclic collector's reach
    while clients read: its full collections stall every client at once, and the stall was
    counted as the server's lateness. At 2,000 clients: raw p99 131–377 ms with them, 83–123 ms
    without; with 100 watchers in (a), 9 full collections of 27–82 ms in 80 s of reading."""
    gc.collect()
    gc.freeze()
    try:
        yield
    finally:
        gc.unfreeze()


async def close_all(sockets: list[Any]) -> None:
    await asyncio.gather(*(ws.close() for ws in sockets), return_exceptions=True)


# --- (a) lateness with N matches, and during a connection burst ---------------------------------
async def lateness(
    server: Server, n: int, seconds: float, rate: float, burst: int
) -> tuple[list, list, list, list, float]:
    from asgiref.sync import sync_to_async

    interval = 1.0 / rate
    matches = await sync_to_async(make_matches)(n, rate * 60)
    watchers = await open_many([server.url(code) for _, code in matches])
    with clients_heap_frozen():
        half = seconds / 2
        # The words of the first second after the starts are reported apart: the N starts come
        # within about half a second, not spread as moderators' clicks are, and each driver
        # reads its started row, written by this process, before its first word.
        start = await first_second(
            watchers, interval, True, lambda: sync_to_async(start_matches)([m for m, _ in matches])
        )
        t0 = time.time()
        quiet: list[float] = []
        await asyncio.gather(*(collect_words(ws, interval, t0 + half, quiet, True) for ws in watchers))
        busy: list[float] = []
        closing: list[float] = []
        burst_s = float("nan")
        t1 = time.time()
        tasks = [collect_words(ws, interval, t1 + half, busy, True) for ws in watchers]
        if not burst:
            await asyncio.gather(*tasks)
        else:
            # From a process of their own, as from 1,000 tablets: creating 1,000 connections at
            # once stalls the creating process's event loop for a third of a second, and the
            # watchers' frames must not wait behind that.
            codes = [code for _, code in matches]
            urls = [server.url(codes[k % len(codes)]) for k in range(burst)]
            proc = await asyncio.create_subprocess_exec(
                sys.executable, "-m", "tools.bench_live", "--burst-clients",
                cwd=BASE_DIR, stdin=subprocess.PIPE, stdout=subprocess.PIPE,
            )  # fmt: skip
            assert proc.stdin is not None and proc.stdout is not None
            stdin, stdout = proc.stdin, proc.stdout

            async def connect_burst() -> None:
                nonlocal burst_s
                stdin.write(json.dumps(urls).encode() + b"\n")
                await stdin.drain()
                line = await stdout.readline()
                if not line:  # its traceback is on stderr, above
                    raise RuntimeError(f"the connecting clients' process failed (exit {await proc.wait()})")
                result = json.loads(line)
                burst_s = result["seconds"]
                if result["failed"]:
                    print(f"    {result['failed']} of the {burst} connecting clients failed")

            try:
                await asyncio.gather(connect_burst(), *tasks)
                # Then they all close at once, as a room's tablets do when a proxy or the clients'
                # own machine goes: the server tears them all down in a few loop iterations.
                t2 = time.time()
                stdin.write(b"close\n")
                stdin.close()
                tasks = [collect_words(ws, interval, t2 + CLOSE_S, closing, True) for ws in watchers]
                await asyncio.gather(*tasks)
                if code := await proc.wait():
                    raise RuntimeError(f"the connecting clients' process failed (exit {code})")
            finally:
                if proc.returncode is None:
                    proc.kill()
                    await proc.wait()
        await close_all(watchers)
    from competition import game, services

    def end_all() -> None:
        for match_id, _ in matches:
            with contextlib.suppress(Exception):
                services.moderate(match_id=match_id, command=game.End())

    await sync_to_async(end_all)()
    return start, quiet, busy, closing, burst_s


async def burst_clients() -> None:
    """Connects to every URL of the JSON list on stdin's first line at once, waits until each
    has read its snapshot, prints ``{"seconds": …, "failed": …}``, and closes them all at once
    when stdin's next line (or its end) comes."""
    urls = json.loads(sys.stdin.readline() or "[]")
    b0 = time.time()
    sockets = await asyncio.gather(*(open_ws(url) for url in urls), return_exceptions=True)
    failed = sum(isinstance(s, BaseException) for s in sockets)
    print(json.dumps({"seconds": time.time() - b0, "failed": failed}), flush=True)
    await asyncio.to_thread(sys.stdin.readline)
    await close_all([s for s in sockets if not isinstance(s, BaseException)])


# --- (b, c) one room against a raw broadcast server -------------------------------------------
Latencies = tuple[list[float], list[float], list[float]]


async def read_room(
    sockets: list[Any], rate: float, seconds: float, begin: Callable[[], Awaitable[None]] | None = None
) -> Latencies:
    """Latencies from the due time while ``begin()`` runs and START_S seconds after (see
    :func:`first_second`) and of the rest of ``seconds``; and of the rest from the send time
    (raw frames only)."""
    with clients_heap_frozen():
        t0 = time.time()
        start = await first_second(sockets, 1 / rate, False, begin)
        out: list[float] = []
        sent: list[float] = []
        await asyncio.gather(*(collect_words(ws, 1 / rate, t0 + seconds, out, False, sent) for ws in sockets))
        await close_all(sockets)
        return start, out, sent


async def room_latency(server: Server, clients: int, seconds: float, rate: float) -> Latencies:
    from asgiref.sync import sync_to_async

    ((match_id, code),) = await sync_to_async(make_matches)(1, rate * 60)
    sockets = await open_many([server.url(code) for _ in range(clients)])
    return await read_room(sockets, rate, seconds, lambda: sync_to_async(start_matches)([match_id]))


async def raw_latency(clients: int, seconds: float, rate: float) -> Latencies:
    """The same room on a raw ``websockets`` broadcast server in a subprocess."""
    from tools.launcher import free_port, wait_for_port

    port = free_port()
    proc = subprocess.Popen(
        [sys.executable, "-m", "tools.bench_live", "--raw-server", str(port), "--raw-clients", str(clients),
         "--rate", str(rate), "--seconds", str(seconds)],
        cwd=BASE_DIR,
    )  # fmt: skip
    try:
        await asyncio.to_thread(wait_for_port, port, 30.0, proc)
        sockets = await open_many([f"ws://127.0.0.1:{port}/" for _ in range(clients)])
        return await read_room(sockets, rate, seconds + 2)
    finally:
        proc.terminate()
        with contextlib.suppress(subprocess.TimeoutExpired):
            proc.wait(5)
        if proc.poll() is None:
            proc.kill()


async def raw_server(port: int, clients: int, seconds: float, rate: float) -> None:
    """Greets each client with a snapshot, waits (≤ 60 s) for ``clients`` of them, then
    broadcasts a ``words`` frame every 1/``rate`` s for ``seconds``, stamped with its due time
    (``revealed_at``, as the engine stamps its words) and its send time (``sent_at``)."""
    from websockets.asyncio.server import broadcast, serve

    conns: set[Any] = set()

    async def handler(ws: Any) -> None:
        await ws.send(json.dumps({"type": "snapshot", "seq": 0}))
        conns.add(ws)
        try:
            await ws.wait_closed()
        finally:
            conns.discard(ws)

    async with serve(handler, "127.0.0.1", port, compression=None, ping_interval=None):
        async with asyncio.timeout(60):
            while len(conns) < clients:
                await asyncio.sleep(0.05)
        due = time.time() + 0.2
        for k in range(round(seconds * rate)):
            await asyncio.sleep(max(0.0, due - time.time()))
            data = {
                "question_id": 1,
                "start": k,
                "words": [f"w{k}"],
                "revealed_at": due,
                "sent_at": time.time(),
            }
            broadcast(conns, json.dumps({"type": "event", "seq": k + 1, "event": "words", "data": data}))
            due += 1 / rate
        await asyncio.sleep(1.0)


# --- main --------------------------------------------------------------------------------------
async def run(args: argparse.Namespace, server: Server) -> None:
    print(
        f"live path, one uvicorn process, {args.rate:g} words/s, {server.env['DATABASE_URL'].split(':')[0]}"
    )
    for i, n in enumerate(n for n in args.matches if n > 0):
        if i == 0:
            print("(a) first-word lateness, ms            p50      p99      max   words")
        start, quiet, busy, closing, burst_s = await lateness(server, n, args.seconds, args.rate, args.burst)
        print(f"    {n:>4} matches, first {START_S:g} s        {pct(start)} {len(start):>7}")
        print(f"    {n:>4} matches                  {pct(quiet)} {len(quiet):>7}")
        print(f"    {n:>4} matches + {args.burst} connecting {pct(busy)} {len(busy):>7}"
              f"   (burst connected in {burst_s:.1f} s)")  # fmt: skip
        if args.burst:
            print(f"    {n:>4} matches + {args.burst} closing    {pct(closing)} {len(closing):>7}")
    for label, clients in (("(b)", args.room), ("(c)", args.big_room)):
        if not clients:
            continue
        tossup_start, tossup, _ = await room_latency(server, clients, args.seconds, args.rate)
        raw_start, raw, raw_sent = await raw_latency(clients, args.seconds, args.rate)
        print(f"{label} word latency, {clients} clients, ms  p50      p99      max  frames")
        print(f"    Tossup, first {START_S:g} s             {pct(tossup_start)} {len(tossup_start):>7}")
        print(f"    Tossup                        {pct(tossup)} {len(tossup):>7}")
        print(f"    raw, first {START_S:g} s                {pct(raw_start)} {len(raw_start):>7}")
        print(f"    raw websockets broadcast      {pct(raw)} {len(raw):>7}")
        print(f"    raw, from send                {pct(raw_sent)} {len(raw_sent):>7}")
        if tossup and raw and raw_sent:
            t50, t99 = np.percentile(tossup, [50, 99])
            for name, base in (("", raw), (", from send", raw_sent)):
                r50, r99 = np.percentile(base, [50, 99])
                print(f"    {'ratio Tossup/raw' + name:<30}{t50 / r50:8.1f} {t99 / r99:8.1f}")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--matches", type=int, nargs="+", default=[20, 100])
    parser.add_argument("--seconds", type=float, default=12.0, help="length of each measured phase")
    parser.add_argument("--rate", type=float, default=5.0, help="words per second")
    parser.add_argument("--burst", type=int, default=1000, help="clients connecting at once in (a)")
    parser.add_argument("--room", type=int, default=100, help="clients in (b); 0 skips")
    parser.add_argument("--big-room", type=int, default=2000, help="clients in (c); 0 skips")
    parser.add_argument("--raw-server", type=int, help=argparse.SUPPRESS)
    parser.add_argument("--raw-clients", type=int, default=0, help=argparse.SUPPRESS)
    parser.add_argument("--burst-clients", action="store_true", help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.burst_clients:
        asyncio.run(burst_clients())
        return
    if args.raw_server:
        asyncio.run(raw_server(args.raw_server, args.raw_clients, args.seconds, args.rate))
        return

    os.environ.setdefault("DJANGO_SETTINGS_MODULE", "config.settings")
    server = Server()
    try:
        import django

        django.setup()
        asyncio.run(run(args, server))
    finally:
        server.stop()


if __name__ == "__main__":
    main()
