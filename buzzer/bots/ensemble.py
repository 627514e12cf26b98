"""The ensemble bot: the neural guesser and the reference TF-IDF guesser combined, with a learned,
calibrated buzzer on features of both (pure; no Django).

Both guessers share the answer classes (``tfidf.reference_classes``). A prefix's candidates are the
neural guesser's top :data:`CANDIDATES` classes and TF-IDF's; each candidate scores
``p_neural + weight · cosine_tfidf`` and the best is the guess. ``weight`` is chosen on the held-out
years (the grid value whose guesses are right most often there). The buzzer is
``buzzmodel.BuzzModel`` (logistic regression, then an isotonic map fitted on other tossups, and the
lowest threshold whose replayed buzzes reach the target precision) with the combined score and its
margin as its top-1/top-2 and, as extra columns, the neural probability and the TF-IDF cosine of the
guess, each guesser's own top score, and whether the two guessers' top classes agree.

Training (:meth:`EnsembleGuesser.train`) follows the reference bot's: the two latest training years
are held out whole; the neural encoder passed in must have been trained without them (``manage.py
train_guesser`` does so); with both guessers' answer indexes built without them, the two replay
their tossups every ``REPLAY_EVERY`` words, the judge rules each guess, the weight and the buzzer are
fitted on that; the bot then plays with both indexes over every year (the TF-IDF model refitted,
the neural index the checkpoint's).
"""

from __future__ import annotations

import random
from collections.abc import Callable, Iterable, Sequence
from pathlib import Path

import joblib
import numpy as np

from buzzer.bots.buzzmodel import BuzzModel, PrefixScores
from buzzer.bots.neural import NEURAL_VERSION, NeuralGuesser, article_documents
from buzzer.bots.tfidf import (
    REFERENCE_MIN_TOKENS,
    REFERENCE_VERSION,
    TYPICAL_TOKENS,
    Replay,
    TfidfGuesser,
    TrainingRecord,
    buzzer_categories,
    file_records,
    held_out_years,
    packet_records,
    reference_classes,
)

#: Changes when the ensemble's combination or buzzer change (with the two guessers' versions it keys caches).
ENSEMBLE_VERSION = f"ensemble-1+{REFERENCE_VERSION}+{NEURAL_VERSION}"
#: Candidates each guesser contributes per prefix.
CANDIDATES = 10
#: Held-out tossups replayed, and the replay's step in words.
HELD_OUT_TOSSUPS = 2000
REPLAY_EVERY = 2
TARGET_PRECISION = 0.80
_WEIGHTS = (0.0, 0.25, 0.5, 1.0, 1.5, 2.0, 3.0, 5.0)


class Ranked:
    """Per prefix (arrays (n,)): the guess (class index), its combined score, the runner-up's
    combined score, the guess's neural probability and TF-IDF cosine, each guesser's own top score,
    and whether the two guessers' top classes agree."""

    def __init__(self, n: int) -> None:
        self.best = np.zeros(n, dtype=int)
        self.top1, self.top2 = np.zeros(n), np.zeros(n)
        self.neural, self.cosine = np.zeros(n), np.zeros(n)
        self.neural_top, self.cosine_top = np.zeros(n), np.zeros(n)
        self.agree = np.zeros(n)

    def extra(self) -> np.ndarray:
        """The buzzer's extra feature columns (n, 5)."""
        return np.column_stack([self.neural, self.cosine, self.neural_top, self.cosine_top, self.agree])


def rank(tfidf: TfidfGuesser, neural: NeuralGuesser, texts: Sequence[str], weight: float) -> Ranked:
    """Combine both guessers' candidates for each text (see the module docstring)."""
    return combine(*neural.top_classes(texts, CANDIDATES), *tfidf.top_classes(texts, CANDIDATES), weight)


def combine(
    n_index: np.ndarray, n_prob: np.ndarray, t_index: np.ndarray, t_cos: np.ndarray, weight: float
) -> Ranked:
    """The combination of candidate arrays, each (n, k): the neural guesser's classes and
    probabilities, TF-IDF's classes (−1: none) and cosines."""
    out = Ranked(len(n_index))
    for i in range(len(n_index)):
        neural_of = {int(c): float(p) for c, p in zip(n_index[i], n_prob[i], strict=True)}
        cosine_of = {int(c): float(s) for c, s in zip(t_index[i], t_cos[i], strict=True) if c >= 0}
        scored = sorted(
            ((neural_of.get(c, 0.0) + weight * cosine_of.get(c, 0.0), c) for c in {*neural_of, *cosine_of}),
            reverse=True,
        )
        out.top1[i], out.best[i] = scored[0]
        out.top2[i] = scored[1][0] if len(scored) > 1 else 0.0
        best = int(out.best[i])
        out.neural[i], out.cosine[i] = neural_of.get(best, 0.0), cosine_of.get(best, 0.0)
        out.neural_top[i], out.cosine_top[i] = float(n_prob[i, 0]), float(t_cos[i, 0])
        out.agree[i] = float(t_index[i, 0] == n_index[i, 0])
    return out


