"""The distractor probe as an evaluation (issue 32, item 2): a bot on original tossups and on the same
tossups with one distractor sentence inserted (``irt.probe``, AddSent-style), paired, in the manner
of Jia & Liang (2017)'s tables. Used by ``manage.py probe_bot``; docs/BOT_EVALUATION.md.

Per tossup one distractor (``irt.probe.DistractorPool``, donors: the question set being probed),
inserted at each of ``positions`` — one probed copy per position. The bot is replayed on every copy
(``tools.bot_evaluation.replay``: every ``every`` words, the last word, and the exact points below)
and judged by the project's judge. Per copy and tossup:

- **accuracy at 25/50/75/100 %**: whether its guess is right once that share of the *original*
  words is read (in a probed copy: the same original words, plus the distractor when it stands
  before them), as ``tools.bench_bots`` measures it;
- **expected score** (``irt.botmetrics``, QANTA's leaderboard definition) against the simulated
  humans of ``tools.bot_evaluation.simulated_humans``, planned on the original tossup: a human buzz
  after the insertion point moves by the distractor's length (humans are assumed not to be fooled —
  the field's premise, and Jia & Liang's: people still answer the probed questions);
- **QANTA 2026 score** (``irt.qanta26``: 10 + 3/2/1 by quartile + power 2 for a correct commit, of 15;
  the tossup share, not deflated);
- **buzz precision** and frequency; **buzz shift**: over the tossups where it buzzed on both copies,
  the change in *original* words read at its buzz (a buzz inside the distractor counts the original
  words before it); **fooled**: a buzz (or the final answer) that the distractor's answer line accepts.

Differences (probed − original) come with 95 % paired bootstrap intervals: the tossups resampled with
replacement ``resamples`` times (numpy, ``seed``), the same draws for every figure and position.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np
from tossup_bot import Guesser

from competition.game.specs import strip_marks
from competition.vocabulary import Verdict
from irt import qanta26
from irt.botmetrics import HumanBuzz, TossupRun, evaluate, fraction_token
from irt.probe import POSITIONS, Distractor, DistractorPool, probed
from scoring.judge import judge
from tools import bot_evaluation as be

FRACTIONS = (0.25, 0.5, 0.75, 1.0)
VARIANTS = ("original", *POSITIONS)
Progress = Callable[[int, int], None]


@dataclass(frozen=True)
class Variant:
    """One copy of a tossup: ``tossup`` (its text with the distractor), the distractor's first
    display token ``start`` and its ``length`` in tokens (0 for the original)."""

    tossup: be.EvalTossup
    start: int
    length: int

    def to_probed(self, original_index: int) -> int:
        """The token of this copy that shows the original's token ``original_index``."""
        return original_index + (self.length if original_index >= self.start else 0)

    def original_read(self, index: int) -> int:
        """Original tokens read once this copy's token ``index`` (0-based) is shown."""
        if index < self.start:
            return index + 1
        return self.start if index < self.start + self.length else index + 1 - self.length


@dataclass(frozen=True)
class ProbedTossup:
    """A tossup, its distractor and its copies by variant name (:data:`VARIANTS` asked for)."""

    original: be.EvalTossup
    distractor: Distractor
    variants: dict[str, Variant]


def donor_pool(tossups: Sequence[be.EvalTossup]) -> DistractorPool:
    """The distractor donors of a question set (its tossups' text, answer line and category)."""
    return DistractorPool.build((t.key, t.question, t.answer_line, t.category) for t in tossups)


