"""The one door that changes a match: lock the row, apply a command to the pure engine,
append the events (sequence-numbered), update the buzz log, broadcast on commit.

Every writer (websocket consumers, the reading driver, management commands, tests) goes
through :func:`apply_command`. Public functions are keyword-only and raise
:class:`ServiceError` (or the engine's ``RuleViolation``) without changing anything.
"""

from __future__ import annotations

import hashlib
import json
import logging
import secrets
import time
from collections.abc import Awaitable, Callable, Iterable
from dataclasses import dataclass
from datetime import timedelta
from typing import Any

from django.db import transaction
from django.db.models import F, Q
from django.utils import timezone

from competition import game, selectors, signals, ticks
from competition.errors import TossupError
from competition.models import (
    Bonus,
    BonusPartResult,
    Buzz,
    Competitor,
    Flag,
    Match,
    MatchEvent,
    MediaFile,
    Outbox,
    Player,
    Team,
    Tossup,
    TournamentGame,
    new_token,
)
from competition.vocabulary import Audience, BonusDecision, FlagProblem, Role
from competition.vocabulary import actor as actor_name
from scoring.judge import Judgement, Verdict, judge
from scoring.rules import WEIGHT_CLASSES, load_preset

log = logging.getLogger(__name__)
# A driver that starts driving a match last driven this long ago stops the clock for the gap
# (resume_after_gap); shorter gaps are within the driver's heartbeat jitter.
GAP_MIN = 1.0
# A player's or moderator's command stops the clock only for a longer gap: the driver's
# heartbeat (every 0.5 s) may lag under load, and a spurious pause would cost nothing but noise.
COMMAND_GAP_MIN = 3.0


class ServiceError(TossupError):
    """A request the service refuses (unknown code, bad team, …): ``code`` one of
    ``competition.errors.SERVICE_CODES``, ``message`` for people, ``extra`` facts (often empty)."""


@dataclass(frozen=True)
class Applied:
    """What :func:`apply_command` did: the stored events (as broadcast) and the new head seq."""

    events: list[dict[str, Any]]
    seq: int
    next_deadline: float | None
    # True when the command's ``command_id`` had been applied already: nothing was applied
    # again and ``seq`` is that earlier command's last event.
    duplicate: bool = False


def tossup_spec(tossup: Tossup) -> game.TossupSpec:
    return game.tokenize_tossup(
        tossup.id, tossup.question, tossup.answer_line, tossup.category, external_id=tossup.external_id
    )


def bonus_spec(bonus: Bonus) -> game.BonusSpec:
    parts = [game.BonusPartSpec(p["text"], p["answer_line"], p.get("value", 10)) for p in bonus.parts]
    return game.BonusSpec(bonus.id, bonus.leadin, parts)


def create_match(
    *,
    name: str,
    tossup_ids: list[int],
    bonus_ids: list[int] | None = None,
    preset: str = "naqt",
    teams: list[str],
    bots: list[dict[str, str]] | None = None,
    config: dict[str, Any] | None = None,
    identities: dict[str, Competitor] | None = None,
    seats: list[dict[str, Any]] | None = None,
) -> Match:
    """Create a match in the lobby with human ``teams`` (names) and ``bots``
    (``[{"name", "weight_class", "team"?, "bot_team"?, "buzz_mode"?, "min_token"?}]``): a bot without
    ``team`` plays on a team of bots named ``bot_team`` (default: its own name; bots naming the
    same ``bot_team`` share it); with ``team`` (one of ``teams``) it takes a seat on that human
    team (a hybrid team, HYBRID.md) with its ``buzz_mode`` (autonomous | semi_autonomous |
    muted; default autonomous) and ``min_token`` (default 0). ``config`` overrides
    :class:`competition.game.MatchConfig` fields (``wpm``, ``answer_window``, ``auto_rule``…).
    ``identities`` (team name → team Competitor) and ``seats`` (``[{"team", "name", "kind",
    "weight_class", "competitor"}]``: humans and AI players seated on the human teams from the
    start, e.g. a tournament's rosters) make the same team and people the same identities
    across matches.

    Raises ServiceError for unknown presets, no tossups, duplicate team or seat names, a seat on
    no team of the match, a bot's unknown team or invalid buzz settings, a tossup whose media
    marker is malformed or names a file never imported."""
    try:
        preset_obj = load_preset(preset)
    except ValueError as exc:
        raise ServiceError("unknown_preset", str(exc)) from exc
    if not tossup_ids:
        raise ServiceError("invalid", "a match needs at least one tossup")
    names = [t.strip() for t in teams if t.strip()]
    bots = bots or []
    for bot in bots:
        if bot.get("team") is not None and bot["team"] not in names:
            raise ServiceError("invalid", f"bot {bot['name']!r}: no human team named {bot['team']!r}")
        problem = game.check_seat("bot", bot.get("buzz_mode", "autonomous"), bot.get("min_token", 0))
        if problem:
            raise ServiceError("invalid", f"bot {bot['name']!r}: {problem}")
    bot_teams = list(dict.fromkeys(b.get("bot_team") or b["name"] for b in bots if b.get("team") is None))
    all_team_names = names + bot_teams
    if len(set(all_team_names)) != len(all_team_names):
        raise ServiceError("invalid", "team and bot names must be unique")
    seat_names = [s["name"] for s in seats or []] + [b["name"] for b in bots]
    if len(set(seat_names)) != len(seat_names):
        raise ServiceError("invalid", "seat names must be unique in a match")
    tossups = {t.id: t for t in Tossup.objects.filter(id__in=tossup_ids)}
    missing = [i for i in tossup_ids if i not in tossups]
    if missing:
        raise ServiceError("invalid", f"unknown tossup ids: {missing[:5]}")
    for tossup in tossups.values():
        try:
            tossup_spec(tossup)
        except ValueError as exc:  # a media marker edited by hand (formats.media)
            raise ServiceError("invalid", f"tossup {tossup.id}: {exc}") from exc
    known_bonuses = set(Bonus.objects.filter(id__in=bonus_ids or []).values_list("id", flat=True))
    bonus_ids = [b for b in bonus_ids or [] if b in known_bonuses]
    cfg = game.MatchConfig(preset=preset_obj, **(config or {}))
    with transaction.atomic():
        match = Match.objects.create(
            name=name, preset=preset, config=cfg.to_dict(), tossup_ids=tossup_ids, bonus_ids=bonus_ids
        )
        human_teams = {
            team_name: Team.objects.create(
                match=match,
                name=team_name,
                kind=Team.Kind.HUMAN,
                competitor=(identities or {}).get(team_name),
            )
            for team_name in names
        }
        for seat in seats or []:
            if seat["team"] not in human_teams:
                raise ServiceError("invalid", f"seat {seat['name']!r}: no team named {seat['team']!r}")
            Player.objects.create(
                match=match,
                team=human_teams[seat["team"]],
                name=seat["name"],
                kind=seat.get("kind", Player.Kind.HUMAN),
                weight_class=seat.get("weight_class", ""),
                competitor=seat.get("competitor"),
            )
        teams_of_bots = {
            team_name: Team.objects.create(match=match, name=team_name, kind=Team.Kind.BOT)
            for team_name in bot_teams
        }
        for bot in bots:
            team = human_teams.get(bot.get("team") or "") or teams_of_bots[bot.get("bot_team") or bot["name"]]
            Player.objects.create(
                match=match,
                team=team,
                name=bot["name"],
                kind=Player.Kind.BOT,
                weight_class=bot.get("weight_class", ""),
                buzz_mode=bot.get("buzz_mode", "autonomous"),
                min_token=bot.get("min_token", 0),
            )
        _build_lobby_state(match)
    return match


