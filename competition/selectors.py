"""Reads for the realtime edge (who may see what, snapshots for (re)connecting clients) and
for the apps above competition (irt's response store: :func:`match_play`)."""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass
from typing import Any

from competition import game
from competition.models import Buzz, Flag, Match, MatchEvent, Player, Team


def audiences_for(role: str, player: Player | None) -> frozenset[str]:
    """The event audiences a connection may see: ``all`` plus its own seat/team, or the
    moderator's (``game.event_audiences`` of its view audience)."""
    return game.event_audiences(view_audience(role, player), player.team_id if player is not None else None)


def view_audience(role: str, player: Player | None) -> str:
    """The ``game.view`` audience of a connection: ``moderator``, ``player:<id>`` or ``all``."""
    if role == "moderate":
        return "moderator"
    if role == "play" and player is not None:
        return f"player:{player.id}"
    return "all"


def snapshot(match_id: int, role: str, player: Player | None) -> dict[str, Any]:
    """``{"type": "snapshot", "seq", "state"}`` for this connection, consistent with ``seq``
    (read in one query of the match row)."""
    match = Match.objects.get(pk=match_id)
    state = game.MatchState.from_dict(match.state)
    view = game.view(state, view_audience(role, player))
    view["match"] = {"id": match.id, "name": match.name, "join_code": match.join_code, "preset": match.preset}
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
    """A player of the match (``kind`` is ``human`` or ``bot``)."""

    player_id: int
    name: str
    kind: str
    team_id: int


@dataclass(frozen=True)
class MatchPlay:
    """What happened in a match, as the response store needs it.

    ``played_tossup_ids``: the tossups read to the end of their play (not skipped), in order,
    each once; ``buzzes``: the ruled buzzes (undone and still-pending ones left out);
    ``seats``: every player; ``human_teams``: ``(team_id, name)`` of the human teams."""

    match_id: int
    played_tossup_ids: list[int]
    buzzes: list[RuledBuzz]
    seats: list[Seat]
    human_teams: list[tuple[int, str]]


def match_play(match_id: int) -> MatchPlay:
    """The played tossups, ruled buzzes and seats of a match. Raises ``Match.DoesNotExist``."""
    match = Match.objects.get(pk=match_id)
    ended = MatchEvent.objects.filter(match=match, type="tossup_ended").order_by("seq")
    played = [e.payload["question_id"] for e in ended if e.payload.get("outcome") != "skipped"]
    buzzes = [
        RuledBuzz(b.tossup_id, b.player_id, b.token_index, b.ruling == "correct")
        for b in Buzz.objects.filter(match=match).exclude(ruling__in=["", "undone", "pending"])
    ]
    seats = [Seat(p.id, p.name, p.kind, p.team_id) for p in match.players.order_by("id")]
    teams = [(t.id, t.name) for t in match.teams.filter(kind=Team.Kind.HUMAN).order_by("id")]
    return MatchPlay(match.id, list(dict.fromkeys(played)), buzzes, seats, teams)


def flagged_tossup_ids(tossup_ids: Iterable[int]) -> set[int]:
    """Ids among ``tossup_ids`` that carry at least one expert flag (any problem)."""
    return set(Flag.objects.filter(tossup_id__in=list(tossup_ids)).values_list("tossup_id", flat=True))
