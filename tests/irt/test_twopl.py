import numpy as np
import pytest
from sklearn.exceptions import ConvergenceWarning, NotFittedError

from irt.twopl import TwoPL


def simulate(n_subjects, n_items, coverage, seed):
    rng = np.random.default_rng(seed)
    skill = rng.normal(size=n_subjects)
    difficulty = rng.normal(size=n_items)
    disc = rng.gamma(2.0, 1.0, size=n_items)
    s, i = np.nonzero(rng.random((n_subjects, n_items)) < coverage)
    p = 1 / (1 + np.exp(-disc[i] * (skill[s] - difficulty[i])))
    y = (rng.random(len(p)) < p).astype(int)
    return skill, difficulty, disc, s, i, y


def r(x, y):
    return np.corrcoef(x, y)[0, 1]


@pytest.mark.parametrize(("n_s", "n_i", "coverage", "seed"), [(400, 200, 0.5, 0), (200, 200, 1.0, 1)])
def test_parameter_recovery(n_s, n_i, coverage, seed):
    skill, difficulty, disc, s, i, y = simulate(n_s, n_i, coverage, seed)
    m = TwoPL().fit(s, i, y, n_s, n_i)
    assert r(m.skill_, skill) > 0.95
    assert r(m.difficulty_, difficulty) > 0.95
    assert r(m.discriminability_, disc) > 0.8
    assert np.all(m.discriminability_ > 0)
    assert m.n_iter_ < m.max_iter


def test_map_is_a_stationary_point_of_the_log_posterior():
    _, _, _, s, i, y = simulate(60, 40, 0.6, 2)
    m = TwoPL(tol=1e-9, max_iter=1000).fit(s, i, y)
    beta, theta, gamma = m.skill_, m.difficulty_, m.discriminability_
    e = y - m.predict_proba(s, i)
    d = beta[s] - theta[i]
    # Gradients of log posterior with N(0,1), N(0,1), Gamma(2,1) priors.
    g_beta = np.bincount(s, gamma[i] * e, 60) - beta
    g_theta = -np.bincount(i, gamma[i] * e, 40) - theta
    g_gamma = np.bincount(i, e * d, 40) + 1 / gamma - 1
    assert np.abs(np.concatenate([g_beta, g_theta, g_gamma])).max() < 1e-5
    # Any perturbation lowers the objective.
    loglik = lambda b, t, g: -np.logaddexp(0, np.where(y > 0, -1, 1) * g[i] * (b[s] - t[i])).sum()  # noqa: E731
    base = loglik(beta, theta, gamma) - 0.5 * (beta @ beta + theta @ theta) + np.sum(np.log(gamma) - gamma)
    rng = np.random.default_rng(0)
    for _ in range(5):
        b2, t2 = beta + 0.01 * rng.normal(size=60), theta + 0.01 * rng.normal(size=40)
        g2 = gamma * np.exp(0.01 * rng.normal(size=40))
        other = loglik(b2, t2, g2) - 0.5 * (b2 @ b2 + t2 @ t2) + np.sum(np.log(g2) - g2)
        assert other < base


def log_posterior_gradient(m, s, i, y, n_s, n_i):
    """∂ log posterior / ∂(β, θ, γ) at m's parameters, written out independently of the fitter."""
    (mu_b, sd_b), (mu_t, sd_t), (k, scale) = m.skill_prior, m.difficulty_prior, m.discriminability_prior
    beta, theta, gamma = m.skill_, m.difficulty_, m.discriminability_
    d = beta[s] - theta[i]
    e = y - 1 / (1 + np.exp(-gamma[i] * d))
    g_beta = np.bincount(s, gamma[i] * e, n_s) - (beta - mu_b) / sd_b**2
    g_theta = -np.bincount(i, gamma[i] * e, n_i) - (theta - mu_t) / sd_t**2
    g_gamma = np.bincount(i, e * d, n_i) + (k - 1) / gamma - 1 / scale
    return np.concatenate([g_beta, g_theta, g_gamma])


@pytest.mark.parametrize(
    ("priors", "extremes"),
    [
        ({}, False),
        (
            {
                "skill_prior": (0.3, 1.5),
                "difficulty_prior": (-0.5, 0.8),
                "discriminability_prior": (3.0, 0.5),
            },
            True,
        ),
    ],
)
def test_default_fit_stops_at_a_stationary_point(priors, extremes):
    n_s, n_i = 120, 70
    _, _, _, s, i, y = simulate(n_s, n_i, 0.3, 11)
    if extremes:  # an all-right subject, an all-wrong subject and an item nobody gets
        y = y.copy()
        y[s == 0], y[s == 1], y[i == 0] = 1, 0, 0
    m = TwoPL(**priors).fit(s, i, y, n_s, n_i)
    grad = log_posterior_gradient(m, s, i, y, n_s, n_i)
    assert m.n_iter_ < m.max_iter
    assert m.tol == 1e-5  # the default: the returned point is stationary to that precision
    assert np.abs(grad).max() < m.tol
    assert m.max_abs_gradient_ == pytest.approx(np.abs(grad).max(), rel=1e-6, abs=1e-12)