def _build_lobby_state(match: Match) -> None:
    """The initial state, built once from the rows when the match is created; later seats
    are added by ``game.SeatPlayer`` through :func:`apply_command` (see :func:`join_match`)."""
    cfg = game.MatchConfig.from_dict(match.config)
    teams = [game.TeamSpec(t.id, t.name, t.kind) for t in match.teams.all()]
    players = [
        game.PlayerSpec(p.id, p.team_id, p.name, p.kind, p.weight_class, p.buzz_mode, p.min_token)
        for p in match.players.all()
    ]
    tossups = {t.id: t for t in Tossup.objects.filter(id__in=match.tossup_ids)}
    bonuses = {b.id: b for b in Bonus.objects.filter(id__in=match.bonus_ids)}
    state = game.new_match(
        cfg,
        teams,
        players,
        [tossup_spec(tossups[i]) for i in match.tossup_ids],
        [bonus_spec(bonuses[i]) for i in match.bonus_ids if i in bonuses],
    )
    match.save(update_fields=_write_parts(match, None, state))


def _write_parts(match: Match, old: game.MatchState | None, new: game.MatchState) -> list[str]:
    """Set the stored parts of ``new`` that changed since ``old`` (all of them when None) on
    ``match`` and return their field names: the live state always; the spec only when a seat
    joined (its lists are shared, never mutated, so identity tells); the ruling record only
    when a ruling, adjustment or protest changed it (records are frozen: identity again)."""
    match.state = new.live_dict()
    names = ["state"]
    if old is None or not _same_spec(old, new):
        match.spec, match.spec_key = new.spec().to_dict(), selectors.new_part_key()
        selectors.remember_spec(match.id, match.spec_key, new.spec())
        names += ["spec", "spec_key"]
    if old is None or not _same_records(old.records(), new.records()):
        records = new.records()
        match.records, match.records_key = game.records_to_dict(records), selectors.new_part_key()
        selectors.remember_records(match.id, match.records_key, records)
        names += ["records", "records_key"]
    return names


SPEC_PARTS = ("config", "teams", "players", "tossups", "bonuses")


def _same_spec(a: game.MatchState, b: game.MatchState) -> bool:
    return all(getattr(a, f) is getattr(b, f) for f in SPEC_PARTS)


def _same_records(a: game.Records, b: game.Records) -> bool:
    return all(
        len(x) == len(y) and all(p is q for p, q in zip(x, y, strict=True)) for x, y in zip(a, b, strict=True)
    )


