"""The full-scoresheet review (``ReviewRuling``): any earlier tossup buzz or bonus part corrected
after the fact — ruling, seat credited — each as one ``ruling_reviewed`` with who and why; only
points move (the match has gone on); every view follows its events; bad input changes nothing."""

from __future__ import annotations

from competition.game import Answer, BonusAnswer, End, Next, ReviewRuling, Rule, Skip

from .support import HUMAN_A, HUMAN_A2, HUMAN_B, T0, TEAM_A, TEAM_B, TEAM_BOT, Driver, make_state, started
from .test_tossup import Q0, buzz_won, refused
from .test_view_property import check_views_agree

WHY = "the scoresheet review found a misheard answer"


def review(d: Driver, cmd: ReviewRuling, now: float) -> list:
    before = d.state
    events = d.do(cmd, now)
    check_views_agree(before, d.state, events)
    return events


def scores(a: int, b: int, bot: int = 0) -> dict[str, int]:
    return {str(TEAM_A): a, str(TEAM_B): b, str(TEAM_BOT): bot}


def played_two(d: Driver) -> None:
    """Tossup 0: ann negs on word 6 (-5), bea gets it on word 8 (+10) and part 0 of the bonus
    (+10, part 1 wrong, part 2 skipped with the bonus); tossup 1 starts."""
    buzz_won(d, HUMAN_A, 6, T0 + 6.5)
    d.do(Answer(HUMAN_A, Q0, "no", "reject"), T0 + 6.6)
    d.do(Rule("reject"), T0 + 6.7)
    buzz_won(d, HUMAN_B, 8, T0 + 8.5)
    d.do(Answer(HUMAN_B, Q0, "yes", "accept"), T0 + 8.6)
    d.do(Rule("accept"), T0 + 8.7)
    d.do(BonusAnswer(HUMAN_B, 500, 0, "y", "accept"), T0 + 9)
    d.do(Rule("accept"), T0 + 9.1)
    d.do(BonusAnswer(HUMAN_B, 500, 1, "n", "reject"), T0 + 9.2)
    d.do(Rule("reject"), T0 + 9.3)
    d.do(Skip(), T0 + 9.4)
    d.do(Next(), T0 + 9.5)
    assert d.state.tossup_index == 1
    assert d.state.scores == scores(-5, 20)


def test_an_earlier_neg_made_correct_credits_its_team_and_names_who_and_why():
    d = started(auto_advance=False)
    played_two(d)
    events = review(d, ReviewRuling(0, WHY, ruling="correct", by="organiser:td"), T0 + 10)
    assert [e.event for e in events] == ["ruling_reviewed"]
    assert events[0].data == {
        "history_index": 0,
        "tossup_index": 0,
        "question_id": Q0,
        "bonus_id": None,
        "part": None,
        "player_before": HUMAN_A,
        "player_id": HUMAN_A,
        "team_before": TEAM_A,
        "team_id": TEAM_A,
        "ruling_before": "wrong",
        "ruling": "correct",
        "points_before": -5,
        "points": 10,
        "reason": WHY,
        "by": "organiser:td",
        "scores": scores(10, 20),
    }
    assert d.state.history[0].ruling == "correct" and d.state.tossup_index == 1  # the match goes on


def test_a_correct_buzz_made_wrong_takes_its_bonus_parts_back():
    d = started(auto_advance=False)
    played_two(d)
    events = review(d, ReviewRuling(1, WHY, ruling="wrong"), T0 + 10)
    assert [e.event for e in events] == ["ruling_reviewed", "ruling_undone", "ruling_undone"]
    assert events[0].data["points"] == 0  # a wrong answer after the other team's neg is no neg
    assert d.state.scores == scores(-5, 0)
    assert [h.undone for h in d.state.history] == [False, False, True, True]


def test_the_seat_credited_is_corrected_within_a_team_and_across_teams():
    d = started(auto_advance=False)
    played_two(d)
    review(d, ReviewRuling(0, "it was abe who buzzed", player_id=HUMAN_A2), T0 + 10)
    assert d.state.history[0].player_id == HUMAN_A2 and d.state.scores == scores(-5, 20)
    # bea's team already has its buzz on tossup 0: the neg cannot move there
    assert refused(d, ReviewRuling(0, WHY, player_id=HUMAN_B), T0 + 10.5) == "bad_value"


def test_a_bonus_part_is_corrected_on_its_own():
    d = started(auto_advance=False)
    played_two(d)
    events = review(d, ReviewRuling(3, "the part was right", ruling="correct"), T0 + 10)
    assert events[0].data["bonus_id"] == 500 and events[0].data["part"] == 1
    assert d.state.scores == scores(-5, 30)


def test_after_the_end_the_scoresheet_is_still_reviewed():
    d = started(auto_advance=False)
    played_two(d)
    d.do(End(), T0 + 10)
    review(d, ReviewRuling(2, "part 0 was wrong", ruling="wrong"), T0 + 11)
    assert d.state.scores == scores(-5, 10)


def test_bad_reviews_change_nothing():
    d = started(auto_advance=False)
    played_two(d)
    assert refused(d, ReviewRuling(9, WHY, ruling="correct"), T0 + 10) == "not_correctable"
    assert refused(d, ReviewRuling(0, WHY, ruling="wrong"), T0 + 10) == "bad_value"  # nothing changes
    assert refused(d, ReviewRuling(0, WHY, ruling="timeout"), T0 + 10) == "bad_value"
    assert refused(d, ReviewRuling(0, "", ruling="correct"), T0 + 10) == "bad_value"
    assert refused(d, ReviewRuling(0, WHY, player_id=999), T0 + 10) == "unknown_player"
    assert refused(d, ReviewRuling(2, WHY, ruling="correct", player_id=HUMAN_A), T0 + 10) == "bad_value"
    assert refused(d, ReviewRuling(True, WHY, ruling="correct"), T0 + 10) == "not_correctable"
    assert refused(Driver(make_state()), ReviewRuling(0, WHY, ruling="correct"), T0) == "not_live"


def test_the_question_being_played_goes_through_correct_ruling():
    d = started(auto_advance=False)
    buzz_won(d, HUMAN_A, 6, T0 + 6.5)
    d.do(Answer(HUMAN_A, Q0, "no", "reject"), T0 + 6.6)
    d.do(Rule("reject"), T0 + 6.7)
    events = review(d, ReviewRuling(0, WHY, ruling="correct"), T0 + 7)
    assert events[0].event == "ruling_corrected" and d.state.phase == "bonus"
    assert refused(d, ReviewRuling(0, WHY, player_id=HUMAN_A2), T0 + 7.5) == "not_correctable"
