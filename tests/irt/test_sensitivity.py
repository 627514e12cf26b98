"""Leave-one-bot-out ADVSCORE_D and bot-ranking stability (irt.sensitivity, pure)."""

from __future__ import annotations

import numpy as np
import pytest

from irt.advscore import advscore
from irt.sensitivity import leave_one_bot_out
from irt.twopl import TwoPL


def simulate(n_humans: int = 30, n_bots: int = 6, n_items: int = 80, seed: int = 3):
    rng = np.random.default_rng(seed)
    skill = np.concatenate([rng.normal(0.5, 1.0, n_humans), np.linspace(-1.5, 1.5, n_bots)])
    theta, gamma = rng.normal(0, 1, n_items), rng.gamma(4, 0.4, n_items)
    s, i = np.meshgrid(np.arange(skill.size), np.arange(n_items), indexing="ij")
    s, i = s.ravel(), i.ravel()
    p = 1 / (1 + np.exp(-gamma[i] * (skill[s] - theta[i])))
    correct = (rng.random(p.size) < p).astype(int)
    is_human = np.arange(skill.size) < n_humans
    return s, i, correct, is_human


def test_each_leave_out_is_a_refit_without_that_bot() -> None:
    s, i, r, human = simulate()
    sens = leave_one_bot_out(s, i, r, human, ~human)
    bots = np.flatnonzero(~human)
    assert [x.bot for x in sens.leave_out] == bots.tolist()
    b = int(bots[2])
    keep = s != b
    refit = TwoPL().fit(s[keep], i[keep], r[keep], n_subjects=human.size, n_items=80)
    groups = np.ones(human.size, dtype=bool)
    groups[b] = False
    expected = advscore(refit.skill_[groups], human[groups], refit.difficulty_, refit.discriminability_)
    assert sens.leave_out[2].advscore == pytest.approx(expected.dataset()["advscore"], abs=1e-12)
    full = TwoPL().fit(s, i, r, n_subjects=human.size, n_items=80)
    assert sens.full["advscore"] == pytest.approx(
        advscore(full.skill_, human, full.difficulty_, full.discriminability_).dataset()["advscore"]
    )
    # Bots ~1 logit apart with 80 items each: leaving one out keeps the others' order.
    assert all(x.tau == pytest.approx(1.0) for x in sens.leave_out)
    lo, hi = sens.advscore_range
    assert lo <= hi and lo == min(x.advscore for x in sens.leave_out)


def test_item_mask_and_full_fit_reuse() -> None:
    s, i, r, human = simulate(seed=5)
    mask = np.arange(80) >= 10
    full = TwoPL().fit(s, i, r, n_subjects=human.size, n_items=80)
    reused = leave_one_bot_out(s, i, r, human, ~human, full_fit=full, item_mask=mask)
    fresh = leave_one_bot_out(s, i, r, human, ~human, item_mask=mask)
    assert reused.full == fresh.full and reused.leave_out == fresh.leave_out
    unmasked = leave_one_bot_out(s, i, r, human, ~human)
    assert reused.full["advscore"] != pytest.approx(unmasked.full["advscore"])


def test_teams_are_fitted_but_kept_out_of_the_groups() -> None:
    s, i, r, human = simulate(n_bots=3)
    team = np.zeros(human.size, dtype=bool)
    team[0] = True  # pretend the first subject is a team: neither human nor bot
    sens = leave_one_bot_out(s, i, r, human & ~team, ~human)
    full = TwoPL().fit(s, i, r, n_subjects=human.size, n_items=80)
    keep = ~team
    expected = advscore(full.skill_[keep], human[keep], full.difficulty_, full.discriminability_)
    assert sens.full["advscore"] == pytest.approx(expected.dataset()["advscore"])


def test_degenerate_pools() -> None:
    s, i, r, human = simulate(n_bots=1)
    one = leave_one_bot_out(s, i, r, human, ~human)
    assert one.leave_out == [] and "one bot" in (one.reason or "")
    assert np.isnan(one.advscore_range[0]) and np.isnan(one.min_tau)
    s, i, r, human = simulate(n_bots=2)
    two = leave_one_bot_out(s, i, r, human, ~human)
    assert len(two.leave_out) == 2 and all(np.isnan(x.tau) for x in two.leave_out)
    with pytest.raises(ValueError, match="at least one human and one bot"):
        leave_one_bot_out(s, i, r, np.zeros_like(human), ~human)
    with pytest.raises(ValueError, match="disjoint"):
        leave_one_bot_out(s, i, r, human, np.ones_like(human))
