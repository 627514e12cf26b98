"""QANTA 2025/2026 tossup-bot metrics against recorded human buzz points (pure; no Django).

A bot is replayed on each tossup prefix by prefix; each answer it gave (:class:`PrefixAnswer`: the
last token seen, guess, confidence, buzz decision, whether the guess is right) is scored against the
buzz points of human opponents on the same tossup, as ``../shared/reference/HYBRID.md`` ("Bots as
pipelines, judged against human buzz points") defines the tossup leaderboard:

- *expected score*: +1 for a correct buzz, −0.5 for a wrong buzz, 0 for no buzz; the bot scores only
  if it buzzes **before** the human (a buzz on the same token as the human's goes to the human);
  averaged over the tossup's human opponents, then over tossups;
- *buzz precision* (share of buzzes correct), *buzz frequency* (share of tossups buzzed on), *mean
  buzz position* (0-based token index of the bot's first buzz), *win rate* (share of tossups it
  answers correctly before the opposing human, averaged like the score);
- *calibration* (2026): expected calibration error over every answer's confidence with equal-width
  bins, and the reliability diagram's bins;
- *accuracy by fraction revealed*: whether the bot's latest guess is right once a given share of the
  tossup has been read (whether or not it buzzed).

A human opponent is the token index of that human's **correct** buzz, or None when that human never
answered the tossup correctly (a human neg does not end the tossup for the other side, so only a
correct buzz stops the bot). The bot's buzz is its first answer with ``buzz`` set; later ones are
ignored (after its buzz the tossup is over for it).

Live figures (:func:`evaluate_live`): the same buzz metrics from a live match's buzz log, the room's
human opponents standing for the recorded buzz points; calibration and accuracy by fraction
revealed stay unknown there (:data:`LIVE_UNKNOWN`).
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import asdict, dataclass, field
from typing import Any

#: Points of a correct and of a wrong buzz before the human (HYBRID.md).
CORRECT_POINTS = 1.0
WRONG_POINTS = -0.5
#: Default reliability-diagram bins and accuracy-by-fraction grid.
CALIBRATION_BINS = 10
FRACTIONS = (0.1, 0.2, 0.3, 0.4, 0.5, 0.6, 0.7, 0.8, 0.9, 1.0)


@dataclass(frozen=True)
class PrefixAnswer:
    """What the bot said on one prefix: ``token_index`` is the 0-based index of the last token it had
    seen (a buzz there claims that token); ``confidence`` in [0, 1]; ``correct`` is the judge's ruling
    on ``guess`` (an empty guess is wrong)."""

    token_index: int
    guess: str
    confidence: float
    buzz: bool
    correct: bool


@dataclass(frozen=True)
class TossupRun:
    """One tossup replayed: ``answers`` in increasing ``token_index`` (any subset of prefixes, e.g.
    every word or every 5th), ``humans`` the opponents' correct-buzz token indexes (None: that human
    never got it), at least one. ``token_count`` ≥ 1 tokens. Raises ValueError when an index lies
    outside [0, token_count), answers are not strictly increasing, a confidence is outside [0, 1] or
    there is no human."""

    tossup: str
    token_count: int
    answers: tuple[PrefixAnswer, ...]
    humans: tuple[int | None, ...]

    def __post_init__(self) -> None:
        if self.token_count < 1:
            raise ValueError(f"tossup {self.tossup}: token_count must be ≥ 1, got {self.token_count}")
        if not self.humans:
            raise ValueError(f"tossup {self.tossup}: no human buzz point (use None for 'never correct')")
        last = -1
        for a in self.answers:
            if not 0 <= a.token_index < self.token_count or a.token_index <= last:
                raise ValueError(
                    f"tossup {self.tossup}: answer token indexes must increase within "
                    f"[0, {self.token_count}), got {a.token_index} after {last}"
                )
            if not (isinstance(a.confidence, int | float) and 0.0 <= a.confidence <= 1.0):
                raise ValueError(f"tossup {self.tossup}: confidence {a.confidence!r} is not in [0, 1]")
            last = a.token_index
        for h in self.humans:
            if h is not None and not 0 <= h < self.token_count:
                raise ValueError(f"tossup {self.tossup}: human buzz {h} outside [0, {self.token_count})")

    @property
    def buzz(self) -> PrefixAnswer | None:
        """The bot's first buzz, or None."""
        return next((a for a in self.answers if a.buzz), None)

    def answer_at(self, token_index: int) -> PrefixAnswer | None:
        """The latest answer given with at most ``token_index + 1`` tokens seen (None before the first)."""
        found = None
        for a in self.answers:
            if a.token_index > token_index:
                break
            found = a
        return found


