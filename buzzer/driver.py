"""The reading driver: applies ``Tick`` at the engine's ``next_deadline``.

Any process with a room for the match may drive it, but only the holder of a Redis lease
does, so words are revealed once however many processes serve the match; if that process
dies, another takes over when the lease expires.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import time
import uuid
from typing import Any

from channels.db import database_sync_to_async
from django.conf import settings

from competition import game, services
from competition.models import Match

log = logging.getLogger(__name__)

LEASE_MS = 3000
# Take the lease if free, renew it if ours: one atomic step, so two processes never both
# believe they hold it.
_ACQUIRE_OR_RENEW = """
local holder = redis.call('get', KEYS[1])
if not holder then redis.call('set', KEYS[1], ARGV[1], 'PX', ARGV[2]) return 1 end
if holder == ARGV[1] then redis.call('pexpire', KEYS[1], ARGV[2]) return 1 end
return 0
"""
# A deadline missed by more than this means nobody was driving: stop the clock instead of
# replaying the gap (see Driver._stop_the_clock_while_away).
CATCH_UP_LIMIT = 1.0
PROCESS_ID = uuid.uuid4().hex


class Driver:
    """Applies ``Tick`` when the match's next deadline passes, while holding the lease."""

    def __init__(self, match_id: int):
        self.match_id = match_id
        self.deadline: float | None = None
        self._wake = asyncio.Event()
        self._task: asyncio.Task | None = None
        self._redis: Any = None
        self._key = f"tossup:driver:{match_id}"
        self.process_id = PROCESS_ID  # the lease owner's name (tests run two "processes" in one)

    def start(self) -> None:
        self._task = asyncio.create_task(self._run())

    async def stop(self) -> None:
        if self._task:
            self._task.cancel()
            with contextlib.suppress(BaseException):
                await self._task
        if self._redis is not None:
            with contextlib.suppress(Exception):
                if await self._redis.get(self._key) == self.process_id.encode():
                    await self._redis.delete(self._key)
                await self._redis.aclose()

    def wake(self, deadline: float | None) -> None:
        self.deadline = deadline
        self._wake.set()

    async def _hold_lease(self) -> bool:
        if self._redis is None:
            import redis.asyncio as aioredis

            self._redis = aioredis.from_url(settings.REDIS_URL)
        return bool(await self._redis.eval(_ACQUIRE_OR_RENEW, 1, self._key, self.process_id, LEASE_MS))

    async def _run(self) -> None:
        self.deadline = await database_sync_to_async(_load_deadline)(self.match_id)
        renew_at = 0.0
        holding = False
        while True:
            now = time.time()
            if now >= renew_at:
                was_holding = holding
                try:
                    holding = await self._hold_lease()
                except Exception:  # Redis hiccup: try again shortly, never crash the room
                    log.exception("driver lease for match %s", self.match_id)
                    holding = False
                renew_at = now + LEASE_MS / 3000
                if holding and (not was_holding or self.deadline is None):
                    # Another process may have driven until now: re-read the deadline.
                    self.deadline = await database_sync_to_async(_load_deadline)(self.match_id)
            wait = renew_at - now
            if holding and self.deadline is not None:
                wait = min(wait, self.deadline - now)
            if wait > 0:
                self._wake.clear()
                with contextlib.suppress(TimeoutError):
                    await asyncio.wait_for(self._wake.wait(), timeout=wait)
                continue
            if holding and self.deadline is not None and time.time() >= self.deadline:
                try:
                    if time.time() - self.deadline > CATCH_UP_LIMIT:
                        # Our copy may be stale (no broadcast reached us): trust the database.
                        self.deadline = await database_sync_to_async(_load_deadline)(self.match_id)
                        if self.deadline is None:
                            continue
                        if time.time() - self.deadline > CATCH_UP_LIMIT:
                            await self._stop_the_clock_while_away(self.deadline)
                    applied = await database_sync_to_async(services.apply_command)(
                        match_id=self.match_id, command=game.Tick(), actor="driver"
                    )
                    self.deadline = applied.next_deadline
                except Exception:
                    log.exception("tick failed for match %s", self.match_id)
                    await asyncio.sleep(0.5)

    async def _stop_the_clock_while_away(self, since: float) -> None:
        """Nobody drove the match since ``since`` (a server restart, every client gone):
        pause it then and resume it now, so overdue words, answer windows and timers carry on
        where they stopped instead of all firing at once. Logged as ``paused``/``resumed``
        by the driver."""
        apply = database_sync_to_async(services.apply_command)
        try:
            await apply(match_id=self.match_id, command=game.Pause(), actor="driver", now=since)
            await apply(match_id=self.match_id, command=game.Resume(), actor="driver")
        except game.RuleViolation as exc:  # e.g. the match ended meanwhile: just tick
            log.info("match %s: no catch-up pause (%s)", self.match_id, exc.reason)


def _load_deadline(match_id: int) -> float | None:
    state = Match.objects.values_list("state", flat=True).get(pk=match_id)
    return game.MatchState.from_dict(state).next_deadline
