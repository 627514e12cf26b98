"""Calibrate the simulated-human buzz model (:class:`tools.simulation.HumanModel`) against real human
buzzes, and print the data's figures, the fit and the model's figures before and after::

    .venv/bin/python -m tools.calibrate_humans [--matches 4000] [--seed 0] [--headline]
        [--headline-seed 1] [--headline-seeds 1000]

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

Rooms: the position of a tossup's first correct buzz (:class:`FirstCorrect`: quantiles 10/25/50/75/90 %
of the converted tossups, and the share never converted) in a simulated room of 8 (2 teams × 4, the
model in use) and in one team of 4 alone, beside what the data supports: the HSNCT's powers and
conversions (a power is a first correct buzz before the power mark, so power / conversion of the
conversions come before it: that one quantile sits at the marks, whose PACE quantiles are printed),
and the exhibition's first correct human buzz by Kaplan–Meier (a wrong first buzz locks the humans
out: never converted). Two computed lines say where the room departs from each (:func:`hsnct_gap`,
:func:`gameplay_gap`).

Headline room: the humans of ``simulate_match --set 2021-PACE --tossups 20 --seed 1`` (skills drawn
from ``random.Random(seed)`` seat by seat, tossup draws by :meth:`SimPlayer.plan` keyed by seed, seat
and question id, the ids a fresh database gives the set's tossups) played without a server or bot;
their room's median first correct buzz is placed, as a percentile, among the simulated rooms of 20
tossups and among the same 20 tossups under other seeds. ``--headline`` prints only the data, the
rooms and the headline room (no refit: seconds instead of about a minute).
"""

from __future__ import annotations

import argparse
import csv
import itertools
import math
import os
import random
import sys
from collections.abc import Sequence
from dataclasses import asdict, dataclass, replace
from pathlib import Path

import numpy as np
from scipy import optimize, stats

from competition.game import tokenize_tossup
from formats import expo
from formats.qbj import read_qbj
from formats.qbreader import iter_items
from formats.questions import parse_file
from formats.records import TossupRecord
from tools.simulation import HUMANS, UNCALIBRATED, HumanModel, SimPlayer

DATA = Path(os.environ.get("TOSSUP_SHARED_DATA", Path(__file__).resolve().parents[2] / "shared" / "data"))
HSNCT = DATA / "qbj" / "hsnct2014.qbj.gz"
PACKETS = DATA / "packets" / "qbreader_packets_2012_2022.jsonl.gz"
GAMEPLAY = DATA / "expo" / "gameplay_2024-10-19"
EXPO = DATA / "expo" / "2024_470"
PLAYERS_PER_TEAM = 4
TOSSUPS = 20
FULL_GAME = 18  # a player's line counts toward the spread when they heard at least this many tossups
MOMENTS = ("power", "conversion", "negs", "player_gets_sd")
QUANTILES = (0.10, 0.25, 0.50, 0.75, 0.90)  # of the first correct buzz's position
# The headline simulate_match of docs/OPERATIONS.md.
HEADLINE_SET, HEADLINE_TOSSUPS, HEADLINE_SEED = "2021-PACE", 20, 1


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
class FirstCorrect:
    """The distribution of a room's first correct buzz over tossups: ``quantiles`` (at the levels
    asked, :data:`QUANTILES` by default) of its position (fraction of the tossup) over the converted
    tossups, nan when none was converted; ``never`` the share of the ``tossups`` never converted."""

    quantiles: tuple[float, ...]
    never: float
    tossups: int


def first_correct(
    positions: Sequence[float] | np.ndarray, levels: Sequence[float] = QUANTILES
) -> FirstCorrect:
    """:class:`FirstCorrect` of the first correct buzzes' positions, one per tossup (inf or nan: never
    converted). A quantile q is the smallest position p with at least q of the converted tossups at
    or before p (the inverted empirical CDF, as the Kaplan–Meier quantiles of
    :func:`km_first_correct`). Raises ValueError for no tossup."""
    arr = np.asarray(positions, dtype=float).ravel()
    if arr.size == 0:
        raise ValueError("first_correct needs at least one tossup")
    done = np.sort(arr[np.isfinite(arr)])
    quantiles = tuple(
        float(done[max(0, math.ceil(q * done.size - 1e-9) - 1)]) if done.size else math.nan for q in levels
    )
    return FirstCorrect(quantiles, 1.0 - done.size / arr.size, int(arr.size))


