"""A TF-IDF nearest-answer guesser for tossups (pure; no Django).

Every training tossup is filed under its normalised main answer (``answers.main_answer``); the questions of
one answer are concatenated into a single class document. A question prefix is answered with the class whose
TF-IDF vector (word unigrams + bigrams, sublinear tf, English stop words) has the highest cosine similarity.
This is the classic QANTA baseline (Rodriguez et al. 2019), cheap enough to re-guess on every revealed word.
"""

from __future__ import annotations

import random
from collections.abc import Callable, Collection, Iterable, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import joblib
import numpy as np
from scipy import sparse
from sklearn.feature_extraction.text import CountVectorizer, TfidfTransformer
from sklearn.linear_model import LogisticRegression

from buzzer.bots.answers import answer_classes
from formats.qbreader import (
    iter_tossups as read_packet_tossups,
)  # also imported from here by bench, embedding

# Prefix fractions at which held-out tossups are replayed to calibrate the confidence.
_CALIBRATION_FRACTIONS = (0.2, 0.4, 0.6, 0.8, 1.0)
_MODEL_FIELDS = ("counter", "weighting", "matrix", "answers", "calibration")

# Recommended runbot settings, measured with the ≤2020 model on samples of 250 tossups of
# 2021–22: at confidence 0.5 the bot buzzes on 59 % of them and is right 22 % of the time
# (mostly negs); at 0.8 on 20 %, right 41–59 %; waiting for 10+ words lifts that further
# (0 words: 41 %, 8: 47 %, 15: 51 %).
RECOMMENDED_THRESHOLD = 0.8
RECOMMENDED_MIN_TOKENS = 10


@dataclass(frozen=True)
class Calibration:
    """Logistic map from (top-1 cosine, top-1 − top-2 margin) to P(guess correct)."""

    coef: tuple[float, float]
    intercept: float

    def __call__(self, top1: float, margin: float) -> float:
        z = self.coef[0] * top1 + self.coef[1] * margin + self.intercept
        return float(1.0 / (1.0 + np.exp(-z)))


