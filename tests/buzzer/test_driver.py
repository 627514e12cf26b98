"""The reading driver's durability on the real Redis and a transactional database: the
match clock stops while nobody drives it (a killed server, a Redis outage), and the driver
outlives Redis and database errors. (Lease hand-over between processes: test_rooms.py.)"""

from __future__ import annotations

import asyncio
import time
from collections.abc import Awaitable, Callable
from typing import Any

import psycopg
import pytest
from channels.db import database_sync_to_async
from django.db import OperationalError
from django.db import connection as django_connection

from buzzer import dbpools
from buzzer import driver as driving
from competition import game, selectors, services, signals
from competition.live import rowcache, store, ticks
from competition.models import Match, MatchEvent, Player
from tests.support.factories import make_match
from tools import launcher

pytestmark = pytest.mark.django_db(transaction=True)

WINDOW = 5.0  # answer window, s


@database_sync_to_async
def events(match: Match) -> list[tuple[str, dict[str, Any], str]]:
    return list(
        MatchEvent.objects.filter(match=match).order_by("seq").values_list("event", "payload", "actor")
    )


@database_sync_to_async
def state(match: Match) -> game.MatchState:
    return selectors.load_state(match.pk)


def contiguous(rows: list[tuple[str, dict[str, Any], str]]) -> bool:
    position = 0
    for kind, payload, _ in rows:
        if kind == "words":
            if payload["start"] != position:
                return False
            position += len(payload["words"])
    return True


async def until(pred, timeout: float) -> None:
    async with asyncio.timeout(timeout):
        while not await pred():
            await asyncio.sleep(0.05)


async def test_a_server_killed_in_an_answer_window_leaves_the_buzzer_its_answer_time_on_restart(monkeypatch):
    """Killed ~0.3 s into Alice's 5 s answer window, back 25 s later: she still has ~4.7 s,
    and no timeout (−5) is ruled for the time nobody drove the match."""
    base = time.time() - 25.0

    @database_sync_to_async
    def play_until_killed() -> Match:
        match = make_match(config={"wpm": 600, "answer_window": WINDOW, "auto_rule": True})
        alice = Player.objects.get(match=match, name="alice")
        run = store.apply_command
        run(match_id=match.id, command=game.Start(), actor="moderator", now=base)
        run(match_id=match.id, command=game.Tick(), actor="driver", now=base + 1.0)
        services.buzz(
            match_id=match.id,
            player_id=alice.id,
            question_id=match.tossup_ids[0],
            token_index=9,
            client_time=None,
            corrected_press_at=None,
            now=base + 1.01,
        )
        run(match_id=match.id, command=game.Tick(), actor="driver", now=base + 1.2)  # Alice won the race
        Match.objects.filter(pk=match.pk).update(driven_at=base + 1.5)  # the dead server's last heartbeat
        return match

    match = await play_until_killed()
    before = await state(match)
    assert before.tossup is not None and before.tossup.buzz is not None
    remaining = before.tossup.buzz.answer_deadline - (base + 1.5)
    assert WINDOW - 0.5 < remaining < WINDOW  # the window opened when the race closed (≈ base + 1.16)
    head = len(await events(match))

    monkeypatch.setattr(driving, "PROCESS_ID", "restarted")
    driver = driving.Driver(match.id)
    driver.start()
    try:
        await until(lambda: _driving(driver), timeout=5)
        restarted_at = time.time()
        after = await state(match)
        await asyncio.sleep(1.0)  # a tick or heartbeat would fire an overdue deadline now
        late = await events(match)
    finally:
        await driver.stop()
    assert after.tossup is not None and after.tossup.buzz is not None
    assert after.tossup.buzz.player_id == before.tossup.buzz.player_id
    left = after.tossup.buzz.answer_deadline - restarted_at
    assert left == pytest.approx(remaining, abs=driving.HEARTBEAT_S)
    new = late[head:]
    assert [k for k, _, _ in new] == ["paused", "resumed"]  # one recovery, no buzz_ruled
    assert {a for _, _, a in new} == {"driver"}
    assert new[1][1]["shift"] == pytest.approx(restarted_at - (base + 1.5), abs=0.5)
    stored = await database_sync_to_async(lambda: Match.objects.get(pk=match.pk).driven_at)()
    assert stored is not None and stored >= restarted_at - 0.1  # the heartbeat runs again