def buzz_outcome(buzz: PrefixAnswer | None, human: int | None) -> tuple[float, bool]:
    """``(points, won)`` of the bot's buzz against one human's correct-buzz token (None: never):
    +1 / −0.5 when the bot buzzed strictly before the human, else 0; ``won`` = a correct buzz before."""
    if buzz is None or (human is not None and buzz.token_index >= human):
        return 0.0, False
    return (CORRECT_POINTS, True) if buzz.correct else (WRONG_POINTS, False)


@dataclass(frozen=True)
class TossupOutcome:
    """Per-tossup result: the buzz token (None: no buzz) and its correctness, the mean points and the
    mean win over the human opponents."""

    tossup: str
    token_count: int
    buzz_token: int | None
    buzz_correct: bool | None
    guess: str
    score: float
    win: float
    humans: int


@dataclass(frozen=True)
class ReliabilityBin:
    """One equal-width confidence bin [lo, hi) (the last one includes 1): ``count`` answers, their
    mean confidence and accuracy (None when empty)."""

    lo: float
    hi: float
    count: int
    confidence: float | None
    accuracy: float | None


@dataclass(frozen=True)
class BotMetrics:
    """The leaderboard row of one bot on a set of tossups (see the module docstring).

    ``expected_score`` in points per tossup (−0.5 … 1); ``buzz_precision``, ``buzz_frequency``,
    ``win_rate``, ``ece`` in [0, 1]; ``mean_buzz_position`` in tokens (0-based) and
    ``mean_buzz_fraction`` = mean (token + 1) / token_count; None where undefined (no buzz, no answer).
    ``accuracy_by_fraction``: ``[(fraction, accuracy)]``; ``reliability``: the ECE's bins."""

    tossups: int
    buzzes: int
    correct_buzzes: int
    expected_score: float
    buzz_precision: float | None
    buzz_frequency: float
    mean_buzz_position: float | None
    mean_buzz_fraction: float | None
    win_rate: float
    ece: float | None
    answers: int
    reliability: list[ReliabilityBin]
    accuracy_by_fraction: list[tuple[float, float]]
    outcomes: list[TossupOutcome] = field(repr=False)

    def to_dict(self) -> dict[str, Any]:
        """JSON-ready: every field, bins and outcomes as objects."""
        data = asdict(self)
        data["accuracy_by_fraction"] = [{"fraction": f, "accuracy": a} for f, a in self.accuracy_by_fraction]
        return data


def _mean(values: Sequence[float]) -> float | None:
    return sum(values) / len(values) if values else None


def reliability(pairs: Sequence[tuple[float, bool]], bins: int = CALIBRATION_BINS) -> list[ReliabilityBin]:
    """Equal-width reliability bins over [0, 1] of ``(confidence, correct)`` pairs; bin k holds
    confidences in [k/bins, (k+1)/bins), the last also 1.0. Raises ValueError for bins < 1."""
    if bins < 1:
        raise ValueError(f"bins must be ≥ 1, got {bins}")
    members: list[list[tuple[float, bool]]] = [[] for _ in range(bins)]
    for confidence, correct in pairs:
        members[min(int(confidence * bins), bins - 1)].append((confidence, correct))
    return [
        ReliabilityBin(
            k / bins,
            (k + 1) / bins,
            len(m),
            _mean([c for c, _ in m]),
            _mean([float(ok) for _, ok in m]),
        )
        for k, m in enumerate(members)
    ]


