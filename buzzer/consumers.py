"""The websocket edge: authenticate, validate frames, call a service, answer.

Thin by design: every change goes through ``competition.services``; events reach the
client through the per-process :class:`buzzer.rooms.Room`. Bad input gets an ``error``
frame and changes nothing (docs/PROTOCOL.md).
"""

from __future__ import annotations

import json
import logging
import time
from typing import Any
from urllib.parse import parse_qs

from channels.db import database_sync_to_async
from channels.generic.websocket import AsyncWebsocketConsumer

from buzzer import protocol
from buzzer.rooms import Room
from competition import game, selectors, services
from competition.models import Match, Player

log = logging.getLogger(__name__)


def _authenticate(code: str, role: str, token: str) -> tuple[int, Player | None] | None:
    match = Match.objects.filter(join_code=code.upper()).first()
    if match is None:
        return None
    if role == "watch":
        return match.id, None
    if role == "moderate":
        return (match.id, None) if token and token == match.moderator_token else None
    player = Player.objects.filter(match=match, token=token).first() if token else None
    return (match.id, player) if player is not None else None


class MatchConsumer(AsyncWebsocketConsumer):
    """One connection: ``play`` (human or bot seat), ``moderate`` or ``watch``."""

    async def connect(self) -> None:
        kwargs = self.scope["url_route"]["kwargs"]
        self.role: str = kwargs["role"]
        query = parse_qs(self.scope.get("query_string", b"").decode())
        token = (query.get("token") or [""])[0]
        self.room: Room | None = None
        auth = await database_sync_to_async(_authenticate)(kwargs["code"], self.role, token)
        await self.accept()
        if auth is None:
            await self._error("forbidden", "unknown join code or bad token")
            await self.close(code=4403)
            return
        self.match_id, self.player = auth
        self.audiences = selectors.audiences_for(self.role, self.player)
        self.last_seq = -1
        self._pending: list[tuple[int, str]] | None = []  # events that raced the snapshot
        self.limiter = protocol.RateLimiter()
        self.clock = protocol.ClockEstimator()
        try:
            self.room = await Room.join(self.match_id, self)
        except RuntimeError as exc:
            log.error("%s", exc)
            await self._error("unavailable", "the match's event stream is unavailable; try again shortly")
            await self.close(code=1011)
            return
        await self._send_snapshot()

    async def disconnect(self, code: int) -> None:
        if self.room is not None:
            await self.room.leave(self)

    async def push(self, seq: int, text: str) -> None:
        """Called by the room for each event this connection may see."""
        if self._pending is not None:
            self._pending.append((seq, text))
        elif seq > self.last_seq:
            self.last_seq = seq
            await self.send(text_data=text)

    async def _send_snapshot(self) -> None:
        self._pending = []
        snap = await database_sync_to_async(selectors.snapshot)(self.match_id, self.role, self.player)
        await self.send(text_data=json.dumps(snap))
        self.last_seq = snap["seq"]
        pending, self._pending = self._pending, None
        for seq, text in pending:
            await self.push(seq, text)

    async def _error(self, code: str, message: str, ref: Any = None) -> None:
        await self.send(text_data=json.dumps({"type": "error", "code": code, "message": message, "ref": ref}))

    async def receive(self, text_data: str | None = None, bytes_data: bytes | None = None) -> None:
        now = time.time()
        if not self.limiter.allow(now):
            log.warning("rate limited: match %s %s", self.match_id, self.audiences)
            await self._error("rate_limited", "too many messages; slow down")
            return
        try:
            msg = protocol.parse(text_data, self.role)
        except protocol.ProtocolError as exc:
            await self._error(exc.code, exc.message, exc.ref)
            return
        ref = msg.get("ref")
        kind = msg["type"]
        if kind == "ping":
            self.clock.add(msg["client_time"], now)
            await self.send(
                text_data=json.dumps({"type": "pong", "client_time": msg["client_time"], "server_time": now})
            )
            return
        if kind == "resync":
            await self._send_snapshot()
            return
        try:
            applied = await database_sync_to_async(self._apply)(msg, now)
        except game.RuleViolation as exc:
            await self._error("rejected", exc.reason, ref)
            return
        except services.ServiceError as exc:
            await self._error(exc.code, exc.message, ref)
            return
        await self.send(text_data=json.dumps({"type": "ack", "ref": ref, "seq": applied.seq}))

    def _apply(self, msg: dict[str, Any], now: float) -> services.Applied:
        kind = msg["type"]
        player_id = self.player.id if self.player is not None else None
        if kind == "buzz":
            return services.buzz(
                match_id=self.match_id,
                player_id=player_id,
                question_id=msg["question_id"],
                token_index=msg["token_index"],
                client_time=msg.get("client_time"),
                corrected_press_at=self.clock.to_server(msg.get("client_time"), now),
                now=now,
            )
        if kind == "answer":
            return services.answer(
                match_id=self.match_id,
                player_id=player_id,
                question_id=msg["question_id"],
                text=msg["text"],
                now=now,
            )
        if kind == "bonus_answer":
            return services.bonus_answer(
                match_id=self.match_id,
                player_id=player_id,
                bonus_id=msg["bonus_id"],
                part=msg["part"],
                text=msg["text"],
                now=now,
            )
        if kind == "flag":
            reporter = self.player.name if self.player is not None else "moderator"
            return services.flag_question(
                match_id=self.match_id,
                question_id=msg["question_id"],
                problem=msg["problem"],
                comment=msg.get("comment", ""),
                reporter=reporter,
                role="player" if self.player is not None else "moderator",
            )
        return services.apply_command(
            match_id=self.match_id, command=protocol.moderator_command(msg), actor="moderator", now=now
        )