async def _driving(driver: driving.Driver) -> bool:
    return driver.holding


async def test_the_driver_stops_the_clock_during_a_redis_outage_and_resumes_after_it(monkeypatch, settings):
    """Redis (the lease) down for 3 s mid-tossup: no word is revealed while the lease cannot be
    renewed, the driver survives, and the reading carries on where it stopped."""
    port = launcher.free_port()
    url, redis = launcher.start_redis(port)
    settings.REDIS_URL = url
    monkeypatch.setattr(driving, "PROCESS_ID", "only")
    match = await database_sync_to_async(make_match)(config={"wpm": 600}, words=80)
    await database_sync_to_async(store.apply_command)(match_id=match.id, command=game.Start(), actor="m")
    driver = driving.Driver(match.id)
    driver.start()
    try:
        await until(lambda: _words_at_least(match, 5), timeout=5)
        redis.kill()
        redis.wait(timeout=5)
        down_at = time.time()
        await asyncio.sleep(3.0)
        assert driver._task is not None and not driver._task.done()
        assert not driver.holding
        _, redis = launcher.start_redis(port)
        back_at = time.time()
        await until(lambda: _driving(driver), timeout=5)
        resumed_by = time.time()
        await until(lambda: _words_at_least(match, 30), timeout=10)
    finally:
        await driver.stop()
        launcher.stop(redis)
    rows = await events(match)
    revealed = [p["revealed_at"] for k, p, _ in rows if k == "words"]
    # The lease is renewed every LEASE_MS/3: ticks may run that long into the outage, none after.
    assert not [t for t in revealed if down_at + driving.LEASE_MS / 3000 + 0.2 < t < back_at]
    assert resumed_by - back_at < 2 * driving.LEASE_MS / 3000
    kinds = [k for k, _, _ in rows]
    assert kinds.count("paused") == kinds.count("resumed") == 1
    shift = next(p["shift"] for k, p, _ in rows if k == "resumed")
    assert shift == pytest.approx(back_at - down_at, abs=1.5)
    assert contiguous(rows)
    after_resume = [p for k, p, _ in rows[kinds.index("resumed") :] if k == "words"]
    assert max(len(p["words"]) for p in after_resume) <= 2  # read at speed, no dump of the gap


async def test_the_driver_outlives_database_errors_and_keeps_reading(monkeypatch):
    match = await database_sync_to_async(make_match)(config={"wpm": 600}, words=40)
    await database_sync_to_async(store.apply_command)(match_id=match.id, command=game.Start(), actor="m")
    real, real_execute = ticks.tick, dbpools.TICK_CONNECTIONS.execute
    failures = {"left": 3}  # a tick's first three writes fail, on the event loop's way or a thread's

    def flaky(match_id: int, now: float | None = None) -> store.Applied:
        if failures["left"]:
            failures["left"] -= 1
            raise OperationalError("database is locked")
        return real(match_id, now)

    async def flaky_execute(sql: str, params: list[Any]) -> list[Any] | None:
        if failures["left"]:
            failures["left"] -= 1
            raise psycopg.OperationalError("server closed the connection unexpectedly")
        return await real_execute(sql, params)

    monkeypatch.setattr(ticks, "tick", flaky)
    monkeypatch.setattr(dbpools.TICK_CONNECTIONS, "execute", flaky_execute)
    driver = driving.Driver(match.id)
    driver.start()
    try:
        await until(lambda: _words_at_least(match, 15), timeout=10)
    finally:
        await driver.stop()
    assert failures["left"] == 0
    assert contiguous(await events(match))


async def _words_at_least(match: Match, n: int) -> bool:
    rows = await events(match)
    return sum(len(p["words"]) for k, p, _ in rows if k == "words") >= n


