"""QANTA tossup-bot metrics against recorded human buzz points (pure; no Django).

A bot is replayed on each tossup prefix by prefix; each answer it gave (:class:`PrefixAnswer`: the
last token seen, guess, confidence, buzz decision, whether the guess is right) is scored against the
buzz points of human opponents on the same tossup. The buzz figures are those of the QANTA
leaderboard's own metric code, qanta-challenge/ai_workflows ``metrics/qb_metrics.py``
(``create_tossup_df_entry`` per tossup, ``summarize_tossup_metrics`` over them; summarised in
``../shared/reference/HYBRID.md``, "Bots as pipelines, judged against human buzz points"):

Per tossup, with the bot's *buzz* its first answer with ``buzz`` set (later answers never buzz again)
and the humans' buzzes ``(token, correct)``:

- *raw score* (qb_metrics' ``raw_score``; its mean is the leaderboard's ``tossup_score``): 0 without
  a buzz; a buzz on the tossup's last token (the complete question) scores 1 if correct, 0 if wrong;
  any earlier buzz +1 if correct, −0.5 if wrong;
- *h*: the number of human buzzes that were **correct and strictly before** the bot's buzz token
  (every correct human buzz when the bot never buzzed) over the number of human buzzes on the tossup
  (negs included); 0 when the tossup has no human buzz. A same-token tie goes to the **bot**; a human
  neg never counts for the human side;
- *expected score*: raw points × (1 − h), the raw points being +1 for a correct buzz, −0.5 for a wrong
  one, 0 without a buzz — here the last token is not special, so a wrong buzz on it costs −0.5 × (1 − h);
- *human win rate strict*: the share of the human buzzes the bot beat: its buzz was correct and at or
  before that human's buzz token (whatever that human's ruling);
- *human win rate*: the same, or also that human buzzed strictly before the bot (or the bot never
  buzzed) and was wrong;
- *earliest correct*: the first answer (buzz or not, before or after the buzz) whose guess is right;
  *gap* = buzz token − earliest correct token (undefined without either);
- *outcome class*: ``hopeless`` (no answer ever right), ``never-buzzed``, ``best-buzz`` (the buzz on
  the earliest correct token), ``late-buzz`` (after it), ``premature`` (before it), tested in that order.

Over the tossups: the raw and expected scores and buzz frequency are means over every tossup; *buzz
accuracy* (qb_metrics' ``buzz_accuracy``) = correct buzzes / **all** tossups; *buzz precision* (not in
qb_metrics) = correct buzzes / buzzes; *mean buzz position* = the mean, over the buzzes, of the buzz's
1-based token position (tokens read when it buzzed, qb_metrics' ``token_position``, i.e. 0-based
token index + 1), with *mean buzz fraction* = that position / token count beside it; *mean gap pos* /
*mean gap neg* = the mean of the gaps ≥ 0 / < 0, in tokens; the two human win rates are means over
the tossups that have a human buzz (qb_metrics divides by the number of human buzzes, so a tossup
without one has no win rate here).

Positions: every token here is the 0-based index of a display token; the bot's buzz and the humans'
buzzes are compared on the same tokens, which is qb_metrics' comparison of 1-based positions shifted
by one on both sides. A human *opponent* is one buzz ``(token, correct)``; qb_metrics' human list
holds buzzes only, so a human who heard the tossup and never buzzed (None) counts in no figure.

Kept beside them (QANTA 2026): *calibration*, the expected calibration error over every answer's
confidence with equal-width bins, and the reliability diagram's bins; *accuracy by fraction
revealed*: whether the bot's latest guess is right once a given share of the tossup has been read
(whether or not it buzzed).

Live figures (:func:`evaluate_live`): the same buzz rules from a live match's buzz log, the room's
human opponents standing for the recorded buzz points; what needs the bot's answer at every prefix
stays unknown there: calibration and accuracy by fraction revealed (:data:`LIVE_UNKNOWN`, shown on
the pages), gaps and outcome classes (not computed).
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import asdict, dataclass, field
from typing import Any, NamedTuple

#: Raw points of a correct and of a wrong buzz (qb_metrics); a wrong buzz on the last token scores 0
#: in the raw score only.
CORRECT_POINTS = 1.0
WRONG_POINTS = -0.5
#: qb_metrics' outcome classes, in the order they are tested.
OUTCOME_CLASSES = ("hopeless", "never-buzzed", "best-buzz", "late-buzz", "premature")
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


class HumanBuzz(NamedTuple):
    """One human's buzz on a tossup: the 0-based token index and whether it was ruled correct
    (False: a neg)."""

    token_index: int
    correct: bool


#: How a human opponent may be given: a :class:`HumanBuzz` or a ``(token, correct)`` pair; a bare int
#: is a correct buzz on that token (no neg known); None a human who never buzzed on the tossup.
Human = HumanBuzz | tuple[int, bool] | int | None


def human_buzzes(tossup: str, humans: Sequence[Human], token_count: int) -> tuple[HumanBuzz, ...]:
    """The human buzzes of ``humans`` (None dropped, ints read as correct buzzes). Raises ValueError
    for a token outside [0, token_count) or an entry of another form."""
    out = []
    for h in humans:
        if h is None:
            continue
        if isinstance(h, bool) or not isinstance(h, int | tuple) or (isinstance(h, tuple) and len(h) != 2):
            raise ValueError(f"tossup {tossup}: a human is (token, correct), a token or None, got {h!r}")
        buzz = HumanBuzz(h, True) if isinstance(h, int) else HumanBuzz(int(h[0]), bool(h[1]))
        if not 0 <= buzz.token_index < token_count:
            raise ValueError(f"tossup {tossup}: human buzz {buzz.token_index} outside [0, {token_count})")
        out.append(buzz)
    return tuple(out)


@dataclass(frozen=True)
class TossupRun:
    """One tossup replayed: ``answers`` in increasing ``token_index`` (any subset of prefixes, e.g.
    every word or every 5th), ``humans`` the human opponents (:data:`Human`: a buzz, or None for one
    who never buzzed), at least one. ``token_count`` ≥ 1 tokens. Raises ValueError when an index lies
    outside [0, token_count), answers are not strictly increasing, a confidence is outside [0, 1] or
    there is no human."""

    tossup: str
    token_count: int
    answers: tuple[PrefixAnswer, ...]
    humans: tuple[Human, ...]

    def __post_init__(self) -> None:
        if self.token_count < 1:
            raise ValueError(f"tossup {self.tossup}: token_count must be ≥ 1, got {self.token_count}")
        if not self.humans:
            raise ValueError(f"tossup {self.tossup}: no human opponent (use None for 'never buzzed')")
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
        human_buzzes(self.tossup, self.humans, self.token_count)

    @property
    def buzz(self) -> PrefixAnswer | None:
        """The bot's first buzz, or None."""
        return next((a for a in self.answers if a.buzz), None)

    @property
    def earliest_correct(self) -> int | None:
        """The token of the first answer whose guess is right (buzz or not), or None."""
        return next((a.token_index for a in self.answers if a.correct), None)

    def answer_at(self, token_index: int) -> PrefixAnswer | None:
        """The latest answer given with at most ``token_index + 1`` tokens seen (None before the first)."""
        found = None
        for a in self.answers:
            if a.token_index > token_index:
                break
            found = a
        return found


