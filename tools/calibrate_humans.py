"""Calibrate the simulated-human buzz model (:class:`tools.simulation.HumanModel`) against real human
buzzes, and print the data's figures, the fit and the model's figures before and after::

    .venv/bin/python -m tools.calibrate_humans [--matches 4000] [--seed 0]

Data (``../shared/data``, or ``TOSSUP_SHARED_DATA``; prints a message and exits 0 when absent):

- ``qbj/hsnct2014.qbj.gz``: the 2014 HSNCT, 1,506 played matches of two teams, per player the tossups
  heard and the powers (15), tens (10) and negs (−5): per tossup read, the share powered, the share
  converted, the negs, and the spread of a player's gets per tossup heard across full games;
- ``packets/qbreader_packets_2012_2022.jsonl.gz``: where the power mark ``(*)`` falls (fraction of the
  words) in the PACE NSC sets (high-school nationals like the HSNCT, and the set of the headline run);
  the HSNCT questions themselves are not available, so their power marks are taken to fall alike;
- ``expo/gameplay_2024-10-19``: live human-vs-model games, per sentence the revealed prefix at the
  human buzz and its correctness. Positions are known only as (sentence, words of that sentence): a
  fraction of the question is (sentence + words/sentence length) / sentences per tossup, the latter
  the mean of the 2024 exhibition's tossups (``expo/2024_470``, same organisers and style). Human buzz
  points are censored by the model's correct buzz (the human never got to buzz), so their distribution is
  the Kaplan–Meier estimate (``scipy.stats.ecdf``).

Method: the model's parameters (skill mean and spread, ``early``, ``neg_rate``) are fitted by simulated
moments: 2-team × 4-player matches of 20 tossups are simulated (vectorised, common random numbers;
power marks drawn from the PACE distribution) and a Nelder–Mead search minimises the squared
differences to the HSNCT figures, each scaled by its standard error (data's and simulation's). The
noise of the buzz point is not identified by these figures (it trades off against ``early``); it is
held at its prior value and the gameplay logs are used as the check on the whole buzz-point
distribution (they are too few, sentence-level and censored to fit to).
"""

from __future__ import annotations

import argparse
import csv
import itertools
import math
import os
import sys
from collections.abc import Sequence
from dataclasses import asdict, dataclass, replace
from pathlib import Path

import numpy as np
from scipy import optimize, stats

from formats import expo
from formats.qbj import read_qbj
from formats.qbreader import iter_items
from tools.simulation import HUMANS, UNCALIBRATED, HumanModel

DATA = Path(os.environ.get("TOSSUP_SHARED_DATA", Path(__file__).resolve().parents[2] / "shared" / "data"))
HSNCT = DATA / "qbj" / "hsnct2014.qbj.gz"
PACKETS = DATA / "packets" / "qbreader_packets_2012_2022.jsonl.gz"
GAMEPLAY = DATA / "expo" / "gameplay_2024-10-19"
EXPO = DATA / "expo" / "2024_470"
PLAYERS_PER_TEAM = 4
TOSSUPS = 20
FULL_GAME = 18  # a player's line counts toward the spread when they heard at least this many tossups
MOMENTS = ("power", "conversion", "negs", "player_gets_sd")


@dataclass(frozen=True)
class Moments:
    """Per tossup read: ``power`` share powered, ``conversion`` share answered correctly, ``negs`` negs;
    ``player_gets_sd`` the standard deviation of a full-game player's gets per tossup heard."""

    power: float
    conversion: float
    negs: float
    player_gets_sd: float


def hsnct_moments(path: Path = HSNCT) -> tuple[Moments, Moments, int]:
    """(figures, their standard errors, tossups read) of the 2014 HSNCT's played matches."""
    tossups = powers = tens = negs = 0
    per_match: list[tuple[int, int, int, int]] = []
    rates: list[float] = []
    for m in read_qbj(path).matches:
        read = (m.tossups_read or 0) + (m.overtime_tossups_read or 0)
        if read <= 0:
            continue
        counts = {15: 0, 10: 0, -5: 0}
        for team in m.match_teams:
            for mp in team.match_players:
                got = 0
                for a in mp.answer_counts:
                    if a.value in counts:
                        counts[a.value] += a.number
                    got += a.number if a.value > 0 else 0
                if mp.tossups_heard >= FULL_GAME:
                    rates.append(got / mp.tossups_heard)
        per_match.append((read, counts[15], counts[10], counts[-5]))
        tossups += read
        powers, tens, negs = powers + counts[15], tens + counts[10], negs + counts[-5]
    arr = np.array(per_match, dtype=float)
    # Matches are the independent units: standard errors of ratio estimates by the delta method.
    n = len(arr)

    def ratio_se(num: np.ndarray) -> float:
        r = num.sum() / arr[:, 0].sum()
        return float(np.sqrt(np.sum((num - r * arr[:, 0]) ** 2) / (n - 1) / n) / arr[:, 0].mean())

    sd = float(np.std(rates, ddof=1))
    figures = Moments(powers / tossups, (powers + tens) / tossups, negs / tossups, sd)
    errors = Moments(
        ratio_se(arr[:, 1]),
        ratio_se(arr[:, 1] + arr[:, 2]),
        ratio_se(arr[:, 3]),
        sd / math.sqrt(2 * len(rates)),
    )
    return figures, errors, tossups