async def test_a_slow_lease_renewal_delays_a_word_no_later_than_its_own_end(monkeypatch):
    """A renewal that takes 0.4 s (Redis under a connection burst) holds back a word due
    meanwhile until it ends, no longer: the wait for the next word is measured from the
    renewal's end, not its start."""
    match = await database_sync_to_async(make_match)(config={"wpm": 240}, words=40)
    await database_sync_to_async(store.apply_command)(match_id=match.id, command=game.Start(), actor="m")
    driver = driving.Driver(match.id)
    renewed: list[float] = []  # end times of the slow renewals
    real_hold = driving.Driver._hold_lease

    async def slow_hold(self: driving.Driver) -> bool:
        held = await real_hold(self)
        if renewed or self.holding:  # the first renewal takes the match over at once
            await asyncio.sleep(0.4)
        renewed.append(time.time())
        return held

    excess: list[float] = []  # how long after both its deadline and the last renewal a Tick came
    real_tick = ticks.tick_on_loop

    async def timed(match_id: int, execute: Any, **kw: Any) -> store.Applied | None:
        """Every Tick's first step."""
        if driver.deadline is not None:
            excess.append(time.time() - max(driver.deadline, renewed[-1]))
        return await real_tick(match_id, execute, **kw)

    monkeypatch.setattr(driving.Driver, "_hold_lease", slow_hold)
    monkeypatch.setattr(ticks, "tick_on_loop", timed)
    driver.start()
    try:
        await until(lambda: _words_at_least(match, 16), timeout=15)
    finally:
        await driver.stop()
    assert len(renewed) >= 3  # renewals came while words were due
    assert max(excess) < 0.15, sorted(excess)[-5:]


# --- words stored from the event loop (TICK_CONNECTIONS, ticks.tick_on_loop) ------------------


@pytest.fixture
def postgres() -> None:
    if not rowcache.usable():
        pytest.skip("the fast path's one statement is PostgreSQL's (the suite's CI database)")


@pytest.fixture
def published() -> Any:
    """Every (match_id, events) sent on commit, from any thread or loop."""
    sent: list[tuple[int, list[dict[str, Any]]]] = []

    def receive(sender: Any, match_id: int, events: list[dict[str, Any]], **_: Any) -> None:
        sent.append((match_id, events))

    signals.events_committed.connect(receive, dispatch_uid="test-driver-published")
    yield sent
    signals.events_committed.disconnect(dispatch_uid="test-driver-published")


def recording(sent: list[str]) -> Callable[[str, list[Any]], Awaitable[list[Any] | None]]:
    """``TICK_CONNECTIONS.execute`` that appends each statement's first word (SELECT, WITH) to
    ``sent``."""

    async def execute(sql: str, params: list[Any]) -> list[Any] | None:
        sent.append(sql.split()[0])
        return await dbpools.TICK_CONNECTIONS.execute(sql, params)

    return execute


async def test_words_stored_from_the_event_loop_are_the_engines_and_published_once_stored(
    postgres, published
):
    match = await database_sync_to_async(make_match)(config={"wpm": 600}, words=40)
    started = await database_sync_to_async(store.apply_command)(
        match_id=match.id, command=game.Start(), actor="moderator", now=1_700_000_000.0
    )
    expected_state = await state(match)
    seq, now, expected = started.seq, started.next_deadline, []
    for _ in range(8):
        assert now is not None
        expected_state, engine_events = game.apply(expected_state, game.Tick(), now)
        expected += [(ev.event, dict(ev.data), "driver") for ev in engine_events]
        applied = await ticks.tick_on_loop(match.id, dbpools.TICK_CONNECTIONS.execute, now=now)
        assert applied is not None  # stored on the loop, no thread
        assert (
            applied.seq == seq + len(engine_events) and applied.next_deadline == expected_state.next_deadline
        )
        assert published[-1] == (match.id, applied.events)  # sent as it returned
        seq, now = applied.seq, applied.next_deadline
    assert (await events(match))[-len(expected) :] == expected
    row = await database_sync_to_async(Match.objects.get)(pk=match.pk)
    assert row.seq == seq and row.state == expected_state.live_dict()
    # The thread way goes on from the row the loop wrote.
    after = await database_sync_to_async(store.apply_command)(
        match_id=match.id, command=game.Tick(), actor="driver", now=now
    )
    assert after.seq == seq + 1 and contiguous(await events(match))