def km_first_correct(
    right: Sequence[float], censored: Sequence[float], levels: Sequence[float] = QUANTILES
) -> FirstCorrect:
    """:class:`FirstCorrect` by Kaplan–Meier: ``right`` the positions of first correct buzzes,
    ``censored`` where a tossup's observation ended without one (1: the tossup's end, so never
    converted in its text, e.g. after the team's wrong buzz). ``never`` = 1 − F(1); a quantile q is
    the smallest p with F(p) ≥ q·F(1) (F the estimate of ``scipy.stats.ecdf``); ``tossups`` counts
    both lists."""
    n = len(right) + len(censored)
    if not right:
        return FirstCorrect(tuple(math.nan for _ in levels), 1.0, n)
    cdf = stats.ecdf(stats.CensoredData(uncensored=list(right), right=list(censored))).cdf
    converted = float(cdf.evaluate(1.0))
    quantiles = tuple(
        float(cdf.quantiles[np.searchsorted(cdf.probabilities, q * converted - 1e-12)]) for q in levels
    )
    return FirstCorrect(quantiles, 1.0 - converted, n)


def room_medians(first_at: np.ndarray) -> np.ndarray:
    """Per room (row of ``first_at``, rooms × tossups, inf = never converted), the median
    (:func:`first_correct`'s definition) of its converted tossups' first correct buzz; nan for a room
    that converted none."""
    ordered = np.sort(np.where(np.isfinite(first_at), first_at, np.inf), axis=1)
    done = np.isfinite(ordered).sum(axis=1)
    index = np.maximum(0, np.ceil(0.5 * done - 1e-9).astype(int) - 1)
    median = np.take_along_axis(ordered, index[:, None], axis=1)[:, 0]
    return np.where(done > 0, median, np.nan)


def percentile_of(value: float, reference: Sequence[float] | np.ndarray) -> float:
    """Mid-rank percentile (0–100) of ``value`` among ``reference``'s finite values:
    100·(#below + ½·#equal) / n. Raises ValueError when ``reference`` has none."""
    ref = np.asarray(reference, dtype=float)
    ref = ref[np.isfinite(ref)]
    if ref.size == 0:
        raise ValueError("percentile_of needs a finite reference value")
    return float(100.0 * (np.sum(ref < value) + 0.5 * np.sum(ref == value)) / ref.size)


def z_score(value: float, target: float, *errors: float) -> float:
    """(value − target) in standard errors, the ``errors`` combined in quadrature."""
    return (value - target) / math.sqrt(sum(e * e for e in errors))


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
    correctness (nan when nobody buzzed); ``first_correct_at`` (matches × tossups) the fraction of the
    room's first correct buzz, inf when the tossup was never converted."""

    moments: Moments
    first_buzz: np.ndarray
    first_correct: np.ndarray
    correct_buzzes: np.ndarray
    first_correct_at: np.ndarray


def plans(model: HumanModel, draws: Draws) -> tuple[np.ndarray, np.ndarray]:
    """(when, knows) of every player of ``draws`` under ``model`` (the formulas of
    :meth:`HumanModel.plan`, on fractions): the fraction each player buzzes at (inf: silent) and
    whether that buzz is right; matches × tossups × 2·4 players."""
    gap = model.skill_mean + model.skill_sd * draws.skill - draws.difficulty
    knows = draws.know < 1.0 / (1.0 + np.exp(-model.slope * gap))
    frac = model.early + (1.0 - model.early) / (1.0 + np.exp(gap)) + model.noise * draws.noise
    frac = np.clip(frac, 0.05, 1.0)
    negs = ~knows & (draws.neg < model.neg_rate)
    return np.where(knows, frac, np.where(negs, draws.neg_at, np.inf)), knows


def simulate(model: HumanModel, draws: Draws) -> Simulated:
    """Play ``draws`` with ``model`` (:func:`plans`) and :func:`resolve` the buzzes."""
    when, knows = plans(model, draws)
    return resolve(when, knows, draws.power)


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
    return Simulated(moments, first_at.ravel(), first_ok.ravel(), got_at[converted].ravel(), got_at)


@dataclass(frozen=True)
class HeadlineTossup:
    """A tossup as ``simulate_match`` plays it: its database id, its tokens (``tokenize_tossup``) and
    the power mark's token index (None without one)."""

    question_id: int
    token_count: int
    power_index: int | None


