"""Two-parameter logistic (2PL) IRT model fitted by full-batch MAP.

Model (Sung et al. 2025, Eq. 1; ADVSCORE.md §1): the probability that subject i (a human, team or
bot) answers item j (a tossup or bonus part) correctly is

    p_ij = σ(γ_j (β_i − θ_j))        β skill, θ difficulty, γ > 0 discriminability, all in logits

with priors β_i ~ N(μ_β, σ_β²), θ_j ~ N(μ_θ, σ_θ²), γ_j ~ Gamma(k, s) (shape, scale). The estimator
maximises the log posterior in (β, θ, γ) itself (no Jacobian term: the Gamma density is on γ, and the
optimiser's internal slope-intercept coordinates a = γ, c = γθ are only a change of search direction).

Algorithm: alternating block Newton sweeps. Each sweep does one exact 1-D Newton step per subject
(β, items fixed), one 2-D Newton step per item in slope-intercept form (items fixed skills; the
likelihood is concave in (a, c), the θ prior enters through its Gauss-Newton curvature), and then
an exact move along the two gauge directions β → uβ + v, θ → uθ + v, γ → γ/u. The likelihood is
invariant along those directions, only the priors pin them, which is what makes plain alternating
updates crawl; optimising the priors over (u, v) in closed-form statistics removes that slow mode.
Newton steps that reverse direction without shrinking are halved per parameter (a per-parameter
trust region), which stops the 2-cycles that items or subjects with all-wrong or all-right answers
otherwise fall into. All sums run over the responses sorted canonically first, so the fit is
bit-for-bit independent of the order in which responses are given.

Stopping rule: on the MAP objective itself. Each sweep starts by computing the gradient of the log
posterior at the current point (the skill block's Newton step needs it anyway); the fit returns that
point as soon as every partial derivative in (β, θ, γ) is below ``tol``, so the returned parameters
are a certified stationary point (``max_abs_gradient_``), not merely a point where steps got small.
Convergence is linear (about ×0.6 per sweep on 1M sparse responses), so a step-size rule stops
several times further from the optimum than its threshold suggests.
"""

from __future__ import annotations

import math
import warnings

import numpy as np
from numpy.typing import ArrayLike, NDArray
from sklearn.base import BaseEstimator
from sklearn.exceptions import ConvergenceWarning, NotFittedError

FloatArray = NDArray[np.float64]
IntArray = NDArray[np.intp]


def _sigmoid_of_negated(minus_z: FloatArray) -> FloatArray:
    """σ(z) = 1 / (1 + exp(−z)) given −z, overwriting it. np.exp is several times faster than
    scipy.special.expit; exp overflowing to inf gives exactly 0, which is the right limit."""
    with np.errstate(over="ignore"):
        np.exp(minus_z, out=minus_z)
    minus_z += 1.0
    return np.reciprocal(minus_z, out=minus_z)


def _sigmoid(z: FloatArray) -> FloatArray:
    """σ(z), overwriting z."""
    return _sigmoid_of_negated(np.negative(z, out=z))


def _as_index(values: ArrayLike, name: str) -> IntArray:
    arr = np.asarray(values)
    if arr.ndim != 1:
        raise ValueError(f"{name} must be 1-D, got shape {arr.shape}")
    if arr.size and not np.issubdtype(arr.dtype, np.integer):
        raise ValueError(f"{name} must hold integer indexes, got dtype {arr.dtype}")
    if arr.size and arr.min() < 0:
        raise ValueError(f"{name} must be non-negative indexes, got min {arr.min()}")
    return arr.astype(np.intp, copy=False)


def _as_binary(values: ArrayLike) -> NDArray[np.int8]:
    arr = np.asarray(values)
    if arr.ndim != 1:
        raise ValueError(f"correct must be 1-D, got shape {arr.shape}")
    if arr.dtype == bool:
        return arr.astype(np.int8)
    if not np.issubdtype(arr.dtype, np.number) or not np.all((arr == 0) | (arr == 1)):
        raise ValueError("correct must be binary (0/1 or bool); got other values (NaN, 0.5, …)")
    return arr.astype(np.int8)


