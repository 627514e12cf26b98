"""Joining a room after Redis restarted: a live server, a match whose room has clients, Redis
stopped and started again on the same port. The next client to join must get its snapshot —
Redis answers — and only while Redis is really down is a join refused ``unavailable``.

The room checks that Redis answers with a PING on a Redis client it keeps; its pooled
connection dies with the Redis it was made to. When the server's event loop has seen that
connection closed, redis-py replaces it before the PING; when the restart was not seen — Redis
behind a relay or on a host that vanished without closing its sockets, where the process learns
it only when it writes and gets a reset — the one failed PING refused the first newcomer, every
time. :class:`SilentRelay` stands between the server and Redis to make a restart of that kind.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import socket
import struct
import threading
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
import websockets

from tests.faults.clients import open_ws
from tests.faults.conftest import Bystander, Served
from tools import launcher
from tools.databases import scratch_database

ROUNDS = 3  # restarts: each must let the next newcomer in


class SilentRelay:
    """A TCP relay from a port of its own to a Redis port, on a thread of its own. ``forget()``
    drops every upstream connection without telling the client side (no FIN): a client that
    writes on such a connection later gets a TCP reset, as a restarted host answers a segment
    of a connection it does not know."""

    def __init__(self) -> None:
        self.upstream_port: int | None = None  # set before the first client connects
        self.port = launcher.free_port()
        self.url = f"redis://127.0.0.1:{self.port}/0"
        self.loop = asyncio.new_event_loop()
        self._pairs: set[tuple[asyncio.StreamWriter, asyncio.StreamWriter]] = set()
        self._forgotten: set[asyncio.StreamWriter] = set()  # client sides whose upstream was dropped
        self._thread = threading.Thread(target=self.loop.run_forever, daemon=True)

    def __enter__(self) -> SilentRelay:
        self._thread.start()
        self._server = asyncio.run_coroutine_threadsafe(
            asyncio.start_server(self._serve, "127.0.0.1", self.port), self.loop
        ).result(10)
        return self

    def __exit__(self, *exc: object) -> None:
        async def shut() -> None:
            self._server.close()
            for client, upstream in list(self._pairs):
                client.transport.abort()
                upstream.transport.abort()

        asyncio.run_coroutine_threadsafe(shut(), self.loop).result(10)
        self.loop.call_soon_threadsafe(self.loop.stop)
        self._thread.join(10)

    def forget(self) -> None:
        """Drop every upstream connection; the clients are not told."""

        async def drop() -> None:
            for client, upstream in list(self._pairs):
                self._forgotten.add(client)
                upstream.transport.abort()

        asyncio.run_coroutine_threadsafe(drop(), self.loop).result(10)

    async def _serve(self, reader: asyncio.StreamReader, client: asyncio.StreamWriter) -> None:
        try:
            up_reader, upstream = await asyncio.open_connection("127.0.0.1", self.upstream_port)
        except OSError:
            self._reset(client)
            return
        pair = (client, upstream)
        self._pairs.add(pair)
        try:
            await asyncio.gather(self._pump(reader, upstream, client), self._pump(up_reader, client, client))
        finally:
            self._pairs.discard(pair)
            upstream.transport.abort()

    async def _pump(
        self, reader: asyncio.StreamReader, to: asyncio.StreamWriter, client: asyncio.StreamWriter
    ) -> None:
        with contextlib.suppress(OSError):
            while data := await reader.read(65536):
                if client in self._forgotten:
                    self._reset(client)  # a segment of a connection the new Redis never had
                    return
                to.write(data)
                await to.drain()
        if client not in self._forgotten:  # an ordinary close is passed on
            to.close()

    def _reset(self, client: asyncio.StreamWriter) -> None:
        sock = client.transport.get_extra_info("socket")
        if sock is not None:
            with contextlib.suppress(OSError):
                sock.setsockopt(socket.SOL_SOCKET, socket.SO_LINGER, struct.pack("ii", 1, 0))
        client.transport.abort()
        self._forgotten.discard(client)


async def join(url: str) -> tuple[dict[str, Any], int | None]:
    """A new connection's first frame, and its close code if the server closes it right after
    (None: still open 2 s later)."""
    ws = await open_ws(url)
    try:
        first = json.loads(await asyncio.wait_for(ws.recv(), 15))
        try:
            await asyncio.wait_for(ws.recv(), 2)
        except websockets.ConnectionClosed as exc:
            return first, exc.rcvd.code if exc.rcvd else None
        except TimeoutError:
            pass
        return first, None
    finally:
        await ws.close()


async def _restarts(srv: Served, m: dict[str, Any], relay: SilentRelay | None) -> dict[str, Any]:
    url = srv.ws_url(m["code"], "watch")
    watcher = await Bystander(url).start()
    # A second client into the existing room: the room checks that Redis answers, so the
    # process now holds a Redis connection for that check.
    before, _ = await join(url)
    joins = []
    for _ in range(ROUNDS):
        if relay is not None:
            await asyncio.to_thread(relay.forget)
        await asyncio.to_thread(srv.stop_redis)
        await asyncio.to_thread(srv.start_redis)  # returns once the port accepts connections
        joins.append(await join(url))
    if relay is not None:
        await asyncio.to_thread(relay.forget)
    await asyncio.to_thread(srv.stop_redis)
    refused = await join(url)
    await asyncio.to_thread(srv.start_redis)
    after, _ = await join(url)
    await watcher.close()
    return {"before": before, "joins": joins, "refused": refused, "after": after, "watcher": watcher}


@pytest.fixture
def relayed_serve(tmp_path: Path, redis_url: str) -> Iterator[tuple[Served, SilentRelay]]:
    """A started :class:`Served` with a private Redis that its server and worker reach through
    a :class:`SilentRelay`: ``(served, relay)``."""
    with scratch_database(tmp_path) as db_url, SilentRelay() as relay:
        served = Served(tmp_path / "serve", db_url, redis_url, private_redis=True)
        relay.upstream_port = served.redis_port
        served.env["REDIS_URL"] = relay.url  # the server and worker go through the relay
        try:
            yield served.start(), relay
        finally:
            served.close()


def _check(out: dict[str, Any]) -> None:
    assert out["before"]["type"] == "snapshot"
    # Every first newcomer after a restart got in (no error frame, no close 1011).
    assert [(first["type"], code) for first, code in out["joins"]] == [("snapshot", None)] * ROUNDS, out[
        "joins"
    ]
    # With Redis down, a join is refused as before: an error frame, then close 1011.
    first, code = out["refused"]
    assert (first.get("type"), first.get("code"), code) == ("error", "unavailable", 1011), out["refused"]
    assert out["after"]["type"] == "snapshot"
    # The client that stayed was never dropped.
    assert len(out["watcher"].connects) == 1


def test_the_first_join_after_a_redis_restart_gets_its_snapshot(serve):
    srv = serve(private_redis=True)
    m = srv.create_match(tossups=1)
    _check(asyncio.run(_restarts(srv, m, None)))


def test_the_first_join_after_a_restart_the_server_did_not_see_gets_its_snapshot(relayed_serve):
    srv, relay = relayed_serve
    m = srv.create_match(tossups=1)
    _check(asyncio.run(_restarts(srv, m, relay)))
