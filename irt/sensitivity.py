"""Adversary sensitivity of ADVSCORE_D: how much an event's adversarialness depends on which bots
played (pure NumPy/SciPy, no Django).

For each bot (model subject) b in turn, the 2PL model is **refitted** on the responses without b's
and ADVSCORE_D recomputed with b out of the model pool M, and the ranking of the remaining bots by
skill is compared with the full fit's by Kendall τ (the leave-one-adversary-out evaluation of the
AFLite-evaluation paper, applied to ADVSCORE of Sung et al. 2025). A refit rather than reusing the
full fit's item parameters and dropping b from M(0): b's responses also moved every θ_j and γ_j it
answered, and a fit takes milliseconds at event scale (10 bots × ~200 items: ~10 refits), so the
honest version costs nothing worth saving.
"""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np
from numpy.typing import ArrayLike, NDArray
from scipy.stats import kendalltau
from sklearn.base import clone

from irt.advscore import advscore
from irt.twopl import TwoPL


@dataclass(frozen=True)
class LeaveOneOut:
    """ADVSCORE_D and its parts without one bot.

    bot: subject index of the bot left out; mu, kappa, delta, advscore: dataset means over the
    selected items (NaN where undefined, e.g. δ with an empty H(1)); tau: Kendall τ between the
    remaining bots' skills in the full fit and in the refit (NaN with fewer than two bots left).
    """

    bot: int
    mu: float
    kappa: float
    delta: float
    advscore: float
    tau: float


@dataclass(frozen=True)
class Sensitivity:
    """Full-fit dataset means (``full``: {mu, kappa, delta, advscore}) and one ``LeaveOneOut`` per
    bot (``leave_out``, in subject order); empty with a ``reason`` when fewer than two bots played."""

    full: dict[str, float]
    leave_out: list[LeaveOneOut] = field(default_factory=list)
    reason: str | None = None

    @property
    def advscore_range(self) -> tuple[float, float]:
        """(min, max) of leave-one-bot-out ADVSCORE_D; (NaN, NaN) when there is none."""
        values = np.array([r.advscore for r in self.leave_out], dtype=float)
        values = values[np.isfinite(values)]
        return (float(values.min()), float(values.max())) if values.size else (np.nan, np.nan)

    @property
    def min_tau(self) -> float:
        """The least stable bot ranking over the leave-outs (NaN when no τ is defined)."""
        taus = np.array([r.tau for r in self.leave_out], dtype=float)
        taus = taus[np.isfinite(taus)]
        return float(taus.min()) if taus.size else np.nan


def _dataset(
    skill: NDArray[np.float64],
    is_human: NDArray[np.bool_],
    in_groups: NDArray[np.bool_],
    model: TwoPL,
    item_mask: NDArray[np.bool_],
    experts: bool,
) -> dict[str, float]:
    result = advscore(
        skill[in_groups], is_human[in_groups], model.difficulty_, model.discriminability_, experts=experts
    )
    return result.dataset(item_mask)


def leave_one_bot_out(
    subjects: ArrayLike,
    items: ArrayLike,
    correct: ArrayLike,
    is_human: ArrayLike,
    is_bot: ArrayLike,
    *,
    model: TwoPL | None = None,
    full_fit: TwoPL | None = None,
    item_mask: ArrayLike | None = None,
    experts: bool = False,
) -> Sensitivity:
    """Leave-one-bot-out refits of ADVSCORE_D and the stability of the bot ranking.

    subjects, items, correct: long-format responses (n_responses,) as for ``TwoPL.fit``;
    is_human, is_bot: bool masks (n_subjects,) of the ADVSCORE groups (a subject that is neither,
    e.g. a team, is fitted but kept out of H and M); model: an unfitted TwoPL whose settings every
    fit uses (default ``TwoPL()``), cloned for each fit; full_fit: that model already fitted to all
    the responses, to skip refitting it; item_mask: bool (n_items,) of the items in
    the dataset means (default all, e.g. False for flagged tossups); experts: the all-humans
    ADVSCORE variant. Fits n_bots models (+ 1 without ``full_fit``). Raises ValueError when there is no human or no bot,
    or for the reasons ``TwoPL.fit`` gives.
    """
    s = np.asarray(subjects, dtype=np.intp)
    i = np.asarray(items, dtype=np.intp)
    r = np.asarray(correct)
    human = np.asarray(is_human, dtype=bool)
    bot = np.asarray(is_bot, dtype=bool)
    if human.shape != bot.shape or (human & bot).any():
        raise ValueError("is_human and is_bot must be disjoint masks of the same shape")
    if not human.any() or not bot.any():
        raise ValueError("sensitivity needs at least one human and one bot")
    n_subjects = human.size
    n_items = int(i.max()) + 1 if item_mask is None else np.asarray(item_mask).size
    mask = np.ones(n_items, dtype=bool) if item_mask is None else np.asarray(item_mask, dtype=bool)
    base = model if model is not None else TwoPL()

    full_model = full_fit or clone(base).fit(s, i, r, n_subjects=n_subjects, n_items=n_items)
    in_groups = human | bot
    full = _dataset(full_model.skill_, human, in_groups, full_model, mask, experts)
    bots = np.flatnonzero(bot)
    if bots.size < 2:
        return Sensitivity(full, reason="one bot only: leaving it out leaves no model to compare with")

    out = []
    for b in bots:
        keep = s != b
        refit = clone(base).fit(s[keep], i[keep], r[keep], n_subjects=n_subjects, n_items=n_items)
        groups = in_groups.copy()
        groups[b] = False
        means = _dataset(refit.skill_, human, groups, refit, mask, experts)
        others = bots[bots != b]
        tau = (
            float(kendalltau(full_model.skill_[others], refit.skill_[others]).statistic)
            if others.size >= 2
            else np.nan
        )
        out.append(LeaveOneOut(int(b), means["mu"], means["kappa"], means["delta"], means["advscore"], tau))
    return Sensitivity(full, out)
