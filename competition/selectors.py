"""Reads for the realtime edge (who may see what, snapshots for (re)connecting clients) and
for the apps above competition (irt's response store: :func:`match_play`).

Only reads: nothing here writes a row, and the row cache (``competition.live.rowcache``) is only
looked up (its read-through lookups parse a part once per process); ``pyproject.toml``'s contract
keeps the writers (services, ``competition.live``'s store and ticks, the outbox, tournaments) out."""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass
from typing import Any

from django.db.models import Max

from competition import game, spectators
from competition.game import EventName
from competition.live import rowcache
from competition.models import Buzz, Competitor, Flag, Match, MatchEvent, Player, Team
from competition.vocabulary import (
    PLAYER_PREFIX,
    UNCOUNTED_RULINGS,
    Audience,
    MatchStatus,
    QuestionKind,
    Role,
    Ruling,
    player_audience,
)

# --- the match state from its stored parts (the immutable parts from this process's row cache) ---


def match_state(match: Match) -> game.MatchState:
    """The engine state of ``match`` (a row whose ``spec``/``records`` may be deferred): the live
    state from the row, the spec and ruling record from this process's row cache
    (``competition.live.rowcache``; read from the row on a miss, keyed by match id and
    ``spec_key``/``records_key``)."""
    spec = rowcache.spec(
        match.id,
        match.spec_key,
        lambda: game.MatchSpec.from_dict(Match.objects.values_list("spec", flat=True).get(pk=match.id)),
    )
    records = rowcache.records(
        match.id,
        match.records_key,
        lambda: game.records_from_dict(Match.objects.values_list("records", flat=True).get(pk=match.id)),
    )
    return game.MatchState.from_parts(match.state, spec, records)


def live_rows():
    """``Match`` rows without the large, cached parts (``spec``, ``records``: read on a miss)."""
    return Match.objects.defer("spec", "records")


def load_state(match_id: int) -> game.MatchState:
    """The engine state of match ``match_id``. Raises ``Match.DoesNotExist``."""
    return match_state(live_rows().get(pk=match_id))


def next_deadline(match_id: int) -> float | None:
    """When the driver must next ``Tick`` match ``match_id`` (None: nothing scheduled). Reads
    the live state's status and pause first, and the whole state only when the match runs: a
    match in the lobby, paused or ended schedules nothing (``game.clock.deadlines``), and those
    are the ones whose drivers ask (a running match's driver learns its deadlines from its own
    ticks). Raises ``Match.DoesNotExist``."""
    status, paused = Match.objects.filter(pk=match_id).values_list("state__status", "state__paused").get()
    if status != MatchStatus.RUNNING or paused:
        return None
    return load_state(match_id).next_deadline


def audiences_for(role: Role, player: Player | None) -> frozenset[str]:
    """The event audiences a connection may see: ``all`` plus its own seat/team, or the
    moderator's (``game.event_audiences`` of its view audience)."""
    return game.event_audiences(view_audience(role, player), player.team_id if player is not None else None)


def view_audience(role: Role, player: Player | None) -> str:
    """The ``game.view`` audience of a connection: ``moderator``, ``player:<id>`` or ``all``."""
    if role is Role.MODERATOR:
        return Audience.MODERATOR
    if role is Role.PLAYER and player is not None:
        return player_audience(player.id)
    return Audience.ALL


def snapshot(match_id: int, role: Role, player: Player | None) -> dict[str, Any]:
    """``{"type": "snapshot", "seq", "state"}`` for this connection, consistent with ``seq``
    (read in one query of the match row)."""
    match = live_rows().get(pk=match_id)
    state = match_state(match)
    view = game.view(state, view_audience(role, player))
    view["match"] = {
        "match_id": match.id,
        "name": match.name,
        "join_code": match.join_code,
        "preset": match.preset,
    }
    if role is Role.SPECTATOR:  # the tournament's public feed, field by field
        view = spectators.snapshot_view(view, spectators.match_policy(match.id))
    return {"type": "snapshot", "seq": match.seq, "state": view}


# --- reads for the apps above competition (irt): plain data, no model instances ---------------


@dataclass(frozen=True)
class RuledBuzz:
    """A buzz that was ruled on: ``token_index`` is the 0-based token the buzz came at."""

    tossup_id: int
    player_id: int
    token_index: int
    correct: bool


@dataclass(frozen=True)
class Seat:
    """A player of the match (``kind`` is ``human`` or ``bot``); ``competitor_id`` is its identity
    across matches (``Competitor``; None only for a row created around the model, e.g. bulk);
    ``played``: its token opened a socket, or it buzzed or answered (a seat that never
    connected did not play)."""

    player_id: int
    name: str
    kind: str
    team_id: int
    competitor_id: int | None
    played: bool = True


