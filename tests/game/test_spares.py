"""A thrown-out question replaced by a spare (``ReplaceQuestion``): the thrown-out tossup or bonus
stays in the log and the state, its rulings reversed; the spare is read in its place; every view
follows its events (``check_views_agree``); a missing or used spare changes nothing."""

from __future__ import annotations

from competition.game import (
    Answer,
    BonusAnswer,
    BonusPartSpec,
    BonusSpec,
    Buzz,
    Pause,
    ReplaceQuestion,
    Rule,
    Start,
    tokenize_tossup,
    view,
)

from .support import HUMAN_A, HUMAN_B, T0, TEAM_A, TEAM_B, TEAM_BOT, Driver, make_state, started
from .test_tossup import Q0, buzz_won, refused
from .test_view_property import check_views_agree

SPARE = tokenize_tossup(900, "spare one two three (*) four five six seven", "SPARE-LINE", "History")
SPARE_BONUS = BonusSpec(990, "spare lead-in", [BonusPartSpec(f"spare part {k}", f"SB-{k}") for k in range(3)])
WHY = "the reader misread the power clue"


def replace(d: Driver, cmd: ReplaceQuestion, now: float) -> list:
    before = d.state
    events = d.do(cmd, now)
    check_views_agree(before, d.state, events)
    return events


def scores(a: int, b: int, bot: int = 0) -> dict[str, int]:
    return {str(TEAM_A): a, str(TEAM_B): b, str(TEAM_BOT): bot}


def answered_with_bonus_part(d: Driver) -> None:
    """Team A gets tossup 0 on word 6 (10 points) and part 0 of its bonus (10 more)."""
    buzz_won(d, HUMAN_A, 6, T0 + 6.5)
    d.do(Answer(HUMAN_A, Q0, "x", "accept"), T0 + 6.7)
    d.do(Rule("accept"), T0 + 6.8)
    d.do(BonusAnswer(HUMAN_A, 500, 0, "y", "accept"), T0 + 7)
    d.do(Rule("accept"), T0 + 7.1)
    assert d.state.scores == scores(20, 0)


def test_a_thrown_out_tossup_is_reversed_and_the_spare_is_read_next():
    d = started()
    answered_with_bonus_part(d)
    events = replace(d, ReplaceQuestion("tossup", WHY, SPARE), T0 + 8)
    names = [e.event for e in events]
    assert names[:3] == ["ruling_undone", "ruling_undone", "question_replaced"]
    assert names[3:5] == ["tossup_started", "tossup_answer"]
    assert all(e.data["reason"] == "question_replaced" for e in events[:2])
    assert events[2].data == {
        "kind": "tossup",
        "tossup_index": 0,
        "question_id": Q0,
        "bonus_id": None,
        "team_id": None,
        "spare_id": 900,
        "reason": WHY,
        "scores": scores(0, 0),
    }
    st = d.state
    assert st.scores == scores(0, 0)
    assert [h.undone for h in st.history] == [True, True]  # kept, marked reversed
    assert [q.question_id for q in st.tossups] == [100, 900, 101, 102]  # the match reads one more
    assert st.tossup_index == 1 and st.tossup.question_id == 900 and st.phase == "reading"
    assert st.replaced == [
        {
            "kind": "tossup",
            "tossup_index": 0,
            "question_id": Q0,
            "bonus_id": None,
            "spare_id": 900,
            "reason": WHY,
        }
    ]
    assert view(st, "all")["replaced"] == st.replaced
    # No one is locked out of the spare; a buzz on it scores as usual.
    d.run_until(T0 + 10.5)
    d.do(Buzz(HUMAN_B, 900, 2, corrected_press_at=T0 + 10.5), T0 + 10.5)
    d.run_until(T0 + 11)
    d.do(Answer(HUMAN_B, 900, "spare", "accept"), T0 + 11.1)
    d.do(Rule("accept"), T0 + 11.2)
    assert d.state.scores == scores(0, 15)  # a power: word 2 is before the mark
    assert d.state.bonus.bonus_id == 501  # bonus 500 was heard: the next one is read


def test_a_tossup_being_answered_is_thrown_out_with_its_pending_buzz():
    d = started()
    buzz_won(d, HUMAN_A, 3, T0 + 3.5)
    events = replace(d, ReplaceQuestion("tossup", WHY, SPARE), T0 + 4)
    undone = events[0]
    assert undone.event == "ruling_undone" and undone.data["history_index"] is None
    assert d.state.tossup.question_id == 900 and d.state.tossup.buzz is None


def test_a_bonus_is_replaced_for_the_same_team_and_its_parts_reversed():
    d = started()
    answered_with_bonus_part(d)
    events = replace(d, ReplaceQuestion("bonus", "a part had two answers", SPARE_BONUS), T0 + 8)
    names = [e.event for e in events]
    assert names[:3] == ["ruling_undone", "question_replaced", "bonus_started"]
    assert events[1].data["bonus_id"] == 500 and events[1].data["team_id"] == TEAM_A
    st = d.state
    assert st.scores == scores(10, 0)  # the tossup stands; the bonus part does not
    assert st.bonus.bonus_id == 990 and st.bonus.team_id == TEAM_A and st.phase == "bonus"
    assert [b.bonus_id for b in st.bonuses] == [500, 990, 501, 502]
    d.do(BonusAnswer(HUMAN_A, 990, 0, "z", "accept"), T0 + 9)
    d.do(Rule("accept"), T0 + 9.1)
    assert d.state.scores == scores(20, 0)


def test_a_just_finished_bonus_is_replaced_between_questions():
    d = started(auto_advance=False)
    answered_with_bonus_part(d)
    d.run_until(T0 + 40)  # the two other parts time out
    assert d.state.phase == "between" and d.state.bonus is not None
    replace(d, ReplaceQuestion("bonus", "misread", SPARE_BONUS), T0 + 41)
    assert d.state.phase == "bonus" and d.state.bonus.bonus_id == 990


def test_replacing_without_a_spare_or_with_a_used_one_changes_nothing():
    d = started()
    answered_with_bonus_part(d)
    assert refused(d, ReplaceQuestion("tossup", WHY, None), T0 + 8) == "no_spares"
    assert refused(d, ReplaceQuestion("bonus", WHY, None), T0 + 8) == "no_spares"
    used = tokenize_tossup(101, "a b c", "A")
    assert refused(d, ReplaceQuestion("tossup", WHY, used), T0 + 8) == "bad_value"
    assert refused(d, ReplaceQuestion("tossup", WHY, SPARE_BONUS), T0 + 8) == "bad_value"
    assert refused(d, ReplaceQuestion("tossup", "  ", SPARE), T0 + 8) == "bad_value"
    assert refused(d, ReplaceQuestion("question", WHY, SPARE), T0 + 8) == "bad_value"
    d.do(Pause(), T0 + 8)
    assert refused(d, ReplaceQuestion("tossup", WHY, SPARE), T0 + 8.5) == "paused"


def test_no_bonus_to_replace_and_not_before_the_start():
    lobby = Driver(make_state())
    assert refused(lobby, ReplaceQuestion("tossup", WHY, SPARE), T0) == "not_live"
    d = Driver(make_state())
    d.do(Start(), T0)
    assert refused(d, ReplaceQuestion("bonus", WHY, SPARE_BONUS), T0 + 1) == "bad_phase"
