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
from competition import game, signals
from competition.live import rowcache, store, ticks
from competition.models import Match, MatchEvent
from competition.vocabulary import Role
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
def start(match: Match) -> store.Applied:
    return store.apply_command(match_id=match.id, command=game.Start(), actor="moderator")


@database_sync_to_async
def words_events(match: Match) -> list[dict[str, Any]]:
    return [e.payload for e in MatchEvent.objects.filter(match=match, event="words").order_by("seq")]


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
    real = ticks.tick_on_loop

    async def spy(match_id: int, execute: Any, **kw: Any) -> store.Applied | None:
        """Every Tick's first step."""
        log.append((DRIVER.get(), time.time()))
        return await real(match_id, execute, **kw)

    monkeypatch.setattr(ticks, "tick_on_loop", spy)
    return log


async def start_driver(match: Match, name: str, monkeypatch) -> driving.Driver:
    monkeypatch.setattr(driving, "PROCESS_ID", name)
    token = DRIVER.set(name)
    driver = driving.Driver(match.id)
    driver.start()
    DRIVER.reset(token)
    return driver


async def lease_holder(redis: Any, match: Match) -> str | None:
    value = await redis.get(driving.driver_key(match.id))
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
        key = driving.driver_key(match.id)
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
    await database_sync_to_async(store.apply_command)(
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
            MatchEvent.objects.filter(match=match).order_by("seq").values_list("event", "payload", "actor")
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


# --- isolation: no member can silence the room -----------------------------------------------


class ResyncingMember(FakeMember):
    """A member that also records resyncs and evictions (the consumer's side of the Room)."""

    def __init__(self, *audiences: str):
        super().__init__(*audiences)
        self.resyncs = 0
        self.evicted: int | None = None

    async def resync(self) -> None:
        self.resyncs += 1

    async def evict(self, code: int) -> None:
        self.evicted = code


class RaisingMember(ResyncingMember):
    async def push(self, seq: int, text: str) -> None:
        if seq >= 3:
            raise ConnectionResetError("peer gone")
        await super().push(seq, text)


class HangingMember(ResyncingMember):
    """A tablet that went to sleep mid-send: the send never completes."""

    async def push(self, seq: int, text: str) -> None:
        await asyncio.Event().wait()


class SlowMember(ResyncingMember):
    async def push(self, seq: int, text: str) -> None:
        await asyncio.sleep(0.05)
        await super().push(seq, text)


def words_message(seq: int) -> dict[str, Any]:
    event = {"seq": seq, "event": "words", "data": {"start": seq}, "audience": "all", "actor": "t"}
    return {"type": "match.events", "events": [event], "next_deadline": None}


async def test_failing_hanging_and_slow_members_are_dropped_and_the_others_get_every_frame(monkeypatch):
    monkeypatch.setattr(rooms, "SEND_TIMEOUT", 0.3)
    monkeypatch.setattr(rooms, "QUEUE_SIZE", 50)
    match = await new_match()
    good = [ResyncingMember("all") for _ in range(5)]
    raising, hanging, slow = RaisingMember("all"), HangingMember("all"), SlowMember("all")
    members = [*good, raising, hanging, slow]
    room = None
    layer = get_channel_layer()
    try:
        for m in members:
            room = await rooms.Room.join(match.id, m)
        assert room is not None
        room.driver.wake = lambda deadline: None  # type: ignore[method-assign] # no DB deadline here
        started = time.monotonic()
        for seq in range(1, 201):  # a burst: the slow member's queue (50) overflows
            await layer.group_send(rooms.group_name(match.id), words_message(seq))
        await eventually(lambda: all(len(m.frames) == 200 for m in good), timeout=10)
        delivered_in = time.monotonic() - started
        await eventually(lambda: room.members == set(good), timeout=5)
        await eventually(lambda: None not in (raising.evicted, hanging.evicted, slow.evicted), timeout=5)
    finally:
        for m in members:
            if room is not None:
                await room.leave(m)
    for m in good:
        assert [seq for seq, _ in m.frames] == list(range(1, 201))
    assert [seq for seq, _ in raising.frames] == [1, 2]
    assert (raising.evicted, hanging.evicted, slow.evicted) == (
        1011,
        rooms.SLOW_CONSUMER,
        rooms.SLOW_CONSUMER,
    )
    assert len(slow.frames) < 200 and room.dropped == 3
    print(f"\n200 frames to 5 good members beside 3 bad ones in {delivered_in:.2f} s")
    assert delivered_in < 5  # never waited on the hanging member's 0.3 s timeouts one after another


async def test_a_member_whose_send_hangs_is_dropped_after_the_send_timeout(monkeypatch):
    monkeypatch.setattr(rooms, "SEND_TIMEOUT", 0.3)
    match = await new_match()
    good, hanging = ResyncingMember("all"), HangingMember("all")
    room = await rooms.Room.join(match.id, good)
    await rooms.Room.join(match.id, hanging)
    room.driver.wake = lambda deadline: None  # type: ignore[method-assign]
    try:
        started = time.monotonic()
        for seq in (1, 2, 3):
            await get_channel_layer().group_send(rooms.group_name(match.id), words_message(seq))
        await eventually(lambda: hanging.evicted is not None, timeout=5)
        dropped_in = time.monotonic() - started
        await eventually(lambda: len(good.frames) == 3)
    finally:
        await room.leave(good)
        await room.leave(hanging)
    assert hanging.evicted == rooms.SLOW_CONSUMER and hanging not in room.members
    assert 0.3 <= dropped_in < 2 and [seq for seq, _ in good.frames] == [1, 2, 3]


class GatedMember(ResyncingMember):
    """A member whose sends wait while its gate is shut (a socket's write buffer full)."""

    def __init__(self, *audiences: str):
        super().__init__(*audiences)
        self.gate = asyncio.Event()

    async def push(self, seq: int, text: str) -> None:
        await self.gate.wait()
        await super().push(seq, text)


async def test_idle_members_get_a_frame_in_the_rooms_pass_and_a_send_that_waits_keeps_the_order():
    """A word costs no task per member: an idle member's send completes in the room's own pass;
    only a member whose send must wait gets a task, which sends what queued behind it in order
    and ends once it has caught up."""
    match = await new_match()
    idle, gated = FakeMember("all"), GatedMember("all")
    room = await rooms.Room.join(match.id, idle)
    await rooms.Room.join(match.id, gated)
    try:
        room.driver.wake = lambda deadline: None  # type: ignore[method-assign]
        for seq in (1, 2, 3):
            room._dispatch(words_message(seq))
        assert [seq for seq, _ in idle.frames] == [1, 2, 3]  # sent before this test awaited anything
        assert room._outlets[idle].task is None
        assert gated.frames == [] and room._outlets[gated].task is not None
        gated.gate.set()
        await eventually(lambda: [seq for seq, _ in gated.frames] == [1, 2, 3])
        await eventually(lambda: room._outlets[gated].task is None)
        room._dispatch(words_message(4))  # caught up: sent in the pass again
        assert gated.frames[-1][0] == 4 and room.dropped == 0
    finally:
        await room.leave(idle)
        await room.leave(gated)


class FlakyLayer:
    """The real channel layer, whose ``receive`` raises once after ``fail_after`` messages
    (as when the Redis connection breaks)."""

    def __init__(self, fail_after: int):
        self.layer = get_channel_layer()
        self.fail_after = fail_after
        self.received = 0

    def __getattr__(self, name: str) -> Any:
        return getattr(self.layer, name)

    async def receive(self, channel: str) -> dict[str, Any]:
        message = await self.layer.receive(channel)
        if message.get("type") != "room.probe":
            self.received += 1
            if self.received == self.fail_after:
                raise ConnectionError("Redis went away")
        return message


async def test_the_listener_restarts_after_the_channel_layer_raises_and_members_resync(monkeypatch):
    flaky = FlakyLayer(fail_after=3)
    monkeypatch.setattr(rooms, "get_channel_layer", lambda: flaky)
    match = await new_match()
    members = [ResyncingMember("all") for _ in range(3)]
    room = None
    try:
        for m in members:
            room = await rooms.Room.join(match.id, m)
        assert room is not None
        room.driver.wake = lambda deadline: None  # type: ignore[method-assign]
        group = rooms.group_name(match.id)
        for seq in (1, 2, 3):  # the third is lost with the failing receive
            await flaky.layer.group_send(group, words_message(seq))
        await eventually(lambda: room.resubscriptions == 1, timeout=10)
        await eventually(lambda: all(m.resyncs == 1 for m in members))
        for seq in (4, 5):
            await flaky.layer.group_send(group, words_message(seq))
        await eventually(lambda: all(m.frames and m.frames[-1][0] == 5 for m in members))
    finally:
        for m in members:
            if room is not None:
                await room.leave(m)
    for m in members:
        assert [seq for seq, _ in m.frames] == [1, 2, 4, 5]  # 3 comes with the resync's snapshot
        assert m.resyncs == 1  # once: the re-subscription's, not again for the seq gap it explains
    assert not room._listener.done() or room._listener.cancelled()


async def test_a_seq_gap_makes_every_member_resync():
    match = await new_match()
    members = [ResyncingMember("all"), ResyncingMember("all", "moderator")]
    room = None
    try:
        for m in members:
            room = await rooms.Room.join(match.id, m)
        assert room is not None
        room.driver.wake = lambda deadline: None  # type: ignore[method-assign]
        group = rooms.group_name(match.id)
        for seq in (1, 2, 5):  # 3 and 4 were never published (Redis was away)
            await get_channel_layer().group_send(group, words_message(seq))
        await eventually(lambda: all(m.resyncs == 1 and len(m.frames) == 3 for m in members))
        assert room.resyncs == 1
    finally:
        for m in members:
            if room is not None:
                await room.leave(m)


async def test_this_processs_events_reach_its_members_before_redis_echoes_them_and_only_once(monkeypatch):
    match = await new_match()
    member = FakeMember("all")
    room = await rooms.Room.join(match.id, member)
    try:
        room.driver.wake = lambda deadline: None  # type: ignore[method-assign]
        layer = get_channel_layer()
        real_send = layer.group_send
        sent = asyncio.Event()

        async def slow_redis(group: str, message: dict[str, Any]) -> None:
            await asyncio.sleep(1.0)
            await real_send(group, message)
            sent.set()

        monkeypatch.setattr(layer, "group_send", slow_redis)
        events = [words_message(seq)["events"][0] for seq in (1, 2)]
        # As the service does on commit: from a database thread, not the room's loop.
        publishing = asyncio.create_task(asyncio.to_thread(rooms.publish, match.id, events, None))
        await eventually(lambda: len(member.frames) == 2, timeout=0.5)
        await publishing
        await asyncio.wait_for(sent.wait(), 3)
        await asyncio.sleep(0.3)  # the echo through Redis has had time to arrive
        assert [seq for seq, _ in member.frames] == [1, 2] and room.resyncs == 0
    finally:
        await room.leave(member)


async def test_events_stored_from_an_event_loop_with_no_room_here_reach_the_other_processes():
    """The driver stores words from its loop; if its room closed meanwhile, the publication
    goes through Redis without blocking that loop (no async_to_sync on a running loop)."""
    match = await new_match()
    layer = get_channel_layer()
    channel = await layer.new_channel()
    await layer.group_add(rooms.group_name(match.id), channel)
    try:
        events = [words_message(seq)["events"][0] for seq in (1, 2)]
        assert match.id not in rooms.Room.rooms
        rooms.publish(match.id, events, 12.5)  # returns at once, the send runs on this loop
        message = await asyncio.wait_for(layer.receive(channel), 3)
        assert message["next_deadline"] == 12.5
        # Through Redis each event's frame, and beside it only what a room routes it by.
        assert message["events"] == [{"seq": ev["seq"], "audience": ev["audience"]} for ev in events]
        assert message["frames"] == [frame_of(ev) for ev in events]
    finally:
        await layer.group_discard(rooms.group_name(match.id), channel)


async def test_after_a_resync_echoes_lagging_behind_the_local_relay_are_skipped_not_gaps():
    """Under load the echo through Redis of this process's own events trails its local relay.
    Once a gap has made the members resync, the trailing echoes (seqs already relayed) must
    still be skipped: each one let through used to make the next local event a gap, and the
    room resynced every member on every word."""
    match = await new_match()
    member = ResyncingMember("all")
    room = await rooms.Room.join(match.id, member)
    try:
        room.driver.wake = lambda deadline: None  # type: ignore[method-assign]
        room._dispatch(words_message(1))
        room._dispatch(words_message(3))  # 2 was lost: one resync
        for seq in (4, 5, 6):
            room._dispatch(words_message(seq - 3))  # the echo of what was relayed earlier…
            room._dispatch(words_message(seq))  # …then this process's next event
        await eventually(lambda: member.resyncs >= 1 and len(member.frames) == 5)
        await asyncio.sleep(0.1)
        assert room.resyncs == 1 and member.resyncs == 1
        assert [seq for seq, _ in member.frames] == [1, 3, 4, 5, 6]
    finally:
        await room.leave(member)


async def test_an_echo_trailing_behind_a_later_word_does_not_move_the_drivers_deadline_back():
    """Under load the echo through Redis of word 1 can arrive after word 2 was relayed. Its
    deadline (word 2's, now past) used to reach the driver, which ticked at once, revealed
    nothing and took the locked way: on every echo, so the load fed itself."""
    match = await new_match()
    member = FakeMember("all")
    room = await rooms.Room.join(match.id, member)
    woken: list[float | None] = []
    try:
        room.driver.wake = woken.append  # type: ignore[method-assign]
        first, second = words_message(1), words_message(2)
        first["next_deadline"], second["next_deadline"] = 100.2, 100.4
        room._dispatch(first)
        room._dispatch(second)
        room._dispatch(first)  # the echo of word 1
        assert woken == [100.2, 100.4]
        assert [seq for seq, _ in member.frames] == [1, 2]
    finally:
        await room.leave(member)


async def test_a_room_recovers_from_a_real_redis_restart(monkeypatch):
    """A private Redis for the channel layer, stopped for 2 s and restarted on the same port."""
    from channels_redis.pubsub import RedisPubSubChannelLayer

    from tools import launcher

    url, proc = launcher.start_redis()
    port = int(url.rsplit(":", 1)[1].split("/")[0])
    layer = RedisPubSubChannelLayer(hosts=[url])
    monkeypatch.setattr(rooms, "get_channel_layer", lambda: layer)
    monkeypatch.setattr(rooms, "PROBE_INTERVAL", 0.5)
    monkeypatch.setattr(rooms, "PROBE_TIMEOUT", 1.0)
    match = await new_match()
    members = [ResyncingMember("all") for _ in range(3)]
    room = None
    try:
        for m in members:
            room = await rooms.Room.join(match.id, m)
        assert room is not None
        room.driver.wake = lambda deadline: None  # type: ignore[method-assign]
        group = rooms.group_name(match.id)
        await layer.group_send(group, words_message(1))
        await eventually(lambda: all(len(m.frames) == 1 for m in members))

        launcher.stop(proc)
        await asyncio.sleep(2.0)
        proc = launcher.start_redis(port)[1]
        back = time.monotonic()
        await eventually(
            lambda: room.resubscriptions >= 1 and all(m.resyncs >= 1 for m in members), timeout=15
        )
        recovered_in = time.monotonic() - back
        async with asyncio.timeout(10):
            while True:  # the publisher's own connection may need a moment to come back too
                try:
                    await layer.group_send(group, words_message(2))
                    break
                except Exception:
                    await asyncio.sleep(0.2)
        await eventually(lambda: all(m.frames[-1][0] == 2 for m in members), timeout=5)
    finally:
        for m in members:
            if room is not None:
                await room.leave(m)
        launcher.stop(proc)
    print(f"\nroom resubscribed and told members to resync {recovered_in:.2f} s after Redis came back")
    assert recovered_in < 5


# --- one serialisation per event ---------------------------------------------------------------


class CountingJson:
    """``buzzer.rooms``' ``json`` module, counting what it serialises."""

    def __init__(self) -> None:
        self.dumped: list[Any] = []

    def dumps(self, obj: Any, **kw: Any) -> str:
        self.dumped.append(obj)
        return json.dumps(obj, **kw)


def frame_of(ev: dict[str, Any]) -> str:
    return json.dumps({"type": "event", "seq": ev["seq"], "event": ev["event"], "data": ev["data"]})


async def test_frames_published_on_the_rooms_loop_reach_its_members_at_once_as_they_were_built(monkeypatch):
    """A word stored on the room's own loop (the driver's) is relayed before ``publish``
    returns (no callback a loop iteration later) and each member is sent the very frame text
    the writer built; nothing is serialised again for the relay or the echo through Redis."""
    counting = CountingJson()
    monkeypatch.setattr(rooms, "json", counting)
    match = await new_match()  # in the lobby: its driver reads no words
    members = [FakeMember("all") for _ in range(3)]
    room = await rooms.Room.join(match.id, members[0])
    try:
        for member in members[1:]:
            await rooms.Room.join(match.id, member)
        room.driver.wake = lambda deadline: None  # type: ignore[method-assign]
        events = [
            {**words_message(seq)["events"][0], "data": {"start": seq, "words": ["é"]}} for seq in (1, 2)
        ]
        frames = [store.event_frame(ev["seq"], ev["event"], json.dumps(ev["data"])) for ev in events]
        layer = get_channel_layer()
        channel = await layer.new_channel()  # another process's subscription
        await layer.group_add(rooms.group_name(match.id), channel)
        counting.dumped.clear()  # the seats' joins, published as the match was made
        rooms.publish(match.id, events, None, frames)
        for member in members:
            assert [seq for seq, _ in member.frames] == [1, 2]
            assert all(sent is built for (_, sent), built in zip(member.frames, frames, strict=True))
        assert frames == [frame_of(ev) for ev in events]  # byte for byte what json.dumps gives
        await asyncio.sleep(0.5)  # the echo through Redis has come back, and was skipped
        assert all(len(member.frames) == 2 for member in members) and room.resyncs == 0
        assert counting.dumped == []
        # Another process is sent the same frames through Redis, beside each event's seq and
        # audience only; its room relays them as they are.
        message = await asyncio.wait_for(layer.receive(channel), 3)
        assert message["frames"] == frames
        assert message["events"] == [{"seq": ev["seq"], "audience": ev["audience"]} for ev in events]
        other = FakeMember("all")
        room.members, room.last_seq = {other}, None  # as another process's room, new to the match
        room._dispatch(message)
        assert [sent for _, sent in other.frames] == frames and counting.dumped == []
        room.members = set(members)
    finally:
        await layer.group_discard(rooms.group_name(match.id), channel)
        for member in members:
            await room.leave(member)


async def test_a_message_without_frames_is_serialised_once_per_event_not_per_member(monkeypatch):
    """A publication that carries no frames (a writer that built none, or a message of an older
    process through Redis) is serialised once per event, whatever the number of members, into
    the same text as always."""
    counting = CountingJson()
    monkeypatch.setattr(rooms, "json", counting)
    match = await new_match()
    members = [FakeMember("all") for _ in range(4)]
    room = await rooms.Room.join(match.id, members[0])
    try:
        for member in members[1:]:
            await rooms.Room.join(match.id, member)
        room.driver.wake = lambda deadline: None  # type: ignore[method-assign]
        message = words_message(1)
        message["events"].append({**words_message(2)["events"][0], "data": {"start": 2, "why": 'a "b"'}})
        counting.dumped.clear()  # the seats' joins, published as the match was made
        room._dispatch(message)
        assert len(counting.dumped) == 2
        for member in members:
            assert [text for _, text in member.frames] == [frame_of(ev) for ev in message["events"]]
        counting.dumped.clear()
        rooms.publish(match.id, [words_message(3)["events"][0]], None)  # built once, by publish
        assert len(counting.dumped) == 1 and all(len(member.frames) == 3 for member in members)
    finally:
        for member in members:
            await room.leave(member)


@pytest.mark.parametrize(
    "data",
    [{}, {"words": ["naïve", "\u2028", '"quoted"', "\\"], "start": 3, "revealed_at": 1700000000.123456789},
     {"nested": {"a": [1, 2.5, None, True]}, "emoji": "🔔"}],
)  # fmt: skip
def test_an_event_frame_is_json_dumps_of_the_frame(data):
    event = {"seq": 12, "event": game.EventName.WORDS, "data": data}
    assert store.event_frame(12, game.EventName.WORDS, json.dumps(data)) == frame_of(event)


async def test_a_words_frame_is_serialised_once_where_its_tick_is_prepared(monkeypatch):
    """End to end through the driver: each ``words`` frame a member is sent is the very text
    the Tick prepared with its statement (its data serialised once, for both), and is what
    ``json.dumps`` of the published event's frame gives; the room serialised no word."""
    if not rowcache.usable():
        pytest.skip("the words' one statement (and its prepared frames) is PostgreSQL's")
    prepared: list[str] = []
    real_prepare = ticks.prepare

    def spy(*args: Any, **kw: Any) -> ticks.Write:
        write = real_prepare(*args, **kw)
        prepared.extend(write.frames)
        return write

    monkeypatch.setattr(ticks, "prepare", spy)
    published: dict[int, dict[str, Any]] = {}

    def receive(sender: Any, events: list[dict[str, Any]], **_: Any) -> None:
        published.update((ev["seq"], ev) for ev in events)

    signals.events_committed.connect(receive, weak=False, dispatch_uid="test-frames-once")
    counting = CountingJson()
    monkeypatch.setattr(rooms, "json", counting)
    match = await new_match(config={"wpm": 600}, words=40)
    member = FakeMember("all")
    room = await rooms.Room.join(match.id, member)
    try:
        await start(match)
        await eventually(lambda: sum(WORDS_MARK in text for _, text in member.frames) >= 6)
    finally:
        await room.leave(member)
        signals.events_committed.disconnect(dispatch_uid="test-frames-once")
    # The driver's words (the start's command reveals the first word itself, the locked way).
    words = [(seq, text) for seq, text in member.frames if published[seq]["actor"] == Role.DRIVER]
    assert len(words) >= 5 and all(WORDS_MARK in text for _, text in words)
    for seq, text in words:
        assert any(text is built for built in prepared)
        assert text == frame_of(published[seq])
    # What ``rooms`` serialised: each event stored the locked way (the start's) once, no word.
    others = [ev["data"] for ev in published.values() if ev["actor"] != Role.DRIVER]
    assert len(counting.dumped) == len(others) and all(
        any(dumped is data for data in others) for dumped in counting.dumped
    )


WORDS_MARK = '"event": "words"'


async def test_a_message_with_neither_frames_nor_data_is_ignored_and_the_room_relays_on(caplog):
    """A malformed message (an event with no frame and no data to build one from) is logged and
    dropped as a whole; the next message is relayed as usual."""
    match = await new_match()
    member = FakeMember("all")
    room = await rooms.Room.join(match.id, member)
    try:
        room.driver.wake = lambda deadline: None  # type: ignore[method-assign]
        room._dispatch({"type": "match.events", "events": [{"seq": 1, "audience": "all"}]})
        assert member.frames == [] and "malformed" in caplog.text
        room._dispatch(words_message(1))
        assert [seq for seq, _ in member.frames] == [1] and room.resyncs == 0
    finally:
        await room.leave(member)