@dataclass(frozen=True)
class TeamSeat:
    """A human team of the match and its identity across matches (``competitor_id``)."""

    team_id: int
    name: str
    competitor_id: int | None


@dataclass(frozen=True)
class MatchPlay:
    """What happened in a match, as the response store needs it.

    ``played_tossup_ids``: the tossups read to the end of their play (not skipped nor thrown out), in order,
    each once; ``buzzes``: the ruled buzzes (undone and still-pending ones left out);
    ``seats``: every player (``Seat.played`` tells who buzzed or answered); ``human_teams``: the
    human teams."""

    match_id: int
    played_tossup_ids: list[int]
    buzzes: list[RuledBuzz]
    seats: list[Seat]
    human_teams: list[TeamSeat]


def match_play(match_id: int) -> MatchPlay:
    """The played tossups, ruled buzzes and seats of a match; tossups thrown out for a spare
    (``question_replaced``) and their buzzes are left out. Raises ``Match.DoesNotExist``."""
    match = Match.objects.get(pk=match_id)
    ended = MatchEvent.objects.filter(match=match, event=EventName.TOSSUP_ENDED).order_by("seq")
    thrown_out = set(
        MatchEvent.objects.filter(match=match, event=EventName.QUESTION_REPLACED, payload__kind=QuestionKind.TOSSUP)
        .values_list("payload__question_id", flat=True)
    )  # fmt: skip
    played = [
        e.payload["question_id"]
        for e in ended
        if e.payload.get("outcome") != "skipped" and e.payload["question_id"] not in thrown_out
    ]
    buzzes = [
        RuledBuzz(b.tossup_id, b.player_id, b.token_index, b.ruling == Ruling.CORRECT)
        for b in Buzz.objects.filter(match=match).exclude(ruling__in=UNCOUNTED_RULINGS)
    ]
    played_ids = _played_seat_ids(match)
    seats = [
        Seat(p.id, p.name, p.kind, p.team_id, p.competitor_id, p.id in played_ids)
        for p in match.players.order_by("id")
    ]
    teams = [
        TeamSeat(t.id, t.name, t.competitor_id)
        for t in match.teams.filter(kind=Team.Kind.HUMAN).order_by("id")
    ]
    return MatchPlay(match.id, list(dict.fromkeys(played)), buzzes, seats, teams)


# Events a seat causes only by playing (its actor is ``player:<id>``): a buzz, an answer.
PLAYING_EVENTS = (EventName.BUZZ_RECEIVED, EventName.ANSWER_GIVEN, EventName.BONUS_ANSWER_GIVEN)


def _played_seat_ids(match: Match) -> set[int]:
    """Seats of ``match`` that connected, buzzed (a row in the buzz log) or answered (a playing
    event). A seat that sat through tossups without buzzing played: not buzzing is its response."""
    ids = set(
        Player.objects.filter(match=match, first_connected_at__isnull=False).values_list("id", flat=True)
    )
    ids |= set(Buzz.objects.filter(match=match).values_list("player_id", flat=True))
    actors = (
        MatchEvent.objects.filter(match=match, event__in=PLAYING_EVENTS, actor__startswith=PLAYER_PREFIX)
        .values_list("actor", flat=True)
        .distinct()
    )
    ids |= {int(a.split(":", 1)[1]) for a in actors if a.split(":", 1)[1].isdigit()}
    return ids


def flagged_tossup_ids(tossup_ids: Iterable[int]) -> set[int]:
    """Ids among ``tossup_ids`` that carry at least one expert flag (any problem)."""
    return set(Flag.objects.filter(tossup_id__in=list(tossup_ids)).values_list("tossup_id", flat=True))


def identity_handles(competitor_ids: Iterable[int]) -> dict[int, str]:
    """The current handle of each existing identity among ``competitor_ids`` (merged-away or
    deleted ones are absent)."""
    return dict(Competitor.objects.filter(id__in=list(competitor_ids)).values_list("id", "handle"))


def tossup_token_counts(tossup_ids: Iterable[int]) -> dict[int, int]:
    """Tokens read in full per tossup (its buzzes' ``token_count``), for the share of the tossup
    read at a buzz; tossups nobody buzzed on are absent."""
    rows = (
        Buzz.objects.filter(tossup_id__in=list(tossup_ids)).values("tossup_id").annotate(n=Max("token_count"))
    )
    return {r["tossup_id"]: r["n"] for r in rows}


def tournament_of(match_id: int) -> int | None:
    """The id of the tournament whose game ``match_id`` is, or None."""
    from competition.models import TournamentGame

    return TournamentGame.objects.filter(match_id=match_id).values_list("tournament_id", flat=True).first()


def tournament_match_ids(tournament_id: int) -> list[int]:
    """The matches of a tournament's games, in round order."""
    from competition.models import TournamentGame

    return list(TournamentGame.objects.filter(tournament_id=tournament_id).values_list("match_id", flat=True))
