"""A TF-IDF nearest-answer guesser for tossups (pure; no Django).

Every training tossup is filed under its normalised main answer (``answers.main_answer``); the questions of
one answer are concatenated into a single class document. A question prefix is answered with the class whose
TF-IDF vector (word unigrams + bigrams, sublinear tf, English stop words) has the highest cosine similarity.
This is the classic QANTA baseline (Rodriguez et al. 2019), cheap enough to re-guess on every revealed word.

The *reference bot* (:meth:`TfidfGuesser.train_reference`, what ``from_packets`` builds) adds to it: every
bonus part as a training document besides the tossups, answer classes merged across spellings the judge
treats alike (``answers.judge_key``), and a learned, calibrated buzzer (``buzzer.bots.buzzmodel``) fitted
on tossups of the two latest training years, held out whole, replayed prefix by prefix.
"""

from __future__ import annotations

import random
from collections import Counter
from collections.abc import Callable, Collection, Iterable, Iterator, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any, NamedTuple

import joblib
import numpy as np
from scipy import sparse
from sklearn.feature_extraction.text import CountVectorizer, TfidfTransformer
from sklearn.linear_model import LogisticRegression

from buzzer.bots.answers import answer_classes, answer_key, judge_key, main_answer
from buzzer.bots.buzzmodel import BuzzModel, PrefixScores
from competition.game.specs import strip_marks
from competition.vocabulary import Verdict
from formats.qbreader import iter_items
from formats.qbreader import iter_tossups as read_packet_tossups  # noqa: F401  (imported from here by bench_tfidf)
from scoring.judge import judge

# Prefix fractions at which held-out tossups are replayed to calibrate the confidence.
_CALIBRATION_FRACTIONS = (0.2, 0.4, 0.6, 0.8, 1.0)
_MODEL_FIELDS = ("counter", "weighting", "matrix", "answers", "calibration", "buzzer", "class_info")
# The reference bot's buzzer: tossups of the two held-out latest years, asked every
# _REPLAY_EVERY words; the buzz threshold is the lowest whose buzzes were right this often on them.
_HELD_OUT_TOSSUPS = 2000
_HELD_OUT_YEARS = 2
_REPLAY_EVERY = 2
TARGET_PRECISION = 0.85
#: Changes when the reference bot's training changes (cache keys of trained models include it).
REFERENCE_VERSION = "reference-4"

# Runbot settings of a model without a learned buzzer (``train``: e.g. on the demo packet or a QANTA
# file). The tossups-only ≤2020 model at these settings, on 1,200 tossups of 2021–22 asked every 4 words
# (tools.bench_bot_eval's metrics): buzz precision 83.5 % at frequency 18.7 %, ECE 0.055, expected
# score +0.081 against 8 simulated humans.
RECOMMENDED_THRESHOLD = 0.8
RECOMMENDED_MIN_TOKENS = 10
# The reference bot's buzzer decides how early; it only waits for a few words of context.
REFERENCE_MIN_TOKENS = 5
# A tossup's length when the server does not say (the qbreader 2012–2022 tossups' median is ~130 words).
TYPICAL_TOKENS = 130


class TrainingRecord(NamedTuple):
    """One training document: a tossup's text or a bonus part's, its answer line, the category,
    the set it comes from (``group``) and its year (None: unknown); ``tossup`` False for a bonus part
    (only tossups are replayed to fit the buzzer)."""

    question: str
    answer_line: str
    category: str = ""
    group: str = ""
    year: int | None = None
    tossup: bool = True


@dataclass(frozen=True)
class ClassInfo:
    """Per answer class: ``categories`` (lower-case, most common among its documents; "" unknown)
    and ``sizes`` (float array, its training documents per 10,000 training documents: a share, so that
    the buzzer fitted on a model without the held-out years reads the final model's sizes alike)."""

    categories: list[str]
    sizes: np.ndarray


@dataclass(frozen=True)
class Calibration:
    """Logistic map from (top-1 cosine, top-1 − top-2 margin) to P(guess correct)."""

    coef: tuple[float, float]
    intercept: float

    def __call__(self, top1: float, margin: float) -> float:
        z = self.coef[0] * top1 + self.coef[1] * margin + self.intercept
        return float(1.0 / (1.0 + np.exp(-z)))