async def test_a_row_moved_by_another_process_is_never_overwritten_from_the_event_loop(
    postgres, published, monkeypatch
):
    match = await database_sync_to_async(make_match)(config={"wpm": 600}, words=40)
    started = await database_sync_to_async(store.apply_command)(
        match_id=match.id, command=game.Start(), actor="moderator", now=1_700_000_000.0
    )
    first = await ticks.tick_on_loop(match.id, dbpools.TICK_CONNECTIONS.execute, now=started.next_deadline)
    assert first is not None and first.next_deadline is not None
    with monkeypatch.context() as other_process:  # this process's memory of the row is not told
        other_process.setattr(rowcache, "remember", lambda *args: None)
        paused = await database_sync_to_async(store.apply_command)(
            match_id=match.id, command=game.Pause(), actor="moderator", now=first.next_deadline - 0.01
        )
    sent = len(published)
    assert (
        await ticks.tick_on_loop(match.id, dbpools.TICK_CONNECTIONS.execute, now=first.next_deadline) is None
    )
    assert len(published) == sent  # nothing stored, nothing sent
    assert [k for k, _, _ in await events(match)][-1] == "paused"
    known = rowcache.recall(match.id)  # the row was read again: paused, so no word to store
    assert known is not None and known.seq == paused.seq and known.state.paused
    locked = await database_sync_to_async(store.apply_command)(
        match_id=match.id, command=game.Tick(), actor="driver", now=first.next_deadline
    )
    assert locked.seq == paused.seq and not locked.events  # paused: no word


async def test_words_written_after_another_process_moved_the_row_are_read_and_stored_from_the_loop(
    postgres, published, monkeypatch
):
    @database_sync_to_async
    def other_process(write: Any) -> Any:
        """``write()`` as from a process of its own: what it remembers is not this one's."""
        with monkeypatch.context() as patch:
            patch.setattr(rowcache, "_known", type(rowcache._known)())
            patch.setattr(rowcache, "_specs", type(rowcache._specs)())
            patch.setattr(rowcache, "_records", type(rowcache._records)())
            return write()

    sent: list[str] = []
    execute = recording(sent)

    def started() -> tuple[Match, store.Applied]:
        match = make_match(config={"wpm": 600}, words=40)
        return match, store.apply_command(
            match_id=match.id, command=game.Start(), actor="moderator", now=1_700_000_000.0
        )

    match, start = await other_process(started)
    assert rowcache.recall(match.id) is None
    due = start.next_deadline
    assert due is not None
    row_state = await other_process(lambda: selectors.load_state(match.id))
    expected_state, engine_events = game.apply(row_state, game.Tick(), due)
    applied = await ticks.tick_on_loop(match.id, execute, now=due)
    assert applied is not None  # stored on the loop: no thread, no lock
    assert sent == ["SELECT", "SELECT", "WITH"]  # the row, its spec and record (not cached), the write
    assert [(e["event"], e["data"]) for e in applied.events] == [
        (ev.event, dict(ev.data)) for ev in engine_events
    ]
    assert published[-1] == (match.id, applied.events) and (await state(match)) == expected_state

    def pause_and_resume() -> store.Applied:
        for command in (game.Pause(), game.Resume()):
            moved = store.apply_command(match_id=match.id, command=command, actor="moderator", now=due + 0.05)
        return moved

    resumed = await other_process(pause_and_resume)
    due = resumed.next_deadline
    assert due is not None
    expected_state, engine_events = game.apply(await state(match), game.Tick(), due)
    sent.clear()
    applied = await ticks.tick_on_loop(match.id, execute, now=due)
    assert applied is not None
    assert sent == ["WITH", "SELECT", "WITH"]  # the remembered row had moved: stored nothing, read, stored
    assert applied.seq == resumed.seq + len(engine_events) and (await state(match)) == expected_state
    assert contiguous(await events(match))


