"""A scripted fake Tossup server for bot tests: real websockets on 127.0.0.1, frames per docs/PROTOCOL.md."""

from __future__ import annotations

import asyncio
import contextlib
import json
import time
from collections.abc import Awaitable, Callable
from typing import Any, TypeVar

from websockets.asyncio.server import ServerConnection, serve
from websockets.exceptions import ConnectionClosed

ME, MY_TEAM, THEM, THEIR_TEAM = 7, 2, 9, 3
TIMEOUT = 5.0
T = TypeVar("T")


class Session:
    """The server side of one bot connection: sends frames, collects the bot's frames."""

    def __init__(self, ws: ServerConnection) -> None:
        self.ws = ws
        self.seq = 0
        self.frames: list[dict[str, Any]] = []  # everything the bot sent except pings
        self.pings = 0
        self.heartbeat_acks: list[float] = []  # server_time echoed by each heartbeat_ack
        self.inbox: asyncio.Queue[dict[str, Any]] = asyncio.Queue()
        self.granted: set[Any] = set()  # question ids on which the bot's buzz was announced

    async def pump(self) -> None:
        async for message in self.ws:
            frame = json.loads(message)
            if frame["type"] == "ping":
                assert isinstance(frame["client_time"], float)
                self.pings += 1
                continue
            if frame["type"] == "heartbeat_ack":
                self.heartbeat_acks.append(frame["server_time"])
                continue
            if frame["type"] == "answer":
                assert frame["question_id"] in self.granted, f"answer before its buzz was granted: {frame}"
            self.frames.append(frame)
            await self.inbox.put(frame)

    async def event(self, name: str, **data: Any) -> None:
        self.seq += 1
        if name == "buzz" and data["player_id"] == ME:
            self.granted.add(data["question_id"])
        await self.ws.send(json.dumps({"type": "event", "seq": self.seq, "event": name, "data": data}))

    async def heartbeat(self, seq: int | None = None) -> float:
        """Send a heartbeat naming ``seq`` (default: the last seq sent); returns its server_time."""
        now = time.time()
        await self.ws.send(
            json.dumps({"type": "heartbeat", "server_time": now, "seq": self.seq if seq is None else seq})
        )
        return now

    async def words(self, qid: int, start: int, *words: str) -> None:
        await self.event("words", question_id=qid, start=start, words=list(words), revealed_at=time.time())

    async def expect(self, kind: str) -> dict[str, Any]:
        frame = await asyncio.wait_for(self.inbox.get(), TIMEOUT)
        assert frame["type"] == kind, frame
        return frame

    async def quiet(self, seconds: float = 0.2) -> None:
        """Assert the bot sends nothing (but pings) for a while."""
        await asyncio.sleep(seconds)
        assert self.inbox.empty(), self.inbox.get_nowait()


async def until(condition: Callable[[], bool]) -> None:
    deadline = time.monotonic() + TIMEOUT
    while not condition():
        assert time.monotonic() < deadline, "condition not reached"
        await asyncio.sleep(0.005)


async def play(
    script: Callable[[Session], Awaitable[None]] | list[Callable[[Session], Awaitable[None]]],
    bot: Callable[[str], Awaitable[T]],
    sessions: list[Session] | None = None,
) -> tuple[T, Session]:
    """Serve each connection with ``script`` (or the next of a list of scripts, one per
    connection: reconnections) while ``bot(url)`` plays; return (bot result, first session).
    ``sessions``, when given, collects every connection's session."""
    sessions = [] if sessions is None else sessions
    scripts = script if isinstance(script, list) else [script]
    failures: list[BaseException] = []

    async def handler(ws: ServerConnection) -> None:
        session = Session(ws)
        sessions.append(session)
        script = scripts[min(len(sessions), len(scripts)) - 1]
        pump = asyncio.create_task(session.pump())
        try:
            await script(session)
            with contextlib.suppress(ConnectionClosed):  # e.g. the script closed it with 1011
                await asyncio.wait_for(pump, TIMEOUT)  # ends when the socket closes
        except BaseException as exc:  # re-raised in the test, not lost in the server's log
            failures.append(exc)
            raise

    async with serve(handler, "127.0.0.1", 0, compression=None) as server:
        port = server.sockets[0].getsockname()[1]
        url = f"ws://127.0.0.1:{port}/ws/match/ABC123/play/?token=t"
        result = await asyncio.wait_for(bot(url), TIMEOUT * 4)
    if failures:
        raise failures[0]
    return result, sessions[0]


def snapshot(tossup: dict[str, Any] | None = None, seq: int = 0, status: str = "running") -> str:
    # The phase as the server's view gives it: a granted buzz is being answered.
    phase = "ended" if status == "ended" else "answering" if tossup and tossup.get("buzz") else "reading"
    state = {
        "status": status,
        "phase": phase,
        "you": {"player_id": ME, "team_id": MY_TEAM},
        "tossup": tossup,
        "bonus": None,
    }
    return json.dumps({"type": "snapshot", "seq": seq, "state": state})
