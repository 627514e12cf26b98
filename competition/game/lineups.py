"""Lineups: each team's active players and bench, substitutions, tossups heard per player.

A team's lineup is its active seats. Until its first entry in ``MatchState.lineups`` (the lineup
log), it is the team's first ``preset.players_per_team`` seats in seat order (all of them with no
limit); a seat beyond the limit sits on the bench. Each entry is ``{"team_id", "players",
"first_tossup", "reason"}``: the active seat ids from tossup ``first_tossup`` (0-based) on; the
log only grows (one entry per ``lineup_changed``, and one when a bot joins a running match), so
the lineup of any tossup read can be rebuilt from it (:func:`tossups_heard`, the QBJ export's
``lineups``). Benched seats neither buzz nor answer bonus parts (RuleViolation ``benched``).

Substitutions: in the lobby (reason ``initial``), and between questions at the breaks the
preset's ``substitutions`` list allows: ``between_tossups`` (any break), ``halftime``,
``before_overtime`` or ``timeout`` (a break in which a timeout was called: ``own_timeout`` /
``other_timeout``). Mid-tossup or mid-bonus: RuleViolation ``no_substitution``.
"""

from __future__ import annotations

from typing import Any

from competition.vocabulary import MatchStatus, Phase

from .commands import Event, RuleViolation, Substitute
from .events import LineupChanged
from .guards import seated_player
from .periods import Break
from .specs import PlayerSpec
from .state import MatchState

# QBJ's LineupReason for each break (``periods`` names the break; "" is an ordinary one).
BREAK_REASONS = {
    Break.HALFTIME: "halftime",
    Break.BEFORE_OVERTIME: "before_overtime",
    Break.NONE: "segment_break",
}


def roster(st: MatchState, team_id: int) -> list[int]:
    """Every seat id of team ``team_id``, in seat order."""
    return [p.player_id for p in st.players if p.team_id == team_id]


def active_players(st: MatchState, team_id: int) -> list[int]:
    """Team ``team_id``'s active seat ids now (its newest lineup entry, else the initial lineup)."""
    for entry in reversed(st.lineups):
        if entry["team_id"] == team_id:
            return list(entry["players"])
    return roster(st, team_id)[: st.config.preset.players_per_team]


def lineups_table(st: MatchState) -> dict[str, list[int]]:
    """``{str(team_id): active seat ids}`` for every team (the views' ``lineups``)."""
    return {str(t.team_id): active_players(st, t.team_id) for t in st.teams}


def require_active(st: MatchState, player: PlayerSpec) -> None:
    """Refuse (``benched``) a buzz or bonus answer from a seat on its team's bench."""
    if player.player_id not in active_players(st, player.team_id):
        raise RuleViolation("benched", f"{player.name} is on the bench")


def seat_joined(st: MatchState, player: PlayerSpec) -> None:
    """Seat ``player`` was just added: it joins its team's lineup when the team has room, else
    the bench (the reducers follow the same rule from ``player_joined``). Nothing is logged in
    the lobby while the team's lineup is still the initial one (seats in order); once the match
    runs (a bot added) the change counts from the next tossup, the lineup before it logged first."""
    team_id = player.team_id
    logged = any(e["team_id"] == team_id for e in st.lineups)
    if st.status == MatchStatus.LOBBY and not logged:
        return
    active = [pid for pid in active_players(st, team_id) if pid != player.player_id]
    if not logged:
        before = {"team_id": team_id, "players": list(active), "first_tossup": 0, "reason": "initial"}
        st.lineups = [*st.lineups, before]
    limit = st.config.preset.players_per_team
    if limit is None or len(active) < limit:
        active.append(player.player_id)
    first = 0 if st.status == MatchStatus.LOBBY else st.tossup_index + 1
    entry = {
        "team_id": team_id,
        "players": active,
        "first_tossup": first,
        "reason": BREAK_REASONS[Break.NONE],
    }
    st.lineups = [*st.lineups, entry]