async def test_a_tick_computed_ahead_stores_what_the_engine_stores_when_due(postgres, published, monkeypatch):
    match = await database_sync_to_async(make_match)(config={"wpm": 600}, words=40)
    started = await database_sync_to_async(store.apply_command)(
        match_id=match.id, command=game.Start(), actor="moderator", now=1_700_000_000.0
    )
    due = started.next_deadline
    assert due is not None
    expected_state, engine_events = game.apply(await state(match), game.Tick(), due)
    planned = ticks.plan_tick(match.id, due)
    assert planned is not None and planned.at == due and planned.new == expected_state
    computed: list[float] = []
    real_plan = ticks.plan_tick
    monkeypatch.setattr(
        ticks, "plan_tick", lambda match_id, at: computed.append(at) or real_plan(match_id, at)
    )

    early = await ticks.tick_on_loop(
        match.id, dbpools.TICK_CONNECTIONS.execute, now=due - 0.001, planned=planned
    )
    assert early is None and computed == [due - 0.001]  # not due yet: computed afresh, nothing to reveal
    applied = await ticks.tick_on_loop(
        match.id, dbpools.TICK_CONNECTIONS.execute, now=due + 0.001, planned=planned
    )
    assert applied is not None and computed == [due - 0.001]  # the plan was used, not recomputed
    assert [(e["event"], e["data"]) for e in applied.events] == [
        (ev.event, dict(ev.data)) for ev in engine_events
    ]
    assert published[-1] == (match.id, applied.events)
    assert (await state(match)) == expected_state


async def test_a_tick_computed_ahead_gives_way_to_a_moved_row_and_to_a_later_deadline(postgres, published):
    match = await database_sync_to_async(make_match)(config={"wpm": 600}, words=40)
    started = await database_sync_to_async(store.apply_command)(
        match_id=match.id, command=game.Start(), actor="moderator", now=1_700_000_000.0
    )
    due = started.next_deadline
    assert due is not None
    stale = ticks.plan_tick(match.id, due)
    assert stale is not None
    paused = await database_sync_to_async(store.apply_command)(  # this process: the row it remembers moves
        match_id=match.id, command=game.Pause(), actor="moderator", now=due - 0.001
    )
    sent: list[str] = []
    execute = recording(sent)

    assert await ticks.tick_on_loop(match.id, execute, now=due, planned=stale) is None
    assert sent == []  # recomputed on the paused row (no word): the stale statement never sent
    assert [k for k, _, _ in await events(match)][-1] == "paused"  # the planned word was not stored
    resumed = await database_sync_to_async(store.apply_command)(
        match_id=match.id, command=game.Resume(), actor="moderator", now=due
    )
    assert resumed.seq > paused.seq

    # Computed ahead for its deadline, run when the next word is due too: both words, in one batch.
    due = resumed.next_deadline
    assert due is not None
    planned = ticks.plan_tick(match.id, due)
    assert planned is not None and planned.new.next_deadline is not None
    late = planned.new.next_deadline + 0.001
    applied = await ticks.tick_on_loop(match.id, dbpools.TICK_CONNECTIONS.execute, now=late, planned=planned)
    assert applied is not None
    [words] = [e["data"]["words"] for e in applied.events if e["event"] == "words"]
    assert len(words) == 2 and contiguous(await events(match))


async def test_the_driver_computes_each_word_ahead_of_its_deadline(postgres, monkeypatch):
    match = await database_sync_to_async(make_match)(config={"wpm": 600}, words=40)
    await database_sync_to_async(store.apply_command)(match_id=match.id, command=game.Start(), actor="m")
    driver = driving.Driver(match.id)
    ahead: list[tuple[float, float]] = []  # (time the Tick was computed, its deadline)
    real_plan = ticks.plan_tick

    def timed(match_id: int, at: float) -> ticks.PlannedTick | None:
        ahead.append((time.time(), at))
        return real_plan(match_id, at)

    used: list[ticks.PlannedTick | None] = []
    real_tick = ticks.tick_on_loop

    async def tick(match_id: int, execute: Any, **kw: Any) -> store.Applied | None:
        used.append(kw.get("planned"))
        return await real_tick(match_id, execute, **kw)

    monkeypatch.setattr(ticks, "plan_tick", timed)
    monkeypatch.setattr(ticks, "tick_on_loop", tick)
    driver.start()
    try:
        await until(lambda: _words_at_least(match, 12), timeout=10)
    finally:
        await driver.stop()
    planned = [p for p in used if p is not None]
    assert len(used) >= 10 and len(planned) >= len(used) - 2  # the first (taking over) may have none
    computed_at = {at: t for t, at in ahead}
    # Each right after the word before it was stored (the first: PLAN_AHEAD_S before it was due).
    assert all(p.at - computed_at[p.at] <= 0.1 + driving.PLAN_AHEAD_S for p in planned)  # 600 wpm
    assert sum(computed_at[p.at] < p.at for p in planned) >= len(planned) - 2  # before it was due


