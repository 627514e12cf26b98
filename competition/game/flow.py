"""Match flow: the lobby (seats), starting the match and each tossup, between questions, the end."""

from __future__ import annotations

from dataclasses import replace

from competition.vocabulary import MatchStatus, Phase, SeatKind

from .commands import AddTeam, Event, Next, Rename, RuleViolation, SeatPlayer, SetPace
from .events import (
    BetweenQuestions,
    MatchEnded,
    MatchStarted,
    PaceChanged,
    PlayerJoined,
    Renamed,
    TeamAdded,
    TossupAnswer,
    TossupStarted,
)
from .guards import require_running, score_table
from .lineups import seat_joined
from .periods import enter_break, leave_break, next_break
from .specs import KINDS, PlayerSpec, TeamSpec, check_seat
from .state import MatchState, TossupRun


def seat_player(st: MatchState, cmd: SeatPlayer, ev: list[Event]) -> None:
    """A new seat: a human in the lobby, a bot in the lobby or while the match runs (an organiser
    adds one to a match under way; it races from the next buzz on). The service owns the ids and
    tokens; the engine only the roster."""
    if st.status != MatchStatus.LOBBY and not (cmd.kind == SeatKind.BOT and st.status == MatchStatus.RUNNING):
        raise RuleViolation("bad_phase", "players join only in the lobby; bots until the match ends")
    if st.team(cmd.team_id) is None:
        raise RuleViolation("unknown_team")
    if st.player(cmd.player_id) is not None:
        raise RuleViolation("bad_value", f"player {cmd.player_id} is already seated")
    if cmd.kind not in KINDS:
        raise RuleViolation("bad_value", f"kind must be one of {', '.join(KINDS)}")
    if problem := check_seat(cmd.kind, cmd.buzz_mode, cmd.min_token):
        raise RuleViolation("bad_value", problem)
    seat = PlayerSpec(
        cmd.player_id,
        cmd.team_id,
        cmd.name,
        SeatKind(cmd.kind),
        cmd.weight_class,
        cmd.buzz_mode,
        cmd.min_token,
    )
    st.players = [*st.players, seat]
    seat_joined(st, seat)
    # Names and ids only: a seat's token never enters the engine.
    joined = PlayerJoined(
        seat.player_id, seat.team_id, seat.name, seat.kind, seat.weight_class, seat.buzz_mode, seat.min_token
    )
    ev.append(joined.event())


MAX_NAME = 100  # Team.name / Player.name column width
MAX_PACE = 600.0  # seconds between questions at most (longer: the moderator advances)


def add_team(st: MatchState, cmd: AddTeam, ev: list[Event]) -> None:
    """A new bots' team until the match ends, with score 0 (the service owns the id)."""
    if st.status == MatchStatus.ENDED:
        raise RuleViolation("bad_phase", "the match has ended")
    if st.team(cmd.team_id) is not None:
        raise RuleViolation("bad_value", f"team {cmd.team_id} already plays")
    name = cmd.name.strip() if isinstance(cmd.name, str) else ""
    if not 0 < len(name) <= MAX_NAME or any(t.name == name for t in st.teams):
        raise RuleViolation("bad_value", f"a new team needs a name of 1 to {MAX_NAME} characters no team has")
    st.teams = [*st.teams, TeamSpec(cmd.team_id, name, SeatKind.BOT)]
    st.scores = {**st.scores, str(cmd.team_id): 0}
    ev.append(TeamAdded(cmd.team_id, name, SeatKind.BOT).event())


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
    if st.status != MatchStatus.LOBBY:
        raise RuleViolation("bad_phase", "match already started")
    if not st.tossups:
        raise RuleViolation("no_tossups")
    st.status = MatchStatus.RUNNING
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
    st.phase = Phase.READING
    leave_break(st)
    # No source id: it would let a player or bot look the answer up.
    ev.append(TossupStarted(index, spec.question_id, len(spec.tokens), spec.category).event())
    answer = TossupAnswer(spec.question_id, spec.answer_line, spec.power_index, spec.superpower_index)
    ev.append(answer.event())


def after_question(st: MatchState, at: float, ev: list[Event]) -> None:
    """The question (tossup and bonus) is over: the match ends after the last tossup, else waits
    between questions; halftime and overtime per the preset (``periods.next_break``)."""
    brk = next_break(st)
    if brk is None:
        end_match(st, ev)
        return
    enter_break(st, brk, ev)
    go_between(st, at, ev)


def go_between(st: MatchState, at: float, ev: list[Event]) -> None:
    """Between questions from ``at``: the next tossup is due after the match's pace (none is due
    when the moderator advances)."""
    st.phase = Phase.BETWEEN
    pace = st.between_questions
    st.between_deadline = None if pace is None else at + pace
    ev.append(BetweenQuestions(st.between_deadline).event())


def set_pace(st: MatchState, cmd: SetPace, now: float, ev: list[Event]) -> None:
    """The pace from now on; between questions the wait restarts from ``now`` (a deadline the
    moderator shortens is not taken as passed)."""
    pace = cmd.between_questions
    if pace is not None and (
        isinstance(pace, bool) or not isinstance(pace, int | float) or not 0 <= pace <= MAX_PACE
    ):
        raise RuleViolation("bad_value", f"between_questions must be 0 to {MAX_PACE:.0f} seconds, or null")
    if st.status == MatchStatus.ENDED:
        raise RuleViolation("bad_phase", "the match has ended")
    st.between_questions = None if pace is None else float(pace)
    if st.phase == Phase.BETWEEN:
        reference = st.paused_at if st.paused and st.paused_at is not None else now
        st.between_deadline = None if pace is None else reference + float(pace)
    ev.append(PaceChanged(st.between_questions, st.between_deadline).event())


def next_tossup(st: MatchState, cmd: Next, now: float, ev: list[Event]) -> None:
    """The moderator's Next: the next tossup now. A Next for a tossup the match has already left
    (``after_index`` below the current one) is a no-op, not a refusal."""
    require_running(st)
    if cmd.after_index is not None and cmd.after_index < st.tossup_index:
        return
    if st.phase != Phase.BETWEEN:
        raise RuleViolation("bad_phase", "Next only between questions")
    start_tossup(st, st.tossup_index + 1, now, ev)


def end_match(st: MatchState, ev: list[Event]) -> None:
    st.status, st.phase = MatchStatus.ENDED, Phase.ENDED
    st.paused, st.paused_at = False, None
    st.between_deadline = None
    ev.append(MatchEnded(score_table(st)).event())
