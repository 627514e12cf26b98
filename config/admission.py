"""The protocols uvicorn serves Tossup with: its httptools and sans-I/O websockets protocols,
with new connections admitted one at a time, only while the event loop keeps time.

A room of tablets connects at once. uvicorn reads every connection as soon as it is accepted,
and a burst of handshakes (HTTP parsing, the websocket upgrade, the consumer's connect and
snapshot) takes the loop and the GIL from every match: the drivers' timers fire only between
loop iterations, and their ticks' threads wait for the GIL. Here what a new connection sends is
held, not parsed, until its turn. A connection is *in flight* from its turn until
it has answered (an HTTP response complete; a websocket's first frame or close), closed, or
spent :data:`IN_FLIGHT_MAX_S` in flight (slow requests cannot shut the door). A turn comes at
most once per loop iteration, only while fewer than :data:`MAX_IN_FLIGHT` connections are in
flight, and only if the turn itself came on time: while the loop runs late the waiting
connections wait and the words go first. On an idle server a turn comes at once.

    uvicorn config.asgi:application --http config.admission:PacedHttpToolsProtocol \\
        --ws config.admission:PacedWebSocketsSansIOProtocol
"""

from __future__ import annotations

import asyncio
from collections import deque
from typing import Any

from uvicorn.protocols.http.httptools_impl import HttpToolsProtocol
from uvicorn.protocols.websockets.websockets_sansio_impl import WebSocketsSansIOProtocol

# Connections between their turn and their first answer. With 100 matches playing and 1,000
# clients connecting (tools.bench_live --matches 100), words' p99 lateness was 26-56 ms with 1,
# 59-137 ms with 4 (the burst connected in 22-24 s against 9-19 s).
MAX_IN_FLIGHT = 1
IN_FLIGHT_MAX_S = 1.0  # a connection slower to answer (a long export) stops counting then
LAG_BUDGET_S = 0.005  # a turn later than this: the loop is behind, nothing is admitted
BACKOFF_S = 0.005  # and the next turn comes this much later
HELD_MAX_BYTES = 65536  # held per waiting connection (a handshake is a few hundred bytes)


class Admission:
    """The held connections of one event loop, admitted in turns, first come first served."""

    def __init__(self, loop: asyncio.AbstractEventLoop) -> None:
        self.loop = loop
        self.waiting: deque[PacedHttpToolsProtocol] = deque()
        self.in_flight: set[asyncio.BaseTransport] = set()
        self.due: float | None = None  # loop time the next turn is due; None: none scheduled

    def add(self, protocol: PacedHttpToolsProtocol) -> None:
        """Hold a new connection until its turn."""
        self.waiting.append(protocol)
        self._next_turn(0.0)

    def settled(self, transport: asyncio.BaseTransport) -> None:
        """``transport`` has answered or closed: it no longer counts as in flight."""
        if transport in self.in_flight:
            self.in_flight.discard(transport)
            self._next_turn(0.0)

    def _next_turn(self, delay: float) -> None:
        if self.due is not None or not self.waiting or len(self.in_flight) >= MAX_IN_FLIGHT:
            return
        self.due = self.loop.time() + delay
        if delay:
            self.loop.call_later(delay, self.turn)
        else:  # runs in the next iteration
            self.loop.call_soon(self.turn)

    def turn(self) -> None:
        """Admit the first waiting connection still open, unless this turn came late."""
        assert self.due is not None
        late = self.loop.time() - self.due > LAG_BUDGET_S
        self.due = None
        if late:
            self._next_turn(BACKOFF_S)
            return
        self.in_flight = {t for t in self.in_flight if not t.is_closing()}
        while self.waiting:
            protocol = self.waiting.popleft()
            if not protocol.transport.is_closing():
                self.in_flight.add(protocol.transport)
                self.loop.call_later(IN_FLIGHT_MAX_S, self.settled, protocol.transport)
                protocol.admit()
                break
        self._next_turn(0.0)


_admission: Admission | None = None


def admission(loop: asyncio.AbstractEventLoop) -> Admission:
    """The admission queue of ``loop`` (one per process; a new loop gets a new queue)."""
    global _admission
    if _admission is None or _admission.loop is not loop:
        _admission = Admission(loop)
    return _admission


class PacedHttpToolsProtocol(HttpToolsProtocol):
    """uvicorn's httptools protocol whose connections are parsed only from their turn: what
    arrives before is held (past :data:`HELD_MAX_BYTES` the socket is paused)."""

    def connection_made(self, transport: asyncio.Transport) -> None:  # type: ignore[override]
        super().connection_made(transport)
        self.held: list[bytes] | None = []
        self.paused = False
        admission(self.loop).add(self)

    def data_received(self, data: bytes) -> None:
        if self.held is None:
            super().data_received(data)
            return
        # Still read (a client that gives up is seen closing, and skipped), up to a bound.
        self.held.append(data)
        if sum(map(len, self.held)) > HELD_MAX_BYTES and not self.paused:
            self.paused = True
            self.transport.pause_reading()

    def admit(self) -> None:
        """Its turn: read what was held, and the rest as it comes."""
        held, self.held = b"".join(self.held or ()), None
        if self.paused:
            self.paused = False
            self.transport.resume_reading()
        if held:
            super().data_received(held)

    def on_response_complete(self) -> None:
        admission(self.loop).settled(self.transport)
        super().on_response_complete()

    def handle_websocket_upgrade(self) -> None:
        super().handle_websocket_upgrade()
        # The parser holds this protocol's callbacks: a cycle, which uvicorn breaks on
        # connection_lost, but an upgraded connection is never lost here. A connection that
        # waited for admission is old enough to be freed only by a full collection otherwise.
        self.parser = None  # type: ignore[assignment]

    def connection_lost(self, exc: Exception | None) -> None:
        admission(self.loop).settled(self.transport)
        super().connection_lost(exc)


class PacedWebSocketsSansIOProtocol(WebSocketsSansIOProtocol):
    """uvicorn's sans-I/O websockets protocol, telling admission when the connection has
    answered (its first frame after the handshake, or a refusal) or closed."""

    answered = False

    async def send(self, message: Any) -> None:
        await super().send(message)
        # Once per connection: every later frame (each word of the match) skips this.
        if self.answered:
            return
        if message["type"] == "websocket.accept" and self.handshake_complete:
            # Nothing reads the handshake's request and response again (uvicorn copied the
            # request's headers into the scope), and a connection lives for a whole match:
            # every full collection would walk their headers. websockets' parser keeps the
            # request as a local of its generator, so its headers are emptied in place.
            self.request.headers.clear()
            self.request = self.response = None  # type: ignore[assignment]
        elif message["type"] in ("websocket.send", "websocket.close"):
            self.answered = True
            admission(self.loop).settled(self.transport)

    def connection_lost(self, exc: Exception | None) -> None:
        admission(self.loop).settled(self.transport)
        super().connection_lost(exc)