async def test_tick_connections_run_nothing_when_busy_and_replace_a_killed_one(postgres):
    connections = dbpools.TickConnections(1)
    try:
        slow = asyncio.create_task(connections.execute("SELECT pg_sleep(0.5), 1", []))
        await asyncio.sleep(0.2)
        assert await connections.execute("SELECT 2", []) is None  # the only one is busy: nothing run
        assert (await slow)[0][1] == 1
        [(pid,)] = await connections.execute("SELECT pg_backend_pid()", [])
        assert await connections.execute("SELECT pg_backend_pid()", []) == [(pid,)]  # reused

        @database_sync_to_async
        def kill() -> None:
            with django_connection.cursor() as cursor:
                cursor.execute("SELECT pg_terminate_backend(%s)", [pid])

        await kill()
        with pytest.raises(psycopg.OperationalError):
            await connections.execute("SELECT 3", [])
        [(new_pid,)] = await connections.execute("SELECT pg_backend_pid()", [])  # a new connection
        assert new_pid != pid
    finally:
        connections.close()


async def test_a_tick_waits_briefly_for_a_busy_connection_first_come_first_served(postgres):
    connections = dbpools.TickConnections(1, wait=2.0)
    try:
        slow = asyncio.create_task(connections.execute("SELECT pg_sleep(0.3), 1", []))
        await asyncio.sleep(0.1)
        first = asyncio.create_task(connections.execute("SELECT 2", []))
        await asyncio.sleep(0.01)
        second = asyncio.create_task(connections.execute("SELECT 3", []))
        done: list[int] = []
        for task in (first, second):
            task.add_done_callback(lambda t: done.append(t.result()[0][0]))
        assert (await slow)[0][1] == 1
        await asyncio.gather(first, second)
        assert done == [2, 3]  # both ran on the one connection, in the order they came
        # A caller that gave up waiting (cancelled) does not keep the connection from the next.
        slow = asyncio.create_task(connections.execute("SELECT pg_sleep(0.3), 1", []))
        await asyncio.sleep(0.1)
        gave_up = asyncio.create_task(connections.execute("SELECT 4", []))
        await asyncio.sleep(0.05)
        gave_up.cancel()
        await slow
        assert await connections.execute("SELECT 5", []) == [(5,)]
    finally:
        connections.close()


def test_the_deadline_a_driver_asks_for_reads_the_whole_state_only_of_a_running_match(monkeypatch):
    """A driver with no deadline asks the database at every lease renewal (a broadcast it
    missed must not stall the reading): for a match in the lobby, paused or ended the answer
    (None) comes from the live state's status and pause alone, no state rebuilt; for a running
    one it is the engine's."""
    match = make_match(bots=False)
    real_load = selectors.load_state
    loads: list[int] = []

    def load_state(match_id: int) -> game.MatchState:
        loads.append(match_id)
        return real_load(match_id)

    monkeypatch.setattr(selectors, "load_state", load_state)
    assert driving._load_deadline(match.id) is None and loads == []  # the lobby
    now = time.time()
    services.moderate(match_id=match.id, command=game.Start(), now=now)
    deadline = driving._load_deadline(match.id)
    assert deadline is not None and deadline == real_load(match.id).next_deadline and len(loads) == 1
    services.moderate(match_id=match.id, command=game.Pause(), now=now + 0.01)
    assert driving._load_deadline(match.id) is None and len(loads) == 1
    services.moderate(match_id=match.id, command=game.Resume(), now=now + 0.02)
    assert driving._load_deadline(match.id) == real_load(match.id).next_deadline and len(loads) == 2
    services.moderate(match_id=match.id, command=game.End(), now=now + 0.03)
    assert driving._load_deadline(match.id) is None and len(loads) == 2
    with pytest.raises(Match.DoesNotExist):
        driving._load_deadline(match.id + 10_000)


