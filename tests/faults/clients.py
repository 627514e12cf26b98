"""Client side of the fault-injection suite: real websocket clients on 127.0.0.1 that behave
like tablets on a bad network (churn, dropped TCP, a tablet that stops reading), like
cheats, and like a fuzzer built from the protocol's own schema (``buzzer.protocol``).

Everything here is bounded: every loop ends on a count or a deadline. Times are seconds
since the epoch on the machine's clock, which the server shares (all on 127.0.0.1), so a
frame's lateness is simply ``arrival − the server's reveal time``.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import math
import random
import socket
import struct
import time
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit

import websockets
from hypothesis import HealthCheck, Phase, given, seed, settings
from hypothesis import strategies as st
from websockets.asyncio.client import ClientConnection, connect

from buzzer import protocol
from competition.vocabulary import MODERATOR_VERDICTS, FlagProblem
from tests.faults.conftest import Frame

REPLY_TYPES = frozenset({"error", "ack", "pong", "snapshot"})  # a client frame's answer


def origin_for(url: str) -> str:
    """The ``Origin`` a browser page served by this server would send (the server checks it)."""
    parts = urlsplit(url)
    return f"http://{parts.netloc}"


async def open_ws(url: str, **kwargs: Any) -> ClientConnection:
    """A websocket with the server's own Origin, no client keepalive (the protocol's
    heartbeat is what this suite tests) and no compression (the server has none)."""
    kwargs.setdefault("origin", origin_for(url))
    kwargs.setdefault("ping_interval", None)
    kwargs.setdefault("compression", None)
    kwargs.setdefault("open_timeout", 15)
    kwargs.setdefault("max_size", 2**22)
    return await connect(url, **kwargs)


@dataclass
class Client:
    """One connection whose frames are all read (and timestamped) by a background task;
    heartbeats are answered at once, as the protocol asks of every client."""

    ws: ClientConnection
    frames: list[tuple[float, Frame]] = field(default_factory=list)
    closed: asyncio.Event = field(default_factory=asyncio.Event)
    _task: asyncio.Task | None = None
    _new: asyncio.Event = field(default_factory=asyncio.Event)

    @classmethod
    async def open(cls, url: str, **kwargs: Any) -> Client:
        client = cls(await open_ws(url, **kwargs))
        client._task = asyncio.create_task(client._read())
        return client

    async def _read(self) -> None:
        try:
            async for text in self.ws:
                frame = json.loads(text)
                self.frames.append((time.time(), frame))
                if frame.get("type") == "heartbeat":
                    await self.send({"type": "heartbeat_ack", "server_time": frame.get("server_time")})
                self._new.set()
        except websockets.ConnectionClosed:
            pass
        finally:
            self.closed.set()
            self._new.set()

    async def send(self, msg: Frame) -> None:
        await self.ws.send(json.dumps(msg))

    async def wait_for(self, pred: Callable[[Frame], bool], timeout: float = 20.0, after: int = 0) -> Frame:
        """The first frame (from index ``after``) matching ``pred``; TimeoutError if none comes."""
        async with asyncio.timeout(timeout):
            seen = after
            while True:
                for _, frame in self.frames[seen:]:
                    if pred(frame):
                        return frame
                seen = len(self.frames)
                if self.closed.is_set():
                    raise ConnectionError(f"closed ({self.ws.close_code}) before the frame came")
                self._new.clear()
                await self._new.wait()

    def events(self, name: str) -> list[Frame]:
        return [f for _, f in self.frames if f.get("type") == "event" and f.get("event") == name]

    async def close(self) -> None:
        with contextlib.suppress(Exception):
            await asyncio.wait_for(self.ws.close(), 5)
        if self._task is not None:
            self._task.cancel()
            with contextlib.suppress(BaseException):
                await self._task


# --- words as a bystander saw them -----------------------------------------------------------


@dataclass(frozen=True)
class WordDelivery:
    """Words of one tossup as received: ``indexes`` in arrival order, ``lateness`` (s) per
    ``words`` frame = arrival − the server's ``revealed_at`` for that batch."""

    indexes: list[int]
    lateness: list[float]

    @property
    def in_order_from_zero(self) -> bool:
        return self.indexes == list(range(len(self.indexes)))

    @property
    def max_lateness(self) -> float:
        return max(self.lateness, default=math.inf)


