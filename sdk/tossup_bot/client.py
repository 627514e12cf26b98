"""The bot client: plays a match over the player websocket protocol (Tossup's docs/PROTOCOL.md).

:func:`run_bot` follows the tossup's revealed words, asks the :class:`~tossup_bot.Guesser` on the newest
prefix (in a worker thread, skipping words that arrived while it was thinking; a reply slower than the
guesser's ``time_budget`` is dropped), buzzes when the guess says so (claiming the last token it had
seen), answers its own granted buzz and prompts with that guess (and an answer the moderator delegates to
it), and answers the bonus parts of its own team — or, under a preset with bonus decisions (qanta26) on a
team with a human captain, suggests its guess, confidence and explanation to the captain instead
(``bonus_suggestion``). Candidate guesses leave the process only inside the bot's own ``answer``,
``bonus_answer`` and ``bonus_suggestion`` frames.

The connection is kept alive the way the protocol asks: heartbeats are answered at once, a heartbeat
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
from collections.abc import Callable, Coroutine
from dataclasses import dataclass, field
from typing import Any, TypeVar
from urllib.parse import quote, urlsplit

from websockets.asyncio.client import ClientConnection, connect
from websockets.exceptions import ConnectionClosed, ConnectionClosedOK, InvalidHandshake, InvalidStatus

from tossup_bot.guesser import BonusPart, Guess, Guesser, TossupPrefix

logger = logging.getLogger(__name__)
T = TypeVar("T")
SILENT_SERVER = 15.0  # seconds without any frame (heartbeats come every 5 s) before reconnecting
BACKOFF = (0.5, 5.0)  # reconnection backoff: first and largest wait, seconds
FORBIDDEN = 4403  # the server's close code for a bad token: reconnecting cannot help


def play_url(base: str, code: str, token: str) -> str:
    """The play endpoint of seat ``token`` in match ``code`` on the server at ``base``
    (``ws://HOST:PORT`` or ``wss://…``): ``BASE/ws/match/<code>/play/?token=<token>``, both quoted."""
    return f"{base.rstrip('/')}/ws/match/{quote(code)}/play/?token={quote(token)}"


def http_origin(url: str) -> str:
    """The HTTP origin of a websocket URL: ``ws://h:p/…`` → ``http://h:p``, ``wss://…`` → ``https://…``."""
    parts = urlsplit(url)
    return f"{'https' if parts.scheme in ('wss', 'https') else 'http'}://{parts.netloc}"


def with_origin(tokens: list[Any], origin: str) -> list[Any]:
    """``tokens`` (words and media dicts) with each media ``url`` made absolute on ``origin``: what
    a guesser can fetch (the server serves a clue's file once it is revealed)."""
    return [
        {**t, "url": origin + t["url"]}
        if isinstance(t, dict) and str(t.get("url", "")).startswith("/")
        else t
        for t in tokens
    ]


@dataclass
class _Tossup:
    question_id: Any
    index: int | None = None
    token_count: int | None = None
    category: str = ""
    words: list[str | dict[str, Any] | None] = field(default_factory=list)
    team_locked: bool = False  # our team buzzed (or was ruled) on this tossup
    buzz_open: bool = True  # False while anyone's buzz waits for its ruling
    buzz_sent: bool = False  # our buzz is in flight and not yet answered by a buzz event or error
    answer: str = ""  # the guess that made us buzz; reused for prompts
    answerer: Any = None  # the seat answering the buzz: the buzzer, or the bot the moderator delegated to

    def revealed(self) -> int:
        """Number of contiguous revealed tokens from index 0."""
        for i, word in enumerate(self.words):
            if word is None:
                return i
        return len(self.words)

    def prefix(self, count: int | None = None) -> TossupPrefix:
        """The first ``count`` revealed tokens (default: all contiguous revealed ones)."""
        count = self.revealed() if count is None else count
        tokens = tuple(w for w in self.words[:count] if w is not None)
        return TossupPrefix(self.question_id, self.index, tokens, self.token_count, self.category)


class _Bot:
    def __init__(
        self,
        ws: ClientConnection,
        guesser: Guesser,
        log: Callable[[str], None],
        origin: str = "",
    ) -> None:
        self.ws = ws
        self.guesser = guesser
        self.log = log
        self.origin = origin  # the server's HTTP origin, for media URLs
        self.player_id: Any = None
        self.team_id: Any = None
        self.seq = 0
        self.tossup: _Tossup | None = None
        self.bonus: tuple[Any, str] | None = None  # (bonus_id, leadin) while our team is on a bonus
        self.bonus_answer = ""  # our last answer to the open bonus part (repeated on a prompt)
        # Presets with bonus decisions (qanta26): on a team with a human captain the bot suggests
        # (guess, confidence, explanation) and the captain decides; it answers only on a bots' team.
        self.bonus_decisions = False
        self.humans: set[Any] = set()  # human seats of our team
        # On our team's bench (the preset's players per team; the moderator substitutes): no buzz.
        self.benched = False
        self.new_words = asyncio.Event()
        self.tasks: set[asyncio.Task[None]] = set()  # bonus answers being thought of, per connection
        self.stats: dict[str, float] = {
            "buzzes": 0,
            "correct": 0,
            "wrong": 0,
            "bonus_answers": 0,
            "bonus_correct": 0,
            "errors": 0,
            "guesses": 0,
            "late": 0,
            "cost": 0.0,
        }

    async def send(self, frame: dict[str, Any]) -> None:
        await self.ws.send(json.dumps(frame))

    async def ask(self, method: Callable[[T], Guess], arg: T) -> Guess | None:
        """Run a guesser method in a worker thread within the guesser's ``time_budget``; a failing,
        late or malformed reply costs one answer, not the match."""
        budget = self.guesser.time_budget
        name = getattr(method, "__name__", "guess")
        try:
            guess = await asyncio.wait_for(asyncio.to_thread(method, arg), budget)
        except TimeoutError:
            if budget is None:  # the guesser's own timeout (e.g. a socket's), not the budget
                logger.exception("guesser %s timed out", name)
                return None
            self.stats["late"] += 1
            self.log(f"{name}: no reply within the time budget ({budget:g} s); dropped")
            return None
        except Exception:
            logger.exception("guesser %s failed", name)
            return None
        if not isinstance(guess, Guess):
            logger.error("guesser %s returned %r, not a Guess", name, type(guess).__name__)
            return None
        self.stats["guesses"] += 1
        self.stats["cost"] += guess.cost
        return guess

    def spawn(self, job: Coroutine[Any, Any, None]) -> None:
        """Run ``job`` beside the frame loop (cancelled when the connection ends)."""
        task = asyncio.create_task(job)
        self.tasks.add(task)
        task.add_done_callback(self.tasks.discard)

    async def answer_bonus(self, part: BonusPart) -> None:
        """Ask the guesser about one part of our team's bonus and send the answer, unless the bonus
        ended meanwhile. Runs as a task: a slow guesser never stops the frame loop."""
        guess = await self.ask(self.guesser.guess_bonus, part)
        if self.bonus is None or self.bonus[0] != part.bonus_id:
            return
        self.bonus_answer = guess.guess if guess is not None else ""
        if guess is not None and guess.explanation:
            self.log(f"bonus part {part.part}: {guess.guess!r} ({guess.confidence:.2f}): {guess.explanation}")
        frame: dict[str, Any] = {
            "type": "bonus_answer",
            "bonus_id": part.bonus_id,
            "part": part.part,
            "text": self.bonus_answer,
        }
        if self.suggests():
            confidence = min(max(float(guess.confidence), 0.0), 1.0) if guess is not None else 0.0
            explanation = (guess.explanation if guess is not None else "")[:1000]
            frame = {
                "type": "bonus_suggestion",
                "bonus_id": part.bonus_id,
                "part": part.part,
                "guess": self.bonus_answer[:500],
                "confidence": confidence,
                "explanation": explanation,
            }
        with contextlib.suppress(ConnectionClosed):  # the new connection's snapshot asks again
            await self.send(frame)
            self.stats["bonus_answers"] += 1

    def suggests(self) -> bool:
        """Whether our bonus parts are the captain's to answer (we only suggest)."""
        return self.bonus_decisions and bool(self.humans)

    # --- tossup guessing -------------------------------------------------------------------------------
    async def guess_loop(self) -> None:
        """Guess on the newest revealed word whenever new words arrive; older words are skipped."""
        while True:
            await self.new_words.wait()
            self.new_words.clear()
            tossup = self.tossup
            if tossup is None or self.benched or not self._may_buzz(tossup):
                continue
            count = tossup.revealed()
            if count == 0:
                continue
            guess = await self.ask(self.guesser.guess_tossup, tossup.prefix(count))
            if guess is None or not guess.buzz or self.tossup is not tossup or not self._may_buzz(tossup):
                continue
            tossup.answer, tossup.buzz_sent = guess.guess, True
            await self.send(
                {
                    "type": "buzz",
                    "question_id": tossup.question_id,
                    "token_index": count - 1,
                    "client_time": time.time(),
                    "cost": guess.cost,  # the race's last tie-break: the cheaper guess wins
                    "ref": f"buzz:{tossup.question_id}",
                }
            )

    @staticmethod
    def _may_buzz(tossup: _Tossup) -> bool:
        return tossup.buzz_open and not tossup.team_locked and not tossup.buzz_sent

    async def answer(self, tossup: _Tossup) -> None:
        if not tossup.answer:  # granted after a resync: we lost the guess that made us buzz
            guess = await self.ask(self.guesser.guess_tossup, tossup.prefix())
            tossup.answer = guess.guess if guess is not None else ""
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
        self.bonus_decisions = bool(state.get("bonus_decisions"))
        lineup = (state.get("lineups") or {}).get(str(self.team_id))
        self.benched = lineup is not None and self.player_id not in lineup
        self.humans = {
            p.get("player_id")
            for p in state.get("players") or []
            if p.get("kind") == "human" and p.get("team_id") == self.team_id
        }
        data = state.get("tossup")
        over = state.get("status") == "ended"
        if over or not data or data.get("question_id") is None or data.get("outcome") is not None:
            self.tossup = None  # no tossup, it has ended (answer revealed), or the match is over
        else:
            tossup = self.tossup
            if tossup is None or tossup.question_id != data["question_id"]:
                tossup = _Tossup(
                    data["question_id"],
                    data.get("index"),
                    data.get("token_count"),
                    data.get("category") or "",
                )
            tossup.words = with_origin(list(data.get("words_revealed") or []), self.origin)
            tossup.team_locked = self.team_id is not None and _same(
                self.team_id, data.get("locked_teams") or []
            )
            buzz = data.get("buzz")
            tossup.buzz_open, tossup.buzz_sent = not buzz, False
            self.tossup = tossup
            if buzz and buzz.get("player_id") == self.player_id:
                tossup.team_locked = True
            tossup.answerer = (buzz.get("answerer_id") or buzz.get("player_id")) if buzz else None
            # Ours to answer (our buzz, or one the moderator delegated to us) and not yet answered:
            # the answer was lost with the old connection. In phase ruling it waits for the moderator.
            if (
                self.player_id is not None
                and tossup.answerer == self.player_id
                and state.get("phase") == "answering"
            ):
                await self.answer(tossup)
            self.new_words.set()
        bonus = state.get("bonus") or {}
        # A snapshot keeps the last bonus until the next tossup: ours only while it is being read.
        mine = bonus.get("team_id") is not None and bonus.get("team_id") == self.team_id
        mine = mine and state.get("phase") in ("bonus", "bonus_ruling")  # not "ended": cut off
        self.bonus = (bonus.get("bonus_id"), bonus.get("leadin", "")) if mine else None
        if mine and state.get("phase") == "bonus":  # a part is open: our answer may have been lost
            for entry in bonus.get("parts") or []:
                if entry.get("part") == bonus.get("part") and entry.get("result") is None:
                    self.spawn(self.answer_bonus(self._bonus_part(entry)))
        return over

    async def on_event(self, name: str, data: dict[str, Any]) -> bool:
        """Handle one event; return True when the match is over."""
        tossup = self.tossup
        if name == "tossup_started":
            self.tossup = _Tossup(
                data.get("question_id"),
                data.get("index"),
                data.get("token_count"),
                data.get("category") or "",
            )
            try:
                self.guesser.begin_tossup(data)
            except Exception:
                logger.exception("guesser begin_tossup failed")
        elif name == "words" and tossup is not None and data.get("question_id") == tossup.question_id:
            start, words = int(data.get("start", 0)), with_origin(list(data.get("words") or []), self.origin)
            if len(tossup.words) < start + len(words):
                tossup.words.extend([None] * (start + len(words) - len(tossup.words)))
            tossup.words[start : start + len(words)] = words
            self.new_words.set()
        elif name == "buzz" and tossup is not None and data.get("question_id") == tossup.question_id:
            tossup.buzz_open, tossup.buzz_sent = False, False
            tossup.answerer = data.get("player_id")
            if data.get("team_id") == self.team_id:
                tossup.team_locked = True
            if data.get("player_id") == self.player_id:
                self.stats["buzzes"] += 1
                await self.answer(tossup)
        elif (
            name == "answer_delegated"
            and tossup is not None
            and data.get("question_id") == tossup.question_id
        ):
            tossup.answerer = data.get("answerer_id")
            if tossup.answerer == self.player_id:
                await self.answer(tossup)  # the moderator gave us the answer (a teammate's, or ours back)
        elif name == "lineup_changed" and data.get("team_id") == self.team_id:
            self.benched = self.player_id not in (data.get("players") or [])
        elif name == "player_joined" and data.get("kind") == "human" and data.get("team_id") == self.team_id:
            self.humans.add(data.get("player_id"))
        elif name == "buzz_lost" and tossup is not None and data.get("question_id") == tossup.question_id:
            tossup.buzz_sent = False  # our buzz lost the race or was dropped; later words may earn another
        elif name == "prompt" and tossup is not None and data.get("question_id") == tossup.question_id:
            if tossup.answerer == self.player_id:  # the prompt names the buzzer, not a delegate
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
        elif (
            name == "ruling_undone"
            and tossup is not None
            and data.get("question_id") == tossup.question_id
            and data.get("team_id") == self.team_id
        ):
            # Our ruling on the live tossup undone (never a correct one: that ended the tossup):
            # the team may buzz again.
            tossup.team_locked = False
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
            self.spawn(self.answer_bonus(self._bonus_part(data)))
        elif (
            name == "bonus_prompt"
            and self.bonus is not None
            and data.get("bonus_id") == self.bonus[0]
            and not self.suggests()  # a prompt after a consult is the humans' to answer
        ):
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
            self.stats["bonus_correct"] += int(data.get("ruling") == "correct")
        elif name in (
            "bonus_ended",
            "bonus_withdrawn",
        ):  # withdrawn: its tossup's ruling was undone or corrected
            self.bonus = None
        elif name == "match_ended":  # whatever was being read is cut off
            self.tossup, self.bonus = None, None
            return True
        return False

    def _bonus_part(self, data: dict[str, Any]) -> BonusPart:
        """A part of our open bonus from a ``bonus_part`` event or a snapshot's part entry."""
        bonus_id, leadin = self.bonus or (None, "")
        value = data.get("value")
        return BonusPart(
            bonus_id,
            int(data.get("part") or 0),
            leadin,
            str(data.get("text") or ""),
            value if isinstance(value, int) else None,
        )

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
        helpers += bot.tasks
        for task in helpers:
            task.cancel()
        for task in helpers:
            with contextlib.suppress(asyncio.CancelledError, ConnectionClosed):
                await task


async def run_bot(
    url: str,
    guesser: Guesser,
    *,
    log: Callable[[str], None] | None = None,
    ping_interval: float = 5.0,
    silent_after: float = SILENT_SERVER,
    reconnects: int = 20,
) -> dict[str, float]:
    """Play one match as a bot seat until ``match_ended``, a clean close by the server, or
    ``reconnects`` failed reconnection attempts in a row.

    url: the full play endpoint, ``ws://HOST:PORT/ws/match/<join_code>/play/?token=<bot token>``
    (:func:`play_url` builds it). guesser: any object with the :class:`Guesser` methods and attributes.
    log: receives human-readable lines (default: this module's logger at INFO).
    silent_after: seconds without a frame after which the server is presumed gone (reconnect).
    Returns counters ``{"buzzes", "correct", "wrong", "bonus_answers", "bonus_correct", "errors", "guesses",
    "late", "cost"}``: ``buzzes`` counts the bot's buzzes that won the race, ``errors`` the server's error
    frames, ``guesses`` the replies used, ``late`` those dropped for the time budget, ``cost`` their USD. Raises the ``websockets`` error if the first
    connection cannot be opened.
    """
    bot: _Bot | None = None
    failures, backoff = 0, BACKOFF[0]
    while True:
        try:
            async with connect(url, compression=None, close_timeout=2) as ws:
                if bot is None:
                    bot = _Bot(ws, guesser, log or logger.info, http_origin(url))
                    bot.log("connected")
                else:
                    bot.log("reconnected")
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