class TfidfGuesser:
    """Nearest-class TF-IDF guesser; satisfies ``buzzer.bots.adapter.Model``.

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
        buzzer: BuzzModel | None = None,
        class_info: ClassInfo | None = None,
    ) -> None:
        self.counter = counter
        self.weighting = weighting
        self.matrix = matrix
        # (n_features, n_classes) CSR: a query row times it touches only the query's terms.
        self._by_term = matrix.T.tocsr()
        self.answers = answers
        self.calibration = calibration
        self.buzzer = buzzer
        self.class_info = class_info

    @property
    def threshold(self) -> float:
        """The confidence at which to buzz: the learned buzzer's, else ``RECOMMENDED_THRESHOLD``."""
        return self.buzzer.threshold if self.buzzer is not None else RECOMMENDED_THRESHOLD

    @property
    def min_tokens(self) -> int:
        """Tokens to wait for before buzzing: ``REFERENCE_MIN_TOKENS`` with a learned buzzer, else
        ``RECOMMENDED_MIN_TOKENS``."""
        return REFERENCE_MIN_TOKENS if self.buzzer is not None else RECOMMENDED_MIN_TOKENS

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

    @classmethod
    def train_reference(
        cls,
        records: Sequence[TrainingRecord],
        *,
        held_out: int = _HELD_OUT_TOSSUPS,
        target_precision: float = TARGET_PRECISION,
        seed: int = 0,
        progress: Callable[[Iterable[str]], Iterable[str]] | None = None,
        replay_progress: Callable[[Iterable[int]], Iterable[int]] | None = None,
    ) -> TfidfGuesser:
        """The reference bot: fit on every record (tossups, and bonus parts whose answer is some
        tossup's), classes keyed by ``judge_key``, plus a learned buzzer.

        The buzzer is fitted on the two latest years with tossups, held out whole: a model trained
        without them (their bonuses included) replays ``held_out`` of their tossups (drawn with
        ``seed``) every ``_REPLAY_EVERY`` words, the judge rules each guess,
        and ``BuzzModel.fit`` learns P(right) and the threshold for ``target_precision``. Then the
        final model is fitted on everything. ``progress`` wraps the word-counting pass,
        ``replay_progress`` the replay (e.g. progress bars). Raises ValueError if no usable record
        remains or the held-out sets give no right (or no wrong) guess.
        """
        usable, partial, final = cls.reference_pair(records, progress)
        held = held_out_years(usable)
        replay = [i for i, r in enumerate(usable) if r.tossup and r.group in held]
        replay = sorted(random.Random(seed).sample(replay, min(held_out, len(replay))))
        buzzer = partial._fit_buzzer(
            [usable[i] for i in replay], buzzer_categories(usable), target_precision, seed, replay_progress
        )
        final.buzzer = buzzer
        return final

    @classmethod
    def reference_pair(
        cls,
        records: Sequence[TrainingRecord],
        progress: Callable[[Iterable[str]], Iterable[str]] | None = None,
    ) -> tuple[list[TrainingRecord], TfidfGuesser, TfidfGuesser]:
        """``(usable records, partial, final)``: the reference classes (:func:`reference_classes`)
        of ``records``, a model without the held-out years (:func:`held_out_years`; its class
        sizes and categories counted without them) and one on every usable record, neither with a
        buzzer; one word-counting pass (wrapped in ``progress``) serves both."""
        usable, questions, answers, classes = reference_classes(records)
        counter = CountVectorizer(
            ngram_range=(1, 2), stop_words="english", strip_accents="unicode", dtype=np.float32
        )
        counts = counter.fit_transform(progress(questions) if progress else questions).tocsr()
        categories = [r.category.strip().lower() for r in usable]
        held = held_out_years(usable)
        keep = np.array([r.group not in held for r in usable])
        weighting, matrix = _class_tfidf(counts[keep], classes[keep], len(answers))
        partial = cls(
            counter,
            weighting,
            matrix,
            answers,
            None,
            None,
            _class_info(categories, classes, keep, len(answers)),
        )
        weighting, matrix = _class_tfidf(counts, classes, len(answers))
        info = _class_info(categories, classes, np.ones(len(usable), dtype=bool), len(answers))
        return usable, partial, cls(counter, weighting, matrix, answers, None, None, info)

    def _fit_buzzer(
        self,
        tossups: list[TrainingRecord],
        categories: list[str],
        target_precision: float,
        seed: int,
        progress: Callable[[Iterable[int]], Iterable[int]] | None,
    ) -> BuzzModel:
        replay = Replay(tossups, _REPLAY_EVERY)
        best, top1, top2 = self._rank_batch(replay.texts, progress)
        correct = replay.right(best, self.answers)
        texts, seen, counts, tossup_category = replay.texts, replay.seen, replay.counts, replay.categories
        groups = replay.groups
        scores = self._scores(texts, best, top1, top2, seen, counts, tossup_category, categories)
        return BuzzModel.fit(
            scores,
            correct,
            np.asarray(groups),
            categories,
            target_precision=target_precision,
            min_tokens=REFERENCE_MIN_TOKENS,
            seed=seed,
        )

    def _scores(
        self,
        texts: Sequence[str],
        best: np.ndarray,
        top1: np.ndarray,
        top2: np.ndarray,
        seen: Sequence[int],
        token_count: Sequence[int],
        tossup_category: Sequence[str],
        categories: list[str],
        extra: np.ndarray | None = None,
    ) -> PrefixScores:
        """The buzzer's inputs for ranked prefixes (``_rank_batch``'s arrays; ``extra``: more feature
        columns (n, k), e.g. the ensemble's)."""
        info = self.class_info
        if info is None:
            raise ValueError("this model has no class information (train it with train_reference)")
        match, mentioned = np.empty(len(texts)), np.empty(len(texts))
        for i, (text, guess, category) in enumerate(zip(texts, best, tossup_category, strict=True)):
            usual, given = info.categories[guess], category.strip().lower()
            match[i] = 0.5 if not usual or not given else float(usual == given)
            words = [w for w in answer_key(self.answers[guess]).split() if len(w) > 2]
            revealed = set(answer_key(text).split())
            mentioned[i] = sum(w in revealed for w in words) / len(words) if words else 0.0
        return PrefixScores(
            top1=top1,
            top2=top2,
            seen=np.asarray(seen, dtype=float),
            token_count=np.asarray(token_count, dtype=float),
            class_size=info.sizes[best].astype(float),
            category_match=match,
            mentioned=mentioned,
            category=np.array([_index(categories, c.strip().lower()) for c in tossup_category], dtype=int),
            extra=extra,
        )

    def _rank_batch(
        self, texts: Sequence[str], progress: Callable[[Iterable[int]], Iterable[int]] | None = None
    ) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """(best class index, top-1 cosine, top-2 cosine) per text, ranked in chunks of 256. Only the
        classes sharing a term with a text are looked at (a text with none gets class 0 and cosines 0)."""
        best = np.zeros(len(texts), dtype=int)
        top1, top2 = np.zeros(len(texts)), np.zeros(len(texts))
        starts: Iterable[int] = range(0, len(texts), 256)
        for start in progress(starts) if progress else starts:
            scores = (self._vectors(list(texts[start : start + 256])) @ self._by_term).tocsr()
            for r in range(scores.shape[0]):
                lo, hi = scores.indptr[r], scores.indptr[r + 1]
                data, classes = scores.data[lo:hi], scores.indices[lo:hi]
                if hi - lo == 1:
                    best[start + r], top1[start + r] = classes[0], data[0]
                elif hi - lo > 1:
                    two = np.argpartition(-data, 1)[:2]
                    first, second = (two[0], two[1]) if data[two[0]] >= data[two[1]] else (two[1], two[0])
                    best[start + r], top1[start + r], top2[start + r] = (
                        classes[first],
                        data[first],
                        data[second],
                    )
        return best, top1, top2

    def top_classes(self, texts: Sequence[str], k: int) -> tuple[np.ndarray, np.ndarray]:
        """The ``k`` classes of highest cosine per text, best first: (class indices, cosines), each
        (len(texts), k) int / float. Classes sharing no term with a text fill its row with index -1 and
        cosine 0 (what a re-ranker of the candidates is given)."""
        index = np.full((len(texts), k), -1, dtype=int)
        cosine = np.zeros((len(texts), k))
        for start in range(0, len(texts), 256):
            scores = (self._vectors(list(texts[start : start + 256])) @ self._by_term).tocsr()
            for r in range(scores.shape[0]):
                lo, hi = scores.indptr[r], scores.indptr[r + 1]
                order = np.argsort(-scores.data[lo:hi], kind="stable")[:k]
                index[start + r, : len(order)] = scores.indices[lo:hi][order]
                cosine[start + r, : len(order)] = scores.data[lo:hi][order]
        return index, cosine

    def guess_prefix(
        self, text: str, seen: int, token_count: int | None, category: str = ""
    ) -> tuple[str, float]:
        """``(main answer, confidence)`` for a tossup prefix of ``seen`` of ``token_count`` tokens (None:
        unknown, taken as ``TYPICAL_TOKENS``): with a learned buzzer the calibrated P(right) from the
        prefix's features, else :meth:`guess`."""
        if self.buzzer is None:
            return self.guess(text)
        token_count = token_count or max(seen, TYPICAL_TOKENS)
        best, top1, top2 = self._rank_batch([text])
        if top1[0] <= 0.0:
            return self.answers[int(best[0])], 0.0
        scores = self._scores(
            [text],
            best,
            top1,
            top2,
            [max(seen, 1)],
            [max(token_count, seen, 1)],
            [category],
            self.buzzer.categories,
        )
        return self.answers[int(best[0])], float(self.buzzer.confidence(scores)[0])

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

        Confidence is the calibrated P(correct) when calibration was fitted, else the top-1 cosine similarity;
        with a learned buzzer, :meth:`guess_prefix` as if the text were the whole tossup. Text with no
        known term gets the first class with confidence 0.
        """
        if self.buzzer is not None:
            seen = len(text_so_far.split())
            return self.guess_prefix(text_so_far, seen, seen)
        ((answer, top1, margin),) = self._rank([text_so_far])
        if top1 <= 0.0:
            return answer, 0.0
        return answer, self.calibration(top1, margin) if self.calibration else top1

    def bonus_guess(self, leadin: str, part_text: str) -> str:
        """Main answer for a bonus part, guessed from the part text with the leadin as context."""
        best, _, _ = self._rank_batch([f"{leadin} {part_text}"])
        return self.answers[int(best[0])]

    def save(self, path: str | Path) -> None:
        """Write the fitted model to ``path`` (joblib, compressed), creating its folder (a fresh
        clone has no ``var/cache``)."""
        blob = {name: getattr(self, name) for name in _MODEL_FIELDS}
        Path(path).parent.mkdir(parents=True, exist_ok=True)
        joblib.dump({**blob, "version": REFERENCE_VERSION}, path, compress=3)

    @classmethod
    def load(cls, path: str | Path) -> TfidfGuesser:
        """Read a model written by :meth:`save`. Raises ValueError if the file holds something else or a
        model of another ``REFERENCE_VERSION`` (retrain it).

        Only load files you wrote yourself: joblib unpickles arbitrary objects.
        """
        blob = joblib.load(path)
        if not isinstance(blob, dict) or set(blob) != {*_MODEL_FIELDS, "version"}:
            raise ValueError(f"{path}: not a TfidfGuesser model file")
        if blob["version"] != REFERENCE_VERSION:
            raise ValueError(f"{path}: a TfidfGuesser of version {blob['version']}, not {REFERENCE_VERSION}")
        return cls(*(blob[name] for name in _MODEL_FIELDS))

    @classmethod
    def from_packets(
        cls,
        path: str | Path,
        max_year: int | None = None,
        sets: Collection[str] | None = None,
        *,
        extra: Sequence[TrainingRecord] = (),
        **train_kwargs: Any,
    ) -> TfidfGuesser:
        """The reference bot (:meth:`train_reference`) trained on the tossups and bonus parts of a
        qbreader JSONL(.gz) dump (:func:`packet_records`) plus ``extra`` records (e.g.
        :func:`file_records` of a QANTA file).

        ``max_year``: keep items with ``year`` ≤ max_year (inclusive); ``sets``: keep only these set names.
        Raises ``formats.FormatError`` (a ValueError naming the file, and the line for a bad line) for a
        missing or malformed file.
        """
        records = [*packet_records(path, max_year=max_year, sets=sets), *extra]
        return cls.train_reference(records, **train_kwargs)


def packet_records(
    path: str | Path, *, max_year: int | None = None, sets: Collection[str] | None = None
) -> list[TrainingRecord]:
    """Training records of a qbreader dump: each tossup, and each bonus part (its text, without the
    leadin shared by the three parts), with category, set and year. Raises FormatError."""
    records = []
    for kind in ("tossup", "bonus"):
        for item in iter_items(path, kind=kind, max_year=max_year, sets=sets):
            category, group = str(item.get("category") or ""), str(item.get("set") or "")
            year = item.get("year") if isinstance(item.get("year"), int) else None
            if kind == "tossup":
                records.append(
                    TrainingRecord(
                        item.get("question") or "", item.get("answer") or "", category, group, year
                    )
                )
                continue
            for text, line in zip(item.get("parts") or [], item.get("answers") or [], strict=False):
                if isinstance(text, str) and isinstance(line, str):
                    records.append(TrainingRecord(text, line, category, group, year, tossup=False))
    return records


def reference_classes(
    records: Sequence[TrainingRecord],
) -> tuple[list[TrainingRecord], list[str], list[str], np.ndarray]:
    """The reference bots' answer classes: ``(usable records, their question texts, the class
    answers (n_classes,), each usable record's class index int (n,))``, classes keyed by
    ``judge_key`` of the main answer. Bonus parts enrich the tossups' answer classes but found none
    of their own (a class made of one short part would win short prefixes on a single rare word), so
    a record whose answer is no tossup's is left out. The TF-IDF and neural guessers share them."""
    keys = [judge_key(main_answer(r.answer_line)) if r.question else "" for r in records]
    tossup_keys = {k for k, r in zip(keys, records, strict=True) if k and r.tossup}
    usable = [r for k, r in zip(keys, records, strict=True) if k in tossup_keys]
    questions, answers, classes = answer_classes([(r.question, r.answer_line) for r in usable], key=judge_key)
    return usable, questions, answers, classes


