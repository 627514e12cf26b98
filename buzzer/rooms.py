"""Per-process room fan-out and the reading driver.

Each server process subscribes ONCE per live match to the match's channel-layer group
(RedisPubSubChannelLayer) and fans each event out to its local websocket connections,
serialising the frame once. So a word costs one Redis message per process, not one
channel-layer hop per recipient (`python -m tools.bench_fanout`: 4× less CPU per word than
per-consumer group_send at 200 clients, 9–13× at 1,000).

Each room starts the match's reading driver (buzzer/driver.py).

No member can silence the room: a frame is written to each idle member in one pass; a member
whose send must wait gets a bounded queue drained by a task of its own, each send under a
timeout; a member that overflows, times out or fails is dropped on its own.
The subscription is supervised: a failure is logged and the room re-subscribes with backoff;
a probe round trip through Redis proves the subscription live, and after an outage (or a
gap in the event seqs it relays) the room tells every member to resync (fresh snapshot).
"""

from __future__ import annotations

import asyncio
import collections
import contextlib
import json
import logging
import time
import types
import uuid
import weakref
from collections.abc import Coroutine, Generator
from typing import Any, Protocol

import redis.exceptions
from asgiref.sync import async_to_sync
from channels.layers import get_channel_layer
from django.conf import settings

from buzzer.driver import Driver
from competition.live import store

log = logging.getLogger(__name__)

JOIN_TIMEOUT = 10.0  # seconds a connection waits for the room's first subscription
QUEUE_SIZE = 256  # frames waiting for one member before it is dropped as too slow
SEND_TIMEOUT = 5.0  # seconds one frame may take to a member
RESYNC_TIMEOUT = 30.0  # seconds a resync (a database read, then the snapshot) may take
CLOSE_TIMEOUT = 2.0  # seconds to close a dropped member's socket
PROBE_INTERVAL = 2.0  # seconds between round trips through Redis proving the subscription live
PROBE_TIMEOUT = 3.0  # a probe not back within this means the subscription is broken
BACKOFF = (0.25, 5.0)  # re-subscription backoff: first and largest wait, seconds
SLOW_CONSUMER = 4408  # close code for a member dropped for being too slow


# One Redis client per event loop (a client is bound to the loop it was made in), and the PING
# in flight on it: connections joining at once share one PING instead of opening a Redis
# connection each (a burst of hundreds made the PINGs themselves time out).
_pings: weakref.WeakKeyDictionary[asyncio.AbstractEventLoop, Any] = weakref.WeakKeyDictionary()
_probes: weakref.WeakKeyDictionary[asyncio.AbstractEventLoop, asyncio.Task] = weakref.WeakKeyDictionary()


async def _ping(client: Any) -> bool:
    """Whether ``client``'s Redis answers a PING. A pooled connection can outlive the Redis it
    was made to (restarted, or its host gone without closing the socket: the process learns it
    only when it writes): a PING that fails to connect or on a broken connection is tried once
    more on a new connection, and only a second failure (or a timeout) means Redis is down."""
    for _ in range(2):
        try:
            return bool(await client.ping())
        except redis.exceptions.ConnectionError:
            with contextlib.suppress(Exception):
                await client.connection_pool.disconnect()  # no connection to the old Redis reused
        except Exception:  # a timeout: Redis did not answer within socket_timeout
            return False
    return False


async def _redis_answers() -> bool:
    """Whether Redis answers a PING within a second, or two when the first PING found a broken
    connection (the channel layer's own connections reconnect silently, so they cannot tell)."""
    loop = asyncio.get_running_loop()
    client = _pings.get(loop)
    if client is None:
        import redis.asyncio as aioredis

        client = _pings[loop] = aioredis.from_url(
            settings.REDIS_URL, socket_timeout=1.0, socket_connect_timeout=1.0
        )
    probe = _probes.get(loop)
    if probe is None or probe.done():
        probe = _probes[loop] = loop.create_task(_ping(client))
    return await asyncio.shield(probe)  # a caller cancelled does not cancel the others' PING


_senders: set[asyncio.Task] = set()  # rooms' outgoing senders, alive until their queue is sent


