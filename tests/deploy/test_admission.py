"""``config.admission``: uvicorn (in this test's event loop, on a free port) serving a small ASGI
app through the paced protocols, reached by real HTTP and websocket clients. The app counts the
requests it is handling at once: admission keeps that at ``MAX_IN_FLIGHT``, where uvicorn's
stock protocols let a burst in all at once."""

from __future__ import annotations

import asyncio
import contextlib
import gc
import time
from collections.abc import AsyncIterator

import pytest
import uvicorn
import websockets
from uvicorn.protocols.http.httptools_impl import HttpToolsProtocol
from websockets.datastructures import Headers

from config import admission
from tools.launcher import free_port

BURST = 20


class CountingApp:
    """Answers ``/`` after 20 ms and ``/slow`` when ``release`` is set; a websocket is accepted
    after 20 ms and sent ``hello``. ``peak``: most requests and handshakes handled at once."""

    def __init__(self) -> None:
        self.active = self.peak = 0
        self.paths: list[str] = []
        self.release = asyncio.Event()

    async def handle(self, slow: bool) -> None:
        self.active += 1
        self.peak = max(self.peak, self.active)
        try:
            await (self.release.wait() if slow else asyncio.sleep(0.02))
        finally:
            self.active -= 1

    async def __call__(self, scope, receive, send) -> None:
        self.paths.append(scope["path"])
        if scope["type"] == "http":
            await self.handle(scope["path"] == "/slow")
            body = b"ok " + scope["path"].encode()
            headers = [(b"content-length", str(len(body)).encode())]
            await send({"type": "http.response.start", "status": 200, "headers": headers})
            await send({"type": "http.response.body", "body": body})
        elif scope["type"] == "websocket":
            await receive()  # websocket.connect
            await self.handle(False)
            await send({"type": "websocket.accept"})
            await send({"type": "websocket.send", "text": "hello"})
            while (await receive())["type"] != "websocket.disconnect":
                pass


@contextlib.asynccontextmanager
async def serving(app: CountingApp, paced: bool = True) -> AsyncIterator[int]:
    """uvicorn serving ``app`` on a free port of 127.0.0.1 until the block ends: the port."""
    port = free_port()
    config = uvicorn.Config(
        app, host="127.0.0.1", port=port, lifespan="off", log_level="warning",
        http=admission.PacedHttpToolsProtocol if paced else HttpToolsProtocol,
        ws=admission.PacedWebSocketsSansIOProtocol if paced else "websockets-sansio",
    )  # fmt: skip
    server = uvicorn.Server(config)
    task = asyncio.create_task(server.serve())
    while not server.started:
        await asyncio.sleep(0.01)
    try:
        yield port
    finally:
        server.should_exit = True
        await task


async def get(port: int, path: str = "/") -> str:
    """The body of ``GET path`` over a fresh connection."""
    reader, writer = await asyncio.open_connection("127.0.0.1", port)
    writer.write(f"GET {path} HTTP/1.1\r\nHost: test\r\nConnection: close\r\n\r\n".encode())
    response = await reader.read()
    writer.close()
    return response.split(b"\r\n\r\n", 1)[1].decode()


async def hold_every_slot(app: CountingApp, port: int) -> list[asyncio.Task[str]]:
    """``MAX_IN_FLIGHT`` requests for ``/slow``, returned once the app handles them all."""
    slow = [asyncio.create_task(get(port, "/slow")) for _ in range(admission.MAX_IN_FLIGHT)]
    while app.active < admission.MAX_IN_FLIGHT:
        await asyncio.sleep(0.01)
    return slow


async def test_a_burst_of_requests_is_answered_in_full_a_few_at_a_time():
    app = CountingApp()
    async with serving(app) as port:
        bodies = await asyncio.gather(*(get(port) for _ in range(BURST)))
    assert bodies == ["ok /"] * BURST
    assert app.peak == admission.MAX_IN_FLIGHT

    stock = CountingApp()  # the same burst through uvicorn's own protocol: all in at once
    async with serving(stock, paced=False) as port:
        await asyncio.gather(*(get(port) for _ in range(BURST)))
    assert stock.peak > admission.MAX_IN_FLIGHT


