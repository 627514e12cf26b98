"""The writing workshop's loop, measured (issue 32, item 5)::

    .venv/bin/python -m tools.bench_workshop [--tossups 300] [--keystrokes 40] [--players 8] [--seed 1]
        [--json out.json]

1. **Per-keystroke cost**: every built-in bot this server has (``buzzer.workshop.load_bots``: the
   TF-IDF reference bot, the Wikipedia bot, the ensemble and neural guessers when trained) analyses a
   150-word tossup (the first 150-word-or-longer 2021–22 tossup of the shared dump, cut at 150 words)
   as the page asks after a pause in typing (``buzzer.bots.workshop.analyse``: every prefix, leave-
   one-sentence-out, drivers); ``--keystrokes`` times, each with one word changed. p50/p99 wall time
   and CPU time per analysis (all bots together, and per bot), on this machine as it is (2 shared
   cores).
2. **The prediction against the live bot**: ``--tossups`` held-out 2021–22 tossups (drawn with seed 0,
   as ``tools.bench_bot_eval``), each bot's workshop prediction (``workshop.predict``) against the live
   bot — the SDK guesser ``runbot`` seats (``ModelGuesser`` with the model's threshold and minimum
   words; ``WikiGuesser``) asked on every word as the client asks (``tools.bot_evaluation.replay``) —
   in matches against ``--players`` simulated humans (``tools.simulation``'s population, planned as
   ``simulate_match``'s players): Pearson and Spearman correlation of the buzz word where both buzz,
   agreement on whether it buzzes at all, and the same on the tossups whose race the bot reaches
   (no human buzzed right before it). Also each bot's prediction against each other live bot.
3. **"Stumps every bot in the first lines" and ADVSCORE, on the plays of 2**: Tossup's own fit of those
   plays. Each tossup is raced once by every simulated human and every bot together (:func:`race`: each
   subject its own team, one buzz each, ruled in word order, a same-word tie the bot's as in 2, the
   first right buzz ends it); the races become the responses ``irt.pipeline`` stores and fits
   (:func:`room_responses`: correct, the share read at the buzz), fitted with the pipeline's default
   settings (``irt.pipeline.DEFAULT_SETTINGS``: the ``censored`` reading of silent subjects, so
   ``irt.races.RaceTwoPL``; its priors) and scored by ``irt.advscore`` with the humans against the bots
   (:func:`fit_advscore`). There are no expert data, so δ comes from H(1), the humans with skill above
   their mean + 1 sd, as the pipeline does without ``experts``. The workshop's target state of each
   tossup (``workshop.analyse``) is then the predictor of its ADVSCORE (:func:`predictor_metrics`):
   precision, recall, accuracy, AUC and the point-biserial r, with bootstrap intervals, for
   ADVSCORE > 0 and for ADVSCORE above its median. Every item's μ has the sign of β*_H0 − β*_M0
   (ADVSCORE.md Eq. 3: γ_j > 0, σ increasing), so in one fit ADVSCORE > 0 holds for every tossup or
   for none and only its size can be predicted. The simulated humans' difficulty of a tossup is drawn
   from the seed and its id, independent of its text (``tools.simulation``): this measures the bot
   side of ADVSCORE only.
4. **The same on the ADVSCORE paper's TrickMe questions** (``advscore/text/Trickme_text.csv``, quizbowl
   tossups written against a QA system) with the authors' per-item ADVSCORE
   (``advscore/conformance/saved_authors_trickme.csv``): all 97 are positive there, so the target is
   an ADVSCORE above the median.

Prints a message and exits 0 when ``../shared/data`` or every bot is absent; asserts nothing.
"""

from __future__ import annotations

import argparse
import csv
import json
import os
import sys
import time
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np
from numpy.typing import ArrayLike, NDArray
from scipy.stats import pearsonr, spearmanr

from irt.advscore import AdvScoreResult, advscore
from irt.races import RaceTwoPL, race_responses
from irt.twopl import TwoPL

#: Bootstrap resamples of the tossups for the predictor's intervals.
RESAMPLES = 2000


def _setup() -> None:
    os.environ.setdefault("DJANGO_SETTINGS_MODULE", "config.settings")
    import django

    django.setup()


def percentile(values: list[float], q: float) -> float:
    return float(np.percentile(np.asarray(values), q)) if values else float("nan")