class EnsembleGuesser:
    """The ensemble bot; satisfies ``buzzer.bots.adapter.Model`` and ``PrefixAware``.

    ``tfidf``: the final reference TF-IDF model (its ``class_info`` gives the buzzer's class
    features); ``neural``: the neural guesser (same class list); ``weight``: the TF-IDF cosine's
    weight in the combined score; ``buzzer``: the learned buzzer with its threshold."""

    def __init__(self, tfidf: TfidfGuesser, neural: NeuralGuesser, weight: float, buzzer: BuzzModel) -> None:
        if tfidf.answers != neural.answers:
            raise ValueError("the TF-IDF and neural guessers must share their answer classes")
        self.tfidf, self.neural, self.weight, self.buzzer = tfidf, neural, weight, buzzer

    @property
    def answers(self) -> list[str]:
        return self.tfidf.answers

    @property
    def threshold(self) -> float:
        """The learned buzzer's threshold on the calibrated confidence."""
        return self.buzzer.threshold

    @property
    def min_tokens(self) -> int:
        return REFERENCE_MIN_TOKENS

    def scores(
        self,
        texts: Sequence[str],
        seen: Sequence[int],
        token_count: Sequence[int],
        tossup_category: Sequence[str],
    ) -> tuple[Ranked, PrefixScores]:
        """Ranked prefixes and the buzzer's inputs for them."""
        ranked = rank(self.tfidf, self.neural, texts, self.weight)
        return ranked, self.tfidf._scores(
            texts,
            ranked.best,
            ranked.top1,
            ranked.top2,
            seen,
            token_count,
            tossup_category,
            self.buzzer.categories,
            extra=ranked.extra(),
        )

    def guess_prefix(
        self, text: str, seen: int, token_count: int | None, category: str = ""
    ) -> tuple[str, float]:
        """``(answer, calibrated P(right))`` after ``seen`` of ``token_count`` tokens (None: unknown,
        taken as ``TYPICAL_TOKENS``)."""
        count = max(token_count or max(seen, TYPICAL_TOKENS), seen, 1)
        ranked, scores = self.scores([text], [max(seen, 1)], [count], [category])
        return self.answers[int(ranked.best[0])], float(self.buzzer.confidence(scores)[0])

    def guess(self, text_so_far: str) -> tuple[str, float]:
        """:meth:`guess_prefix` as if the text were the whole tossup."""
        seen = len(text_so_far.split())
        return self.guess_prefix(text_so_far, seen, seen)

    def bonus_guess(self, leadin: str, part_text: str) -> str:
        """The combined best class for a bonus part, the leadin as context."""
        ranked = rank(self.tfidf, self.neural, [f"{leadin} {part_text}"], self.weight)
        return self.answers[int(ranked.best[0])]

    def save(self, path: str | Path) -> None:
        """Write the TF-IDF model, the weight and the buzzer (joblib); the neural checkpoint stays in
        its own file, which this one names by its ``meta["id"]`` (checked on load)."""
        Path(path).parent.mkdir(parents=True, exist_ok=True)
        blob = {
            "version": ENSEMBLE_VERSION,
            "tfidf": {name: getattr(self.tfidf, name) for name in _TFIDF_FIELDS},
            "weight": self.weight,
            "buzzer": self.buzzer,
            "neural_id": self.neural.meta.get("id"),
        }
        joblib.dump(blob, path, compress=3)

    @classmethod
    def load(cls, path: str | Path, neural: NeuralGuesser) -> EnsembleGuesser:
        """Read an ensemble written by :meth:`save`, with the neural guesser it was fitted with.
        Raises ValueError for another file, another :data:`ENSEMBLE_VERSION` or another checkpoint.

        Only load files you wrote yourself: joblib unpickles arbitrary objects."""
        blob = joblib.load(path)
        if not isinstance(blob, dict) or blob.get("version") != ENSEMBLE_VERSION:
            raise ValueError(f"{path}: not an ensemble model of version {ENSEMBLE_VERSION} (retrain it)")
        if blob.get("neural_id") != neural.meta.get("id"):
            raise ValueError(f"{path}: fitted with another neural checkpoint than the one given (refit it)")
        tfidf = TfidfGuesser(*(blob["tfidf"][name] for name in _TFIDF_FIELDS))
        return cls(tfidf, neural, float(blob["weight"]), blob["buzzer"])

    @classmethod
    def train(
        cls,
        records: Sequence[TrainingRecord],
        neural: NeuralGuesser,
        *,
        held_out: int = HELD_OUT_TOSSUPS,
        target_precision: float = TARGET_PRECISION,
        seed: int = 0,
        progress: Callable[[Iterable[str]], Iterable[str]] | None = None,
        say: Callable[[str], None] = lambda _: None,
    ) -> EnsembleGuesser:
        """Fit the combination and the buzzer on the held-out years of ``records`` (the neural
        guesser's training records: ``neural`` must not have seen those years), then the final
        TF-IDF model on all of them. ``progress`` wraps the word-counting pass. Raises ValueError
        when the classes differ from the neural guesser's or the held-out years give no right (or
        no wrong) guess."""
        usable, partial, final = TfidfGuesser.reference_pair(records, progress)
        if final.answers != neural.answers:
            raise ValueError("the neural guesser was trained on other answer classes than these records give")
        held = held_out_years(usable)
        answers = final.answers
        _, questions, _, classes = reference_classes(records)
        keep = [i for i, r in enumerate(usable) if r.group not in held]
        say(f"indexing the neural guesser's answers without the held-out years ({len(keep):,} documents)…")
        # The Wikipedia summaries are in every index: they hold no held-out year's text.
        article_texts, article_labels = article_documents(answers)
        partial_neural = neural.with_index(
            [questions[i] for i in keep] + article_texts, classes[keep].tolist() + article_labels
        )
        replay = [i for i, r in enumerate(usable) if r.tossup and r.group in held]
        replay = sorted(random.Random(seed).sample(replay, min(held_out, len(replay))))
        categories = buzzer_categories(usable)
        prefixes = Replay([usable[i] for i in replay], REPLAY_EVERY)
        texts = prefixes.texts
        say(f"replaying {len(replay):,} held-out tossups ({len(texts):,} prefixes) with both guessers…")

        def right(best: np.ndarray) -> np.ndarray:
            return prefixes.right(best, answers)

        candidates = (*partial_neural.top_classes(texts, CANDIDATES), *partial.top_classes(texts, CANDIDATES))
        accuracy = {w: float(right(combine(*candidates, w).best).mean()) for w in _WEIGHTS}
        weight = max(accuracy, key=lambda w: accuracy[w])
        say(
            f"top-1 on the held-out prefixes: TF-IDF {right(candidates[2][:, 0]).mean():.1%}, neural "
            f"{right(candidates[0][:, 0]).mean():.1%}; combined by TF-IDF weight: "
            + ", ".join(f"{w:g}: {a:.1%}" for w, a in accuracy.items())
        )
        ranked = combine(*candidates, weight)
        correct = right(ranked.best)
        scores = partial._scores(
            texts,
            ranked.best,
            ranked.top1,
            ranked.top2,
            prefixes.seen,
            prefixes.counts,
            prefixes.categories,
            categories,
            extra=ranked.extra(),
        )
        buzzer = BuzzModel.fit(
            scores,
            correct,
            np.asarray(prefixes.groups),
            categories,
            target_precision=target_precision,
            min_tokens=REFERENCE_MIN_TOKENS,
            seed=seed,
        )
        say(buzzer.describe())
        return cls(final, neural, weight, buzzer)


