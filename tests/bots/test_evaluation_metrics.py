"""The QANTA bot metrics (irt.botmetrics) on cases computed by hand."""

from __future__ import annotations

import pytest

from irt.botmetrics import (
    PrefixAnswer,
    TossupRun,
    buzz_outcome,
    evaluate,
    expected_calibration_error,
    fraction_token,
    reliability,
)


def answer(token: int, confidence: float = 0.5, buzz: bool = False, correct: bool = False) -> PrefixAnswer:
    return PrefixAnswer(token, "g" if correct else "x", confidence, buzz, correct)


def test_outcome_before_tie_after_and_no_buzz() -> None:
    right, wrong = answer(4, buzz=True, correct=True), answer(4, buzz=True)
    assert buzz_outcome(right, 5) == (1.0, True)
    assert buzz_outcome(wrong, 5) == (-0.5, False)
    assert buzz_outcome(right, 4) == (0.0, False)  # a tie goes to the human
    assert buzz_outcome(wrong, 4) == (0.0, False)  # and costs the bot nothing
    assert buzz_outcome(right, 3) == (0.0, False)
    assert buzz_outcome(right, None) == (1.0, True)  # no human got it
    assert buzz_outcome(None, 5) == (0.0, False)


def test_four_tossups_by_hand() -> None:
    runs = [
        # correct buzz at token 3 vs humans at 5 (beaten) and 2 (first): (1 + 0) / 2
        TossupRun("a", 10, (answer(1, 0.2), answer(3, 0.9, True, True)), (5, 2)),
        # wrong buzz at the last token, the human never got it: −0.5
        TossupRun("b", 10, (answer(0, 0.1), answer(9, 0.7, True)), (None,)),
        # no buzz: 0, even against a human who never got it
        TossupRun("c", 4, (answer(2, 0.3),), (None,)),
        # a tie with the human on token 6: 0; later answers after the first buzz are ignored
        TossupRun("d", 8, (answer(6, 0.95, True, True), answer(7, 1.0, True)), (6,)),
    ]
    m = evaluate(runs, bins=2, fractions=(0.5, 1.0))
    assert m.tossups == 4 and m.buzzes == 3 and m.correct_buzzes == 2
    assert m.expected_score == pytest.approx((0.5 - 0.5 + 0 + 0) / 4)
    assert m.buzz_frequency == pytest.approx(3 / 4)
    assert m.buzz_precision == pytest.approx(2 / 3)
    assert m.mean_buzz_position == pytest.approx((3 + 9 + 6) / 3)
    assert m.mean_buzz_fraction == pytest.approx((4 / 10 + 10 / 10 + 7 / 8) / 3)
    assert m.win_rate == pytest.approx((0.5 + 0 + 0 + 0) / 4)
    # Confidences 0.2 .9 .1 .7 .3 .95 1.0 → bin [0, .5): .2 .1 .3 (0 right); [.5, 1]: .9 .7 .95 1.0 (2 right)
    low, high = m.reliability
    assert (low.count, high.count) == (3, 4)
    assert low.confidence == pytest.approx(0.2) and low.accuracy == 0.0
    assert high.confidence == pytest.approx(0.8875) and high.accuracy == pytest.approx(0.5)
    assert m.ece == pytest.approx(3 / 7 * 0.2 + 4 / 7 * 0.3875)
    assert m.answers == 7
    # Half read: a → token 4 (right), b → token 4 (answer at 0: wrong), c → token 1 (none), d → token 3 (none)
    assert m.accuracy_by_fraction == [(0.5, 0.25), (1.0, 0.25)]  # at the end d's last answer is wrong
    assert [o.score for o in m.outcomes] == [0.5, -0.5, 0.0, 0.0]
    assert m.to_dict()["accuracy_by_fraction"][0] == {"fraction": 0.5, "accuracy": 0.25}


def test_no_buzz_anywhere() -> None:
    m = evaluate([TossupRun("a", 3, (), (1,))])
    assert (m.buzzes, m.buzz_precision, m.mean_buzz_position, m.ece, m.answers) == (0, None, None, None, 0)
    assert m.expected_score == 0.0 and m.win_rate == 0.0


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
        lambda: evaluate([]),
        lambda: evaluate([TossupRun("a", 5, (), (None,))], fractions=(0.0,)),
        lambda: reliability([], bins=0),
    ],
)
def test_bad_input_is_refused(make) -> None:
    with pytest.raises(ValueError):
        make()
