"""The websocket edge with Channels' WebsocketCommunicator: real consumers, real Redis
channel layer, the reading driver and the database (transactional)."""

from __future__ import annotations

import asyncio
import json
from typing import Any

import pytest
from channels.db import database_sync_to_async
from channels.testing import WebsocketCommunicator

from competition.models import Buzz, Match, MatchEvent, Player
from config.asgi import application
from tests.support.factories import make_match

pytestmark = pytest.mark.django_db(transaction=True)


async def connect(match: Match, role: str, token: str = "") -> WebsocketCommunicator:
    query = f"?token={token}" if token else ""
    comm = WebsocketCommunicator(application, f"/ws/match/{match.join_code}/{role}/{query}")
    connected, _ = await comm.connect()
    assert connected
    return comm


async def recv(comm: WebsocketCommunicator, timeout: float = 5.0) -> dict[str, Any]:
    return json.loads(await comm.receive_from(timeout=timeout))


async def until(comm: WebsocketCommunicator, pred, timeout: float = 10.0) -> tuple[dict, list[dict]]:
    """Read frames until ``pred(frame)``; returns it and every frame read before it."""
    seen: list[dict] = []
    async with asyncio.timeout(timeout):
        while True:
            frame = await recv(comm, timeout)
            if pred(frame):
                return frame, seen
            seen.append(frame)


def is_event(name: str):
    return lambda f: f.get("type") == "event" and f["event"] == name


@database_sync_to_async
def seat(match: Match, name: str) -> Player:
    return Player.objects.get(match=match, name=name)


@database_sync_to_async
def new_match(**kw: Any) -> Match:
    return make_match(**kw)


@database_sync_to_async
def head_seq(match: Match) -> int:
    return Match.objects.get(pk=match.pk).seq


async def test_bad_token_gets_an_error_frame_and_is_closed():
    match = await new_match()
    comm = await connect(match, "play", "not-a-token")
    frame = await recv(comm)
    assert frame["type"] == "error" and frame["code"] == "forbidden"
    assert (await comm.receive_output(timeout=2))["type"] == "websocket.close"
    moderator = await connect(match, "moderate", "wrong")
    assert (await recv(moderator))["code"] == "forbidden"
    await comm.disconnect()
    await moderator.disconnect()


async def test_player_snapshot_names_the_seat_and_hides_the_answer():
    match = await new_match()
    alice = await seat(match, "alice")
    comm = await connect(match, "play", alice.token)
    snap = await recv(comm)
    assert snap["type"] == "snapshot"
    assert snap["state"]["you"]["player_id"] == alice.id
    assert "Moby" not in json.dumps(snap)
    await comm.disconnect()


async def test_bad_frames_get_errors_and_change_nothing():
    match = await new_match()
    alice = await seat(match, "alice")
    comm = await connect(match, "play", alice.token)
    await recv(comm)
    before = await head_seq(match)
    for text, code in [
        ("{nope", "malformed"),
        ('{"type": "warp"}', "unknown_type"),
        ('{"type": "buzz", "question_id": "x", "token_index": 0}', "invalid"),
        ('{"type": "command", "name": "start"}', "forbidden"),
    ]:
        await comm.send_to(text_data=text)
        frame = await recv(comm)
        assert frame["type"] == "error" and frame["code"] == code
    # A well-formed buzz before the match started is refused by the rules, with a reason.
    await comm.send_to(text_data=json.dumps({"type": "buzz", "question_id": 1, "token_index": 0, "ref": 9}))
    frame = await recv(comm)
    assert frame["type"] == "error" and frame["code"] == "rejected" and frame["ref"] == 9 and frame["message"]
    assert await head_seq(match) == before
    await comm.disconnect()


async def test_a_buzz_flood_is_rate_limited():
    match = await new_match()
    alice = await seat(match, "alice")
    comm = await connect(match, "play", alice.token)
    await recv(comm)
    for _ in range(60):
        await comm.send_to(text_data='{"type": "ping", "client_time": 1}')
    frames = [await recv(comm) for _ in range(60)]
    assert any(f["type"] == "error" and f["code"] == "rate_limited" for f in frames)
    assert sum(f["type"] == "pong" for f in frames) >= 40
    await comm.disconnect()


