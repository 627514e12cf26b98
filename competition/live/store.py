"""The one door that changes a match: lock the row, apply a command to the pure engine, append
the events (sequence-numbered), project them on the buzz log, save the state, publish on commit.

Every writer goes through :func:`apply_command`: the services' commands (websocket consumers,
views, management commands), the reading driver's ``Tick`` when it cannot take the words' fast
path (``competition.live.ticks``), and :func:`resume_after_gap` when a driver takes a match over.
Raises the engine's ``RuleViolation`` or ``competition.errors.ServiceError`` without changing
anything.
"""

from __future__ import annotations

import hashlib
import json
import logging
import time
from collections.abc import Iterable
from dataclasses import dataclass
from typing import Any

from django.db import transaction

from competition import game, outbox, selectors, signals
from competition.errors import ServiceError
from competition.game import EventName
from competition.live import rowcache
from competition.live.projection import project
from competition.models import Match, MatchEvent, MediaFile
from competition.vocabulary import MatchStatus, Role

log = logging.getLogger(__name__)
# A driver that starts driving a match last driven this long ago stops the clock for the gap
# (resume_after_gap); shorter gaps are within the driver's heartbeat jitter.
GAP_MIN = 1.0
# A player's or moderator's command stops the clock only for a longer gap: the driver's
# heartbeat (every 0.5 s) may lag under load, and a spurious pause would cost nothing but noise.
COMMAND_GAP_MIN = 3.0


# Events that do not change what a moderator decides on (``seen_seq`` of :func:`apply_command`):
# the reading going on, a buzz claim logged before its race is decided (the race's ``buzz`` event
# is what changes the match), a bot's would-be buzz, proposal or bonus suggestion awaiting a human,
# seats and names, an expert flag. Everything else (a tossup ending, a buzz won, a ruling, a
# pause…) makes a view stale. Presence is no event at all.
VIEW_KEEPING_EVENTS = (
    EventName.WORDS,
    EventName.BUZZ_RECEIVED,
    EventName.MUTED_BUZZ,
    EventName.BUZZ_PROPOSED,
    EventName.BONUS_SUGGESTION,
    EventName.PLAYER_JOINED,
    EventName.TEAM_ADDED,
    EventName.RENAMED,
    EventName.QUESTION_FLAGGED,  # a service-level event (competition.services.flag_question)
)
# Events that change a ruling of an ended match: its end jobs (fits) run again.
CORRECTING_EVENTS = (EventName.RULING_CORRECTED, EventName.RULING_REVIEWED, EventName.BUZZ_ADDED)
# The driver's stop of the clock for a gap nobody drove (a ``paused`` and a ``resumed`` at once)
# leaves the match where it was.
GAP_EVENTS = (EventName.PAUSED, EventName.RESUMED)


@dataclass(frozen=True)
class Applied:
    """What :func:`apply_command` did: the stored events (as broadcast) and the new head seq."""

    events: list[dict[str, Any]]
    seq: int
    next_deadline: float | None
    # True when the command's ``command_id`` had been applied already: nothing was applied
    # again and ``seq`` is that earlier command's last event.
    duplicate: bool = False


