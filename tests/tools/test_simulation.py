"""The simulated-human model (``tools.simulation``) and its calibration (``tools.calibrate_humans``):
the vectorised simulator used for the fit plays what ``SimPlayer.plan`` plays, and the model in use
reproduces the 2014 HSNCT's figures it was fitted to (the first, uncalibrated model does not)."""

from __future__ import annotations

import random
from pathlib import Path

import numpy as np
import pytest

from tools import calibrate_humans as ch
from tools.simulation import HUMANS, UNCALIBRATED, HumanModel, SimPlayer, difficulty


def test_plan_bounds() -> None:
    model = HumanModel(skill_mean=0.0, skill_sd=1.0, early=0.7, noise=0.0, neg_rate=1.0)
    rng = random.Random(0)
    assert model.plan(rng, 50.0, 101) == (70, True)  # far above the question: buzzes at `early`
    plans = [model.plan(rng, -50.0, 101) for _ in range(200)]  # never knows; always negs (rate 1)
    assert all(p is not None and not p[1] and 50 <= p[0] <= 100 for p in plans)
    silent = HumanModel(skill_mean=0.0, skill_sd=1.0, early=0.7, noise=0.0, neg_rate=0.0)
    assert silent.plan(rng, -50.0, 101) is None


def _sim_player_moments(model: HumanModel, matches: int, tokens: int, power: float) -> ch.Moments:
    """Moments of matches whose buzzes are planned by real SimPlayers (string-seeded, as live)."""
    when = np.full((matches, ch.TOSSUPS, 2 * ch.PLAYERS_PER_TEAM), np.inf)
    knows = np.zeros(when.shape, dtype=bool)
    for m in range(matches):
        rng = random.Random(m)
        players = [
            SimPlayer(
                url="",
                name=f"p{i}",
                true_skill=model.skill(rng),
                seed=m,
                answers={},
                bonus_answers={},
                model=model,
            )
            for i in range(2 * ch.PLAYERS_PER_TEAM)
        ]
        for q in range(ch.TOSSUPS):
            for i, p in enumerate(players):
                plan = p.plan(q, tokens)
                if plan is not None:
                    when[m, q, i], knows[m, q, i] = plan[0] / (tokens - 1), plan[1]
    return ch.resolve(when, knows, np.full(when.shape[:2], power)).moments


def test_vectorised_simulation_plays_what_sim_players_plan() -> None:
    assert difficulty(0, 1) != difficulty(1, 1)
    live = _sim_player_moments(HUMANS, 400, 1001, 0.56)
    fast = ch.simulate(HUMANS, ch.Draws.new(4000, np.array([0.56]), seed=7)).moments
    # 8,000 live tossups: binomial standard errors ≈ 0.005 on the rates.
    assert live.power == pytest.approx(fast.power, abs=0.025)
    assert live.conversion == pytest.approx(fast.conversion, abs=0.025)
    assert live.negs == pytest.approx(fast.negs, abs=0.025)
    assert live.player_gets_sd == pytest.approx(fast.player_gets_sd, abs=0.012)


def test_model_in_use_reproduces_the_hsnct(shared_data: Path) -> None:
    target, _, read = ch.hsnct_moments(shared_data / "qbj" / "hsnct2014.qbj.gz")
    assert read == 32323
    assert (round(target.power, 3), round(target.conversion, 3), round(target.negs, 3)) == (
        0.170,
        0.843,
        0.194,
    )
    marks = ch.power_fractions(shared_data / "packets" / "qbreader_packets_2012_2022.jsonl.gz")
    assert 0.5 < np.median(marks) < 0.6
    draws = ch.Draws.new(3000, marks, seed=11)
    fitted = ch.simulate(HUMANS, draws).moments
    for name, tolerance in (
        ("power", 0.015),
        ("conversion", 0.015),
        ("negs", 0.015),
        ("player_gets_sd", 0.008),
    ):
        assert getattr(fitted, name) == pytest.approx(getattr(target, name), abs=tolerance), name
    first = ch.simulate(UNCALIBRATED, draws).moments
    assert first.power > 0.5  # the model before calibration powered most tossups


def test_gameplay_logs(shared_data: Path) -> None:
    expo = shared_data / "expo"
    sentences = ch.sentences_per_tossup(expo / "2024_470")
    assert 4.0 < sentences < 6.0
    play = ch.gameplay(expo / "gameplay_2024-10-19", sentences)
    assert (len(play.buzzes), sum(ok for _, ok in play.buzzes), len(play.censored)) == (26, 5, 86)
    assert all(0.0 < f <= 1.0 for f, _ in play.buzzes) and all(0.0 < f <= 1.0 for f in play.censored)
    q1, _, _ = ch.km_quartiles([f for f, _ in play.buzzes], play.censored)
    assert 0.5 < q1 < 0.8