@dataclass(frozen=True)
class TossupOutcome:
    """Per-tossup result (module docstring): the bot's buzz token (0-based; None: no buzz), its
    correctness and guess; ``earliest_correct`` token, ``gap`` and outcome class ``kind`` (None where
    unknown: live); ``raw_score``; ``human_buzzes`` (negs included) and ``humans_correct_before``
    (correct ones strictly before the bot's buzz, or all correct ones without a buzz), ``h`` their
    ratio (0 without a human buzz); ``expected_score``; the two human win rates (None without a
    human buzz)."""

    tossup: str
    token_count: int
    buzz_token: int | None
    buzz_correct: bool | None
    guess: str
    earliest_correct: int | None
    gap: int | None
    kind: str | None
    raw_score: float
    human_buzzes: int
    humans_correct_before: int
    h: float
    expected_score: float
    human_win_rate: float | None
    human_win_rate_strict: float | None


def score_tossup(
    tossup: str,
    token_count: int,
    buzz: tuple[int, bool] | None,
    humans: Sequence[HumanBuzz],
    *,
    guess: str = "",
    answers: Sequence[PrefixAnswer] | None = None,
) -> TossupOutcome:
    """One tossup by qb_metrics' ``create_tossup_df_entry`` (module docstring): ``buzz`` the bot's
    ``(token, correct)`` (None: no buzz), ``humans`` the human buzzes; ``answers`` every answer the
    bot gave, for the earliest correct token, gap and outcome class (None: unknown, all three None)."""
    last = token_count - 1
    if buzz is None:
        raw, points = 0.0, 0.0
    else:
        token, correct = buzz
        points = CORRECT_POINTS if correct else WRONG_POINTS
        raw = (1.0 if correct else 0.0) if token == last else points
    early_correct = 0
    strict = soft = 0
    for h in humans:
        human_first = buzz is None or h.token_index < buzz[0]
        bot_first = buzz is not None and buzz[0] <= h.token_index
        if human_first and h.correct:
            early_correct += 1
        if buzz is not None and buzz[1] and bot_first:
            strict += 1
            soft += 1
        elif human_first and not h.correct:
            soft += 1
    share = early_correct / len(humans) if humans else 0.0
    earliest = kind = gap = None
    if answers is not None:
        earliest = next((a.token_index for a in answers if a.correct), None)
        if earliest is None:
            kind = "hopeless"
        elif buzz is None:
            kind = "never-buzzed"
        else:
            gap = buzz[0] - earliest
            kind = "best-buzz" if gap == 0 else "late-buzz" if gap > 0 else "premature"
    return TossupOutcome(
        tossup=tossup,
        token_count=token_count,
        buzz_token=None if buzz is None else buzz[0],
        buzz_correct=None if buzz is None else buzz[1],
        guess=guess,
        earliest_correct=earliest,
        gap=gap,
        kind=kind,
        raw_score=raw,
        human_buzzes=len(humans),
        humans_correct_before=early_correct,
        h=share,
        expected_score=points * (1.0 - share),
        human_win_rate=soft / len(humans) if humans else None,
        human_win_rate_strict=strict / len(humans) if humans else None,
    )


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
class BuzzFigures:
    """The buzz figures every leaderboard row shares (module docstring), over ``tossups``.

    ``raw_score`` and ``expected_score`` in points per tossup (−0.5 … 1); ``buzz_frequency``,
    ``buzz_accuracy`` (correct buzzes / tossups), ``buzz_precision`` (correct buzzes / buzzes; None
    without a buzz) in [0, 1]; ``mean_buzz_position`` in 1-based token positions (tokens read at the
    buzz) and ``mean_buzz_fraction`` = mean position / token count, None without a buzz;
    ``human_win_rate`` and ``human_win_rate_strict`` in [0, 1] over the ``tossups_with_human_buzzes``
    (None when there is none)."""

    tossups: int
    buzzes: int
    correct_buzzes: int
    raw_score: float
    expected_score: float
    buzz_frequency: float
    buzz_accuracy: float
    buzz_precision: float | None
    mean_buzz_position: float | None
    mean_buzz_fraction: float | None
    tossups_with_human_buzzes: int
    human_win_rate: float | None
    human_win_rate_strict: float | None


