"""The bot SDK's reducer (``tossup_bot.client``) passes the recorded streams for every seat that
watches one: fed the snapshot and the events of its play socket, the bot holds at every checkpoint
what :func:`bot_view` says the snapshot there means for it — and a bot that connects at that
checkpoint holds the same.

The SDK keeps only what a bot plays on, so the contract is a projection of the snapshot, defined
here field by field: the seat and its team, whether the preset has bonus decisions, the human seats
of its team (the captain's), the live tossup (no outcome yet: its words as revealed, whether its team
is locked out, whether buzzing is open: no buzz waits for its answer or ruling), the bonus its team
is being read (lead-in and id, only while a part is open or ruled), whether the seat is on its team's
bench (``lineups``), and whether the match is over.
Every field the SDK keeps that is not here is its own (``buzz_sent``, the guess it buzzed with,
counters). And it answers exactly when an answer is awaited from it: once after each event that
opens an answer for its seat (a buzz won, a prompt, a delegation to it), per the engine's reducer
event by event, and once on connecting while that answer is still awaited; never otherwise."""

from __future__ import annotations

import asyncio
import contextlib
import json
from typing import Any

import pytest
from tossup_bot import Guess, Guesser
from tossup_bot.client import _Bot, _Tossup

from competition.game import Event, apply_event

from .streams import differences, stream_viewers, walk


def bot_view(snapshot: dict[str, Any]) -> dict[str, Any]:
    """What the SDK must hold after ``snapshot`` (a seat's ``view``)."""
    you, t, b = snapshot["you"], snapshot["tossup"], snapshot["bonus"]
    team = you["team_id"]
    live = t is not None and t["outcome"] is None and snapshot["status"] == "running"
    bonus_open = b is not None and b["team_id"] == team and snapshot["phase"] in ("bonus", "bonus_ruling")
    return {
        "player_id": you["player_id"],
        "team_id": team,
        "bonus_decisions": snapshot["bonus_decisions"],
        "benched": you["player_id"] not in snapshot["lineups"][str(team)],
        "humans": sorted(
            p["player_id"] for p in snapshot["players"] if p["kind"] == "human" and p["team_id"] == team
        ),
        "tossup": {
            "question_id": t["question_id"],
            "index": t["index"],
            "token_count": t["token_count"],
            "category": t["category"],
            "words": t["words_revealed"],
            "team_locked": team in t["locked_teams"],
            "buzz_open": t["buzz"] is None,
        }
        if live
        else None,
        "bonus": {"bonus_id": b["bonus_id"], "leadin": b["leadin"]} if bonus_open else None,
        "ended": snapshot["status"] == "ended",
    }


# The events after which an answer is awaited anew: a buzz won, a prompt, a delegation (or its revert).
OPENS_AN_ANSWER = ("buzz", "prompt", "answer_delegated")


def answers_on_connect(snapshot: dict[str, Any]) -> int:
    """A bot that connects while it is the one to answer the tossup's buzz answers once (it lost its
    answer with the old connection); otherwise not at all (its answer waits for the ruling, or the
    moderator gave the answer to a teammate)."""
    buzz = (snapshot["tossup"] or {}).get("buzz")
    if buzz is None or snapshot["phase"] != "answering" or snapshot["status"] != "running":
        return 0
    answerer = buzz["answerer_id"] if buzz["answerer_id"] is not None else buzz["player_id"]
    return int(answerer == snapshot["you"]["player_id"])


def held(bot: _Bot, ended: bool) -> dict[str, Any]:
    """The same fields as the bot holds them."""
    t: _Tossup | None = bot.tossup
    return {
        "player_id": bot.player_id,
        "team_id": bot.team_id,
        "bonus_decisions": bot.bonus_decisions,
        "benched": bot.benched,
        "humans": sorted(bot.humans),
        "tossup": {
            "question_id": t.question_id,
            "index": t.index,
            "token_count": t.token_count,
            "category": t.category,
            "words": t.words,
            "team_locked": t.team_locked,
            "buzz_open": t.buzz_open,
        }
        if t is not None
        else None,
        "bonus": {"bonus_id": bot.bonus[0], "leadin": bot.bonus[1]} if bot.bonus is not None else None,
        "ended": ended,
    }


class Socket:
    """Where the bot's frames go (its answers, suggestions): kept, never sent."""

    def __init__(self) -> None:
        self.frames: list[dict[str, Any]] = []

    async def send(self, text: str) -> None:
        self.frames.append(json.loads(text))


class Quiet(Guesser):
    """Never buzzes; answers "quiet" (what it answers is not the reducer's business)."""

    def guess_tossup(self, prefix):
        return Guess("quiet", 0.0)

    def guess_bonus(self, part):
        return Guess("quiet", 0.0)


async def connect(snapshot: dict[str, Any]) -> tuple[_Bot, bool]:
    """A new bot whose connection starts with ``snapshot``; True when that says the match is over."""
    bot = _Bot(Socket(), Quiet(), lambda line: None)  # type: ignore[arg-type]
    ended = await bot.on_frame({"type": "snapshot", "seq": 0, "state": snapshot})
    return bot, ended


async def settle(bot: _Bot) -> None:
    """Let the bonus answers it started finish (they may send, never change what it holds)."""
    for task in list(bot.tasks):
        with contextlib.suppress(asyncio.CancelledError):
            await task


SEATS = [(s, a) for s, a in stream_viewers() if a.startswith("player:")]


@pytest.mark.parametrize(("stream", "audience"), SEATS)
async def test_the_sdk_reducer_holds_what_every_checkpoint_means_for_the_bot(stream, audience):
    first, steps = walk(stream, audience)
    bot, ended = await connect(first)
    assert held(bot, ended) == bot_view(first), differences(held(bot, ended), bot_view(first))
    seen = first  # the viewer's view after each event, by the engine's reducer (checked in test_view_reducer)
    checked = 0
    for step in steps:
        for e in step.events:
            before = len(bot.ws.frames)
            ended = await bot.on_frame(
                {"type": "event", "seq": e["seq"], "event": e["event"], "data": e["data"]}
            )
            seen = apply_event(seen, Event(e["event"], e["data"], e["audience"]))
            answers = [f for f in bot.ws.frames[before:] if f["type"] == "answer"]
            must = e["event"] in OPENS_AN_ANSWER and answers_on_connect(seen) == 1
            assert len(answers) == must, (step.label, e, "the bot answers when it is its to answer", answers)
        await settle(bot)
        want = bot_view(step.snapshot)
        assert held(bot, ended) == want, (step.label, step.names(), differences(held(bot, ended), want))
        fresh, fresh_ended = await connect(step.snapshot)
        await settle(fresh)
        assert held(fresh, fresh_ended) == want, (
            step.label,
            "on connect",
            differences(held(fresh, fresh_ended), want),
        )
        answers = [f for f in fresh.ws.frames if f["type"] == "answer"]
        assert len(answers) == answers_on_connect(step.snapshot), (step.label, "answers on connect", answers)
        checked += 1
    assert checked