def test_stopping_early_warns_and_reports_the_gradient_it_stopped_at():
    n_s, n_i = 80, 50
    _, _, _, s, i, y = simulate(n_s, n_i, 0.5, 12)
    with pytest.warns(ConvergenceWarning, match="did not converge in 2 sweeps"):
        m = TwoPL(max_iter=2).fit(s, i, y, n_s, n_i)
    grad = np.abs(log_posterior_gradient(m, s, i, y, n_s, n_i)).max()
    assert m.n_iter_ == 2
    assert grad > m.tol
    assert m.max_abs_gradient_ == pytest.approx(grad, rel=1e-6)


def test_fit_is_invariant_to_response_order():
    _, _, _, s, i, y = simulate(150, 80, 0.4, 3)
    a = TwoPL().fit(s, i, y)
    perm = np.random.default_rng(9).permutation(len(y))
    b = TwoPL().fit(s[perm], i[perm], y[perm])
    np.testing.assert_array_equal(a.skill_, b.skill_)
    np.testing.assert_array_equal(a.difficulty_, b.difficulty_)
    np.testing.assert_array_equal(a.discriminability_, b.discriminability_)
    assert a.log_posterior_ == b.log_posterior_


def test_deterministic_and_predict_proba():
    _, _, _, s, i, y = simulate(50, 30, 0.7, 4)
    a, b = TwoPL().fit(s, i, y), TwoPL().fit(s, i, y)
    np.testing.assert_array_equal(a.skill_, b.skill_)
    p = a.predict_proba([0, 1], [2, 3])
    expected = a.discriminability_[[2, 3]] * (a.skill_[[0, 1]] - a.difficulty_[[2, 3]])
    np.testing.assert_allclose(p, 1 / (1 + np.exp(-expected)))


def test_unobserved_subjects_and_items_sit_at_the_prior():
    _, _, _, s, i, y = simulate(40, 30, 0.8, 5)
    m = TwoPL(skill_prior=(0.5, 2.0), difficulty_prior=(-0.3, 1.0), discriminability_prior=(3.0, 0.5))
    m.fit(s, i, y, n_subjects=42, n_items=31)
    assert m.skill_[40:].tolist() == [0.5, 0.5]
    assert m.skill_se_[40:].tolist() == [2.0, 2.0]
    assert m.difficulty_[30] == -0.3
    assert m.discriminability_[30] == 1.0  # Gamma mode (k - 1)·s
    assert np.all(m.skill_se_[:40] < 2.0)


def test_skill_se_shrinks_with_more_responses():
    _, _, _, s, i, y = simulate(100, 200, 1.0, 6)
    few = (i < 20) | (s > 0)
    m = TwoPL().fit(s[few], i[few], y[few], 100, 200)
    assert m.skill_se_[0] > 1.5 * np.median(m.skill_se_[1:])


def test_all_correct_and_all_wrong_subjects_stay_finite():
    _, _, _, s, i, y = simulate(60, 50, 1.0, 7)
    y = y.copy()
    y[s == 0] = 1
    y[s == 1] = 0
    y[i == 0] = 0
    m = TwoPL().fit(s, i, y)
    assert np.all(np.isfinite(m.skill_)) and np.all(np.isfinite(m.difficulty_))
    assert m.skill_[0] == m.skill_.max() and m.skill_[1] == m.skill_.min()
    assert m.difficulty_[0] == m.difficulty_.max()


@pytest.mark.parametrize(
    ("subjects", "items", "correct", "match"),
    [
        ([], [], [], "no responses"),
        ([0, 1], [0], [1, 0], "lengths differ"),
        ([0, 1], [0, 1], [1, 2], "binary"),
        ([0, 1], [0, 1], [1.0, np.nan], "binary"),
        ([0, -1], [0, 1], [1, 0], "non-negative"),
        ([0.5, 1], [0, 1], [1, 0], "integer"),
    ],
)
def test_validation_errors(subjects, items, correct, match):
    with pytest.raises(ValueError, match=match):
        TwoPL().fit(np.asarray(subjects), np.asarray(items), np.asarray(correct))


def test_out_of_range_indexes_and_bad_priors():
    with pytest.raises(ValueError, match="out of range"):
        TwoPL().fit([0, 3], [0, 1], [1, 0], n_subjects=2)
    with pytest.raises(ValueError, match="shape > 1"):
        TwoPL(discriminability_prior=(1.0, 1.0)).fit([0, 1], [0, 1], [1, 0])
    m = TwoPL()
    with pytest.raises(NotFittedError):
        m.predict_proba([0], [0])
    m.fit([0, 1], [0, 1], [True, False])
    with pytest.raises(ValueError, match="out of range"):
        m.predict_proba([2], [0])