class Replay:
    """Held-out tossups read as the live bot meets them, every ``every`` words and at the end (text
    only: a media marker is not a word): per prefix (lists of equal length) its ``texts``, words
    ``seen``, the tossup's word ``counts`` and ``categories``, and ``groups`` (the tossup's index,
    rows of a tossup contiguous in reading order)."""

    def __init__(self, tossups: Sequence[TrainingRecord], every: int) -> None:
        self.texts: list[str] = []
        self.seen: list[int] = []
        self.counts: list[int] = []
        self.categories: list[str] = []
        self.groups: list[int] = []
        self._lines: list[str] = []
        self._verdicts: dict[tuple[int, int], bool] = {}
        for k, record in enumerate(tossups):
            words = [w for w in strip_marks(record.question.split())[0] if isinstance(w, str)]
            for n in sorted({*range(every, len(words) + 1, every), len(words)}):
                self.texts.append(" ".join(words[:n]))
                self.seen.append(n)
                self.counts.append(len(words))
                self.categories.append(record.category)
                self.groups.append(k)
                self._lines.append(record.answer_line)

    def right(self, best: np.ndarray, answers: Sequence[str]) -> np.ndarray:
        """bool (n_prefixes,): whether each prefix's guessed class (``best``, indexes into
        ``answers``) is accepted by the judge; each (tossup, class) is judged once."""
        out = np.zeros(len(self.texts), dtype=bool)
        for row, (group, guess) in enumerate(zip(self.groups, best, strict=True)):
            key = (group, int(guess))
            if key not in self._verdicts:
                verdict = judge(self._lines[row], answers[int(guess)]).verdict
                self._verdicts[key] = verdict == Verdict.ACCEPT
            out[row] = self._verdicts[key]
        return out


