"""Benchmark of irt.twopl.TwoPL on simulated 2PL data: ``python -m irt.bench [--compare]``.

Shapes: ``1M`` (20,000 subjects × 5,000 items, 1 % observed = 1,000,000 responses), ``live``
(200 × 200 dense) and ``paper`` (170 humans answering ~30 % of 180 items + 10 models answering all).
True β ~ N(0, 1), θ ~ N(0, 1), γ ~ Gamma(2, 1) (the default priors). 10 % of responses are held out.
Prints per shape: fit wall seconds on ALL responses (median of repeats), peak traced memory of that
fit (tracemalloc: Python/NumPy allocations during the fit, in MB, not RSS), then, from a refit on the
90 % training split, recovery Pearson r of skill / difficulty / discriminability, the mean
held-out log-likelihood per response, and how close that refit is to the MAP: its log posterior on
the training split (up to a constant; higher is better) and the largest absolute partial derivative
of the log posterior in (β, θ, γ) at the returned parameters (0 at the optimum), both computed here,
independently of the fitters. BLAS/OpenMP pools are limited to one thread; NumPy's element-wise
kernels are single-threaded anyway, so the fit runs on one core.
``--compare`` also fits with the reference MAP fitter: scipy L-BFGS-B on the joint log posterior
(analytic gradient, no Hessian, log γ parameterisation, scipy's default stopping rule), and prints
TwoPL's time as a fraction of the reference's.
"""

from __future__ import annotations

import argparse
import time
import tracemalloc
from collections.abc import Callable
from dataclasses import dataclass

import numpy as np
from scipy.optimize import minimize
from threadpoolctl import threadpool_limits

from irt.twopl import TwoPL


@dataclass
class Simulated:
    """Simulated responses (train/holdout split) and the true parameters."""

    skill: np.ndarray
    difficulty: np.ndarray
    discriminability: np.ndarray
    subjects: np.ndarray
    items: np.ndarray
    correct: np.ndarray
    holdout: np.ndarray  # bool (n_responses,)


def simulate(pairs: np.ndarray, n_subjects: int, n_items: int, seed: int) -> Simulated:
    """Draw true parameters from the priors and one response per (subject, item) row of ``pairs``."""
    rng = np.random.default_rng(seed)
    skill = rng.normal(size=n_subjects)
    difficulty = rng.normal(size=n_items)
    discriminability = rng.gamma(2.0, 1.0, size=n_items)
    subjects, items = pairs[:, 0], pairs[:, 1]
    p = 1.0 / (1.0 + np.exp(-discriminability[items] * (skill[subjects] - difficulty[items])))
    correct = (rng.random(len(p)) < p).astype(np.int8)
    holdout = rng.random(len(p)) < 0.1
    return Simulated(skill, difficulty, discriminability, subjects, items, correct, holdout)


