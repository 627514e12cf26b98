"""The QANTA bot metrics (irt.botmetrics) on cases computed by hand, by the definitions of the
leaderboard's metric code (qanta-challenge/ai_workflows ``metrics/qb_metrics.py``)."""

from __future__ import annotations

import pytest

from irt.botmetrics import (
    HumanBuzz,
    PrefixAnswer,
    TossupRun,
    evaluate,
    expected_calibration_error,
    fraction_token,
    reliability,
    score_tossup,
)


def answer(token: int, confidence: float = 0.5, buzz: bool = False, correct: bool = False) -> PrefixAnswer:
    return PrefixAnswer(token, "g" if correct else "x", confidence, buzz, correct)


def right(token: int) -> HumanBuzz:
    return HumanBuzz(token, True)


def neg(token: int) -> HumanBuzz:
    return HumanBuzz(token, False)


def test_one_tossup_against_one_human() -> None:
    def points(buzz: tuple[int, bool] | None, human: HumanBuzz) -> tuple[float, float, float | None]:
        o = score_tossup("t", 10, buzz, [human])
        return o.expected_score, o.raw_score, o.human_win_rate_strict

    assert points((4, True), right(5)) == (1.0, 1.0, 1.0)
    assert points((4, False), right(5)) == (-0.5, -0.5, 0.0)
    assert points((4, True), right(4)) == (1.0, 1.0, 1.0)  # a same-token tie goes to the bot
    assert points((4, False), right(4)) == (-0.5, -0.5, 0.0)  # and so does the neg
    assert points((4, True), right(3)) == (0.0, 1.0, 0.0)  # the human was first: h = 1
    assert points((4, False), neg(3)) == (-0.5, -0.5, 0.0)  # a human neg protects nothing
    assert points(None, right(5)) == (0.0, 0.0, 0.0)
    # The last token (9 of 10): the raw score gives a wrong buzz 0, the expected score still −0.5.
    assert points((9, False), neg(2)) == (-0.5, 0.0, 0.0)
    assert points((9, True), right(9)) == (1.0, 1.0, 1.0)


def test_soft_win_rate_counts_a_human_neg_before_the_bot() -> None:
    # Bot right on 4; humans: neg on 3 (earlier: a soft win only), right on 6 (beaten), right on 2.
    o = score_tossup("t", 10, (4, True), [neg(3), right(6), right(2)])
    assert (o.human_buzzes, o.humans_correct_before, o.h) == (3, 1, pytest.approx(1 / 3))
    assert o.expected_score == pytest.approx(2 / 3)
    assert o.human_win_rate_strict == pytest.approx(1 / 3)
    assert o.human_win_rate == pytest.approx(2 / 3)
    # Without a buzz the bot still "wins" against the human who negged (soft), never strictly.
    silent = score_tossup("t", 10, None, [neg(3), right(6)])
    assert (silent.human_win_rate, silent.human_win_rate_strict) == (0.5, 0.0)
    assert (silent.h, silent.expected_score) == (0.5, 0.0)  # every correct human counts in h
    # No human buzz at all: h = 0 and no win rate.
    alone = score_tossup("t", 10, (4, False), [])
    assert (alone.h, alone.expected_score, alone.human_win_rate, alone.human_win_rate_strict) == (
        0.0,
        -0.5,
        None,
        None,
    )


