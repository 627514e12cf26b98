"""The websocket edge: authenticate, validate frames, call a service, answer.

Thin by design: every change goes through ``competition.services``; events reach the
client through the per-process :class:`buzzer.rooms.Room`. Bad input gets an ``error``
frame and changes nothing (docs/PROTOCOL.md); a frame over the size limit closes the
connection (1009) unread. Every other frame gets an answer (``ack``,
``pong``, ``snapshot`` or ``error``; a ``heartbeat_ack`` is itself the answer to the server's
heartbeat), an unexpected fault included: it is logged and answered ``internal`` (or
``unavailable`` when the database or Redis is down), and the connection lives on.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import logging
import time
import uuid
from collections import deque
from typing import TYPE_CHECKING, Any
from urllib.parse import parse_qs

import redis.exceptions
from channels.consumer import get_handler_name
from channels.exceptions import StopConsumer
from channels.generic.websocket import AsyncWebsocketConsumer
from django.db import InterfaceError, OperationalError
from django.utils import timezone

from buzzer import presence, protocol
from buzzer.dbpools import connect_db, live_db
from buzzer.protocol import FrameType
from buzzer.rooms import SEND_TIMEOUT, SLOW_CONSUMER, Room
from competition import game, selectors, services, spectators
from competition.errors import TossupError
from competition.models import Match, Player
from competition.vocabulary import PATH_ROLES, MatchStatus, Role

if TYPE_CHECKING:
    from competition.live.store import Applied

log = logging.getLogger(__name__)

# Faults of the services the edge depends on, answered ``unavailable`` rather than ``internal``.
OUTAGES = (
    OperationalError,
    InterfaceError,
    redis.exceptions.ConnectionError,
    redis.exceptions.TimeoutError,
    OSError,
)


TOO_LARGE = 4413  # close code for a frame over the limit where 1009 cannot be sent (4000 + HTTP 413)


class ClientGone(ConnectionError):
    """The client closed its connection before a frame to it could be sent: an ordinary
    disconnect, not a fault."""


def error_frame(error: TossupError, ref: Any = None) -> str:
    """The one translation of the error family to the wire: ``{"type": "error", "code", "message",
    "ref", "extra"?}`` (``extra`` only when the error has facts to give). A rule refusal carries its
    own code (e.g. ``locked_out``); ``ref`` echoes the client frame's (None when unknown)."""
    return json.dumps({"type": "error", **error.to_dict(), "ref": ref})


def _authenticate(code: str, role: Role, token: str) -> tuple[int, Player | None] | None:
    match = Match.objects.filter(join_code=code.upper()).only("id", "moderator_token").first()
    if match is None:
        return None
    if role is Role.SPECTATOR:
        return match.id, None
    if role is Role.MODERATOR:
        return (match.id, None) if token and token == match.moderator_token else None
    player = Player.objects.filter(match=match, token=token).first() if token else None
    if player is None:
        return None
    if player.first_connected_at is None:  # the seat joined the match: it counts in the fits
        Player.objects.filter(id=player.id, first_connected_at__isnull=True).update(
            first_connected_at=timezone.now()
        )
    return match.id, player


