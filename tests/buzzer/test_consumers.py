"""The websocket edge with Channels' WebsocketCommunicator: real consumers, real Redis
channel layer, the reading driver and the database (transactional)."""

from __future__ import annotations

import asyncio
import gc
import json
from typing import Any

import pytest
from channels.db import database_sync_to_async
from channels.testing import WebsocketCommunicator

from buzzer import protocol
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
    """The next frame that is not a heartbeat (those come every 5 s on their own)."""
    while True:
        frame = json.loads(await comm.receive_from(timeout=timeout))
        if frame.get("type") != "heartbeat":
            return frame


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
    # The seat connected: it counts in the match's fits from now on (competition.selectors).
    first = (await database_sync_to_async(Player.objects.get)(id=alice.id)).first_connected_at
    assert first is not None
    again = await connect(match, "play", alice.token)
    await recv(again)
    await again.disconnect()
    assert (await database_sync_to_async(Player.objects.get)(id=alice.id)).first_connected_at == first


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
    # A well-formed buzz before the match started is refused by the rules, with the rule's own code.
    await comm.send_to(text_data=json.dumps({"type": "buzz", "question_id": 1, "token_index": 0, "ref": 9}))
    frame = await recv(comm)
    assert frame["type"] == "error" and frame["code"] == "not_live" and frame["ref"] == 9 and frame["message"]
    assert frame["code"] in protocol.ERROR_CODES and "extra" not in frame
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
    assert refused["code"] == "team_already_buzzed" and refused["ref"] == 2

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


# --- hardening: hostile frames, floods, heartbeats, command ids, outages ---------------------


async def recv_any(comm: WebsocketCommunicator, timeout: float = 5.0) -> dict[str, Any]:
    return json.loads(await comm.receive_from(timeout=timeout))


HOSTILE = [
    ('{"type": []}', "unknown_type"),
    ('{"type": {"a": 1}}', "unknown_type"),
    ("[" * 1500 + "]" * 1500, "malformed"),
    ('{"type": "ping", "client_time": 1.7e308}', "invalid"),
    ('{"type": "ping", "client_time": NaN}', "invalid"),
    ('{"type": "ping", "client_time": 1, "ref": {"x": 1}}', "invalid"),
    ('{"type": "buzz", "question_id": 1, "token_index": 0}', "forbidden"),
    ('{"type": "command", "name": "undo"}', "forbidden"),
    ('{"type": "heartbeat_ack", "server_time": "soon"}', "invalid"),
    ("x" * 5000, "malformed"),
]


async def test_hostile_frames_from_a_spectator_get_errors_and_the_room_keeps_reading():
    match = await new_match(config={"wpm": 300})  # a word every 0.2 s
    moderator = await connect(match, "moderate", match.moderator_token)
    bystander = await connect(match, "play", (await seat(match, "bob")).token)
    spectator = await connect(match, "watch")
    for comm in (moderator, bystander, spectator):
        assert (await recv(comm))["type"] == "snapshot"
    await moderator.send_to(text_data=json.dumps({"type": "command", "name": "start"}))
    await until(bystander, is_event("words"))
    for text, code in HOSTILE:
        await spectator.send_to(text_data=text)
        frame, _ = await until(spectator, lambda f: f["type"] == "error")
        assert frame["code"] == code, text[:40]
    await spectator.send_to(bytes_data=b"\x00\x01")
    assert (await until(spectator, lambda f: f["type"] == "error"))[0]["code"] == "malformed"
    # The spectator still works, and the bystander still gets the words, in order, none skipped.
    await spectator.send_to(text_data='{"type": "ping", "client_time": 1.5, "ref": "p"}')
    pong, _ = await until(spectator, lambda f: f["type"] == "pong")
    assert pong["client_time"] == 1.5
    positions: list[int] = []
    async with asyncio.timeout(10):
        while not positions or positions[-1] < 12:
            frame, _ = await until(bystander, is_event("words"))
            positions.append(frame["data"]["start"] + len(frame["data"]["words"]) - 1)
    assert positions == sorted(positions) and positions[-1] >= 12
    actors = await database_sync_to_async(
        lambda: set(
            MatchEvent.objects.filter(match=match)
            .exclude(event="player_joined")  # the lobby seats, logged by each joining player
            .values_list("actor", flat=True)
        )
    )()
    assert actors <= {"moderator", "driver"}  # nothing in the log came from the spectator
    for comm in (moderator, bystander, spectator):
        await comm.disconnect()


