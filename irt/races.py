"""Responses from buzzer races, and the 2PL fit that reads a silent subject as censored.

A live tossup is a race: the first correct buzz ends it for everyone. A subject that had not buzzed
by then did not show that it did not know the answer — it may have known it and been slower. Three
response policies turn a race into 2PL responses (docs/SKILLS.md compares them on simulated rooms):

- ``wrong``: every silent subject gets 0 ("did not know it by the time the tossup was decided");
- ``missing``: a silent subject's response is dropped when someone answered correctly (it is 0 only
  on a dead tossup);
- ``censored``: the silent subject is right-censored at the read share c where the tossup was
  decided. Its outcome "correct by the end" is unknown, but it had not buzzed correctly by c, which
  a subject who knows the answer does with probability G(c), G the distribution of a knower's
  correct-buzz point. The likelihood term is P(not correct by c) = 1 − G(c)·p_ij (a mixture cure
  model: Farewell 1982; Kuk & Chen 1992), with p_ij = σ(γ_j(β_i − θ_j)) the 2PL's probability of
  knowing. G(c) = 1 gives ``wrong``'s 0, G(c) = 0 gives ``missing``. A correct buzz is 1, a neg 0
  (observed), and a subject that heard a dead tossup to its end 0. G, pooled over subjects and
  items, starts as the Kaplan–Meier estimate of the correct-buzz point (correct buzzes are events,
  silent subjects censored at c, wrong or dead ones at the end) divided by its value at the end,
  and is then re-estimated with the fit (:class:`RaceTwoPL`).

A model in which a knower's buzz point also depends on skill (proportional hazards in
γ_j(β_i − θ_j), the winner's buzz point as a density) was tried and recovered skills worse on the
calibrated simulated humans (tools.bench_skills; docs/SKILLS.md): it is not offered.

Only live races are censored: an imported response (no race, no position) is observed as it is.
A teammate's neg locks a team out earlier than the decided point; the stored responses do not say
which team a subject sat on, so such a subject is censored at the decided point (or is 0 on a dead
tossup), which treats it slightly more strictly than it was.
"""

from __future__ import annotations

import math
import warnings
from collections.abc import Callable
from dataclasses import dataclass

import numpy as np
from numpy.typing import ArrayLike, NDArray
from scipy.optimize import minimize
from sklearn.exceptions import ConvergenceWarning

from irt.twopl import TwoPL, _as_binary, _as_index

FloatArray = NDArray[np.float64]
POLICIES = ("wrong", "missing", "censored")


@dataclass(frozen=True)
class RaceResponses:
    """2PL responses of one policy: ``keep`` bool (n_in,) the input responses kept; ``correct`` int8
    and ``at`` float (n_kept,): where a race response's observation ended as a share of the tossup
    read — a correct buzz's point, or the decided point of a censored silent subject — and NaN for an
    outcome observed without a race point (a neg, a dead tossup heard to its end, an imported response, and
    every response of the ``wrong`` and ``missing`` policies)."""

    keep: NDArray[np.bool_]
    correct: NDArray[np.int8]
    at: FloatArray

    @property
    def censored(self) -> bool:
        """Whether the responses need :class:`RaceTwoPL` (some carry a race point)."""
        return bool(np.isfinite(self.at).any())

    def columns(self) -> FloatArray:
        """(n_kept, 2) columns (correct, at), the input of :meth:`RaceTwoPL.fit`."""
        return np.column_stack([self.correct.astype(float), self.at])