def power_fractions(path: Path = PACKETS, set_contains: str = "PACE") -> np.ndarray:
    """Fraction of the words before the power mark, per tossup of the sets whose name contains
    ``set_contains`` that have one (0 = first word, 1 = last)."""
    out = []
    for item in iter_items(path, kind="tossup"):
        words = str(item.get("question") or "").split()
        if set_contains not in str(item.get("set")) or len(words) < 2:
            continue
        mark = next((i for i, w in enumerate(words) if "(*)" in w), None)
        if mark is not None:
            out.append(mark / (len(words) - 1))
    return np.array(out)


def sentences_per_tossup(folder: Path = EXPO) -> float:
    """Mean number of sentences of the exhibition's tossups."""
    counts = [len(q.sentences) for f in expo.question_files(folder) for q in expo.read_questions(f).values()]
    return float(np.mean(counts))


@dataclass(frozen=True)
class Gameplay:
    """Human buzzes of the live games: ``buzzes`` (fraction, correct) per human buzz; ``censored`` the
    fractions at which a tossup ended for the humans without their buzz (the model's correct buzz, or 1
    when nobody got it)."""

    buzzes: tuple[tuple[float, bool], ...]
    censored: tuple[float, ...]


def gameplay(folder: Path = GAMEPLAY, sentences: float | None = None) -> Gameplay:
    """The first human buzz per game and question of the logs (see the module docstring)."""
    sentences = sentences or sentences_per_tossup()

    def fraction(row: dict[str, str], column: str) -> float:
        words = len(row["sentence"].split())
        part = min(1.0, len(row[column].split()) / max(1, words))
        return min(1.0, (int(row["run_id"]) + part) / max(sentences, int(row["run_id"]) + 1))

    buzzes: list[tuple[float, bool]] = []
    censored: list[float] = []
    for log in sorted(folder.glob("*.csv")):
        if log.stem.endswith(("_human", "_model")):
            continue  # the per-side copies of the same rows
        with log.open(encoding="utf-8", newline="") as fh:
            rows = list(csv.DictReader(fh))
        by_question: dict[str, list[dict[str, str]]] = {}
        for row in rows:
            by_question.setdefault(row["qid"], []).append(row)
        for qrows in by_question.values():
            human = [r for r in qrows if r.get("human_buzz", "N/A") != "N/A"]
            if human:
                first = min(human, key=lambda r: fraction(r, "human_buzz"))
                buzzes.append((fraction(first, "human_buzz"), first["human_correctness"] == "True"))
                continue
            model_right = [r for r in qrows if r.get("model_correctness") == "True"]
            censored.append(fraction(model_right[0], "model_buzz") if model_right else 1.0)
    return Gameplay(tuple(buzzes), tuple(censored))


def km_quartiles(buzz_fractions: Sequence[float], censored: Sequence[float]) -> tuple[float, ...]:
    """Kaplan–Meier quartiles (25, 50, 75 %) of a buzz fraction right-censored at ``censored``; nan where
    the estimate never reaches the quantile."""
    ecdf = stats.ecdf(stats.CensoredData(uncensored=list(buzz_fractions), right=list(censored))).cdf
    return tuple(
        float(ecdf.quantiles[np.searchsorted(ecdf.probabilities, q)])
        if ecdf.probabilities[-1] >= q
        else math.nan
        for q in (0.25, 0.5, 0.75)
    )


@dataclass(frozen=True)
class Draws:
    """Common random numbers of a simulation: ``matches`` × ``TOSSUPS`` × players."""

    skill: np.ndarray
    difficulty: np.ndarray
    know: np.ndarray
    noise: np.ndarray
    neg: np.ndarray
    neg_at: np.ndarray
    power: np.ndarray

    @classmethod
    def new(cls, matches: int, power_marks: np.ndarray, seed: int) -> Draws:
        rng = np.random.default_rng(seed)
        players = 2 * PLAYERS_PER_TEAM
        shape = (matches, TOSSUPS, players)
        return cls(
            skill=rng.standard_normal((matches, 1, players)),
            difficulty=rng.standard_normal((matches, TOSSUPS, 1)),
            know=rng.random(shape),
            noise=rng.standard_normal(shape),
            neg=rng.random(shape),
            neg_at=rng.uniform(0.5, 1.0, shape),
            power=rng.choice(power_marks, (matches, TOSSUPS)),
        )