class TfidfGuesser:
    """Nearest-class TF-IDF guesser; satisfies ``buzzer.bots.client.Model``.

    Build with :meth:`train` or :meth:`from_packets`, persist with :meth:`save` / :meth:`load`.
    ``answers``: list[str] (n_classes,), the display main answer of each class; ``matrix``: CSR
    (n_classes, n_features), L2-normalised TF-IDF rows. ``counter`` + ``weighting`` are scikit-learn's
    TfidfVectorizer split in its two halves, so that class documents are sums of per-tossup term counts and
    one tokenisation pass serves both the model and its calibration.
    """

    def __init__(
        self,
        counter: CountVectorizer,
        weighting: TfidfTransformer,
        matrix: sparse.csr_matrix,
        answers: list[str],
        calibration: Calibration | None,
    ) -> None:
        self.counter = counter
        self.weighting = weighting
        self.matrix = matrix
        # (n_features, n_classes) CSR: a query row times it touches only the query's terms.
        self._by_term = matrix.T.tocsr()
        self.answers = answers
        self.calibration = calibration

    @classmethod
    def train(
        cls,
        records: Iterable[tuple[str, str]],
        *,
        calibrate: bool = True,
        seed: int = 0,
        progress: Callable[[Iterable[str]], Iterable[str]] | None = None,
    ) -> TfidfGuesser:
        """Fit on ``(question text, answer line)`` pairs.

        Answer lines are reduced with ``main_answer`` and grouped by ``answer_key`` (case/accents/punctuation
        folded); the most frequent spelling names the class. Records with an empty question or main answer are
        skipped. With ``calibrate`` (and at least 50 usable records) up to 2,000 tossups drawn from the last 20 %
        of the records (pass them in chronological order) are held out, a model without them is replayed on prefixes of 20–100 % of their words,
        and a logistic regression on (top-1 cosine, margin to top-2) maps scores to P(correct); otherwise
        confidence is the raw top-1 cosine. ``progress`` (optional) wraps the pass over the question
        texts that counts their words, most of the training time (e.g. a progress bar).
        Raises ValueError if no usable record remains.
        """
        questions, answers, classes = answer_classes(records)
        counter = CountVectorizer(
            ngram_range=(1, 2), stop_words="english", strip_accents="unicode", dtype=np.float32
        )
        counts = counter.fit_transform(progress(questions) if progress else questions).tocsr()
        weighting, matrix = _class_tfidf(counts, classes, len(answers))
        model = cls(counter, weighting, matrix, answers, calibration=None)
        if calibrate and len(questions) >= 50:
            model.calibration = model._fit_calibration(questions, counts, classes, random.Random(seed))
        return model

    def _fit_calibration(
        self, questions: list[str], counts: sparse.csr_matrix, classes: np.ndarray, rng: random.Random
    ) -> Calibration | None:
        # Hold out the latest records so that calibration, like live play, meets questions newer than the
        # ones it was trained on (unseen answers included).
        latest = range(len(questions) - len(questions) // 5, len(questions))
        held = rng.sample(latest, min(2000, len(latest)))
        keep = np.ones(len(questions), dtype=bool)
        keep[held] = False
        weighting, matrix = _class_tfidf(counts[keep], classes[keep], len(self.answers))
        model = TfidfGuesser(self.counter, weighting, matrix, self.answers, calibration=None)
        features, labels = [], []
        for i in held:
            words = questions[i].split()
            prefixes = [" ".join(words[: max(1, round(f * len(words)))]) for f in _CALIBRATION_FRACTIONS]
            for guess, top1, margin in model._rank(prefixes):
                features.append((top1, margin))
                labels.append(guess == self.answers[classes[i]])
        if len(set(labels)) < 2:
            return None
        fit = LogisticRegression().fit(np.asarray(features), np.asarray(labels))
        return Calibration((float(fit.coef_[0, 0]), float(fit.coef_[0, 1])), float(fit.intercept_[0]))

    def _vectors(self, texts: list[str]) -> sparse.csr_matrix:
        return self.weighting.transform(self.counter.transform(texts))

    def _rank(self, texts: list[str]) -> Iterator[tuple[str, float, float]]:
        """Yield (best answer, top-1 cosine, top-1 − top-2 cosine) per text."""
        scores = (self._vectors(texts) @ self._by_term).toarray()
        for row in scores:
            if row.size == 1:
                yield self.answers[0], float(row[0]), float(row[0])
                continue
            top2 = np.argpartition(-row, 1)[:2]
            best, second = (top2[0], top2[1]) if row[top2[0]] >= row[top2[1]] else (top2[1], top2[0])
            yield self.answers[best], float(row[best]), float(row[best] - row[second])

    def guess(self, text_so_far: str) -> tuple[str, float]:
        """Return ``(main answer, confidence in [0, 1])`` for the revealed tossup text.

        Confidence is the calibrated P(correct) when calibration was fitted, else the top-1 cosine similarity.
        Text with no known term gets the first class with confidence 0.
        """
        ((answer, top1, margin),) = self._rank([text_so_far])
        if top1 <= 0.0:
            return answer, 0.0
        return answer, self.calibration(top1, margin) if self.calibration else top1

    def bonus_guess(self, leadin: str, part_text: str) -> str:
        """Main answer for a bonus part, guessed from the part text with the leadin as context."""
        return self.guess(f"{leadin} {part_text}")[0]

    def save(self, path: str | Path) -> None:
        """Write the fitted model to ``path`` (joblib, compressed)."""
        joblib.dump({name: getattr(self, name) for name in _MODEL_FIELDS}, path, compress=3)

    @classmethod
    def load(cls, path: str | Path) -> TfidfGuesser:
        """Read a model written by :meth:`save`. Raises ValueError if the file holds something else.

        Only load files you wrote yourself: joblib unpickles arbitrary objects.
        """
        blob = joblib.load(path)
        if not isinstance(blob, dict) or set(blob) != set(_MODEL_FIELDS):
            raise ValueError(f"{path}: not a TfidfGuesser model file")
        return cls(*(blob[name] for name in _MODEL_FIELDS))

    @classmethod
    def from_packets(
        cls,
        path: str | Path,
        max_year: int | None = None,
        sets: Collection[str] | None = None,
        **train_kwargs: Any,
    ) -> TfidfGuesser:
        """Train on the tossups of a qbreader JSONL(.gz) dump (``formats.qbreader.iter_tossups``).

        ``max_year``: keep tossups with ``year`` ≤ max_year (inclusive); ``sets``: keep only these set names.
        Raises ``formats.FormatError`` (a ValueError naming the file, and the line for a bad line) for a
        missing or malformed file.
        """
        return cls.train(read_packet_tossups(path, max_year=max_year, sets=sets), **train_kwargs)


def _class_tfidf(
    counts: sparse.csr_matrix, classes: np.ndarray, n_classes: int
) -> tuple[TfidfTransformer, sparse.csr_matrix]:
    """Sum per-tossup term counts (n_tossups, n_features) into class documents and weight them.

    classes: int array (n_tossups,), class index of each tossup. Returns the fitted sublinear-tf TF-IDF
    weighting and the L2-normalised class matrix (n_classes, n_features).
    """
    membership = sparse.csr_matrix(
        (np.ones(len(classes), dtype=np.float32), (classes, np.arange(len(classes)))),
        shape=(n_classes, len(classes)),
    )
    class_counts = membership @ counts
    weighting = TfidfTransformer(sublinear_tf=True).fit(class_counts)
    return weighting, weighting.transform(class_counts).tocsr()