def _running_loop() -> asyncio.AbstractEventLoop | None:
    """The event loop running in this thread, or None (a database thread)."""
    try:
        return asyncio.get_running_loop()
    except RuntimeError:
        return None


def group_name(match_id: int) -> str:
    return f"match.{match_id}"


def publish(
    match_id: int, events: list[dict[str, Any]], next_deadline: float | None, frames: list[str] | None = None
) -> None:
    """Send committed events to every process serving the match (called on commit through
    ``competition.signals.events_committed``, wired in ``buzzer.apps``). ``frames``: the
    events' websocket frames as text (``competition.live.store.event_frame``), if the writer
    built them; else they are built here, once for every process: the message carries them."""
    if frames is None:
        frames = [store.event_frame(ev["seq"], ev["event"], json.dumps(ev["data"])) for ev in events]
    message = {"type": "match.events", "events": events, "next_deadline": next_deadline, "frames": frames}
    room = Room.rooms.get(match_id)
    if room is not None:
        # This process's own members need not wait for the round trip through Redis: the room
        # relays at once (and skips the echo: seqs it has relayed), and its loop sends the
        # message on to the other processes while the caller goes on. Stored on the room's own
        # loop (the driver's words), the relay runs right here: no wake-up of the loop through
        # its self-pipe, no callback a loop iteration later.
        if _running_loop() is room.loop:
            room._publish(message)
            return
        try:
            room.loop.call_soon_threadsafe(room._publish, message)
            return
        except RuntimeError:  # the room's loop has closed
            pass
    layer, group = get_channel_layer(), group_name(match_id)
    loop = _running_loop()
    if loop is None:  # a database thread: it may wait for Redis
        async_to_sync(layer.group_send)(group, _for_redis(message))
        return
    # Stored from an event loop (the driver's tick, its room closed meanwhile): never block it.
    task = loop.create_task(layer.group_send(group, _for_redis(message)))
    _senders.add(task)
    task.add_done_callback(_sent)


def _for_redis(message: dict[str, Any]) -> dict[str, Any]:
    """``message`` as the processes' rooms read it through Redis: each event's seq and audience
    beside its frame (its data is in the frame). So no process packs, or unpacks, an event's
    data a second time, the echo of a process's own message included."""
    events = [{"seq": ev["seq"], "audience": ev["audience"]} for ev in message["events"]]
    return {**message, "events": events}


def _sent(task: asyncio.Task) -> None:
    _senders.discard(task)
    if not task.cancelled() and task.exception() is not None:
        log.warning("publishing events from the event loop failed: %r", task.exception())


class Member(Protocol):
    """A local connection as the room sees it. ``push`` sends one event frame; ``resync``
    sends a fresh snapshot (events may have been missed); ``evict`` closes the socket of a
    member the room dropped (websocket close ``code``)."""

    audiences: frozenset[str]

    async def push(self, seq: int, text: str) -> None: ...

    async def resync(self) -> None: ...

    async def evict(self, code: int) -> None: ...


_RESYNC = object()  # a queue item: send the member a snapshot


@types.coroutine
def _resume(coro: Coroutine[Any, Any, None], yielded: Any) -> Generator[Any, Any, None]:
    """Finish ``coro`` after its first suspension (which yielded ``yielded``) exactly as
    ``await coro`` would: what the awaiting task sends or throws in goes on to ``coro``."""
    while True:
        try:
            sent = yield yielded
        except GeneratorExit:
            coro.close()
            raise
        except BaseException as exc:  # cancellation, delivered as the task would deliver it
            try:
                yielded = coro.throw(exc)
            except StopIteration:
                return
        else:
            try:
                yielded = coro.send(sent)
            except StopIteration:
                return


