"""A buzz the moderator missed, added on review (``AddBuzz``): scored as the live rules would
have (power, neg, neg after a neg, after the end), one ``buzz_added`` with who and why, every view
follows; refusals change nothing. And a review that changes a neg scores the tossup's later
wrong buzzes again (``ruling_reviewed`` with the ruling unchanged)."""

from __future__ import annotations

from competition.game import AddBuzz, Answer, End, EventName, Next, ReviewRuling, Rule, Start, Substitute
from competition.game.review import RESCORED

from .support import HUMAN_A, HUMAN_A2, HUMAN_B, T0, TEAM_A, TEAM_B, Driver, make_state, started
from .test_tossup import Q0, buzz_won, refused
from .test_view_property import check_views_agree

WHY = "the moderator missed the buzz"


def apply_checked(d: Driver, cmd, now: float) -> list:
    before = d.state
    events = d.do(cmd, now)
    check_views_agree(before, d.state, events)
    return [e for e in events if e.event != EventName.WORDS]  # tossup 1 is being read meanwhile


def scores(a: int, b: int) -> dict[str, int]:
    return {str(TEAM_A): a, str(TEAM_B): b}


def dead_first(d: Driver) -> float:
    """Tossup 0 read out and dead (nobody buzzed); tossup 1 started. Returns the time."""
    d.run_until(T0 + 60)
    assert d.state.tossup.outcome == "dead" and d.state.history == []
    d.do(Next(), T0 + 61)
    assert d.state.tossup_index == 1
    return T0 + 62


def negged_twice(d: Driver) -> float:
    """Tossup 0: ann negs on word 2 (-5), bea is wrong on word 5 (0: no neg after a neg); dead;
    tossup 1 started."""
    buzz_won(d, HUMAN_A, 2, T0 + 2.5)
    d.do(Answer(HUMAN_A, Q0, "no", "reject"), T0 + 2.6)
    d.do(Rule("reject"), T0 + 2.7)
    buzz_won(d, HUMAN_B, 5, T0 + 5.5)
    d.do(Answer(HUMAN_B, Q0, "no", "reject"), T0 + 5.6)
    d.do(Rule("reject"), T0 + 5.7)
    assert d.state.tossup.outcome == "dead" and d.state.scores == scores(-5, 0)
    d.do(Next(), T0 + 10)
    return T0 + 11


def test_a_correct_buzz_added_to_a_dead_tossup_scores_power_and_names_who_and_why():
    d = started(auto_advance=False, with_bot=False)
    now = dead_first(d)
    events = apply_checked(d, AddBuzz(0, HUMAN_A, "correct", WHY, 2, by="organiser:td"), now)
    assert [e.event for e in events] == [EventName.BUZZ_ADDED]
    assert events[0].data == {
        "history_index": 0,
        "tossup_index": 0,
        "question_id": Q0,
        "player_id": HUMAN_A,
        "team_id": TEAM_A,
        "ruling": "correct",
        "points": 15,  # before the power mark (word 4)
        "token_index": 2,
        "token_count": len(d.state.tossups[0].tokens),
        "fully_read": False,
        "at": now,
        "reason": WHY,
        "by": "organiser:td",
        "scores": scores(15, 0),
    }
    # no bonus: none was read; the match goes on where it was
    assert d.state.tossup_index == 1 and d.state.bonus is None and len(d.state.history) == 1


def test_added_buzzes_score_tens_negs_and_no_neg_after_the_end():
    d = started(auto_advance=False, with_bot=False)
    now = dead_first(d)
    apply_checked(d, AddBuzz(0, HUMAN_B, "wrong", WHY, 6), now)
    assert d.state.history[-1].points == -5 and d.state.scores == scores(0, -5)
    apply_checked(d, AddBuzz(0, HUMAN_A2, "wrong", WHY), now + 1)  # after the end, after a neg
    assert d.state.history[-1].points == 0 and d.state.history[-1].fully_read
    d2 = started(auto_advance=False, with_bot=False)
    apply_checked(d2, AddBuzz(0, HUMAN_A, "correct", WHY, 7), dead_first(d2))
    assert d2.state.scores == scores(10, 0)


def test_an_added_neg_before_a_standing_neg_takes_that_neg_back():
    d = started(auto_advance=False, with_bot=False)
    now = dead_first(d)
    apply_checked(d, AddBuzz(0, HUMAN_B, "wrong", WHY, 6), now)
    events = apply_checked(d, AddBuzz(0, HUMAN_A, "wrong", WHY, 3), now + 1)
    assert [e.event for e in events] == [EventName.BUZZ_ADDED, EventName.RULING_REVIEWED]
    assert events[0].data["points"] == -5
    rescored = events[1].data
    assert (rescored["history_index"], rescored["ruling_before"], rescored["ruling"]) == (0, "wrong", "wrong")
    assert (rescored["points_before"], rescored["points"]) == (-5, 0)
    assert rescored["reason"] == RESCORED + WHY
    assert d.state.scores == scores(-5, 0) and [h.points for h in d.state.history] == [0, -5]


