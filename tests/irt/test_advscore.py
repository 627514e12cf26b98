import numpy as np
import pytest
from scipy.integrate import simpson

from irt.advscore import advscore, dataset_means, iif, item_scores, mean_response_curve, tif


def test_tif_closed_form_matches_simpson_integral_of_iif():
    theta, gamma = np.array([-1.0, 0.3, 4.0]), np.array([0.5, 2.0, 3.0])
    grid = np.linspace(-5, 5, 5000)
    np.testing.assert_allclose(tif(theta, gamma), simpson(iif(grid, theta, gamma), x=grid, axis=0), atol=1e-8)


def test_mean_response_curve_is_monotone_and_averages_items():
    grid = np.linspace(-3, 3, 7)
    curve = mean_response_curve(grid, [0.0, 1.0], [1.0, 2.0])
    assert np.all(np.diff(curve) > 0)
    assert curve[3] == pytest.approx((0.5 + 1 / (1 + np.exp(2.0))) / 2)


def test_groups_and_per_item_formulas_by_hand():
    skill = np.array([-1.0, 0.0, 1.0, 2.0, 3.0, -2.0, 0.5, 1.5])
    human = np.array([True] * 5 + [False] * 3)
    res = advscore(skill, human, [0.0, 1.0], [1.0, 2.0])
    # humans: mean 1, sd sqrt(2); H0 = {1, 2, 3} (>= mean), H1 = {3} (> 1 + 1.414)
    assert res.h0.tolist() == [False, False, True, True, True, False, False, False]
    assert res.h1.tolist() == [False, False, False, False, True, False, False, False]
    # models: mean 0, M0 = {0.5, 1.5}
    assert res.skill_h0 == 2.0 and res.skill_m0 == 1.0
    sig = lambda z: 1 / (1 + np.exp(-z))  # noqa: E731
    assert res.mu[1] == pytest.approx(sig(2 * (2 - 1)) - sig(2 * (1 - 1)))
    assert res.delta.tolist() == [0.0, 0.0]  # a single expert cannot disagree
    kappa = 1 - np.exp(-2 * (sig(2 * 4) - sig(2 * -6)))
    assert res.kappa[1] == pytest.approx(kappa)
    assert res.advscore[1] == pytest.approx(res.mu[1] * (1 + kappa))
    assert res.dataset()["advscore"] == pytest.approx(res.advscore.mean())


def test_experts_variant_uses_all_humans():
    skill = np.array([0.0, 1.0, 2.0, 0.5, 0.7])
    human = np.array([True, True, True, False, False])
    res = advscore(skill, human, [0.0], [1.5], experts=True)
    assert res.h0.tolist() == res.h1.tolist() == [True, True, True, False, False]
    assert res.skill_h0 == 1.0
    sig = lambda z: 1 / (1 + np.exp(-z))  # noqa: E731
    p = sig(1.5 * skill[:3])
    assert res.delta[0] == pytest.approx(np.abs(p - p.mean()).mean())


def test_empty_h1_gives_nan_with_reason():
    skill = np.array([1.0, 1.0, 1.0, 0.0, 2.0])
    res = advscore(skill, [True, True, True, False, False], [0.0, 0.5], [1.0, 1.0])
    assert np.isnan(res.delta).all() and np.isnan(res.advscore).all()
    assert "H(1) is empty" in res.delta_reason
    agg = res.dataset()
    assert np.isnan(agg["advscore"]) and np.isfinite(agg["mu"]) and np.isfinite(agg["kappa"])


def test_dataset_means_subset_and_errors():
    agg = dataset_means([1.0, 3.0], [0.1, 0.3], [0.0, 0.0], [2.0, 4.0], items=[False, True])
    assert agg == {"mu": 3.0, "kappa": 0.3, "delta": 0.0, "advscore": 4.0}
    with pytest.raises(ValueError, match="no items"):
        dataset_means([1.0], [0.1], [0.0], [2.0], items=[False])
    with pytest.raises(ValueError, match="one human and one model"):
        advscore([0.0, 1.0], [True, True], [0.0], [1.0])
    with pytest.raises(ValueError, match="same length"):
        advscore([0.0, 1.0], [True], [0.0], [1.0])


def test_item_scores_with_scalar_delta():
    mu, kappa, adv, _ = item_scores([0.0], [1.0], 1.0, 0.0, 0.5)
    assert adv[0] == pytest.approx(mu[0] / 1.5 * (1 + kappa[0]))
