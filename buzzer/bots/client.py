"""Bot client SDK: plays a match over the player websocket protocol (docs/PROTOCOL.md).

A bot is a :class:`Guesser` plus :func:`run_bot`. The runner follows the tossup's revealed words, asks the
guesser on the newest word (in a worker thread, skipping words that arrived while it was thinking), buzzes
when the confidence reaches the threshold, answers its own granted buzz and prompts, and answers the bonus
parts of its own team. Candidate guesses leave the process only inside the bot's own ``answer`` and
``bonus_answer`` frames.

The connection is kept alive the way docs/PROTOCOL.md asks: heartbeats are answered at once, a heartbeat
whose seq is past the last applied one (an event was missed) asks for a ``resync``, and a server silent for
``SILENT_SERVER`` seconds, or a connection dropped by the server (close 1011, 4408, a broken socket), is
replaced by a new one with backoff; the bot's state is rebuilt from the new snapshot.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import logging
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any, Protocol, TypeVar, runtime_checkable

from websockets.asyncio.client import ClientConnection, connect
from websockets.exceptions import ConnectionClosed, ConnectionClosedOK, InvalidHandshake, InvalidStatus

logger = logging.getLogger(__name__)
T = TypeVar("T")
SILENT_SERVER = 15.0  # seconds without any frame (heartbeats come every 5 s) before reconnecting
BACKOFF = (0.5, 5.0)  # reconnection backoff: first and largest wait, seconds
FORBIDDEN = 4403  # the server's close code for a bad token: reconnecting cannot help


class Guesser(Protocol):
    """What a bot needs from a model. Both methods may be slow; they run in a worker thread."""

    def guess(self, text_so_far: str) -> tuple[str, float]:
        """Return ``(answer text, confidence in [0, 1])`` for the tossup words revealed so far."""
        ...

    def bonus_guess(self, leadin: str, part_text: str) -> str:
        """Return the answer to one bonus part."""
        ...


@runtime_checkable
class TossupAware(Protocol):
    """Optional: a guesser that wants the ``tossup_started`` data (e.g. a replay bot keyed by question id)."""

    def begin_tossup(self, data: dict[str, Any]) -> None:
        """Called with the ``tossup_started`` event data before any guess on that tossup."""
        ...


@dataclass
class _Tossup:
    question_id: Any
    words: list[str | None] = field(default_factory=list)
    team_locked: bool = False  # our team buzzed (or was ruled) on this tossup
    buzz_open: bool = True  # False while anyone's buzz waits for its ruling
    buzz_sent: bool = False  # our buzz is in flight and not yet answered by a buzz event or error
    answer: str = ""  # the guess that made us buzz; reused for prompts

    def revealed(self) -> int:
        """Number of contiguous revealed tokens from index 0."""
        for i, word in enumerate(self.words):
            if word is None:
                return i
        return len(self.words)


class _Bot:
    def __init__(
        self,
        ws: ClientConnection,
        guesser: Guesser,
        threshold: float,
        min_tokens: int,
        log: Callable[[str], None],
    ) -> None:
        self.ws = ws
        self.guesser = guesser
        self.threshold = threshold
        self.min_tokens = min_tokens
        self.log = log
        self.player_id: Any = None
        self.team_id: Any = None
        self.seq = 0
        self.tossup: _Tossup | None = None
        self.bonus: tuple[Any, str] | None = None  # (bonus_id, leadin) while our team is on a bonus
        self.bonus_answer = ""  # our last answer to the open bonus part (repeated on a prompt)
        self.new_words = asyncio.Event()
        self.stats = {
            "buzzes": 0,
            "correct": 0,
            "wrong": 0,
            "bonus_answers": 0,
            "bonus_correct": 0,
            "errors": 0,
        }

    async def send(self, frame: dict[str, Any]) -> None:
        await self.ws.send(json.dumps(frame))

    async def ask(self, method: Callable[..., T], *args: Any) -> T | None:
        """Run a guesser method in a worker thread; a failing guesser costs one answer, not the match."""
        try:
            return await asyncio.to_thread(method, *args)
        except Exception:
            logger.exception("guesser %s failed", getattr(method, "__name__", method))
            return None

    # --- tossup guessing -------------------------------------------------------------------------------
    async def guess_loop(self) -> None:
        """Guess on the newest revealed word whenever new words arrive; older words are skipped."""
        while True:
            await self.new_words.wait()
            self.new_words.clear()
            tossup = self.tossup
            if tossup is None or not self._may_buzz(tossup):
                continue
            count = tossup.revealed()
            if count == 0 or count < self.min_tokens:
                continue
            text = " ".join(w for w in tossup.words[:count] if w is not None)
            result = await self.ask(self.guesser.guess, text)
            if result is None:
                continue
            answer, confidence = result
            if self.tossup is not tossup or not self._may_buzz(tossup) or confidence < self.threshold:
                continue
            tossup.answer, tossup.buzz_sent = answer, True
            await self.send(
                {
                    "type": "buzz",
                    "question_id": tossup.question_id,
                    "token_index": count - 1,
                    "client_time": time.time(),
                    "ref": f"buzz:{tossup.question_id}",
                }
            )

    @staticmethod
    def _may_buzz(tossup: _Tossup) -> bool:
        return tossup.buzz_open and not tossup.team_locked and not tossup.buzz_sent

    async def answer(self, tossup: _Tossup) -> None:
        if not tossup.answer:  # granted after a resync: we lost the guess that made us buzz
            text = " ".join(w for w in tossup.words if w is not None)
            tossup.answer = (await self.ask(self.guesser.guess, text) or ("", 0.0))[0]
        await self.send({"type": "answer", "question_id": tossup.question_id, "text": tossup.answer})
        self.log(f"answered {tossup.answer!r} on question {tossup.question_id}")

    # --- frames ----------------------------------------------------------------------------------------
    async def on_snapshot(self, frame: dict[str, Any]) -> bool:
        """Rebuild from a snapshot; return True when the match is already over."""
        state = frame.get("state") or {}
        self.seq = frame.get("seq", self.seq)
        you = state.get("you") or {}
        self.player_id = you.get("player_id", self.player_id)
        self.team_id = you.get("team_id", self.team_id)
        if self.player_id is None:
            self.log("snapshot has no 'you': cannot tell own buzzes and bonuses apart")
        data = state.get("tossup")
        if not data or data.get("question_id") is None or data.get("outcome") is not None:
            self.tossup = None  # no tossup, or it has ended (answer revealed)
        else:
            tossup = self.tossup
            if tossup is None or tossup.question_id != data["question_id"]:
                tossup = _Tossup(data["question_id"])
            tossup.words = list(data.get("words_revealed") or [])
            tossup.team_locked = self.team_id is not None and _same(
                self.team_id, data.get("locked_teams") or []
            )
            buzz = data.get("buzz")
            tossup.buzz_open, tossup.buzz_sent = not buzz, False
            self.tossup = tossup
            if buzz and buzz.get("player_id") == self.player_id:
                tossup.team_locked = True
                await self.answer(tossup)
            self.new_words.set()
        bonus = state.get("bonus") or {}
        mine = bonus.get("team_id") is not None and bonus.get("team_id") == self.team_id
        self.bonus = (bonus.get("bonus_id", bonus.get("id")), bonus.get("leadin", "")) if mine else None
        return state.get("status") == "ended"

    async def on_event(self, name: str, data: dict[str, Any]) -> bool:
        """Handle one event; return True when the match is over."""
        tossup = self.tossup
        if name == "tossup_started":
            self.tossup = _Tossup(data.get("question_id"))
            if isinstance(self.guesser, TossupAware):
                self.guesser.begin_tossup(data)
        elif name == "words" and tossup is not None and data.get("question_id") == tossup.question_id:
            start, words = int(data.get("start", 0)), list(data.get("words") or [])
            if len(tossup.words) < start + len(words):
                tossup.words.extend([None] * (start + len(words) - len(tossup.words)))
            tossup.words[start : start + len(words)] = words
            self.new_words.set()
        elif name == "buzz" and tossup is not None and data.get("question_id") == tossup.question_id:
            tossup.buzz_open, tossup.buzz_sent = False, False
            if data.get("team_id") == self.team_id:
                tossup.team_locked = True
            if data.get("player_id") == self.player_id:
                self.stats["buzzes"] += 1
                await self.answer(tossup)
        elif name == "buzz_lost" and tossup is not None and data.get("question_id") == tossup.question_id:
            tossup.buzz_sent = False  # our buzz lost the race or was dropped; later words may earn another
        elif name == "prompt" and tossup is not None and data.get("player_id") == self.player_id:
            await self.answer(tossup)
        elif name == "buzz_ruled" and tossup is not None and data.get("question_id") == tossup.question_id:
            if data.get("player_id") == self.player_id:
                outcome = "correct" if data.get("ruling") == "correct" else "wrong"
                self.stats[outcome] += 1
            if data.get("team_id") == self.team_id:
                tossup.team_locked = True
            if data.get("ruling") != "correct":  # the other team may still buzz, even after the last word
                tossup.buzz_open = True
                self.new_words.set()
        elif name == "reading_resumed" and tossup is not None:
            tossup.buzz_open = True
            self.new_words.set()
        elif name == "tossup_ended":
            self.tossup = None
        elif name == "bonus_started":
            mine = self.team_id is not None and data.get("team_id") == self.team_id
            self.bonus = (data.get("bonus_id"), data.get("leadin", "")) if mine else None
        elif name == "bonus_part" and self.bonus is not None and data.get("bonus_id") == self.bonus[0]:
            self.bonus_answer = (
                await self.ask(self.guesser.bonus_guess, self.bonus[1], data.get("text", "")) or ""
            )
            await self.send(
                {
                    "type": "bonus_answer",
                    "bonus_id": self.bonus[0],
                    "part": data.get("part"),
                    "text": self.bonus_answer,
                }
            )
            self.stats["bonus_answers"] += 1
        elif name == "bonus_prompt" and self.bonus is not None and data.get("bonus_id") == self.bonus[0]:
            # No better guess to offer: the same answer again (a second prompt counts as wrong).
            await self.send(
                {
                    "type": "bonus_answer",
                    "bonus_id": self.bonus[0],
                    "part": data.get("part"),
                    "text": self.bonus_answer,
                }
            )
        elif name == "bonus_part_ruled" and self.bonus is not None and data.get("bonus_id") == self.bonus[0]:
            self.stats["bonus_correct"] += data.get("ruling") == "correct"
        elif name == "bonus_ended":
            self.bonus = None
        return name == "match_ended"

    async def on_frame(self, frame: dict[str, Any]) -> bool:
        kind = frame.get("type")
        if kind == "snapshot":
            return await self.on_snapshot(frame)
        if kind == "heartbeat":
            await self.send({"type": "heartbeat_ack", "server_time": frame.get("server_time")})
            seq = frame.get("seq")
            if isinstance(seq, int) and seq > self.seq:  # an event sent to us never arrived
                await self.send({"type": "resync", "after_seq": self.seq})
            return False
        if kind == "event":
            seq = frame.get("seq")
            # Gaps in seq are normal (moderator-only events are not sent to seats); the server
            # delivers in order, so only events already covered by a snapshot are skipped.
            if isinstance(seq, int):
                if seq <= self.seq:
                    return False
                self.seq = seq
            return await self.on_event(frame.get("event", ""), frame.get("data") or {})
        if kind == "error":
            self.stats["errors"] += 1
            self.log(f"server error {frame.get('code')}: {frame.get('message')} (ref {frame.get('ref')})")
            tossup = self.tossup
            if tossup is not None and frame.get("ref") == f"buzz:{tossup.question_id}":
                tossup.buzz_sent = False  # refused (e.g. locked out); we may buzz again on a later word
                if frame.get("code") == "team_already_buzzed":
                    tossup.team_locked = True  # a teammate got there first: this tossup is done for us
        return False


def _same(value: Any, items: list[Any]) -> bool:
    """Membership that tolerates ids serialised as strings (JSON object keys)."""
    return str(value) in {str(item) for item in items}


async def _ping_loop(bot: _Bot, interval: float) -> None:
    while True:
        await asyncio.sleep(interval)
        await bot.send({"type": "ping", "client_time": time.time()})


async def _session(bot: _Bot, ws: ClientConnection, ping_interval: float, silent_after: float) -> str:
    """Play on one connection. Returns ``ended`` (match over), ``closed`` (the server closed it
    cleanly, or refused the token) or ``lost`` (silent server, dropped connection: reconnect)."""
    bot.ws = ws
    helpers = [asyncio.create_task(bot.guess_loop()), asyncio.create_task(_ping_loop(bot, ping_interval))]
    try:
        while True:
            try:
                message = await asyncio.wait_for(ws.recv(), silent_after)
            except TimeoutError:
                bot.log(f"no frame from the server for {silent_after:g} s: reconnecting")
                return "lost"
            try:
                frame = json.loads(message)
            except json.JSONDecodeError:
                bot.log(f"ignored a non-JSON frame: {str(message)[:80]!r}")
                continue
            if isinstance(frame, dict) and await bot.on_frame(frame):
                return "ended"
    except ConnectionClosedOK:
        bot.log("connection closed")
        return "closed"
    except ConnectionClosed as exc:
        code = exc.rcvd.code if exc.rcvd is not None else None
        bot.log(f"connection lost (close code {code})")
        return "closed" if code == FORBIDDEN else "lost"
    finally:
        for task in helpers:
            task.cancel()
        for task in helpers:
            with contextlib.suppress(asyncio.CancelledError, ConnectionClosed):
                await task


async def run_bot(
    url: str,
    guesser: Guesser,
    *,
    threshold: float,
    min_tokens: int = 0,
    log: Callable[[str], None] | None = None,
    ping_interval: float = 5.0,
    silent_after: float = SILENT_SERVER,
    reconnects: int = 20,
) -> dict[str, int]:
    """Play one match as a bot seat until ``match_ended``, a clean close by the server, or
    ``reconnects`` failed reconnection attempts in a row.

    url: the full play endpoint, ``ws://HOST:PORT/ws/match/<join_code>/play/?token=<bot token>``.
    threshold: buzz when the guesser's confidence ≥ threshold (confidence in [0, 1]).
    min_tokens: never buzz before this many tokens are revealed.
    log: receives human-readable lines (default: this module's logger at INFO).
    silent_after: seconds without a frame after which the server is presumed gone (reconnect).
    Returns counters ``{"buzzes", "correct", "wrong", "bonus_answers", "bonus_correct", "errors"}`` where
    ``buzzes`` counts the bot's buzzes that won the race. Raises the ``websockets`` error if the first
    connection cannot be opened.
    """
    bot: _Bot | None = None
    failures, backoff = 0, BACKOFF[0]
    while True:
        try:
            async with connect(url, compression=None, close_timeout=2) as ws:
                if bot is None:
                    bot = _Bot(ws, guesser, threshold, min_tokens, log or logger.info)
                failures, backoff = 0, BACKOFF[0]
                if await _session(bot, ws, ping_interval, silent_after) != "lost":
                    return bot.stats
        except (OSError, TimeoutError, InvalidHandshake) as exc:
            if bot is None:
                raise
            if isinstance(exc, InvalidStatus) and exc.response.status_code in (403, 404):
                bot.log(f"reconnection refused ({exc}); stopping")
                return bot.stats
            failures += 1
            bot.log(f"reconnection failed ({exc!r}); attempt {failures} of {reconnects}")
            if failures >= reconnects:
                return bot.stats
        await asyncio.sleep(backoff)
        backoff = min(backoff * 2, BACKOFF[1])
