"""Halves, overtime and timeouts, per the preset (``scoring.rules.Preset``; docs/OPERATIONS.md).

``MatchState.periods`` (plain JSON, replaced, never mutated): ``half`` (1, then 2 from halftime),
``overtime`` (True once regulation ended tied), ``break`` (the break between questions now:
"halftime", "before_overtime" or ""), ``timeouts`` (every timeout called and not undone:
``{"team_id", "after", "half", "at", "ends_at", "before"}``, ``after`` being the 0-based tossup
it followed, ``before`` when the next tossup was due before it, None: on Next) and ``timeout``
(the one running this break: ``{"team_id", "length", "ends_at"}``, else None). A pause stops a
timeout's countdown: resuming moves ``ends_at`` (and ``before``) by the paused time
(``clock.resume``); the views show what is left while paused (``remaining``).

A called timeout may be undone (:func:`undo_timeout`) until the next tossup starts, whether its
countdown is still running or over, paused or not: the team gets it back and the next tossup is
due when it was before the timeout. A substitution made during it stands (as logged).

With ``preset.tossups_per_half`` = H, regulation is the packet's first 2H tossups: halftime
comes after tossup H (its bonus included). A tie for the lead after tossup 2H sends the match to
overtime on the packet's next tossups (2H + 1, …): ``overtime_tossups`` of them are read, then
the match ends after the first tossup (and bonus, if any) that leaves the lead untied (sudden
death; with ``overtime_tossups`` 0 that is the first). No bonus is read in overtime unless
``overtime_bonuses``. A packet that runs out ends the match, tied or not. Without halves (none in
the preset, or a packet shorter than 2H tossups) every tossup of the packet is read and a tie stands.
"""

from __future__ import annotations

from enum import StrEnum
from typing import Any

from competition.vocabulary import MatchStatus, Phase

from .commands import CallTimeout, Event, RuleViolation
from .events import Halftime, OvertimeStarted, TimeoutCalled, TimeoutUndone
from .guards import require_running, score_table
from .state import MatchState


class Break(StrEnum):
    """The break between two questions (``periods["break"]``; also a ``Preset.substitutions`` point)."""

    NONE = ""
    HALFTIME = "halftime"
    BEFORE_OVERTIME = "before_overtime"


def half(st: MatchState) -> int:
    """The half being played (1 before halftime, 2 after; overtime counts as the second)."""
    return int(st.periods.get("half", 1))


def regulation(st: MatchState) -> int | None:
    """How many tossups regulation reads (None: no halves, the whole packet is read: the preset
    has none, or the packet is shorter than two halves, e.g. a short practice match)."""
    per_half = st.config.preset.tossups_per_half
    return None if per_half is None or len(st.tossups) < 2 * per_half else 2 * per_half


def tied_for_lead(st: MatchState) -> bool:
    """Whether two or more teams share the top score."""
    scores = sorted(st.scores.values(), reverse=True)
    return len(scores) > 1 and scores[0] == scores[1]


def bonuses_in_play(st: MatchState) -> bool:
    """Whether a correct tossup now earns its bonus (not in overtime, unless the preset says so)."""
    return not st.periods.get("overtime") or st.config.preset.overtime_bonuses


def timeouts_left(st: MatchState) -> dict[str, int]:
    """``{str(team_id): timeouts left}`` in this game (or half, per ``preset.timeouts_per``)."""
    preset = st.config.preset
    per_half = preset.timeouts_per == "half"
    used: dict[str, int] = {}
    for t in st.periods.get("timeouts", []):
        if not per_half or t["half"] == half(st):
            used[str(t["team_id"])] = used.get(str(t["team_id"]), 0) + 1
    return {str(t.team_id): max(preset.timeouts - used.get(str(t.team_id), 0), 0) for t in st.teams}


def timeout_view(st: MatchState) -> dict[str, Any] | None:
    """The running timeout as the views show it: ``{"team_id", "length", "ends_at", "remaining"}``,
    ``remaining`` being the seconds it had left when the clock was paused (None while it runs;
    ``ends_at`` moves by the paused time on resume), else None."""
    current = st.periods.get("timeout")
    if current is None:
        return None
    paused_at = st.paused_at if st.paused else None
    remaining = None if paused_at is None else max(0.0, current["ends_at"] - paused_at)
    return {**{k: current[k] for k in ("team_id", "length", "ends_at")}, "remaining": remaining}


def periods_view(st: MatchState) -> dict[str, Any]:
    """The views' ``periods``: ``half``, ``overtime``, ``tossups_per_half``, the allowance
    (``timeouts`` per ``timeouts_per``), ``timeouts_left``,
    ``timeout`` (the running one, :func:`timeout_view`, or None) and the preset's ``timeout_seconds``."""
    return {
        "half": half(st),
        "overtime": bool(st.periods.get("overtime")),
        "tossups_per_half": None if regulation(st) is None else st.config.preset.tossups_per_half,
        "timeouts": st.config.preset.timeouts,
        "timeouts_per": st.config.preset.timeouts_per,
        "timeouts_left": timeouts_left(st),
        "timeout": timeout_view(st),
        "timeout_seconds": st.config.preset.timeout_seconds,
    }