def headline_tossups(
    path: Path = PACKETS, set_name: str = HEADLINE_SET, count: int = HEADLINE_TOSSUPS, first_id: int = 1
) -> list[HeadlineTossup]:
    """The first ``count`` tossups ``simulate_match --set set_name`` plays from the qbreader dump at
    ``path`` (packets in number order, then tossup number, as its ``_questions``), with the ids a fresh
    database gives them: ``write_questions`` creates the set's rows in the file's order (one per
    packet and number, the first one's place kept), numbered from ``first_id``. Raises ValueError
    when the set has no tossup."""
    parsed = parse_file(path, fmt="qbreader", sets=[set_name], skip_invalid=True)
    rows: dict[tuple[str, int], TossupRecord] = {}
    for rec in parsed.tossups:
        rows[rec.packet, rec.number] = rec  # as write_questions: a later duplicate replaces the text
    if not rows:
        raise ValueError(f"no tossup of the set {set_name!r} in {path}")
    ids = {key: first_id + i for i, key in enumerate(rows)}

    def order(key: tuple[str, int]) -> tuple[int, str, int]:
        packet, number = key
        return (int(packet), "", number) if packet.isdigit() else (10**6, packet, number)

    out = []
    for key in sorted(rows, key=order)[:count]:
        rec = rows[key]
        spec = tokenize_tossup(ids[key], rec.question, rec.answer_line)
        out.append(HeadlineTossup(ids[key], len(spec.tokens), spec.power_index))
    return out


def headline_players(seed: int, teams: int = 2, per_team: int = PLAYERS_PER_TEAM) -> list[SimPlayer]:
    """The simulated humans of ``simulate_match --seed seed`` (its ``handle``): skills drawn in seat
    order from ``random.Random(seed)``, team by team; seat ``t<team>p<player>`` is the player's
    random stream, so its tossup draws are keyed by (seed, seat, question id) as live."""
    rng = random.Random(seed)
    players = []
    for t in range(teams):
        skills = [HUMANS.skill(rng) for _ in range(per_team)]
        for p, skill in enumerate(skills):
            seat = f"t{t + 1}p{p + 1}"
            players.append(
                SimPlayer(
                    url="",
                    name=seat,
                    stream=seat,
                    true_skill=skill,
                    seed=seed,
                    answers={},
                    bonus_answers={},
                    team_skill=max(skills),
                    captain=p == 0,
                )
            )
    return players


def room_first_correct(players: Sequence[SimPlayer], tossups: Sequence[HeadlineTossup]) -> np.ndarray:
    """Per tossup, the position (token index / (tokens − 1), the model's fraction) of the room's first
    correct buzz, inf when never converted: each player's :meth:`SimPlayer.plan` (2 teams ×
    ``PLAYERS_PER_TEAM``, team 1 first) ruled by :func:`resolve` (humans only: no bot)."""
    when = np.full((1, len(tossups), len(players)), np.inf)
    knows = np.zeros(when.shape, dtype=bool)
    power = np.full((1, len(tossups)), np.nan)
    for j, t in enumerate(tossups):
        last = max(1, t.token_count - 1)
        if t.power_index is not None:
            power[0, j] = t.power_index / last
        for i, player in enumerate(players):
            plan = player.plan(t.question_id, t.token_count)
            if plan is not None:
                when[0, j, i], knows[0, j, i] = plan[0] / last, plan[1]
    return resolve(when, knows, power).first_correct_at[0]


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


def hsnct_gap(
    room: Moments,
    room_tossups: int,
    target: Moments,
    errors: Moments,
    room_at_level: float,
    mark_median: float,
) -> str:
    """One line: the room's powers and conversions against the HSNCT's, in standard errors (the data's
    and the simulation's binomial one over ``room_tossups``), and where the one quantile the HSNCT pins
    falls: the share p = power / conversion of the conversions come before the power mark, so the
    room's p quantile (``room_at_level``) should sit near the marks (``mark_median``)."""
    zs = {
        name: z_score(
            getattr(room, name),
            getattr(target, name),
            getattr(errors, name),
            math.sqrt(getattr(room, name) * (1 - getattr(room, name)) / room_tossups),
        )
        for name in ("power", "conversion")
    }
    worst = max(zs, key=lambda k: abs(zs[k]))
    verdict = "within 2 se of both" if abs(zs[worst]) < 2 else f"off on {worst} by {zs[worst]:+.1f} se"
    level = target.power / target.conversion
    return (
        f"HSNCT gap: the room powers {room.power:.1%} (HSNCT {target.power:.1%}, {zs['power']:+.1f} se) and "
        f"converts {room.conversion:.1%} ({target.conversion:.1%}, {zs['conversion']:+.1f} se), {verdict}; "
        f"{room.power / room.conversion:.1%} of its conversions precede the mark (HSNCT {level:.1%}) and its "
        f"{level:.1%} quantile, {room_at_level:.2f}, is {room_at_level - mark_median:+.2f} from the PACE marks' "
        f"median {mark_median:.2f}. Nothing in the HSNCT places its later quantiles."
    )