@dataclass(frozen=True)
class Simulated:
    """A simulation's HSNCT figures (:class:`Moments`) and, per tossup, the first buzz's fraction and
    correctness (nan when nobody buzzed)."""

    moments: Moments
    first_buzz: np.ndarray
    first_correct: np.ndarray
    correct_buzzes: np.ndarray


def simulate(model: HumanModel, draws: Draws) -> Simulated:
    """Play ``draws`` with ``model`` (the formulas of :meth:`HumanModel.plan`, on fractions) and
    :func:`resolve` the buzzes."""
    gap = model.skill_mean + model.skill_sd * draws.skill - draws.difficulty
    knows = draws.know < 1.0 / (1.0 + np.exp(-model.slope * gap))
    frac = model.early + (1.0 - model.early) / (1.0 + np.exp(gap)) + model.noise * draws.noise
    frac = np.clip(frac, 0.05, 1.0)
    negs = ~knows & (draws.neg < model.neg_rate)
    return resolve(np.where(knows, frac, np.where(negs, draws.neg_at, np.inf)), knows, draws.power)


def resolve(when: np.ndarray, knows: np.ndarray, power: np.ndarray) -> Simulated:
    """Score buzzes: ``when`` (matches × tossups × 2·4 players, team 1's players first) the fraction
    of the question each player buzzes at (inf: silent), ``knows`` whether that buzz is right,
    ``power`` (matches × tossups) the power mark's fraction. Each team's earliest buzz is its only one
    (a wrong buzz locks the team out); the earlier team's is ruled first, the other team's counts
    only after a neg. A correct buzz before the power mark is a power; a wrong one before the end a neg."""
    m, t, _ = when.shape
    teams = when.reshape(m, t, 2, PLAYERS_PER_TEAM)
    who = teams.argmin(axis=3)  # each team's earliest player
    team_when = np.take_along_axis(teams, who[..., None], axis=3)[..., 0]
    team_knows = np.take_along_axis(knows.reshape(m, t, 2, PLAYERS_PER_TEAM), who[..., None], axis=3)[..., 0]
    first = team_when.argmin(axis=2)
    order = np.stack([first, 1 - first], axis=2)
    at = np.take_along_axis(team_when, order, axis=2)
    right = np.take_along_axis(team_knows, order, axis=2) & np.isfinite(at)
    first_ok = right[..., 0]
    second_ok = ~first_ok & right[..., 1]
    converted = first_ok | second_ok
    got_at = np.where(first_ok, at[..., 0], np.where(second_ok, at[..., 1], np.inf))
    wrong = np.isfinite(at) & ~right & (at < 1.0)
    neg_count = wrong[..., 0].astype(int) + (~first_ok & wrong[..., 1])
    # Gets per player and match: the earliest player of the team that converted.
    team_got = np.where(first_ok, order[..., 0], np.where(second_ok, order[..., 1], 0))
    getter = team_got * PLAYERS_PER_TEAM + np.take_along_axis(who, team_got[..., None], axis=2)[..., 0]
    getter = np.where(converted, getter, -1)
    gets = np.stack([(getter == p).sum(axis=1) for p in range(2 * PLAYERS_PER_TEAM)], axis=1) / t
    moments = Moments(
        float((got_at < power).mean()),
        float(converted.mean()),
        float(neg_count.mean()),
        float(gets.std(ddof=1)),
    )
    first_at = np.where(np.isfinite(at[..., 0]), at[..., 0], np.nan)
    return Simulated(moments, first_at.ravel(), first_ok.ravel(), got_at[converted].ravel())


def _model(theta: np.ndarray, base: HumanModel) -> HumanModel:
    mean, log_sd, early, neg_logit = theta
    return replace(
        base,
        skill_mean=float(mean),
        skill_sd=float(np.exp(log_sd)),
        early=float(np.clip(early, 0.0, 0.95)),
        neg_rate=float(1.0 / (1.0 + np.exp(-neg_logit))),
    )


