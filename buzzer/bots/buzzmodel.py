"""The learned buzzer of the reference bot (pure; no Django): per-prefix features → P(guess right).

A guesser ranks answers on every revealed prefix; whether to buzz is a separate decision. The buzzer
is a logistic regression on features of one prefix (:func:`feature_rows`: the top cosine, its
margin to the second, how much of the tossup is revealed, the tossup's category, what is known about
the guessed answer), followed by an isotonic map fitted on *other* tossups so that the confidence
it returns is the probability that the guess is right (calibrated). The buzz threshold is chosen on
those same calibration tossups by replaying the live policy — buzz on the first prefix whose
confidence reaches the threshold — and taking the lowest threshold whose buzzes are right at least
``target_precision`` of the time (:func:`choose_threshold`).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np
from sklearn.isotonic import IsotonicRegression
from sklearn.linear_model import LogisticRegression
from sklearn.preprocessing import StandardScaler

#: The numeric features, in column order (category indicators follow).
FEATURES = (
    "top1",
    "margin",
    "top2",
    "log_seen",
    "fraction",
    "top1_x_fraction",
    "margin_x_fraction",
    "log_class_size",
    "category_match",
    "mentioned",
)


@dataclass(frozen=True)
class PrefixScores:
    """What the guesser saw on a batch of n prefixes (arrays of shape (n,)).

    ``top1``/``top2``: the best and second-best class cosines; ``seen``: tokens revealed (≥ 1);
    ``token_count``: tokens of the whole tossup (≥ seen); ``class_size``: training documents (per 10,000) of the
    guessed class; ``category_match``: 1 when the guessed class's usual category is the tossup's,
    0 when it differs, 0.5 when either is unknown; ``mentioned``: share of the guess's words already
    in the revealed text (a guess the question names is rarely its answer); ``category``: the
    tossup's category index in the model's category list (−1: other or unknown); ``extra``
    (optional, (n, k)): more feature columns a guesser adds (the ensemble's), after the category
    indicators."""

    top1: np.ndarray
    top2: np.ndarray
    seen: np.ndarray
    token_count: np.ndarray
    class_size: np.ndarray
    category_match: np.ndarray
    mentioned: np.ndarray
    category: np.ndarray
    extra: np.ndarray | None = None


def feature_rows(scores: PrefixScores, n_categories: int) -> np.ndarray:
    """The design matrix (n, len(FEATURES) + n_categories [+ k]) of a batch: FEATURES, then one
    indicator per known category (all zero for an unknown one: −1 or ≥ n_categories), then the
    ``extra`` columns if any."""
    fraction = np.clip(scores.seen / np.maximum(scores.token_count, 1), 0.0, 1.0)
    margin = scores.top1 - scores.top2
    numeric = np.column_stack(
        [
            scores.top1,
            margin,
            scores.top2,
            np.log1p(scores.seen),
            fraction,
            scores.top1 * fraction,
            margin * fraction,
            np.log1p(scores.class_size),
            scores.category_match,
            scores.mentioned,
        ]
    )
    indicators = np.zeros((len(fraction), n_categories))
    known = (scores.category >= 0) & (scores.category < n_categories)
    indicators[np.flatnonzero(known), scores.category[known]] = 1.0
    return np.hstack([numeric, indicators] if scores.extra is None else [numeric, indicators, scores.extra])


def first_buzzes(
    confidence: np.ndarray, groups: np.ndarray, threshold: float, eligible: np.ndarray | None = None
) -> np.ndarray:
    """Row index of each group's first row with confidence ≥ ``threshold`` (−1: never), one per
    distinct group in order of first appearance. Rows of a group must be contiguous and in reading
    order; ``eligible`` (bool, optional) marks rows where a buzz is allowed (e.g. after min tokens)."""
    starts = np.flatnonzero(np.r_[True, groups[1:] != groups[:-1]])
    ends = np.r_[starts[1:], len(groups)]
    hit = confidence >= threshold
    if eligible is not None:
        hit &= eligible
    firsts = np.full(len(starts), -1)
    for k, (start, end) in enumerate(zip(starts, ends, strict=True)):
        rows = np.flatnonzero(hit[start:end])
        if rows.size:
            firsts[k] = start + rows[0]
    return firsts


def choose_threshold(
    confidence: np.ndarray,
    correct: np.ndarray,
    groups: np.ndarray,
    *,
    target_precision: float,
    eligible: np.ndarray | None = None,
    grid: Sequence[float] = tuple(np.round(np.arange(0.30, 0.991, 0.01), 2)),
    min_buzzes: int = 20,
) -> tuple[float, float, float]:
    """The lowest threshold of ``grid`` whose first buzzes (:func:`first_buzzes`) are right at least
    ``target_precision`` of the time over at least ``min_buzzes`` buzzes, as ``(threshold,
    precision, frequency)`` (frequency = share of groups buzzed on). When none qualifies, the grid's
    most precise threshold. Raises ValueError for empty input."""
    if len(confidence) == 0:
        raise ValueError("no prefixes to choose a threshold on")
    n_groups = int(np.count_nonzero(np.r_[True, groups[1:] != groups[:-1]]))
    best: tuple[float, float, float] | None = None
    fallback = (float(grid[-1]), 0.0, 0.0)
    for t in sorted(grid):
        buzzes = first_buzzes(confidence, groups, t, eligible)
        buzzes = buzzes[buzzes >= 0]
        if buzzes.size < min_buzzes:
            continue
        precision = float(np.mean(correct[buzzes]))
        row = (float(t), precision, buzzes.size / n_groups)
        if precision > fallback[1]:
            fallback = row
        if precision >= target_precision and best is None:
            best = row
    return best or fallback


class BuzzModel:
    """Logistic regression on :func:`feature_rows` plus an isotonic calibration map, and the chosen
    buzz ``threshold`` (on the calibrated confidence); ``categories``: the known tossup categories
    (lower-case) in indicator order; ``fit_report``: the calibration slice's figures."""

    def __init__(
        self,
        categories: list[str],
        scaler: StandardScaler,
        logistic: LogisticRegression,
        isotonic: IsotonicRegression,
        threshold: float,
        fit_report: dict[str, float],
    ) -> None:
        self.categories = categories
        self.scaler, self.logistic, self.isotonic = scaler, logistic, isotonic
        self.threshold = threshold
        self.fit_report = fit_report

    def describe(self) -> str:
        """One line: the threshold and what it gave on the calibration tossups."""
        r = self.fit_report
        return (
            f"buzz at P(right) ≥ {self.threshold:.2f} (on {r.get('tossups', 0) / 2:.0f} calibration tossups: "
            f"precision {r.get('precision', 0):.0%}, buzzing on {r.get('frequency', 0):.0%})"
        )

    def category_index(self, category: str) -> int:
        """Indicator column of a tossup ``category`` (case-insensitive), −1 for an unknown one."""
        try:
            return self.categories.index(category.strip().lower())
        except ValueError:
            return -1

    def raw(self, scores: PrefixScores) -> np.ndarray:
        """The logistic regression's P(right) per prefix, before calibration (computed in NumPy: the
        live bot asks on every word, and scikit-learn's per-call checks cost more than the maths)."""
        x = (feature_rows(scores, len(self.categories)) - self.scaler.mean_) / self.scaler.scale_
        z = x @ self.logistic.coef_[0] + self.logistic.intercept_[0]
        return 1.0 / (1.0 + np.exp(-z))

    def confidence(self, scores: PrefixScores) -> np.ndarray:
        """Calibrated P(the guess is right) per prefix, in [0, 1]: the isotonic map (a step-wise
        linear interpolation, clipped at its ends) of :meth:`raw`."""
        iso = self.isotonic
        return np.clip(np.interp(self.raw(scores), iso.X_thresholds_, iso.y_thresholds_), 0.0, 1.0)

    @classmethod
    def fit(
        cls,
        scores: PrefixScores,
        correct: np.ndarray,
        groups: np.ndarray,
        categories: list[str],
        *,
        target_precision: float = 0.8,
        min_tokens: int = 0,
        seed: int = 0,
    ) -> BuzzModel:
        """Fit on prefixes of held-out tossups: ``correct`` (bool, (n,)) is whether the guess on each
        prefix was right, ``groups`` (int, (n,)) its tossup, rows of a tossup contiguous and in
        reading order. Half of the tossups (drawn with ``seed``) fit the regression, the other half
        the isotonic map and the threshold (buzzing no earlier than ``min_tokens`` tokens). Raises
        ValueError when either half lacks right or wrong guesses."""
        distinct = np.unique(groups)
        rng = np.random.default_rng(seed)
        calibration_groups = rng.choice(distinct, size=len(distinct) // 2, replace=False)
        on_calibration = np.isin(groups, calibration_groups)
        for name, part in (("regression", ~on_calibration), ("calibration", on_calibration)):
            if len(np.unique(correct[part])) < 2:
                raise ValueError(f"the {name} half needs both right and wrong guesses")
        x = feature_rows(scores, len(categories))
        scaler = StandardScaler().fit(x[~on_calibration])
        logistic = LogisticRegression(max_iter=1000).fit(
            scaler.transform(x[~on_calibration]), correct[~on_calibration]
        )
        raw = logistic.predict_proba(scaler.transform(x[on_calibration]))[:, 1]
        isotonic = IsotonicRegression(y_min=0.0, y_max=1.0, out_of_bounds="clip").fit(
            raw, correct[on_calibration].astype(float)
        )
        model = cls(categories, scaler, logistic, isotonic, 1.0, {})
        calibrated = np.clip(isotonic.predict(raw), 0.0, 1.0)
        seen = scores.seen[on_calibration]
        threshold, precision, frequency = choose_threshold(
            calibrated,
            correct[on_calibration],
            groups[on_calibration],
            target_precision=target_precision,
            eligible=seen >= min_tokens,
        )
        model.threshold = threshold
        model.fit_report = {
            "tossups": float(len(distinct)),
            "prefixes": float(len(groups)),
            "threshold": threshold,
            "precision": precision,
            "frequency": frequency,
        }
        return model
