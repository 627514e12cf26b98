"""Spares: a thrown-out or misread question replaced by a spare question.

The thrown-out tossup (or bonus) stays in the match, its rulings reversed (one ``ruling_undone``
each, reason ``question_replaced``) and listed in ``MatchState.replaced``; the spare is inserted
right after it (a tossup is read next as tossup ``index + 1``, so the match reads one tossup
more; a bonus is heard at once by the same team). The service chooses the spare
(``competition.services.replace_question``); the engine refuses a missing or used one."""

from __future__ import annotations

from collections.abc import Callable

from competition.vocabulary import QuestionKind

from .bonus import start_bonus
from .commands import Event, ReplaceQuestion, RuleViolation
from .corrections import MAX_REASON, mark_undone, undone_data
from .events import EventName, QuestionReplaced
from .flow import start_tossup
from .guards import require_running, score_table
from .proposals import close_proposals
from .records import BonusRuling, RulingRecord
from .specs import BonusSpec, TossupSpec
from .state import MatchState
from .tossup import buzz_lost

REASON = "question_replaced"  # the ``reason`` of the ``ruling_undone`` events it causes


def replace_question(st: MatchState, cmd: ReplaceQuestion, now: float, ev: list[Event]) -> None:
    """Throw out the current (or just finished) tossup or bonus and read ``cmd.spare`` instead.

    Refusals (nothing changes): ``not_live``/``bad_phase``/``paused`` (the match is not running:
    before the start, after the end, paused; no bonus to replace), ``bad_value`` (``kind`` not tossup|bonus, no
    reason or one over :data:`MAX_REASON` characters, a spare of the other kind or already in
    the match), ``no_spares`` (``spare`` None)."""
    require_running(st)
    reason = cmd.reason.strip() if isinstance(cmd.reason, str) else ""
    if not 0 < len(reason) <= MAX_REASON:
        raise RuleViolation("bad_value", f"say why, in 1 to {MAX_REASON} characters")
    if cmd.kind == QuestionKind.TOSSUP:
        _replace_tossup(st, cmd.spare, reason, now, ev)
    elif cmd.kind == QuestionKind.BONUS:
        _replace_bonus(st, cmd.spare, reason, now, ev)
    else:
        raise RuleViolation("bad_value", "kind must be tossup or bonus")


def _replace_tossup(
    st: MatchState, spare: TossupSpec | BonusSpec | None, reason: str, at: float, ev: list[Event]
) -> None:
    t = st.tossup
    if t is None:
        raise RuleViolation("bad_phase", "no tossup to replace")
    if spare is None:
        raise RuleViolation("no_spares", "no spare tossup is left for this match")
    if not isinstance(spare, TossupSpec) or not spare.tokens:
        raise RuleViolation("bad_value", "a tossup is replaced by a spare tossup")
    if any(q.question_id == spare.question_id for q in st.tossups):
        raise RuleViolation("bad_value", f"tossup {spare.question_id} is already in this match")
    for c in [*t.candidates, *t.held]:
        ev.append(buzz_lost(t.question_id, c.player_id, "tossup_ended"))
    close_proposals(st, t.proposals, "tossup_ended", None, ev)
    if t.buzz is not None:  # a buzz still being answered is voided, as ReplayTossup does
        voided = {"question_id": t.question_id, "player_id": t.buzz.player_id, "team_id": t.buzz.team_id}
        ev.append(
            Event(
                EventName.RULING_UNDONE,
                {
                    **voided,
                    "points_reversed": 0,
                    "scores": score_table(st),
                    "reason": REASON,
                    "history_index": None,
                },
            )
        )
    _reverse(st, lambda h: h.tossup_index == t.index, ev)
    st.tossups = [*st.tossups[: t.index + 1], spare, *st.tossups[t.index + 1 :]]
    _record(st, QuestionKind.TOSSUP, t.index, t.question_id, None, None, spare.question_id, reason, ev)
    start_tossup(st, t.index + 1, at, ev)


def _replace_bonus(
    st: MatchState, spare: TossupSpec | BonusSpec | None, reason: str, at: float, ev: list[Event]
) -> None:
    b = st.bonus
    if b is None:
        raise RuleViolation("bad_phase", "no bonus to replace: it is replaced while read or just after")
    if spare is None:
        raise RuleViolation("no_spares", "no spare bonus is left for this match")
    if not isinstance(spare, BonusSpec):
        raise RuleViolation("bad_value", "a bonus is replaced by a spare bonus")
    if any(x.bonus_id == spare.bonus_id for x in st.bonuses):
        raise RuleViolation("bad_value", f"bonus {spare.bonus_id} is already in this match")
    _reverse(st, lambda h: isinstance(h, BonusRuling) and h.bonus_id == b.bonus_id, ev)
    st.bonuses = [*st.bonuses[: st.bonus_index], spare, *st.bonuses[st.bonus_index :]]
    _record(st, QuestionKind.BONUS, st.tossup_index, None, b.bonus_id, b.team_id, spare.bonus_id, reason, ev)
    st.bonus, st.between_deadline = None, None
    start_bonus(st, b.team_id, at, ev)


def _reverse(st: MatchState, thrown_out: Callable[[RulingRecord], bool], ev: list[Event]) -> None:
    """Reverse every standing ruling the predicate ``thrown_out`` selects, newest first."""
    for position in range(len(st.history) - 1, -1, -1):
        entry = st.history[position]
        if entry.undone or not thrown_out(entry):
            continue
        entry = mark_undone(st, position)
        ev.append(Event(EventName.RULING_UNDONE, {**undone_data(st, entry, position), "reason": REASON}))


def _record(
    st: MatchState,
    kind: str,
    tossup_index: int,
    question_id: int | None,
    bonus_id: int | None,
    team_id: int | None,
    spare_id: int,
    reason: str,
    ev: list[Event],
) -> None:
    entry = {
        "kind": kind,
        "tossup_index": tossup_index,
        "question_id": question_id,
        "bonus_id": bonus_id,
        "spare_id": spare_id,
        "reason": reason,
    }
    st.replaced = [*st.replaced, entry]
    replaced = QuestionReplaced(
        kind, tossup_index, question_id, bonus_id, team_id, spare_id, reason, score_table(st)
    )
    ev.append(replaced.event())