def apply_command(
    *,
    match_id: int,
    command: Any,
    actor: str,
    now: float | None = None,
    extra_events: list | None = None,
    command_id: str = "",
    seen_seq: int | None = None,
) -> Applied:
    """Apply one engine command under a row lock and persist its events.

    ``actor`` (``moderator``, ``player:<id>``, ``driver``…) is recorded on every event.
    ``extra_events`` are service-level log entries appended before the engine's
    (e.g. ``question_flagged``). ``command_id`` (a client's id for the command, any string;
    ids over 64 characters are stored as their sha256) makes the command idempotent: if an
    event of this match already carries it, nothing is applied and the earlier result is
    returned with ``duplicate=True`` (a double click, two dashboards sending the same
    command). ``seen_seq``: the last seq of the view the command was made on (a moderator's
    dashboard); when an event after it changes what the view showed (any event but
    :data:`VIEW_KEEPING_EVENTS` and the driver's gap pause/resume) the command is refused,
    decided under the row lock, so of two commands made on the same view only the first
    applies. A repeated ``command_id`` is answered as a duplicate before that check.
    Raises ``game.RuleViolation`` (nothing stored) when the rules refuse the command,
    ServiceError ``stale_view`` (nothing stored; ``extra``: ``seen_seq``, ``seq``) for a
    command made on an out-of-date view, ``invalid`` for a non-string ``command_id``."""
    now = time.time() if now is None else now
    command_id = command_key(command_id)
    with transaction.atomic():
        match = selectors.live_rows().select_for_update().get(pk=match_id)
        if command_id:
            earlier = (
                MatchEvent.objects.filter(match=match, command_id=command_id)
                .order_by("-seq")
                .values_list("seq", flat=True)
                .first()
            )
            if earlier is not None:
                deadline = selectors.match_state(match).next_deadline
                return Applied([], earlier, deadline, duplicate=True)
        if seen_seq is not None and seen_seq < match.seq and _view_changed(match, seen_seq):
            raise ServiceError(
                "stale_view",
                f"the match has moved on since your view (event {seen_seq}; now {match.seq}): look again"
                " and resend if it still applies",
                {"seen_seq": seen_seq, "seq": match.seq},
            )
        state = selectors.match_state(match)
        # A command that reaches a match nobody has driven for a while (its server died, the
        # driver has not taken over yet) must not fire the deadlines that fell due meanwhile.
        gap_events: list[game.Event] = []
        if command is not None and actor != Role.DRIVER:  # the driver stops the clock itself on takeover
            state, gap_events = _stop_the_clock_for_gap(match, state, None, now, COMMAND_GAP_MIN)
        new_state, engine_events = (state, []) if command is None else game.apply(state, command, now)
        if gap_events:
            return store_events(match, state, new_state, [*gap_events, *(extra_events or []), *engine_events],
                                command, actor, now, command_id)  # fmt: skip
        if not engine_events and not extra_events:
            # Ticks that change nothing visible still persist the state (deadlines moved);
            # serialised once, written only if it differs.
            live = new_state.live_dict()
            if live != match.state or not same_records(state.records(), new_state.records()):
                match.save(update_fields=write_parts(match, state, new_state))
            remember(match, new_state)
            return Applied([], match.seq, new_state.next_deadline)
        all_events = list(extra_events or []) + list(engine_events)
        return store_events(match, state, new_state, all_events, command, actor, now, command_id)


def _view_changed(match: Match, seen_seq: int) -> bool:
    """Whether an event after ``seen_seq`` changes what a view at ``seen_seq`` showed."""
    later = MatchEvent.objects.filter(match=match, seq__gt=seen_seq).exclude(event__in=VIEW_KEEPING_EVENTS)
    return later.exclude(actor=Role.DRIVER, event__in=GAP_EVENTS).exists()


def command_key(command_id: Any) -> str:
    """A client's command id as stored (``MatchEvent.command_id``: its sha256 when longer than
    the column). Raises ServiceError ``invalid`` when it is not a string."""
    if not isinstance(command_id, str):
        raise ServiceError("invalid", "command_id must be a string")
    if len(command_id) > 64:  # the column's width; a client's id may be longer
        return hashlib.sha256(command_id.encode()).hexdigest()
    return command_id