def expected_calibration_error(diagram: Sequence[ReliabilityBin]) -> float | None:
    """ECE = Σ_bins (n_bin / N) · |accuracy_bin − mean confidence_bin| (None when N = 0)."""
    total = sum(b.count for b in diagram)
    if total == 0:
        return None
    return sum(
        b.count / total * abs(b.accuracy - b.confidence)
        for b in diagram
        if b.count and b.accuracy is not None and b.confidence is not None
    )


def fraction_token(fraction: float, token_count: int) -> int:
    """The last token index shown once ``fraction`` (0 < f ≤ 1) of ``token_count`` tokens is read:
    ⌈f·n⌉ − 1, at least 0."""
    return max(math.ceil(fraction * token_count - 1e-9) - 1, 0)


def evaluate(
    runs: Sequence[TossupRun], *, bins: int = CALIBRATION_BINS, fractions: Sequence[float] = FRACTIONS
) -> BotMetrics:
    """The QANTA metrics of one bot over ``runs`` (one per tossup; at least one). Raises ValueError for
    no runs, bins < 1, or a fraction outside (0, 1]."""
    if not runs:
        raise ValueError("no tossups to evaluate")
    if any(not 0.0 < f <= 1.0 for f in fractions):
        raise ValueError(f"fractions must lie in (0, 1], got {list(fractions)}")
    outcomes: list[TossupOutcome] = []
    for run in runs:
        buzz = run.buzz
        results = [buzz_outcome(buzz, h) for h in run.humans]
        outcomes.append(
            TossupOutcome(
                run.tossup,
                run.token_count,
                None if buzz is None else buzz.token_index,
                None if buzz is None else buzz.correct,
                "" if buzz is None else buzz.guess,
                sum(p for p, _ in results) / len(results),
                sum(float(w) for _, w in results) / len(results),
                len(results),
            )
        )
    buzzed = [o for o in outcomes if o.buzz_token is not None]
    correct = sum(1 for o in buzzed if o.buzz_correct)
    diagram = reliability([(a.confidence, a.correct) for r in runs for a in r.answers], bins)
    by_fraction = []
    for f in fractions:
        hits = [run.answer_at(fraction_token(f, run.token_count)) for run in runs]
        by_fraction.append((f, sum(1 for a in hits if a is not None and a.correct) / len(runs)))
    return BotMetrics(
        tossups=len(runs),
        buzzes=len(buzzed),
        correct_buzzes=correct,
        expected_score=sum(o.score for o in outcomes) / len(outcomes),
        buzz_precision=correct / len(buzzed) if buzzed else None,
        buzz_frequency=len(buzzed) / len(outcomes),
        mean_buzz_position=_mean([float(o.buzz_token) for o in buzzed if o.buzz_token is not None]),
        mean_buzz_fraction=_mean(
            [(o.buzz_token + 1) / o.token_count for o in buzzed if o.buzz_token is not None]
        ),
        win_rate=sum(o.win for o in outcomes) / len(outcomes),
        ece=expected_calibration_error(diagram),
        answers=sum(b.count for b in diagram),
        reliability=diagram,
        accuracy_by_fraction=by_fraction,
        outcomes=outcomes,
    )


# --- live figures: a bot's buzzes in live matches against the room's humans -------------------
#
# A live match records only the bot's buzz (where, and the ruling), not what it would have
# answered at every prefix, so calibration and accuracy by fraction revealed are unknown there
# (:data:`LIVE_UNKNOWN`); the buzz figures follow the definitions above, each human opponent in the
# room standing for one recorded buzz point.

#: What :func:`evaluate_live` cannot compute, with the reason the pages show.
LIVE_UNKNOWN = {
    "ece": "unknown live: calibration needs the bot's answer and confidence at every prefix, and a "
    "live match records only its buzz (run manage.py evaluate_bot for it)",
    "accuracy_by_fraction": "unknown live: accuracy by fraction revealed needs the bot's answer at "
    "every prefix, and a live match records only its buzz (run manage.py evaluate_bot for it)",
}