def word_delivery(frames: Iterable[tuple[float, Frame]], question_id: int) -> WordDelivery:
    indexes: list[int] = []
    lateness: list[float] = []
    for arrival, f in frames:
        if f.get("type") == "event" and f.get("event") == "words" and f["data"]["question_id"] == question_id:
            d = f["data"]
            indexes.extend(range(d["start"], d["start"] + len(d["words"])))
            lateness.append(arrival - d["revealed_at"])
    return WordDelivery(indexes, lateness)


# --- churn and a tablet that stops reading ----------------------------------------------------


@dataclass
class ChurnStats:
    connects: int = 0
    clean_closes: int = 0
    dropped: int = 0  # TCP closed or reset with no websocket close frame
    failed: list[str] = field(default_factory=list)  # connects that got no snapshot


def drop_tcp(ws: ClientConnection, reset: bool) -> None:
    """Vanish like a tablet losing Wi-Fi: no close frame; ``reset`` sends a TCP RST
    (SO_LINGER 0) instead of a FIN."""
    sock = ws.transport.get_extra_info("socket")
    if reset and sock is not None:
        with contextlib.suppress(OSError):
            sock.setsockopt(socket.SOL_SOCKET, socket.SO_LINGER, struct.pack("ii", 1, 0))
    ws.transport.abort()


async def churn_client(
    url: str, n: int, deadline: float, stats: ChurnStats, rng: random.Random, clean: bool
) -> None:
    """Connect, wait for the snapshot, stay 0.1–1.5 s, leave (cleanly or by dropping TCP);
    again until ``deadline``."""
    while time.time() < deadline:
        try:
            ws = await open_ws(url)
        except Exception as exc:
            stats.failed.append(f"{n}: connect {type(exc).__name__}: {exc}")
            await asyncio.sleep(0.2)
            continue
        stats.connects += 1
        try:
            first = json.loads(await asyncio.wait_for(ws.recv(), 10))
            if first.get("type") != "snapshot":
                stats.failed.append(f"{n}: first frame {first!r:.120}")
            await asyncio.sleep(rng.uniform(0.1, 1.5))
        except Exception as exc:
            stats.failed.append(f"{n}: {type(exc).__name__}: {exc}")
        if clean:
            with contextlib.suppress(Exception):
                await asyncio.wait_for(ws.close(), 5)
            stats.clean_closes += 1
        else:
            drop_tcp(ws, reset=rng.random() < 0.5)
            stats.dropped += 1


async def churn(url: str, clients: int, duration: float, seed_value: int = 7) -> ChurnStats:
    """``clients`` concurrent connect/leave loops for ``duration`` seconds, half leaving
    cleanly and half by dropping TCP."""
    stats = ChurnStats()
    deadline = time.time() + duration
    rng = random.Random(seed_value)
    await asyncio.gather(
        *(
            churn_client(url, i, deadline, stats, random.Random(rng.random()), i % 2 == 0)
            for i in range(clients)
        )
    )
    return stats


