"""The moderator's substitute, timeout and undo-timeout commands over the websocket (real consumer, Redis layer
and database): acked and broadcast as events, or refused with the engine's code and nothing stored."""

from __future__ import annotations

import json

import pytest
from channels.db import database_sync_to_async

from competition import game, services
from competition.models import Match
from tests.buzzer.test_consumers import connect, head_seq, is_event, new_match, recv, until

pytestmark = pytest.mark.django_db(transaction=True)


async def test_a_timeout_and_a_substitution_from_the_moderators_socket() -> None:
    match: Match = await new_match(bots=False, n_tossups=3, n_bonuses=3, config={"auto_advance": False})
    moderator = await connect(match, "moderate", match.moderator_token)
    watcher = await connect(match, "watch")
    snap = await recv(moderator)
    await recv(watcher)
    red = next(t for t in snap["state"]["teams"] if t["name"] == "Red")
    red_seats = [p["player_id"] for p in snap["state"]["players"] if p["team_id"] == red["team_id"]]
    blue_seat = next(p["player_id"] for p in snap["state"]["players"] if p["team_id"] != red["team_id"])
    await database_sync_to_async(services.moderate)(match_id=match.id, command=game.Start())
    await database_sync_to_async(services.moderate)(match_id=match.id, command=game.Skip())

    async def send(ref: int, **fields) -> dict:
        await moderator.send_to(text_data=json.dumps({"type": "command", "ref": ref, **fields}))
        frame, _ = await until(moderator, lambda f: f["type"] in ("ack", "error") and f.get("ref") == ref)
        return frame

    ack = await send(1, name="timeout", team_id=red["team_id"])
    assert ack["type"] == "ack"
    called, _ = await until(watcher, is_event("timeout_called"))
    assert called["data"]["team_id"] == red["team_id"] and called["data"]["left"] == 0
    before = await head_seq(match)
    error = await send(
        2, name="substitute", team_id=red["team_id"], player_in=blue_seat, player_out=red_seats[0]
    )
    assert error["type"] == "error" and error["code"] == "unknown_player"
    assert await head_seq(match) == before
    ack = await send(3, name="substitute", team_id=red["team_id"], player_out=red_seats[0])
    assert ack["type"] == "ack"
    changed, _ = await until(watcher, is_event("lineup_changed"))
    assert changed["data"]["players"] == red_seats[1:] and changed["data"]["reason"] == "own_timeout"
    # A mis-click taken back: Red has its timeout again (the substitution stands).
    assert (await send(4, name="undo_timeout"))["type"] == "ack"
    undone, _ = await until(watcher, is_event("timeout_undone"))
    assert undone["data"]["team_id"] == red["team_id"] and undone["data"]["left"] == 1
    before = await head_seq(match)
    error = await send(5, name="undo_timeout")
    assert error["type"] == "error" and error["code"] == "no_timeout"
    assert await head_seq(match) == before
    await moderator.disconnect()
    await watcher.disconnect()
