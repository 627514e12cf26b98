"""A ruling corrected after the fact (``CorrectRuling``): the match goes on as if the moderator had
ruled that way — points, the tossup's end, the bonus — and every view follows
(``check_views_agree``); and the pace between questions (``SetPace``, ``Next(after_index)``)."""

from __future__ import annotations

import pytest

from competition.game import (
    Answer,
    BonusAnswer,
    CorrectRuling,
    End,
    Next,
    Pause,
    Resume,
    Rule,
    SetPace,
    Undo,
    apply,
    view,
)
from competition.game.corrections import correctable

from .support import BOT, HUMAN_A, HUMAN_B, T0, TEAM_A, TEAM_B, TEAM_BOT, Driver, started
from .test_tossup import Q0, buzz_won, refused
from .test_view_property import check_views_agree

WHY = "the answer was right: the moderator misheard"


def correct(d: Driver, cmd: CorrectRuling, now: float) -> list:
    """Apply the correction, checking that every audience's view follows its events."""
    before = d.state
    events = d.do(cmd, now)
    check_views_agree(before, d.state, events)
    return events


def scores(a: int, b: int, bot: int = 0) -> dict[str, int]:
    return {str(TEAM_A): a, str(TEAM_B): b, str(TEAM_BOT): bot}


def rejected_neg(d: Driver, token: int = 6) -> None:
    """Team A buzzes on ``token`` with the right answer, the moderator rejects it: a neg."""
    buzz_won(d, HUMAN_A, token, T0 + token + 0.5)
    d.do(Answer(HUMAN_A, Q0, "Magna Carta", "accept"), T0 + token + 0.7)
    d.do(Rule("reject"), T0 + token + 0.8)
    assert d.state.scores == scores(-5, 0)


def test_a_rejected_correct_answer_made_correct_between_questions_gets_its_points_and_bonus():
    """The issue's case: the answer is rejected, the tossup goes dead; the moderator puts it right."""
    d = started()
    rejected_neg(d)
    d.run_until(T0 + 14.5)  # read out at T0+9, dead time over at T0+14
    assert d.state.phase == "between" and d.state.tossup.outcome == "dead"
    events = correct(d, CorrectRuling(0, "correct", WHY), T0 + 15)
    assert [e.event for e in events][:2] == ["ruling_corrected", "bonus_started"]
    assert events[0].data == {
        "history_index": 0,
        "tossup_index": 0,
        "question_id": Q0,
        "bonus_id": None,
        "part": None,
        "player_id": HUMAN_A,
        "team_id": TEAM_A,
        "ruling_before": "wrong",
        "points_before": -5,
        "ruling": "correct",
        "points": 10,  # word 7 is after the power mark
        "reason": WHY,
        "outcome": "answered",
        "scores": scores(10, 0),
    }
    assert d.state.scores == scores(10, 0)
    assert d.state.tossup.outcome == "answered" and d.state.phase == "bonus"
    assert d.state.bonus.team_id == TEAM_A and d.state.between_deadline is None
    assert d.state.history[0].ruling == "correct" and d.state.history[0].points == 10
    # The recap every tablet gets: the buzz stands as correct.
    assert view(d.state, "all")["history"][0]["ruling"] == "correct"


def test_a_neg_made_correct_while_the_tossup_is_read_ends_it_and_loses_the_others_race():
    d = started()
    rejected_neg(d, token=2)  # an early neg: the tossup reads on for the others
    assert d.state.phase == "reading"
    events = [e for e in correct(d, CorrectRuling(0, "correct", WHY), T0 + 3.9) if e.event != "words"]
    assert [e.event for e in events][:3] == ["ruling_corrected", "tossup_ended", "bonus_started"]
    assert events[0].data["outcome"] is None  # ended by the tossup_ended that follows
    assert d.state.scores == scores(15, 0)  # token 2 is before the power mark
    assert d.state.tossup.outcome == "answered" and d.state.bonus.team_id == TEAM_A
    assert refused(d, Answer(HUMAN_B, Q0, "x", "accept"), T0 + 4) == "not_live"


