"""Match flow: the lobby (seats), starting the match and each tossup, between questions, the end."""

from __future__ import annotations

from dataclasses import replace

from .commands import AddTeam, Event, Rename, RuleViolation, SeatPlayer
from .events import MatchEnded, MatchStarted, PlayerJoined, Renamed, TeamAdded, TossupAnswer, TossupStarted
from .guards import score_table
from .specs import KINDS, Kind, PlayerSpec, TeamSpec, check_seat
from .state import MatchState, TossupRun


def seat_player(st: MatchState, cmd: SeatPlayer, ev: list[Event]) -> None:
    """A new seat: a human in the lobby, a bot in the lobby or while the match runs (an organiser
    adds one to a match under way; it races from the next buzz on). The service owns the ids and
    tokens; the engine only the roster."""
    if st.status != "lobby" and not (cmd.kind == "bot" and st.status == "running"):
        raise RuleViolation("bad_phase", "players join only in the lobby; bots until the match ends")
    if st.team(cmd.team_id) is None:
        raise RuleViolation("unknown_team")
    if st.player(cmd.player_id) is not None:
        raise RuleViolation("bad_value", f"player {cmd.player_id} is already seated")
    if cmd.kind not in KINDS:
        raise RuleViolation("bad_value", f"kind must be one of {KINDS}")
    if problem := check_seat(cmd.kind, cmd.buzz_mode, cmd.min_token):
        raise RuleViolation("bad_value", problem)
    kind: Kind = "bot" if cmd.kind == "bot" else "human"  # checked against KINDS above
    seat = PlayerSpec(
        cmd.player_id, cmd.team_id, cmd.name, kind, cmd.weight_class, cmd.buzz_mode, cmd.min_token
    )
    st.players = [*st.players, seat]
    # Names and ids only: a seat's token never enters the engine.
    joined = PlayerJoined(
        seat.player_id, seat.team_id, seat.name, seat.kind, seat.weight_class, seat.buzz_mode, seat.min_token
    )
    ev.append(joined.event())


MAX_NAME = 100  # Team.name / Player.name column width


def add_team(st: MatchState, cmd: AddTeam, ev: list[Event]) -> None:
    """A new bots' team until the match ends, with score 0 (the service owns the id)."""
    if st.status == "ended":
        raise RuleViolation("bad_phase", "the match has ended")
    if st.team(cmd.team_id) is not None:
        raise RuleViolation("bad_value", f"team {cmd.team_id} already plays")
    name = cmd.name.strip() if isinstance(cmd.name, str) else ""
    if not 0 < len(name) <= MAX_NAME or any(t.name == name for t in st.teams):
        raise RuleViolation("bad_value", f"a new team needs a name of 1 to {MAX_NAME} characters no team has")
    st.teams = [*st.teams, TeamSpec(cmd.team_id, name, "bot")]
    st.scores = {**st.scores, str(cmd.team_id): 0}
    ev.append(TeamAdded(cmd.team_id, name, "bot").event())


def rename(st: MatchState, cmd: Rename, ev: list[Event]) -> None:
    """Correct a team's or a seat's name (any phase, also after the match ended)."""
    name = cmd.name.strip() if isinstance(cmd.name, str) else ""
    if not 0 < len(name) <= MAX_NAME:
        raise RuleViolation("bad_value", f"a name has 1 to {MAX_NAME} characters")
    if (cmd.team_id is None) == (cmd.player_id is None):
        raise RuleViolation("bad_value", "rename a team or a seat: give exactly one of team_id, player_id")
    if cmd.team_id is not None:
        if st.team(cmd.team_id) is None:
            raise RuleViolation("unknown_team")
        st.teams = [replace(t, name=name) if t.team_id == cmd.team_id else t for t in st.teams]
    elif cmd.player_id is not None:
        if st.player(cmd.player_id) is None:
            raise RuleViolation("unknown_player")
        st.players = [replace(p, name=name) if p.player_id == cmd.player_id else p for p in st.players]
    ev.append(Renamed(cmd.team_id, cmd.player_id, name).event())


def start_match(st: MatchState, now: float, ev: list[Event]) -> None:
    if st.status != "lobby":
        raise RuleViolation("bad_phase", "match already started")
    if not st.tossups:
        raise RuleViolation("no_tossups")
    st.status = "running"
    ev.append(MatchStarted().event())
    start_tossup(st, 0, now, ev)


def start_tossup(st: MatchState, index: int, at: float, ev: list[Event]) -> None:
    if index >= len(st.tossups):
        end_match(st, ev)
        return
    spec = st.tossups[index]
    st.tossup_index = index
    st.tossup = TossupRun(index=index, question_id=spec.question_id, next_word_at=at)
    st.bonus = None
    st.between_deadline = None
    st.phase = "reading"
    # No source id: it would let a player or bot look the answer up.
    ev.append(TossupStarted(index, spec.question_id, len(spec.tokens), spec.category).event())
    answer = TossupAnswer(spec.question_id, spec.answer_line, spec.power_index, spec.superpower_index)
    ev.append(answer.event())


def after_question(st: MatchState, at: float, ev: list[Event]) -> None:
    if st.tossup_index + 1 >= len(st.tossups):
        end_match(st, ev)
        return
    st.phase = "between"
    st.between_deadline = at + st.config.between_questions if st.config.auto_advance else None


def end_match(st: MatchState, ev: list[Event]) -> None:
    st.status, st.phase = "ended", "ended"
    st.paused, st.paused_at = False, None
    st.between_deadline = None
    ev.append(MatchEnded(score_table(st)).event())
