"""Corrections: undo the last ruling, adjust points, mark and resolve protests, replay a tossup."""

from __future__ import annotations

from dataclasses import replace
from typing import Any

from competition.vocabulary import Ruling

from .commands import Adjust, Event, Protest, RuleViolation
from .events import BonusWithdrawn, PointsAdjusted, TossupReplayed
from .flow import start_tossup
from .guards import require_running, score_table
from .proposals import close_proposals
from .records import Adjustment, BonusRuling, ProtestNote, Resolution, RulingRecord, TossupRuling
from .state import BONUS_PHASES, MatchState
from .tossup import buzz_lost


def undo(st: MatchState, now: float, ev: list[Event]) -> None:
    """Reverse the newest ruling not yet undone. A wrong buzz on the live tossup makes its team
    eligible again; the correct buzz whose bonus is being read takes the bonus with it (its parts,
    newer, are undone first): the match goes to between questions."""
    position = next((i for i in range(len(st.history) - 1, -1, -1) if not st.history[i].undone), None)
    if position is None:
        raise RuleViolation("nothing_to_undo")
    entry = _mark_undone(st, position)
    t = st.tossup
    if (
        isinstance(entry, TossupRuling)
        and entry.ruling != Ruling.CORRECT
        and t is not None
        and t.index == entry.tossup_index
        and t.outcome is None
    ):
        if entry.team_id in t.locked_teams:
            t.locked_teams.remove(entry.team_id)
        t.neg_given = any(
            isinstance(h, TossupRuling) and h.tossup_index == t.index and not h.undone and h.points < 0
            for h in st.history
        )
    withdraw = (
        isinstance(entry, TossupRuling)
        and entry.ruling == Ruling.CORRECT
        and st.bonus is not None
        and st.phase in BONUS_PHASES
        and t is not None
        and t.index == entry.tossup_index
    )
    withdrawn = st.bonus if withdraw else None
    if withdrawn is not None:
        st.bonus = None
        st.phase = "between"
        st.between_deadline = now + st.config.between_questions if st.config.auto_advance else None
    ev.append(Event("ruling_undone", undone_data(st, entry, position)))
    if withdrawn is not None:
        ev.append(BonusWithdrawn(withdrawn.bonus_id, withdrawn.team_id).event())


def _mark_undone(st: MatchState, position: int) -> RulingRecord:
    """Mark the ruling at ``position`` in the history undone and take its points back."""
    st.history[position] = entry = replace(st.history[position], undone=True)
    st.scores[str(entry.team_id)] -= entry.points
    return entry


def undone_data(st: MatchState, entry: RulingRecord, history_index: int) -> dict[str, Any]:
    """``history_index``: the position of the reversed ruling in the match history."""
    data: dict[str, Any] = {
        "history_index": history_index,
        "question_id": entry.question_id if isinstance(entry, TossupRuling) else None,
        "player_id": entry.player_id,
        "team_id": entry.team_id,
        "points_reversed": entry.points,
        "scores": score_table(st),
    }
    if isinstance(entry, BonusRuling):
        data.update(bonus_id=entry.bonus_id, part=entry.part)
    return data


def adjust(st: MatchState, cmd: Adjust, now: float, ev: list[Event]) -> None:
    if st.team(cmd.team_id) is None:
        raise RuleViolation("unknown_team")
    if not isinstance(cmd.points, int) or isinstance(cmd.points, bool):
        raise RuleViolation("bad_value", "points must be an integer")
    position = None
    if cmd.protest_id is not None:
        position = next((i for i, p in enumerate(st.protests) if p.protest_id == cmd.protest_id), None)
        if position is None or st.protests[position].status != "open":
            raise RuleViolation("unknown_protest", f"no open protest {cmd.protest_id}")
    st.scores[str(cmd.team_id)] += cmd.points
    st.adjustments.append(Adjustment(cmd.team_id, cmd.points, cmd.reason, now, cmd.protest_id))
    adjusted = PointsAdjusted(cmd.team_id, cmd.points, cmd.reason, score_table(st), cmd.protest_id)
    ev.append(adjusted.event())
    if position is None:
        return
    resolution = Resolution(cmd.team_id, cmd.points, now)
    st.protests[position] = protest = replace(st.protests[position], status="resolved", resolution=resolution)
    ev.append(Event("protest_resolved", {**protest.to_dict(), "scores": score_table(st)}))


def mark_protest(st: MatchState, cmd: Protest, now: float, ev: list[Event]) -> None:
    if st.status == "lobby":
        raise RuleViolation("not_live", "nothing to protest before the match starts")
    if cmd.team_id is not None and st.team(cmd.team_id) is None:
        raise RuleViolation("unknown_team")
    question_id = cmd.question_id
    if question_id is None and st.tossup is not None:
        question_id = st.tossup.question_id
    if question_id is not None and all(q.question_id != question_id for q in st.tossups):
        raise RuleViolation("wrong_question", f"question {question_id} is not in this match")
    protest = ProtestNote(len(st.protests) + 1, cmd.team_id, question_id, cmd.reason, now)
    st.protests.append(protest)
    ev.append(Event("protest_marked", protest.to_dict()))


def replay_tossup(st: MatchState, now: float, ev: list[Event]) -> None:
    """Reverse every ruling on the current (or last finished) tossup and on its bonus, newest
    first, each as a ``ruling_undone`` (so the buzz log follows), then read it again from its
    first word with every team eligible. The next bonus in the packet is used if it is answered."""
    require_running(st)
    t = st.tossup
    if t is None:
        raise RuleViolation("bad_phase", "no tossup to replay")
    for c in [*t.candidates, *t.held]:
        ev.append(buzz_lost(t.question_id, c.player_id, "tossup_ended"))
    close_proposals(st, t.proposals, "tossup_ended", None, ev)
    if t.buzz is not None:  # a buzz still being answered is voided, as if ruled and undone
        ev.append(
            Event(
                "ruling_undone",
                {
                    "question_id": t.question_id,
                    "player_id": t.buzz.player_id,
                    "team_id": t.buzz.team_id,
                    "points_reversed": 0,
                    "scores": score_table(st),
                    "reason": "tossup_replayed",
                    "history_index": None,  # never ruled: nothing in the history to mark
                },
            )
        )
    for position in range(len(st.history) - 1, -1, -1):
        entry = st.history[position]
        if entry.undone or entry.tossup_index != t.index:
            continue
        entry = _mark_undone(st, position)
        ev.append(Event("ruling_undone", {**undone_data(st, entry, position), "reason": "tossup_replayed"}))
    ev.append(TossupReplayed(t.question_id, t.index, score_table(st)).event())
    start_tossup(st, t.index, now, ev)