def test_a_correct_buzz_made_wrong_takes_its_bonus_and_the_tossup_is_not_read_on():
    d = started()
    buzz_won(d, HUMAN_A, 2, T0 + 2.5)
    d.do(Answer(HUMAN_A, Q0, "Magna Carta", "accept"), T0 + 2.7)
    d.do(Rule("accept"), T0 + 2.8)
    d.do(BonusAnswer(HUMAN_A, 500, 0, "right", "accept"), T0 + 3)
    d.do(Rule("accept"), T0 + 3.1)
    assert d.state.scores == scores(25, 0) and d.state.phase == "bonus"
    assert correctable(d.state) == [0, 1]
    events = correct(d, CorrectRuling(0, "wrong", "it was the Great Charter's other name"), T0 + 4)
    assert [e.event for e in events] == [
        "ruling_corrected",
        "ruling_undone",
        "bonus_withdrawn",
        "between_questions",
    ]
    assert events[0].data["outcome"] == "dead" and events[0].data["points"] == -5
    assert events[1].data["reason"] == "ruling_corrected" and events[1].data["points_reversed"] == 10
    assert d.state.scores == scores(-5, 0)
    assert d.state.bonus is None and d.state.phase == "between" and d.state.tossup.outcome == "dead"
    assert d.state.history[1].undone
    # Its answer was shown to everyone: the other team does not get to buzz on it.
    assert refused(d, Answer(HUMAN_B, Q0, "x", "accept"), T0 + 4.5) == "not_live"
    assert d.state.between_deadline == pytest.approx(T0 + 6)  # then the next tossup, at the pace


def test_a_bonus_part_corrected_changes_the_bonus_total():
    d = started()
    buzz_won(d, HUMAN_A, 6, T0 + 6.5)
    d.do(Answer(HUMAN_A, Q0, "x", "accept"), T0 + 6.7)
    d.do(Rule("accept"), T0 + 6.8)
    d.do(BonusAnswer(HUMAN_A, 500, 0, "Amazon", "reject"), T0 + 7)
    d.do(Rule("reject"), T0 + 7.1)
    assert d.state.scores == scores(10, 0)
    events = correct(d, CorrectRuling(1, "correct", "Amazonas is on the line"), T0 + 8)
    assert [e.event for e in events] == ["ruling_corrected"]
    assert events[0].data["bonus_id"] == 500 and events[0].data["part"] == 0
    assert d.state.scores == scores(20, 0) and d.state.bonus.points == 10
    assert d.state.bonus.results[0].ruling == "correct"
    assert view(d.state, "player:11")["bonus"]["parts"][0]["result"]["points"] == 10
    assert refused(d, CorrectRuling(1, "no_penalty", "x"), T0 + 8.5) == "bad_value"


def test_after_the_match_moved_on_only_the_points_change():
    d = started()
    rejected_neg(d)
    d.run_until(T0 + 17)  # the next tossup started at T0+16
    assert d.state.tossup_index == 1
    events = correct(d, CorrectRuling(0, "correct", WHY), T0 + 17.5)
    assert [e.event for e in events] == ["ruling_corrected"]
    assert events[0].data["outcome"] is None and d.state.scores == scores(10, 0)
    assert d.state.bonus is None and d.state.phase == "reading"
    d.do(End(), T0 + 18)
    events = correct(d, CorrectRuling(0, "no_penalty", "a protest upheld after the match"), T0 + 19)
    assert [e.event for e in events] == ["ruling_corrected"] and d.state.scores == scores(0, 0)


def test_only_the_newest_tossup_ruling_and_its_bonus_parts_may_be_corrected():
    d = started()
    assert refused(d, CorrectRuling(0, "correct", WHY), T0 + 0.5) == "not_correctable"
    rejected_neg(d, token=2)
    buzz_won(d, HUMAN_B, 4, T0 + 4.5)
    assert refused(d, CorrectRuling(0, "correct", WHY), T0 + 4.6) == "bad_phase"  # B is answering
    d.do(Answer(HUMAN_B, Q0, "y", "reject"), T0 + 4.7)
    d.do(Rule("no_penalty"), T0 + 4.8)
    assert correctable(d.state) == [1]
    assert refused(d, CorrectRuling(0, "correct", WHY), T0 + 5) == "not_correctable"
    assert refused(d, CorrectRuling(1, "no_penalty", WHY), T0 + 5) == "bad_value"  # already so
    assert refused(d, CorrectRuling(1, "timeout", WHY), T0 + 5) == "bad_value"
    assert refused(d, CorrectRuling(1, "correct", "  "), T0 + 5) == "bad_value"
    assert refused(d, CorrectRuling(1, "correct", "x" * 201), T0 + 5) == "bad_value"
    assert refused(d, CorrectRuling(True, "correct", WHY), T0 + 5) == "not_correctable"  # type: ignore[arg-type]