def make_probes(
    tossups: Sequence[be.EvalTossup],
    pool: DistractorPool,
    *,
    seed: int = 1,
    positions: Sequence[str] = POSITIONS,
    progress: Progress | None = None,
) -> tuple[list[ProbedTossup], list[str]]:
    """The probed copies of each tossup (``positions`` of :data:`POSITIONS`), and the keys of the
    tossups given no distractor (no donor of their category offers a sentence free of their answer).
    Raises ValueError for an unknown position."""
    unknown = [p for p in positions if p not in POSITIONS]
    if unknown or not positions:
        raise ValueError(f"positions must be some of {', '.join(POSITIONS)}, got {list(positions)}")
    out, skipped = [], []
    for i, t in enumerate(tossups):
        d = pool.distractor(t.key, t.question, t.answer_line, t.category, seed)
        if d is None:
            skipped.append(t.key)
        else:
            variants = {"original": Variant(t, 0, 0)}
            for position in positions:
                p = probed(t.question, d.sentence, position)
                start = len(strip_marks(p.question.split()[: p.word_start])[0])
                copy = be.EvalTossup(
                    f"{t.key}#{position}", None, t.external_id, p.question, t.answer_line, t.category,
                    tuple(strip_marks(p.question.split())[0]),
                )  # fmt: skip
                variants[position] = Variant(copy, start, len(copy.tokens) - len(t.tokens))
            out.append(ProbedTossup(t, d, variants))
        if progress is not None:
            progress(i + 1, len(tossups))
    return out, skipped


def _accepts(answer_line: str, guess: str) -> bool:
    return bool(guess) and judge(answer_line, guess).verdict == Verdict.ACCEPT


def replay_probes(
    guesser: Guesser,
    probes: Sequence[ProbedTossup],
    *,
    every: int = 2,
    players: int = 8,
    seed: int = 1,
    progress: Progress | None = None,
) -> dict[str, dict[str, np.ndarray]]:
    """Replay ``guesser`` on every copy; per variant, arrays over the tossups (in order):
    ``accuracy`` (n × len(FRACTIONS) bool), ``expected_score``, ``qanta26`` (points / 15), ``buzzed``,
    ``correct`` (a correct buzz), ``position`` (original words read at the buzz; NaN without one),
    ``fooled`` (buzzed with the distractor's answer), ``final_fooled`` (final answer the distractor's)."""
    humans = be.simulated_humans([p.original for p in probes], players, seed)
    rules = qanta26.load_computer_scoring("qanta26")
    names = list(probes[0].variants) if probes else ["original"]
    out: dict[str, dict[str, list[Any]]] = {v: {} for v in names}
    for i, p in enumerate(probes):
        n = len(p.original.tokens)
        for name, v in p.variants.items():
            t = v.tossup
            points = [v.to_probed(fraction_token(f, n)) for f in FRACTIONS]
            answers, _, _ = be.replay(guesser, t, i, every, also=[k + 1 for k in points])
            mapped = tuple(
                None if h is None else HumanBuzz(v.to_probed(h.token_index), h.correct)
                for h in (humans[p.original.key])
            )
            run = TossupRun(t.key, len(t.tokens), tuple(answers), mapped)
            outcome = evaluate([run], fractions=(1.0,)).outcomes[0]
            score = qanta26.tossup_points(
                [qanta26.Decision(a.token_index, a.buzz, a.correct) for a in answers], len(t.tokens), rules
            )
            buzz = run.buzz
            final = answers[-1].guess if answers else ""
            row = out[name]
            for key, value in (
                ("accuracy", [bool((a := run.answer_at(k)) and a.correct) for k in points]),
                ("expected_score", outcome.expected_score),
                ("qanta26", score.points / rules.max_tossup_points),
                ("buzzed", buzz is not None),
                ("correct", bool(buzz and buzz.correct)),
                ("position", math.nan if buzz is None else float(v.original_read(buzz.token_index))),
                ("in_distractor", bool(buzz) and v.start <= buzz.token_index < v.start + v.length),
                ("fooled", bool(buzz) and _accepts(p.distractor.donor_answer_line, buzz.guess)),
                ("final_fooled", _accepts(p.distractor.donor_answer_line, final)),
            ):
                row.setdefault(key, []).append(value)
        if progress is not None:
            progress(i + 1, len(probes))
    return {name: {k: np.asarray(v) for k, v in row.items()} for name, row in out.items()}


def _ci(values: np.ndarray) -> tuple[float, float]:
    finite = values[np.isfinite(values)]
    if not len(finite):
        return math.nan, math.nan
    low, high = np.percentile(finite, [2.5, 97.5])
    return float(low), float(high)


def _mean(values: np.ndarray) -> float | None:
    return float(values.mean()) if len(values) else None


def _ratio(num: np.ndarray, den: np.ndarray) -> float | None:
    return float(num.sum() / den.sum()) if den.sum() else None


def _clean(value: float | None) -> float | None:
    return None if value is None or not math.isfinite(value) else value


