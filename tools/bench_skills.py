"""Recovery benchmark of the buzzer-race response policies (``irt.races``): ``python -m tools.bench_skills
[--seeds 1-10]``.

Rooms are played without a database or server: each simulated human is the calibrated
:class:`tools.simulation.SimPlayer` (``HUMANS``; true skill s, question difficulty d from
``tools.simulation.difficulty``, knows with probability σ(1.7(s − d)), buzzes later the smaller
s − d, negs now and then) and every tossup of 130 tokens is raced by the engine's rules: each team's
earliest buzz is its only one, the earlier team's is ruled first, the other team's counts after a
neg, a correct buzz ends the tossup. The responses are then what ``irt.pipeline`` stores (one per
seat and per team per tossup: correct, and the buzz position), plus three offline bots that answer
every tossup on their own (σ(1.7(s − d)), no race) so ADVSCORE has a model side. Scenarios, per
seed: ``room8`` 2 teams × 4 on 60 tossups; ``tournament`` 6 teams × 4 in a round robin (5 rounds
of 3 games, one 20-tossup packet per round); ``dominant`` a room8 whose first player has skill
μ + 2.5σ of the population.

Each policy fits the same responses (``irt.pipeline``'s fit: TwoPL, or RaceTwoPL when a response is
censored) and is scored against the truth expressed in the fit's own gauge: the skill axis is fixed
only by the priors (ADVSCORE.md §1), so the true (s, d, γ = 1.7) are moved along β → uβ + v,
θ → uθ + v, γ → γ/u to the point the priors prefer, the rule the fit itself uses
(``TwoPL._gauge_step``). Printed per scenario and policy, means over seeds: Spearman ρ of the humans'
skills, their RMSE (logits), Spearman ρ of item difficulty, the teammates' spread (within-team sd of
the estimates over that of the truth; 1 is right, below 1 the estimates bunch), coverage of the 90 %
and 95 % intervals β ± z·SE (the leaderboard shows the 95 % one), ADVSCORE per item against the
truth's (Pearson r of μ_j and δ_j, Spearman ρ of κ_j) and |μ_D − true μ_D|; for ``dominant``, the
SE of the dominant player's teammates over the other team's (``shadow_se``), and their mean error
minus the other team's (``shadow_bias``; below 0: the teammates are pushed down). The ``oracle`` row
is no policy: the 2PL fitted to whether each seat knew each tossup it heard (hidden by the race),
the ceiling of what the responses can tell about knowledge.
"""

from __future__ import annotations

import argparse
import random
import time
import warnings
from collections.abc import Iterable
from dataclasses import dataclass, field

import numpy as np
from scipy.stats import pearsonr, spearmanr
from sklearn.exceptions import ConvergenceWarning

from irt.advscore import advscore
from irt.races import POLICIES, RaceTwoPL, race_responses
from irt.twopl import TwoPL
from tools.simulation import HUMANS, SimPlayer, difficulty

TOKENS = 130
SLOPE = HUMANS.slope
SKILL_PRIOR, DIFFICULTY_PRIOR, GAMMA_PRIOR = (0.0, 1.0), (0.0, 1.0), (2.0, 1.0)
SCENARIOS = ("room8", "tournament", "dominant")
BOTS = 3
#: Not a policy: the 2PL fitted to what the race hides — whether each seat knew each tossup it
#: heard — the ceiling of any reading of the races' responses for knowledge alone.
ORACLE = "oracle"


@dataclass
class Room:
    """Responses in long format (``irt.pipeline``'s rows) and the truth of one simulated scenario."""

    subjects: list[str] = field(default_factory=list)
    kinds: dict[str, str] = field(default_factory=dict)
    team_of: dict[str, str] = field(default_factory=dict)
    skill: dict[str, float] = field(default_factory=dict)
    item_difficulty: dict[int, float] = field(default_factory=dict)
    # (subject, item, race, correct, share read at the buzz) and the hidden truth (subject, item, knew)
    rows: list[tuple[str, int, int, bool, float]] = field(default_factory=list)
    knows: list[tuple[str, int, bool]] = field(default_factory=list)

    def add(self, subject: str, item: int, race: int, ok: bool, read: float) -> None:
        self.rows.append((subject, item, race, ok, read))


def play_game(
    room: Room, teams: list[list[SimPlayer]], names: list[str], seed: int, qids: Iterable[int], race0: int
) -> int:
    """Race ``qids`` between two teams (module docstring); returns the next race id."""
    race = race0
    for q in qids:
        room.item_difficulty[q] = difficulty(seed, q)
        buzz: list[tuple[int, bool, SimPlayer] | None] = []
        for team in teams:
            plans = [(p.plan(q, TOKENS), p) for p in team]
            room.knows.extend((p.name, q, pl is not None and pl[1]) for pl, p in plans)
            first = min(
                ((pl[0], pl[1], p) for pl, p in plans if pl is not None), key=lambda t: t[0], default=None
            )
            buzz.append(first)
        order = sorted((t for t in range(len(teams)) if buzz[t] is not None), key=lambda t: buzz[t][0])  # type: ignore[index]
        ruled: dict[str, tuple[bool, float]] = {}
        team_ruled: dict[int, tuple[bool, float]] = {}
        for t in order:
            at, knows, player = buzz[t]  # type: ignore[misc]
            read = (at + 1) / TOKENS
            ruled[player.name] = (knows, read)
            team_ruled[t] = (knows, read)
            if knows:
                break
        for t, team in enumerate(teams):
            for p in team:
                ok, read = ruled.get(p.name, (False, float("nan")))
                room.add(p.name, q, race, ok, read)
            ok, read = team_ruled.get(t, (False, float("nan")))
            room.add(names[t], q, race, ok, read)
        race += 1
    return race