def next_break(st: MatchState) -> Break | None:
    """After the current question (tossup and bonus): None when the match ends, else the break
    ("halftime", "before_overtime" or "") before the next tossup."""
    read = st.tossup_index + 1
    if read >= len(st.tossups):
        return None
    per_half, total = st.config.preset.tossups_per_half, regulation(st)
    if per_half is None or total is None:
        return Break.NONE
    if read < total:
        return Break.HALFTIME if read == per_half else Break.NONE
    if read == total:
        return Break.BEFORE_OVERTIME if tied_for_lead(st) else None
    past = read - total
    return Break.NONE if past < st.config.preset.overtime_tossups or tied_for_lead(st) else None


def enter_break(st: MatchState, brk: str, ev: list[Event]) -> None:
    """Record the break the match enters between questions, with its event for halftime or overtime."""
    if not brk:
        leave_break(st)
        return
    st.periods = {**st.periods, "break": brk, "timeout": None}
    if brk == Break.HALFTIME:
        st.periods = {**st.periods, "half": 2}
        ev.append(Halftime(2, timeouts_left(st), score_table(st)).event())
    elif brk == Break.BEFORE_OVERTIME:
        st.periods = {**st.periods, "overtime": True}
        preset = st.config.preset
        first = st.tossup_index + 1
        ev.append(
            OvertimeStarted(first, preset.overtime_tossups, preset.overtime_bonuses, score_table(st)).event()
        )


def leave_break(st: MatchState) -> None:
    """A tossup starts: the break and its timeout are over."""
    if st.periods.get("break") or st.periods.get("timeout"):
        st.periods = {**st.periods, "break": "", "timeout": None}


def call_timeout(st: MatchState, cmd: CallTimeout, now: float, ev: list[Event]) -> None:
    """Team ``cmd.team_id``'s timeout, between questions only: the next tossup starts no sooner
    than its end (when the match goes on by itself; the moderator's Next may still cut it
    short). Per-half allowances count a timeout at halftime (or in overtime) in the second half.
    Refuses ``unknown_team``, ``bad_phase`` (not between questions, or the match not running,
    paused included) and ``no_timeouts_left``."""
    if st.team(cmd.team_id) is None:
        raise RuleViolation("unknown_team")
    require_running(st)
    if st.phase != Phase.BETWEEN or st.status != MatchStatus.RUNNING:
        raise RuleViolation("bad_phase", "a timeout only between questions")
    left = timeouts_left(st)[str(cmd.team_id)]
    if left <= 0:
        per = st.config.preset.timeouts_per
        raise RuleViolation("no_timeouts_left", f"this team has no timeout left this {per}")
    length = float(st.config.preset.timeout_seconds)
    ends_at = now + length
    before = st.between_deadline
    if st.between_deadline is not None:
        st.between_deadline = max(st.between_deadline, ends_at)
    called = {
        "team_id": cmd.team_id,
        "after": st.tossup_index,
        "half": half(st),
        "at": now,
        "ends_at": ends_at,
        "before": before,
    }
    current = {"team_id": cmd.team_id, "length": length, "ends_at": ends_at}
    st.periods = {**st.periods, "timeouts": [*st.periods.get("timeouts", []), called], "timeout": current}
    ev.append(TimeoutCalled(cmd.team_id, length, ends_at, left - 1, st.between_deadline).event())


def undo_timeout(st: MatchState, now: float, ev: list[Event]) -> None:
    """Take back the newest timeout of this break (a moderator's mis-click), until the next tossup
    starts (its countdown running or over, paused or not): its team gets it back; the timeout
    called before it this break (another team's), if any, is the running one again; the next
    tossup is due when it was before the undone timeout, or now if that has passed (never later
    than it is due now: a pace changed meanwhile stands). Refuses ``bad_phase`` (the match not
    running, or not between questions) and ``no_timeout`` (none called this break, or the next
    tossup has started)."""
    if st.status != MatchStatus.RUNNING or st.phase != Phase.BETWEEN:
        raise RuleViolation("bad_phase", "a timeout is undone only between questions, before the next tossup")
    records = list(st.periods.get("timeouts", []))
    if st.periods.get("timeout") is None or not records or records[-1]["after"] != st.tossup_index:
        raise RuleViolation("no_timeout", "no timeout to undo: none was called since the last tossup")
    undone = records.pop()
    earlier = [r for r in records if r["after"] == st.tossup_index]
    current = None
    if earlier:
        last = earlier[-1]
        length = float(st.config.preset.timeout_seconds)
        current = {"team_id": last["team_id"], "length": length, "ends_at": last["ends_at"]}
    st.periods = {**st.periods, "timeouts": records, "timeout": current}
    before = undone.get("before")
    if before is not None and st.between_deadline is not None:
        reference = st.paused_at if st.paused and st.paused_at is not None else now
        st.between_deadline = min(st.between_deadline, max(before, reference))
    team_id = undone["team_id"]
    left = timeouts_left(st)[str(team_id)]
    ev.append(TimeoutUndone(team_id, left, timeout_view(st), st.between_deadline).event())