def join_match(
    *, code: str, name: str, team: str, secret: str = "", competitor: Competitor | None = None
) -> Player:
    """Seat a human player, or give a seat back to its owner.

    A new name joins only in the lobby, on a human team named ``team``. An existing name gets
    its seat back (whatever ``team`` says) only with ``secret``: the seat's own token (kept
    on the tablet) or the one-time reclaim code the moderator issued
    (:func:`issue_reclaim_code`). A reclaim code is cleared once used and the seat's token
    is replaced, so the tablet the seat moved away from can no longer reconnect.

    A new seat plays as ``competitor`` (default: a fresh identity named after the seat;
    ``competition.identities.join`` claims one by handle).

    Raises ServiceError: ``not_found`` (code), ``invalid`` (empty name, unknown team, a
    bot's name), ``seat_taken`` (an existing name without its secret), ``closed`` (match
    started and no seat of that name)."""
    name = name.strip()
    if not name or len(name) > 100:
        raise ServiceError("invalid", "name must be 1–100 characters")
    with transaction.atomic():
        try:
            match = Match.objects.select_for_update().get(join_code=code.strip().upper())
        except Match.DoesNotExist as exc:
            raise ServiceError("not_found", "no match with that join code") from exc
        existing = match.players.filter(name=name, kind=Player.Kind.HUMAN).first()
        if existing is not None:
            return _reclaim_seat(existing, secret)
        if match.status != Match.Status.LOBBY:
            raise ServiceError("closed", "the match has started; only existing players can rejoin")
        team_obj = match.teams.filter(name=team.strip(), kind=Team.Kind.HUMAN).first()
        if team_obj is None:
            raise ServiceError("invalid", f"no human team named {team!r}")
        if match.players.filter(name=name).exists():
            raise ServiceError("invalid", "that name is taken")
        player = Player.objects.create(
            match=match, team=team_obj, name=name, kind=Player.Kind.HUMAN, competitor=competitor
        )
        # The seat reaches the state through the one door: a ``player_joined`` event with its seq.
        seat = game.SeatPlayer(player.id, team_obj.id, player.name, player.kind, player.weight_class)
        apply_command(match_id=match.id, command=seat, actor=actor_name(Role.PLAYER, player.id))
    return player


RECLAIM_ALPHABET = "ABCDEFGHJKLMNPQRSTUVWXYZ23456789"  # no 0/O, 1/I: read aloud, typed on a tablet
RECLAIM_LENGTH = 8  # 32**8 ≈ 10**12 codes against a rate-limited /api/join


def normalize_reclaim_code(text: str) -> str:
    """A reclaim code as typed (any case, spaces or dashes) in its stored form."""
    return "".join(c for c in text.upper() if c.isalnum())


def _reclaim_seat(player: Player, secret: str) -> Player:
    """``player`` if ``secret`` is its token or its pending reclaim code (then used up and the
    token replaced); ServiceError ``seat_taken`` otherwise. Called under the match's lock."""
    if secret and secrets.compare_digest(secret.encode(), player.token.encode()):
        return player
    code = normalize_reclaim_code(secret)
    if player.reclaim_code and code and secrets.compare_digest(code.encode(), player.reclaim_code.encode()):
        player.reclaim_code = ""
        player.token = new_token()
        player.save(update_fields=["reclaim_code", "token"])
        return player
    raise ServiceError(
        "seat_taken",
        "that name is already seated: rejoin from its own tablet, or ask the moderator for a reclaim code",
    )


def issue_reclaim_code(*, match_id: int, player_id: int) -> str:
    """A new one-time code that moves human seat ``player_id`` of match ``match_id`` to another
    tablet (pass it as ``secret`` to :func:`join_match`); replaces any earlier code.

    Raises ServiceError ``not_found`` (no such human seat in that match)."""
    code = "".join(secrets.choice(RECLAIM_ALPHABET) for _ in range(RECLAIM_LENGTH))
    updated = Player.objects.filter(id=player_id, match_id=match_id, kind=Player.Kind.HUMAN).update(
        reclaim_code=code
    )
    if not updated:
        raise ServiceError("not_found", "no such player seat in this match")
    return code


def seat_bot(
    *,
    match_id: int,
    name: str,
    team_id: int | None,
    weight_class: str,
    buzz_mode: str = "autonomous",
    min_token: int = 0,
    now: float | None = None,
) -> Player:
    """Seat a new bot on team ``team_id`` (a human team: a hybrid seat; or a bots' team) of a match
    in the lobby or running, or with ``team_id`` None on a new team of its own named after it, for
    the organiser. The seat reaches the state as a ``player_joined`` event with its seq
    (``game.SeatPlayer`` through :func:`apply_command`), after ``team_added`` (``game.AddTeam``)
    for a new team, so every dashboard and tablet sees them. ``weight_class``: light | mid | heavy
    (the race's tie-break).

    Raises ServiceError: ``not_found`` (match or team not in it), ``closed`` (the match ended),
    ``invalid`` (empty or taken seat name, or team name for a team of its own, or a team of its own
    in a tournament game, which has two teams; bad weight class, buzz mode or min token)."""
    name = name.strip()
    if not name or len(name) > 100:
        raise ServiceError("invalid", "name must be 1–100 characters")
    if weight_class not in WEIGHT_CLASSES:
        raise ServiceError("invalid", f"weight class must be one of {', '.join(WEIGHT_CLASSES)}")
    if problem := game.check_seat("bot", buzz_mode, min_token):
        raise ServiceError("invalid", problem)
    with transaction.atomic():
        try:
            match = Match.objects.select_for_update().get(pk=match_id)
        except Match.DoesNotExist as exc:
            raise ServiceError("not_found", "no such match") from exc
        if match.status == Match.Status.ENDED:
            raise ServiceError("closed", "the match has ended")
        if match.players.filter(name=name).exists():
            raise ServiceError("invalid", "that name is taken")
        if team_id is None:
            if match.teams.filter(name=name).exists():
                raise ServiceError("invalid", "a team of that name plays already")
            if TournamentGame.objects.filter(match=match).exists():
                raise ServiceError("invalid", "a tournament game keeps its two teams: seat the bot on one")
            team = Team.objects.create(match=match, name=name, kind=Team.Kind.BOT)
            apply_command(
                match_id=match.id,
                command=game.AddTeam(team.id, name),
                actor=actor_name(Role.MODERATOR),
                now=now,
            )
        else:
            found = match.teams.filter(pk=team_id).first()
            if found is None:
                raise ServiceError("not_found", "no such team in this match")
            team = found
        player = Player.objects.create(
            match=match,
            team=team,
            name=name,
            kind=Player.Kind.BOT,
            weight_class=weight_class,
            buzz_mode=buzz_mode,
            min_token=min_token,
        )
        seat = game.SeatPlayer(player.id, team.id, name, player.kind, weight_class, buzz_mode, min_token)
        apply_command(match_id=match.id, command=seat, actor=actor_name(Role.MODERATOR), now=now)
    return player