def keystroke_cost(
    bots: list[Any], text_words: list[str], answer_line: str, category: str, n: int
) -> dict[str, Any]:
    """Wall and CPU ms per analysis of the 150-word text, each time one word changed."""
    from buzzer.bots import workshop

    variants = ["clue", "work", "figure", "entity", "thing", "item", "piece", "subject"]
    wall, cpu, per_bot = [], [], {b.name: [] for b in bots}
    workshop.analyse(bots, " ".join(text_words), answer_line, category)  # warm caches, as a page does
    for k in range(n):
        words = list(text_words)
        words[len(words) // 2] = variants[k % len(variants)]
        w0, c0 = time.perf_counter(), time.process_time()
        result = workshop.analyse(bots, " ".join(words), answer_line, category)
        wall.append((time.perf_counter() - w0) * 1000)
        cpu.append((time.process_time() - c0) * 1000)
        for r in result["bots"]:
            per_bot[r["name"]].append(r["elapsed_ms"])
    return {
        "words": len(text_words),
        "analyses": n,
        "all_bots": {
            "p50_ms": percentile(wall, 50),
            "p99_ms": percentile(wall, 99),
            "cpu_p50_ms": percentile(cpu, 50),
            "cpu_p99_ms": percentile(cpu, 99),
        },
        "per_bot": {
            k: {"p50_ms": percentile(v, 50), "p99_ms": percentile(v, 99)} for k, v in per_bot.items()
        },
    }


def live_guesser(bot: Any) -> Any:
    """The SDK guesser ``runbot`` seats for this workshop bot's model."""
    from django.conf import settings

    from buzzer.bots.adapter import ModelGuesser
    from buzzer.bots.wiki import WikiGuesser

    if bot.name == "wiki":
        return WikiGuesser(bot.threshold, bot.min_tokens, cache_dir=settings.BOT_CACHE_DIR)
    if bot.name == "neural":
        return ModelGuesser(bot.model, bot.threshold, bot.min_tokens)
    return ModelGuesser(bot.model, bot.model.threshold, bot.model.min_tokens)


def first_live_buzz(answers: list[Any]) -> tuple[int, bool] | None:
    """The live bot's one buzz on a tossup (token index, ruled right), None when it never buzzes."""
    for a in answers:
        if a.buzz:
            return a.token_index, a.correct
    return None


def tossup_text(t: Any) -> str:
    return " ".join(w for w in t.tokens if isinstance(w, str))


@dataclass(frozen=True)
class Plays:
    """The held-out tossups as part 2 plays them, lists aligned with ``tossups``: ``humans`` per tossup
    key the simulated humans' buzzes (``tools.bot_evaluation.simulated_humans``), ``predicted`` per bot
    name the workshop's predicted buzz word (None: no buzz), ``live`` per bot name its live buzz
    (:func:`first_live_buzz`); ``seconds`` the wall time of predicting and replaying."""

    tossups: list[Any]
    humans: dict[str, tuple[Any, ...]]
    predicted: dict[str, list[int | None]]
    live: dict[str, list[tuple[int, bool] | None]]
    seconds: float


def play(bots: list[Any], tossups: list[Any], players: int, seed: int) -> Plays:
    """Part 2's plays: each bot's workshop prediction and live replay on every tossup, and ``players``
    simulated humans drawn with ``seed``."""
    from buzzer.bots import workshop
    from tools.bot_evaluation import replay, simulated_humans

    humans = simulated_humans(tossups, players, seed)
    predicted: dict[str, list[int | None]] = {b.name: [] for b in bots}
    live: dict[str, list[tuple[int, bool] | None]] = {b.name: [] for b in bots}
    guessers = {b.name: live_guesser(b) for b in bots}
    started = time.perf_counter()
    for i, t in enumerate(tossups):
        try:
            prediction = workshop.predict(bots, tossup_text(t), t.answer_line, t.category)
        except workshop.WorkshopError:
            prediction = {b.name: {"buzz_index": None} for b in bots}
        for b in bots:
            predicted[b.name].append(prediction[b.name]["buzz_index"])
            live[b.name].append(first_live_buzz(replay(guessers[b.name], t, i, every=1)[0]))
    return Plays(tossups, humans, predicted, live, round(time.perf_counter() - started, 1))


def prediction_accuracy(bots: list[Any], plays: Plays) -> dict[str, Any]:
    live = {name: [None if b is None else b[0] for b in buzzes] for name, buzzes in plays.live.items()}
    reached: dict[str, list[bool]] = {b.name: [] for b in bots}
    for i, t in enumerate(plays.tossups):
        right_humans = [h.token_index for h in plays.humans[t.key] if h is not None and h.correct]
        first_human = min(right_humans) if right_humans else None
        for b in bots:
            index = live[b.name][i]
            # the bot's buzz is played when no human buzzed right before it (a same-word tie is the bot's)
            reached[b.name].append(index is not None and (first_human is None or index <= first_human))
    out: dict[str, Any] = {"tossups": len(plays.tossups), "seconds": plays.seconds, "pairs": {}}
    for p in bots:
        for q in bots:
            out["pairs"][f"{p.name} predicted vs {q.name} live"] = agreement(
                plays.predicted[p.name], live[q.name], reached[q.name]
            )
    return out


def agreement(pred: list[int | None], live: list[int | None], reached: list[bool]) -> dict[str, Any]:
    both = [(a, b) for a, b in zip(pred, live, strict=True) if a is not None and b is not None]
    played = [
        (a, b) for a, b, r in zip(pred, live, reached, strict=True) if a is not None and b is not None and r
    ]
    same = sum((a is None) == (b is None) for a, b in zip(pred, live, strict=True))

    def corr(pairs: list[tuple[int, int]]) -> dict[str, Any]:
        if len(pairs) < 3 or len({a for a, _ in pairs}) < 2 or len({b for _, b in pairs}) < 2:
            return {"n": len(pairs), "pearson": None, "spearman": None, "mean_abs_words": None, "exact": None}
        x, y = np.array(pairs, dtype=float).T
        return {
            "n": len(pairs),
            "pearson": float(pearsonr(x, y)[0]),
            "spearman": float(spearmanr(x, y)[0]),
            "mean_abs_words": float(np.mean(np.abs(x - y))),
            "exact": float(np.mean(x == y)),
        }

    return {
        "buzz_or_not_agree": same / len(pred) if pred else None,
        "both_buzz": corr(both),
        "race_reached": corr(played),
    }


Buzz = tuple[int, bool]
"""A subject's one buzz on a tossup: (0-based token index, whether the judge rules it right)."""


def race(buzzes: Sequence[Buzz | None]) -> list[tuple[bool, int | None]]:
    """One tossup raced by subjects that are each their own team and buzz at most once: ``buzzes`` per
    subject (None: silent). Buzzes are ruled in token order, a same-word tie in subject order; a wrong
    one (a neg) locks out only its subject; the first right one ends the tossup, so the buzzes planned
    after it are never made. Returns per subject ``(correct, position)`` as
    ``irt.pipeline.match_responses`` stores a seat's response: correct when its buzz was ruled right,
    position its buzz's token index, None when it made none."""
    out: list[tuple[bool, int | None]] = [(False, None)] * len(buzzes)
    for token, i, right in sorted((b[0], i, b[1]) for i, b in enumerate(buzzes) if b is not None):
        out[i] = (bool(right), token)
        if right:
            break
    return out


def room_responses(
    rooms: Sequence[tuple[Sequence[Buzz | None], int]],
) -> tuple[NDArray[np.intp], NDArray[np.intp], NDArray[np.intp], NDArray[np.int8], NDArray[np.float64]]:
    """Long-format responses of tossups each raced once (:func:`race`) by the same subjects: ``rooms``
    per tossup (its subjects' buzzes, in one subject order for all; its token count). Returns
    ``(subjects, items, races, correct, read)``, arrays (n_subjects · n_tossups,): subject and tossup
    indexes, the race id (the tossup's index), 0/1, and the share of the tossup read at the buzz,
    (token index + 1) / tokens, NaN without a buzz — ``irt.pipeline._races``'s columns, the input of
    ``irt.races.race_responses``. Raises ValueError when the rooms' subject counts differ, a token
    count is below 1 or a buzz lies outside the tossup."""
    n = {len(buzzes) for buzzes, _ in rooms}
    if len(n) > 1:
        raise ValueError(f"every tossup needs the same subjects, got {sorted(n)} of them")
    subjects, items, correct, read = [], [], [], []
    for j, (buzzes, tokens) in enumerate(rooms):
        if tokens < 1 or any(b is not None and not 0 <= b[0] < tokens for b in buzzes):
            raise ValueError(f"tossup {j}: a buzz lies outside its {tokens} tokens")
        for i, (ok, at) in enumerate(race(buzzes)):
            subjects.append(i)
            items.append(j)
            correct.append(ok)
            read.append(np.nan if at is None else (at + 1) / tokens)
    item_index = np.array(items, dtype=np.intp)
    return (
        np.array(subjects, dtype=np.intp),
        item_index,
        item_index.copy(),
        np.array(correct, dtype=np.int8),
        np.array(read, dtype=float),
    )


def fit_advscore(
    subjects: ArrayLike,
    items: ArrayLike,
    races: ArrayLike,
    correct: ArrayLike,
    read: ArrayLike,
    is_human: ArrayLike,
    settings: Mapping[str, Any],
) -> tuple[TwoPL, AdvScoreResult]:
    """The fit ``irt.pipeline`` runs on live responses, without its store: ``settings``' response
    policy (``unbuzzed``, ``irt.races.race_responses``), ``RaceTwoPL`` when a response is censored
    (else ``TwoPL``) with its priors, then ADVSCORE (``irt.advscore``, ``experts`` as set) of the humans
    (``is_human`` bool (n_subjects,)) against the rest. Responses as :func:`room_responses` returns
    them. Returns the fitted model (β, θ, γ in logits) and the per-item ADVSCORE. Raises ValueError as
    those functions do (no human or no model, bad responses)."""
    human = np.asarray(is_human, dtype=bool)
    resp = race_responses(races, correct, read, settings["unbuzzed"])
    priors: dict[str, Any] = {
        "skill_prior": tuple(settings["skill_prior"]),
        "difficulty_prior": tuple(settings["difficulty_prior"]),
        "discriminability_prior": tuple(settings["discriminability_prior"]),
    }
    model = RaceTwoPL(**priors) if resp.censored else TwoPL(**priors)
    keep = resp.keep
    model.fit(
        np.asarray(subjects)[keep],
        np.asarray(items)[keep],
        resp.columns() if resp.censored else resp.correct,
        n_subjects=len(human),
        n_items=int(np.asarray(items).max()) + 1,
    )
    result = advscore(
        model.skill_, human, model.difficulty_, model.discriminability_, experts=bool(settings["experts"])
    )
    return model, result


def _auc_and_r(
    predicted: NDArray[np.bool_], target: NDArray[np.bool_], score: NDArray[np.float64]
) -> tuple[NDArray[np.float64], NDArray[np.float64]]:
    """Per row of (n_rows, n) arrays: the binary predictor's AUC 0.5·(1 + TPR − FPR) for ``target``
    and its Pearson r with ``score`` (point-biserial); NaN where a class or a variance is missing."""
    p, t = predicted.astype(float), target.astype(float)
    pc = p - p.mean(axis=1, keepdims=True)
    sc = score - score.mean(axis=1, keepdims=True)
    with np.errstate(invalid="ignore", divide="ignore"):
        tpr = (p * t).sum(axis=1) / t.sum(axis=1)
        fpr = (p * (1 - t)).sum(axis=1) / (1 - t).sum(axis=1)
        r = (pc * sc).sum(axis=1) / np.sqrt((pc**2).sum(axis=1) * (sc**2).sum(axis=1))
    return 0.5 * (1 + tpr - fpr), r


def predictor_metrics(
    predicted: ArrayLike, score: ArrayLike, threshold: float, *, resamples: int = 2000, seed: int = 0
) -> dict[str, Any]:
    """How well the binary ``predicted`` (n,) foretells the target ``score`` > ``threshold`` (score
    (n,), e.g. ADVSCORE per tossup). Returns ``n``; ``base_rate`` (share of the target) and
    ``predicted_rate``; ``precision`` P(target | predicted) and ``recall`` P(predicted | target);
    ``accuracy`` and ``majority_accuracy`` (always guessing the commoner class); ``auc`` of the
    binary predictor, 0.5·(1 + TPR − FPR); ``point_biserial``, its Pearson r with ``score``; and
    ``auc_ci``, ``r_ci``: 95 % percentile bootstrap intervals over ``resamples`` resamples of the
    items (numpy, ``seed``; resamples where the figure is undefined are left out). A figure undefined
    on the data (a class that never occurs, a constant) is None. Raises ValueError for inputs that
    are empty or of different shapes."""
    pred = np.asarray(predicted, dtype=bool)
    s = np.asarray(score, dtype=float)
    if pred.ndim != 1 or pred.shape != s.shape or not pred.size:
        raise ValueError(
            f"predicted {pred.shape} and score {s.shape} must be non-empty and 1-D of one length"
        )
    target = s > threshold
    auc, r = (float(x[0]) for x in _auc_and_r(pred[None], target[None], s[None]))
    rows = np.random.default_rng(seed).integers(0, s.size, (resamples, s.size))
    auc_b, r_b = _auc_and_r(pred[rows], target[rows], s[rows])

    def share(of: NDArray[np.bool_], among: NDArray[np.bool_]) -> float | None:
        return float(of[among].mean()) if among.any() else None

    def ci(point: float, draws: NDArray[np.float64]) -> list[float] | None:
        draws = draws[np.isfinite(draws)]
        if not np.isfinite(point) or not draws.size:
            return None
        return [float(q) for q in np.percentile(draws, [2.5, 97.5])]

    base = float(target.mean())
    return {
        "n": int(s.size),
        "threshold": threshold,
        "base_rate": base,
        "predicted_rate": float(pred.mean()),
        "precision": share(target, pred),
        "recall": share(pred, target),
        "accuracy": float((pred == target).mean()),
        "majority_accuracy": max(base, 1 - base),
        "auc": auc if np.isfinite(auc) else None,
        "auc_ci": ci(auc, auc_b),
        "point_biserial": r if np.isfinite(r) else None,
        "r_ci": ci(r, r_b),
    }


def stumps(state: str) -> bool:
    """Whether a workshop target state says every bot is stumped in the first lines."""
    return state != "giveaway_early"


def played_advscore(bots: list[Any], plays: Plays, resamples: int, seed: int) -> dict[str, Any]:
    """Part 3: Tossup's ADVSCORE of the plays (module docstring) and how the workshop's target state
    predicts it."""
    from buzzer.bots import workshop
    from irt.pipeline import DEFAULT_SETTINGS

    started = time.perf_counter()
    names = [b.name for b in bots]
    rooms = [
        ([plays.live[n][i] for n in names] + list(plays.humans[t.key]), len(t.tokens))
        for i, t in enumerate(plays.tossups)
    ]
    n_humans = len(rooms[0][0]) - len(names)
    is_human = np.array([False] * len(names) + [True] * n_humans)
    model, result = fit_advscore(*room_responses(rooms), is_human, DEFAULT_SETTINGS)
    states: list[str | None] = []
    for t in plays.tossups:
        try:
            states.append(
                workshop.analyse(bots, tossup_text(t), t.answer_line, t.category)["target"]["state"]
            )
        except workshop.WorkshopError:
            states.append(None)
    adv = result.advscore
    skill = model.skill_
    out: dict[str, Any] = {
        "tossups": len(rooms),
        "humans": n_humans,
        "unbuzzed": DEFAULT_SETTINGS["unbuzzed"],
        "experts": DEFAULT_SETTINGS["experts"],
        "bot_skill": {n: float(skill[k]) for k, n in enumerate(names)},
        "human_skill_mean": float(skill[is_human].mean()),
        "skill_h0": result.skill_h0,
        "skill_m0": result.skill_m0,
        "h1": int(result.h1.sum()),
        "delta_reason": result.delta_reason,
        "dataset": {k: (v if np.isfinite(v) else None) for k, v in result.dataset().items()},
        "states": {s: states.count(s) for s in sorted({s for s in states if s is not None})},
        "no_state": states.count(None),
    }
    usable = np.array([s is not None for s in states]) & np.isfinite(adv)
    if usable.any():
        s = np.array([stumps(x) for x, u in zip(states, usable, strict=True) if u and x is not None])
        a = adv[usable]
        out["scored"] = int(usable.sum())
        out["share_positive_advscore"] = float((a > 0).mean())
        out["share_stumping"] = float(s.mean())
        out["mean_advscore_stumping"] = float(a[s].mean()) if s.any() else None
        out["mean_advscore_not"] = float(a[~s].mean()) if (~s).any() else None
        out["advscore_positive"] = predictor_metrics(s, a, 0.0, resamples=resamples, seed=seed)
        out["advscore_above_median"] = predictor_metrics(
            s, a, float(np.median(a)), resamples=resamples, seed=seed
        )
    out["seconds"] = round(time.perf_counter() - started, 1)
    return out


def advscore_check(bots: list[Any], data: Path, resamples: int, seed: int) -> dict[str, Any]:
    """Part 4: the workshop's target state on the TrickMe questions against the authors' ADVSCORE."""
    from buzzer.bots import workshop

    text_file = data / "advscore" / "text" / "Trickme_text.csv"
    scores_file = data / "advscore" / "conformance" / "saved_authors_trickme.csv"
    if not text_file.is_file() or not scores_file.is_file():
        return {"missing": f"{text_file} or {scores_file}"}
    with text_file.open(encoding="utf-8") as f:
        rows = list(csv.DictReader(f))
    with scores_file.open(encoding="utf-8") as f:
        advscore_of = {r["item_id"]: float(r["advscore_saved"]) for r in csv.DictReader(f)}
    stumped, scores = [], []
    for i, row in enumerate(rows):
        item = f"q{i + 1}"  # the responses' item order is the text file's row order
        if item not in advscore_of or not row["Question"].strip() or not row["Answer"].strip():
            continue
        try:
            result = workshop.analyse(bots, row["Question"], row["Answer"])
        except workshop.WorkshopError:
            continue
        stumped.append(stumps(result["target"]["state"]))
        scores.append(advscore_of[item])
    s, a = np.array(stumped), np.array(scores)
    out: dict[str, Any] = {
        "questions": len(a),
        "positive_advscore": int((a > 0).sum()),
        "stumps_every_bot_in_first_lines": int(s.sum()),
    }
    if 0 < s.sum() < len(s):
        out["mean_advscore_stumping"] = float(a[s].mean())
        out["mean_advscore_not"] = float(a[~s].mean())
        out["advscore_above_median"] = predictor_metrics(
            s, a, float(np.median(a)), resamples=resamples, seed=seed
        )
    return out


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--tossups", type=int, default=300)
    parser.add_argument("--keystrokes", type=int, default=40)
    parser.add_argument("--players", type=int, default=8)
    parser.add_argument("--seed", type=int, default=1)
    parser.add_argument("--json")
    args = parser.parse_args(argv)
    _setup()
    from django.conf import settings

    from buzzer.workshop import load_bots
    from tools.bot_evaluation import packet_tossups

    data = Path(settings.SHARED_DATA_DIR)
    packets = data / "packets" / "qbreader_packets_2012_2022.jsonl.gz"
    if not packets.is_file():
        print(f"no shared data at {data}: nothing to measure")
        return 0
    started = time.perf_counter()
    bots, problems = load_bots()
    print(
        f"bots: {', '.join(b.label for b in bots) or 'none'} (loaded in {time.perf_counter() - started:.0f} s)"
    )
    for p in problems:
        print(f"  missing: {p}")
    if not bots:
        return 0
    held = packet_tossups(packets, min_year=2021, max_year=2022, sample=args.tossups, seed=0)
    long = next(t for t in packet_tossups(packets, min_year=2021, max_year=2022) if len(t.tokens) >= 150)
    cost = keystroke_cost(
        bots,
        [w for w in long.tokens if isinstance(w, str)][:150],
        long.answer_line,
        long.category,
        args.keystrokes,
    )
    a = cost["all_bots"]
    print(
        f"\nPer-keystroke analysis of a {cost['words']}-word tossup ({cost['analyses']} analyses, one word changed each):"
    )
    print("| bots | p50 wall ms | p99 wall ms | p50 CPU ms | p99 CPU ms |\n|---|---|---|---|---|")
    print(
        f"| all ({len(bots)}) | {a['p50_ms']:.0f} | {a['p99_ms']:.0f} | {a['cpu_p50_ms']:.0f} | {a['cpu_p99_ms']:.0f} |"
    )
    for name, v in cost["per_bot"].items():
        print(f"| {name} | {v['p50_ms']:.0f} | {v['p99_ms']:.0f} | | |")
    plays = play(bots, held, args.players, args.seed)
    accuracy = prediction_accuracy(bots, plays)
    print(
        f"\nWorkshop prediction vs the live bot, {accuracy['tossups']} held-out 2021–22 tossups, {args.players} simulated humans (seed {args.seed}), {accuracy['seconds']} s:"
    )
    print(
        "| prediction vs live | same buzz/no buzz | both buzz: n | Pearson | Spearman | mean abs. words | exact | race reached: n | Pearson |"
    )
    print("|---|---|---|---|---|---|---|---|---|")

    def f(x: Any, d: str = ".3f") -> str:
        return "—" if x is None else format(x, d)

    for pair, v in accuracy["pairs"].items():
        b, r = v["both_buzz"], v["race_reached"]
        print(
            f"| {pair} | {f(v['buzz_or_not_agree'], '.1%')} | {b['n']} | {f(b['pearson'])} | {f(b['spearman'])} | {f(b['mean_abs_words'], '.1f')} | {f(b['exact'], '.1%')} | {r['n']} | {f(r['pearson'])} |"
        )

    def metrics_table(rows: dict[str, dict[str, Any]]) -> None:
        print(
            "| target | n | base rate | predicted | precision | recall | accuracy | majority class | AUC [95 % CI] | point-biserial r [95 % CI] |"
        )
        print("|---|---|---|---|---|---|---|---|---|---|")
        for name, m in rows.items():
            auc, r = f(m["auc"]), f(m["point_biserial"])
            auc += "" if m["auc_ci"] is None else " [{:.3f}, {:.3f}]".format(*m["auc_ci"])
            r += "" if m["r_ci"] is None else " [{:.3f}, {:.3f}]".format(*m["r_ci"])
            print(
                f"| {name} | {m['n']} | {f(m['base_rate'], '.1%')} | {f(m['predicted_rate'], '.1%')} | {f(m['precision'], '.1%')} | {f(m['recall'], '.1%')} | {f(m['accuracy'], '.1%')} | {f(m['majority_accuracy'], '.1%')} | {auc} | {r} |"
            )

    played = played_advscore(bots, plays, RESAMPLES, args.seed)
    d = played["dataset"]
    print(
        f'\n"Stumps every bot in the first lines" and ADVSCORE, Tossup\'s own fit of these plays '
        f"({played['tossups']} tossups, each raced once by the {played['humans']} simulated humans and the "
        f"{len(bots)} bots together; unbuzzed={played['unbuzzed']}; no expert data: δ over H(1), the "
        f"humans above their mean + 1 sd, {played['h1']} of {played['humans']}), {played['seconds']} s:"
    )
    print(
        "skill β: "
        + ", ".join(f"{n} {v:.2f}" for n, v in played["bot_skill"].items())
        + f"; humans' mean {played['human_skill_mean']:.2f}; β*_H0 {played['skill_h0']:.2f}, β*_M0 {played['skill_m0']:.2f}; "
        f"μ_D {f(d['mu'])}, δ_D {f(d['delta'])}, κ_D {f(d['kappa'])}, ADVSCORE_D {f(d['advscore'])}"
    )
    if "scored" not in played:
        print(f"no ADVSCORE per tossup: {played['delta_reason']}")
    else:
        print(
            f"ADVSCORE > 0 on {played['share_positive_advscore']:.1%} of the {played['scored']} tossups the workshop "
            f"analyses ({played['no_state']} it cannot): every tossup's μ has the sign of β*_H0 − β*_M0 "
            "(ADVSCORE.md Eq. 3), so in one fit all are positive or none is; target states "
            f"{played['states']}; stumps every bot in the first lines: {played['share_stumping']:.1%}; mean "
            f"ADVSCORE {f(played['mean_advscore_stumping'])} of those, {f(played['mean_advscore_not'])} of the others."
        )
        above = played["advscore_above_median"]
        metrics_table(
            {
                "ADVSCORE > 0": played["advscore_positive"],
                f"ADVSCORE > its median {above['threshold']:.4f}": above,
            }
        )
    print(
        "The simulated humans' difficulty of a tossup is drawn from the seed and its id, independent of its "
        "text: this measures the bot side of ADVSCORE only; what a text-aware human model would add is "
        "not measured."
    )
    trickme = advscore_check(bots, data, RESAMPLES, args.seed)
    print(
        "\n\"Stumps every bot in the first lines\" and the ADVSCORE paper's TrickMe questions (the authors' "
        f"per-item ADVSCORE; all positive, so the target is its size): {json.dumps({k: v for k, v in trickme.items() if k != 'advscore_above_median'})}"
    )
    if "advscore_above_median" in trickme:
        metrics_table({"ADVSCORE > its median": trickme["advscore_above_median"]})
    if args.json:
        Path(args.json).write_text(
            json.dumps(
                {
                    "bots": [b.name for b in bots],
                    "problems": problems,
                    "cost": cost,
                    "accuracy": accuracy,
                    "advscore_played": played,
                    "advscore_trickme": trickme,
                },
                indent=1,
            )
        )
    return 0


if __name__ == "__main__":
    sys.exit(main())
