"""The SDK bot on a hybrid team (HYBRID.md), against the scripted fake server: under a preset with
bonus decisions it suggests its bonus guess, confidence and explanation to its human captain instead
of answering; on a team of bots only it still answers; an answer the moderator delegates to it is
answered."""

from __future__ import annotations

import json
from typing import Any

from tossup_bot import BonusPart, Guess, Guesser, TossupPrefix, run_bot

from tests.bots.fake_server import ME, MY_TEAM, Session, play


class Notes(Guesser):
    """Knows one bonus answer; never buzzes on its own."""

    def guess_tossup(self, prefix: TossupPrefix) -> Guess:
        return Guess("Moby-Dick", 0.4)

    def guess_bonus(self, part: BonusPart) -> Guess:
        return Guess("Hamlet", 0.85, explanation="Yorick's skull")


def snapshot(players: list[dict[str, Any]], bonus_decisions: bool = True) -> str:
    state = {
        "status": "running",
        "bonus_decisions": bonus_decisions,
        "players": players,
        "you": {"player_id": ME, "team_id": MY_TEAM},
        "tossup": None,
        "bonus": None,
    }
    return json.dumps({"type": "snapshot", "seq": 0, "state": state})


ME_SEAT = {"player_id": ME, "team_id": MY_TEAM, "kind": "bot"}
CAPTAIN = {"player_id": 70, "team_id": MY_TEAM, "kind": "human"}


async def open_part(s: Session) -> None:
    await s.event("bonus_started", bonus_id=8, team_id=MY_TEAM, leadin="Name these.", parts=1)
    await s.event("bonus_part", bonus_id=8, part=0, text="Yorick.", value=10, answer_deadline=0)


async def test_with_a_human_captain_the_bot_suggests_and_never_answers_the_bonus() -> None:
    async def script(s: Session) -> None:
        await s.ws.send(snapshot([ME_SEAT, CAPTAIN]))
        await open_part(s)
        suggestion = await s.expect("bonus_suggestion")
        assert {k: suggestion[k] for k in ("bonus_id", "part", "guess", "confidence", "explanation")} == {
            "bonus_id": 8,
            "part": 0,
            "guess": "Hamlet",
            "confidence": 0.85,
            "explanation": "Yorick's skull",
        }
        # A prompt after the captain consulted it is the humans' to answer.
        await s.event("bonus_prompt", bonus_id=8, part=0, directed_prompt=None, answer_deadline=0)
        await s.quiet(0.3)
        await s.event("match_ended", scores={})

    await play(script, lambda url: run_bot(url, Notes()))


async def test_a_captain_who_joins_later_is_counted_and_a_team_of_bots_answers_itself() -> None:
    async def alone(s: Session) -> None:
        await s.ws.send(snapshot([ME_SEAT]))
        await open_part(s)
        assert (await s.expect("bonus_answer"))["text"] == "Hamlet"
        # Sent by hand: its "name" field would clash with Session.event's own argument.
        joined = {"player_id": 70, "team_id": MY_TEAM, "name": "ann", "kind": "human", "weight_class": ""}
        s.seq += 1
        await s.ws.send(json.dumps({"type": "event", "seq": s.seq, "event": "player_joined", "data": joined}))
        await s.event("bonus_part", bonus_id=8, part=1, text="Iago.", value=10, answer_deadline=0)
        assert (await s.expect("bonus_suggestion"))["part"] == 1
        await s.event("match_ended", scores={})

    await play(alone, lambda url: run_bot(url, Notes()))


async def test_an_answer_delegated_to_the_bot_is_answered() -> None:
    async def script(s: Session) -> None:
        await s.ws.send(snapshot([ME_SEAT, CAPTAIN]))
        await s.event("tossup_started", index=0, question_id=6, token_count=30, category="Literature")
        await s.words(6, 0, "This", "novel's", "harpooneers")
        await s.event("buzz", question_id=6, player_id=70, team_id=MY_TEAM, kind="human", token_index=2)
        s.granted.add(6)  # the delegation grants the bot the answer (the fake server's check)
        await s.event("answer_delegated", question_id=6, player_id=70, answerer_id=ME, answer_deadline=0)
        answer = await s.expect("answer")
        assert (answer["question_id"], answer["text"]) == (6, "Moby-Dick")
        await s.event("match_ended", scores={})

    await play(script, lambda url: run_bot(url, Notes()))