class _Outlet:
    """One member's frames, in order. A frame to an idle member is written at once, in the
    room's pass over its members: a websocket send completes without waiting while the
    socket's write buffer is below its high-water mark. Only a send that must wait, and
    what comes after it, goes through a bounded queue drained by a task of the member's
    own, each send under a timeout; the task ends once the queue is empty. So a word to a
    room costs no task wake-up per member, and an idle connection holds no task."""

    def __init__(self, room: Room, member: Member):
        self.room, self.member = room, member
        self.queue: collections.deque[tuple[int, Any]] = collections.deque()
        self.task: asyncio.Task | None = None

    def offer(self, seq: int, item: Any) -> bool:
        """Send a frame now, or queue it (or ``_RESYNC``) behind a send that is waiting;
        False when the member is full. A send that fails drops the member."""
        if self.task is not None:
            if len(self.queue) >= QUEUE_SIZE:
                return False
            self.queue.append((seq, item))
        elif item is _RESYNC:
            self.queue.append((seq, item))
            self._start(None)
        else:
            push = self.member.push(seq, item)
            try:
                yielded = push.send(None)
            except StopIteration:
                return True
            except Exception as exc:
                self.room.drop(self.member, 1011, f"send failed: {exc!r}", gone=isinstance(exc, OSError))
                return True
            self._start(_resume(push, yielded))
        return True

    def _start(self, waiting: Any) -> None:
        self.task = asyncio.create_task(self._drain(waiting))

    async def _drain(self, waiting: Any) -> None:
        """Finish the send that had to wait, then send what queued behind it, in order."""
        member = self.member
        try:
            while waiting is not None or self.queue:
                timeout = SEND_TIMEOUT
                if waiting is None:
                    seq, item = self.queue.popleft()
                    if item is _RESYNC:
                        waiting, timeout = member.resync(), RESYNC_TIMEOUT
                    else:
                        waiting = member.push(seq, item)
                async with asyncio.timeout(timeout):
                    await waiting
                waiting = None
        except TimeoutError:
            self.room.drop(member, SLOW_CONSUMER, "a send timed out")
        except Exception as exc:  # any member fault ends that member only
            self.room.drop(member, 1011, f"send failed: {exc!r}", gone=isinstance(exc, OSError))
        finally:
            self.task = None


