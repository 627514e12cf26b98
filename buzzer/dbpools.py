"""The database executor pools of a server process: where its database calls run.

Database calls of the live path (ticks that cannot be stored from the event loop, heartbeats,
buzzes, answers, moderator commands) run on :func:`live_db`'s thread pool, and those of
connecting clients (authentication, snapshots) on :func:`connect_db`'s — never on asgiref's one
thread-sensitive thread, where every call of the process queued behind every other and a burst of
connecting clients delayed every match's words (``python -m tools.bench_live``). Each call is
still one function, so one transaction, on one thread; two calls for the same match serialise on
the store's row lock. A ``Tick`` that only reveals words is stored from the event loop itself
when it can (:data:`TICK_CONNECTIONS`).

Used by the reading driver (``buzzer.driver``) and the websocket consumer (``buzzer.consumers``).
"""

from __future__ import annotations

import asyncio
import collections
import threading
import time
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from typing import Any

import psycopg
from asgiref.sync import SyncToAsync
from django.conf import settings
from django.db import close_old_connections, connections

# Bounded pools, so the database sees at most their sum of this process's connections
# (persistent: settings.CONN_MAX_AGE; channels' wrapper closes stale or broken ones per call).
_LIVE_POOL = ThreadPoolExecutor(max_workers=settings.LIVE_DB_THREADS, thread_name_prefix="live-db")
_CONNECT_POOL = ThreadPoolExecutor(max_workers=settings.CONNECT_DB_THREADS, thread_name_prefix="connect-db")


def close_pool_connections(timeout: float = 10.0) -> None:
    """Close the database connections the pools' threads keep open (``CONN_MAX_AGE``) and the
    idle :data:`TICK_CONNECTIONS`, e.g. before a test database is dropped. Each thread runs
    one closing task: a barrier holds the tasks until all of a pool's threads have one. Raises
    threading.BrokenBarrierError when a thread stays busy longer than ``timeout`` seconds."""
    TICK_CONNECTIONS.close()
    for pool, size in ((_LIVE_POOL, settings.LIVE_DB_THREADS), (_CONNECT_POOL, settings.CONNECT_DB_THREADS)):
        barrier = threading.Barrier(size)

        def close(barrier: threading.Barrier = barrier) -> None:
            barrier.wait(timeout)
            connections.close_all()

        for task in [pool.submit(close) for _ in range(size)]:
            task.result()


HEALTH_CHECK_S = 1.0  # a pool thread re-checks its connection at most this often
_thread = threading.local()


class PoolCall(SyncToAsync):
    """channels' ``database_sync_to_async`` for the pools, except that a thread checks its
    connections (Django's health check, a ``SELECT 1`` round trip, and ``CONN_MAX_AGE``) at
    most every :data:`HEALTH_CHECK_S` instead of before every call: at five words a second
    per match that check was one round trip in five of every word. A connection that breaks in
    between fails its call, is closed right after it, and the thread's next call checks again."""

    def thread_handler(self, loop: Any, *args: Any, **kwargs: Any) -> Any:
        now = time.monotonic()
        if now - getattr(_thread, "checked_at", -HEALTH_CHECK_S) >= HEALTH_CHECK_S:
            close_old_connections()  # the next query checks the connection first
            _thread.checked_at = now
        try:
            return super().thread_handler(loop, *args, **kwargs)
        finally:
            if any(conn.errors_occurred for conn in connections.all(initialized_only=True)):
                close_old_connections()
                _thread.checked_at = -HEALTH_CHECK_S


def live_db(fn: Callable[..., Any]) -> Callable[..., Any]:
    """``fn`` as a coroutine function run on the live path's pool (ticks, buzzes, commands)."""
    return PoolCall(fn, thread_sensitive=False, executor=_LIVE_POOL)


def connect_db(fn: Callable[..., Any]) -> Callable[..., Any]:
    """``fn`` as a coroutine function run on the pool of connecting clients (authentication,
    snapshots), so a burst of them never delays a word or a buzz."""
    return PoolCall(fn, thread_sensitive=False, executor=_CONNECT_POOL)


# How long a tick waits for one of the busy :data:`TICK_CONNECTIONS` before it takes a database
# thread instead: with 200 matches at 5 words/s on 4 connections, words went to a thread hop, a
# second ``Tick`` computed later (often two words at once) and the ORM's cursor whenever the four
# were busy for an instant (a profile of ``tools.bench_live``: a third of the server's samples in
# ``ticks.tick`` on the live threads). Well under a word's interval (0.2 s at 5 words/s).
WAIT_FOR_CONNECTION_S = 0.025