def shape_1m(seed: int) -> Simulated:
    n_s, n_i = 20_000, 5_000
    rng = np.random.default_rng(seed + 1)
    flat = rng.choice(n_s * n_i, size=n_s * n_i // 100, replace=False)
    rng.shuffle(flat)
    return simulate(np.column_stack([flat // n_i, flat % n_i]), n_s, n_i, seed)


def shape_live(seed: int) -> Simulated:
    s, i = np.meshgrid(np.arange(200), np.arange(200), indexing="ij")
    return simulate(np.column_stack([s.ravel(), i.ravel()]), 200, 200, seed)


def shape_paper(seed: int) -> Simulated:
    rng = np.random.default_rng(seed + 1)
    humans = np.argwhere(rng.random((170, 180)) < 0.3)
    models = np.argwhere(np.ones((10, 180), dtype=bool)) + np.array([170, 0])
    return simulate(np.vstack([humans, models]), 180, 180, seed)


def fit_twopl(sim: Simulated, n_s: int, n_i: int, train: np.ndarray) -> tuple[np.ndarray, ...]:
    model = TwoPL().fit(sim.subjects[train], sim.items[train], sim.correct[train], n_s, n_i)
    return model.skill_, model.difficulty_, model.discriminability_


def fit_lbfgs(sim: Simulated, n_s: int, n_i: int, train: np.ndarray) -> tuple[np.ndarray, ...]:
    """Baseline: L-BFGS-B on the same log posterior over (β, θ, log γ), analytic gradient."""
    s, i, y = sim.subjects[train], sim.items[train], sim.correct[train].astype(float)

    def negative_log_posterior(x: np.ndarray) -> tuple[float, np.ndarray]:
        beta, theta, eta = x[:n_s], x[n_s : n_s + n_i], x[n_s + n_i :]
        gamma = np.exp(eta)
        d = beta[s] - theta[i]
        z = gamma[i] * d
        with np.errstate(over="ignore"):
            p = 1.0 / (1.0 + np.exp(-z))
        e = y - p
        f = np.logaddexp(0.0, np.where(y > 0, -z, z)).sum()
        f += 0.5 * (beta @ beta + theta @ theta) - np.sum(np.log(gamma) - gamma)
        ge = gamma[i] * e
        g_beta = -np.bincount(s, ge, n_s) + beta
        g_theta = np.bincount(i, ge, n_i) + theta
        g_eta = -gamma * np.bincount(i, e * d, n_i) - (1.0 - gamma)
        return f, np.concatenate([g_beta, g_theta, g_eta])

    x0 = np.zeros(n_s + 2 * n_i)
    res = minimize(negative_log_posterior, x0, jac=True, method="L-BFGS-B", options={"maxiter": 5000})
    return res.x[:n_s], res.x[n_s : n_s + n_i], np.exp(res.x[n_s + n_i :])


def log_posterior_and_gradient(
    beta: np.ndarray, theta: np.ndarray, gamma: np.ndarray, s: np.ndarray, i: np.ndarray, y: np.ndarray
) -> tuple[float, float]:
    """Log posterior under the default priors N(0, 1), N(0, 1), Gamma(2, 1), without normalising
    constants, and max |∂ log posterior / ∂(β, θ, γ)|, at the given parameters."""
    d = beta[s] - theta[i]
    z = gamma[i] * d
    e = y - 1.0 / (1.0 + np.exp(-z))
    log_post = -float(np.logaddexp(0.0, np.where(y > 0, -z, z)).sum())
    log_post += float(-0.5 * (beta @ beta + theta @ theta) + np.sum(np.log(gamma) - gamma))
    g_beta = np.bincount(s, gamma[i] * e, len(beta)) - beta
    g_theta = -np.bincount(i, gamma[i] * e, len(theta)) - theta
    g_gamma = np.bincount(i, e * d, len(gamma)) + 1.0 / gamma - 1.0
    return log_post, float(max(np.abs(g).max() for g in (g_beta, g_theta, g_gamma)))


def evaluate(sim: Simulated, fitter: Callable[..., tuple[np.ndarray, ...]], repeats: int) -> dict[str, float]:
    n_s, n_i = len(sim.skill), len(sim.difficulty)
    everything = np.ones(len(sim.correct), dtype=bool)
    times = []
    for _ in range(repeats):
        start = time.perf_counter()
        fitter(sim, n_s, n_i, everything)
        times.append(time.perf_counter() - start)
    tracemalloc.start()
    fitter(sim, n_s, n_i, everything)
    peak_mb = tracemalloc.get_traced_memory()[1] / 1e6
    tracemalloc.stop()
    beta, theta, gamma = fitter(sim, n_s, n_i, ~sim.holdout)
    h = sim.holdout
    z = gamma[sim.items[h]] * (beta[sim.subjects[h]] - theta[sim.items[h]])
    heldout_ll = -float(np.mean(np.logaddexp(0.0, np.where(sim.correct[h] > 0, -z, z))))
    train = ~h
    log_post, grad_max = log_posterior_and_gradient(
        beta, theta, gamma, sim.subjects[train], sim.items[train], sim.correct[train].astype(float)
    )
    return {
        "seconds": float(np.median(times)),
        "peak_mb": peak_mb,
        "r_skill": float(np.corrcoef(beta, sim.skill)[0, 1]),
        "r_difficulty": float(np.corrcoef(theta, sim.difficulty)[0, 1]),
        "r_discriminability": float(np.corrcoef(gamma, sim.discriminability)[0, 1]),
        "heldout_ll": heldout_ll,
        "log_posterior": log_post,
        "max_grad": grad_max,
    }


def main() -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--compare", action="store_true", help="also run the L-BFGS-B reference fitter")
    parser.add_argument("--seed", type=int, default=0)
    args = parser.parse_args()
    shapes = [("1M", shape_1m, 3), ("live", shape_live, 20), ("paper", shape_paper, 20)]
    with threadpool_limits(limits=1):
        print(
            f"{'shape':6} {'method':7} {'responses':>9} {'fit_s':>7} {'peak_MB':>8} "
            f"{'r_skill':>7} {'r_diff':>7} {'r_disc':>7} {'heldout_ll':>10} "
            f"{'train_log_post':>15} {'max|grad|':>9}"
        )
        for name, make, repeats in shapes:
            sim = make(args.seed)
            methods: list[tuple[str, Callable[..., tuple[np.ndarray, ...]]]] = [("twopl", fit_twopl)]
            if args.compare:
                methods.append(("lbfgs", fit_lbfgs))
            results = {}
            for method, fitter in methods:
                m = evaluate(sim, fitter, 1 if method == "lbfgs" else repeats)
                results[method] = m
                print(
                    f"{name:6} {method:7} {len(sim.correct):9d} {m['seconds']:7.3f} "
                    f"{m['peak_mb']:8.1f} {m['r_skill']:7.4f} {m['r_difficulty']:7.4f} "
                    f"{m['r_discriminability']:7.4f} {m['heldout_ll']:10.5f} "
                    f"{m['log_posterior']:15.4f} {m['max_grad']:9.1e}"
                )
            if args.compare:
                fraction = results["twopl"]["seconds"] / results["lbfgs"]["seconds"]
                print(f"{name:6} twopl time / lbfgs time: {fraction:.2f}x (lbfgs/twopl {1 / fraction:.1f}x)")


if __name__ == "__main__":
    main()