def test_six_tossups_by_hand_one_of_each_class() -> None:
    runs = [
        # A: right on token 3 (its earliest right answer: best-buzz); humans right 5, right 2, neg on
        # 3 (a tie: the bot's), one never buzzed. h = 1/3 → 2/3; strict and soft 2/3.
        TossupRun("A", 10, (answer(1, 0.2), answer(3, 0.9, True, True)), (right(5), right(2), neg(3), None)),
        # B: wrong on the last token 9, never right (hopeless); a neg on 4 and a right tie on 9.
        # raw 0, h = 0 → −0.5; soft 1/2 (the earlier neg), strict 0.
        TossupRun("B", 10, (answer(0, 0.1), answer(9, 0.7, True)), (neg(4), (9, True))),
        # C: never buzzed, right on 2 (never-buzzed): 0; soft 1/2 (the neg), strict 0.
        TossupRun("C", 4, (answer(2, 0.3, correct=True),), (neg(1), right(3))),
        # D: right on 2 without buzzing, wrong buzz on 5 (late-buzz, gap 3); a right human tie on 5:
        # h = 0 → −0.5.
        TossupRun(
            "D",
            8,
            (answer(2, 0.4, correct=True), answer(5, 0.6, True), answer(7, 1.0, correct=True)),
            (right(5),),
        ),
        # E: wrong buzz on 1, right only from 4 (premature, gap −3); the human right on 0: h = 1 → 0.
        TossupRun("E", 6, (answer(1, 0.6, True), answer(4, 0.8, correct=True)), (right(0),)),
        # F: right on the last token 4 (best-buzz, raw 1); its only human never buzzed: h = 0 → 1.
        TossupRun("F", 5, (answer(4, 0.5, True, True),), (None,)),
    ]
    m = evaluate(runs)
    by = {o.tossup: o for o in m.outcomes}
    assert [by[k].kind for k in "ABCDEF"] == [
        "best-buzz",
        "hopeless",
        "never-buzzed",
        "late-buzz",
        "premature",
        "best-buzz",
    ]
    assert [by[k].gap for k in "ABCDEF"] == [0, None, None, 3, -3, 0]
    assert [by[k].earliest_correct for k in "ABCDEF"] == [3, None, 2, 2, 4, 4]
    assert [by[k].raw_score for k in "ABCDEF"] == [1.0, 0.0, 0.0, -0.5, -0.5, 1.0]
    assert [by[k].expected_score for k in "ABCDEF"] == pytest.approx([2 / 3, -0.5, 0.0, -0.5, 0.0, 1.0])
    assert [by[k].human_buzzes for k in "ABCDEF"] == [3, 2, 2, 1, 1, 0]
    assert [by[k].human_win_rate_strict for k in "ABCDEF"] == pytest.approx([2 / 3, 0, 0, 0, 0, None])
    assert [by[k].human_win_rate for k in "ABCDEF"] == pytest.approx([2 / 3, 0.5, 0.5, 0, 0, None])

    assert (m.tossups, m.buzzes, m.correct_buzzes) == (6, 5, 2)
    assert m.raw_score == pytest.approx((1 + 0 + 0 - 0.5 - 0.5 + 1) / 6)
    assert m.expected_score == pytest.approx((2 / 3 - 0.5 + 0 - 0.5 + 0 + 1) / 6)
    assert m.buzz_frequency == pytest.approx(5 / 6)
    assert m.buzz_accuracy == pytest.approx(2 / 6)  # correct buzzes over all tossups
    assert m.buzz_precision == pytest.approx(2 / 5)  # correct buzzes over buzzes
    assert m.mean_buzz_position == pytest.approx((4 + 10 + 6 + 2 + 5) / 5)  # tokens read at the buzz
    assert m.mean_buzz_fraction == pytest.approx((4 / 10 + 10 / 10 + 6 / 8 + 2 / 6 + 5 / 5) / 5)
    assert (m.mean_gap_pos, m.mean_gap_neg) == (pytest.approx((0 + 3 + 0) / 3), -3.0)
    assert m.outcome_classes == {
        "hopeless": 1,
        "never-buzzed": 1,
        "best-buzz": 2,
        "late-buzz": 1,
        "premature": 1,
    }
    assert m.tossups_with_human_buzzes == 5  # F's human never buzzed
    assert m.human_win_rate_strict == pytest.approx((2 / 3) / 5)
    assert m.human_win_rate == pytest.approx((2 / 3 + 0.5 + 0.5) / 5)
    data = m.to_dict()
    assert data["outcome_classes"]["best-buzz"] == 2 and data["outcomes"][0]["kind"] == "best-buzz"