_TFIDF_FIELDS = ("counter", "weighting", "matrix", "answers", "calibration", "buzzer", "class_info")


def load_or_fit(
    neural: Path,
    fitted: Path,
    records: Callable[[], list[TrainingRecord]],
    *,
    say: Callable[[str], None] = lambda _: None,
    progress: Callable[[Iterable[str]], Iterable[str]] | None = None,
) -> EnsembleGuesser:
    """The ensemble saved at ``fitted`` when it belongs to the ``neural`` checkpoint, else fitted on
    that checkpoint and the ``records()`` it was trained on (a few minutes: the TF-IDF model and the
    buzzer) and saved there. Raises FileNotFoundError, saying how to train one, when there is no
    neural checkpoint; ValueError for a checkpoint of another version; ``formats.FormatError`` for
    an unreadable training file."""
    if not neural.is_file():
        raise FileNotFoundError(
            f"no trained neural guesser at {neural}: train one with `./run manage train_guesser` "
            "(about 16 min on 2 idle cores), or play another bot"
        )
    model = NeuralGuesser.load(neural)
    if fitted.is_file():
        try:
            return EnsembleGuesser.load(fitted, model)
        except (AttributeError, ImportError, KeyError, ValueError) as exc:
            say(f"cannot load {fitted} ({exc}); fitting it again")
    data = records()
    say(f"fitting the ensemble on {neural.name} and {len(data):,} training records…")
    ensemble = EnsembleGuesser.train(data, model, progress=progress, say=say)
    ensemble.save(fitted)
    return ensemble


def training_records(train: Path, extra: Sequence[Path], max_year: int | None) -> list[TrainingRecord]:
    """A qbreader dump's and the extra question files' training records up to ``max_year``
    (``tfidf.packet_records``, ``tfidf.file_records``). Raises FormatError."""
    records = packet_records(train, max_year=max_year)
    for path in extra:
        records += file_records(path, max_year=max_year)
    return records