def apply_command(
    *,
    match_id: int,
    command: Any,
    actor: str,
    now: float | None = None,
    extra_events: list | None = None,
    command_id: str = "",
) -> Applied:
    """Apply one engine command under a row lock and persist its events.

    ``actor`` (``moderator``, ``player:<id>``, ``driver``…) is recorded on every event.
    ``extra_events`` are service-level log entries appended before the engine's
    (e.g. ``buzz_received``). ``command_id`` (a client's id for the command, any string;
    ids over 64 characters are stored as their sha256) makes the command idempotent: if an
    event of this match already carries it, nothing is applied and the earlier result is
    returned with ``duplicate=True`` (a double click, two dashboards sending the same
    command). Raises ``game.RuleViolation`` (nothing stored) when the rules refuse the
    command, ServiceError ``invalid`` for a non-string ``command_id``."""
    now = time.time() if now is None else now
    command_id = _command_key(command_id)
    if isinstance(command, game.Tick) and actor == Role.DRIVER and not extra_events and not command_id:
        applied = _tick_unlocked(match_id, now)
        if applied is not None:
            return applied
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
        state = selectors.match_state(match)
        # A command that reaches a match nobody has driven for a while (its server died, the
        # driver has not taken over yet) must not fire the deadlines that fell due meanwhile.
        gap_events: list[game.Event] = []
        if command is not None and actor != Role.DRIVER:  # the driver stops the clock itself on takeover
            state, gap_events = _stop_the_clock_for_gap(match, state, None, now, COMMAND_GAP_MIN)
        new_state, engine_events = (state, []) if command is None else game.apply(state, command, now)
        if gap_events:
            return _store(match, state, new_state, [*gap_events, *(extra_events or []), *engine_events],
                          command, actor, now, command_id)  # fmt: skip
        if not engine_events and not extra_events:
            # Ticks that change nothing visible still persist the state (deadlines moved);
            # serialised once, written only if it differs.
            live = new_state.live_dict()
            if live != match.state or not _same_records(state.records(), new_state.records()):
                match.save(update_fields=_write_parts(match, state, new_state))
            _remember(match, new_state)
            return Applied([], match.seq, new_state.next_deadline)
        all_events = list(extra_events or []) + list(engine_events)
        return _store(match, state, new_state, all_events, command, actor, now, command_id)


def _plan_tick(match_id: int, now: float) -> tuple[ticks.Known, game.MatchState, list[game.Event]] | None:
    """A ``Tick`` applied to the row this process remembers, if it only reveals words (no
    media, no change of status, spec or records): ``(known, new state, events)``; else None."""
    known = ticks.recall(match_id) if ticks.usable() else None
    if known is None:
        return None
    try:
        new, events = game.apply(known.state, game.Tick(), now)
    except game.RuleViolation:
        return None  # the locked path raises it with the row's own state
    only_words = all(ev.event == "words" for ev in events) and not _media_shown(
        (e.event, e.data) for e in events
    )
    unchanged = (
        new.status == known.state.status
        and _same_spec(known.state, new)
        and _same_records(known.state.records(), new.records())
    )
    if not events or not only_words or not unchanged:
        return None
    return known, new, events


def _tick_unlocked(match_id: int, now: float) -> Applied | None:
    """A ``Tick`` that only reveals words, stored in one statement without the row lock
    (``competition.ticks``); None when it must take the locked path (nothing stored)."""
    plan = _plan_tick(match_id, now)
    if plan is None:
        return None
    known, new, events = plan
    out = ticks.store(match_id, known, new, events, Role.DRIVER, now)
    if out is None:
        return None
    deadline = new.next_deadline
    transaction.on_commit(lambda: _publish(match_id, out, deadline))
    return Applied(out, out[-1]["seq"], deadline)


@dataclass(frozen=True)
class PlannedTick:
    """A words-only ``Tick`` computed before it is due (:func:`plan_tick`): the remembered row
    it applies to, its due time ``at`` (epoch seconds), the state after it and its statement."""

    known: ticks.Known
    at: float
    new: game.MatchState
    write: ticks.Write


def plan_tick(match_id: int, at: float) -> PlannedTick | None:
    """The fast-path ``Tick`` due at ``at``, computed now, so that when it is due only its
    statement remains to run (:func:`tick_on_loop`); None when it would take the locked path.
    No I/O: the engine on the row this process remembers."""
    plan = _plan_tick(match_id, at)
    if plan is None:
        return None
    known, new, events = plan
    return PlannedTick(known, at, new, ticks.prepare(match_id, known, new, events, Role.DRIVER, at))


def _still_due(planned: PlannedTick, now: float) -> bool:
    after = planned.new.next_deadline
    return planned.at <= now and (after is None or after > now)