def test_calibration_and_accuracy_by_fraction_by_hand() -> None:
    runs = [
        # right on token 3 vs humans right on 5 (beaten) and right on 2 (first): h = 1/2
        TossupRun("a", 10, (answer(1, 0.2), answer(3, 0.9, True, True)), (5, 2)),
        # wrong on the last token, the human never buzzed: −0.5 expected, 0 raw
        TossupRun("b", 10, (answer(0, 0.1), answer(9, 0.7, True)), (None,)),
        # no buzz: 0
        TossupRun("c", 4, (answer(2, 0.3),), (None,)),
        # a tie with the human on token 6 goes to the bot: 1; answers after the first buzz never buzz
        TossupRun("d", 8, (answer(6, 0.95, True, True), answer(7, 1.0, True)), (6,)),
    ]
    m = evaluate(runs, bins=2, fractions=(0.5, 1.0))
    assert [o.expected_score for o in m.outcomes] == [0.5, -0.5, 0.0, 1.0]
    assert [o.raw_score for o in m.outcomes] == [1.0, 0.0, 0.0, 1.0]
    assert m.buzzes == 3 and m.correct_buzzes == 2
    # Confidences 0.2 .9 .1 .7 .3 .95 1.0 → bin [0, .5): .2 .1 .3 (0 right); [.5, 1]: .9 .7 .95 1.0 (2 right)
    low, high = m.reliability
    assert (low.count, high.count) == (3, 4)
    assert low.confidence == pytest.approx(0.2) and low.accuracy == 0.0
    assert high.confidence == pytest.approx(0.8875) and high.accuracy == pytest.approx(0.5)
    assert m.ece == pytest.approx(3 / 7 * 0.2 + 4 / 7 * 0.3875)
    assert m.answers == 7
    # Half read: a → token 4 (right), b → token 4 (answer at 0: wrong), c → token 1 (none), d → token 3 (none)
    assert m.accuracy_by_fraction == [(0.5, 0.25), (1.0, 0.25)]  # at the end d's last answer is wrong
    assert m.to_dict()["accuracy_by_fraction"][0] == {"fraction": 0.5, "accuracy": 0.25}


def test_no_buzz_anywhere() -> None:
    m = evaluate([TossupRun("a", 3, (), (1,))])
    assert (m.buzzes, m.buzz_precision, m.mean_buzz_position, m.ece, m.answers) == (0, None, None, None, 0)
    assert (m.expected_score, m.raw_score, m.buzz_accuracy) == (0.0, 0.0, 0.0)
    assert (m.human_win_rate, m.human_win_rate_strict) == (0.0, 0.0)
    assert (m.mean_gap_pos, m.mean_gap_neg) == (None, None)
    assert m.outcome_classes["hopeless"] == 1


def test_calibration_bins_edges() -> None:
    bins = reliability([(0.0, False), (0.5, True), (1.0, True), (0.999, False)], bins=2)
    assert [b.count for b in bins] == [1, 3]  # 0.5 opens the upper bin; 1.0 belongs to the last
    assert expected_calibration_error(bins) == pytest.approx(1 / 4 * 0 + 3 / 4 * abs(2 / 3 - (2.499 / 3)))


def test_fraction_token() -> None:
    assert fraction_token(0.1, 10) == 0
    assert fraction_token(0.5, 10) == 4
    assert fraction_token(1.0, 10) == 9
    assert fraction_token(0.5, 3) == 1  # 1.5 tokens read → the second token is showing
    assert fraction_token(0.01, 3) == 0


@pytest.mark.parametrize(
    "make",
    [
        lambda: TossupRun("a", 0, (), (None,)),
        lambda: TossupRun("a", 5, (), ()),
        lambda: TossupRun("a", 5, (answer(5),), (None,)),
        lambda: TossupRun("a", 5, (answer(2), answer(2)), (None,)),
        lambda: TossupRun("a", 5, (answer(1, confidence=1.5),), (None,)),
        lambda: TossupRun("a", 5, (), (7,)),
        lambda: TossupRun("a", 5, (), (HumanBuzz(5, False),)),
        lambda: TossupRun("a", 5, (), ("3",)),  # type: ignore[arg-type]
        lambda: TossupRun("a", 5, (), (True,)),
        lambda: evaluate([]),
        lambda: evaluate([TossupRun("a", 5, (), (None,))], fractions=(0.0,)),
        lambda: reliability([], bins=0),
    ],
)
def test_bad_input_is_refused(make) -> None:
    with pytest.raises(ValueError):
        make()