def decided_at(races: ArrayLike, correct: ArrayLike, read: ArrayLike) -> FloatArray:
    """Per response, the read share at which its race was decided (the earliest correct buzz),
    NaN when the race had no correct buzz or the response is in no race (``races`` < 0).

    races: int (n,) race id of each response (one tossup in one match), −1 for none; correct: 0/1
    (n,); read: float (n,) share of the tossup read at the subject's buzz, NaN when it did not buzz.
    Raises ValueError for mismatched lengths or non-binary ``correct``.
    """
    race = np.asarray(races, dtype=np.int64)
    ok = _as_binary(correct).astype(bool)
    at = np.asarray(read, dtype=float)
    if not (race.shape == ok.shape == at.shape):
        raise ValueError(f"lengths differ: races {race.shape}, correct {ok.shape}, read {at.shape}")
    out = np.full(race.shape, np.nan)
    hit = ok & (race >= 0) & np.isfinite(at)
    if not hit.any():
        return out
    ids, inverse = np.unique(race[hit], return_inverse=True)
    first = np.full(len(ids), np.inf)
    np.minimum.at(first, inverse, at[hit])
    pos = np.minimum(np.searchsorted(ids, race), len(ids) - 1)
    found = (race >= 0) & (ids[pos] == race)
    out[found] = first[pos[found]]
    return out


def race_responses(races: ArrayLike, correct: ArrayLike, read: ArrayLike, policy: str) -> RaceResponses:
    """Apply a response policy (module docstring) to stored responses: races, correct, read as for
    :func:`decided_at`. Raises ValueError for an unknown policy or bad input."""
    if policy not in POLICIES:
        raise ValueError(f"unbuzzed policy must be one of {POLICIES}, got {policy!r}")
    ok = _as_binary(correct)
    at = np.asarray(read, dtype=float)
    decided = decided_at(races, ok, at)
    race = np.asarray(races, dtype=np.int64)
    censor = ~np.isfinite(at) & (ok == 0) & np.isfinite(decided)
    n = ok.size
    if policy == "wrong":
        return RaceResponses(np.ones(n, dtype=bool), ok, np.full(n, np.nan))
    if policy == "missing":
        keep = ~censor
        return RaceResponses(keep, ok[keep], np.full(int(keep.sum()), np.nan))
    points = np.where(censor, decided, np.where((ok == 1) & (race >= 0), at, np.nan))
    return RaceResponses(np.ones(n, dtype=bool), ok, points)


def knower_hazard(event_at: ArrayLike, censored_at: ArrayLike) -> tuple[FloatArray, FloatArray]:
    """The baseline cumulative hazard H0 of a knower's correct-buzz point: (points, H0 just after
    each point), H0 = −log(1 − G) with G = F / F(last) and F the Kaplan–Meier estimate of the
    correct-buzz point (``event_at``: read shares of correct buzzes; ``censored_at``: where other
    observations ended without one). Empty arrays when there is no event."""
    events = np.asarray(event_at, dtype=float)
    cens = np.asarray(censored_at, dtype=float)
    if events.size == 0:
        return np.empty(0), np.empty(0)
    points = np.unique(events)
    everything = np.sort(np.concatenate([events, cens]))
    at_risk = everything.size - np.searchsorted(everything, points, side="left")
    died = np.bincount(np.searchsorted(points, events), minlength=points.size)
    f = 1.0 - np.cumprod(1.0 - died / at_risk)
    with np.errstate(divide="ignore"):
        return points, -np.log1p(-f / f[-1])


def hazard_before(points: FloatArray, h0: FloatArray, c: ArrayLike) -> FloatArray:
    """H0 strictly before each read share ``c`` (a buzz at c itself would have tied, not won)."""
    at = np.asarray(c, dtype=float)
    idx = np.searchsorted(points, at, side="left") - 1
    return np.where(idx >= 0, h0[np.maximum(idx, 0)], 0.0)


def _weight_from(ends: FloatArray, weights: FloatArray, points: FloatArray, side: str) -> FloatArray:
    """Σ weights of the responses ending at or after (``side="left"``) or strictly after
    (``"right"``) each point."""
    order = np.argsort(ends)
    tail = np.append(np.cumsum(weights[order][::-1])[::-1], 0.0)
    return tail[np.searchsorted(ends[order], points, side=side)]  # type: ignore[call-overload]


#: Above this many subject × item cells the skill SEs hold the items fixed (the exact ones need two
#: dense n_subjects × n_items arrays).
DENSE_SE_CELLS = 20_000_000
MAX_HAZARD = 40.0  # H0 past the last correct buzz point is +inf: every knower has buzzed