async def test_a_burst_of_websockets_is_handshaken_a_few_at_a_time_and_each_gets_its_frame():
    app = CountingApp()
    async with serving(app) as port:

        async def first_frame() -> str:
            async with websockets.connect(f"ws://127.0.0.1:{port}/ws/") as ws:
                return str(await ws.recv())

        frames = await asyncio.gather(*(first_frame() for _ in range(BURST)))
    assert frames == ["hello"] * BURST
    assert app.peak == admission.MAX_IN_FLIGHT


async def test_slow_requests_stop_holding_the_door_after_the_in_flight_limit(monkeypatch):
    monkeypatch.setattr(admission, "IN_FLIGHT_MAX_S", 0.3)
    app = CountingApp()
    async with serving(app) as port:
        slow = await hold_every_slot(app, port)
        # Sent whole while the slow ones hold every slot: held, then parsed at its turn.
        assert await asyncio.wait_for(get(port, "/after"), timeout=5) == "ok /after"
        assert not any(task.done() for task in slow)
        app.release.set()
        assert await asyncio.gather(*slow) == ["ok /slow"] * admission.MAX_IN_FLIGHT


async def test_a_connection_closed_while_waiting_is_skipped_and_never_reaches_the_app(monkeypatch):
    monkeypatch.setattr(admission, "IN_FLIGHT_MAX_S", 60.0)
    app = CountingApp()
    async with serving(app) as port:
        slow = await hold_every_slot(app, port)
        _, writer = await asyncio.open_connection("127.0.0.1", port)
        writer.write(b"GET /gone HTTP/1.1\r\nHost: test\r\n\r\n")
        await writer.drain()
        writer.close()
        await writer.wait_closed()
        waiting = asyncio.create_task(get(port, "/next"))
        await asyncio.sleep(0.2)
        assert not waiting.done()  # every slot still held
        app.release.set()
        assert await asyncio.wait_for(waiting, timeout=5) == "ok /next"
        await asyncio.gather(*slow)
    assert "/gone" not in app.paths


@pytest.mark.parametrize("late", [False, True])
async def test_a_turn_that_comes_late_admits_nobody_and_the_next_one_does(late):
    """The words-first rule, on one queue: a connection waits; the loop is held (this test
    sleeps without yielding) past the turn's budget before the turn runs."""
    loop = asyncio.get_running_loop()
    server = await asyncio.start_server(lambda reader, writer: None, "127.0.0.1", 0)
    _, writer = await asyncio.open_connection(*server.sockets[0].getsockname()[:2])
    admitted: list[float] = []

    class Held:  # what a turn uses of a waiting connection: its transport, and admit()
        transport = writer.transport

        def admit(self) -> None:
            admitted.append(loop.time())

    gate = admission.Admission(loop)
    gate.add(Held())  # type: ignore[arg-type]
    if late:
        time.sleep(3 * admission.LAG_BUDGET_S)
    await asyncio.sleep(0)  # the turn runs (it was scheduled first)
    assert len(admitted) == (0 if late else 1)
    for _ in range(100):
        if admitted:
            break
        await asyncio.sleep(admission.BACKOFF_S)
    assert len(admitted) == 1 and gate.in_flight == {writer.transport}
    writer.close()
    server.close()


def alive(cls: type) -> list:
    """The instances of ``cls`` the cyclic collector tracks: alive, or cyclic garbage."""
    return [o for o in gc.get_objects() if type(o) is cls]


async def test_an_upgraded_connection_keeps_no_handshake_and_leaves_no_cycle():
    """What an open websocket keeps, every full collection walks; what a closed one leaves in
    a cycle waits for one. With the collector off: the accepted connection no longer holds
    the handshake's headers, and once closed neither its HTTP protocol nor its websocket
    protocol is left."""
    app = CountingApp()
    async with serving(app) as port:
        gc.collect()
        gc.disable()
        try:
            async with websockets.connect(f"ws://127.0.0.1:{port}/ws/") as ws:
                assert await ws.recv() == "hello"
                [protocol] = alive(admission.PacedWebSocketsSansIOProtocol)
                assert protocol.response is None
                # Nor the request's: the only headers left are this client's own.
                ours = {id(ws.request.headers), id(ws.response.headers)}
                assert [h for h in alive(Headers) if h and id(h) not in ours] == []
                del protocol
            for _ in range(50):  # the server sees the close
                if not alive(admission.PacedWebSocketsSansIOProtocol):
                    break
                await asyncio.sleep(0.1)
            assert alive(admission.PacedHttpToolsProtocol) == []
            assert alive(admission.PacedWebSocketsSansIOProtocol) == []
        finally:
            gc.enable()