class Room:
    """The local members of one match in this process, one subscription, one driver.

    ``resubscriptions`` counts recoveries of the subscription; ``resyncs`` the times every
    member was told to resync; ``dropped`` the members removed for failing."""

    rooms: dict[int, Room] = {}

    def __init__(self, match_id: int):
        self.match_id = match_id
        self.members: set[Member] = set()
        self._outlets: dict[Member, _Outlet] = {}
        self._ready = asyncio.Event()
        self._tasks: set[asyncio.Task] = set()  # evictions in flight (strong references)
        self.last_seq: int | None = None  # highest event seq relayed
        # Set when every member was told to resync: their snapshots cover whatever was missed,
        # so the next event is no gap whatever its seq.
        self._resynced = False
        self.resubscriptions = self.resyncs = self.dropped = 0
        self._backoff = BACKOFF[0]
        self.driver = Driver(match_id)
        self.loop = asyncio.get_running_loop()
        self._listener = asyncio.create_task(self._listen())
        # Messages of this process's commits for the other processes, sent in commit order by
        # one task that outlives the room until they are sent.
        self._outgoing: asyncio.Queue[dict[str, Any] | None] = asyncio.Queue()
        self._sender = asyncio.create_task(self._send_outgoing())
        _senders.add(self._sender)
        self._sender.add_done_callback(_senders.discard)

    @classmethod
    async def join(cls, match_id: int, member: Member) -> Room:
        """Add ``member`` to the match's room (created on first use) once it is subscribed.
        Raises RuntimeError when the subscription is not live within JOIN_TIMEOUT (Redis down)."""
        room = cls.rooms.get(match_id)
        if room is None:
            room = cls.rooms[match_id] = Room(match_id)
        elif not await _redis_answers():
            # The room's probe notices an outage only within PROBE_INTERVAL + PROBE_TIMEOUT:
            # a newcomer must not be told all is well meanwhile.
            raise RuntimeError(f"Redis does not answer: match {match_id}'s event stream is down")
        room.members.add(member)
        try:
            await asyncio.wait_for(room._ready.wait(), timeout=JOIN_TIMEOUT)
        except TimeoutError:
            await room.leave(member)
            raise RuntimeError(
                f"could not subscribe to match {match_id}'s channel group (is Redis up?)"
            ) from None
        return room

    async def leave(self, member: Member) -> None:
        """Remove ``member`` (idempotent); the last one out closes the room."""
        self.members.discard(member)
        outlet = self._outlets.pop(member, None)
        if outlet is not None and outlet.task not in (None, asyncio.current_task()):
            outlet.task.cancel()
        if not self.members and Room.rooms.get(self.match_id) is self:
            del Room.rooms[self.match_id]
            self._listener.cancel()
            self._outgoing.put_nowait(None)  # the sender ends once what is queued is sent
            for other in self._outlets.values():
                if other.task is not None:
                    other.task.cancel()
            self._outlets.clear()
            await self.driver.stop()

    def drop(self, member: Member, code: int, reason: str, gone: bool = False) -> None:
        """Remove a failing member at once and close its socket in the background. ``gone``:
        its client had closed the connection (a send raised OSError, as ASGI servers do on a
        closed connection), an ordinary disconnect logged at INFO."""
        if member not in self.members:
            return
        self.dropped += 1
        # Out of the room at once: a failed member must not be sent the next frame (or
        # dropped again) before its eviction runs.
        self.members.discard(member)
        log.log(
            logging.INFO if gone else logging.WARNING,
            "match %s: dropping a member (%s; close %s)",
            self.match_id,
            reason,
            code,
        )
        task = asyncio.create_task(self._evict(member, code))
        self._tasks.add(task)
        task.add_done_callback(self._tasks.discard)

    async def _evict(self, member: Member, code: int) -> None:
        await self.leave(member)
        evict = getattr(member, "evict", None)
        if evict is not None:
            with contextlib.suppress(Exception, TimeoutError):
                async with asyncio.timeout(CLOSE_TIMEOUT):
                    await evict(code)

    def _outlet(self, member: Member) -> _Outlet:
        outlet = self._outlets.get(member)
        if outlet is None:
            outlet = self._outlets[member] = _Outlet(self, member)
        return outlet

    def resync_all(self) -> None:
        """Tell every member to fetch a fresh snapshot (after events may have been missed)."""
        self.resyncs += 1
        self._resynced = True
        for member in list(self.members):
            if getattr(member, "resync", None) is not None and not self._outlet(member).offer(-1, _RESYNC):
                self.drop(member, SLOW_CONSUMER, "send queue full")

    async def _listen(self) -> None:
        """Supervise the subscription: (re)subscribe, relay, and on any failure log it and
        try again with backoff; a recovery makes every member resync."""
        while True:
            try:
                await self._subscribe_and_relay()
            except asyncio.CancelledError:
                raise
            except Exception as exc:  # logged; the room lives on
                log.warning(
                    "match %s: room subscription failed (%r); retrying in %.2g s",
                    self.match_id,
                    exc,
                    self._backoff,
                )
            await asyncio.sleep(self._backoff)
            self._backoff = min(self._backoff * 2, BACKOFF[1])

    async def _subscribe_and_relay(self) -> None:
        layer = get_channel_layer()
        group = group_name(self.match_id)
        channel = await layer.new_channel()
        receiving: asyncio.Task | None = None
        try:
            await layer.group_add(group, channel)
            receiving = asyncio.create_task(layer.receive(channel))
            probe = uuid.uuid4().hex
            await layer.group_send(group, {"type": "room.probe", "probe": probe})
            # Live only once our own probe came back through Redis.
            receiving = await self._await_probe(layer, channel, receiving, probe)
            self._backoff = BACKOFF[0]
            if not self._ready.is_set():
                self._ready.set()
                self.driver.start()
            else:
                self.resubscriptions += 1
                log.warning("match %s: room re-subscribed; members resync", self.match_id)
                self.resync_all()
            await self._relay(layer, group, channel, receiving)
        finally:
            if receiving is not None:
                receiving.cancel()
            with contextlib.suppress(Exception, TimeoutError):
                async with asyncio.timeout(1.0):
                    await layer.group_discard(group, channel)

    async def _await_probe(
        self, layer: Any, channel: str, receiving: asyncio.Task, probe: str
    ) -> asyncio.Task:
        """Relay messages until ``probe`` returns; raise TimeoutError after PROBE_TIMEOUT."""
        deadline = time.monotonic() + PROBE_TIMEOUT
        while True:
            done, _ = await asyncio.wait({receiving}, timeout=max(0.0, deadline - time.monotonic()))
            if not done:
                raise TimeoutError(f"probe not echoed within {PROBE_TIMEOUT:g} s")
            message = receiving.result()
            receiving = asyncio.create_task(layer.receive(channel))
            if message.get("type") == "room.probe":
                if message.get("probe") == probe:
                    return receiving
            else:
                self._dispatch(message)

    async def _relay(self, layer: Any, group: str, channel: str, receiving: asyncio.Task) -> None:
        """Relay events until the subscription breaks (a probe not echoed in time, or the
        layer raising)."""
        while True:
            done, _ = await asyncio.wait({receiving}, timeout=PROBE_INTERVAL)
            if not done:
                probe = uuid.uuid4().hex
                async with asyncio.timeout(PROBE_TIMEOUT):
                    await layer.group_send(group, {"type": "room.probe", "probe": probe})
                receiving = await self._await_probe(layer, channel, receiving, probe)
                continue
            message = receiving.result()
            receiving = asyncio.create_task(layer.receive(channel))
            if message.get("type") != "room.probe":
                self._dispatch(message)

    def _publish(self, message: dict[str, Any]) -> None:
        """On the room's loop: relay a committed message of this process to its members now,
        and queue it for the other processes (through Redis)."""
        self._dispatch(message)
        self._outgoing.put_nowait(_for_redis(message))

    async def _send_outgoing(self) -> None:
        layer, group = get_channel_layer(), group_name(self.match_id)
        while (message := await self._outgoing.get()) is not None:
            try:
                await layer.group_send(group, message)
            except Exception as exc:  # stored anyway; other processes' members resync on the gap
                log.warning("match %s: publishing events %s.. failed: %r",
                            self.match_id, message["events"][0]["seq"], exc)  # fmt: skip

    def _dispatch(self, message: dict[str, Any]) -> None:
        """Send each event to the members allowed to see it (serialised once) and give the
        driver the message's next deadline. Never waits on a member. The frames are the
        message's own (``frames``: built once by the publisher, see :func:`publish`), or, in a
        message without them, serialised here once per event. A gap in the seqs (a
        publication lost while Redis was away, or two publications crossing) makes every
        member resync. A message whose events were all relayed already (the echo through
        Redis of what :func:`publish` relayed locally) is skipped, deadline and all."""
        try:
            events = message["events"]
            frames = message.get("frames")
            if not isinstance(frames, list) or len(frames) != len(events):
                frames = [None] * len(events)
            if self.last_seq is not None and any(ev["seq"] <= self.last_seq for ev in events):
                kept = [i for i, ev in enumerate(events) if ev["seq"] > self.last_seq]
                events, frames = [events[i] for i in kept], [frames[i] for i in kept]
            frames = [
                store.event_frame(ev["seq"], ev["event"], json.dumps(ev["data"])) if text is None else text
                for ev, text in zip(events, frames, strict=True)
            ]
            first = events[0]["seq"] if events else None
        except (KeyError, IndexError, TypeError):
            log.error("match %s: ignored a malformed channel message %.200r", self.match_id, message)
            return
        if first is None:  # the echo of what this process relayed (or an empty message): no news
            return
        # last_seq stays the highest seq relayed, a resync notwithstanding: an echo through Redis
        # that lags behind the local relay must still be skipped (forgetting it let each
        # lagging echo through, the next local event look like a gap, and the room resync
        # every member on every word).
        gap = self.last_seq is not None and not self._resynced and first != self.last_seq + 1
        if gap:
            log.warning(
                "match %s: seq gap (%s after %s); members resync", self.match_id, first, self.last_seq
            )
        for ev, text in zip(events, frames, strict=True):
            for member in list(self.members):
                if ev["audience"] in member.audiences and not self._outlet(member).offer(ev["seq"], text):
                    self.drop(member, SLOW_CONSUMER, "send queue full")
        self.last_seq = max(self.last_seq or 0, events[-1]["seq"])
        self._resynced = False
        # Only a message with news moves the driver's deadline: an echo that trails behind a
        # later word carries a deadline already past, which made the driver tick at once, reveal
        # nothing, and take the locked way (under load, on every echo).
        self.driver.wake(message.get("next_deadline"))
        if gap:
            self.resync_all()
