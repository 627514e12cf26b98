"""Small lookups shared by the rule modules; each refuses with RuleViolation instead of returning None."""

from __future__ import annotations

from typing import TYPE_CHECKING

from competition.vocabulary import MatchStatus

from .commands import RuleViolation
from .specs import PlayerSpec

if TYPE_CHECKING:  # state.py imports the clock, which refuses through these guards
    from .state import BonusRun, MatchState, TossupRun


def score_table(st: MatchState) -> dict[str, int]:
    return dict(st.scores)


def seated_player(st: MatchState, player_id: int) -> PlayerSpec:
    player = st.player(player_id)
    if player is None:
        raise RuleViolation("unknown_player")
    return player


def current_tossup(st: MatchState) -> TossupRun:
    assert st.tossup is not None
    return st.tossup


def current_bonus(st: MatchState) -> BonusRun:
    assert st.bonus is not None
    return st.bonus


def require_running(st: MatchState) -> None:
    if st.status != MatchStatus.RUNNING:
        raise RuleViolation(
            "not_live" if st.status == MatchStatus.LOBBY else "bad_phase", f"match is {st.status}"
        )
    if st.paused:
        raise RuleViolation("paused")