def store_events(
    match: Match,
    old: game.MatchState,
    new: game.MatchState,
    events: list[game.Event],
    command: Any,
    actor: str,
    now: float,
    command_id: str = "",
) -> Applied:
    """Append ``events`` (sequence-numbered), project them, save the state; inside the
    caller's transaction and row lock. Publishing, and the outbox's jobs of an ended match,
    happen on commit."""
    rows: list[MatchEvent] = []
    seq = match.seq
    for event in events:
        seq += 1
        rows.append(
            MatchEvent(
                match=match,
                seq=seq,
                event=event.event,
                payload=dict(event.data),
                audience=event.audience,
                actor=actor,
                command_id=command_id,
            )
        )
    MatchEvent.objects.bulk_create(rows)
    _mark_revealed(rows)
    project(match, rows, command, old, new, now)
    parts = write_parts(match, old, new)
    match.seq = seq
    # Whatever this command was, the engine advanced the match to ``now``: nobody was away
    # before that (the driver's gap recovery starts from here at the earliest).
    # Nothing drives a match in the lobby (a seat joining there starts no clock).
    if new.status != MatchStatus.LOBBY:
        match.driven_at = max(match.driven_at or now, now)
    match.save(update_fields=[*parts, "seq", "status", "ended_at", "driven_at"])
    remember(match, new)
    out = [event_dict(r) for r in rows]
    deadline = new.next_deadline
    match_id = match.id
    transaction.on_commit(lambda: publish(match_id, out, deadline))
    ended = any(r.event == EventName.MATCH_ENDED for r in rows)
    corrected = old.status == MatchStatus.ENDED and any(r.event in CORRECTING_EVENTS for r in rows)
    if match.status == Match.Status.ENDED and (ended or corrected):
        # One durable job per subscriber, stored with the match end and sent after commit. A
        # ruling corrected after the end sends them again (their work is idempotent), so the
        # fits follow the correction.
        outbox.enqueue_match_ended(match)
    return Applied(out, seq, deadline)


def write_parts(match: Match, old: game.MatchState | None, new: game.MatchState) -> list[str]:
    """Set the stored parts of ``new`` that changed since ``old`` (all of them when None) on
    ``match`` and return their field names: the live state always; the spec only when a seat
    joined (its lists are shared, never mutated, so identity tells); the ruling record only
    when a ruling, adjustment or protest changed it (records are frozen: identity again)."""
    match.state = new.live_dict()
    names = ["state"]
    if old is None or not same_spec(old, new):
        match.spec, match.spec_key = new.spec().to_dict(), rowcache.new_part_key()
        rowcache.remember_spec(match.id, match.spec_key, new.spec())
        names += ["spec", "spec_key"]
    if old is None or not same_records(old.records(), new.records()):
        records = new.records()
        match.records, match.records_key = game.records_to_dict(records), rowcache.new_part_key()
        rowcache.remember_records(match.id, match.records_key, records)
        names += ["records", "records_key"]
    return names


SPEC_PARTS = ("config", "teams", "players", "tossups", "bonuses")


def same_spec(a: game.MatchState, b: game.MatchState) -> bool:
    """Whether ``a`` and ``b`` share their spec (no seat joined between them)."""
    return all(getattr(a, f) is getattr(b, f) for f in SPEC_PARTS)


def same_records(a: game.Records, b: game.Records) -> bool:
    """Whether two ruling records hold the same (identical, frozen) entries."""
    return all(
        len(x) == len(y) and all(p is q for p, q in zip(x, y, strict=True)) for x, y in zip(a, b, strict=True)
    )


def remember(match: Match, state: game.MatchState) -> None:
    """Let this process's next word of ``match`` (just saved) take the fast path
    (``competition.live.ticks``)."""
    if rowcache.usable():
        rowcache.remember(
            match.id,
            rowcache.Known(match.seq, json.dumps(match.state), state, match.spec_key, match.records_key),
        )


def _mark_revealed(rows: list[MatchEvent]) -> None:
    """Media files of the image/audio tokens these events showed become fetchable by anyone
    (``MediaFile.revealed``; ``frontend.media_views.media_file``)."""
    if shown := media_shown((r.event, r.payload) for r in rows):
        MediaFile.objects.filter(sha256__in=shown, revealed=False).update(revealed=True)


# The events that show tokens to everyone, and the field holding them: words as read, the whole
# tossup at its end, a bonus's lead-in at its start and each part as it is read. Not
# ``bonus_answer_lines``: it gives the moderator the whole bonus up front (organisers may fetch
# any file anyway), and a part's media must wait for its ``bonus_part``.
SHOWING_EVENTS = {
    EventName.WORDS: "words",
    EventName.TOSSUP_ENDED: "words",
    EventName.BONUS_STARTED: "leadin_tokens",
    EventName.BONUS_PART: "tokens",
}


def media_shown(events: Iterable[tuple[str, dict[str, Any]]]) -> set[str]:
    """The sha256 of every image/audio token that these (event name, data) pairs show."""
    return {
        token["sha256"]
        for name, data in events
        if name in SHOWING_EVENTS
        for token in data.get(SHOWING_EVENTS[name], ())
        if isinstance(token, dict) and token.get("sha256")
    }