@dataclass(frozen=True)
class LiveTossup:
    """One tossup a bot heard to its end in a live match.

    ``bot_buzz``: the bot's counted buzz as ``(token_index, correct)`` (0-based token index; None:
    it did not buzz); ``humans``: one entry per human opponent in the room, the token index of that
    human's correct buzz on this tossup, or None when that human did not answer it correctly (a
    room of bots alone has none). Raises ValueError for ``token_count`` < 1 or a token index outside
    [0, token_count)."""

    tossup: str
    match: str
    token_count: int
    bot_buzz: tuple[int, bool] | None
    humans: tuple[int | None, ...]

    def __post_init__(self) -> None:
        if self.token_count < 1:
            raise ValueError(f"tossup {self.tossup}: token_count must be ≥ 1, got {self.token_count}")
        tokens = [h for h in self.humans if h is not None]
        if self.bot_buzz is not None:
            tokens.append(self.bot_buzz[0])
        for t in tokens:
            if not 0 <= t < self.token_count:
                raise ValueError(f"tossup {self.tossup}: buzz token {t} outside [0, {self.token_count})")


@dataclass(frozen=True)
class LiveBotMetrics:
    """A bot's live leaderboard row over the tossups it heard (see :func:`evaluate_live`).

    ``tossups`` heard, ``matches`` they came from, ``buzzes`` / ``correct_buzzes``;
    ``expected_score`` in points per tossup and ``win_rate`` in [0, 1], both over the
    ``tossups_with_humans`` (None when the bot never heard a tossup with a human opponent);
    ``buzz_precision`` (None without a buzz), ``buzz_frequency``; ``mean_buzz_position`` in tokens
    (0-based) and ``mean_buzz_fraction`` = mean (token + 1) / token_count, None without a buzz.
    Calibration and accuracy by fraction revealed are not fields: :data:`LIVE_UNKNOWN`."""

    tossups: int
    matches: int
    tossups_with_humans: int
    buzzes: int
    correct_buzzes: int
    expected_score: float | None
    buzz_precision: float | None
    buzz_frequency: float
    mean_buzz_position: float | None
    mean_buzz_fraction: float | None
    win_rate: float | None


def evaluate_live(tossups: Sequence[LiveTossup]) -> LiveBotMetrics:
    """The QANTA buzz metrics of one bot over the tossups it heard live (at least one).

    Per tossup and human opponent, :func:`buzz_outcome`: +1 for a correct buzz and −0.5 for a wrong
    one when the bot buzzed strictly before that human's correct buzz (or the human never answered
    it correctly), else 0 — a tie (the same token) goes to the human, as offline; 0 without a buzz.
    The tossup's score is the mean over its human opponents, i.e. the buzz's points scaled by the
    share of humans who had not answered correctly before the bot; the expected score and the
    win rate average the tossups that had a human opponent. Raises ValueError for no tossups."""
    if not tossups:
        raise ValueError("no tossups to evaluate")
    scores: list[float] = []
    wins: list[float] = []
    buzzed: list[LiveTossup] = []
    for t in tossups:
        buzz = None
        if t.bot_buzz is not None:
            buzzed.append(t)
            buzz = PrefixAnswer(t.bot_buzz[0], "", 1.0, True, t.bot_buzz[1])
        if t.humans:
            results = [buzz_outcome(buzz, h) for h in t.humans]
            scores.append(sum(p for p, _ in results) / len(results))
            wins.append(sum(float(w) for _, w in results) / len(results))
    correct = sum(1 for t in buzzed if t.bot_buzz is not None and t.bot_buzz[1])
    positions = [float(t.bot_buzz[0]) for t in buzzed if t.bot_buzz is not None]
    fractions = [(t.bot_buzz[0] + 1) / t.token_count for t in buzzed if t.bot_buzz is not None]
    return LiveBotMetrics(
        tossups=len(tossups),
        matches=len({t.match for t in tossups}),
        tossups_with_humans=len(scores),
        buzzes=len(buzzed),
        correct_buzzes=correct,
        expected_score=_mean(scores),
        buzz_precision=correct / len(buzzed) if buzzed else None,
        buzz_frequency=len(buzzed) / len(tossups),
        mean_buzz_position=_mean(positions),
        mean_buzz_fraction=_mean(fractions),
        win_rate=_mean(wins),
    )