def paired(
    base: np.ndarray,
    other: np.ndarray,
    draws: np.ndarray,
    *,
    base_den: np.ndarray | None = None,
    other_den: np.ndarray | None = None,
) -> dict[str, float | None]:
    """``original``, ``probed``, ``difference`` (probed − original) and its 95 % paired bootstrap
    interval ``low``/``high`` over the resampled tossups ``draws`` (resamples × n indexes). A mean
    of ``base``/``other``, or with ``*_den`` the ratio Σ value / Σ den (precision: correct / buzzed;
    a shift: Σ shift·both / Σ both)."""
    if base_den is None or other_den is None:
        a, b = _mean(base), _mean(other)
        diffs = other[draws].mean(axis=1) - base[draws].mean(axis=1)
    else:
        a, b = _ratio(base, base_den), _ratio(other, other_den)
        with np.errstate(invalid="ignore", divide="ignore"):
            diffs = other[draws].sum(axis=1) / other_den[draws].sum(axis=1) - base[draws].sum(
                axis=1
            ) / base_den[draws].sum(axis=1)
    low, high = _ci(diffs)
    return {
        "original": _clean(a),
        "probed": _clean(b),
        "difference": None if a is None or b is None else b - a,
        "low": _clean(low),
        "high": _clean(high),
    }


def summarise(
    arrays: dict[str, dict[str, np.ndarray]], *, resamples: int = 2000, seed: int = 1
) -> dict[str, Any]:
    """The report's figures from :func:`replay_probes`: ``original`` (accuracy per fraction, expected
    score, QANTA 2026 share, buzz precision and frequency, mean original words read at the buzz) and,
    per probed position, each of them paired with the original (:func:`paired`) plus ``buzz_shift``
    (words; tossups buzzed on both, ``both``), the shares ``fooled``, ``final_fooled`` and
    ``in_distractor``."""
    base = arrays["original"]
    n = len(base["buzzed"])
    draws = np.random.default_rng(seed).integers(0, n, size=(resamples, n))
    buzzed = base["buzzed"].astype(float)
    original = {
        "accuracy": [float(x) for x in base["accuracy"].mean(axis=0)],
        "expected_score": float(base["expected_score"].mean()),
        "qanta26": float(base["qanta26"].mean()),
        "buzz_precision": _ratio(base["correct"].astype(float), buzzed),
        "buzz_frequency": float(buzzed.mean()),
        "mean_buzz_position": _clean(float(np.nanmean(base["position"])) if buzzed.any() else None),
    }
    probes: dict[str, Any] = {}
    for name, other in arrays.items():
        if name == "original":
            continue
        both = (base["buzzed"] & other["buzzed"]).astype(float)
        shift = np.where(both > 0, np.nan_to_num(other["position"]) - np.nan_to_num(base["position"]), 0.0)
        probes[name] = {
            "accuracy": [
                paired(base["accuracy"][:, j].astype(float), other["accuracy"][:, j].astype(float), draws)
                for j in range(len(FRACTIONS))
            ],
            "expected_score": paired(base["expected_score"], other["expected_score"], draws),
            "qanta26": paired(base["qanta26"], other["qanta26"], draws),
            "buzz_precision": paired(
                base["correct"].astype(float),
                other["correct"].astype(float),
                draws,
                base_den=buzzed,
                other_den=other["buzzed"].astype(float),
            ),
            "buzz_frequency": paired(buzzed, other["buzzed"].astype(float), draws),
            "buzz_shift": {
                **paired(np.zeros(n), shift, draws, base_den=both, other_den=both),
                "both": int(both.sum()),
            },
            "fooled": float(other["fooled"].mean()),
            "final_fooled": float(other["final_fooled"].mean()),
            "in_distractor": float(other["in_distractor"].mean()),
        }
    return {"original": original, "probes": probes}


def examples(probes: Sequence[ProbedTossup], count: int = 3) -> list[dict[str, str]]:
    """A few distractors for people to read (the JSON file only): tossup key, answer, the sentence,
    the donor and its answer."""
    return [
        {
            "tossup": p.original.key,
            "answer_line": p.original.answer_line,
            "sentence": p.distractor.sentence,
            "donor": p.distractor.donor_key,
            "donor_answer": p.distractor.donor_answer,
        }
        for p in probes[:count]
    ]