async def tick_on_loop(
    match_id: int,
    execute: Callable[[str, list[Any]], Awaitable[list[Any] | None]],
    now: float | None = None,
    planned: PlannedTick | None = None,
) -> Applied | None:
    """The driver's ``Tick`` on the fast path of :func:`apply_command` without a database
    thread: the one statement is run by ``execute(sql, params)`` on the caller's event loop (an
    autocommit connection, so stored once it returns; ``execute`` returns the rows, or None
    when it has no connection free and ran nothing). ``planned``: the ``Tick`` computed ahead
    by :func:`plan_tick`, used if it is the one ``now`` calls for (due, with no later deadline
    passed meanwhile) and its row is still the one remembered; else the ``Tick`` is computed
    afresh at ``now``. When this process remembers no row, or the row has moved (another
    process wrote it: a start, a buzz, a moderator's command), the row is read by ``execute``
    too (:func:`ticks.read`) and the ``Tick`` computed on it, once. The events are published as
    soon as they are stored. None when nothing was stored: the caller applies the ``Tick``
    through :func:`apply_command`. Raises what ``execute`` raises (a database outage): whether
    the statement was stored is then unknown, so this process's memory of the row is dropped
    and the next ``Tick`` reads the row afresh."""
    if not ticks.usable():
        return None
    now = time.time() if now is None else now
    if planned is not None and (not _still_due(planned, now) or planned.known is not ticks.recall(match_id)):
        planned = None
    for _ in range(2):  # the remembered row, then the row as read now
        if planned is None:
            if ticks.recall(match_id) is None and await ticks.read(match_id, execute) is None:
                return None
            planned = plan_tick(match_id, now)
            if planned is None:
                return None
        known, new, write = planned.known, planned.new, planned.write
        try:
            rows = await execute(write.sql, write.params)
        except BaseException:
            ticks.forget(match_id, known)
            raise
        if rows is None:
            return None
        out = ticks.finish(match_id, known, write, rows)
        if out is not None:
            _publish(match_id, out, new.next_deadline)
            return Applied(out, out[-1]["seq"], new.next_deadline)
        planned = None  # the row had moved (``known`` is forgotten): read it
    return None


def _remember(match: Match, state: game.MatchState) -> None:
    """Let this process's next word of ``match`` take the fast path (``competition.ticks``)."""
    if ticks.usable():
        ticks.remember(
            match.id,
            ticks.Known(match.seq, json.dumps(match.state), state, match.spec_key, match.records_key),
        )


def _command_key(command_id: Any) -> str:
    if not isinstance(command_id, str):
        raise ServiceError("invalid", "command_id must be a string")
    if len(command_id) > 64:  # the column's width; a client's id may be longer
        return hashlib.sha256(command_id.encode()).hexdigest()
    return command_id