class RaceTwoPL(TwoPL):
    """The 2PL of :class:`irt.twopl.TwoPL` (same β, θ, γ, priors and fitted attributes) read off
    buzzer races as a mixture cure model (module docstring): a silent subject censored at c has
    likelihood 1 − G(c)·p_ij.

    G, a knower's correct-buzz point, starts as the Kaplan–Meier estimate and is then refitted
    ``baseline_sweeps`` times, alternating with the MAP: Breslow's estimator with each at-risk
    response weighted by its posterior chance of being a knower (the EM of Sy & Taylor 2000 for
    the cure model, here without covariates in the latency). ``skill_se_``: the skill block of the
    inverse observed information over skills and items together (exact, by the Schur complement
    of the per-item blocks; O(n_subjects² · n_items)), so an item's uncertainty widens its
    subjects' intervals (items fixed above :data:`DENSE_SE_CELLS`); a subject with no informative
    response has the prior sd.
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
        baseline_sweeps: int = 5,
    ) -> None:
        super().__init__(
            skill_prior=skill_prior,
            difficulty_prior=difficulty_prior,
            discriminability_prior=discriminability_prior,
            max_iter=max_iter,
            tol=tol,
            random_state=random_state,
            compute_se=compute_se,
        )
        self.baseline_sweeps = baseline_sweeps

    def fit(
        self,
        subjects: ArrayLike,
        items: ArrayLike,
        correct: ArrayLike,
        n_subjects: int | None = None,
        n_items: int | None = None,
    ) -> RaceTwoPL:
        """Fit from long-format responses; ``correct`` is (n,) 0/1 (no race: the result is TwoPL's)
        or (n, 2) columns (correct, at) as :meth:`RaceResponses.columns` gives: ``at`` in (0, 1] the
        point a correct buzz came at or a silent subject was censored at (correct 0), NaN for an
        outcome observed without a race point. Other arguments and errors as :meth:`TwoPL.fit`.
        Returns self."""
        arr = np.asarray(correct, dtype=float)
        if arr.ndim == 2 and arr.shape[1] == 2:
            y, at = _as_binary(arr[:, 0]), arr[:, 1]
            bad = np.isfinite(at) & ((at <= 0) | (at > 1))
            if bad.any():
                raise ValueError(f"race points must lie in (0, 1], got {at[bad][0]}")
        else:
            y, at = _as_binary(arr), np.full(arr.shape[0] if arr.ndim else 0, np.nan)
        s_idx, i_idx = _as_index(subjects, "subjects"), _as_index(items, "items")
        # The fit with every response observed is the start (and, without races, the answer).
        super().fit(s_idx, i_idx, y, n_subjects=n_subjects, n_items=n_items)
        if np.isfinite(at).any():
            self._refine(s_idx, i_idx, y, at)
        return self

    def _refine(
        self, s_idx: NDArray[np.intp], i_idx: NDArray[np.intp], y: NDArray[np.int8], at: FloatArray
    ) -> None:
        n_s, n_i = self.n_subjects_, self.n_items_
        mu_b, sd_b = map(float, self.skill_prior)
        mu_t, sd_t = map(float, self.difficulty_prior)
        shape, scale = map(float, self.discriminability_prior)
        prec_b, prec_t = 1.0 / sd_b**2, 1.0 / sd_t**2
        won = np.isfinite(at) & (y > 0)
        cens = np.isfinite(at) & (y == 0)
        pos = y > 0
        events = np.unique(at[won])
        points, h0 = knower_hazard(at[won], np.where(cens, at, 1.0)[y == 0])
        reach = hazard_before(points, h0, at[cens])  # H0(c−) of each censored response

        def objective(x: FloatArray) -> tuple[float, FloatArray]:
            """Negative log posterior in (β, θ, log γ) and its gradient."""
            beta, theta, gamma = x[:n_s], x[n_s : n_s + n_i], np.exp(x[n_s + n_i :])
            z = gamma[i_idx] * (beta[s_idx] - theta[i_idx])
            p = 0.5 * (1.0 + np.tanh(0.5 * z))
            ll = np.where(pos, -np.logaddexp(0.0, -z), -np.logaddexp(0.0, z))
            e = np.where(pos, 1.0 - p, -p)  # ∂ log-likelihood / ∂z
            # Censored: log(1 − G·p) with G = 1 − exp(−H0(c−)), the chance a knower had buzzed.
            g = -np.expm1(-np.minimum(reach, MAX_HAZARD))
            pc = p[cens]
            miss = np.maximum(1.0 - g * pc, 1e-300)
            ll[cens] = np.log(miss)
            e[cens] = -g * pc * (1.0 - pc) / miss
            lp = -0.5 * prec_b * float(np.sum((beta - mu_b) ** 2))
            lp -= 0.5 * prec_t * float(np.sum((theta - mu_t) ** 2))
            lp += float(np.sum((shape - 1.0) * np.log(gamma) - gamma / scale))
            ge = gamma[i_idx] * e
            grad = np.concatenate(
                [
                    np.bincount(s_idx, ge, n_s) - prec_b * (beta - mu_b),
                    -np.bincount(i_idx, ge, n_i) - prec_t * (theta - mu_t),
                    np.bincount(i_idx, z * e, n_i) + (shape - 1.0) - gamma / scale,
                ]
            )
            return -(float(ll.sum()) + lp), -grad

        def curvature(x: FloatArray) -> tuple[FloatArray, FloatArray, FloatArray]:
            """Per response: z, ∂ℓ/∂z and ∂²ℓ/∂z²."""
            gamma = np.exp(x[n_s + n_i :])
            z = gamma[i_idx] * (x[:n_s][s_idx] - x[n_s : n_s + n_i][i_idx])
            p = 0.5 * (1.0 + np.tanh(0.5 * z))
            e = np.where(pos, 1.0 - p, -p)
            h = -p * (1.0 - p)
            g = -np.expm1(-np.minimum(reach, MAX_HAZARD))
            pc = p[cens]
            miss = np.maximum(1.0 - g * pc, 1e-300)
            e[cens] = -g * pc * (1.0 - pc) / miss
            h[cens] = -g * pc * (1.0 - pc) * ((1.0 - 2.0 * pc) * miss + g * pc * (1.0 - pc)) / miss**2
            return z, e, h

        x = np.concatenate([self.skill_, self.difficulty_, np.log(self.discriminability_)])
        for _ in range(self.baseline_sweeps):
            x = self._minimise(objective, x)
            beta, theta, gamma = x[:n_s], x[n_s : n_s + n_i], np.exp(x[n_s + n_i :])
            p = 1.0 / (1.0 + np.exp(-gamma[i_idx] * (beta[s_idx] - theta[i_idx])))
            stay = np.exp(-np.minimum(reach, MAX_HAZARD))
            knower = p[cens] * stay / np.maximum(1.0 - p[cens] + p[cens] * stay, 1e-300)
            # At risk at t: a correct buzz at or after t (a knower for sure), a censoring after t.
            at_risk = _weight_from(at[won], np.ones(int(won.sum())), events, "left")
            at_risk += _weight_from(at[cens], knower, events, "right")
            died = np.bincount(np.searchsorted(events, at[won]), minlength=events.size)
            reach = hazard_before(events, np.cumsum(died / np.maximum(at_risk, 1e-300)), at[cens])
        x = self._minimise(objective, x)
        _, grad = objective(x)
        gamma = np.exp(x[n_s + n_i :])
        grad[n_s + n_i :] /= gamma  # ∂/∂γ = (∂/∂ log γ) / γ
        self.max_abs_gradient_ = float(np.abs(grad).max())
        if self.max_abs_gradient_ >= self.tol:
            warnings.warn(
                f"RaceTwoPL did not converge (largest |∂ log posterior| {self.max_abs_gradient_:.2e}, "
                f"tol {self.tol:.0e})",
                ConvergenceWarning,
                stacklevel=3,
            )
        self.skill_, self.difficulty_, self.discriminability_ = (
            x[:n_s].copy(),
            x[n_s : n_s + n_i].copy(),
            gamma,
        )
        self.log_posterior_ = -objective(x)[0] - n_s * math.log(sd_b * math.sqrt(2 * math.pi))
        self.log_posterior_ -= n_i * (
            math.log(sd_t * math.sqrt(2 * math.pi)) + math.lgamma(shape) + shape * math.log(scale)
        )
        if self.compute_se:
            _, e, h = curvature(x)
            self.skill_se_ = self._skill_se(s_idx, i_idx, x, e, h, prec_b, prec_t, scale)

    def _minimise(
        self, objective: Callable[[FloatArray], tuple[float, FloatArray]], x: FloatArray
    ) -> FloatArray:
        """L-BFGS to a point whose gradient is below a tenth of ``tol`` (restarted: its line
        search can stop short)."""
        for _ in range(5):
            res = minimize(
                objective,
                x,
                jac=True,
                method="L-BFGS-B",
                options={"maxiter": 50 * self.max_iter, "maxcor": 30, "gtol": 0.1 * self.tol, "ftol": 0.0},
            )
            x = res.x
            self.n_iter_ = int(res.nit)
            if np.abs(res.jac).max() < 0.1 * self.tol:
                break
        return np.asarray(x, dtype=float)

    def _skill_se(
        self,
        s_idx: NDArray[np.intp],
        i_idx: NDArray[np.intp],
        x: FloatArray,
        e: FloatArray,
        h: FloatArray,
        prec_b: float,
        prec_t: float,
        scale: float,
    ) -> FloatArray:
        """Skill SEs: the skill block of the inverse observed information over (β, θ, log γ), by
        the Schur complement of the item block (2 × 2 per item: items share no response). ``e``
        and ``h``: ∂ℓ/∂z and ∂²ℓ/∂z² per response at ``x``. Falls back to the items-fixed
        diagonal when the item block or the complement is not positive definite, or above
        :data:`DENSE_SE_CELLS`."""
        n_s, n_i = self.n_subjects_, self.n_items_
        beta, theta, gamma = x[:n_s], x[n_s : n_s + n_i], np.exp(x[n_s + n_i :])
        g = gamma[i_idx]
        z = g * (beta[s_idx] - theta[i_idx])
        # Negative second derivatives of the log posterior (z = γ(β − θ), log γ = η):
        # ββ −hγ², θθ −hγ², ηη −(hz² + ez) + γ/s, βθ hγ², βη −(hγz + eγ), θη hγz + eγ.
        j_bb = np.bincount(s_idx, -h * g * g, n_s) + prec_b
        j_tt = np.bincount(i_idx, -h * g * g, n_i) + prec_t
        j_ee = np.bincount(i_idx, -(h * z * z + e * z), n_i) + gamma / scale
        j_te = np.bincount(i_idx, h * g * z + e * g, n_i)
        det = j_tt * j_ee - j_te**2
        fixed = 1.0 / np.sqrt(np.maximum(j_bb, prec_b))
        if not (np.all(det > 0) and np.all(j_tt > 0)) or n_s * n_i > DENSE_SE_CELLS:
            return fixed
        c_t = np.zeros((n_s, n_i))
        c_e = np.zeros((n_s, n_i))
        np.add.at(c_t, (s_idx, i_idx), h * g * g)
        np.add.at(c_e, (s_idx, i_idx), -(h * g * z + e * g))
        inv_tt, inv_ee, inv_te = j_ee / det, j_tt / det, -j_te / det
        complement = np.diag(j_bb) - (
            (c_t * inv_tt) @ c_t.T + (c_t * inv_te) @ c_e.T + (c_e * inv_te) @ c_t.T + (c_e * inv_ee) @ c_e.T
        )
        try:
            var = np.diag(np.linalg.inv(complement))
        except np.linalg.LinAlgError:
            return fixed
        return np.sqrt(var) if np.all(var > 0) else fixed