async def test_the_driver_reads_words_without_making_a_task_per_word(postgres, monkeypatch):
    """Between two words the driver sleeps twice (until the next Tick is computed ahead, then
    until it is due): each sleep is a timer, not a task (``asyncio.wait_for`` on an event made
    one each time, with its own timeout). Words stored from the loop make none either."""
    monkeypatch.setattr(signals.events_committed, "receivers", [])  # no room: nothing relayed
    monkeypatch.setattr(signals.events_committed, "sender_receivers_cache", {})
    match = await database_sync_to_async(make_match)(config={"wpm": 1200}, words=60)
    await database_sync_to_async(store.apply_command)(match_id=match.id, command=game.Start(), actor="m")
    loop = asyncio.get_running_loop()
    made: list[str] = []

    def factory(loop: asyncio.AbstractEventLoop, coro: Any, **kw: Any) -> asyncio.Task:
        made.append(getattr(coro, "__qualname__", repr(coro)))
        return asyncio.Task(coro, loop=loop, **kw)

    driver = driving.Driver(match.id)
    driver.start()
    try:
        await until(lambda: _words_at_least(match, 4), timeout=10)  # taken over, reading
        before = await events(match)
        loop.set_task_factory(factory)
        try:
            await asyncio.sleep(1.0)
        finally:
            loop.set_task_factory(None)
        after = await events(match)
    finally:
        await driver.stop()
    words = sum(kind == "words" for kind, _, _ in after[len(before) :])
    assert words >= 10  # 20 words/s, about a second
    # Left: the lease's renewal (once a second) and the thread calls' own (asgiref's).
    assert len(made) <= 4, made


async def test_a_connection_freed_on_the_waiters_own_loop_is_handed_over_at_once(postgres, monkeypatch):
    """Words wait for a busy tick connection on the loop that frees it (one loop per server
    process): the connection goes straight to the first waiter, not through the loop's
    thread-safe queue (a wake-up of the loop through its self-pipe, then a callback, per word)."""
    connections = dbpools.TickConnections(1, wait=2.0)
    loop = asyncio.get_running_loop()
    threadsafe: list[Any] = []
    real = loop.call_soon_threadsafe

    def counted(callback: Any, *args: Any, **kw: Any) -> Any:
        threadsafe.append(callback)
        return real(callback, *args, **kw)

    monkeypatch.setattr(loop, "call_soon_threadsafe", counted)
    try:
        slow = asyncio.create_task(connections.execute("SELECT pg_sleep(0.2), 1", []))
        await asyncio.sleep(0.05)
        waiting = [asyncio.create_task(connections.execute(f"SELECT {k}", [])) for k in range(3)]
        await slow
        assert [await task for task in waiting] == [[(0,)], [(1,)], [(2,)]]  # first come, first served
        assert [cb for cb in threadsafe if getattr(cb, "__name__", "") == "_hand"] == []
    finally:
        connections.close()


async def test_the_driver_wakes_once_per_word(postgres, monkeypatch):
    """The next word's Tick is computed as soon as the word before it is stored (the clock
    alone decides it), so between two words the driver sleeps once, until the next is due,
    instead of waking first to compute it ahead."""
    match = await database_sync_to_async(make_match)(config={"wpm": 1200}, words=60)
    await database_sync_to_async(store.apply_command)(match_id=match.id, command=game.Start(), actor="m")
    driver = driving.Driver(match.id)
    sleeps: list[float] = []
    real_sleep = driver._sleep

    async def counted(seconds: float) -> None:
        sleeps.append(seconds)
        await real_sleep(seconds)

    monkeypatch.setattr(driver, "_sleep", counted)
    driver.start()
    try:
        await until(lambda: _words_at_least(match, 4), timeout=10)
        before, slept = await events(match), len(sleeps)
        await asyncio.sleep(1.0)
        after, slept = await events(match), len(sleeps) - slept
    finally:
        await driver.stop()
    words = sum(kind == "words" for kind, _, _ in after[len(before) :])
    assert words >= 10  # 20 words/s, about a second
    assert slept <= words + 2  # one sleep a word; the lease's renewal may add one