def make_players(room: Room, seed: int, team: str, skills: list[float]) -> list[SimPlayer]:
    players = []
    for i, s in enumerate(skills):
        name = f"{team}p{i + 1}"
        players.append(
            SimPlayer(url="", name=name, stream=name, true_skill=s, seed=seed, answers={}, bonus_answers={})
        )
        room.subjects.append(name)
        room.kinds[name], room.team_of[name], room.skill[name] = "human", team, s
    room.subjects.append(team)
    room.kinds[team] = "team"
    return players


def add_bots(room: Room, seed: int) -> None:
    rng = random.Random(f"{seed}:bots")
    for b in range(BOTS):
        name, s = f"bot{b + 1}", HUMANS.skill(rng)
        room.subjects.append(name)
        room.kinds[name], room.skill[name] = "bot", s
        for q, d in room.item_difficulty.items():
            ok = rng.random() < 1.0 / (1.0 + np.exp(-SLOPE * (s - d)))
            room.add(name, q, -1, ok, float("nan"))
            room.knows.append((name, q, ok))


def scenario(name: str, seed: int) -> Room:
    """The responses and truth of one scenario (module docstring) under ``seed``."""
    room = Room()
    rng = random.Random(f"{seed}:{name}")
    if name in ("room8", "dominant"):
        skills = [[HUMANS.skill(rng) for _ in range(4)] for _ in range(2)]
        if name == "dominant":
            skills[0][0] = HUMANS.skill_mean + 2.5 * HUMANS.skill_sd
        teams = [make_players(room, seed, f"{name}t{t + 1}", skills[t]) for t in range(2)]
        play_game(room, teams, [f"{name}t1", f"{name}t2"], seed, range(1000, 1060), 0)
    else:
        n = 6
        names = [f"t{t + 1}" for t in range(n)]
        teams = [make_players(room, seed, names[t], [HUMANS.skill(rng) for _ in range(4)]) for t in range(n)]
        race, ring = 0, list(range(n))
        for r in range(n - 1):  # circle method: one packet of 20 tossups per round
            qids = range(2000 + 20 * r, 2020 + 20 * r)
            for g in range(n // 2):
                a, b = ring[g], ring[n - 1 - g]
                race = play_game(room, [teams[a], teams[b]], [names[a], names[b]], seed, qids, race)
            ring = [ring[0], ring[-1], *ring[1:-1]]
    add_bots(room, seed)
    return room


@dataclass
class Fitted:
    skill: np.ndarray
    se: np.ndarray
    difficulty: np.ndarray
    gamma: np.ndarray


def fit(room: Room, policy: str) -> tuple[Fitted, list[str], list[int]]:
    """The pipeline's fit of ``room`` under ``policy``: (fit, subjects, items) in index order."""
    subjects, items = sorted(set(room.subjects)), sorted(room.item_difficulty)
    s_index, i_index = {s: i for i, s in enumerate(subjects)}, {q: j for j, q in enumerate(items)}
    # As irt.pipeline: the players' and bots' fit leaves the teams' responses out.
    rows = [r for r in room.rows if room.kinds[r[0]] != "team"]
    subj = np.array([s_index[r[0]] for r in rows])
    item = np.array([i_index[r[1]] for r in rows])
    races = np.array([r[2] for r in rows])
    ok = np.array([r[3] for r in rows], dtype=np.int8)
    read = np.array([r[4] for r in rows])
    kw = {
        "skill_prior": SKILL_PRIOR,
        "difficulty_prior": DIFFICULTY_PRIOR,
        "discriminability_prior": GAMMA_PRIOR,
    }
    if policy == ORACLE:
        pairs = [(s_index[k[0]], i_index[k[1]], k[2]) for k in room.knows]
        s_, i_, y_ = (np.array(c) for c in zip(*pairs, strict=True))
        model = TwoPL(**kw).fit(s_, i_, y_.astype(np.int8), len(subjects), len(items))
        return (
            Fitted(model.skill_, model.skill_se_, model.difficulty_, model.discriminability_),
            subjects,
            items,
        )
    resp = race_responses(races, ok, read, policy)
    if resp.censored:
        model = RaceTwoPL(**kw).fit(
            subj[resp.keep], item[resp.keep], resp.columns(), len(subjects), len(items)
        )
    else:
        model = TwoPL(**kw).fit(subj[resp.keep], item[resp.keep], resp.correct, len(subjects), len(items))
    return Fitted(model.skill_, model.skill_se_, model.difficulty_, model.discriminability_), subjects, items


def truth_in_gauge(beta: np.ndarray, theta: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """The true (β, θ, γ = slope) moved to the gauge the fit's priors prefer (module docstring)."""
    gamma = np.full(theta.size, SLOPE)
    return TwoPL._gauge_step(
        beta, theta, gamma, np.ones(beta.size, bool), np.ones(theta.size, bool),
        SKILL_PRIOR[0], 1 / SKILL_PRIOR[1] ** 2, DIFFICULTY_PRIOR[0], 1 / DIFFICULTY_PRIOR[1] ** 2, *GAMMA_PRIOR,
    )  # fmt: skip


METRICS = (
    "rho",
    "rmse",
    "item_rho",
    "spread",
    "cover90",
    "cover95",
    "mu_r",
    "mu_D_err",
    "delta_r",
    "kappa_rho",
)


def score(room: Room, got: Fitted, subjects: list[str], items: list[int], name: str) -> dict[str, float]:
    """The metrics of one fit against the room's truth."""
    known = [i for i, s in enumerate(subjects) if room.kinds[s] != "team"]
    beta_true, theta_true, gamma_true = truth_in_gauge(
        np.array([room.skill[subjects[i]] for i in known]), np.array([room.item_difficulty[q] for q in items])
    )
    truth = dict(zip(known, beta_true, strict=True))
    humans = [i for i in known if room.kinds[subjects[i]] == "human"]
    est, se = got.skill[humans], got.se[humans]
    tru = np.array([truth[i] for i in humans])
    out = {
        "rho": float(spearmanr(est, tru).statistic),
        "rmse": float(np.sqrt(np.mean((est - tru) ** 2))),
        "item_rho": float(spearmanr(got.difficulty, theta_true).statistic),
        "cover90": float(np.mean(np.abs(est - tru) <= 1.6449 * se)),
        "cover95": float(np.mean(np.abs(est - tru) <= 1.96 * se)),
    }
    teams: dict[str, list[int]] = {}
    for k, i in enumerate(humans):
        teams.setdefault(room.team_of[subjects[i]], []).append(k)
    out["spread"] = float(
        sum(est[m].std() for m in teams.values()) / sum(tru[m].std() for m in teams.values())
    )
    is_human = np.array([room.kinds[subjects[i]] == "human" for i in known])
    fitted = advscore(got.skill[known], is_human, got.difficulty, got.gamma)
    true = advscore(beta_true, is_human, theta_true, gamma_true)
    out["mu_r"] = float(pearsonr(fitted.mu, true.mu).statistic)
    out["mu_D_err"] = abs(float(fitted.mu.mean()) - float(true.mu.mean()))
    both = np.isfinite(fitted.delta) & np.isfinite(true.delta)
    out["delta_r"] = (
        float(pearsonr(fitted.delta[both], true.delta[both]).statistic)
        if both.sum() > 2 and np.ptp(fitted.delta[both]) > 0 and np.ptp(true.delta[both]) > 0
        else np.nan
    )
    out["kappa_rho"] = float(spearmanr(fitted.kappa, true.kappa).statistic)
    if name == "dominant":
        lead = next(k for k, i in enumerate(humans) if subjects[i] == "dominantt1p1")
        mates = [k for k in teams["dominantt1"] if k != lead]
        others = teams["dominantt2"]
        out["shadow_se"] = float(se[mates].mean() / se[others].mean())
        out["shadow_bias"] = float((est - tru)[mates].mean() - (est - tru)[others].mean())
    return out


def parse_seeds(text: str) -> list[int]:
    lo, _, hi = text.partition("-")
    return list(range(int(lo), int(hi or lo) + 1))


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--seeds", default="1-10", help="seed range, e.g. 1-10 (the reported table) or 1-3")
    args = parser.parse_args(argv)
    seeds = parse_seeds(args.seeds)
    started = time.perf_counter()
    print(f"seeds {seeds[0]}–{seeds[-1]}; means over seeds")
    head = f"{'scenario':<11}{'policy':<9}" + "".join(f"{m:>10}" for m in METRICS)
    for name in SCENARIOS:
        print(head + ("  shadow_se shadow_bias" if name == "dominant" else ""))
        rooms = [scenario(name, s) for s in seeds]
        for policy in (*POLICIES, ORACLE):
            results = []
            for room in rooms:
                with warnings.catch_warnings():
                    warnings.simplefilter("error", ConvergenceWarning)
                    got, subjects, items = fit(room, policy)
                results.append(score(room, got, subjects, items, name))
            mean = {k: float(np.nanmean([r[k] for r in results])) for k in results[0]}
            line = f"{name:<11}{policy:<9}" + "".join(f"{mean[m]:>10.3f}" for m in METRICS)
            if name == "dominant":
                line += f"{mean['shadow_se']:>11.2f}{mean['shadow_bias']:>12.2f}"
            print(line)
    print(f"({time.perf_counter() - started:.1f} s)")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