class MatchConsumer(AsyncWebsocketConsumer):
    """One connection of a player (human or bot seat), the moderator or a spectator (the path's
    ``play``, ``moderate`` or ``watch``)."""

    # Seat frames (buzz, answer, bonus_answer) per seat across all its sockets in this process.
    seat_limiter = protocol.SeatLimiter()

    async def __call__(self, scope: dict[str, Any], receive: Any, send: Any) -> None:
        """Channels' loop without a channel layer: events arrive through the process's Room
        (one subscription per match), so a connection has no channel of its own, and one made
        while Redis is down reaches connect() and gets ``unavailable``, not a 500. Each client
        message is awaited and dispatched in turn, as Channels does, but not through a task
        and an ``asyncio.wait`` of its own (about ten objects more per open connection for
        every full collection to walk, and a task per message)."""
        self.scope = scope
        self.channel_layer = None
        self.base_send = send
        with contextlib.suppress(StopConsumer):
            while True:
                await self.dispatch(await receive())

    async def dispatch(self, message: dict[str, Any]) -> None:
        """Channels' dispatch without its ``aclose_old_connections()`` before every message: a
        hop to asgiref's one thread-sensitive thread per frame (every buzz waited behind a burst
        of connecting clients' hops there). This consumer touches the database only through
        ``buzzer.dbpools``' pools, whose threads check their own connections."""
        handler = getattr(self, get_handler_name(message), None)
        if handler is None:
            raise ValueError(f"No handler for message type {message['type']}")
        await handler(message)

    async def websocket_receive(self, message: dict[str, Any]) -> None:
        """Channels' handler with the protocol's frame limit enforced here too: the launcher's
        uvicorn refuses a frame over :data:`~buzzer.protocol.MAX_FRAME_BYTES` before reading it,
        but a server started without its flags (plain uvicorn: 16 MiB; daphne: 1 MiB) hands
        it on. Such a frame is not parsed: the connection is closed with 1009, as the launcher's
        server closes it (daphne: :data:`TOO_LARGE`), and the consumer ends."""
        text = message.get("text")
        if text is None:
            data = message.get("bytes") or b""
            if len(data) > protocol.MAX_FRAME_BYTES:
                await self._close_oversized()
                return
            await self.receive(bytes_data=data)
            return
        size = len(text)
        # At most 4 UTF-8 bytes a character: only a frame parse() refuses anyway is encoded.
        if size > protocol.MAX_FRAME and (
            size > protocol.MAX_FRAME_BYTES
            or len(text.encode("utf-8", "surrogatepass")) > protocol.MAX_FRAME_BYTES
        ):
            await self._close_oversized()
            return
        await self.receive(text_data=text)

    async def _close_oversized(self) -> None:
        """Close with 1009 (message too big), or TOO_LARGE where the server lets an application
        close only with 1000 or 3000-4999 (daphne's autobahn raises), and leave as if the
        client had disconnected."""
        limit = protocol.MAX_FRAME_BYTES
        log.info("match %s: a %s sent a frame over %s bytes: closed", self.match_id, self.role, limit)
        for code in (1009, TOO_LARGE):
            try:
                await self.close(code=code, reason=f"frame larger than {limit} bytes")
                break
            except Exception:
                continue
        await self.disconnect(code)
        raise StopConsumer()

    async def websocket_disconnect(self, message: dict[str, Any]) -> None:
        """Channels' handler without its ``aclose_old_connections()`` hop (see :meth:`dispatch`):
        when a room of tablets dropped off the Wi-Fi at once, 1,000 hops queued there."""
        await self.disconnect(message.get("code", 1005))
        raise StopConsumer()

    async def connect(self) -> None:
        kwargs = self.scope["url_route"]["kwargs"]
        self.role: Role = PATH_ROLES[kwargs["role"]]
        self.room: Room | None = None
        self._heartbeat: asyncio.Task | None = None
        self._presence: asyncio.Task | None = None  # a moderator's presence frames
        self.connection = uuid.uuid4().hex
        self._accepted = False
        self.match_id = 0  # until authenticated (never a real match id)
        query = parse_qs(self.scope.get("query_string", b"").decode(errors="replace"))
        token = (query.get("token") or [""])[0]
        try:
            auth = await connect_db(_authenticate)(kwargs["code"], self.role, token)
        except Exception:
            log.exception("connect: cannot authenticate (database down?)")
            await self._refuse_unavailable()
            return
        self._accepted = True
        await self.accept()
        if auth is None:
            await self._error("forbidden", "unknown join code or bad token")
            await self.close(code=4403)
            return
        self.match_id, self.player = auth[0], auth[1]
        self.presence_match = presence.match_key(self.match_id, kwargs["code"])
        self.audiences = selectors.audiences_for(self.role, self.player)
        self.last_seq = -1  # the last event seq sent to this connection (or its snapshot's)
        self._pending: list[tuple[int, str]] | None = []  # events that raced the snapshot
        self._snapshot_lock = asyncio.Lock()
        self._beats: deque[float] = deque(maxlen=4)  # server_time of recent heartbeats
        self.limiter = protocol.RateLimiter()
        self.clock = protocol.ClockEstimator()
        self.feed = spectators.OPEN  # what a spectator may see (competition.spectators)
        self._feed_over = False  # the game has ended: its scores are no longer live
        try:
            if self.role is Role.SPECTATOR:
                self.feed = await connect_db(spectators.match_policy)(self.match_id)
            self.room = await Room.join(self.match_id, self)
            await self._send_snapshot()
        except ClientGone:
            log.info("match %s: a %s closed before its snapshot was sent", self.match_id, self.role)
            await self._leave_room()
            return
        except Exception:
            log.exception("connect: match %s's event stream or database is unavailable", self.match_id)
            await self._leave_room()
            await self._refuse_unavailable()
            return
        self._heartbeat = asyncio.create_task(self._beat())
        if self.role is Role.MODERATOR and (query.get("presence") or [""])[0] == "1":
            self._presence = asyncio.create_task(self._watch_presence())

    async def _refuse_unavailable(self) -> None:
        """Answer a connection the server cannot serve now: an error frame, then close 1011
        (the client retries), never a failed handshake."""
        with contextlib.suppress(Exception):
            if not self._accepted:
                self._accepted = True
                await self.accept()
            await self._error("unavailable", "the match's event stream is unavailable; try again shortly")
            await self.close(code=1011)

    async def disconnect(self, code: int) -> None:
        if self._heartbeat is not None:
            self._heartbeat.cancel()
        if self._presence is not None:
            self._presence.cancel()
        if self._heartbeat is not None and self.player is not None:  # a seat that was connected
            try:
                async with asyncio.timeout(presence.WRITE_TIMEOUT):
                    await presence.leave(self.presence_match, self.player.id, self.connection, time.time())
            except Exception:  # presence is advisory: the seat shows as connected until its entry goes stale
                log.warning("match %s: could not record seat %s leaving", self.match_id, self.player.id)
        # A cancelled task keeps its CancelledError, whose traceback holds the task's frame and
        # so this consumer: dropping the tasks lets the connection be freed when it closes
        # instead of waiting, with all it holds, for a full collection.
        self._heartbeat = self._presence = None
        await self._leave_room()

    async def _mark_present(self, player_id: int) -> None:
        """Register or refresh this player connection in the seat presence (buzzer.presence).
        Advisory: when Redis does not answer, the connection lives on."""
        try:
            async with asyncio.timeout(presence.WRITE_TIMEOUT):
                await presence.beat(self.presence_match, player_id, self.connection, time.time())
        except Exception:
            log.warning("match %s: could not record seat %s present", self.match_id, player_id)

    async def _watch_presence(self) -> None:
        """A moderator's ``presence`` frames: the seats' connection states, sent when they change."""
        last: list[dict[str, Any]] | None = None
        while True:
            try:
                frame = await presence.read(self.presence_match, time.time())
                if frame["seats"] != last:
                    last = frame["seats"]
                    async with asyncio.timeout(SEND_TIMEOUT):
                        await self.send(text_data=json.dumps(frame))
            except asyncio.CancelledError:
                raise
            except Exception:  # Redis away or a closing socket: try again on the next round
                log.info("match %s: presence not sent", self.match_id)
            await asyncio.sleep(presence.POLL_INTERVAL)

    async def _leave_room(self) -> None:
        room, self.room = self.room, None
        if room is not None:
            try:
                await room.leave(self)
            except Exception:
                log.exception("match %s: leaving the room failed", room.match_id)

    # --- the room's side (buzzer.rooms.Member) --------------------------------------------------
    async def push(self, seq: int, text: str) -> None:
        """Called by the room, in order, for each event this connection may see."""
        if self._pending is not None:
            self._pending.append((seq, text))
        elif seq > self.last_seq:
            await self.send(text_data=text if self.feed.open else self._for_spectator(text))
            self.last_seq = max(self.last_seq, seq)

    def _for_spectator(self, text: str) -> str:
        """An event frame through the tournament's spectator allow-list (competition.spectators)."""
        frame = json.loads(text)
        if frame.get("type") != "event":
            return text
        if frame["event"] == game.EventName.MATCH_ENDED:
            self._feed_over = True
        data = spectators.event_data(frame["event"], frame.get("data") or {}, self.feed, over=self._feed_over)
        return json.dumps({"type": "event", "seq": frame["seq"], "event": frame["event"], "data": data})

    async def resync(self) -> None:
        """Called by the room when events may have been missed (Redis was away)."""
        await self._send_snapshot()

    async def evict(self, code: int) -> None:
        """Called by the room after dropping this connection (too slow, or failing)."""
        if self._heartbeat is not None:
            self._heartbeat.cancel()
        if self._presence is not None:
            self._presence.cancel()
        await self.close(code=code)

    async def _send_snapshot(self) -> None:
        async with self._snapshot_lock:
            self._pending = []
            try:
                snap = await connect_db(selectors.snapshot)(self.match_id, self.role, self.player)
                self._feed_over = self._feed_over or snap["state"].get("status") == MatchStatus.ENDED
                await self._answer(json.dumps(snap))
                self.last_seq = snap["seq"]
            finally:
                pending, self._pending = self._pending, None
            for seq, text in pending:
                await self.push(seq, text)

    async def _beat(self) -> None:
        """Heartbeats every HEARTBEAT_INTERVAL: they prove the server alive to the client,
        tell it the last seq sent (a gap → resync) and measure the round trip (its ack)."""
        while True:
            now = time.time()
            self._beats.append(now)
            frame = json.dumps({"type": "heartbeat", "server_time": now, "seq": self.last_seq})
            try:
                async with asyncio.timeout(SEND_TIMEOUT):
                    await self.send(text_data=frame)
            except Exception:  # a stuck or closed socket: close it, its disconnect leaves the room
                log.info("match %s: heartbeat not sent; closing the connection", self.match_id)
                with contextlib.suppress(Exception):
                    async with asyncio.timeout(SEND_TIMEOUT):
                        await self.close(code=SLOW_CONSUMER)
                return
            if self.player is not None:  # each heartbeat refreshes the seat's presence
                await self._mark_present(self.player.id)
            await asyncio.sleep(protocol.HEARTBEAT_INTERVAL)

    # --- client frames ----------------------------------------------------------------------------
    async def _error(self, code: str, message: str, ref: Any = None) -> None:
        """Refuse with one of the edge's own codes (``protocol.FRAME_ERROR_CODES``)."""
        await self._refuse(protocol.ProtocolError(code, message, ref), ref)

    async def _refuse(self, error: TossupError, ref: Any = None) -> None:
        await self._answer(error_frame(error, ref))

    async def _answer(self, text: str) -> None:
        """Send the answer to a client frame. Raises ClientGone when the client has closed
        meanwhile (ASGI servers raise an OSError for a send on a closed connection)."""
        try:
            await self.send(text_data=text)
        except OSError as exc:
            raise ClientGone(repr(exc)) from None

    async def receive(self, text_data: str | None = None, bytes_data: bytes | None = None) -> None:
        """Answer one client frame; never raises (an escaping exception would end the
        connection's handler without leaving the room)."""
        self._ref: Any = None
        try:
            await self._receive(text_data)
        except ClientGone as exc:  # an ordinary disconnect: what the frame changed is stored
            log.info(
                "match %s: a %s closed before its answer was sent (ref %.64r; %s)",
                self.match_id,
                self.role,
                self._ref,
                exc,
            )
        except Exception as exc:
            outage = isinstance(exc, OUTAGES)
            log.exception("match %s: unexpected fault on a %s frame", self.match_id, self.role)
            with contextlib.suppress(Exception):
                if outage:
                    await self._error(
                        "unavailable",
                        "the server cannot reach its database or Redis; retry shortly",
                        self._ref,
                    )
                else:
                    await self._error("internal", "the server failed on this frame; it was logged", self._ref)

    async def _receive(self, text_data: str | None) -> None:
        now = time.time()
        if self.room is None:  # refused at connect, closing
            await self._error("forbidden", "this connection is not in a match")
            return
        if not self.limiter.allow(now):
            log.warning("rate limited: match %s %s", self.match_id, self.role)
            await self._error("rate_limited", "too many messages; slow down")
            return
        try:
            msg = protocol.parse(text_data, self.role)
        except protocol.ProtocolError as exc:
            await self._refuse(exc, exc.ref)
            return
        ref = self._ref = msg.get("ref")
        kind = msg["type"]
        if kind == FrameType.HEARTBEAT_ACK:
            sent = msg["server_time"]
            if sent in self._beats:  # only our own heartbeats: a forged echo measures nothing
                self._beats.remove(sent)
                self.clock.add_rtt(now - sent)
            return
        if kind == FrameType.PING:
            self.clock.add(msg["client_time"], now)
            await self._answer(
                json.dumps({"type": "pong", "client_time": msg["client_time"], "server_time": now})
            )
            return
        if kind == FrameType.RESYNC:
            await self._send_snapshot()
            return
        if (
            kind in protocol.SEAT_LIMITED
            and self.player is not None
            and not self.seat_limiter.allow((self.match_id, self.player.id), now)
        ):
            await self._error("rate_limited", "too many buzzes or answers from this seat; slow down", ref)
            return
        try:
            applied = await live_db(self._apply)(msg, now)
        except TossupError as exc:  # the rules' or the service's refusal, with its own code
            await self._refuse(exc, ref)
            return
        ack: dict[str, Any] = {"type": "ack", "ref": ref, "seq": applied.seq}
        if getattr(applied, "duplicate", False):
            ack["duplicate"] = True  # a repeated command id: applied once, earlier
        await self._answer(json.dumps(ack))

    def _apply(self, msg: dict[str, Any], now: float) -> Applied:
        kind = msg["type"]
        player_id = self.player.id if self.player is not None else None
        if kind == FrameType.BUZZ:
            return services.buzz(
                match_id=self.match_id,
                player_id=player_id,
                question_id=msg["question_id"],
                token_index=msg["token_index"],
                client_time=msg.get("client_time"),
                corrected_press_at=self.clock.to_server(msg.get("client_time"), now),
                delay_bound=self.clock.delay_bound,
                cost=msg.get("cost"),
                now=now,
            )
        if kind == FrameType.ANSWER:
            return services.answer(
                match_id=self.match_id,
                player_id=player_id,
                question_id=msg["question_id"],
                text=msg["text"],
                now=now,
            )
        if kind == FrameType.BONUS_ANSWER:
            return services.bonus_answer(
                match_id=self.match_id,
                player_id=player_id,
                bonus_id=msg["bonus_id"],
                part=msg["part"],
                text=msg["text"],
                now=now,
            )
        if kind in (FrameType.CONFIRM_BUZZ, FrameType.DECLINE_BUZZ):
            return services.confirm_buzz(
                match_id=self.match_id,
                bot_id=msg["bot_id"],
                confirm=kind == FrameType.CONFIRM_BUZZ,
                player_id=player_id,
                now=now,
            )
        if kind == FrameType.BONUS_SUGGESTION:
            return services.bonus_suggestion(
                match_id=self.match_id,
                player_id=player_id,
                bonus_id=msg["bonus_id"],
                part=msg["part"],
                guess=msg["guess"],
                confidence=msg["confidence"],
                explanation=msg.get("explanation", ""),
                now=now,
            )
        if kind == FrameType.BONUS_DECISION or (
            kind == FrameType.COMMAND and protocol.COMMANDS[msg["name"]].command is game.DecideBonus
        ):
            # A consult is judged by the service, as any bonus answer (moderator or captain).
            return services.decide_bonus(
                match_id=self.match_id,
                bonus_id=msg["bonus_id"],
                part=msg["part"],
                decision=msg["decision"],
                player_id=player_id,
                bot_id=msg.get("bot_id"),
                now=now,
                command_id=protocol.command_id(msg) if kind == FrameType.COMMAND else "",
            )
        if kind == FrameType.FLAG:
            reporter = self.player.name if self.player is not None else str(Role.MODERATOR)
            return services.flag_question(
                match_id=self.match_id,
                question_id=msg["question_id"],
                problem=msg["problem"],
                comment=msg.get("comment", ""),
                reporter=reporter,
                role=self.role,
            )
        return services.moderate(
            match_id=self.match_id,
            command=protocol.moderator_command(msg),
            now=now,
            command_id=protocol.command_id(msg),
            seen_seq=protocol.seen_seq(msg),
        )