def resume_after_gap(*, match_id: int, since: float | None, now: float | None = None) -> Applied:
    """Stop the clock for the time nobody drove the match: pause it at ``since`` (the last
    moment a driver was known to drive it, epoch s) and resume it at ``now``, in one
    transaction, both events published together. So deadlines that fell due meanwhile (the
    next word, an answer window, a bonus timer) keep the time they had left at ``since``
    instead of firing all at once. Logged as ``paused``/``resumed`` by ``driver``.

    ``since`` is raised to the stored ``Match.driven_at`` (under the lock: a command or
    another driver may have moved the match on since it was read); None means that column.
    A match that is not running, is paused, has no pending deadline or was driven less than
    :data:`GAP_MIN` seconds ago is left alone: ``Applied([], seq, next_deadline)``."""
    now = time.time() if now is None else now
    with transaction.atomic():
        match = selectors.live_rows().select_for_update().get(pk=match_id)
        state = selectors.match_state(match)
        resumed, events = _stop_the_clock_for_gap(match, state, since, now, GAP_MIN)
        if not events:
            return Applied([], match.seq, state.next_deadline)
        return store_events(match, state, resumed, events, game.Resume(), Role.DRIVER, now)


def _stop_the_clock_for_gap(
    match: Match, state: game.MatchState, since: float | None, now: float, min_gap: float
) -> tuple[game.MatchState, list[game.Event]]:
    """(state paused at the gap's start and resumed at ``now``, their events), or
    (``state``, []) when there is no gap to stop (see :func:`resume_after_gap`)."""
    known = [t for t in (since, match.driven_at) if t is not None]
    if not known:
        # Never driven since it started (a match older than the heartbeat): nobody drove
        # it after its next deadline at the latest.
        known = [min(state.next_deadline or now, now)]
    start = min(max(known), now)
    if (
        state.status != MatchStatus.RUNNING
        or state.paused
        or state.next_deadline is None
        or now - start < min_gap
    ):
        return state, []
    try:
        paused, pause_events = game.apply(state, game.Pause(), start)
        resumed, resume_events = game.apply(paused, game.Resume(), now)
    except game.RuleViolation:  # deadlines due by ``start`` ended the match: nothing to stop
        return state, []
    return resumed, [*pause_events, *resume_events]


def event_dict(row: MatchEvent) -> dict[str, Any]:
    """A stored event as broadcast: ``{"seq", "event", "data", "audience", "actor"}``."""
    return {
        "seq": row.seq,
        "event": row.event,
        "data": row.payload,
        "audience": row.audience,
        "actor": row.actor,
    }


def event_frame(seq: int, event: str, data_json: str) -> str:
    """The websocket frame of one stored event (``buzzer.protocol``'s ``event`` frame) as text:
    exactly ``json.dumps({"type": "event", "seq": seq, "event": event, "data": data})``, built
    from ``data_json`` (``json.dumps(data)``, as the event was stored) without serialising the
    data again."""
    return f'{{"type": "event", "seq": {int(seq)}, "event": {json.dumps(event)}, "data": {data_json}}}'


def publish(
    match_id: int, events: list[dict[str, Any]], deadline: float | None, frames: list[str] | None = None
) -> None:
    """Run on commit: send :data:`competition.signals.events_committed`. ``frames``: the
    events' websocket frames (:func:`event_frame`) when the writer serialised them already (the
    words' fast path), so that nobody serialises them again. The events are stored whatever
    happens here, so a receiver's failure (Redis down) is logged, never raised into the
    caller; clients catch up by resync."""
    results = signals.events_committed.send_robust(
        sender=Match, match_id=match_id, events=events, next_deadline=deadline, frames=frames
    )
    for receiver, result in results:
        if isinstance(result, Exception):  # django.dispatch has logged the traceback
            log.warning(
                "publishing events %s.. of match %s through %s failed: %r",
                events[0]["seq"],
                match_id,
                getattr(receiver, "__qualname__", receiver),
                result,
            )
