"""The reading's fast path: a word revealed in one round trip to PostgreSQL.

Most of a live match's writes are the driver's ``Tick``s that reveal words. Through the locked
path each costs a health check, ``SELECT … FOR UPDATE``, the events' ``INSERT``, the row's
``UPDATE`` and ``COMMIT`` (five round trips and the ORM's query building: about 2.3 ms a word,
``python -m tools.bench_state``). This process remembers the row it last wrote or read for each
match (:func:`remember`): seq, live state, spec and records keys. A ``Tick`` is applied to that
remembered state and stored by one statement that updates the row *only if it still holds what
was remembered* and inserts the events in the same statement (so in one implicit transaction).
If anything else wrote the row meanwhile (a buzz through another process, a moderator's
command, a state-only write), the update matches no row and nothing is stored; the driver then
reads the row (:func:`read`) and tries once more on it, else falls back to the locked path. So
the fast path can only ever store what the locked path would have stored.

The statement needs no Django connection (:func:`prepare`, :func:`finish`): the reading driver
runs it from its event loop on an autocommit connection of its own (``services.tick_on_loop``),
and a database thread through :func:`store` when none is free.

PostgreSQL only (the SQLite demo has one writer and gains little); events with media tokens
(whose files become public), a change of status, spec or ruling record go the locked path.
"""

from __future__ import annotations

import json
import threading
from collections import OrderedDict
from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from typing import Any

from django.db import connection

from competition import game, selectors


@dataclass(frozen=True)
class Known:
    """What this process last stored or read of one match row."""

    seq: int
    live: str  # Match.state as stored, serialised
    state: game.MatchState
    spec_key: str
    records_key: str


_known: OrderedDict[int, Known] = OrderedDict()  # least recently written first
_lock = threading.Lock()  # the live-db threads of a process share the map


def remember(match_id: int, known: Known) -> None:
    """Record ``known`` unless a newer seq of the match is recorded already; at most
    ``selectors.CACHE_SIZE`` matches are kept (the least recently written is dropped)."""
    with _lock:
        old = _known.get(match_id)
        if old is None or old.seq <= known.seq:
            _known[match_id] = known
            _known.move_to_end(match_id)
            while len(_known) > selectors.CACHE_SIZE:
                _known.popitem(last=False)


def recall(match_id: int) -> Known | None:
    return _known.get(match_id)


def forget(match_id: int, known: Known) -> None:
    with _lock:
        if _known.get(match_id) is known:
            del _known[match_id]


# The row as :class:`Known` keeps it; its large parts only when this process has not cached them.
_ROW_SQL = "SELECT seq, state::text, spec_key, records_key FROM competition_match WHERE id = %s"
_PARTS_SQL = (
    "SELECT spec, records FROM competition_match WHERE id = %s AND spec_key = %s AND records_key = %s"
)


async def read(
    match_id: int, execute: Callable[[str, list[Any]], Awaitable[list[Any] | None]]
) -> Known | None:
    """Read match ``match_id``'s row by ``execute`` (as ``services.tick_on_loop``'s: no database
    thread) and remember it: what another process wrote becomes this one's to build on. The
    spec and ruling record come from this process's cache, read with the row on a miss. None
    when ``execute`` ran nothing (no connection free) or the row is gone; raises what it raises.
    No lock is taken: the write built on it stores nothing if the row has moved meanwhile."""
    rows = await execute(_ROW_SQL, [match_id])
    if not rows:
        return None
    seq, live, spec_key, records_key = rows[0]
    parts = selectors.cached_parts(match_id, spec_key, records_key)
    if parts is None:
        found = await execute(_PARTS_SQL, [match_id, spec_key, records_key])
        if not found:  # no connection free, or the parts were rewritten since: the locked way reads
            return None
        parts = game.MatchSpec.from_dict(found[0][0]), game.records_from_dict(found[0][1])
        selectors.remember_spec(match_id, spec_key, parts[0])
        selectors.remember_records(match_id, records_key, parts[1])
    known = Known(seq, live, game.MatchState.from_parts(json.loads(live), *parts), spec_key, records_key)
    remember(match_id, known)
    return known


def usable() -> bool:
    """Whether this process's database takes the one-statement write."""
    return connection.vendor == "postgresql"


SET_PARAMS = 4  # the first parameters of _SQL: the values it stores in the match row
# The row is updated only if it still holds the remembered seq, keys and live state; the events
# are inserted only if it was (``FROM m``): none of either otherwise.
_SQL = """
WITH m AS (
    UPDATE competition_match
    SET state = %s::jsonb, seq = %s, driven_at = GREATEST(COALESCE(driven_at, %s), %s)
    WHERE id = %s AND seq = %s AND spec_key = %s AND records_key = %s AND state = %s::jsonb
    RETURNING id
)
INSERT INTO competition_matchevent (match_id, seq, event, payload, audience, actor, command_id, created_at)
SELECT m.id, v.seq, v.event, v.payload::jsonb, v.audience, %s, '', now()
FROM m, (VALUES {values}) AS v (seq, event, payload, audience)
RETURNING seq
"""


@dataclass(frozen=True)
class Write:
    """One fast-path write: the statement and its parameters, the events' broadcast form (as
    ``services.Applied.events``) and what the row holds once it is stored."""

    sql: str
    params: list[Any]
    events: list[dict[str, Any]]
    known: Known


def prepare(
    match_id: int, known: Known, new: game.MatchState, events: list[game.Event], actor: str, now: float
) -> Write:
    """The write of ``events`` (seqs after ``known.seq``) and ``new``'s live state, to be
    executed on PostgreSQL by any connection in autocommit; see :func:`finish`."""
    live = json.dumps(new.live_dict())
    out = [
        {
            "seq": known.seq + i,
            "event": ev.event,
            "data": dict(ev.data),
            "audience": ev.audience,
            "actor": actor,
        }
        for i, ev in enumerate(events, start=1)
    ]
    values: list[Any] = []
    for e in out:
        values += [e["seq"], e["event"], json.dumps(e["data"]), e["audience"]]
    seq = out[-1]["seq"]
    params = [
        live, seq, now, now,
        match_id, known.seq, known.spec_key, known.records_key, known.live,
        actor, *values,
    ]  # fmt: skip
    sql = _SQL.format(values=", ".join(["(%s::bigint, %s, %s, %s)"] * len(out)))
    return Write(sql, params, out, Known(seq, live, new, known.spec_key, known.records_key))


def finish(match_id: int, known: Known, write: Write, rows: list[Any]) -> list[dict[str, Any]] | None:
    """After ``write`` was executed and returned ``rows``: its events, or None when the row
    had moved on (the statement stores all or nothing; ``known`` is forgotten)."""
    if not rows:
        forget(match_id, known)
        return None
    remember(match_id, write.known)
    return write.events


def store(
    match_id: int, known: Known, new: game.MatchState, events: list[game.Event], actor: str, now: float
) -> list[dict[str, Any]] | None:
    """:func:`prepare`, execute on this thread's Django connection and :func:`finish`."""
    write = prepare(match_id, known, new, events, actor, now)
    with connection.cursor() as cursor:
        cursor.execute(write.sql, write.params)
        rows = cursor.fetchall()
    return finish(match_id, known, write, rows)
