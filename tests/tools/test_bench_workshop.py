"""tools.bench_workshop's ADVSCORE of played tossups (no trained model): a tossup raced by humans and
bots becomes the responses irt.pipeline fits, the fit puts the side that answers on the right side of
ADVSCORE, and the predictor's figures match a hand-computed toy and the libraries' own."""

from __future__ import annotations

import random

import numpy as np
import pytest
from scipy.stats import pointbiserialr
from sklearn.metrics import roc_auc_score

from irt.pipeline import DEFAULT_SETTINGS
from irt.races import race_responses
from tools.bench_workshop import fit_advscore, predictor_metrics, race, room_responses


def test_a_race_ends_at_the_first_right_buzz() -> None:
    # bot 0 and human 3 both right on word 5: the tie is the earlier subject's (bots come first)
    buzzes = [(5, True), None, (3, False), (5, True), (8, True)]
    assert race(buzzes) == [(True, 5), (False, None), (False, 3), (False, None), (False, None)]
    # a dead tossup: every planned buzz is made, all wrong
    assert race([(2, False), None, (9, False)]) == [(False, 2), (False, None), (False, 9)]


def test_room_responses_are_what_the_censored_fit_reads() -> None:
    rooms = [
        ([(5, True), None, (3, False), (5, True), (8, True)], 10),
        ([(2, False), None, None, None, (9, False)], 10),
    ]
    subjects, items, races, correct, read = room_responses(rooms)
    assert subjects.tolist() == [0, 1, 2, 3, 4] * 2 and items.tolist() == [0] * 5 + [1] * 5
    assert races.tolist() == items.tolist() and correct.tolist() == [1, 0, 0, 0, 0, 0, 0, 0, 0, 0]
    resp = race_responses(races, correct, read, "censored")
    # the right buzz at word 5 of 10 (0.6 read); the silent ones censored there; the neg and the
    # dead tossup's subjects observed (no race point)
    np.testing.assert_array_equal(resp.at[:5], [0.6, 0.6, np.nan, 0.6, 0.6])
    assert np.isnan(resp.at[5:]).all() and resp.keep.all()
    with pytest.raises(ValueError, match="same subjects"):
        room_responses([([None], 10), ([None, None], 10)])
    with pytest.raises(ValueError, match="outside"):
        room_responses([([(10, True)], 10)])


def _rooms(human_right: float, bot_right: float, seed: int = 3) -> list[tuple[list, int]]:
    """40 tossups of 100 words, 2 bots then 8 humans of varied strength, each right with its rate
    at a random word of the second half, else silent."""
    rng = random.Random(seed)
    rates = [bot_right] * 2 + [human_right * (0.5 + k / 14) for k in range(8)]
    return [
        ([(rng.randrange(50, 100), True) if rng.random() < r else None for r in rates], 100)
        for _ in range(40)
    ]


@pytest.mark.parametrize(("human_right", "bot_right", "sign"), [(0.8, 0.15, 1), (0.15, 0.8, -1)])
def test_the_side_that_answers_more_sets_the_sign_of_advscore(human_right, bot_right, sign) -> None:
    is_human = np.array([False] * 2 + [True] * 8)
    model, result = fit_advscore(*room_responses(_rooms(human_right, bot_right)), is_human, DEFAULT_SETTINGS)
    assert result.delta_reason is None and np.isfinite(result.advscore).all()
    assert np.sign(model.skill_[is_human].mean() - model.skill_[~is_human].mean()) == sign
    assert (np.sign(result.advscore) == sign).all()


def test_predictor_metrics_on_a_hand_computed_toy() -> None:
    predicted = [True, True, True, True, False, False, False, False]
    score = [0.3, 0.2, 0.6, -0.1, 0.4, 0.1, -0.3, -0.2]  # target (> 0): TP 3, FP 1, FN 2, TN 2
    m = predictor_metrics(predicted, score, 0.0, resamples=500, seed=1)
    assert (m["n"], m["base_rate"], m["predicted_rate"]) == (8, 5 / 8, 1 / 2)
    assert m["precision"] == pytest.approx(3 / 4) and m["recall"] == pytest.approx(3 / 5)
    assert m["accuracy"] == pytest.approx(5 / 8) and m["majority_accuracy"] == pytest.approx(5 / 8)
    assert m["auc"] == pytest.approx(0.5 * (1 + 3 / 5 - 1 / 3))
    assert m["auc"] == pytest.approx(roc_auc_score(np.array(score) > 0, predicted))
    assert m["point_biserial"] == pytest.approx(pointbiserialr(predicted, score).statistic)
    assert (
        m["auc_ci"][0] <= m["auc"] <= m["auc_ci"][1] and m["r_ci"][0] <= m["point_biserial"] <= m["r_ci"][1]
    )
    assert predictor_metrics(predicted, score, 0.0, resamples=500, seed=1) == m  # seeded


def test_predictor_metrics_with_one_class_leave_the_auc_undefined() -> None:
    m = predictor_metrics([True, False, True], [0.2, 0.1, 0.4], 0.0, resamples=200)
    assert m["base_rate"] == 1.0 and m["precision"] == 1.0 and m["recall"] == pytest.approx(2 / 3)
    assert m["auc"] is None and m["auc_ci"] is None
    assert m["point_biserial"] == pytest.approx(pointbiserialr([1, 0, 1], [0.2, 0.1, 0.4]).statistic)
    with pytest.raises(ValueError):
        predictor_metrics([], [], 0.0)