def buzzer_categories(usable: Sequence[TrainingRecord]) -> list[str]:
    """The tossup categories (lower-case) with at least 50 training tossups, most common first: the
    learned buzzers' category indicators."""
    known = Counter(c for r in usable if r.tossup and (c := r.category.strip().lower()))
    return [c for c, n in known.most_common() if n >= 50]


def file_records(path: str | Path, *, max_year: int | None = None) -> list[TrainingRecord]:
    """Training records of any question file the importers read (QANTA JSON, the demo packet, …):
    its tossups and bonus parts. Raises FormatError (a ValueError) for an unreadable file."""
    from formats.questions import parse_file

    parsed = parse_file(path, max_year=max_year, skip_invalid=True)
    records = [
        TrainingRecord(t.question, t.answer_line, t.category or "", t.set_name, t.year)
        for t in parsed.tossups
    ]
    for b in parsed.bonuses:
        records.extend(
            TrainingRecord(part.text, part.answer_line, b.category or "", b.set_name, b.year, tossup=False)
            for part in b.parts
        )
    return records


def _index(items: list[str], item: str) -> int:
    try:
        return items.index(item)
    except ValueError:
        return -1


def held_out_years(records: Sequence[TrainingRecord], years: int = _HELD_OUT_YEARS) -> set[str]:
    """The sets of the latest ``years`` years with tossups (at most all years but the first), held
    out whole: sets of one year share
    questions (mirrors, shared packets), which would make a held-out tossup look already seen, and
    the bot meets questions one or two years newer than its training (the test years)."""
    known = sorted({r.year for r in records if r.tossup and r.year is not None})
    if len(known) < 2:
        raise ValueError("the reference bot needs tossups of at least two years (one to hold out)")
    latest = set(known[-min(years, len(known) - 1) :])
    return {r.group for r in records if r.year in latest}


def _class_info(categories: list[str], classes: np.ndarray, keep: np.ndarray, n_classes: int) -> ClassInfo:
    """Per class, the most common category and the document count among the ``keep`` records."""
    by_class: list[Counter[str]] = [Counter() for _ in range(n_classes)]
    for category, cls, kept in zip(categories, classes, keep, strict=True):
        if kept and category:
            by_class[cls][category] += 1
    sizes = np.bincount(classes[keep], minlength=n_classes) * (10_000 / max(int(keep.sum()), 1))
    return ClassInfo([c.most_common(1)[0][0] if c else "" for c in by_class], sizes)


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