@dataclass
class SleepingTablet:
    """A connection that asks for snapshots (the largest frames) and never reads them: its
    kernel receive buffer is tiny and its transport is paused, so the server's sends to it
    back up as they would to a tablet whose screen went to sleep."""

    ws: ClientConnection
    requested: int = 0

    @classmethod
    async def open(cls, url: str) -> SleepingTablet:
        parts = urlsplit(url)
        sock = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
        sock.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, 4096)  # before connect: small window
        sock.setblocking(False)
        await asyncio.get_running_loop().sock_connect(sock, (parts.hostname, parts.port))
        ws = await open_ws(url, sock=sock, max_queue=1)
        ws.transport.pause_reading()
        return cls(ws)

    async def doze(self, deadline: float, rate: float = 15.0) -> None:
        """Request snapshots at ``rate``/s (under the rate limit) until ``deadline``."""
        while time.time() < deadline:
            try:
                await asyncio.wait_for(self.ws.send(json.dumps({"type": "resync", "after_seq": 0})), 2)
                self.requested += 1
            except Exception:
                return  # the server dropped it: exactly what it may do
            await asyncio.sleep(1 / rate)

    def queued_bytes(self) -> int:
        """Bytes sent toward this tablet and not read: its kernel receive queue plus the
        server socket's send queue (from /proc/net/tcp) — evidence that it really sleeps."""
        here, there = self.ws.local_address[1], self.ws.remote_address[1]
        total = 0
        with contextlib.suppress(OSError):
            for line in Path("/proc/net/tcp").read_text().splitlines()[1:]:
                cols = line.split()
                local, remote = (int(a.split(":")[1], 16) for a in cols[1:3])
                tx, rx = (int(q, 16) for q in cols[4].split(":"))
                if (local, remote) == (here, there):
                    total += rx
                elif (local, remote) == (there, here):
                    total += tx
        return total

    def drop(self) -> None:
        drop_tcp(self.ws, reset=True)


# --- fuzzed frames from the protocol's schema -----------------------------------------------

HUGE = 1.7e308
_scalars = st.one_of(
    st.none(),
    st.booleans(),
    st.integers(),
    st.integers(min_value=-(2**200), max_value=2**200),
    st.floats(allow_nan=True, allow_infinity=True),
    st.sampled_from([HUGE, -HUGE, math.inf, -math.inf, math.nan, 5e-324, 2**63, -(2**63) - 1]),
    st.text(max_size=40),
)


def _containers(inner: st.SearchStrategy[Any]) -> st.SearchStrategy[Any]:
    return st.one_of(st.lists(inner, max_size=4), st.dictionaries(st.text(max_size=8), inner, max_size=4))


# Any JSON value, hashable or not (lists and objects where a scalar is expected).
json_values = st.recursive(_scalars, _containers, max_leaves=6)


def _field_value(types: tuple[type, ...], avoid: frozenset[int]) -> st.SearchStrategy[Any]:
    """Values for a schema field of ``types``: mostly of the right type (so the frame gets past
    the type check and into the service/engine), sometimes anything at all."""
    if str in types:
        right: st.SearchStrategy[Any] = st.one_of(
            st.text(max_size=60), st.sampled_from([*FlagProblem, *MODERATOR_VERDICTS])
        )
    elif float in types:
        right = st.one_of(st.integers(), st.floats(allow_nan=True, allow_infinity=True), st.just(HUGE))
    else:  # ids, token indexes, parts: never this match's own ids (a fuzzer must not really play)
        right = st.one_of(st.integers(), st.integers(min_value=2**62, max_value=2**70)).filter(
            lambda v: v not in avoid
        )
    return st.one_of(right, right, right, json_values)