def _mean(values: Sequence[float]) -> float | None:
    return sum(values) / len(values) if values else None


def buzz_figures(outcomes: Sequence[TossupOutcome]) -> BuzzFigures:
    """qb_metrics' ``summarize_tossup_metrics`` over ``outcomes`` (at least one), plus buzz
    precision and the mean buzz fraction. Raises ValueError for no outcome."""
    if not outcomes:
        raise ValueError("no tossups to evaluate")
    n = len(outcomes)
    buzzed = [o for o in outcomes if o.buzz_token is not None]
    correct = sum(1 for o in buzzed if o.buzz_correct)
    with_humans = [o for o in outcomes if o.human_buzzes]
    return BuzzFigures(
        tossups=n,
        buzzes=len(buzzed),
        correct_buzzes=correct,
        raw_score=sum(o.raw_score for o in outcomes) / n,
        expected_score=sum(o.expected_score for o in outcomes) / n,
        buzz_frequency=len(buzzed) / n,
        buzz_accuracy=correct / n,
        buzz_precision=correct / len(buzzed) if buzzed else None,
        mean_buzz_position=_mean([o.buzz_token + 1.0 for o in buzzed if o.buzz_token is not None]),
        mean_buzz_fraction=_mean(
            [(o.buzz_token + 1) / o.token_count for o in buzzed if o.buzz_token is not None]
        ),
        tossups_with_human_buzzes=len(with_humans),
        human_win_rate=_mean([o.human_win_rate for o in with_humans if o.human_win_rate is not None]),
        human_win_rate_strict=_mean(
            [o.human_win_rate_strict for o in with_humans if o.human_win_rate_strict is not None]
        ),
    )