class TickConnections:
    """Autocommit connections to PostgreSQL on which drivers store their words from the event
    loop itself (``competition.live.ticks.tick_on_loop``, its one statement).
    A word then reaches the room without going to a database thread and back, and never waits
    for a live thread behind buzzes, commands or connecting clients' work (``tools.bench_live``:
    words' p99 lateness with 100 matches while 1,000 clients connect fell by about half; at 100
    clients a word reached them 1–2 ms sooner, not enough to change its ratio to a raw
    broadcast). At most ``size`` are open; when all are busy, :meth:`execute` waits up to
    ``wait`` seconds for one (first come, first served), then runs nothing and the tick takes
    the thread way.

    Not psycopg_pool: its pool belongs to the event loop that opened it and must be closed on
    that loop, while a psycopg connection used by one caller at a time serves any loop (a test
    session runs many)."""

    def __init__(self, size: int, wait: float = WAIT_FOR_CONNECTION_S):
        self.size = size
        self.wait = wait
        self._idle: list[psycopg.AsyncConnection] = []
        self._open = 0
        # Callers waiting for a connection, each on its own loop: the loops of several threads
        # may share the connections.
        self._waiters: collections.deque[tuple[asyncio.AbstractEventLoop, asyncio.Future]] = (
            collections.deque()
        )
        self._lock = threading.Lock()

    async def execute(self, sql: str, params: list[Any]) -> list[Any] | None:
        """Run ``sql`` (one statement, committed on return) and fetch its rows; None when every
        connection stayed busy for ``wait`` seconds (nothing run). Raises psycopg's errors (the
        connection is closed)."""
        got, conn = await self._acquire()
        if not got:
            return None
        try:
            if conn is None:
                conn = await psycopg.AsyncConnection.connect(**_connection_params(), autocommit=True)
            rows = await (await conn.execute(sql, params)).fetchall()
        except BaseException:  # broken, or cancelled mid-statement: never reused
            if conn is not None:
                conn.pgconn.finish()
            self._release(None)
            raise
        self._release(conn)
        return rows

    async def _acquire(self) -> tuple[bool, psycopg.AsyncConnection | None]:
        """(True, an idle connection or None: open one), or (False, None) when none came in time."""
        with self._lock:
            if self._idle:
                return True, self._idle.pop()
            if self._open < self.size:
                self._open += 1
                return True, None
            if self.wait <= 0:
                return False, None
            loop = asyncio.get_running_loop()
            handed: asyncio.Future = loop.create_future()
            self._waiters.append((loop, handed))
        try:
            async with asyncio.timeout(self.wait):
                return True, await handed
        except TimeoutError:
            if handed.done() and not handed.cancelled():  # handed over as the wait ran out
                return True, handed.result()
            return False, None

    def _release(self, conn: psycopg.AsyncConnection | None) -> None:
        """Give ``conn`` (None: the place of a closed one) to the first caller still waiting,
        else back to the idle ones. A caller on this thread's loop (a server process has one)
        is handed it at once; one on another loop through that loop."""
        try:
            here: asyncio.AbstractEventLoop | None = asyncio.get_running_loop()
        except RuntimeError:
            here = None
        with self._lock:
            while self._waiters:
                loop, handed = self._waiters.popleft()
                if handed.done():
                    continue
                if loop is here:  # nothing else can settle it meanwhile: this thread runs its loop
                    handed.set_result(conn)
                    return
                try:
                    loop.call_soon_threadsafe(self._hand, handed, conn)
                    return
                except RuntimeError:  # that caller's loop has closed
                    continue
            if conn is None:
                self._open -= 1
            else:
                self._idle.append(conn)

    def _hand(self, handed: asyncio.Future, conn: psycopg.AsyncConnection | None) -> None:
        """On the waiting caller's loop: its connection, unless it stopped waiting meanwhile."""
        if handed.done():
            self._release(conn)
        else:
            handed.set_result(conn)

    def close(self) -> None:
        """Close the idle connections (one in use is closed when its statement returns)."""
        with self._lock:
            idle, self._idle = self._idle, []
            self._open -= len(idle)
        for conn in idle:
            conn.pgconn.finish()


def _connection_params() -> dict[str, Any]:
    """Django's parameters for the default database (the test database under tests), less the
    two that only its own synchronous connections take."""
    params = connections["default"].get_connection_params()
    params.pop("cursor_factory", None)
    params.pop("context", None)
    params.setdefault("connect_timeout", 3)  # seconds: a database away fails the tick, which retries
    return params


TICK_CONNECTIONS = TickConnections(settings.TICK_DB_CONNECTIONS)