async def test_25_sockets_on_one_seat_flooding_buzzes_reach_the_service_a_handful_of_times(monkeypatch):
    from competition import services

    calls: list[float] = []
    real_buzz = services.buzz

    def counting_buzz(**kw: Any):
        calls.append(kw["now"])
        return real_buzz(**kw)

    monkeypatch.setattr(services, "buzz", counting_buzz)
    from buzzer import consumers, protocol

    monkeypatch.setattr(consumers.MatchConsumer, "seat_limiter", protocol.SeatLimiter())
    match = await new_match(config={"wpm": 120}, words=60)  # a slow tossup: still reading throughout
    alice = await seat(match, "alice")
    moderator = await connect(match, "moderate", match.moderator_token)
    await recv(moderator)
    sockets = [await connect(match, "play", alice.token) for _ in range(25)]
    for comm in sockets:
        await recv(comm)
    await moderator.send_to(text_data=json.dumps({"type": "command", "name": "start"}))
    started, _ = await until(sockets[0], is_event("tossup_started"))
    qid = started["data"]["question_id"]
    buzz = json.dumps({"type": "buzz", "question_id": qid, "token_index": 0})
    t0 = asyncio.get_running_loop().time()
    for _ in range(40):  # 1,000 buzzes: each socket's whole per-socket burst
        for comm in sockets:
            await comm.send_to(text_data=buzz)
    answers: dict[str, int] = {}
    for comm in sockets:
        for _ in range(40):
            frame, _ = await until(comm, lambda f: f["type"] in ("ack", "error"))
            key = frame["type"] if frame["type"] == "ack" else frame["code"]
            answers[key] = answers.get(key, 0) + 1
    elapsed = asyncio.get_running_loop().time() - t0
    rows = await database_sync_to_async(
        lambda: MatchEvent.objects.filter(match=match, event="buzz_received").count()
    )()
    print(
        f"\n1,000 buzzes from 25 sockets on one seat in {elapsed:.2f} s: {len(calls)} reached the service; {answers}"
    )
    assert sum(answers.values()) == 1000  # every frame answered
    assert len(calls) <= 5 + 2 * elapsed + 1  # the seat's burst, then 2/s
    assert answers["rate_limited"] >= 1000 - len(calls)
    assert rows == answers.get("ack", 0) == 1  # one buzz stored; the rest refused (team already buzzed)
    for comm in (*sockets, moderator):
        await comm.disconnect()


async def test_heartbeats_carry_the_last_seq_and_their_acks_measure_the_delay_bound(monkeypatch):
    from buzzer import protocol, rooms

    monkeypatch.setattr(protocol, "HEARTBEAT_INTERVAL", 0.2)
    match = await new_match()
    comm = await connect(match, "play", (await seat(match, "bob")).token)
    snap = await recv_any(comm)
    assert snap["type"] == "snapshot"
    beats = []
    async with asyncio.timeout(5):
        while len(beats) < 3:
            frame = await recv_any(comm)
            if frame["type"] == "heartbeat":
                beats.append(frame)
                await asyncio.sleep(0.05)  # the round trip: ≥ 50 ms
                await comm.send_to(
                    text_data=json.dumps({"type": "heartbeat_ack", "server_time": frame["server_time"]})
                )
    assert all(b["seq"] == snap["seq"] for b in beats)
    # A forged echo (a server_time never sent) measures nothing.
    await comm.send_to(text_data=json.dumps({"type": "heartbeat_ack", "server_time": 1.0}))
    await asyncio.sleep(0.1)
    (consumer,) = rooms.Room.rooms[match.id].members
    assert 0.025 <= consumer.clock.delay_bound <= 0.5 / 2 and len(consumer.clock.rtts) >= 2
    assert min(consumer.clock.rtts) < 1
    await comm.disconnect()


async def test_a_repeated_command_id_is_applied_once_and_acked_as_a_duplicate():
    match = await new_match()
    moderator = await connect(match, "moderate", match.moderator_token)
    snap = await recv(moderator)
    command = {"type": "command", "name": "start", "command_id": f"start:{{}}@{snap['seq']}"}
    await moderator.send_to(text_data=json.dumps({**command, "ref": 1}))
    first, _ = await until(moderator, lambda f: f["type"] in ("ack", "error"))
    await moderator.send_to(text_data=json.dumps({**command, "ref": 2}))
    second, _ = await until(moderator, lambda f: f["type"] in ("ack", "error"))
    assert first["type"] == "ack" and "duplicate" not in first
    assert second == {"type": "ack", "ref": 2, "seq": first["seq"], "duplicate": True}
    started = await database_sync_to_async(
        lambda: MatchEvent.objects.filter(match=match, event="match_started").count()
    )()
    assert started == 1
    await moderator.disconnect()