# --- output ------------------------------------------------------------------------------------


def _pct(x: float | None) -> str:
    return "—" if x is None else f"{x:.1%}"


def _diff(d: dict[str, Any], scale: float, fmt: str) -> str:
    if d["difference"] is None:
        return "—"
    lo = "?" if d["low"] is None else format(d["low"] * scale, fmt)
    hi = "?" if d["high"] is None else format(d["high"] * scale, fmt)
    return f"{format(d['difference'] * scale, fmt)} [{lo}, {hi}]"


def table(report: dict[str, Any]) -> str:
    """The report as a markdown table, one row for the original and one per probed position:
    each figure, then probed − original with its 95 % paired bootstrap interval in brackets
    (accuracy, precision and frequency in points; scores per tossup; shift in original words)."""
    head = [
        "variant",
        *(f"acc. {f:.0%}" for f in FRACTIONS),
        "exp. score",
        "QANTA26",
        "precision",
        "frequency",
        "buzz shift (words)",
        "fooled",
    ]
    o = report["original"]
    rows = [
        [
            "original",
            *(_pct(a) for a in o["accuracy"]),
            f"{o['expected_score']:+.3f}",
            f"{o['qanta26']:.3f}",
            _pct(o["buzz_precision"]),
            _pct(o["buzz_frequency"]),
            "—" if o["mean_buzz_position"] is None else f"at {o['mean_buzz_position']:.1f}",
            "",
        ]
    ]
    for name, p in report["probes"].items():
        rows.append(
            [
                name,
                *(f"{_pct(a['probed'])} ({_diff(a, 100, '+.1f')})" for a in p["accuracy"]),
                f"{p['expected_score']['probed']:+.3f} ({_diff(p['expected_score'], 1, '+.3f')})",
                f"{p['qanta26']['probed']:.3f} ({_diff(p['qanta26'], 1, '+.3f')})",
                f"{_pct(p['buzz_precision']['probed'])} ({_diff(p['buzz_precision'], 100, '+.1f')})",
                f"{_pct(p['buzz_frequency']['probed'])} ({_diff(p['buzz_frequency'], 100, '+.1f')})",
                f"{_diff(p['buzz_shift'], 1, '+.1f')} (n={p['buzz_shift']['both']})",
                f"{p['fooled']:.1%} / {p['final_fooled']:.1%}",
            ]
        )
    lines = ["| " + " | ".join(head) + " |", "|" + "---|" * len(head)]
    lines += ["| " + " | ".join(r) + " |" for r in rows]
    return "\n".join(lines)


def run(
    guesser: Guesser,
    tossups: Sequence[be.EvalTossup],
    *,
    pool: DistractorPool | None = None,
    seed: int = 1,
    positions: Sequence[str] = POSITIONS,
    every: int = 2,
    players: int = 8,
    resamples: int = 2000,
    progress: Progress | None = None,
) -> dict[str, Any]:
    """The whole probe of one guesser on ``tossups`` (donors: ``pool``, default the tossups
    themselves): the JSON report — settings, ``tossups`` probed, ``skipped`` (no distractor),
    ``same_type`` (share of distractors whose donor names the same answer type), :func:`summarise`'s
    figures and :func:`examples`. Raises ValueError for an unknown position, every < 1 or no tossup
    that could be probed."""
    if every < 1:
        raise ValueError(f"every must be ≥ 1, got {every}")
    probes, skipped = make_probes(tossups, pool or donor_pool(tossups), seed=seed, positions=positions)
    if not probes:
        raise ValueError(f"none of the {len(tossups)} tossups could be given a distractor")
    arrays = replay_probes(guesser, probes, every=every, players=players, seed=seed, progress=progress)
    return {
        "seed": seed,
        "every": every,
        "players": players,
        "resamples": resamples,
        "positions": list(positions),
        "fractions": list(FRACTIONS),
        "tossups": len(probes),
        "skipped": len(skipped),
        "same_type": sum(p.distractor.same_type for p in probes) / len(probes),
        **summarise(arrays, resamples=resamples, seed=seed),
        "examples": examples(probes),
    }
