"""Seat presence: the pure state function, and the moderator's ``presence`` frames over real
consumers and Redis (a tablet connects, two sockets on one seat, the tablet closes)."""

from __future__ import annotations

import asyncio
import json
from typing import Any

import pytest
from channels.testing import WebsocketCommunicator

from buzzer import presence, protocol
from config.asgi import application
from tests.buzzer.test_consumers import new_match, seat

NOW = 1_000_000.0


def test_live_connections_count_and_a_closed_seat_reconnects_then_is_gone():
    beats = [("1:a", NOW - 2), ("1:b", NOW - 4), ("2:c", NOW - 1)]
    states = presence.seat_states(beats, {3: NOW - 5, 4: NOW - 60, 2: NOW - 100}, NOW)
    assert states == [
        {"player_id": 1, "state": "connected", "connections": 2, "last_seen": None},
        {
            "player_id": 2,
            "state": "connected",
            "connections": 1,
            "last_seen": None,
        },  # a new socket after closing
        {"player_id": 3, "state": "reconnecting", "connections": 0, "last_seen": NOW - 5},
        {"player_id": 4, "state": "gone", "connections": 0, "last_seen": NOW - 60},
    ]


def test_a_connection_whose_process_died_counts_as_left_at_its_last_heartbeat():
    stale = NOW - presence.STALE_AFTER - 1
    assert presence.seat_states([("5:x", stale)], {}, NOW) == [
        {"player_id": 5, "state": "reconnecting", "connections": 0, "last_seen": stale}
    ]
    old = NOW - protocol.RECONNECT_WINDOW - presence.STALE_AFTER - 1
    assert presence.seat_states([("5:x", old)], {}, NOW)[0]["state"] == "gone"


async def _open(path: str) -> WebsocketCommunicator:
    comm = WebsocketCommunicator(application, path)
    connected, _ = await comm.connect()
    assert connected
    return comm


async def _presence(comm: WebsocketCommunicator, pred, timeout: float = 10.0) -> dict[str, Any]:
    """The first presence frame whose seats satisfy ``pred`` (other frames are skipped)."""
    async with asyncio.timeout(timeout):
        while True:
            frame = json.loads(await comm.receive_from(timeout=timeout))
            if frame["type"] == "presence" and pred({s["player_id"]: s for s in frame["seats"]}):
                return frame


@pytest.mark.django_db(transaction=True)
async def test_the_moderator_sees_a_tablet_connect_and_then_reconnecting():
    match = await new_match()
    alice = await seat(match, "alice")
    base = f"/ws/match/{match.join_code}"
    mod = await _open(f"{base}/moderate/?token={match.moderator_token}&presence=1")
    plain = await _open(f"{base}/moderate/?token={match.moderator_token}")  # did not ask: no presence
    first = await _presence(mod, lambda seats: alice.id not in seats)
    assert first["seats"] == []  # nobody has connected yet: every seat "never joined"

    tablet = await _open(f"{base}/play/?token={alice.token}")
    second = await _open(f"{base}/play/?token={alice.token}")  # the same seat on two sockets
    await _presence(mod, lambda seats: seats.get(alice.id, {}).get("connections") == 2)
    await second.disconnect()
    await _presence(mod, lambda seats: seats.get(alice.id, {}).get("connections") == 1)
    await tablet.disconnect()
    frame = await _presence(mod, lambda seats: seats.get(alice.id, {}).get("state") == "reconnecting")
    gone = {s["player_id"]: s for s in frame["seats"]}[alice.id]
    assert gone["connections"] == 0 and frame["server_time"] - gone["last_seen"] < 5

    frames = []
    while not await plain.receive_nothing(timeout=0.2):
        frames.append(json.loads(await plain.receive_from()))
    assert all(f["type"] != "presence" for f in frames)
    await mod.disconnect()
    await plain.disconnect()
