"""The per-process Room (one channel-layer subscription, local fan-out) and the reading
Driver's Redis lease, on the real Redis channel layer and a transactional database."""

from __future__ import annotations

import asyncio
import contextvars
import json
import time
from typing import Any

import pytest
import redis.asyncio as aioredis
from channels.db import database_sync_to_async
from channels.layers import get_channel_layer

from buzzer import driver as driving
from buzzer import rooms
from competition import game, services
from competition.models import Match, MatchEvent
from tests.support.factories import make_match

pytestmark = pytest.mark.django_db(transaction=True)

# Which simulated process applied a Tick: the driver's task copies this context at start,
# and database_sync_to_async carries it into the thread that calls the service.
DRIVER = contextvars.ContextVar[str]("DRIVER", default="?")


class FakeMember:
    """A local connection as the Room sees it: audiences and ``push``."""

    def __init__(self, *audiences: str):
        self.audiences = frozenset(audiences)
        self.frames: list[tuple[int, str]] = []

    async def push(self, seq: int, text: str) -> None:
        self.frames.append((seq, text))


@database_sync_to_async
def new_match(**kw: Any) -> Match:
    return make_match(**kw)


@database_sync_to_async
def start(match: Match) -> services.Applied:
    return services.apply_command(match_id=match.id, command=game.Start(), actor="moderator")


@database_sync_to_async
def words_events(match: Match) -> list[dict[str, Any]]:
    return [e.payload for e in MatchEvent.objects.filter(match=match, type="words").order_by("seq")]


async def eventually(pred, timeout: float = 5.0) -> None:
    async with asyncio.timeout(timeout):
        while not pred():
            await asyncio.sleep(0.02)


def assert_contiguous(words: list[dict[str, Any]]) -> None:
    """Each ``words`` event continues where the previous one stopped: no word twice, none skipped."""
    position = 0
    for w in words:
        assert w["start"] == position, words
        position += len(w["words"])


@pytest.fixture
def tick_log(monkeypatch) -> list[tuple[str, float]]:
    """Every Tick a driver applies, as (simulated process, wall time)."""
    log: list[tuple[str, float]] = []
    real = services.apply_command

    def spy(**kw: Any) -> services.Applied:
        if isinstance(kw.get("command"), game.Tick):
            log.append((DRIVER.get(), time.time()))
        return real(**kw)

    monkeypatch.setattr(services, "apply_command", spy)
    return log


async def start_driver(match: Match, name: str, monkeypatch) -> driving.Driver:
    monkeypatch.setattr(driving, "PROCESS_ID", name)
    token = DRIVER.set(name)
    driver = driving.Driver(match.id)
    driver.start()
    DRIVER.reset(token)
    return driver


async def lease_holder(redis: Any, match: Match) -> str | None:
    value = await redis.get(f"tossup:driver:{match.id}")
    return value.decode() if value else None


async def until_holder(redis: Any, match: Match, name: str, timeout: float = 5.0) -> None:
    async with asyncio.timeout(timeout):
        while await lease_holder(redis, match) != name:
            await asyncio.sleep(0.02)


async def test_only_the_lease_holder_ticks_and_another_process_takes_over_when_it_stops(
    monkeypatch, tick_log, redis_url
):
    match = await new_match(config={"wpm": 600}, words=60)  # 10 words/s for 6 s
    await start(match)
    redis = aioredis.from_url(redis_url)
    a = await start_driver(match, "process-a", monkeypatch)
    b = None
    try:
        await until_holder(redis, match, "process-a")
        b = await start_driver(match, "process-b", monkeypatch)
        await asyncio.sleep(1.5)  # B's lease attempts fail at least once meanwhile
        assert {who for who, _ in tick_log} == {"process-a"} and len(tick_log) >= 10
        assert await lease_holder(redis, match) == "process-a"

        await a.stop()
        stopped_at = time.time()
        read_by_a = sum(len(w["words"]) for w in await words_events(match))
        await eventually(lambda: any(who == "process-b" for who, _ in tick_log), timeout=5)
        taken_over = next(t for who, t in tick_log if who == "process-b")
        assert taken_over - stopped_at <= driving.LEASE_MS / 1000
        assert all(who == "process-a" for who, t in tick_log if t < stopped_at)
        assert all(who == "process-b" for who, t in tick_log if t > stopped_at)
        await asyncio.sleep(0.5)
        assert await lease_holder(redis, match) == "process-b"
    finally:
        await a.stop()
        if b is not None:
            await b.stop()
        await redis.aclose()
    words = await words_events(match)
    assert_contiguous(words)
    assert read_by_a >= 10 and sum(len(w["words"]) for w in words) > read_by_a  # B read on


async def test_a_crashed_holders_lease_expires_and_the_other_process_drives(monkeypatch, tick_log, redis_url):
    monkeypatch.setattr(driving, "LEASE_MS", 900)  # renewals every 0.3 s: a short test
    match = await new_match(config={"wpm": 600}, words=60)
    await start(match)
    redis = aioredis.from_url(redis_url)
    a = await start_driver(match, "process-a", monkeypatch)
    b = None
    try:
        await until_holder(redis, match, "process-a")
        b = await start_driver(match, "process-b", monkeypatch)
        await asyncio.sleep(0.5)
        assert a._task is not None
        a._task.cancel()  # the process dies: no clean release of the lease
        crashed_at = time.time()
        assert await lease_holder(redis, match) == "process-a"
        await eventually(lambda: any(who == "process-b" for who, _ in tick_log), timeout=5)
        taken_over = next(t for who, t in tick_log if who == "process-b")
        # Expiry of A's last renewal, plus at most one renewal interval of B's.
        assert taken_over - crashed_at <= 0.9 + 0.3 + 0.5  # + scheduling slack
        await asyncio.sleep(0.3)
    finally:
        await a.stop()
        if b is not None:
            await b.stop()
        await redis.aclose()
    assert_contiguous(await words_events(match))