@dataclass(frozen=True)
class BotMetrics(BuzzFigures):
    """The offline leaderboard row of one bot on a set of tossups: the :class:`BuzzFigures`, then
    ``mean_gap_pos`` / ``mean_gap_neg`` (mean of the gaps ≥ 0 / < 0, in tokens; None without one),
    ``outcome_classes`` (tossups per :data:`OUTCOME_CLASSES` name, every name present), ``ece`` in
    [0, 1] (None without an answer) over ``answers`` answers; ``accuracy_by_fraction``:
    ``[(fraction, accuracy)]``; ``reliability``: the ECE's bins; ``outcomes`` per tossup."""

    mean_gap_pos: float | None
    mean_gap_neg: float | None
    outcome_classes: dict[str, int]
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
    outcomes = []
    for run in runs:
        buzz = run.buzz
        outcomes.append(
            score_tossup(
                run.tossup,
                run.token_count,
                None if buzz is None else (buzz.token_index, buzz.correct),
                human_buzzes(run.tossup, run.humans, run.token_count),
                guess="" if buzz is None else buzz.guess,
                answers=run.answers,
            )
        )
    gaps = [o.gap for o in outcomes if o.gap is not None]
    classes = {k: sum(1 for o in outcomes if o.kind == k) for k in OUTCOME_CLASSES}
    diagram = reliability([(a.confidence, a.correct) for r in runs for a in r.answers], bins)
    by_fraction = []
    for f in fractions:
        hits = [run.answer_at(fraction_token(f, run.token_count)) for run in runs]
        by_fraction.append((f, sum(1 for a in hits if a is not None and a.correct) / len(runs)))
    return BotMetrics(
        **asdict(buzz_figures(outcomes)),
        mean_gap_pos=_mean([float(g) for g in gaps if g >= 0]),
        mean_gap_neg=_mean([float(g) for g in gaps if g < 0]),
        outcome_classes=classes,
        ece=expected_calibration_error(diagram),
        answers=sum(b.count for b in diagram),
        reliability=diagram,
        accuracy_by_fraction=by_fraction,
        outcomes=outcomes,
    )


# --- live figures: a bot's buzzes in live matches against the room's humans -------------------
#
# A live match records only the bot's buzz (where, and the ruling), not what it would have
# answered at every prefix, so calibration and accuracy by fraction revealed (:data:`LIVE_UNKNOWN`),
# gaps and outcome classes are unknown there; the buzz figures follow the definitions above,
# each human opponent in the room standing for one recorded human (a buzz, or None).

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
    it did not buzz); ``humans``: one entry per human opponent in the room (:data:`Human`: that
    human's buzz on this tossup, a bare token for a correct buzz, or None when that human did not
    buzz; a room of bots alone has none). Raises ValueError for ``token_count`` < 1 or a token index
    outside [0, token_count)."""

    tossup: str
    match: str
    token_count: int
    bot_buzz: tuple[int, bool] | None
    humans: tuple[Human, ...]

    def __post_init__(self) -> None:
        if self.token_count < 1:
            raise ValueError(f"tossup {self.tossup}: token_count must be ≥ 1, got {self.token_count}")
        human_buzzes(self.tossup, self.humans, self.token_count)
        if self.bot_buzz is not None and not 0 <= self.bot_buzz[0] < self.token_count:
            raise ValueError(
                f"tossup {self.tossup}: buzz token {self.bot_buzz[0]} outside [0, {self.token_count})"
            )


@dataclass(frozen=True)
class LiveBotMetrics(BuzzFigures):
    """A bot's live leaderboard row over the tossups it heard (see :func:`evaluate_live`): the
    :class:`BuzzFigures` — ``tossups`` heard, the scores and human win rates over the
    ``tossups_with_humans`` (those with a human opponent in the room; the scores None when there is
    none) — and ``matches`` they came from. Calibration, accuracy by fraction revealed, gaps and
    outcome classes are not fields: :data:`LIVE_UNKNOWN`."""

    raw_score: float | None  # type: ignore[assignment]
    expected_score: float | None  # type: ignore[assignment]
    matches: int
    tossups_with_humans: int


def evaluate_live(tossups: Sequence[LiveTossup]) -> LiveBotMetrics:
    """The QANTA buzz metrics of one bot over the tossups it heard live (at least one), by the rules
    of :func:`score_tossup` (a same-token tie goes to the bot, as offline): buzz frequency, accuracy,
    precision and position over every tossup heard; the raw and expected scores over the tossups with
    a human opponent in the room (a room of bots alone is no comparison), the human win rates over
    those with a human buzz. Raises ValueError for no tossups."""
    if not tossups:
        raise ValueError("no tossups to evaluate")
    outcomes = [
        score_tossup(t.tossup, t.token_count, t.bot_buzz, human_buzzes(t.tossup, t.humans, t.token_count))
        for t in tossups
    ]
    figures = asdict(buzz_figures(outcomes))
    faced = [o for o, t in zip(outcomes, tossups, strict=True) if t.humans]
    scores = buzz_figures(faced) if faced else None
    figures["raw_score"] = None if scores is None else scores.raw_score
    figures["expected_score"] = None if scores is None else scores.expected_score
    return LiveBotMetrics(**figures, matches=len({t.match for t in tossups}), tossups_with_humans=len(faced))
