"""The match clock: the pending deadlines (``MatchState.next_deadline``), pause, resume and reading speed.

Deadlines are stored as absolute times (seconds since the epoch); a pause shifts them all by the
paused duration on resume, so nothing falls due while the clock is stopped. A timeout running
between questions (``MatchState.periods``) is a deadline too: its ``ends_at`` moves with them, so
its countdown stops while paused and goes on with the time it had left."""

from __future__ import annotations

import math
from dataclasses import replace
from typing import TYPE_CHECKING

from competition.vocabulary import MatchStatus, Phase

from .commands import Event, RuleViolation
from .events import Paused, Resumed, SpeedChanged
from .guards import require_running

if TYPE_CHECKING:  # state.py imports this module for MatchState.next_deadline
    from .state import MatchState


class Due:
    """What falls due at a pending deadline (:func:`deadlines`; ``machine`` handles each). Plain
    strings, not an enum: they are read several times per word, and an enum class's attribute
    costs about 0.25 µs on Python 3.11 (its metaclass's ``__getattr__`` hook)."""

    RELEASE = "release"  # a held bot buzz joins the race
    CONFIRM = "confirm"  # a semi-autonomous bot's unconfirmed buzz lapses
    RACE = "race"  # the collection window closes
    WORD = "word"  # the next token is read
    ANSWER = "answer"  # the buzzer's answer window closes
    DEAD = "dead"  # the dead time after the last token runs out
    BONUS = "bonus"  # the bonus part's answer window closes
    BETWEEN = "between"  # the next tossup starts


# The members deadlines() compares with, bound once for the same reason.
_RUNNING = MatchStatus.RUNNING
_READING, _ANSWERING, _DEAD_TIME = Phase.READING, Phase.ANSWERING, Phase.DEAD_TIME
_BONUS, _BETWEEN = Phase.BONUS, Phase.BETWEEN


def deadlines(st: MatchState) -> list[tuple[float, int, str]]:
    """Pending deadlines as ``(time, priority, kind)``; at equal times a held bot buzz is
    released (or a semi-autonomous bot's unconfirmed buzz lapses) before the race closes, and the race closes before the next word is read."""
    if st.paused or st.status != _RUNNING:
        return []
    out: list[tuple[float, int, str]] = []
    t = st.tossup
    if t is not None and t.outcome is None:
        out += [(h.release_at, 0, Due.RELEASE) for h in t.held if h.release_at is not None]
        out += [(p.deadline, 0, Due.CONFIRM) for p in t.proposals]
        if t.race_deadline is not None:
            out.append((t.race_deadline, 1, Due.RACE))
        if st.phase == _READING and t.next_word_at is not None:
            out.append((t.next_word_at, 2, Due.WORD))
        if st.phase == _ANSWERING and t.buzz is not None and t.buzz.answer_deadline is not None:
            out.append((t.buzz.answer_deadline, 3, Due.ANSWER))
        # A buzz in the collection window was in time: dead time waits for the race.
        if st.phase == _DEAD_TIME and t.dead_deadline is not None and not t.candidates:
            out.append((t.dead_deadline, 4, Due.DEAD))
    if st.phase == _BONUS and st.bonus is not None and st.bonus.deadline is not None:
        out.append((st.bonus.deadline, 5, Due.BONUS))
    if st.phase == _BETWEEN and st.between_deadline is not None:
        out.append((st.between_deadline, 6, Due.BETWEEN))
    return out


def pause(st: MatchState, now: float, ev: list[Event]) -> None:
    """Stop the clock at ``now``. Raises RuleViolation unless the match is running and not paused."""
    require_running(st)
    st.paused, st.paused_at = True, now
    ev.append(Paused(now).event())


def resume(st: MatchState, now: float, ev: list[Event]) -> None:
    """Restart the clock: every pending deadline (a running timeout's end included) moves by the
    paused duration. Raises RuleViolation ``not_paused``."""
    if not st.paused or st.paused_at is None:
        raise RuleViolation("not_paused")
    shift = now - st.paused_at
    st.paused, st.paused_at = False, None
    t = st.tossup
    if t is not None:
        t.next_word_at = _shifted(t.next_word_at, shift)
        t.dead_deadline = _shifted(t.dead_deadline, shift)
        t.lockout_until = _shifted(t.lockout_until, shift)
        t.race_deadline = _shifted(t.race_deadline, shift)
        t.held = [replace(h, release_at=_shifted(h.release_at, shift)) for h in t.held]
        t.proposals = [replace(p, deadline=p.deadline + shift) for p in t.proposals]
        if t.buzz is not None:
            t.buzz = replace(t.buzz, answer_deadline=_shifted(t.buzz.answer_deadline, shift))
    if st.bonus is not None:
        st.bonus.deadline = _shifted(st.bonus.deadline, shift)
    st.between_deadline = _shifted(st.between_deadline, shift)
    _shift_timeouts(st, shift)
    ev.append(Resumed(shift).event())


def _shift_timeouts(st: MatchState, shift: float) -> None:
    """Move the running timeout's end, and its break's timeout records (``ends_at`` and the next
    tossup's time before each, ``before``), by ``shift`` (``periods``: plain JSON, replaced)."""
    current = st.periods.get("timeout")
    if current is None:
        return
    records = [
        {**r, "ends_at": r["ends_at"] + shift, "before": _shifted(r.get("before"), shift)}
        if r["after"] == st.tossup_index
        else r
        for r in st.periods.get("timeouts", [])
    ]
    current = {**current, "ends_at": current["ends_at"] + shift}
    st.periods = {**st.periods, "timeouts": records, "timeout": current}


def _shifted(at: float | None, shift: float) -> float | None:
    return None if at is None else at + shift


def set_speed(st: MatchState, wpm: float, now: float, ev: list[Event]) -> None:
    if not (isinstance(wpm, int | float) and math.isfinite(wpm) and wpm > 0):
        raise RuleViolation("bad_value", "wpm must be a positive number")
    st.wpm = float(wpm)
    t = st.tossup
    if t is not None and t.next_word_at is not None and t.revealed_at:
        reference = st.paused_at if st.paused and st.paused_at is not None else now
        last = st.tossups[t.index].tokens[t.revealed - 1] if t.revealed else ""
        # A delay holds the reading for its own duration whatever the speed.
        step = last.duration if not isinstance(last, str) and last.kind == "delay" else 60.0 / st.wpm
        t.next_word_at = max(t.revealed_at[-1] + step, reference)
    ev.append(SpeedChanged(st.wpm).event())