def _store(
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
    caller's transaction and row lock. Publishing, and the fit request of an ended match,
    happen on commit."""
    rows: list[MatchEvent] = []
    seq = match.seq
    for ev in events:
        seq += 1
        rows.append(
            MatchEvent(
                match=match,
                seq=seq,
                event=ev.event,
                payload=dict(ev.data),
                audience=ev.audience,
                actor=actor,
                command_id=command_id,
            )
        )
    MatchEvent.objects.bulk_create(rows)
    _mark_revealed(rows)
    _project(match, rows, command, old, new, now)
    parts = _write_parts(match, old, new)
    match.seq = seq
    # Whatever this command was, the engine advanced the match to ``now``: nobody was away
    # before that (the driver's gap recovery starts from here at the earliest).
    # Nothing drives a match in the lobby (a seat joining there starts no clock).
    if new.status != "lobby":
        match.driven_at = max(match.driven_at or now, now)
    match.save(update_fields=[*parts, "seq", "status", "ended_at", "driven_at"])
    _remember(match, new)
    out = [_event_dict(r) for r in rows]
    deadline = new.next_deadline
    match_id = match.id
    transaction.on_commit(lambda: _publish(match_id, out, deadline))
    ended = any(r.event == "match_ended" for r in rows)
    corrected = old.status == "ended" and any(r.event == "ruling_corrected" for r in rows)
    if match.status == Match.Status.ENDED and (ended or corrected):
        # One durable job per subscriber (competition.signals.on_match_ended), stored with the
        # match end and sent after commit; sweep_outbox() resends what the broker never got
        # (Redis down at that moment, worker gone). A ruling corrected after the end sends
        # them again (their work is idempotent), so the fits follow the correction.
        for topic in signals.match_ended_topics():
            job = Outbox.objects.create(topic=topic, match=match, payload={"match_id": match_id})
            transaction.on_commit(lambda pk=job.pk: _dispatch(pk))
    return Applied(out, seq, deadline)


def _mark_revealed(rows: list[MatchEvent]) -> None:
    """Media files of the image/audio tokens these events showed become fetchable by anyone
    (``MediaFile.revealed``; ``frontend.views.media_file``)."""
    if shown := _media_shown((r.event, r.payload) for r in rows):
        MediaFile.objects.filter(sha256__in=shown, revealed=False).update(revealed=True)


def _media_shown(events: Iterable[tuple[str, dict[str, Any]]]) -> set[str]:
    """The sha256 of every image/audio token that these (event name, data) pairs show."""
    return {
        token["sha256"]
        for name, data in events
        if name in ("words", "tossup_ended")  # the end shows the whole tossup
        for token in data["words"]
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
        return _store(match, state, resumed, events, game.Resume(), Role.DRIVER, now)


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
    if state.status != "running" or state.paused or state.next_deadline is None or now - start < min_gap:
        return state, []
    try:
        paused, pause_events = game.apply(state, game.Pause(), start)
        resumed, resume_events = game.apply(paused, game.Resume(), now)
    except game.RuleViolation:  # deadlines due by ``start`` ended the match: nothing to stop
        return state, []
    return resumed, [*pause_events, *resume_events]


def _event_dict(row: MatchEvent) -> dict[str, Any]:
    return {
        "seq": row.seq,
        "event": row.event,
        "data": row.payload,
        "audience": row.audience,
        "actor": row.actor,
    }


def _publish(match_id: int, events: list[dict[str, Any]], deadline: float | None) -> None:
    """Run on commit: send :data:`competition.signals.events_committed`. The events are stored
    whatever happens here, so a receiver's failure (Redis down) is logged, never raised into
    the caller; clients catch up by resync."""
    results = signals.events_committed.send_robust(
        sender=Match, match_id=match_id, events=events, next_deadline=deadline
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


# --- the outbox: work for Celery stored with what caused it --------------------------------

# A row dispatched this long ago and still not done is sent again (its message may have been
# lost with a Redis restart; the fit is idempotent, so a duplicate only costs a lookup).
REDISPATCH_AFTER = 300.0


def _dispatch(outbox_id: int) -> bool:
    """Send one outbox row's task and mark it dispatched; False (logged) if the broker is
    unreachable: the row stays for :func:`sweep_outbox`."""
    job = Outbox.objects.filter(pk=outbox_id, done_at=None).first()
    if job is None:
        return False
    Outbox.objects.filter(pk=job.pk).update(attempts=F("attempts") + 1)
    send = signals.outbox_sender(job.topic)
    if send is None:
        log.error("outbox row %s has a topic no app registered: %r", job.pk, job.topic)
        return False
    try:
        send(job.match_id)
    except Exception:
        log.warning(
            "could not send outbox row %s (%s); the sweeper retries", job.pk, job.topic, exc_info=True
        )
        return False
    Outbox.objects.filter(pk=job.pk).update(dispatched_at=timezone.now())
    return True


def sweep_outbox(*, redispatch_after: float = REDISPATCH_AFTER) -> int:
    """Send every outbox row not yet done that was never dispatched, or dispatched more than
    ``redispatch_after`` seconds ago. Safe to call from several processes at once (the work
    is idempotent). Returns how many rows were sent. Never raises for a broker outage."""
    stale = timezone.now() - timedelta(seconds=redispatch_after)
    due = Outbox.objects.filter(done_at=None).filter(Q(dispatched_at=None) | Q(dispatched_at__lt=stale))
    return sum(_dispatch(pk) for pk in due.values_list("pk", flat=True))


def mark_outbox_done(*, topic: str, match_id: int) -> int:
    """Called by the task when its work is stored: the rows of ``topic`` for this match are
    done and never sent again. Returns how many rows."""
    return Outbox.objects.filter(topic=topic, match_id=match_id, done_at=None).update(done_at=timezone.now())


def _project(
    match: Match, rows: list[MatchEvent], command: Any, old: game.MatchState, new: game.MatchState, now: float
) -> None:
    """Keep the queryable buzz log (Buzz, BonusPartResult) and the match status in step with
    the events of this transaction."""
    race: dict[str, Any] = {}
    if isinstance(command, game.Answer):
        # The judge's suggestion is recorded whatever the engine does with it next.
        _current_buzz(match, {"question_id": command.question_id, "player_id": command.player_id}).update(
            guess=command.text, verdict=command.verdict, verdict_reason=command.reason[:200]
        )
    bonus_teams = {b.bonus_id: b.team_id for b in (old.bonus, new.bonus) if b is not None}
    for row in rows:
        d = row.payload
        if row.event == "match_started":
            match.status = Match.Status.RUNNING
        elif row.event == "match_ended":
            match.status = Match.Status.ENDED
            match.ended_at = timezone.now()
        elif row.event == "race":
            race = d
        elif row.event == "renamed":
            team = d["team_id"] is not None
            seats = Team.objects if team else Player.objects
            seats.filter(match=match, pk=d["team_id"] if team else d["player_id"]).update(name=d["name"])
        elif row.event == "buzz":
            winner: dict[str, Any] = next(
                (c for c in race.get("candidates", []) if c["player_id"] == d["player_id"]), {}
            )
            Buzz.objects.create(
                match=match,
                tossup_id=d["question_id"],
                player_id=d["player_id"],
                team_id=d["team_id"],
                kind=d["kind"],
                token_index=d["token_index"],
                token_count=d["token_count"],
                revealed_at=d.get("revealed_at"),
                received_at=winner.get("received_at", now),
                accepted_at=winner.get("accepted_at", now),
                client_time=winner.get("client_time"),
                corrected_press_at=winner.get("corrected_press_at"),
                eligible=race.get("eligible", []),
                race=race,
                seq=row.seq,
            )
        elif row.event == "buzz_ruled":
            # A timeout is ruled at its deadline, not when a (late) driver's Tick applied it.
            ruled_at = next(
                (
                    h.at
                    for h in reversed(new.history)
                    if isinstance(h, game.TossupRuling)
                    and h.question_id == d["question_id"]
                    and h.player_id == d["player_id"]
                ),
                now,
            )
            fields: dict[str, Any] = {"ruling": d["ruling"], "points": d["points"], "ruled_at": ruled_at}
            if d.get("guess") is not None:
                fields["guess"] = d["guess"]
            _current_buzz(match, d).update(**fields)
        elif row.event == "ruling_undone":
            if d.get("bonus_id") is not None:
                BonusPartResult.objects.filter(match=match, bonus_id=d["bonus_id"], part=d["part"]).update(
                    ruling="undone", points=0
                )
            else:
                _current_buzz(match, d).update(ruling="undone", points=0)
        elif row.event == "ruling_corrected":
            # The log keeps the ruling given first in the event; the buzz log holds what stands.
            if d["bonus_id"] is not None:
                _current_part(match, d).update(ruling=d["ruling"], points=d["points"])
            else:
                _current_buzz(match, d).update(ruling=d["ruling"], points=d["points"])
        elif row.event == "bonus_part_ruled":
            BonusPartResult.objects.create(
                match=match,
                bonus_id=d["bonus_id"],
                team_id=bonus_teams[d["bonus_id"]],
                part=d["part"],
                guess=d.get("guess") or "",
                verdict=_bonus_verdict(command, old, d),
                ruling=d["ruling"],
                points=d["points"],
                seq=row.seq,
            )


def _bonus_verdict(command: Any, old: game.MatchState, d: dict[str, Any]) -> str:
    """The judge's verdict on a bonus part: from this command, or from the answer the
    moderator has just ruled on."""
    if isinstance(command, game.BonusAnswer | game.DecideBonus):
        return command.verdict
    pending = old.bonus.pending if old.bonus is not None else None
    return pending.verdict if pending is not None else ""


def _current_buzz(match: Match, d: dict[str, Any]):
    """The latest buzz row of this player on this tossup (a player buzzes once per tossup)."""
    qs = Buzz.objects.filter(match=match, tossup_id=d["question_id"], player_id=d["player_id"])
    last = qs.order_by("-seq").values_list("id", flat=True).first()
    return Buzz.objects.filter(id=last)


def _current_part(match: Match, d: dict[str, Any]):
    """The latest result row of this bonus part (a part is ruled again only after an undo)."""
    qs = BonusPartResult.objects.filter(match=match, bonus_id=d["bonus_id"], part=d["part"])
    last = qs.exclude(ruling="undone").order_by("-seq").values_list("id", flat=True).first()
    return BonusPartResult.objects.filter(id=last)


# --- thin command helpers used by the edges -------------------------------------------------


def buzz(
    *,
    match_id: int,
    player_id: int,
    question_id: int,
    token_index: int,
    client_time: float | None,
    corrected_press_at: float | None,
    delay_bound: float = 0.0,
    cost: float | None = None,
    now: float | None = None,
) -> Applied:
    """A buzz press. ``token_index`` and ``corrected_press_at`` are the client's claims;
    ``cost`` a bot's declared USD cost of the guess (a race tie-break);
    ``delay_bound`` (seconds) the connection's measured one-way delay bound: the engine decides
    the token index and press time from them (``game.Buzz``) and logs claim and decision as
    ``buzz_received`` (moderator audience) in the same transaction, so an acknowledged buzz is
    never lost. Raises ``game.RuleViolation`` (nothing stored) when the rules refuse it."""
    cmd = game.Buzz(player_id, question_id, token_index, client_time, corrected_press_at, delay_bound, cost)
    return apply_command(match_id=match_id, command=cmd, actor=actor_name(Role.PLAYER, player_id), now=now)


def answer(
    *, match_id: int, player_id: int, question_id: int, text: str, now: float | None = None
) -> Applied:
    """The buzzer's answer (or reply to a prompt): judged against the answer line, then
    applied; the verdict is a suggestion unless the match auto-rules."""
    state = selectors.load_state(match_id)
    verdict = _judge_tossup(state, player_id, question_id, text)
    cmd = game.Answer(
        player_id, question_id, text[:500], verdict.verdict, verdict.reason, verdict.directed_prompt
    )
    return apply_command(match_id=match_id, command=cmd, actor=actor_name(Role.PLAYER, player_id), now=now)


def _judge_tossup(state: game.MatchState, player_id: int, question_id: int, text: str) -> Judgement:
    t = state.tossup
    answering = t.buzz and (t.buzz.answerer_id or t.buzz.player_id) if t is not None else None
    if t is None or t.question_id != question_id or answering != player_id:
        # Not this player's turn: the engine refuses the Answer with the precise reason.
        return Judgement(Verdict.REJECT, None, "no answer expected")
    spec = state.tossups[t.index]
    return judge(
        spec.answer_line,
        text,
        token_index=t.buzz.token_index,
        token_count=len(spec.tokens),
        question=game.words_text(spec.tokens),
    )


def bonus_answer(
    *, match_id: int, player_id: int, bonus_id: int, part: int, text: str, now: float | None = None
) -> Applied:
    """An answer to the current bonus part by a player (or bot) of the controlling team."""
    state = selectors.load_state(match_id)
    spec = next((b for b in state.bonuses if b.bonus_id == bonus_id), None)
    if spec is None or not 0 <= part < len(spec.parts):
        verdict = Judgement(Verdict.REJECT, None, "no such bonus part")
    else:
        verdict = judge(spec.parts[part].answer_line, text)
    cmd = game.BonusAnswer(
        player_id, bonus_id, part, text[:500], verdict.verdict, verdict.reason, verdict.directed_prompt
    )
    return apply_command(match_id=match_id, command=cmd, actor=actor_name(Role.PLAYER, player_id), now=now)


def confirm_buzz(
    *, match_id: int, bot_id: int, confirm: bool, player_id: int | None, now: float | None = None
) -> Applied:
    """A human teammate (``player_id``) or the moderator (None) confirms or declines the pending
    buzz of semi-autonomous bot seat ``bot_id`` (``game.ConfirmBuzz``; the engine checks that
    the confirmer is on the bot's team)."""
    cmd = game.ConfirmBuzz(bot_id, confirm, player_id)
    who = actor_name(Role.MODERATOR) if player_id is None else actor_name(Role.PLAYER, player_id)
    return apply_command(match_id=match_id, command=cmd, actor=who, now=now)


MAX_EXPLANATION = 1000  # characters of a bonus suggestion's explanation kept


def bonus_suggestion(
    *,
    match_id: int,
    player_id: int,
    bonus_id: int,
    part: int,
    guess: str,
    confidence: float,
    explanation: str = "",
    now: float | None = None,
) -> Applied:
    """A bot seat's suggested answer to the open bonus part for its team's captain
    (``game.BonusSuggestion``; shown only to that team and the moderator). Not judged here:
    it is judged when the captain consults it (:func:`decide_bonus`)."""
    cmd = game.BonusSuggestion(
        player_id, bonus_id, part, guess[:500], confidence, explanation[:MAX_EXPLANATION]
    )
    return apply_command(match_id=match_id, command=cmd, actor=actor_name(Role.PLAYER, player_id), now=now)


def decide_bonus(
    *,
    match_id: int,
    bonus_id: int,
    part: int,
    decision: str,
    player_id: int | None,
    bot_id: int | None = None,
    now: float | None = None,
    command_id: str = "",
) -> Applied:
    """The captain's (``player_id``; None: the moderator) own | consult | abstain on the open
    bonus part (``game.DecideBonus``). For consult, the chosen suggestion (``bot_id``'s, else the
    first) is judged against the part's answer line here, as any bonus answer is."""
    state = selectors.load_state(match_id)
    verdict = Judgement(Verdict.REJECT, None, "no suggestion")
    b = state.bonus
    if decision == BonusDecision.CONSULT and b is not None and b.bonus_id == bonus_id and b.part == part:
        chosen = next((x for x in b.suggestions if bot_id in (None, x.player_id)), None)
        spec = next(x for x in state.bonuses if x.bonus_id == bonus_id)
        if chosen is not None:
            verdict = judge(spec.parts[part].answer_line, chosen.guess)
    cmd = game.DecideBonus(
        bonus_id, part, decision, player_id, bot_id, verdict.verdict, verdict.reason, verdict.directed_prompt
    )
    who = actor_name(Role.MODERATOR) if player_id is None else actor_name(Role.PLAYER, player_id)
    return apply_command(match_id=match_id, command=cmd, actor=who, now=now, command_id=command_id)


def rename(*, match_id: int, name: str, team_id: int | None = None, player_id: int | None = None) -> Applied:
    """An organiser corrects the name of team ``team_id`` or seat ``player_id`` of a match (the
    admin's door): through the engine, so the spec, the ``Team``/``Player`` row, the event log
    (``renamed``) and every connected screen agree. Raises RuleViolation ``bad_value``,
    ``unknown_team`` or ``unknown_player``; Match.DoesNotExist for an unknown match."""
    return apply_command(
        match_id=match_id,
        command=game.Rename(name, team_id=team_id, player_id=player_id),
        actor=Role.ORGANISER,
    )


def flag_question(
    *, match_id: int, question_id: int, problem: str, comment: str, reporter: str, role: str
) -> Applied:
    """An expert flag (ADVSCORE.md §6) from a match (a player's or the moderator's) on its tossup
    ``question_id``, which must have ended; logged there as a ``question_flagged`` event for the
    moderator. ``problem``: a ``competition.vocabulary.FlagProblem``; ``role``: one of
    ``FLAG_ROLES``. Raises ServiceError ``invalid`` for an unknown problem type, or a tossup not
    in the match or still being played."""
    _check_problem(problem)
    ended = MatchEvent.objects.filter(
        match_id=match_id, event="tossup_ended", payload__question_id=question_id
    ).exists()
    if not ended:
        raise ServiceError("invalid", "a question can be flagged only after its tossup ended")
    event = game.Event(
        "question_flagged",
        {"question_id": question_id, "problem": problem, "reporter": reporter},
        Audience.MODERATOR,
    )
    with transaction.atomic():
        Flag.objects.create(
            tossup_id=question_id,
            match_id=match_id,
            reporter=reporter,
            role=role,
            problem=problem,
            comment=comment[:2000],
        )
        return apply_command(match_id=match_id, command=None, actor=str(role), extra_events=[event])


def flag_question_as_editor(*, question_id: int, problem: str, comment: str, reporter: str) -> Flag:
    """An editor's flag on any tossup, outside a match (e.g. after reviewing the analysis).
    Raises ServiceError ``invalid`` for an unknown problem type or tossup."""
    _check_problem(problem)
    if not Tossup.objects.filter(pk=question_id).exists():
        raise ServiceError("invalid", f"no tossup with id {question_id}")
    return Flag.objects.create(
        tossup_id=question_id, reporter=reporter, role=Role.EDITOR, problem=problem, comment=comment[:2000]
    )


def _check_problem(problem: str) -> None:
    if problem not in tuple(FlagProblem):
        raise ServiceError("invalid", f"unknown problem type {problem!r}; one of {', '.join(FlagProblem)}")