def fit(target: Moments, errors: Moments, draws: Draws, base: HumanModel) -> tuple[HumanModel, float]:
    """(fitted model, its χ² = Σ ((simulated − target)/se)²), ``base``'s noise and slope kept; se combines the data's
    standard error and the simulation's (the data's is tiny for the rates)."""
    n = draws.skill.shape[0]
    sim_se = Moments(
        0.5 / math.sqrt(n * TOSSUPS), 0.5 / math.sqrt(n * TOSSUPS), 0.5 / math.sqrt(n * TOSSUPS), 0.005
    )
    scale = np.array([math.hypot(getattr(errors, k), getattr(sim_se, k)) for k in MOMENTS])
    goal = np.array([getattr(target, k) for k in MOMENTS])

    def loss(theta: np.ndarray) -> float:
        got = simulate(_model(theta, base), draws).moments
        return float(np.sum(((np.array([getattr(got, k) for k in MOMENTS]) - goal) / scale) ** 2))

    # The loss is piecewise flat (clipping, common random numbers): a coarse grid finds the basin first.
    grid = itertools.product(
        np.linspace(-1.5, 1.0, 6), np.log([0.4, 0.7, 1.0, 1.3]), np.linspace(0.3, 0.8, 6), [-3.0, -2.0, -1.0]
    )
    x0 = min((np.array(x) for x in grid), key=loss)
    best = optimize.minimize(
        loss, x0, method="Nelder-Mead", options={"xatol": 1e-3, "fatol": 1e-2, "maxiter": 2000}
    )
    return _model(best.x, base), float(best.fun)


def _quartiles(values: np.ndarray) -> str:
    values = values[np.isfinite(values)]
    return " / ".join(f"{q:.2f}" for q in np.quantile(values, [0.25, 0.5, 0.75]))


def report(name: str, model: HumanModel, draws: Draws) -> None:
    sim = simulate(model, draws)
    m = sim.moments
    print(
        f"{name:<12} power {m.power:.3f}  conversion {m.conversion:.3f}  negs {m.negs:.3f}  "
        f"player gets sd {m.player_gets_sd:.3f}  first buzz q1/med/q3 {_quartiles(sim.first_buzz)}  "
        f"first buzz right {np.nanmean(np.where(np.isnan(sim.first_buzz), np.nan, sim.first_correct)):.2f}  "
        f"correct buzz q1/med/q3 {_quartiles(sim.correct_buzzes)}"
    )
    print(f"{'':<12} {asdict(model)}")


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--matches", type=int, default=4000, help="simulated matches per evaluation")
    parser.add_argument("--seed", type=int, default=0)
    args = parser.parse_args(argv)
    if not (HSNCT.exists() and PACKETS.exists() and GAMEPLAY.exists()):
        print(f"no shared data under {DATA}: nothing to calibrate")
        return 0
    target, errors, read = hsnct_moments()
    print(
        f"HSNCT 2014 ({read} tossups read): power {target.power:.3f} ± {errors.power:.3f}, conversion "
        f"{target.conversion:.3f} ± {errors.conversion:.3f}, negs {target.negs:.3f} ± {errors.negs:.3f} per "
        f"tossup, full-game player gets/tossup sd {target.player_gets_sd:.3f} ± {errors.player_gets_sd:.3f}"
    )
    marks = power_fractions()
    print(f"PACE power marks ({len(marks)} tossups): at fraction q1/med/q3 {_quartiles(marks)}")
    sentences = sentences_per_tossup()
    play = gameplay(sentences=sentences)
    fractions = [f for f, _ in play.buzzes]
    right = [f for f, ok in play.buzzes if ok]
    km = km_quartiles(fractions, play.censored)
    print(
        f"gameplay 2024-10-19: {len(play.buzzes)} first human buzzes ({len(right)} right, "
        f"{len(right) / len(play.buzzes):.0%}), {len(play.censored)} tossups censored; {sentences:.2f} sentences "
        f"per tossup; human buzz q1/med/q3 observed {_quartiles(np.array(fractions))}, Kaplan–Meier "
        f"{' / '.join(f'{q:.2f}' for q in km)}; right buzzes at {', '.join(f'{f:.2f}' for f in sorted(right))}"
    )
    draws = Draws.new(args.matches, marks, args.seed)
    report("uncalibrated", UNCALIBRATED, draws)
    fitted, chi2 = fit(target, errors, draws, UNCALIBRATED)
    print(f"fit: χ² {chi2:.2f} (4 figures, 4 parameters)")
    check = Draws.new(args.matches, marks, args.seed + 1)
    report("fitted", fitted, check)
    report("in use", HUMANS, check)
    # The buzz-point noise is held, not fitted: how the fit and the buzz points move with it.
    for noise in (0.08, 0.25):
        other, chi2 = fit(target, errors, draws, replace(UNCALIBRATED, noise=noise))
        report(f"noise {noise}", other, check)
        print(f"{'':<12} χ² {chi2:.2f}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