def test_a_correct_buzz_after_an_earlier_neg_scores_as_the_preset_says():
    """B negged first: A's buzz, made wrong, is no second neg (naqt: no neg after a neg)."""
    d = started()
    buzz_won(d, HUMAN_B, 1, T0 + 1.5)
    d.do(Answer(HUMAN_B, Q0, "no", "reject"), T0 + 1.7)
    d.do(Rule("reject"), T0 + 1.8)
    buzz_won(d, HUMAN_A, 3, T0 + 3.5)
    d.do(Answer(HUMAN_A, Q0, "x", "accept"), T0 + 3.7)
    d.do(Rule("accept"), T0 + 3.8)
    assert d.state.config.preset.neg_after_neg is False
    correct(d, CorrectRuling(1, "wrong", "not on the line"), T0 + 4)
    assert d.state.history[1].points == 0 and d.state.scores == scores(0, -5)


def test_undo_after_a_correction_reverses_the_corrected_points():
    d = started()
    rejected_neg(d)
    d.run_until(T0 + 14.5)
    correct(d, CorrectRuling(0, "correct", WHY), T0 + 15)
    d.do(Undo(), T0 + 15.5)  # the bonus had no part ruled: the correct buzz is undone, its bonus goes
    assert d.state.scores == scores(0, 0) and d.state.bonus is None


def test_a_correction_while_paused_starts_the_bonus_when_the_clock_restarts():
    d = started()
    rejected_neg(d)
    d.run_until(T0 + 14.5)
    d.do(Pause(), T0 + 14.6)
    correct(d, CorrectRuling(0, "correct", WHY), T0 + 20)
    assert d.state.bonus.deadline == pytest.approx(T0 + 14.6 + d.state.config.bonus_part_window)
    d.do(Resume(), T0 + 30)  # the part's whole window is still to come
    assert d.state.bonus.deadline == pytest.approx(T0 + 30 + d.state.config.bonus_part_window)


def test_a_bots_correct_buzz_is_deflated_by_its_weight_class():
    d = started(preset="qanta26")
    buzz_won(d, BOT, 6, T0 + 6.5)
    d.do(Answer(BOT, Q0, "x", "accept"), T0 + 6.7)
    d.do(Rule("reject"), T0 + 6.8)
    correct(d, CorrectRuling(0, "correct", WHY), T0 + 7)
    assert d.state.history[0].points == 8  # a mid bot's ten: 10 × 0.8


# -- the pace between questions ---------------------------------------------------------------


def ended_tossup(**config) -> Driver:
    d = started(**config)
    rejected_neg(d, token=8)
    d.run_until(T0 + 14.5)
    assert d.state.phase == "between"
    return d


def test_the_pace_is_a_setting_of_the_running_match():
    d = ended_tossup()
    dead_at = d.state.between_deadline - 2.0  # the tests' pace: 2 s
    assert d.last("between_questions").data == {"next_tossup_at": pytest.approx(dead_at + 2)}
    before = d.state
    events = d.do(SetPace(None), T0 + 15)  # the moderator advances from now on
    check_views_agree(before, d.state, events)
    assert events[-1].data == {"between_questions": None, "next_tossup_at": None}
    assert d.state.next_deadline is None
    d.run_until(T0 + 60)
    assert d.state.tossup_index == 0  # nothing starts by itself
    before = d.state
    events = d.do(SetPace(8), T0 + 60)  # a wait restarts from now
    check_views_agree(before, d.state, events)
    assert events[-1].data == {"between_questions": 8.0, "next_tossup_at": pytest.approx(T0 + 68)}
    assert view(d.state, "all")["next_tossup_at"] == pytest.approx(T0 + 68)
    for bad in (-1, 601, True, float("nan")):
        assert refused(d, SetPace(bad), T0 + 61) == "bad_value"


def test_next_never_races_the_clock():
    d = ended_tossup()
    d.run_until(T0 + 16.5)  # the pace started tossup 2 (2 s after the dead time ended)
    assert d.state.tossup_index == 1 and d.state.phase == "reading"
    assert d.do(Next(after_index=0), T0 + 16.6) == []  # the moderator's late click: nothing happens
    assert d.state.tossup_index == 1
    assert refused(d, Next(), T0 + 16.7) == "bad_phase"  # a Next with no index is still refused
    assert refused(d, Next(after_index=1), T0 + 16.7) == "bad_phase"


def test_a_match_starts_at_its_configured_pace():
    assert started(between_questions=10.0).state.between_questions == 10.0
    assert started(auto_advance=False).state.between_questions is None
    assert apply(started().state, SetPace(3), T0 + 1)[0].between_questions == 3.0