def gameplay_gap(
    exhibition: FirstCorrect,
    team: FirstCorrect,
    room: FirstCorrect,
    play: Gameplay,
    room_wrong: float,
    right_percentile: float,
) -> str:
    """One line: the exhibition's never-converted share against one simulated team's and the room's,
    and what drives it in the figures: the share of its first human buzzes that were wrong (the
    room's ``room_wrong``), the tossups the model's correct buzz cut short and where, and where its
    right buzzes' median falls among the room's conversions (``right_percentile``)."""
    wrong = sum(1 for _, ok in play.buzzes if not ok)
    cut = [c for c in play.censored if c < 1.0]
    right = [f for f, ok in play.buzzes if ok]
    cut_median = float(np.median(cut)) if cut else math.nan
    where = "before" if cut_median < team.quantiles[0] else "after"
    return (
        f"gameplay gap: the exhibition's humans never converted {exhibition.never:.0%} of {exhibition.tossups} "
        f"tossups (Kaplan–Meier) against {team.never:.0%} for one simulated team of 4 and {room.never:.0%} "
        f"for the room: {wrong} of their {len(play.buzzes)} first buzzes were wrong ({wrong / max(1, len(play.buzzes)):.0%}; "
        f"the room's {room_wrong:.0%}), and the model's correct buzz cut {len(cut)} tossups short at a median "
        f"{cut_median:.2f}, {where} the team's 10% quantile {team.quantiles[0]:.2f}; their {len(right)} right "
        f"buzzes' median {np.median(right) if right else math.nan:.2f} is the room's {right_percentile:.0f}th "
        "percentile of conversions."
    )


def _fraction_row(label: str, dist: FirstCorrect, never: str | None = None) -> str:
    cells = " ".join(f"{q:5.2f}" if math.isfinite(q) else "    —" for q in dist.quantiles)
    return f"  {label:<74} {cells}  {never if never is not None else f'{dist.never:6.1%}'}"


def rooms(target: Moments, errors: Moments, marks: np.ndarray, play: Gameplay, check: Draws) -> Simulated:
    """Print the first correct buzz's distribution in a simulated room of 8 (``HUMANS`` on
    ``check``) and one team of 4 beside the HSNCT's powers, the PACE marks and the exhibition's
    Kaplan–Meier estimate, then the gaps (:func:`hsnct_gap`, :func:`gameplay_gap`). Returns the room's
    simulation."""
    sim = simulate(HUMANS, check)
    room = first_correct(sim.first_correct_at)
    when, knows = plans(HUMANS, check)
    alone = when.copy()
    alone[..., PLAYERS_PER_TEAM:] = np.inf  # team 2 silent: one team of 4 with the tossups to itself
    team = first_correct(resolve(alone, knows, check.power).first_correct_at)
    level = target.power / target.conversion
    right = [f for f, ok in play.buzzes if ok]
    # A wrong first buzz locks the humans out: never converted, observed to the tossup's end.
    exhibition = km_first_correct(right, [*play.censored, *(1.0 for _, ok in play.buzzes if not ok)])
    marks_dist = first_correct(marks)
    levels = " ".join(f"{q:5.0%}" for q in QUANTILES)
    print(
        f"{'first correct buzz, fraction of the tossup: quantiles of the converted tossups':<76} {levels}   never"
    )
    matches, tossups = sim.first_correct_at.shape
    print(_fraction_row(f"simulated room of 8 (2 × 4, in use; {matches} matches × {tossups} tossups)", room))
    print(_fraction_row("simulated one team of 4 (the other team silent)", team))
    print(
        _fraction_row(
            f"HSNCT 2014: {level:.1%} of conversions before the power mark (its {level:.0%} quantile)",
            replace(room, quantiles=tuple(math.nan for _ in QUANTILES)),
            f"{1 - target.conversion:6.1%} ± {errors.conversion:.1%}",
        )
    )
    print(
        _fraction_row(f"PACE power marks ({len(marks)} tossups): a power comes before", marks_dist, "     —")
    )
    print(
        _fraction_row(
            f"gameplay 2024-10-19, Kaplan–Meier ({len(right)} right of {exhibition.tossups} tossups)",
            exhibition,
        )
    )
    at_level = first_correct(sim.first_correct_at, [level]).quantiles[0]
    print(
        hsnct_gap(sim.moments, sim.first_correct_at.size, target, errors, at_level, marks_dist.quantiles[2])
    )
    conversions = sim.first_correct_at[np.isfinite(sim.first_correct_at)]
    buzzed = np.isfinite(sim.first_buzz)
    room_wrong = float(1.0 - sim.first_correct[buzzed].mean())
    pct = percentile_of(float(np.median(right)), conversions) if right else math.nan
    print(gameplay_gap(exhibition, team, room, play, room_wrong, pct))
    return sim


