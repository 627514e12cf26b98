"""A TF-IDF nearest-answer guesser for tossups (pure; no Django).

Every training tossup is filed under its normalised main answer (``answers.main_answer``); the questions of one
answer are concatenated into a single class document. A question prefix is answered with the class whose TF-IDF
vector (word unigrams + bigrams, sublinear tf, English stop words) has the highest cosine similarity. This is
the classic QANTA-style baseline (Rodriguez et al. 2019), cheap enough to re-guess on every revealed word.
"""

from __future__ import annotations

import gzip
import json
import random
from collections import Counter, defaultdict
from collections.abc import Collection, Iterable, Iterator
from dataclasses import dataclass
from pathlib import Path

import joblib
import numpy as np
from scipy import sparse
from sklearn.feature_extraction.text import TfidfVectorizer
from sklearn.linear_model import LogisticRegression

from buzzer.bots.answers import answer_key, main_answer

# Prefix fractions at which held-out tossups are replayed to calibrate the confidence.
_CALIBRATION_FRACTIONS = (0.2, 0.4, 0.6, 0.8, 1.0)


@dataclass(frozen=True)
class _Calibration:
    """Logistic map from (top-1 cosine, top-1 − top-2 margin) to P(guess correct)."""

    coef: tuple[float, float]
    intercept: float

    def __call__(self, top1: float, margin: float) -> float:
        z = self.coef[0] * top1 + self.coef[1] * margin + self.intercept
        return float(1.0 / (1.0 + np.exp(-z)))