def frame_strategy(avoid: frozenset[int]) -> st.SearchStrategy[Any]:
    """One fuzzed frame as a JSON-ready value (usually an object): a message of every
    ``protocol.FRAMES`` type and every moderator ``protocol.COMMANDS`` name with its declared
    fields, hostile values and extra keys, or arbitrary JSON. ``avoid``: integers never used
    for schema int fields (the match's tossup/bonus/team/player ids)."""

    def message(kind: str, fields: dict[str, protocol.Field]) -> st.SearchStrategy[Any]:
        required = {name: _field_value(f.types, avoid) for name, f in fields.items() if f.required}
        extra = {
            "ref": json_values,
            **{name: _field_value(f.types, avoid) for name, f in fields.items() if not f.required},
            "client_time": _field_value((int, float), avoid),
            "command_id": json_values,
            "comment": json_values,
            "after_seq": json_values,
        }
        type_value = st.one_of(st.just(kind), st.just(kind), st.just(kind), json_values)
        optional = {k: v for k, v in extra.items() if k not in required}
        return st.fixed_dictionaries({"type": type_value, **required}, optional=optional)

    messages = [message(kind, spec.fields) for kind, spec in protocol.FRAMES.items()]
    # Moderator commands weigh as one message type (the fuzzers' roles may not send them).
    per_command = [
        message("command", spec.fields).map(lambda m, name=name: {**m, "name": name})
        for name, spec in protocol.COMMANDS.items()
    ]
    commands = st.one_of(*per_command).map(lambda m: m)  # map: one_of would flatten it
    unhashable_type = st.fixed_dictionaries(
        {
            "type": st.one_of(
                st.lists(json_values, max_size=3), st.dictionaries(st.text(max_size=5), json_values)
            )
        }
    )
    return st.one_of(*messages, commands, unhashable_type, json_values)


def encode(value: Any) -> str:
    """JSON text as a hostile client would send it (NaN/Infinity literals included)."""
    return json.dumps(value, allow_nan=True)


def generate_frames(n: int, seed_value: int, avoid: frozenset[int], batch: int = 25) -> list[str]:
    """``n`` fuzzed frames (JSON text), the same for the same seed: hypothesis draws batches
    of ``batch`` frames in its generate phase only (no shrinking, no example database)."""
    out: list[str] = []

    @seed(seed_value)
    @settings(
        max_examples=math.ceil(n / batch),
        phases=[Phase.generate],
        database=None,
        deadline=None,
        suppress_health_check=list(HealthCheck),
    )
    @given(st.lists(frame_strategy(avoid), min_size=batch, max_size=batch))
    def collect(frames: list[Any]) -> None:
        out.extend(encode(f) for f in frames)

    collect()
    if len(out) < n:  # hypothesis stops early only if it believes the space exhausted
        raise AssertionError(f"hypothesis generated {len(out)} frames, wanted {n}")
    return out[:n]


def hostile_frames() -> list[str]:
    """Hand-picked frames the issue saw silence a room, all within the protocol's 4,096
    characters: unhashable types, 1,500-deep nesting, non-finite and huge numbers."""
    deep = "[" * 1500 + "]" * 1500
    return [
        '{"type":[]}',
        '{"type":{}}',
        '{"type":[1,2]}',
        '{"type":"command","name":[]}',
        '{"type":"command","name":{}}',
        '{"type":"flag","question_id":1,"problem":[]}',
        deep,
        '{"type":"ping","client_time":' + deep + "}",
        '{"type":' + deep + "}",
        '{"type":"ping","ref":' + deep + ',"client_time":1}',
        '{"type":"ping","client_time":1.7e308}',
        '{"type":"ping","client_time":-1.7e308}',
        '{"type":"ping","client_time":1e309}',
        '{"type":"ping","client_time":NaN}',
        '{"type":"ping","client_time":Infinity}',
        '{"type":"ping","client_time":-Infinity}',
        '{"type":"ping","client_time":' + "9" * 4000 + "}",
        '{"type":"resync","after_seq":1e400}',
        '{"type":"buzz","question_id":' + "1" * 4000 + ',"token_index":0}',
        '{"type":"buzz","question_id":99999999,"token_index":' + "9" * 3000 + ',"client_time":1.7e308}',
        '{"type":"buzz","question_id":99999999,"token_index":0,"client_time":NaN}',
        '{"type":"answer","question_id":99999999,"text":"' + "é" * 4000 + '"}',
        '{"type":"ping","client_time":0,"ref":"\\ud800"}',
        "\ufeff{}",
        "",
        "null",
        "[]",
        '"type"',
        "{" * 3000,
    ]
