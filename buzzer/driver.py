"""The reading driver: applies ``Tick`` at the engine's ``next_deadline``.

Any process with a room for the match may drive it, but only the holder of a Redis lease
does, so words are revealed once however many processes serve the match; if that process
dies, another takes over when the lease expires.

The match clock stops while nobody drives it. The holder writes a heartbeat
(``Match.driven_at``) every :data:`HEARTBEAT_S` while the match has a deadline (a tick that
stores events writes it too, so while words flow no separate heartbeat is needed); a driver that
starts driving (fresh process, takeover after a crash, Redis back after an outage) first
calls ``competition.live.store.resume_after_gap``, which pauses the match at that heartbeat and resumes it
now in one transaction. So a server killed during an answer window and restarted any time
later leaves the buzzer the answer time it had (± one heartbeat), and no deadline that fell
due while nobody drove fires.

The driver never dies of an outage: while Redis cannot renew the lease it stops driving and
retries every renewal interval; database errors are logged and retried.

A word goes one way: the driver → ``competition.live.ticks`` (the ``Tick`` computed ahead on the
row this process remembers, ``competition.live.rowcache``, and stored by one statement from the
event loop on ``buzzer.dbpools.TICK_CONNECTIONS``) → published; only when that stores nothing
(no connection free, a ``Tick`` that does more than reveal words) does it take a database thread
(``buzzer.dbpools.live_db``: ``ticks.tick``, which may take ``competition.live.store``'s locked
path). Heartbeats and the takeover's gap recovery run on that pool too.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import time
import uuid
from typing import Any

from django.conf import settings

from buzzer.dbpools import TICK_CONNECTIONS, live_db
from competition import selectors
from competition.live import store, ticks
from competition.models import Match

log = logging.getLogger(__name__)

LEASE_MS = 3000
HEARTBEAT_S = 0.5
RETRY_S = 0.5  # after a failed Tick, heartbeat or recovery
# A words-only Tick is computed ahead (ticks.plan_tick), so that when it is due only its
# statement remains (one match: due to published 3.6–3.9 ms p50 instead of 4.5–4.8): right
# after the Tick before it was stored, or, when the deadline came another way (the driver's
# start, a command's broadcast), this long before it is due. Longer than the computation plus
# the event loop's timer granularity (1 ms).
PLAN_AHEAD_S = 0.003
# Take the lease if free, renew it if ours: one atomic step, so two processes never both
# believe they hold it.
_ACQUIRE_OR_RENEW = """
local holder = redis.call('get', KEYS[1])
if not holder then redis.call('set', KEYS[1], ARGV[1], 'PX', ARGV[2]) return 1 end
if holder == ARGV[1] then redis.call('pexpire', KEYS[1], ARGV[2]) return 1 end
return 0
"""
PROCESS_ID = uuid.uuid4().hex


def driver_key(match_id: int) -> str:
    """The Redis key of a match's driver lease, in this instance's namespace (settings.REDIS_PREFIX)."""
    return f"{settings.REDIS_PREFIX}driver:{match_id}"


class Driver:
    """Applies ``Tick`` when the match's next deadline passes, while holding the lease."""

    def __init__(self, match_id: int):
        self.match_id = match_id
        self.deadline: float | None = None
        self.holding = False  # True while this driver holds the lease and has taken the match over
        self._waiting: asyncio.Future[None] | None = None  # the driver's sleep, ended by wake()
        self._task: asyncio.Task | None = None
        self._redis: Any = None
        self._key = driver_key(match_id)
        self._redis_down = False  # log an outage once, not every retry
        self._stopping = False
        self.process_id = PROCESS_ID  # the lease owner's name (tests run two "processes" in one)

    def start(self) -> None:
        self._task = asyncio.create_task(self._run())

    async def stop(self) -> None:
        """Stop driving and release the lease. The loop also ends on a flag, not only on the
        cancellation: asgiref's SyncToAsync (``live_db``) swallows a cancellation that lands
        while its thread runs, waits for the thread and returns, and this task then drove on
        while ``stop`` waited for it for ever (a watcher disconnecting right after it connected
        hung its consumer, tests/frontend/test_doors.py)."""
        self._stopping = True
        self._end_sleep()
        if self._task:
            self._task.cancel()
            with contextlib.suppress(BaseException):
                await self._task
        if self._redis is not None:
            with contextlib.suppress(Exception):
                if await self._redis.get(self._key) == self.process_id.encode():
                    await self._redis.delete(self._key)
            with contextlib.suppress(Exception):
                await self._redis.aclose()

    def wake(self, deadline: float | None) -> None:
        self.deadline = deadline
        self._end_sleep()

    def _end_sleep(self) -> None:
        if self._waiting is not None and not self._waiting.done():
            self._waiting.set_result(None)

    async def _sleep(self, seconds: float) -> None:
        """Sleep ``seconds`` or until :meth:`wake`: a future and a timer, twice a word, where
        ``asyncio.wait_for`` on an event made a task, a timeout and an event waiter."""
        loop = asyncio.get_running_loop()
        self._waiting = waiting = loop.create_future()
        timer = loop.call_later(seconds, _settle, waiting)
        try:
            await waiting
        finally:
            timer.cancel()
            self._waiting = None

    async def _hold_lease(self) -> bool:
        if self._redis is None:
            import redis.asyncio as aioredis

            # Short timeouts: a hung Redis must not hold the driver past its lease.
            self._redis = aioredis.from_url(
                settings.REDIS_URL, socket_timeout=LEASE_MS / 3000, socket_connect_timeout=LEASE_MS / 3000
            )
        return bool(await self._redis.eval(_ACQUIRE_OR_RENEW, 1, self._key, self.process_id, LEASE_MS))

    async def _renew(self) -> bool:
        """Whether we hold the lease now; False (logged once per outage) when Redis fails."""
        try:
            held = await self._hold_lease()
        except Exception as exc:
            if not self._redis_down:
                log.warning("match %s: driver lease unavailable (%r); not driving until Redis answers",
                            self.match_id, exc)  # fmt: skip
            self._redis_down = True
            return False
        if self._redis_down:
            log.warning("match %s: Redis answers again", self.match_id)
            self._redis_down = False
        return held

    async def _take_over(self) -> None:
        """Start driving: stop the clock for the time nobody drove, then read the deadline."""
        applied = await live_db(store.resume_after_gap)(match_id=self.match_id, since=None)
        if applied.events:
            log.warning("match %s: clock stopped for %.1fs nobody drove it",
                        self.match_id, applied.events[-1]["data"].get("shift", 0.0))  # fmt: skip
        self.deadline = applied.next_deadline

    def _plan(self, due: float) -> ticks.PlannedTick | None:
        try:
            return ticks.plan_tick(self.match_id, due)
        except Exception:  # the Tick itself, when due, computes afresh and reports what fails
            log.exception("match %s: computing the next Tick ahead failed", self.match_id)
            return None

    async def _run(self) -> None:
        renew_at = beat_at = 0.0
        planned: ticks.PlannedTick | None = None
        planned_for: float | None = None  # the deadline ``planned`` was computed for (None: none)
        while not self._stopping:
            now = time.time()
            if now >= renew_at:
                renew_at = now + LEASE_MS / 3000
                held = await self._renew()
                if held and not self.holding:
                    try:
                        await self._take_over()
                    except Exception:
                        log.exception("match %s: taking over the reading failed; retrying", self.match_id)
                        held = False
                    beat_at = 0.0
                elif held and self.deadline is None:
                    # A broadcast we missed (another process applied Resume, Next…) must not
                    # stall the reading: trust the database.
                    with contextlib.suppress(Exception):
                        self.deadline = await live_db(_load_deadline)(self.match_id)
                self.holding = held
            if self.holding and self.deadline is not None and now >= beat_at:
                beat_at = now + HEARTBEAT_S
                try:
                    await live_db(_heartbeat)(self.match_id, now)
                except Exception:
                    log.exception("match %s: driver heartbeat failed", self.match_id)
            now = time.time()  # the awaits above took time (a renewal under load: 100s of ms)
            wait = renew_at - now
            if self.holding and self.deadline is not None:
                due = self.deadline
                if planned_for != due and 0 < due - now <= PLAN_AHEAD_S:
                    planned, planned_for = self._plan(due), due
                    now = time.time()
                ahead = 0.0 if planned_for == due else PLAN_AHEAD_S
                wait = min(wait, beat_at - now, due - ahead - now)
            if wait > 0:
                if self._stopping:
                    return
                await self._sleep(wait)
                continue
            if self.holding and self.deadline is not None and time.time() >= self.deadline:
                try:
                    ahead = planned if planned_for == self.deadline else None
                    planned = planned_for = None
                    applied = await ticks.tick_on_loop(self.match_id, TICK_CONNECTIONS.execute, planned=ahead)
                    if applied is None:
                        applied = await live_db(ticks.tick)(self.match_id)
                    self.deadline = applied.next_deadline
                    if applied.events:  # storing them moved Match.driven_at: no heartbeat due yet
                        beat_at = time.time() + HEARTBEAT_S
                    if self.deadline is not None:
                        # The next Tick is the clock's alone unless something else moves the
                        # row first (then it is computed afresh when due): computed now, on the
                        # row just written, the driver wakes once for it, at its deadline.
                        planned, planned_for = self._plan(self.deadline), self.deadline
                except Exception:
                    log.exception("match %s: tick failed", self.match_id)
                    await asyncio.sleep(RETRY_S)


def _settle(waiting: asyncio.Future[None]) -> None:
    if not waiting.done():
        waiting.set_result(None)


def _heartbeat(match_id: int, now: float) -> None:
    # Only this column: the state is written under the row lock by the service alone.
    Match.objects.filter(pk=match_id).update(driven_at=now)


def _load_deadline(match_id: int) -> float | None:
    return selectors.next_deadline(match_id)  # Match.state is only the live part now