class TfidfGuesser:
    """Nearest-class TF-IDF guesser; satisfies ``buzzer.bots.client.Guesser``.

    Build with :meth:`train` or :meth:`from_packets`, persist with :meth:`save` / :meth:`load`.
    ``answers``: list[str] (n_classes,), the display main answer of each class; ``matrix``: CSR
    (n_classes, n_features), L2-normalised TF-IDF rows.
    """

    def __init__(
        self,
        vectorizer: TfidfVectorizer,
        matrix: sparse.csr_matrix,
        answers: list[str],
        calibration: _Calibration | None,
    ) -> None:
        self.vectorizer = vectorizer
        self.matrix = matrix
        # (n_features, n_classes) CSR: a query row times it touches only the query's terms.
        self._by_term = matrix.T.tocsr()
        self.answers = answers
        self.calibration = calibration

    @classmethod
    def train(
        cls, records: Iterable[tuple[str, str]], *, calibrate: bool = True, seed: int = 0
    ) -> TfidfGuesser:
        """Fit on ``(question text, answer line)`` pairs.

        Answer lines are reduced with ``main_answer`` and grouped by ``answer_key`` (case/accents/punctuation
        folded); the most frequent spelling names the class. Records with an empty question or main answer are
        skipped. With ``calibrate`` (and at least 50 usable records) up to 2,000 tossups whose answer occurs
        more than once are held out, the model refit without them is replayed on prefixes of 20–100 % of
        their words, and a logistic regression on (top-1 cosine, margin to top-2) maps scores to P(correct);
        otherwise confidence is the raw top-1 cosine.
        Raises ValueError if no usable record remains.
        """
        rows = [
            (question, main)
            for question, line in records
            if question and (main := main_answer(line)) and answer_key(main)
        ]
        if not rows:
            raise ValueError("no usable (question, answer line) records to train on")
        calibration = None
        if calibrate and len(rows) >= 50:
            calibration = cls._fit_calibration(rows, random.Random(seed))
        vectorizer, matrix, answers = cls._fit(rows)
        return cls(vectorizer, matrix, answers, calibration)

    @staticmethod
    def _fit(rows: list[tuple[str, str]]) -> tuple[TfidfVectorizer, sparse.csr_matrix, list[str]]:
        texts: dict[str, list[str]] = defaultdict(list)
        spellings: dict[str, Counter[str]] = defaultdict(Counter)
        for question, main in rows:
            key = answer_key(main)
            texts[key].append(question)
            spellings[key][main] += 1
        keys = list(texts)
        vectorizer = TfidfVectorizer(
            ngram_range=(1, 2),
            sublinear_tf=True,
            stop_words="english",
            strip_accents="unicode",
            dtype=np.float32,
        )
        matrix = vectorizer.fit_transform(" ".join(texts[k]) for k in keys).tocsr()
        answers = [spellings[k].most_common(1)[0][0] for k in keys]
        return vectorizer, matrix, answers

    @classmethod
    def _fit_calibration(cls, rows: list[tuple[str, str]], rng: random.Random) -> _Calibration | None:
        counts = Counter(answer_key(main) for _, main in rows)
        repeated = [i for i, (_, main) in enumerate(rows) if counts[answer_key(main)] > 1]
        held = set(rng.sample(repeated, min(2000, len(repeated) // 5)))
        if not held:
            return None
        model = cls(*cls._fit([r for i, r in enumerate(rows) if i not in held]), calibration=None)
        features, labels = [], []
        for i in held:
            question, main = rows[i]
            words = question.split()
            prefixes = [" ".join(words[: max(1, round(f * len(words)))]) for f in _CALIBRATION_FRACTIONS]
            for guess, top1, margin in model._rank(prefixes):
                features.append((top1, margin))
                labels.append(answer_key(guess) == answer_key(main))
        if len(set(labels)) < 2:
            return None
        fit = LogisticRegression().fit(np.asarray(features), np.asarray(labels))
        return _Calibration((float(fit.coef_[0, 0]), float(fit.coef_[0, 1])), float(fit.intercept_[0]))

    def _rank(self, texts: list[str]) -> Iterator[tuple[str, float, float]]:
        """Yield (best answer, top-1 cosine, top-1 − top-2 cosine) per text."""
        scores = (self.vectorizer.transform(texts) @ self._by_term).toarray()
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

    def guesses(self, text_so_far: str, k: int = 3) -> list[tuple[str, float]]:
        """Top-``k`` ``(main answer, cosine)`` pairs, best first (used for the answer to a prompt)."""
        row = (self.vectorizer.transform([text_so_far]) @ self._by_term).toarray()[0]
        order = np.argsort(-row)[:k]
        return [(self.answers[i], float(row[i])) for i in order]

    def bonus_guess(self, leadin: str, part_text: str) -> str:
        """Main answer for a bonus part, guessed from the part text with the leadin as context."""
        return self.guess(f"{leadin} {part_text}")[0]

    def save(self, path: str | Path) -> None:
        """Write the fitted model to ``path`` (joblib, compressed)."""
        joblib.dump(
            {
                "vectorizer": self.vectorizer,
                "matrix": self.matrix,
                "answers": self.answers,
                "calibration": self.calibration,
            },
            path,
            compress=3,
        )

    @classmethod
    def load(cls, path: str | Path) -> TfidfGuesser:
        """Read a model written by :meth:`save`. Raises ValueError if the file holds something else.

        Only load files you wrote yourself: joblib unpickles arbitrary objects.
        """
        blob = joblib.load(path)
        if not isinstance(blob, dict) or set(blob) != {"vectorizer", "matrix", "answers", "calibration"}:
            raise ValueError(f"{path}: not a TfidfGuesser model file")
        return cls(blob["vectorizer"], blob["matrix"], blob["answers"], blob["calibration"])

    @classmethod
    def from_packets(
        cls,
        path: str | Path,
        max_year: int | None = None,
        sets: Collection[str] | None = None,
        **train_kwargs: bool,
    ) -> TfidfGuesser:
        """Train on the tossups of a qbreader JSONL.gz dump (one JSON object per line, ``type`` = tossup|bonus).

        ``max_year``: keep tossups with ``year`` ≤ max_year (inclusive); ``sets``: keep only these ``set`` names.
        Raises FileNotFoundError for a missing file and ValueError (with the line number) for a bad line.
        """
        return cls.train(read_packet_tossups(path, max_year=max_year, sets=sets), **train_kwargs)


def read_packet_tossups(
    path: str | Path,
    *,
    min_year: int | None = None,
    max_year: int | None = None,
    sets: Collection[str] | None = None,
) -> Iterator[tuple[str, str]]:
    """Yield ``(question, answer line)`` for the tossups of a qbreader JSONL.gz dump.

    Year bounds are inclusive; tossups without a year are kept only when no bound is given. Raises
    ValueError naming the file and line for a line that is not a JSON object.
    """
    with gzip.open(path, "rt", encoding="utf-8") as lines:
        for number, line in enumerate(lines, 1):
            try:
                item = json.loads(line)
            except json.JSONDecodeError as exc:
                raise ValueError(f"{path}:{number}: not JSON ({exc.msg})") from exc
            if not isinstance(item, dict):
                raise ValueError(f"{path}:{number}: not a JSON object")
            if item.get("type") != "tossup" or (sets is not None and item.get("set") not in sets):
                continue
            year = item.get("year")
            if (min_year is not None or max_year is not None) and year is None:
                continue
            if (min_year is not None and year < min_year) or (max_year is not None and year > max_year):
                continue
            yield item.get("question") or "", item.get("answer") or ""