def headline(
    sim: Simulated, seed: int, seeds: int, set_name: str = HEADLINE_SET, count: int = HEADLINE_TOSSUPS
) -> None:
    """Print the headline run's room (:func:`headline_tossups`, :func:`headline_players`,
    :func:`room_first_correct`) and where its median and never-converted count fall among the
    simulated rooms of ``sim`` and among the same tossups played under seeds 0 … ``seeds`` − 1."""
    tossups = headline_tossups(set_name=set_name, count=count)
    players = headline_players(seed)
    at = room_first_correct(players, tossups)
    dist = first_correct(at)
    median = float(room_medians(at[None, :])[0])
    never = int(np.sum(~np.isfinite(at)))
    ids = f"{tossups[0].question_id}–{tossups[-1].question_id}"
    print(
        f"headline room: simulate_match --set {set_name} --tossups {count} --seed {seed}, humans only (no bot), "
        f"question ids {ids} as a fresh database numbers them; skills "
        + ", ".join(f"{p.name} {p.true_skill:+.2f}" for p in players)
    )
    print(
        "  first correct buzz (token index of tokens): "
        + ", ".join(
            f"{j + 1} {round(a * (t.token_count - 1))}/{t.token_count}"
            if math.isfinite(a)
            else f"{j + 1} never"
            for j, (a, t) in enumerate(zip(at, tossups, strict=True))
        )
    )
    print(_fraction_row(f"headline room ({count} tossups)", dist))
    medians = room_medians(sim.first_correct_at)
    nevers = np.sum(~np.isfinite(sim.first_correct_at), axis=1)
    same = np.array(
        [room_medians(room_first_correct(headline_players(s), tossups)[None, :])[0] for s in range(seeds)]
    )
    pct = percentile_of(median, medians)
    spread = " / ".join(f"{q:.2f}" for q in np.nanquantile(medians, [0.05, 0.5, 0.95]))
    same_spread = " / ".join(f"{q:.2f}" for q in np.nanquantile(same, [0.05, 0.5, 0.95]))
    verdict = "inside" if 5.0 <= pct <= 95.0 else "OUTSIDE"
    print(
        f"  its median {median:.2f} is at percentile {pct:.1f} of {len(medians)} simulated 8-player rooms of "
        f"{sim.first_correct_at.shape[1]} tossups (their medians 5/50/95%: {spread}), {verdict} "
        f"their 5–95% range; percentile {percentile_of(median, same):.1f} of the same {count} tossups under seeds "
        f"0–{seeds - 1} ({same_spread}); never converted {never} of {count}: percentile "
        f"{percentile_of(never, nevers):.1f} of the rooms' counts (mean {nevers.mean():.2f})"
    )


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--matches", type=int, default=4000, help="simulated matches per evaluation")
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument(
        "--headline",
        action="store_true",
        help="print the data, the rooms' first correct buzz and the headline room only (no refit)",
    )
    parser.add_argument("--headline-seed", type=int, default=HEADLINE_SEED, help="simulate_match's --seed")
    parser.add_argument(
        "--headline-seeds",
        type=int,
        default=1000,
        help="seeds of the same tossups to place the headline room in",
    )
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
    check = Draws.new(args.matches, marks, args.seed + 1)
    if not args.headline:
        draws = Draws.new(args.matches, marks, args.seed)
        report("uncalibrated", UNCALIBRATED, draws)
        fitted, chi2 = fit(target, errors, draws, UNCALIBRATED)
        print(f"fit: χ² {chi2:.2f} (4 figures, 4 parameters)")
        report("fitted", fitted, check)
        report("in use", HUMANS, check)
        # The buzz-point noise is held, not fitted: how the fit and the buzz points move with it.
        for noise in (0.08, 0.25):
            other, chi2 = fit(target, errors, draws, replace(UNCALIBRATED, noise=noise))
            report(f"noise {noise}", other, check)
            print(f"{'':<12} χ² {chi2:.2f}")
    sim = rooms(target, errors, marks, play, check)
    headline(sim, args.headline_seed, args.headline_seeds)
    return 0


if __name__ == "__main__":
    sys.exit(main())
