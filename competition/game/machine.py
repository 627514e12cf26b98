"""The pure match engine: ``apply(state, command, now) -> (new_state, events)``.

No clock reads, no I/O, no randomness: time is the ``now`` argument. Every call first applies
the deadlines due at ``now`` (as a Tick would), then the command, then the deadlines the command
made due (e.g. a zero collection window). Deadlines are handled at their own due time, so a late
driver gets the same result as a punctual one. Rules: QUIZBOWL.md; points: ``scoring.rules``.

Undo reverses the points of the last ruling not yet undone; if it was a wrong/timeout/no-penalty
tossup ruling and that tossup has not ended, the team may buzz on it again. It never restarts an
ended tossup or bonus; ReplayTossup does (see ``corrections.replay_tossup``). Bouncebacks
(``preset.bouncebacks``) are not played in this version.
"""

from __future__ import annotations

from typing import Any

from competition.vocabulary import BONUS_PHASES, TOSSUP_PHASES, MatchStatus, Ruling, TossupOutcome

from .bonus import decide_bonus, end_bonus, rule_bonus, take_bonus_answer, take_suggestion
from .clock import Due, deadlines, pause, resume, set_speed
from .commands import (
    AddBuzz,
    AddTeam,
    Adjust,
    Answer,
    BonusAnswer,
    BonusSuggestion,
    Buzz,
    CallTimeout,
    Command,
    ConfirmBuzz,
    CorrectRuling,
    DecideBonus,
    Delegate,
    End,
    Event,
    Next,
    Pause,
    Protest,
    Rename,
    ReplaceQuestion,
    ReplayTossup,
    Resume,
    Reveal,
    ReviewRuling,
    Rule,
    RuleViolation,
    SeatPlayer,
    SetPace,
    SetSpeed,
    Skip,
    Start,
    Substitute,
    Tick,
    Undo,
    UndoTimeout,
)
from .corrections import adjust, correct_ruling, mark_protest, replay_tossup, undo
from .flow import add_team, end_match, next_tossup, rename, seat_player, set_pace, start_match, start_tossup
from .guards import require_running
from .hybrid import confirm_buzz, delegate
from .lineups import substitute
from .periods import call_timeout, undo_timeout
from .proposals import expire_proposal
from .review import add_buzz, review_ruling
from .ruling import apply_rule, rule_tossup, take_answer
from .spares import replace_question
from .state import MatchState
from .tossup import end_tossup, flush_words, release_bot, resolve_race, reveal, reveal_next, take_buzz


def apply(state: MatchState, command: Command, now: float) -> tuple[MatchState, list[Event]]:
    """Apply ``command`` at time ``now`` (seconds since the epoch) to a copy of ``state``.

    Returns the new state and the events to append (in order). Raises RuleViolation(reason)
    for a command the rules refuse; the input state is never mutated.
    """
    st = state.copy()
    events: list[Event] = []
    _advance(st, now, events)
    _dispatch(st, command, now, events)
    _advance(st, now, events)
    return st, events


def _dispatch(st: MatchState, cmd: Command, now: float, ev: list[Event]) -> None:
    match cmd:
        case Tick():
            pass
        case SeatPlayer():
            seat_player(st, cmd, ev)
        case AddTeam():
            add_team(st, cmd, ev)
        case Rename():
            rename(st, cmd, ev)
        case Start():
            start_match(st, now, ev)
        case Buzz():
            take_buzz(st, cmd, now, ev)
        case ConfirmBuzz():
            confirm_buzz(st, cmd, now, ev)
        case Delegate():
            delegate(st, cmd, now, ev)
        case Answer():
            take_answer(st, cmd, now, ev)
        case BonusAnswer():
            take_bonus_answer(st, cmd, now, ev)
        case BonusSuggestion():
            take_suggestion(st, cmd, ev)
        case DecideBonus():
            decide_bonus(st, cmd, now, ev)
        case Rule():
            apply_rule(st, cmd, now, ev)
        case Pause():
            pause(st, now, ev)
        case Resume():
            resume(st, now, ev)
        case SetSpeed():
            set_speed(st, cmd.wpm, now, ev)
        case Skip():
            _skip(st, now, ev)
        case Undo():
            undo(st, now, ev)
        case Adjust():
            adjust(st, cmd, now, ev)
        case ReplayTossup():
            replay_tossup(st, now, ev)
        case Protest():
            mark_protest(st, cmd, now, ev)
        case Reveal():
            reveal(st, now, ev)
        case Next():
            next_tossup(st, cmd, now, ev)
        case SetPace():
            set_pace(st, cmd, now, ev)
        case CorrectRuling():
            correct_ruling(st, cmd, now, ev)
        case Substitute():
            substitute(st, cmd, ev)
        case CallTimeout():
            call_timeout(st, cmd, now, ev)
        case UndoTimeout():
            undo_timeout(st, now, ev)
        case End():
            if st.status == MatchStatus.ENDED:
                raise RuleViolation("bad_phase", "match already ended")
            end_match(st, ev)
        case ReplaceQuestion():
            replace_question(st, cmd, now, ev)
        case ReviewRuling():
            review_ruling(st, cmd, now, ev)
        case AddBuzz():
            add_buzz(st, cmd, now, ev)
        case _:
            raise RuleViolation("unknown_command", f"unknown command {cmd!r}")


def _advance(st: MatchState, now: float, ev: list[Event]) -> None:
    """Handle every deadline due at or before ``now`` in time order; consecutive word reveals
    are batched into one ``words`` event stamped with the batch's due time."""
    batch: list[str | dict[str, Any]] = []
    while True:
        pending = deadlines(st)
        if not pending:
            break
        at, _, kind = min(pending)
        if at > now:
            break
        if kind == Due.WORD:
            batch.append(reveal_next(st, at))
            continue
        flush_words(st, batch, ev)
        if kind == Due.RELEASE:
            release_bot(st, at, ev)
        elif kind == Due.CONFIRM:
            expire_proposal(st, ev)
        elif kind == Due.RACE:
            resolve_race(st, at, ev)
        elif kind == Due.ANSWER:
            rule_tossup(st, Ruling.TIMEOUT, at, ev)
        elif kind == Due.DEAD:
            end_tossup(st, TossupOutcome.DEAD, at, ev)
        elif kind == Due.BONUS:
            rule_bonus(st, Ruling.TIMEOUT, at, ev)
        elif kind == Due.BETWEEN:
            start_tossup(st, st.tossup_index + 1, at, ev)
    flush_words(st, batch, ev)


def _skip(st: MatchState, now: float, ev: list[Event]) -> None:
    require_running(st)
    if st.phase in TOSSUP_PHASES:
        end_tossup(st, TossupOutcome.SKIPPED, now, ev)
    elif st.phase in BONUS_PHASES:
        end_bonus(st, now, ev)
    else:
        raise RuleViolation("bad_phase", "nothing to skip")