def substitute(st: MatchState, cmd: Substitute, ev: list[Event]) -> None:
    """Apply a :class:`Substitute`; emits ``lineup_changed``. Refuses (nothing changes):
    ``unknown_team``; ``unknown_player`` for a seat not on that team's roster;
    ``no_substitution`` mid-question, after the match or at a break the preset does not allow;
    ``bad_value`` for nobody in or out, or ``player_in`` already active / ``player_out`` benched;
    ``lineup_full`` when a seat only comes in and the team already plays ``players_per_team``."""
    if st.team(cmd.team_id) is None:
        raise RuleViolation("unknown_team")
    for pid in (cmd.player_in, cmd.player_out):
        if pid is not None and (st.player(pid) is None or seated_player(st, pid).team_id != cmd.team_id):
            raise RuleViolation("unknown_player", f"seat {pid} is not on this team's roster")
    reason = _reason(st, cmd.team_id)
    if cmd.player_in is None and cmd.player_out is None:
        raise RuleViolation("bad_value", "name a player coming in, going out, or both")
    active = active_players(st, cmd.team_id)
    if cmd.player_in is not None and cmd.player_in in active:
        raise RuleViolation("bad_value", f"seat {cmd.player_in} is already playing")
    if cmd.player_out is not None and cmd.player_out not in active:
        raise RuleViolation("bad_value", f"seat {cmd.player_out} is on the bench")
    if cmd.player_out is not None:
        at = active.index(cmd.player_out)
        active[at : at + 1] = [] if cmd.player_in is None else [cmd.player_in]
    elif cmd.player_in is not None:
        limit = st.config.preset.players_per_team
        if limit is not None and len(active) >= limit:
            raise RuleViolation("lineup_full", f"{limit} players play at once: name who goes out")
        active.append(cmd.player_in)
    first = 0 if st.status == MatchStatus.LOBBY else st.tossup_index + 1
    entry = {"team_id": cmd.team_id, "players": active, "first_tossup": first, "reason": reason}
    st.lineups = [*st.lineups, entry]
    ev.append(LineupChanged(cmd.team_id, cmd.player_in, cmd.player_out, active, first, reason).event())


def _reason(st: MatchState, team_id: int) -> str:
    """Why the lineup may change now, in QBJ's words; RuleViolation ``no_substitution`` if it may not."""
    if st.status == MatchStatus.LOBBY:
        return "initial"
    if st.status != MatchStatus.RUNNING or st.phase != Phase.BETWEEN:
        raise RuleViolation("no_substitution", "substitutions only between tossups (after any bonus)")
    allowed = st.config.preset.substitutions
    brk = Break(st.periods.get("break", ""))
    called = [t for t in st.periods.get("timeouts", []) if t["after"] == st.tossup_index]
    if brk and brk in allowed:
        return BREAK_REASONS[brk]
    if called and "timeout" in allowed:
        return "own_timeout" if any(t["team_id"] == team_id for t in called) else "other_timeout"
    if "between_tossups" in allowed:
        return BREAK_REASONS[brk]
    where = ", ".join(a.replace("_", " ") for a in allowed)
    raise RuleViolation("no_substitution", f"this format allows substitutions only at: {where}")


def lineup_at(lineups: list[dict[str, Any]], initial: list[int], team_id: int, index: int) -> list[int]:
    """Team ``team_id``'s active seats on tossup ``index`` (0-based): the newest entry of the
    lineup log for that team with ``first_tossup <= index``, else ``initial``."""
    players = initial
    for entry in lineups:
        if entry["team_id"] == team_id and entry["first_tossup"] <= index:
            players = entry["players"]
    return list(players)


def tossups_heard(st: MatchState) -> dict[int, int]:
    """``{player_id: tossups heard}``: per seat, the tossups read so far (every tossup started,
    the live one included; a replayed tossup once) during which it was in its team's lineup."""
    read = st.tossup_index + 1 if st.status != MatchStatus.LOBBY else 0
    limit = st.config.preset.players_per_team
    heard = {p.player_id: 0 for p in st.players}
    for team in st.teams:
        initial = roster(st, team.team_id)[:limit]
        for index in range(read):
            for pid in lineup_at(st.lineups, initial, team.team_id, index):
                heard[pid] += 1
    return heard
