"""The live path does not queue behind connecting clients: their authentication and
snapshots run on a thread pool of their own (buzzer.dbpools.connect_db), ticks, buzzes and
commands on another (live_db). Before, every database call of the process shared asgiref's
one thread, so a burst of connecting clients delayed every match's words and buzzes."""

from __future__ import annotations

import asyncio
import json
import threading
import time

import pytest
from channels.testing import WebsocketCommunicator
from django.conf import settings

from buzzer import consumers
from config.asgi import application
from tests.buzzer.test_consumers import connect, is_event, new_match, recv, until

pytestmark = pytest.mark.django_db(transaction=True)


async def test_a_command_is_applied_and_words_flow_while_connecting_clients_are_stuck(monkeypatch):
    match = await new_match()
    moderator = await connect(match, "moderate", match.moderator_token)
    await recv(moderator)  # the snapshot
    stuck = threading.Event()
    release = threading.Event()
    real = consumers._authenticate

    def slow_authenticate(*args):
        stuck.set()
        release.wait(10)  # bounded: the test releases it at the end either way
        return real(*args)

    monkeypatch.setattr(consumers, "_authenticate", slow_authenticate)
    # More connecting clients than connect threads: every one of them is busy, more queue.
    waiting = [
        WebsocketCommunicator(application, f"/ws/match/{match.join_code}/watch/")
        for _ in range(settings.CONNECT_DB_THREADS + 2)
    ]
    connecting = [asyncio.create_task(c.connect(timeout=15)) for c in waiting]
    try:
        assert await asyncio.to_thread(stuck.wait, 5)
        t0 = time.monotonic()
        await moderator.send_to(text_data=json.dumps({"type": "command", "name": "start", "ref": 1}))
        ack, _ = await until(moderator, lambda f: f["type"] in ("ack", "error"), timeout=5)
        assert ack["type"] == "ack"
        # The reading driver's ticks go on too: the first words arrive while they wait.
        await until(moderator, is_event("words"), timeout=5)
        assert time.monotonic() - t0 < 2.0
        assert not any(task.done() for task in connecting)  # they really were still waiting
    finally:
        release.set()
        await asyncio.gather(*connecting, return_exceptions=True)
    # Released, every waiting client is let in and gets its snapshot.
    for comm in waiting:
        assert (await recv(comm))["type"] == "snapshot"
        await comm.disconnect()
    await moderator.disconnect()


async def test_a_pool_connection_killed_between_calls_costs_at_most_one_call(monkeypatch):
    """Pool threads health-check their connection at most every HEALTH_CHECK_S (not before
    every call: that was a round trip of every word). A connection killed in between fails
    the next call only; the call after it reconnects."""
    from concurrent.futures import ThreadPoolExecutor

    from asgiref.sync import sync_to_async
    from django.db import DatabaseError, connection

    from buzzer import dbpools

    if connection.vendor != "postgresql":
        pytest.skip("kills a server-side PostgreSQL backend")
    pool = ThreadPoolExecutor(max_workers=1)

    def backend_pid() -> int:
        with connection.cursor() as cursor:
            cursor.execute("SELECT pg_backend_pid()")
            return cursor.fetchone()[0]

    def kill(pid: int) -> None:
        with connection.cursor() as cursor:
            cursor.execute("SELECT pg_terminate_backend(%s)", [pid])

    call = dbpools.PoolCall(backend_pid, thread_sensitive=False, executor=pool)
    try:
        first = await call()
        assert await call() == first  # the connection persists between calls
        await sync_to_async(kill)(first)
        with pytest.raises(DatabaseError):
            await call()  # used less than HEALTH_CHECK_S ago: not re-checked, so it fails
        second = await call()  # closed after the failure, a new one is opened
        assert second != first
        # Past HEALTH_CHECK_S the check runs before the call: a killed connection costs nothing.
        monkeypatch.setattr(dbpools, "HEALTH_CHECK_S", 0.0)
        await sync_to_async(kill)(second)
        assert await call() not in (first, second)
    finally:
        await asyncio.get_running_loop().run_in_executor(pool, dbpools.connections.close_all)
        pool.shutdown()


async def test_frames_are_answered_while_asgirefs_thread_sensitive_thread_is_busy():
    """Channels' consumers hop to asgiref's one thread-sensitive thread before every message
    (to close stale connections); this consumer's database work runs on its own pools, so a
    connection, a command and its words must not wait for that thread (anything else of the
    process may hold it)."""
    from asgiref.sync import sync_to_async

    match = await new_match()
    release = threading.Event()
    busy = asyncio.create_task(sync_to_async(release.wait, thread_sensitive=True)(10))
    try:
        moderator = await connect(match, "moderate", match.moderator_token)
        assert (await recv(moderator))["type"] == "snapshot"
        await moderator.send_to(text_data=json.dumps({"type": "command", "name": "start", "ref": 1}))
        ack, _ = await until(moderator, lambda f: f["type"] in ("ack", "error"), timeout=3)
        assert ack["type"] == "ack"
        await until(moderator, is_event("words"), timeout=3)
        assert not busy.done()  # the thread really was held all along
    finally:
        release.set()
        await busy
    await moderator.disconnect()