async def test_a_tossup_is_read_buzzed_answered_scored_and_revealed():
    match = await new_match()
    alice, amy = await seat(match, "alice"), await seat(match, "amy")
    moderator = await connect(match, "moderate", match.moderator_token)
    player = await connect(match, "play", alice.token)
    teammate = await connect(match, "play", amy.token)
    watcher = await connect(match, "watch")
    for comm in (moderator, player, teammate, watcher):
        assert (await recv(comm))["type"] == "snapshot"

    await moderator.send_to(text_data=json.dumps({"type": "command", "name": "start", "ref": "s"}))
    await until(moderator, is_event("tossup_answer"))
    started, _ = await until(player, is_event("tossup_started"))
    qid = started["data"]["question_id"]
    words, _ = await until(
        player, lambda f: is_event("words")(f) and f["data"]["start"] + len(f["data"]["words"]) >= 3
    )
    shown = words["data"]["start"] + len(words["data"]["words"]) - 1

    await player.send_to(
        text_data=json.dumps({"type": "buzz", "question_id": qid, "token_index": shown, "ref": 1})
    )
    ack, skipped = await until(player, lambda f: f["type"] in ("ack", "error"))
    assert ack["type"] == "ack" and ack["ref"] == 1
    granted, _ = await until(player, is_event("buzz"))
    assert granted["data"]["player_id"] == alice.id and granted["data"]["token_index"] == shown

    # One buzz per team: the teammate is refused with a reason.
    await teammate.send_to(
        text_data=json.dumps({"type": "buzz", "question_id": qid, "token_index": 4, "ref": 2})
    )
    refused, _ = await until(teammate, lambda f: f["type"] == "error")
    assert refused["code"] == "rejected" and refused["ref"] == 2

    await player.send_to(text_data=json.dumps({"type": "answer", "question_id": qid, "text": "moby dick"}))
    ruled, _ = await until(player, is_event("buzz_ruled"))
    assert ruled["data"]["ruling"] == "correct" and ruled["data"]["points"] == 15  # before the (*) at word 8
    ended, seen_by_player = await until(player, is_event("tossup_ended"))
    assert "Moby" in ended["data"]["answer_line"]
    # Never the answer line to a player before the reveal.
    assert not any(f.get("event") == "tossup_answer" for f in seen_by_player + skipped)

    buzz = await database_sync_to_async(lambda: Buzz.objects.get(match=match))()
    assert (buzz.ruling, buzz.verdict, buzz.points, buzz.token_index) == ("correct", "accept", 15, shown)
    assert buzz.revealed_at <= buzz.received_at <= buzz.accepted_at <= buzz.ruled_at

    # The spectator saw the reveal too, and the scores.
    ended_w, seen_w = await until(watcher, is_event("tossup_ended"))
    assert all(f.get("event") != "tossup_answer" for f in seen_w)
    assert ended_w["data"]["scores"][str(alice.team_id)] == 15
    for comm in (moderator, player, teammate, watcher):
        await comm.disconnect()


async def test_a_reconnecting_player_gets_a_snapshot_with_the_words_so_far():
    match = await new_match(config={"wpm": 300})
    bob = await seat(match, "bob")
    moderator = await connect(match, "moderate", match.moderator_token)
    await recv(moderator)
    await moderator.send_to(text_data=json.dumps({"type": "command", "name": "start"}))
    player = await connect(match, "play", bob.token)
    await recv(player)
    await until(player, lambda f: is_event("words")(f) and f["data"]["start"] >= 3)
    await player.disconnect()
    again = await connect(match, "play", bob.token)
    snap = await recv(again)
    revealed = snap["state"]["tossup"]["words_revealed"]
    assert len(revealed) >= 4 and revealed[0] == "clue0w0"
    assert "answer_line" not in (snap["state"]["tossup"] or {})
    # Later events continue after the snapshot's seq, without gaps in the words.
    nxt, _ = await until(again, is_event("words"))
    assert nxt["seq"] > snap["seq"] and nxt["data"]["start"] >= len(revealed)
    stored = await database_sync_to_async(
        lambda: list(MatchEvent.objects.filter(match=match).values_list("seq", flat=True))
    )()
    assert stored == list(range(1, len(stored) + 1))
    await again.disconnect()
    await moderator.disconnect()


async def test_spectators_cannot_buzz_and_players_cannot_moderate():
    match = await new_match()
    watcher = await connect(match, "watch")
    await recv(watcher)
    await watcher.send_to(text_data=json.dumps({"type": "buzz", "question_id": 1, "token_index": 0}))
    assert (await recv(watcher))["code"] == "forbidden"
    await watcher.disconnect()
