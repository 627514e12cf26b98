"""The reference bot's learned buzzer (buzzer.bots.buzzmodel): first buzzes, threshold choice and
calibration on hand-made and synthetic cases."""

from __future__ import annotations

import numpy as np
import pytest

from buzzer.bots.buzzmodel import (
    FEATURES,
    BuzzModel,
    PrefixScores,
    choose_threshold,
    feature_rows,
    first_buzzes,
)
from irt.botmetrics import expected_calibration_error, reliability


def test_first_buzz_is_the_first_prefix_over_the_threshold_per_tossup() -> None:
    groups = np.array([0, 0, 0, 1, 1, 2])
    confidence = np.array([0.1, 0.9, 0.95, 0.2, 0.3, 0.99])
    assert first_buzzes(confidence, groups, 0.9).tolist() == [1, -1, 5]
    assert first_buzzes(confidence, groups, 0.95).tolist() == [2, -1, 5]
    # Row 1 is too early (e.g. before the minimum tokens): the buzz moves to row 2.
    eligible = np.array([True, False, True, True, True, True])
    assert first_buzzes(confidence, groups, 0.9, eligible).tolist() == [2, -1, 5]


def test_threshold_is_the_lowest_with_the_target_precision() -> None:
    # Four tossups of two prefixes. At 0.5 every tossup buzzes on its first prefix: 2 of 4 right.
    # At 0.7 tossups 0, 1, 2 buzz (rows 0, 3, 5): 2 of 3 right. At 0.9 tossups 0 and 1 (rows 0, 3): 2 of 2.
    groups = np.array([0, 0, 1, 1, 2, 2, 3, 3])
    confidence = np.array([0.95, 0.99, 0.6, 0.92, 0.6, 0.75, 0.6, 0.6])
    correct = np.array([True, True, False, True, True, False, False, False])
    grid = (0.5, 0.7, 0.9)
    assert choose_threshold(confidence, correct, groups, target_precision=0.5, grid=grid, min_buzzes=1) == (
        0.5,
        0.5,
        1.0,
    )
    t, precision, frequency = choose_threshold(
        confidence, correct, groups, target_precision=0.6, grid=grid, min_buzzes=1
    )
    assert (t, frequency) == (0.7, 0.75) and precision == pytest.approx(2 / 3)
    assert choose_threshold(confidence, correct, groups, target_precision=0.9, grid=grid, min_buzzes=1) == (
        0.9,
        1.0,
        0.5,
    )
    # Too few buzzes at 0.9 to trust it: the most precise threshold with enough buzzes is the fallback.
    t, precision, _ = choose_threshold(
        confidence, correct, groups, target_precision=0.9, grid=grid, min_buzzes=3
    )
    assert t == 0.7 and precision == pytest.approx(2 / 3)
    with pytest.raises(ValueError, match="no prefixes"):
        choose_threshold(np.array([]), np.array([]), np.array([]), target_precision=0.8)


def scores(n: int, rng: np.random.Generator) -> PrefixScores:
    top1 = rng.uniform(0.0, 0.6, n)
    return PrefixScores(
        top1=top1,
        top2=top1 * rng.uniform(0.3, 1.0, n),
        seen=rng.integers(1, 120, n).astype(float),
        token_count=np.full(n, 120.0),
        class_size=rng.integers(1, 30, n).astype(float),
        category_match=rng.choice([0.0, 0.5, 1.0], n),
        mentioned=np.zeros(n),
        category=rng.integers(-1, 3, n),
    )


def truth(s: PrefixScores) -> np.ndarray:
    """The synthetic world: a guess is right with probability σ(12·margin − 2 + 1.5·category_match)."""
    return 1.0 / (1.0 + np.exp(-(12.0 * (s.top1 - s.top2) - 2.0 + 1.5 * s.category_match)))


def test_feature_rows_put_numeric_features_then_category_indicators() -> None:
    s = scores(5, np.random.default_rng(0))
    x = feature_rows(s, 3)
    assert x.shape == (5, len(FEATURES) + 3)
    assert np.allclose(x[:, FEATURES.index("margin")], s.top1 - s.top2)
    assert np.allclose(x[:, FEATURES.index("fraction")], s.seen / 120.0)
    indicators = x[:, len(FEATURES) :]
    for row, category in zip(indicators, s.category, strict=True):
        assert row.sum() == (0 if category < 0 else 1) and (category < 0 or row[category] == 1)


def test_fitted_confidence_is_calibrated_on_fresh_prefixes() -> None:
    rng = np.random.default_rng(1)
    train = scores(20_000, rng)
    right = rng.random(20_000) < truth(train)
    groups = np.repeat(np.arange(2_000), 10)
    model = BuzzModel.fit(train, right, groups, ["lit", "sci", "hist"], target_precision=0.8, seed=1)

    test = scores(20_000, rng)
    outcome = rng.random(20_000) < truth(test)
    confidence = model.confidence(test)
    assert confidence.min() >= 0.0 and confidence.max() <= 1.0
    ece = expected_calibration_error(
        reliability(list(zip(confidence.tolist(), outcome.tolist(), strict=True)))
    )
    assert ece is not None and ece < 0.03
    # The confidence ranks prefixes as the truth does.
    assert np.corrcoef(confidence, truth(test))[0, 1] > 0.9
    assert model.category_index("SCI ") == 1 and model.category_index("Trash") == -1


def test_fitted_threshold_keeps_its_precision_on_fresh_tossups() -> None:
    rng = np.random.default_rng(2)
    n = 30_000
    train = scores(n, rng)
    groups = np.repeat(np.arange(n // 10), 10)
    model = BuzzModel.fit(train, rng.random(n) < truth(train), groups, [], target_precision=0.8, seed=2)
    assert model.fit_report["precision"] >= 0.8 and model.threshold < 0.99

    test = scores(n, rng)
    outcome = rng.random(n) < truth(test)
    buzzes = first_buzzes(model.confidence(test), groups, model.threshold)
    buzzes = buzzes[buzzes >= 0]
    assert len(buzzes) > 100
    assert outcome[buzzes].mean() >= 0.75


def test_fit_needs_right_and_wrong_guesses() -> None:
    s = scores(40, np.random.default_rng(3))
    with pytest.raises(ValueError, match="both right and wrong"):
        BuzzModel.fit(s, np.ones(40, dtype=bool), np.repeat(np.arange(4), 10), [])


def test_numpy_confidence_equals_scikit_learn() -> None:
    rng = np.random.default_rng(4)
    train = scores(4_000, rng)
    groups = np.repeat(np.arange(400), 10)
    model = BuzzModel.fit(train, rng.random(4_000) < truth(train), groups, ["lit", "sci"], seed=4)
    test = scores(500, rng)
    x = model.scaler.transform(feature_rows(test, 2))
    expected = model.isotonic.predict(model.logistic.predict_proba(x)[:, 1])
    assert np.allclose(model.confidence(test), expected)
