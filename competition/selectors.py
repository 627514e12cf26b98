"""Reads for the realtime edge: who may see what, and snapshots for (re)connecting clients."""

from __future__ import annotations

from typing import Any

from competition import game
from competition.models import Match, Player


def audiences_for(role: str, player: Player | None) -> frozenset[str]:
    """The event audiences a connection may see: ``all`` plus its own seat/team, or the
    moderator's."""
    if role == "moderate":
        return frozenset({"all", "moderator"})
    if role == "play" and player is not None:
        return frozenset({"all", f"player:{player.id}", f"team:{player.team_id}"})
    return frozenset({"all"})


def view_audience(role: str, player: Player | None) -> str:
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
    if player is not None:
        view["you"] = {
            "player_id": player.id,
            "team_id": player.team_id,
            "name": player.name,
            "kind": player.kind,
        }
    return {"type": "snapshot", "seq": match.seq, "state": view}
