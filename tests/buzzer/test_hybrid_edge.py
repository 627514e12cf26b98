"""Hybrid teams through the websocket edge (HYBRID.md): a semi-autonomous bot's buzz confirmed by
a teammate, the AI's bonus suggestion seen only by its team, the captain's consult judged and
deflated (qanta26), the moderator's delegation; with real consumers, Redis and the database."""

from __future__ import annotations

import json
from typing import Any

import pytest
from channels.db import database_sync_to_async

from competition import services
from competition.models import Match, MatchEvent
from tests.support.factories import make_packet

from .test_consumers import connect, head_seq, is_event, recv, seat, until

pytestmark = pytest.mark.django_db(transaction=True)


@database_sync_to_async
def hybrid_match(buzz_mode: str = "semi_autonomous") -> Match:
    tossups, bonuses = make_packet()
    match = services.create_match(
        name="Hybrid",
        tossup_ids=[t.id for t in tossups],
        bonus_ids=[b.id for b in bonuses],
        preset="qanta26",
        teams=["Red", "Blue"],
        bots=[{"name": "ai", "weight_class": "mid", "team": "Red", "buzz_mode": buzz_mode}],
        config={"wpm": 600, "auto_rule": True},
    )
    for name, team in (("alice", "Red"), ("amy", "Red"), ("bob", "Blue")):
        services.join_match(code=match.join_code, name=name, team=team)
    return match


def frame(**kw: Any) -> str:
    return json.dumps(kw)


async def reply(comm) -> dict:
    answer, _ = await until(comm, lambda f: f["type"] in ("ack", "error"))
    return answer


async def test_a_teammate_confirms_the_bots_buzz_and_the_captain_consults_it_on_the_bonus():
    match = await hybrid_match()
    ai, alice, amy, bob = [await seat(match, n) for n in ("ai", "alice", "amy", "bob")]
    moderator = await connect(match, "moderate", match.moderator_token)
    bot, captain, mate, rival = [await connect(match, "play", p.token) for p in (ai, alice, amy, bob)]
    for comm in (moderator, bot, captain, mate, rival):
        assert (await recv(comm))["type"] == "snapshot"
    await moderator.send_to(text_data=frame(type="command", name="start"))
    started, _ = await until(bot, is_event("tossup_started"))
    qid = started["data"]["question_id"]
    await until(bot, lambda f: is_event("words")(f) and f["data"]["start"] + len(f["data"]["words"]) >= 2)

    await bot.send_to(text_data=frame(type="buzz", question_id=qid, token_index=1))
    assert (await reply(bot))["type"] == "ack"
    proposed, _ = await until(mate, is_event("buzz_proposed"))
    assert proposed["data"]["player_id"] == ai.id
    await rival.send_to(text_data=frame(type="confirm_buzz", bot_id=ai.id))
    assert (await reply(rival))["code"] == "not_your_team"
    await mate.send_to(text_data=frame(type="confirm_buzz", bot_id=ai.id))
    assert (await reply(mate))["type"] == "ack"
    won, _ = await until(bot, is_event("buzz"))
    assert won["data"]["player_id"] == ai.id
    await bot.send_to(text_data=frame(type="answer", question_id=qid, text="Moby Dick"))
    ruled, _ = await until(captain, is_event("buzz_ruled"))
    assert ruled["data"]["points"] == 12  # a mid bot's power: 15 × 0.8

    part, _ = await until(bot, is_event("bonus_part"))
    bonus_id = part["data"]["bonus_id"]
    suggestion = frame(
        type="bonus_suggestion",
        bonus_id=bonus_id,
        part=0,
        guess="bonusanswer0",
        confidence=0.9,
        explanation="why",
    )
    await bot.send_to(text_data=suggestion)
    assert (await reply(bot))["type"] == "ack"
    seen, _ = await until(mate, is_event("bonus_suggestion"))
    assert seen["data"]["guess"] == "bonusanswer0" and seen["data"]["confidence"] == 0.9
    await mate.send_to(text_data=frame(type="bonus_decision", bonus_id=bonus_id, part=0, decision="consult"))
    assert (await reply(mate))["code"] == "not_captain"
    await captain.send_to(
        text_data=frame(type="bonus_decision", bonus_id=bonus_id, part=0, decision="consult")
    )
    assert (await reply(captain))["type"] == "ack"
    ruled, _ = await until(rival, is_event("bonus_part_ruled"))
    assert (ruled["data"]["ruling"], ruled["data"]["points"], ruled["data"]["decision"]) == (
        "correct",
        8,
        "consult",
    )
    # The moderator abstains for the team on the next part: 1 point.
    await moderator.send_to(
        text_data=frame(type="command", name="bonus_decision", bonus_id=bonus_id, part=1, decision="abstain")
    )
    abstained, seen_by_rival = await until(
        rival, lambda f: is_event("bonus_part_ruled")(f) and f["data"]["part"] == 1
    )
    assert abstained["data"]["points"] == 1
    # The other team never saw the proposal or the suggestion.
    rival_events = {f.get("event") for f in seen_by_rival}
    assert not rival_events & {"buzz_proposed", "bonus_suggestion"}
    stored = await database_sync_to_async(
        lambda: list(
            MatchEvent.objects.filter(match=match, event="bonus_suggestion").values_list(
                "audience", flat=True
            )
        )
    )()
    assert sorted(stored) == sorted([f"team:{alice.team_id}", "moderator"])
    for comm in (moderator, bot, captain, mate, rival):
        await comm.disconnect()


async def test_the_moderator_delegates_an_answer_to_the_teams_ai_and_players_cannot():
    match = await hybrid_match("autonomous")
    ai, alice = await seat(match, "ai"), await seat(match, "alice")
    moderator = await connect(match, "moderate", match.moderator_token)
    bot, captain = await connect(match, "play", ai.token), await connect(match, "play", alice.token)
    for comm in (moderator, bot, captain):
        await recv(comm)
    await moderator.send_to(text_data=frame(type="command", name="start"))
    started, _ = await until(captain, is_event("tossup_started"))
    qid = started["data"]["question_id"]
    await until(captain, lambda f: is_event("words")(f) and f["data"]["start"] + len(f["data"]["words"]) >= 2)
    await captain.send_to(text_data=frame(type="buzz", question_id=qid, token_index=1))
    await until(captain, is_event("buzz"))
    before = await head_seq(match)
    await captain.send_to(text_data=frame(type="command", name="delegate", bot_id=ai.id))
    assert (await reply(captain))["code"] == "forbidden"
    assert await head_seq(match) == before
    await moderator.send_to(text_data=frame(type="command", name="delegate", bot_id=ai.id))
    delegated, _ = await until(bot, is_event("answer_delegated"))
    assert delegated["data"]["answerer_id"] == ai.id
    await bot.send_to(text_data=frame(type="answer", question_id=qid, text="Moby Dick"))
    ruled, _ = await until(captain, is_event("buzz_ruled"))
    assert ruled["data"]["player_id"] == alice.id and ruled["data"]["answerer_id"] == ai.id
    assert ruled["data"]["points"] == 12
    for comm in (moderator, bot, captain):
        await comm.disconnect()
