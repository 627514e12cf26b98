"""ADVSCORE: human-grounded adversarialness of items from a fitted 2PL model (pure NumPy).

Implements /work/shared/reference/ADVSCORE.md, i.e. Sung, Gor, Fleisig, Mondal, Boyd-Graber (2025)
Eqs. 2–10 as the authors' released code (``comp_advscore.py``) computes them; checked against their
outputs to 1e-6 per item. Parameters are in the paper's parameterisation p = σ(γ(β − θ)); the
authors' slope-intercept form σ(β·a − d) converts with a = γ, d = γθ (see ``from_slope_intercept``).
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
from numpy.typing import ArrayLike, NDArray

FloatArray = NDArray[np.float64]
BoolArray = NDArray[np.bool_]

#: Integration range of the test information function (authors' fixed grid, Eq. 8).
TIF_RANGE = (-5.0, 5.0)


def _sigmoid(z: FloatArray) -> FloatArray:
    return 0.5 * (1.0 + np.tanh(0.5 * z))


def from_slope_intercept(slope: ArrayLike, intercept: ArrayLike) -> tuple[FloatArray, FloatArray]:
    """(a, d) of σ(β·a − d) → (difficulty θ = d/a, discriminability γ = a), arrays (n_items,)."""
    a = np.asarray(slope, dtype=float)
    return np.asarray(intercept, dtype=float) / a, a


def iif(theta_grid: ArrayLike, difficulty: ArrayLike, discriminability: ArrayLike) -> FloatArray:
    """Item information IIF_j(t) = γ_j² p_j(t)(1 − p_j(t)), p_j(t) = σ(γ_j(t − θ_j)) (Eqs. 6–7).

    theta_grid (n_grid,) skills in logits; difficulty, discriminability (n_items,).
    Returns ndarray (n_grid, n_items).
    """
    t = np.asarray(theta_grid, dtype=float)[:, None]
    gamma = np.asarray(discriminability, dtype=float)[None, :]
    p = _sigmoid(gamma * (t - np.asarray(difficulty, dtype=float)[None, :]))
    return gamma**2 * p * (1.0 - p)


def tif(
    difficulty: ArrayLike, discriminability: ArrayLike, bounds: tuple[float, float] = TIF_RANGE
) -> FloatArray:
    """Per-item information integrated over skill: ∫ IIF_j(t) dt on ``bounds`` (Eq. 8), closed form
    γ_j[σ(γ_j(hi − θ_j)) − σ(γ_j(lo − θ_j))]. Arrays (n_items,) → (n_items,)."""
    theta = np.asarray(difficulty, dtype=float)
    gamma = np.asarray(discriminability, dtype=float)
    lo, hi = bounds
    return gamma * (_sigmoid(gamma * (hi - theta)) - _sigmoid(gamma * (lo - theta)))


def mean_response_curve(
    theta_grid: ArrayLike, difficulty: ArrayLike, discriminability: ArrayLike
) -> FloatArray:
    """Expected proportion correct of a subject of skill t over the items (test characteristic curve
    divided by the number of items): mean_j σ(γ_j(t − θ_j)). theta_grid (n_grid,) → (n_grid,)."""
    t = np.asarray(theta_grid, dtype=float)[:, None]
    gamma = np.asarray(discriminability, dtype=float)[None, :]
    return _sigmoid(gamma * (t - np.asarray(difficulty, dtype=float)[None, :])).mean(axis=1)


def item_scores(
    difficulty: ArrayLike,
    discriminability: ArrayLike,
    skill_h0: float,
    skill_m0: float,
    delta: ArrayLike,
) -> tuple[FloatArray, FloatArray, FloatArray, FloatArray]:
    """Per-item (μ, κ, ADVSCORE, TIF) from representative skills and a given δ.

    μ_j = σ(γ_j(β*_H0 − θ_j)) − σ(γ_j(β*_M0 − θ_j)) (Eq. 3); κ_j = 1 − exp(−TIF_j) (Eq. 9);
    ADVSCORE_j = μ_j/(1 + δ_j)·(1 + κ_j) (Eq. 10). difficulty, discriminability, delta (n_items,)
    (delta may be a scalar); skills in logits. NaN δ gives NaN ADVSCORE.
    """
    theta = np.asarray(difficulty, dtype=float)
    gamma = np.asarray(discriminability, dtype=float)
    mu = _sigmoid(gamma * (skill_h0 - theta)) - _sigmoid(gamma * (skill_m0 - theta))
    info = tif(theta, gamma)
    kappa = 1.0 - np.exp(-info)
    adv = mu / (1.0 + np.asarray(delta, dtype=float)) * (1.0 + kappa)
    return mu, kappa, adv, info


def dataset_means(
    mu: ArrayLike, kappa: ArrayLike, delta: ArrayLike, advscore: ArrayLike, items: ArrayLike | None = None
) -> dict[str, float]:
    """Dataset (packet, writer, event) aggregates: plain means over the selected items of μ, κ, δ and
    ADVSCORE (ADVSCORE_D = mean of per-item ADVSCOREs, ADVSCORE.md §3). ``items`` is an optional bool
    mask (n_items,) or index array, e.g. to leave out flagged questions. NaN entries are skipped;
    a quantity that is NaN for every selected item (δ and ADVSCORE when H(1) is empty) stays NaN.
    Raises ValueError if no item is selected."""
    out: dict[str, float] = {}
    for name, values in (("mu", mu), ("kappa", kappa), ("delta", delta), ("advscore", advscore)):
        arr = np.asarray(values, dtype=float)
        if items is not None:
            arr = arr[np.asarray(items)]
        if arr.size == 0:
            raise ValueError("no items selected for the dataset aggregate")
        finite = arr[~np.isnan(arr)]
        out[name] = float(finite.mean()) if finite.size else float("nan")
    return out


@dataclass(frozen=True)
class AdvScoreResult:
    """Per-item ADVSCORE components (arrays (n_items,)) and the groups behind them.

    h0, m0, h1 : bool masks (n_subjects,) of H(0), M(0), H(1).
    skill_h0, skill_m0 : representative skills β*_H0, β*_M0 (group mean skills, Eq. 2).
    delta_reason : why δ (and so ADVSCORE) is NaN, or None when defined.
    """

    mu: FloatArray
    delta: FloatArray
    kappa: FloatArray
    advscore: FloatArray
    tif: FloatArray
    h0: BoolArray
    m0: BoolArray
    h1: BoolArray
    skill_h0: float
    skill_m0: float
    experts: bool
    delta_reason: str | None

    def dataset(self, items: ArrayLike | None = None) -> dict[str, float]:
        """{mu, kappa, delta, advscore} means over ``items`` (default all); see ``dataset_means``."""
        return dataset_means(self.mu, self.kappa, self.delta, self.advscore, items)


def advscore(
    skill: ArrayLike,
    is_human: ArrayLike,
    difficulty: ArrayLike,
    discriminability: ArrayLike,
    *,
    experts: bool = False,
) -> AdvScoreResult:
    """ADVSCORE of every item (Sung et al. 2025, Eqs. 2–10; ADVSCORE.md §2–3).

    skill (n_subjects,) β in logits; is_human bool (n_subjects,) (False = model/bot);
    difficulty θ, discriminability γ (n_items,).
    Groups: H(0)/M(0) = humans/models with β ≥ their pool's mean; H(1) = humans with
    β > mean + 1 sd (ddof 0). With ``experts=True`` (manually identified experts, paper footnote 5,
    used for TrickMe) all humans form both H(0) and H(1).
    δ_j = mean absolute deviation of p_ij over H(1) (Eq. 5); NaN when H(1) is empty.
    Raises ValueError for mismatched shapes or when there is no human or no model.
    """
    beta = np.asarray(skill, dtype=float)
    human = np.asarray(is_human, dtype=bool)
    theta = np.asarray(difficulty, dtype=float)
    gamma = np.asarray(discriminability, dtype=float)
    if beta.ndim != 1 or beta.shape != human.shape:
        raise ValueError(f"skill {beta.shape} and is_human {human.shape} must be 1-D of the same length")
    if theta.ndim != 1 or theta.shape != gamma.shape:
        raise ValueError(f"difficulty {theta.shape} and discriminability {gamma.shape} must match")
    if not human.any() or human.all():
        raise ValueError("ADVSCORE needs at least one human and one model")

    human_skill, model_skill = beta[human], beta[~human]
    m0 = ~human & (beta >= model_skill.mean())
    if experts:
        h0 = h1 = human.copy()
    else:
        h0 = human & (beta >= human_skill.mean())
        h1 = human & (beta > human_skill.mean() + human_skill.std())
    skill_h0, skill_m0 = float(beta[h0].mean()), float(beta[m0].mean())

    if h1.any():
        p = _sigmoid(gamma[None, :] * (beta[h1][:, None] - theta[None, :]))
        delta = np.abs(p - p.mean(axis=0)).mean(axis=0)
        reason = None
    else:
        delta = np.full(theta.shape, np.nan)
        reason = "H(1) is empty: no human has skill above mean + 1 sd"

    mu, kappa, adv, info = item_scores(theta, gamma, skill_h0, skill_m0, delta)
    return AdvScoreResult(mu, delta, kappa, adv, info, h0, m0, h1, skill_h0, skill_m0, experts, reason)