async def test_connecting_while_redis_is_down_gets_unavailable_not_a_crashed_handshake(monkeypatch):
    from channels_redis.pubsub import RedisPubSubChannelLayer

    from buzzer import rooms
    from tools import launcher

    dead = RedisPubSubChannelLayer(hosts=[f"redis://127.0.0.1:{launcher.free_port()}/0"])
    monkeypatch.setattr(rooms, "get_channel_layer", lambda: dead)
    monkeypatch.setattr(rooms, "JOIN_TIMEOUT", 1.0)
    match = await new_match()
    comm = await connect(match, "watch")
    frame = await recv(comm)
    assert frame["type"] == "error" and frame["code"] == "unavailable"
    assert (await comm.receive_output(timeout=2)) == {"type": "websocket.close", "code": 1011}
    assert match.id not in rooms.Room.rooms  # nobody left behind in a room
    await comm.disconnect()


async def test_connecting_while_the_database_is_down_gets_unavailable(monkeypatch):
    from django.db import OperationalError

    from buzzer import consumers

    def down(*args: Any) -> None:
        raise OperationalError("could not connect to server")

    monkeypatch.setattr(consumers, "_authenticate", down)
    match = await new_match()
    comm = WebsocketCommunicator(application, f"/ws/match/{match.join_code}/watch/")
    connected, _ = await comm.connect()
    assert connected
    assert (await recv(comm))["code"] == "unavailable"
    assert (await comm.receive_output(timeout=2)) == {"type": "websocket.close", "code": 1011}
    await comm.disconnect()


async def test_an_unexpected_fault_is_answered_internal_and_the_connection_lives_on(monkeypatch):
    from competition import services

    def broken(**kw: Any):
        raise KeyError("a bug")

    monkeypatch.setattr(services, "flag_question", broken)
    match = await new_match()
    comm = await connect(match, "play", (await seat(match, "bob")).token)
    await recv(comm)
    await comm.send_to(
        text_data=json.dumps({"type": "flag", "question_id": 1, "problem": "ambiguity", "ref": "f"})
    )
    frame, _ = await until(comm, lambda f: f["type"] == "error")
    assert (frame["code"], frame["ref"]) == ("internal", "f")
    await comm.send_to(text_data=json.dumps({"type": "ping", "client_time": 2.5}))
    assert (await until(comm, lambda f: f["type"] == "pong"))[0]["client_time"] == 2.5
    await comm.disconnect()


async def test_a_closed_connection_is_freed_without_waiting_for_the_collector():
    """A seat's connection leaves no reference cycle behind: with the cyclic collector off,
    its consumer is gone once it has disconnected (a cycle would keep it, and all it holds,
    until a full collection walked every open connection)."""
    from buzzer.consumers import MatchConsumer

    def consumers() -> int:
        return sum(isinstance(o, MatchConsumer) for o in gc.get_objects())

    match = await new_match()
    alice = await seat(match, "alice")
    gc.collect()
    gc.disable()
    try:
        comm = await connect(match, "play", alice.token)
        assert (await recv(comm))["type"] == "snapshot"
        assert consumers() == 1
        await comm.disconnect()
        del comm
        for _ in range(50):  # the cancelled heartbeat task finishes
            if consumers() == 0:
                break
            await asyncio.sleep(0.1)
        assert consumers() == 0
    finally:
        gc.enable()


async def test_an_open_connection_keeps_no_task_waiting_for_its_next_message():
    """What an open connection keeps, every full collection walks: its messages are awaited
    in the task that runs it, not in a task of their own (Channels' loop keeps one per
    connection, here a task on the communicator's input queue)."""

    def receiving() -> int:
        return sum(task.get_coro().__qualname__ == "Queue.get" for task in asyncio.all_tasks())

    match = await new_match()
    first = await connect(match, "watch")
    await recv(first)
    before = receiving()
    second = await connect(match, "watch")
    await recv(second)
    assert receiving() == before
    await first.disconnect()
    await second.disconnect()