def test_a_review_of_a_neg_scores_the_later_wrong_buzz_again():
    d = started(auto_advance=False, with_bot=False)
    now = negged_twice(d)
    events = apply_checked(d, ReviewRuling(0, "ann was not interrupting", ruling="no_penalty"), now)
    assert [e.event for e in events] == [EventName.RULING_REVIEWED, EventName.RULING_REVIEWED]
    assert events[1].data["history_index"] == 1 and events[1].data["points"] == -5
    assert events[1].data["scores"] == scores(0, -5) == d.state.scores
    # and back: bea's wrong answer is again no neg
    events = apply_checked(d, ReviewRuling(0, "it was a neg after all", ruling="wrong"), now + 1)
    assert [e.data["points"] for e in events] == [-5, 0] and d.state.scores == scores(-5, 0)


def test_bad_added_buzzes_change_nothing():
    d = started(auto_advance=False, with_bot=False)
    assert refused(d, AddBuzz(0, HUMAN_A, "correct", WHY, 2), T0 + 1) == "not_correctable"  # being read
    now = dead_first(d)
    assert refused(d, AddBuzz(1, HUMAN_A, "correct", WHY, 2), now) == "not_correctable"  # being read
    assert refused(d, AddBuzz(2, HUMAN_A, "correct", WHY, 2), now) == "not_correctable"  # not yet
    assert refused(d, AddBuzz(-1, HUMAN_A, "correct", WHY, 2), now) == "not_correctable"
    assert refused(d, AddBuzz(True, HUMAN_A, "correct", WHY, 2), now) == "not_correctable"
    assert refused(d, AddBuzz(0, 999, "correct", WHY, 2), now) == "unknown_player"
    assert refused(d, AddBuzz(0, HUMAN_A, "timeout", WHY, 2), now) == "bad_value"
    assert refused(d, AddBuzz(0, HUMAN_A, "correct", "  ", 2), now) == "bad_value"
    assert refused(d, AddBuzz(0, HUMAN_A, "correct", WHY, 99), now) == "bad_value"
    assert refused(d, AddBuzz(0, HUMAN_A, "correct", WHY, -1), now) == "bad_value"
    assert refused(Driver(make_state()), AddBuzz(0, HUMAN_A, "correct", WHY, 2), T0) == "not_live"
    # the same command twice: the second is refused, the first stands once
    apply_checked(d, AddBuzz(0, HUMAN_A, "wrong", WHY, 2), now)
    assert refused(d, AddBuzz(0, HUMAN_A, "wrong", WHY, 2), now + 1) == "team_already_buzzed"
    assert refused(d, AddBuzz(0, HUMAN_A2, "correct", WHY, 8), now + 1) == "team_already_buzzed"
    apply_checked(d, AddBuzz(0, HUMAN_B, "correct", WHY, 8), now + 1)
    assert d.state.scores == scores(-5, 10) and len(d.state.history) == 2
    assert refused(d, AddBuzz(0, HUMAN_B, "correct", WHY, 8), now + 2) == "team_already_buzzed"


def test_an_answered_tossup_and_a_benched_seat_are_refused():
    st = make_state(preset="naqt", auto_advance=False, with_bot=False)
    d = Driver(st)
    d.do(Substitute(TEAM_A, player_out=HUMAN_A2), T0 - 1)
    d.do(Start(), T0)
    now = dead_first(d)
    assert refused(d, AddBuzz(0, HUMAN_A2, "correct", WHY, 2), now) == "benched"
    apply_checked(d, AddBuzz(0, HUMAN_A, "correct", WHY, 2), now)
    assert refused(d, AddBuzz(0, HUMAN_B, "wrong", WHY, 1), now + 1) == "not_correctable"


def test_after_the_end_a_buzz_is_still_added_even_on_the_tossup_cut_off():
    d = started(auto_advance=False, with_bot=False)
    now = dead_first(d)
    d.do(End(), now)
    apply_checked(d, AddBuzz(0, HUMAN_B, "correct", WHY, 5), now + 1)
    apply_checked(d, AddBuzz(1, HUMAN_A, "correct", WHY, 0), now + 2)  # read when the match ended
    assert d.state.scores == scores(15, 10)
