"""Seat presence: which seats have a live socket, across every server process of a match.

Presence is not game state: it never goes through the engine or the event log. Each player
connection registers itself in Redis (shared by every process), refreshes its entry with its
heartbeats and removes it when it closes; a moderator connection that asks for it (``presence=1``
in its query) gets a ``presence`` frame whenever the picture changes (docs/PROTOCOL.md).

Redis keys, per match (both expire PRESENCE_TTL after the last write); ``<match>`` is
:func:`match_key` — the id and the join code, since match ids repeat across databases that share
one Redis (a test suite's scratch databases, two installs):

- ``<REDIS_PREFIX>presence:<match>``: sorted set, member ``<player_id>:<connection uuid>``, score the
  connection's last heartbeat (epoch seconds). An entry older than STALE_AFTER belongs to a
  process that died without saying goodbye and counts as a disconnection at that time.
- ``<REDIS_PREFIX>presence:<match>:left``: hash, ``<player_id>`` → epoch seconds its last socket closed.
"""

from __future__ import annotations

import asyncio
import weakref
from typing import Any

from django.conf import settings

from buzzer import protocol

# A connection's entry is live while its heartbeats keep coming (3 missed beats: its process died).
STALE_AFTER = 3 * protocol.HEARTBEAT_INTERVAL + 1.0
PRESENCE_TTL = 24 * 3600  # seconds the keys outlive the last connection of a match
POLL_INTERVAL = 1.0  # seconds between a moderator connection's looks at the presence keys
WRITE_TIMEOUT = 1.0  # seconds a connection waits on a presence write (Redis away: it lives on)

_clients: weakref.WeakKeyDictionary[asyncio.AbstractEventLoop, Any] = weakref.WeakKeyDictionary()


def _redis() -> Any:
    """One client per event loop (a client is bound to the loop it was made in)."""
    loop = asyncio.get_running_loop()
    client = _clients.get(loop)
    if client is None:
        import redis.asyncio as aioredis

        client = _clients[loop] = aioredis.from_url(
            settings.REDIS_URL, socket_timeout=1.0, socket_connect_timeout=1.0
        )
    return client


def match_key(match_id: int, join_code: str) -> str:
    """The presence namespace of one match: ``<id>-<JOIN CODE>``."""
    return f"{match_id}-{join_code.upper()}"


def _keys(match: str) -> tuple[str, str]:
    live = f"{settings.REDIS_PREFIX}presence:{match}"  # this instance's (config/settings.py)
    return live, f"{live}:left"


async def beat(match: str, player_id: int, connection: str, now: float) -> None:
    """Register (or refresh) one player connection; called on connect and with each heartbeat."""
    live, left = _keys(match)
    async with _redis().pipeline(transaction=False) as pipe:
        pipe.zadd(live, {f"{player_id}:{connection}": now})
        pipe.expire(live, PRESENCE_TTL)
        pipe.expire(left, PRESENCE_TTL)
        await pipe.execute()


async def leave(match: str, player_id: int, connection: str, now: float) -> None:
    """Remove one player connection (its socket closed) and note when the seat was last seen."""
    live, left = _keys(match)
    async with _redis().pipeline(transaction=True) as pipe:
        pipe.zrem(live, f"{player_id}:{connection}")
        pipe.hset(left, str(player_id), repr(now))
        pipe.expire(left, PRESENCE_TTL)
        await pipe.execute()


async def read(match: str, now: float) -> dict[str, Any]:
    """The ``presence`` frame for the match at ``now`` (see :func:`seat_states`)."""
    live, left = _keys(match)
    async with _redis().pipeline(transaction=False) as pipe:
        pipe.zrange(live, 0, -1, withscores=True)
        pipe.hgetall(left)
        entries, gone = await pipe.execute()
    beats = [(member.decode(), score) for member, score in entries]
    closed = {int(k): float(v) for k, v in gone.items()}
    return {"type": "presence", "server_time": now, "seats": seat_states(beats, closed, now)}


def seat_states(beats: list[tuple[str, float]], closed: dict[int, float], now: float) -> list[dict[str, Any]]:
    """Each seat ever seen, sorted by player id: ``{"player_id", "state", "connections", "last_seen"}``.

    ``beats``: (``"<player_id>:<uuid>"``, last heartbeat) per registered connection; ``closed``:
    player id → when its last socket closed. ``state`` (protocol.PRESENCE_STATES): ``connected``
    with at least one live connection; else ``reconnecting`` within RECONNECT_WINDOW seconds of
    the last sight, ``gone`` after. ``last_seen``: epoch seconds, None while connected. A seat
    not listed never connected (the dashboard shows it as "never joined")."""
    live: dict[int, int] = {}
    seen: dict[int, float] = dict(closed)
    for member, score in beats:
        player_id = int(member.split(":", 1)[0])
        if now - score <= STALE_AFTER:
            live[player_id] = live.get(player_id, 0) + 1
        else:  # its process died: the seat was last seen at its last heartbeat
            seen[player_id] = max(seen.get(player_id, score), score)
    seats = []
    for player_id in sorted(live.keys() | seen.keys()):
        if player_id in live:
            state, last = "connected", None
        else:
            last = seen[player_id]
            state = "reconnecting" if now - last < protocol.RECONNECT_WINDOW else "gone"
        seats.append(
            {"player_id": player_id, "state": state, "connections": live.get(player_id, 0), "last_seen": last}
        )
    return seats
