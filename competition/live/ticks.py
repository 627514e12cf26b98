"""The reading's fast path: a word revealed in one round trip to PostgreSQL.

Most of a live match's writes are the driver's ``Tick``s that reveal words. Through the locked
path (``competition.live.store.apply_command``) each costs ``SELECT … FOR UPDATE``, the events'
``INSERT``, the row's ``UPDATE`` and ``COMMIT`` (four round trips and the ORM's query building:
``python -m tools.bench_state``). This process remembers the row it last wrote or read for each
match (``competition.live.rowcache``): seq, live state, spec and records keys. A ``Tick`` is
applied to that remembered state and stored by one statement that updates the row *only if it
still holds what was remembered* and inserts the events in the same statement (so in one
implicit transaction). If anything else wrote the row meanwhile (a buzz through another process,
a moderator's command, a state-only write), the update matches no row and nothing is stored; the
driver then reads the row (:func:`read`) and tries once more on it, else falls back to the locked
path. So the fast path can only ever store what the locked path would have stored.

The driver calls :func:`tick_on_loop` from its event loop (the statement run on an autocommit
connection of its own, ``buzzer.dbpools.TICK_CONNECTIONS``), ahead of time :func:`plan_tick`,
and :func:`tick` on a database thread when that stored nothing.

PostgreSQL only (the SQLite demo has one writer and gains little); events with media tokens
(whose files become public), a change of status, spec or ruling record go the locked path.
"""

from __future__ import annotations

import json
import time
from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from typing import Any

from django.db import connection, transaction

from competition import game
from competition.game import EventName
from competition.live import rowcache, store
from competition.live.rowcache import Known
from competition.vocabulary import Role

Execute = Callable[[str, list[Any]], Awaitable[list[Any] | None]]

# The row as :class:`Known` keeps it; its large parts only when this process has not cached them.
_ROW_SQL = "SELECT seq, state::text, spec_key, records_key FROM competition_match WHERE id = %s"
_PARTS_SQL = (
    "SELECT spec, records FROM competition_match WHERE id = %s AND spec_key = %s AND records_key = %s"
)