async def test_a_room_delivers_each_event_once_to_the_members_allowed_to_see_it():
    match = await new_match(config={"wpm": 60})
    players = [FakeMember("all", f"player:{i}", "team:1") for i in range(40)]
    moderator = FakeMember("all", "moderator")
    watchers = [FakeMember("all") for _ in range(5)]
    members = [*players, moderator, *watchers]
    room = None
    try:
        for m in members:
            room = await rooms.Room.join(match.id, m)
        assert room is not None and rooms.Room.rooms[match.id] is room and room.members == set(members)

        applied = await start(match)  # published on commit through the channel layer
        await eventually(lambda: all(m.frames and m.frames[-1][0] >= applied.seq for m in members))
        by_seq = {e["seq"]: e for e in applied.events}
        tossup_answer = next(e["seq"] for e in applied.events if e["event"] == "tossup_answer")
        assert tossup_answer in [seq for seq, _ in moderator.frames]
        for m in [*players, *watchers]:
            assert tossup_answer not in [seq for seq, _ in m.frames]
            assert "Moby" not in "".join(text for _, text in m.frames)
        for seq, text in moderator.frames:
            if seq in by_seq:
                ev = by_seq[seq]
                assert json.loads(text) == {
                    "type": "event",
                    "seq": seq,
                    "event": ev["event"],
                    "data": ev["data"],
                }

        # Targeted events, sent as one channel-layer message: each reaches exactly its audience.
        head = applied.seq
        targeted = [
            {"seq": head + 1, "event": "buzz_lost", "data": {}, "audience": "player:7", "actor": "t"},
            {"seq": head + 2, "event": "race", "data": {}, "audience": "moderator", "actor": "t"},
            {"seq": head + 3, "event": "paused", "data": {}, "audience": "all", "actor": "t"},
        ]
        message = {"type": "match.events", "events": targeted, "next_deadline": None}
        await get_channel_layer().group_send(rooms.group_name(match.id), message)
        await eventually(lambda: all(m.frames[-1][0] == head + 3 for m in members))
        got = {id(m): [seq for seq, _ in m.frames if seq > head] for m in members}
        assert got[id(players[7])] == [head + 1, head + 3]
        assert got[id(moderator)] == [head + 2, head + 3]
        assert all(got[id(m)] == [head + 3] for m in [*players[:7], *players[8:], *watchers])

        # Serialised once: every member holds the very same frame string for an event.
        for seq in [*by_seq, head + 3]:
            texts = {id(text) for m in members for s, text in m.frames if s == seq}
            assert len(texts) <= 1, seq
    finally:
        for m in members:
            if room is not None:
                await room.leave(m)
    assert match.id not in rooms.Room.rooms


async def test_the_last_member_leaving_closes_the_room_and_releases_the_lease(redis_url):
    match = await new_match()
    first, second = FakeMember("all"), FakeMember("all")
    room = await rooms.Room.join(match.id, first)
    assert await rooms.Room.join(match.id, second) is room
    redis = aioredis.from_url(redis_url)
    try:
        key = f"tossup:driver:{match.id}"
        async with asyncio.timeout(5):
            while await redis.get(key) != room.driver.process_id.encode():
                await asyncio.sleep(0.02)
        await room.leave(first)
        assert rooms.Room.rooms[match.id] is room and not room._listener.done()
        await room.leave(second)
        assert match.id not in rooms.Room.rooms
        await asyncio.sleep(0)
        assert room._listener.cancelled() or room._listener.done()
        assert await redis.get(key) is None
        # A new member gets a fresh room.
        again = await rooms.Room.join(match.id, first)
        assert again is not room
        await again.leave(first)
    finally:
        await redis.aclose()


async def test_a_driver_that_was_away_resumes_the_reading_instead_of_dumping_the_overdue_words(monkeypatch):
    match = await new_match(config={"wpm": 600})  # a word every 0.1 s
    away = 5.0
    await database_sync_to_async(services.apply_command)(
        match_id=match.id, command=game.Start(), actor="moderator", now=time.time() - away
    )
    driver = await start_driver(match, "back", monkeypatch)
    try:
        await eventually(lambda: True, timeout=0.01)
        await asyncio.sleep(0.6)
    finally:
        await driver.stop()
    rows = await database_sync_to_async(
        lambda: list(
            MatchEvent.objects.filter(match=match).order_by("seq").values_list("type", "payload", "actor")
        )
    )()
    kinds = [k for k, _, _ in rows]
    assert "paused" in kinds and "resumed" in kinds
    resumed = next(p for k, p, _ in rows if k == "resumed")
    assert resumed["shift"] == pytest.approx(away, abs=0.5)
    assert {a for k, _, a in rows if k in ("paused", "resumed")} == {"driver"}
    # After the resume the words come one at a time at the reading speed, not 50 at once.
    after = [p for k, p, _ in rows[kinds.index("resumed") :] if k == "words"]
    assert after and max(len(p["words"]) for p in after) <= 2
    assert_contiguous([p for k, p, _ in rows if k == "words"])