class TwoPL(BaseEstimator):
    """MAP estimator of the 2PL model p_ij = σ(γ_j(β_i − θ_j)) (paper parameterisation).

    Parameters
    ----------
    skill_prior : (mean, sd) of the Normal prior on skill β (logits). Default N(0, 1) (paper App. B.4).
    difficulty_prior : (mean, sd) of the Normal prior on difficulty θ (logits). Default N(0, 1).
    discriminability_prior : (shape k, scale s) of the Gamma prior on γ. Default Gamma(2, 1), mode 1.
        k must exceed 1 so that the MAP is interior (γ > 0).
    max_iter : maximum number of block-Newton sweeps.
    tol : the fit stops at the first point where every partial derivative of the log posterior in
        (β, θ, γ) is below tol in absolute value (log posterior per logit), i.e. at a stationary
        point of the MAP objective; those parameters are the ones returned.
    random_state : kept for the scikit-learn estimator API; the fit is deterministic and starts
        from a data-driven point (logits of smoothed accuracies), so it draws no random numbers.
    compute_se : whether to compute ``skill_se_``.

    Fitted attributes
    -----------------
    skill_ : ndarray (n_subjects,), β in logits.
    difficulty_ : ndarray (n_items,), θ in logits.
    discriminability_ : ndarray (n_items,), γ > 0.
    skill_se_ : ndarray (n_subjects,), standard error of β: 1/sqrt of the diagonal of the skill block
        of the negative log-posterior Hessian, item parameters treated as fixed (that block is
        diagonal, so this is its exact inverse). Only when ``compute_se``.
    n_iter_ : int, sweeps run.
    max_abs_gradient_ : float, largest |∂ log posterior| over β, θ, γ at the returned parameters
        (< tol unless a ConvergenceWarning was raised).
    log_posterior_ : float, log likelihood plus log prior densities (normalising constants included).
    n_subjects_, n_items_ : int.

    Subjects or items with no responses are allowed: their parameters sit at the prior mode
    (β = μ_β, θ = μ_θ, γ = (k − 1)s) and the SE of such a subject's skill is the prior sd σ_β.
    The scale of the skill axis is fixed only by the priors (ADVSCORE.md §1).
    """

    def __init__(
        self,
        *,
        skill_prior: tuple[float, float] = (0.0, 1.0),
        difficulty_prior: tuple[float, float] = (0.0, 1.0),
        discriminability_prior: tuple[float, float] = (2.0, 1.0),
        max_iter: int = 200,
        tol: float = 1e-5,
        random_state: int | None = 0,
        compute_se: bool = True,
    ) -> None:
        self.skill_prior = skill_prior
        self.difficulty_prior = difficulty_prior
        self.discriminability_prior = discriminability_prior
        self.max_iter = max_iter
        self.tol = tol
        self.random_state = random_state
        self.compute_se = compute_se

    def _check_hyperparameters(self) -> None:
        if self.skill_prior[1] <= 0 or self.difficulty_prior[1] <= 0:
            raise ValueError("prior standard deviations must be positive")
        shape, scale = self.discriminability_prior
        if shape <= 1 or scale <= 0:
            raise ValueError(f"discriminability_prior needs shape > 1 and scale > 0, got {shape}, {scale}")
        if self.max_iter < 1 or self.tol <= 0:
            raise ValueError("max_iter must be >= 1 and tol > 0")

    def fit(
        self,
        subjects: ArrayLike,
        items: ArrayLike,
        correct: ArrayLike,
        n_subjects: int | None = None,
        n_items: int | None = None,
    ) -> TwoPL:
        """Fit from long-format responses.

        subjects, items : int arrays (n_responses,), indexes from 0; most (subject, item) pairs may
            be unobserved; repeated pairs count as independent responses.
        correct : 0/1 or bool array (n_responses,).
        n_subjects, n_items : sizes of the index spaces (default max index + 1); indexes beyond them
            raise.
        Raises ValueError on empty input, mismatched lengths, non-binary outcomes, negative or
        non-integer indexes, or bad hyperparameters. Returns self.
        """
        self._check_hyperparameters()
        s_idx = _as_index(subjects, "subjects")
        i_idx = _as_index(items, "items")
        r = _as_binary(correct)
        if not (len(s_idx) == len(i_idx) == len(r)):
            raise ValueError(f"lengths differ: subjects {len(s_idx)}, items {len(i_idx)}, correct {len(r)}")
        if len(r) == 0:
            raise ValueError("no responses to fit")
        n_s = int(s_idx.max()) + 1 if n_subjects is None else int(n_subjects)
        n_i = int(i_idx.max()) + 1 if n_items is None else int(n_items)
        if s_idx.max() >= n_s or i_idx.max() >= n_i:
            raise ValueError(f"index out of range: n_subjects={n_s}, n_items={n_i}")

        # Canonical order (by subject, item, outcome): order-invariant sums and sequential gathers.
        key = np.sort((s_idx.astype(np.int64) * n_i + i_idx) * 2 + r)
        s_idx = (key // (2 * n_i)).astype(np.intp)
        i_idx = ((key // 2) % n_i).astype(np.intp)
        y = (key % 2).astype(np.float64)
        del key

        mu_b, sd_b = map(float, self.skill_prior)
        mu_t, sd_t = map(float, self.difficulty_prior)
        shape, scale = map(float, self.discriminability_prior)
        prec_b, prec_t = 1.0 / sd_b**2, 1.0 / sd_t**2

        count_s = np.bincount(s_idx, minlength=n_s)
        count_i = np.bincount(i_idx, minlength=n_i)
        seen_s, seen_i = count_s > 0, count_i > 0
        # Responses are sorted by subject, so per-subject sums are contiguous segments: reduceat is
        # several times faster than bincount there (no dependent adds into one bin).
        starts = np.concatenate(([0], np.cumsum(count_s[seen_s])[:-1]))

        def subject_sum(values: FloatArray) -> FloatArray:
            out = np.zeros(n_s)
            out[seen_s] = np.add.reduceat(values, starts)
            return out

        beta, theta = self._initial_point(s_idx, i_idx, y, count_s, count_i, mu_b, sd_b, mu_t, sd_t)
        a = np.full(n_i, (shape - 1.0) * scale)
        c = a * theta
        trust_s, trust_i = np.ones(n_s), np.ones(n_i)
        last_db, last_da, last_dc = np.zeros(n_s), np.zeros(n_i), np.zeros(n_i)

        n = len(y)
        a_r, c_r, b_r, p, t1, t2 = (np.empty(n) for _ in range(6))
        n_iter = 0
        while True:
            # Skill block: gradient and curvature of the log posterior in β at the current point,
            # which is also the point returned if it is stationary. Preallocated buffers avoid an
            # 8 MB page-faulting allocation per temporary at 1M responses; indexes are checked
            # already, and take(mode="raise") with out= buffers the whole result (3x slower).
            np.take(a, i_idx, out=a_r, mode="clip")
            np.take(c, i_idx, out=c_r, mode="clip")
            np.take(beta, s_idx, out=b_r, mode="clip")
            p = _sigmoid_of_negated(np.subtract(c_r, np.multiply(a_r, b_r, out=p), out=p))
            np.multiply(np.subtract(y, p, out=t1), a_r, out=t1)
            np.multiply(np.multiply(np.subtract(1.0, p, out=t2), p, out=t2), a_r, out=t2)
            t2 *= a_r
            grad = subject_sum(t1) - prec_b * (beta - mu_b)
            hess = subject_sum(t2) + prec_b
            # Stop on the MAP objective itself: every partial derivative of the log posterior in
            # (β, θ, γ) below tol. The item gradient costs two passes, so only once β's is small.
            grad_max = float(np.abs(grad).max())
            if grad_max < self.tol or n_iter == self.max_iter:
                g_theta, g_gamma = self._item_gradient(p, y, b_r, i_idx, a, c, t1, mu_t, prec_t, shape, scale)
                grad_max = max(grad_max, float(np.abs(g_theta).max()), float(np.abs(g_gamma).max()))
                if grad_max < self.tol:
                    break
            if n_iter == self.max_iter:
                warnings.warn(
                    f"TwoPL did not converge in {self.max_iter} sweeps "
                    f"(largest |∂ log posterior| {grad_max:.2e}, tol {self.tol:.0e})",
                    ConvergenceWarning,
                    stacklevel=2,
                )
                break
            n_iter += 1

            # 1-D Newton step per subject, halved per subject while it keeps flipping.
            step = grad / hess
            trust_s = self._update_trust(trust_s, step * last_db < 0, np.abs(step) > 0.5 * np.abs(last_db))
            last_db = step
            beta += trust_s * step

            # Item block: 2-D Newton per item on (a, c), z = a·β − c.
            np.take(beta, s_idx, out=b_r, mode="clip")
            p = _sigmoid_of_negated(np.subtract(c_r, np.multiply(a_r, b_r, out=p), out=p))
            np.subtract(y, p, out=t1)
            s_e = np.bincount(i_idx, t1, n_i)
            s_eb = np.bincount(i_idx, np.multiply(t1, b_r, out=t1), n_i)
            np.multiply(np.subtract(1.0, p, out=t2), p, out=t2)
            s_w = np.bincount(i_idx, t2, n_i)
            s_wb = np.bincount(i_idx, np.multiply(t2, b_r, out=t2), n_i)
            s_wbb = np.bincount(i_idx, np.multiply(t2, b_r, out=t2), n_i)
            th = c / a
            dev = prec_t * (th - mu_t)
            # Gradient of log posterior; the θ-prior term uses ∂θ/∂a = −θ/a, ∂θ/∂c = 1/a.
            g_a = s_eb + dev * th / a + (shape - 1.0) / a - 1.0 / scale
            g_c = -s_e - dev / a
            h_aa = s_wbb + prec_t * th * th / a**2 + (shape - 1.0) / a**2
            h_ac = -s_wb - prec_t * th / a**2
            h_cc = s_w + prec_t / a**2
            det = h_aa * h_cc - h_ac * h_ac
            da = (h_cc * g_a - h_ac * g_c) / det
            dc = (h_aa * g_c - h_ac * g_a) / det
            reversed_ = da * last_da + dc * last_dc < 0
            grew = da**2 + dc**2 > 0.25 * (last_da**2 + last_dc**2)
            trust_i = self._update_trust(trust_i, reversed_, grew)
            last_da, last_dc = da, dc
            # Keep a > 0: never let one step take more than half of a.
            t = np.minimum(trust_i, np.where(da < 0, 0.5 * a / np.maximum(-da, 1e-300), np.inf))
            a = a + t * da
            c = c + t * dc

            beta, theta, a = self._gauge_step(
                beta, c / a, a, seen_s, seen_i, mu_b, prec_b, mu_t, prec_t, shape, scale
            )
            c = a * theta

        theta = c / a
        z = a[i_idx] * (beta[s_idx] - theta[i_idx])
        loglik = -float(np.logaddexp(0.0, np.where(y > 0, -z, z)).sum())
        log_prior = float(np.sum(-0.5 * prec_b * (beta - mu_b) ** 2)) - n_s * math.log(
            sd_b * math.sqrt(2 * math.pi)
        )
        log_prior += float(np.sum(-0.5 * prec_t * (theta - mu_t) ** 2)) - n_i * math.log(
            sd_t * math.sqrt(2 * math.pi)
        )
        log_prior += float(np.sum((shape - 1.0) * np.log(a) - a / scale)) - n_i * (
            math.lgamma(shape) + shape * math.log(scale)
        )

        self.skill_ = beta
        self.difficulty_ = theta
        self.discriminability_ = a
        self.n_iter_ = n_iter
        self.log_posterior_ = loglik + log_prior
        self.n_subjects_, self.n_items_ = n_s, n_i
        self.max_abs_gradient_ = grad_max
        if self.compute_se:
            # hess is the skill block's curvature at exactly the returned point.
            self.skill_se_ = 1.0 / np.sqrt(hess)
        return self

    @staticmethod
    def _item_gradient(
        p: FloatArray,
        y: FloatArray,
        b_r: FloatArray,
        i_idx: IntArray,
        a: FloatArray,
        c: FloatArray,
        scratch: FloatArray,
        mu_t: float,
        prec_t: float,
        shape: float,
        scale: float,
    ) -> tuple[FloatArray, FloatArray]:
        """∂ log posterior / ∂θ and / ∂γ per item (n_items,) at the point where p = σ(a·β − c) per
        response and b_r = β per response; ``scratch`` (n_responses,) is overwritten."""
        n_i = len(a)
        theta = c / a
        e = np.subtract(y, p, out=scratch)
        s_e = np.bincount(i_idx, e, n_i)
        s_eb = np.bincount(i_idx, np.multiply(e, b_r, out=scratch), n_i)
        g_theta = -a * s_e - prec_t * (theta - mu_t)
        g_gamma = s_eb - theta * s_e + (shape - 1.0) / a - 1.0 / scale
        return g_theta, g_gamma

    @staticmethod
    def _initial_point(
        s_idx: IntArray,
        i_idx: IntArray,
        y: FloatArray,
        count_s: NDArray[np.integer],
        count_i: NDArray[np.integer],
        mu_b: float,
        sd_b: float,
        mu_t: float,
        sd_t: float,
    ) -> tuple[FloatArray, FloatArray]:
        """Standardised logits of smoothed accuracies, placed on the priors; unseen at prior means."""

        def standardised_logit(successes: np.ndarray, counts: NDArray[np.integer]) -> FloatArray:
            acc = (successes + 0.5) / (counts + 1.0)
            logit = np.log(acc / (1.0 - acc))
            seen = counts > 0
            out = np.zeros_like(logit)
            spread = logit[seen].std()
            out[seen] = (logit[seen] - logit[seen].mean()) / (spread if spread > 0 else 1.0)
            return out

        n_s, n_i = len(count_s), len(count_i)
        beta = mu_b + sd_b * standardised_logit(np.bincount(s_idx, y, n_s), count_s)
        theta = mu_t - sd_t * standardised_logit(np.bincount(i_idx, y, n_i), count_i)
        return beta, theta

    @staticmethod
    def _update_trust(trust: FloatArray, reversed_: NDArray[np.bool_], grew: NDArray[np.bool_]) -> FloatArray:
        """Halve the step fraction of parameters whose Newton step flipped without shrinking."""
        return np.where(reversed_ & grew, 0.5 * trust, np.minimum(1.0, 2.0 * trust))

    @staticmethod
    def _gauge_step(
        beta: FloatArray,
        theta: FloatArray,
        a: FloatArray,
        seen_s: NDArray[np.bool_],
        seen_i: NDArray[np.bool_],
        mu_b: float,
        prec_b: float,
        mu_t: float,
        prec_t: float,
        shape: float,
        scale: float,
    ) -> tuple[FloatArray, FloatArray, FloatArray]:
        """Maximise the log prior over β → uβ + v, θ → uθ + v, γ → γ/u (seen parameters only).

        The likelihood is constant along this family, so this is an exact block step of the MAP.
        Damped Newton on (log u, v) using five sufficient statistics.
        """
        b, th, g = beta[seen_s], theta[seen_i], a[seen_i]
        nb, ni = len(b), len(th)
        sb, sbb = float(b.sum()), float(b @ b)
        st, stt = float(th.sum()), float(th @ th)
        sg = float(g.sum())

        def objective(lu: float, v: float) -> float:
            u = math.exp(lu)
            qb = u * u * sbb + 2 * u * (v - mu_b) * sb + nb * (v - mu_b) ** 2
            qt = u * u * stt + 2 * u * (v - mu_t) * st + ni * (v - mu_t) ** 2
            return -0.5 * prec_b * qb - 0.5 * prec_t * qt - (shape - 1.0) * ni * lu - sg / (u * scale)

        lu, v = 0.0, 0.0
        f = objective(lu, v)
        for _ in range(50):
            u = math.exp(lu)
            # Derivatives in u, then chain rule to log u.
            f_u = (
                -prec_b * (u * sbb + (v - mu_b) * sb)
                - prec_t * (u * stt + (v - mu_t) * st)
                + sg / (u * u * scale)
            )
            f_uu = -prec_b * sbb - prec_t * stt - 2 * sg / (u**3 * scale)
            f_v = -prec_b * (u * sb + nb * (v - mu_b)) - prec_t * (u * st + ni * (v - mu_t))
            f_vv = -prec_b * nb - prec_t * ni
            f_uv = -prec_b * sb - prec_t * st
            g_l = u * f_u - (shape - 1.0) * ni
            h_ll = u * u * f_uu + u * f_u
            h_lv = u * f_uv
            det = h_ll * f_vv - h_lv * h_lv
            if h_ll < 0 and det > 0:
                d_l = -(f_vv * g_l - h_lv * f_v) / det
                d_v = -(h_ll * f_v - h_lv * g_l) / det
            else:  # not concave here: plain gradient ascent direction
                d_l, d_v = g_l / (abs(h_ll) + 1.0), f_v / abs(f_vv)
            step = 1.0
            while step > 1e-10:
                f_new = objective(lu + step * d_l, v + step * d_v)
                if f_new >= f:
                    break
                step *= 0.5
            else:
                break
            lu, v, f = lu + step * d_l, v + step * d_v, f_new
            if abs(step * d_l) < 1e-12 and abs(step * d_v) < 1e-12:
                break

        u = math.exp(lu)
        beta = beta.copy()
        theta = theta.copy()
        a = a.copy()
        beta[seen_s] = u * b + v
        theta[seen_i] = u * th + v
        a[seen_i] = g / u
        return beta, theta, a

    def predict_proba(self, subjects: ArrayLike, items: ArrayLike) -> FloatArray:
        """P(correct) = σ(γ_j(β_i − θ_j)) for each (subjects[k], items[k]); ndarray (n,).

        Raises NotFittedError before fit, ValueError for mismatched lengths or out-of-range indexes.
        """
        if not hasattr(self, "skill_"):
            raise NotFittedError("TwoPL is not fitted yet; call fit first")
        s_idx = _as_index(subjects, "subjects")
        i_idx = _as_index(items, "items")
        if len(s_idx) != len(i_idx):
            raise ValueError(f"lengths differ: subjects {len(s_idx)}, items {len(i_idx)}")
        if (s_idx.size and s_idx.max() >= self.n_subjects_) or (i_idx.size and i_idx.max() >= self.n_items_):
            raise ValueError(f"index out of range: n_subjects={self.n_subjects_}, n_items={self.n_items_}")
        return _sigmoid(self.discriminability_[i_idx] * (self.skill_[s_idx] - self.difficulty_[i_idx]))