async def read(match_id: int, execute: Execute) -> Known | None:
    """Read match ``match_id``'s row by ``execute`` (as :func:`tick_on_loop`'s: no database
    thread) and remember it: what another process wrote becomes this one's to build on. The
    spec and ruling record come from this process's cache, read with the row on a miss. None
    when ``execute`` ran nothing (no connection free) or the row is gone; raises what it raises.
    No lock is taken: the write built on it stores nothing if the row has moved meanwhile."""
    rows = await execute(_ROW_SQL, [match_id])
    if not rows:
        return None
    seq, live, spec_key, records_key = rows[0]
    parts = rowcache.cached_parts(match_id, spec_key, records_key)
    if parts is None:
        found = await execute(_PARTS_SQL, [match_id, spec_key, records_key])
        if not found:  # no connection free, or the parts were rewritten since: the locked way reads
            return None
        parts = game.MatchSpec.from_dict(found[0][0]), game.records_from_dict(found[0][1])
        rowcache.remember_spec(match_id, spec_key, parts[0])
        rowcache.remember_records(match_id, records_key, parts[1])
    known = Known(seq, live, game.MatchState.from_parts(json.loads(live), *parts), spec_key, records_key)
    rowcache.remember(match_id, known)
    return known


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
    ``store.Applied.events``) and their websocket frames (``store.event_frame``: each event's
    data serialised once, for the statement and the frame), and what the row holds once it is
    stored."""

    sql: str
    params: list[Any]
    events: list[dict[str, Any]]
    frames: list[str]
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
            "event": event.event,
            "data": dict(event.data),
            "audience": event.audience,
            "actor": actor,
        }
        for i, event in enumerate(events, start=1)
    ]
    values: list[Any] = []
    frames: list[str] = []
    for e in out:
        data = json.dumps(e["data"])
        values += [e["seq"], e["event"], data, e["audience"]]
        frames.append(store.event_frame(e["seq"], e["event"], data))
    seq = out[-1]["seq"]
    params = [
        live, seq, now, now,
        match_id, known.seq, known.spec_key, known.records_key, known.live,
        actor, *values,
    ]  # fmt: skip
    sql = _SQL.format(values=", ".join(["(%s::bigint, %s, %s, %s)"] * len(out)))
    return Write(sql, params, out, frames, Known(seq, live, new, known.spec_key, known.records_key))


def finish(match_id: int, known: Known, write: Write, rows: list[Any]) -> list[dict[str, Any]] | None:
    """After ``write`` was executed and returned ``rows``: its events, or None when the row
    had moved on (the statement stores all or nothing; ``known`` is forgotten)."""
    if not rows:
        rowcache.forget(match_id, known)
        return None
    rowcache.remember(match_id, write.known)
    return write.events


def store_words(
    match_id: int, known: Known, new: game.MatchState, events: list[game.Event], actor: str, now: float
) -> Write | None:
    """:func:`prepare`, execute on this thread's Django connection and :func:`finish`: the
    write stored, or None when the row had moved on."""
    write = prepare(match_id, known, new, events, actor, now)
    with connection.cursor() as cursor:
        cursor.execute(write.sql, write.params)
        rows = cursor.fetchall()
    return write if finish(match_id, known, write, rows) is not None else None


# --- the driver's Tick -----------------------------------------------------------------------


def _plan(match_id: int, now: float) -> tuple[Known, game.MatchState, list[game.Event]] | None:
    """A ``Tick`` applied to the row this process remembers, if it only reveals words (no
    media, no change of status, spec or records): ``(known, new state, events)``; else None."""
    known = rowcache.recall(match_id) if rowcache.usable() else None
    if known is None:
        return None
    try:
        new, events = game.apply(known.state, game.Tick(), now)
    except game.RuleViolation:
        return None  # the locked path raises it with the row's own state
    only_words = all(e.event == EventName.WORDS for e in events) and not store.media_shown(
        (e.event, e.data) for e in events
    )
    unchanged = (
        new.status == known.state.status
        and store.same_spec(known.state, new)
        and store.same_records(known.state.records(), new.records())
    )
    if not events or not only_words or not unchanged:
        return None
    return known, new, events


def tick(match_id: int, now: float | None = None) -> store.Applied:
    """The driver's ``Tick`` on a database thread: stored in one statement without the row lock
    when it only reveals words (:func:`store_words`), else through the locked path
    (``store.apply_command``, actor ``driver``). Raises what those raise."""
    now = time.time() if now is None else now
    plan = _plan(match_id, now)
    if plan is not None:
        known, new, events = plan
        write = store_words(match_id, known, new, events, Role.DRIVER, now)
        if write is not None:
            out, frames, deadline = write.events, write.frames, new.next_deadline
            transaction.on_commit(lambda: store.publish(match_id, out, deadline, frames))
            return store.Applied(out, out[-1]["seq"], deadline)
    return store.apply_command(match_id=match_id, command=game.Tick(), actor=Role.DRIVER, now=now)


@dataclass(frozen=True)
class PlannedTick:
    """A words-only ``Tick`` computed before it is due (:func:`plan_tick`): the remembered row
    it applies to, its due time ``at`` (epoch seconds), the state after it and its statement."""

    known: Known
    at: float
    new: game.MatchState
    write: Write


def plan_tick(match_id: int, at: float) -> PlannedTick | None:
    """The fast-path ``Tick`` due at ``at``, computed now, so that when it is due only its
    statement remains to run (:func:`tick_on_loop`); None when it would take the locked path.
    No I/O: the engine on the row this process remembers."""
    plan = _plan(match_id, at)
    if plan is None:
        return None
    known, new, events = plan
    return PlannedTick(known, at, new, prepare(match_id, known, new, events, Role.DRIVER, at))


def _still_due(planned: PlannedTick, now: float) -> bool:
    after = planned.new.next_deadline
    return planned.at <= now and (after is None or after > now)


async def tick_on_loop(
    match_id: int, execute: Execute, now: float | None = None, planned: PlannedTick | None = None
) -> store.Applied | None:
    """The driver's ``Tick`` on the fast path without a database thread: the one statement is
    run by ``execute(sql, params)`` on the caller's event loop (an autocommit connection, so
    stored once it returns; ``execute`` returns the rows, or None when it has no connection free
    and ran nothing). ``planned``: the ``Tick`` computed ahead by :func:`plan_tick`, used if it
    is the one ``now`` calls for (due, with no later deadline passed meanwhile) and its row is
    still the one remembered; else the ``Tick`` is computed afresh at ``now``. When this process
    remembers no row, or the row has moved (another process wrote it: a start, a buzz, a
    moderator's command), the row is read by ``execute`` too (:func:`read`) and the ``Tick``
    computed on it, once. The events are published as soon as they are stored. None when
    nothing was stored: the caller applies the ``Tick`` through :func:`tick` on a database
    thread. Raises what ``execute`` raises (a database outage): whether the statement was
    stored is then unknown, so this process's memory of the row is dropped and the next
    ``Tick`` reads the row afresh."""
    if not rowcache.usable():
        return None
    now = time.time() if now is None else now
    if planned is not None and (
        not _still_due(planned, now) or planned.known is not rowcache.recall(match_id)
    ):
        planned = None
    for _ in range(2):  # the remembered row, then the row as read now
        if planned is None:
            if rowcache.recall(match_id) is None and await read(match_id, execute) is None:
                return None
            planned = plan_tick(match_id, now)
            if planned is None:
                return None
        known, new, write = planned.known, planned.new, planned.write
        try:
            rows = await execute(write.sql, write.params)
        except BaseException:
            rowcache.forget(match_id, known)
            raise
        if rows is None:
            return None
        out = finish(match_id, known, write, rows)
        if out is not None:
            store.publish(match_id, out, new.next_deadline, write.frames)
            return store.Applied(out, out[-1]["seq"], new.next_deadline)
        planned = None  # the row had moved (``known`` is forgotten): read it
    return None
