"""The writing workshop's analysis (issue 32, item 1; pure, no Django): what each bot would do with a
tossup a writer is writing.

:func:`analyse` takes the bots (:class:`WorkshopBot` adapters of the built-in models), the tossup text,
its answer line and category, and returns, per bot, JSON-ready:

- ``guesses``: its top guesses at the whole current text, each ruled by the judge against the answer
  line (accept / prompt / reject); the first carries the bot's calibrated confidence, P(right) by its
  own buzz model, the others the guesser's raw score (cosine or probability);
- ``buzz``: the first word at which it would buzz — its own buzz model asked on every prefix (every
  word up to :data:`EVERY_WORD_UP_TO` words, then in even steps), buzz at confidence ≥ its threshold
  after its ``min_tokens`` — with the answer and the judge's verdict; ``earliest_right``: the first
  prefix whose top guess the judge accepts;
- ``sentences``: leave-one-sentence-out — the drop in the correct answer's score without each
  sentence (what gives the answer away);
- ``drivers``: the few words that drive the top guess (TF-IDF term weights: each word's share of the
  cosine; occlusion for the neural and ensemble guessers: the drop in the top guess's score without
  the word).

An LLM endpoint enabled for writing (:class:`LlmBot`) is asked on a few prefixes only (the sentence
ends, capped), so its ``buzz`` and ``earliest_right`` are at one of those; it gives no score per answer
or word, so its ``sentences`` and ``drivers`` are empty, and its result carries ``llm``, what that
analysis asked and cost (:meth:`LlmBot.report`).

and the field's target as a state of the text (:func:`target_state`): the first lines
(:func:`first_lines_end`) should stump every bot while the whole question still gives the answer.
Word positions are 0-based indexes of the display words (power marks ``(*)`` removed), as the live
server counts ``token_index``.
"""

from __future__ import annotations

import math
import re
import time
from collections.abc import Callable, Mapping, Sequence
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, replace
from typing import Any, Protocol

import numpy as np
from scipy import sparse
from tossup_bot import TossupPrefix
from tossup_bot.llm import ChatGuesser, Usage

from buzzer.bots.answers import judge_key, main_answer
from competition.game.specs import strip_marks
from competition.vocabulary import Verdict
from scoring.judge import judge, parse_answer_line

#: Prefixes are asked at every word up to this many words, then in even steps (≤ this many prefixes).
EVERY_WORD_UP_TO = 300
#: The workshop analyses tossups of up to this many words (a real tossup has 100–200).
MAX_WORDS = 1000
TOP_GUESSES = 3
TOP_DRIVERS = 5
#: The first lines end at this share of the words (at least the first sentence): the part a good
#: player may still answer from but no bot should.
FIRST_LINES_SHARE = 1 / 3
#: At most this many requests of one LLM bot are in flight at once (its prefixes are asked together,
#: so an analysis takes about one request's time).
LLM_THREADS = 8
_SENTENCE_END = re.compile(r"[.!?][\"'”’)\]]*$")
_TOKEN = re.compile(r"(?u)\b\w\w+\b")  # scikit-learn's default token pattern
_BRACKETS = {"[": "]", "(": ")", "{": "}", "<": ">"}


class WorkshopError(ValueError):
    """Input the workshop cannot analyse; ``code`` names it for the API (``text_too_long``)."""

    def __init__(self, code: str, message: str) -> None:
        super().__init__(message)
        self.code, self.message = code, message


class WorkshopBot(Protocol):
    """A built-in bot as the workshop asks it. ``name``: its key (``tfidf``, ``wiki``, ``neural``,
    ``ensemble``); ``label``: for people; ``method``: how :meth:`drivers` explains ("term weights",
    "occlusion"); ``threshold`` (in [0, 1]) and ``min_tokens``: its live buzz policy."""

    name: str
    label: str
    method: str
    threshold: float
    min_tokens: int

    def scan(
        self, texts: Sequence[str], seen: Sequence[int], token_count: int, category: str
    ) -> list[tuple[str, float]]:
        """Per prefix: (top guess, confidence in [0, 1] by the bot's own buzz model)."""
        ...

    def top(self, text: str, k: int) -> list[tuple[str, float]]:
        """The ``k`` best (answer, raw score) for ``text``, best first."""
        ...

    def answer_scores(self, texts: Sequence[str], answer: str) -> np.ndarray | None:
        """The raw score of ``answer``'s class per text, float (len(texts),); None when the bot does
        not know that answer."""
        ...

    def drivers(self, words: Sequence[str]) -> np.ndarray:
        """How much each word drives the top guess at the whole text, float (len(words),)."""
        ...


# --- validation ------------------------------------------------------------------------------------


def answer_line_errors(answer_line: str) -> list[str]:
    """Why ``answer_line`` is not usable, for a writer (empty: it parses). The judge's parser never
    raises (``scoring.judge.grammar``); this names what it would silently drop: an empty line, no main
    answer before the directives, an unclosed or unmatched bracket (with its character position,
    1-based)."""
    line = answer_line.strip()
    if not line:
        return ["the answer line is empty"]
    errors: list[str] = []
    stack: list[tuple[str, int]] = []
    for position, char in enumerate(answer_line, 1):
        if char in _BRACKETS:
            if char == "<" and re.match(r"</?[a-zA-Z]+>", answer_line[position - 1 :]):
                continue  # an HTML tag (<b>, </u>): the answer line's formatting
            stack.append((char, position))
        elif char in _BRACKETS.values():
            if char == ">" and re.search(r"</?[a-zA-Z]+$", answer_line[: position - 1]):
                continue
            if not stack or _BRACKETS[stack[-1][0]] != char:
                errors.append(f"unmatched {char!r} at character {position}")
            else:
                stack.pop()
    errors += [f"unclosed {char!r} opened at character {position}" for char, position in stack]
    if not main_answer(answer_line):
        errors.append("no main answer before the directives (write the answer first, then [accept …])")
    return errors


# --- the text ---------------------------------------------------------------------------------------


def display_words(text: str) -> list[str]:
    """The words a reader reveals one by one (whitespace words, power marks removed)."""
    tokens = strip_marks(text.split())[0]
    return [t for t in tokens if isinstance(t, str)]


def sentence_spans(words: Sequence[str]) -> list[tuple[int, int]]:
    """``(start, end)`` word ranges (end exclusive) of the sentences: a word ending in . ! ? (before
    closing quotes or brackets) ends one."""
    spans, start = [], 0
    for i, word in enumerate(words):
        if _SENTENCE_END.search(word) and len(word.rstrip(".!?\"'”’)]")) != 1:  # "J." is an initial
            spans.append((start, i + 1))
            start = i + 1
    if start < len(words):
        spans.append((start, len(words)))
    return spans


def first_lines_end(words: Sequence[str]) -> int:
    """Words in the first lines: :data:`FIRST_LINES_SHARE` of the words, and at least the first sentence
    when that is shorter than half the text."""
    n = len(words)
    spans = sentence_spans(words)
    share = math.ceil(n * FIRST_LINES_SHARE)
    first = spans[0][1] if spans else n
    return max(share, first) if first <= n / 2 else share


def prefix_lengths(n: int, min_tokens: int = 1) -> list[int]:
    """The prefix lengths asked: every word from ``min_tokens`` (≥ 1) up to :data:`EVERY_WORD_UP_TO`
    words, else even steps; always the whole text (also when shorter than ``min_tokens``: a bot that
    never buzzes on it still has a final guess)."""
    start = max(min_tokens, 1)
    if start > n:
        return [n] if n else []
    step = max(1, math.ceil(n / EVERY_WORD_UP_TO))
    return sorted({*range(start, n + 1, step), n})


# --- per bot ----------------------------------------------------------------------------------------


class Judged:
    """The judge on one answer line, each distinct guess ruled once (timing clauses per position)."""

    def __init__(self, answer_line: str, words: Sequence[str]) -> None:
        self.line, self.words = answer_line, " ".join(words)
        self.count = len(words)
        self._cache: dict[tuple[str, int | None], Verdict] = {}
        # Only "prompt before X is read"-like clauses make the position matter.
        self._timed = any(c.timing is not None for c in parse_answer_line(answer_line).clauses)

    def __call__(self, guess: str, token_index: int | None = None) -> Verdict:
        key = (guess, token_index if self._timed else None)
        if key not in self._cache:
            if not guess.strip():
                self._cache[key] = Verdict.REJECT
            else:
                self._cache[key] = judge(
                    self.line, guess, token_index=token_index, token_count=self.count, question=self.words
                ).verdict
        return self._cache[key]


def _verdict(v: Verdict) -> str:
    return {Verdict.ACCEPT: "correct", Verdict.PROMPT: "prompt"}.get(v, "wrong")


def analyse_bot(bot: WorkshopBot, words: Sequence[str], answer_line: str, category: str) -> dict[str, Any]:
    """One bot's analysis of the text (see the module docstring); ``elapsed_ms`` its cost."""
    started = time.perf_counter()
    judged = Judged(answer_line, words)
    n, text = len(words), " ".join(words)
    out: dict[str, Any] = {
        "name": bot.name,
        "label": bot.label,
        "method": bot.method,
        "threshold": bot.threshold,
        "min_tokens": bot.min_tokens,
        "guesses": [],
        "buzz": None,
        "earliest_right": None,
        "sentences": [],
        "drivers": [],
    }
    if not n:
        out["elapsed_ms"] = (time.perf_counter() - started) * 1000
        return out
    lengths = prefix_lengths(n)
    scanned = bot.scan([" ".join(words[:k]) for k in lengths], lengths, n, category)
    for k, (guess, confidence) in zip(lengths, scanned, strict=True):
        if out["earliest_right"] is None and judged(guess, k - 1) == Verdict.ACCEPT:
            out["earliest_right"] = k - 1
        if out["buzz"] is None and k >= bot.min_tokens and confidence >= bot.threshold:
            verdict = judged(guess, k - 1)
            out["buzz"] = {
                "index": k - 1,
                "answer": guess,
                "confidence": round(confidence, 3),
                "verdict": _verdict(verdict),
                "correct": verdict == Verdict.ACCEPT,
            }
    final_guess, final_confidence = scanned[-1]
    for rank, (answer, score) in enumerate(bot.top(text, TOP_GUESSES)):
        entry = {"answer": answer, "score": round(float(score), 4), "verdict": _verdict(judged(answer))}
        if rank == 0 and answer == final_guess:
            entry["confidence"] = round(final_confidence, 3)
        out["guesses"].append(entry)
    out["sentences"] = sentence_drops(bot, words, answer_line)
    weights = bot.drivers(words)
    order = [int(i) for i in np.argsort(-weights, kind="stable")[:TOP_DRIVERS] if weights[i] > 0]
    out["drivers"] = [{"index": i, "word": words[i], "weight": round(float(weights[i]), 4)} for i in order]
    if isinstance(bot, LlmBot):
        out["llm"] = bot.report()
    out["elapsed_ms"] = round((time.perf_counter() - started) * 1000, 1)
    return out


def sentence_drops(bot: WorkshopBot, words: Sequence[str], answer_line: str) -> list[dict[str, Any]]:
    """Leave-one-sentence-out: per sentence ``{"start", "end", "score", "drop"}`` — the correct
    answer's score (the bot's raw score of the answer line's main answer) without the sentence, and
    how much lower that is than with the whole text (positive: the sentence gives the answer away).
    Empty when the bot does not know the answer or the text has a single sentence."""
    spans = sentence_spans(words)
    answer = main_answer(answer_line)
    if len(spans) < 2 or not answer:
        return []
    texts = [" ".join(words)] + [" ".join([*words[:a], *words[b:]]) for a, b in spans]
    scores = bot.answer_scores(texts, answer)
    if scores is None:
        return []
    return [
        {"start": a, "end": b, "score": round(float(s), 4), "drop": round(float(scores[0] - s), 4)}
        for (a, b), s in zip(spans, scores[1:], strict=True)
    ]


# --- the whole text ---------------------------------------------------------------------------------


def check_length(words: Sequence[str]) -> None:
    """Raise WorkshopError ``text_too_long`` above :data:`MAX_WORDS` words."""
    if len(words) > MAX_WORDS:
        raise WorkshopError(
            "text_too_long",
            f"the text has {len(words):,} words; the workshop analyses tossups of up to {MAX_WORDS:,} words "
            "(your text is kept: shorten it to see the bots again)",
        )


def analyse(
    bots: Sequence[WorkshopBot], text: str, answer_line: str, category: str = "", *, at_once: bool = False
) -> dict[str, Any]:
    """Every bot's analysis (:func:`analyse_bot`) of the tossup ``text`` against ``answer_line``, with
    the text's ``words``, ``sentences`` (word spans), ``first_lines_end`` and the ``target`` state.
    ``at_once``: each bot in a thread of its own (bots that wait on the network: LLM endpoints).
    Raises WorkshopError for a text over :data:`MAX_WORDS` words or an unusable answer line
    (``bad_answer_line``, the message lists :func:`answer_line_errors`)."""
    errors = answer_line_errors(answer_line)
    if errors:
        raise WorkshopError("bad_answer_line", "; ".join(errors))
    words = display_words(text)
    check_length(words)
    if at_once and len(bots) > 1:
        with ThreadPoolExecutor(len(bots)) as pool:
            results = list(pool.map(lambda bot: analyse_bot(bot, words, answer_line, category), bots))
    else:
        results = [analyse_bot(bot, words, answer_line, category) for bot in bots]
    first = first_lines_end(words)
    return {
        "words": list(words),
        "sentences": [list(s) for s in sentence_spans(words)],
        "first_lines_end": first,
        "bots": results,
        "target": target_state(results, len(words), first),
    }


def target_state(results: Sequence[Mapping[str, Any]], n: int, first: int) -> dict[str, Any]:
    """The field's target as a state of the text: ``{"state", "message"}`` with state

    - ``empty`` (no text or no bot);
    - ``giveaway_early``: a bot buzzes right, or its top guess is right, within the first lines;
    - ``stumps_bots``: every bot is stumped in the first lines and at least one gets it by the end
      (the clues lead to the answer, as a good player needs);
    - ``stumps_all``: no bot gets it even at the end (check that a player could).
    """
    if not n or not results:
        return {"state": "empty", "message": "Write the question to see what the bots make of it."}
    early = [
        r["label"]
        for r in results
        if (r["buzz"] and r["buzz"]["correct"] and r["buzz"]["index"] < first)
        or (r["earliest_right"] is not None and r["earliest_right"] < first)
    ]
    if early:
        return {
            "state": "giveaway_early",
            "message": f"{', '.join(early)} already get{'s' if len(early) == 1 else ''} it in the first lines "
            f"(words 1–{first}): move the giveaway clues later.",
        }
    if any(r["earliest_right"] is not None for r in results):
        return {
            "state": "stumps_bots",
            "message": f"The first lines (words 1–{first}) stump every bot, and the whole question leads to "
            "the answer: a good player could still get it early.",
        }
    return {
        "state": "stumps_all",
        "message": "No bot gets it even at the end: check that the clues really lead a player to the answer.",
    }


def predict(
    bots: Sequence[WorkshopBot], text: str, answer_line: str, category: str = ""
) -> dict[str, dict[str, Any]]:
    """Each bot's predicted buzz on the tossup: ``{bot name: {"buzz_index": int | None (0-based word,
    None: it never buzzes), "answer": str (its buzz answer, else its final top guess), "correct": bool
    (the judge accepts that answer)}}``. What a version and a submission keep. Raises as
    :func:`analyse`."""
    errors = answer_line_errors(answer_line)
    if errors:
        raise WorkshopError("bad_answer_line", "; ".join(errors))
    words = display_words(text)
    check_length(words)
    out = {}
    for bot in bots:
        judged = Judged(answer_line, words)
        n = len(words)
        lengths = prefix_lengths(n, bot.min_tokens)
        scanned = bot.scan([" ".join(words[:k]) for k in lengths], lengths, n, category) if n else []
        buzz = next(
            (
                (k, g)
                for k, (g, c) in zip(lengths, scanned, strict=True)
                if c >= bot.threshold and k >= bot.min_tokens
            ),
            None,
        )
        if buzz is not None:
            out[bot.name] = {
                "buzz_index": buzz[0] - 1,
                "answer": buzz[1],
                "correct": judged(buzz[1], buzz[0] - 1) == Verdict.ACCEPT,
            }
        else:
            final = scanned[-1][0] if scanned else ""
            out[bot.name] = {"buzz_index": None, "answer": final, "correct": judged(final) == Verdict.ACCEPT}
    return out


def buzz_shift(previous: Mapping[str, Any], current: Mapping[str, Any]) -> dict[str, str]:
    """Per bot in both predictions (:func:`predict`), how its buzz moved between two versions, for
    people: "buzzed 14 words later than the last version", "no longer buzzes", …"""
    out = {}
    for name, now in current.items():
        before = previous.get(name)
        if before is None:
            continue
        a, b = before.get("buzz_index"), now.get("buzz_index")
        if a is None and b is None:
            out[name] = "still never buzzes"
        elif a is None:
            out[name] = f"now buzzes at word {b + 1} (it did not buzz in the last version)"
        elif b is None:
            out[name] = f"no longer buzzes (it buzzed at word {a + 1} in the last version)"
        elif a == b:
            out[name] = "buzzed at the same word as the last version"
        else:
            d = b - a
            out[name] = (
                f"buzzed {abs(d)} word{'s' if abs(d) != 1 else ''} {'later' if d > 0 else 'earlier'} than the last version"
            )
    return out


# --- adapters of the built-in models ------------------------------------------------------------------


def occlusion(score: Callable[[Sequence[str]], np.ndarray], words: Sequence[str]) -> np.ndarray:
    """Per word, ``score`` of the whole text minus ``score`` of the text without that word (one batch
    of len(words) + 1 texts); ``score`` maps texts to the top guess's score, float (n,)."""
    texts = [" ".join(words)] + [" ".join([*words[:i], *words[i + 1 :]]) for i in range(len(words))]
    scores = np.asarray(score(texts), dtype=float)
    return scores[0] - scores[1:]


def term_weights(
    vectors: Callable[[list[str]], sparse.csr_matrix],
    class_row: sparse.csr_matrix,
    features: Sequence[str],
    words: Sequence[str],
    preprocess: Callable[[str], str],
) -> np.ndarray:
    """Per word, its share of the TF-IDF cosine between the text and the top class: each term's
    product of query and class weights, a unigram's to every word holding it, a bigram's halved
    between the words holding its two tokens."""
    query = vectors([" ".join(words)]).tocsr()
    contribution: dict[str, float] = {}
    row = class_row.toarray().ravel() if sparse.issparse(class_row) else np.asarray(class_row).ravel()
    for feature, weight in zip(query.indices, query.data, strict=True):
        value = float(weight) * float(row[feature])
        if value > 0:
            contribution[features[feature]] = value
    tokens_of = [_TOKEN.findall(preprocess(w)) for w in words]
    holders: dict[str, list[int]] = {}
    for i, toks in enumerate(tokens_of):
        for t in toks:
            holders.setdefault(t, []).append(i)
    out = np.zeros(len(words))
    for term, value in contribution.items():
        parts = term.split(" ")
        share = value / len(parts)
        for part in parts:
            where = holders.get(part, [])
            for i in where:
                out[i] += share / len(where)
    return out


def _key_index(answers: Sequence[str]) -> dict[str, int]:
    index: dict[str, int] = {}
    for i, a in enumerate(answers):
        index.setdefault(judge_key(a), i)
    return index


def _preprocess(text: str) -> str:
    from sklearn.feature_extraction.text import strip_accents_unicode

    return strip_accents_unicode(text.lower())


@dataclass
class TfidfBot:
    """The reference TF-IDF bot (``buzzer.bots.tfidf.TfidfGuesser``): its learned buzzer's calibrated
    P(right) (or, for a model without one, its calibration) on every prefix; drivers by term weights."""

    model: Any
    name: str = "tfidf"
    label: str = "TF-IDF reference bot"
    method: str = "term weights"

    def __post_init__(self) -> None:
        self.threshold, self.min_tokens = float(self.model.threshold), int(self.model.min_tokens)
        self._keys = _key_index(self.model.answers)
        self._features = self.model.counter.get_feature_names_out()

    def scan(
        self, texts: Sequence[str], seen: Sequence[int], token_count: int, category: str
    ) -> list[tuple[str, float]]:
        m = self.model
        if m.buzzer is None:
            return [(a, c) if c > 0 else ("", 0.0) for a, c in map(m.guess, texts)]
        best, top1, top2 = m._rank_batch(list(texts))
        scores = m._scores(
            texts,
            best,
            top1,
            top2,
            seen,
            [token_count] * len(texts),
            [category] * len(texts),
            m.buzzer.categories,
        )
        confidence = m.buzzer.confidence(scores)
        return [
            (m.answers[int(b)], float(c)) if t > 0 else ("", 0.0)  # no known word: no guess
            for b, c, t in zip(best, confidence, top1, strict=True)
        ]

    def top(self, text: str, k: int) -> list[tuple[str, float]]:
        index, cosine = self.model.top_classes([text], k)
        return [
            (self.model.answers[int(i)], float(c)) for i, c in zip(index[0], cosine[0], strict=True) if i >= 0
        ]

    def answer_scores(self, texts: Sequence[str], answer: str) -> np.ndarray | None:
        i = self._keys.get(judge_key(answer))
        if i is None:
            return None
        return np.asarray((self.model._vectors(list(texts)) @ self.model.matrix[i].T).toarray()).ravel()

    def drivers(self, words: Sequence[str]) -> np.ndarray:
        index, _ = self.model.top_classes([" ".join(words)], 1)
        if index[0, 0] < 0:
            return np.zeros(len(words))
        row = self.model.matrix[int(index[0, 0])]
        return term_weights(self.model._vectors, row, self._features, words, _preprocess)


@dataclass
class WikiBot:
    """The Wikipedia-summaries bot (``buzzer.bots.wiki.WikiModel``): its calibrated confidence on every
    prefix, buzz at its recommended threshold after its minimum words; drivers by term weights."""

    model: Any
    threshold: float
    min_tokens: int
    name: str = "wiki"
    label: str = "Wikipedia bot"
    method: str = "term weights"

    def __post_init__(self) -> None:
        self._keys = _key_index(self.model.answers)
        self._features = self.model.vectorizer.get_feature_names_out()

    def scan(
        self, texts: Sequence[str], seen: Sequence[int], token_count: int, category: str
    ) -> list[tuple[str, float]]:
        out = []
        for text, (best, top1, margin) in zip(texts, self.model.rank(list(texts)), strict=True):
            cal = self.model.calibration
            if top1 <= 0:  # no known word: no guess
                out.append(("", 0.0))
                continue
            confidence = cal(top1, margin, len(text.split())) if cal else top1
            out.append((self.model.answers[best], float(confidence)))
        return out

    def top(self, text: str, k: int) -> list[tuple[str, float]]:
        row = (self.model.vectorizer.transform([text]) @ self.model.matrix.T).toarray()[0]
        order = np.argsort(-row, kind="stable")[:k]
        return [(self.model.answers[int(i)], float(row[i])) for i in order if row[i] > 0]

    def answer_scores(self, texts: Sequence[str], answer: str) -> np.ndarray | None:
        i = self._keys.get(judge_key(answer))
        if i is None:
            return None
        return np.asarray(
            (self.model.vectorizer.transform(list(texts)) @ self.model.matrix[i].T).toarray()
        ).ravel()

    def drivers(self, words: Sequence[str]) -> np.ndarray:
        row = (self.model.vectorizer.transform([" ".join(words)]) @ self.model.matrix.T).toarray()[0]
        if not row.size or row.max() <= 0:
            return np.zeros(len(words))
        best = self.model.matrix[int(np.argmax(row))]
        return term_weights(self.model.vectorizer.transform, best, self._features, words, _preprocess)


@dataclass
class NeuralBot:
    """The neural guesser alone (``buzzer.bots.neural.NeuralGuesser``): no learned buzzer, so it buzzes
    at softmax ≥ ``threshold`` after ``min_tokens`` words (``tools.bench_bots``'s rule); drivers by
    occlusion."""

    model: Any
    threshold: float = 0.8
    min_tokens: int = 5
    name: str = "neural"
    label: str = "Neural guesser"
    method: str = "occlusion"

    def __post_init__(self) -> None:
        self._keys = _key_index(self.model.answers)

    def scan(
        self, texts: Sequence[str], seen: Sequence[int], token_count: int, category: str
    ) -> list[tuple[str, float]]:
        index, prob = self.model.top_classes(list(texts), 1)
        return [(self.model.answers[int(i)], float(p)) for i, p in zip(index[:, 0], prob[:, 0], strict=True)]

    def top(self, text: str, k: int) -> list[tuple[str, float]]:
        index, prob = self.model.top_classes([text], k)
        return [(self.model.answers[int(i)], float(p)) for i, p in zip(index[0], prob[0], strict=True)]

    def answer_scores(self, texts: Sequence[str], answer: str) -> np.ndarray | None:
        i = self._keys.get(judge_key(answer))
        return None if i is None else np.asarray(self.model.probabilities(list(texts))[:, i], dtype=float)

    def drivers(self, words: Sequence[str]) -> np.ndarray:
        index, _ = self.model.top_classes([" ".join(words)], 1)
        best = int(index[0, 0])
        return occlusion(lambda texts: self.model.probabilities(list(texts))[:, best], words)


@dataclass
class EnsembleBot:
    """The ensemble bot (``buzzer.bots.ensemble.EnsembleGuesser``): its learned buzzer's calibrated
    P(right) on every prefix; scores are the combined p_neural + w · cosine; drivers by occlusion."""

    model: Any
    name: str = "ensemble"
    label: str = "Ensemble bot (neural + TF-IDF)"
    method: str = "occlusion"

    def __post_init__(self) -> None:
        self.threshold, self.min_tokens = float(self.model.threshold), int(self.model.min_tokens)
        self._keys = _key_index(self.model.answers)

    def scan(
        self, texts: Sequence[str], seen: Sequence[int], token_count: int, category: str
    ) -> list[tuple[str, float]]:
        n = len(texts)
        ranked, scores = self.model.scores(list(texts), list(seen), [token_count] * n, [category] * n)
        confidence = self.model.buzzer.confidence(scores)
        return [(self.model.answers[int(b)], float(c)) for b, c in zip(ranked.best, confidence, strict=True)]

    def _combined(self, texts: Sequence[str], classes: Sequence[int]) -> np.ndarray:
        m = self.model
        prob = m.neural.probabilities(list(texts))[:, list(classes)]
        cosine = (m.tfidf._vectors(list(texts)) @ m.tfidf.matrix[list(classes)].T).toarray()
        return np.asarray(prob + m.weight * cosine, dtype=float)

    def top(self, text: str, k: int) -> list[tuple[str, float]]:
        from buzzer.bots.ensemble import CANDIDATES

        n_index, _ = self.model.neural.top_classes([text], CANDIDATES)
        t_index, _ = self.model.tfidf.top_classes([text], CANDIDATES)
        candidates = sorted({int(c) for c in (*n_index[0], *t_index[0]) if c >= 0})
        scores = self._combined([text], candidates)[0]
        order = np.argsort(-scores, kind="stable")[:k]
        return [(self.model.answers[candidates[i]], float(scores[i])) for i in order]

    def answer_scores(self, texts: Sequence[str], answer: str) -> np.ndarray | None:
        i = self._keys.get(judge_key(answer))
        return None if i is None else self._combined(texts, [i])[:, 0]

    def drivers(self, words: Sequence[str]) -> np.ndarray:
        best = self.model.answers.index(self.top(" ".join(words), 1)[0][0])
        return occlusion(lambda texts: self._combined(texts, [best])[:, 0], words)


@dataclass
class LlmBot:
    """An LLM endpoint the organiser enabled for writing (``tossup_bot.llm.ChatGuesser``), built for
    one analysis. Each :meth:`scan` asks at most ``max_prefixes`` prefixes, all at once (up to
    :data:`LLM_THREADS` in flight): the sentence ends from its ``min_tokens`` on (evenly spaced among
    them when there are more) and always the whole text; the other prefixes get no guess, so its buzz
    is the first asked prefix whose confidence reaches its threshold. Its one guess at the whole text
    has its confidence as the score. It gives no score per answer or per word: :meth:`answer_scores`
    is None and :meth:`drivers` zero (the page says "not available"). ``cost_per_prefix``: the
    organiser's declared USD per prefix; :meth:`report`: what the last scan asked and spent."""

    guesser: ChatGuesser
    name: str
    label: str
    max_prefixes: int
    cost_per_prefix: float = 0.0
    method: str = "not available"

    def __post_init__(self) -> None:
        self.threshold, self.min_tokens = float(self.guesser.threshold), int(self.guesser.min_tokens)
        self._replies: dict[str, tuple[str, float]] = {}
        self._asked: list[int] = []
        self._spent = Usage()

    def _chosen(self, seen: Sequence[int], whole: Sequence[str]) -> list[int]:
        """Indexes into ``seen`` of the prefixes to ask (ascending, the last one always)."""
        ends = {end for _, end in sentence_spans(whole)}
        candidates = [i for i, k in enumerate(seen[:-1]) if k in ends and k >= self.min_tokens]
        room = self.max_prefixes - 1
        if len(candidates) > room:
            candidates = [candidates[int(j)] for j in np.linspace(0, len(candidates) - 1, room).round()]
        return [*candidates, len(seen) - 1]

    def scan(
        self, texts: Sequence[str], seen: Sequence[int], token_count: int, category: str
    ) -> list[tuple[str, float]]:
        self._replies, self._asked, self._spent = {}, [], Usage()
        if not texts:
            return []
        chosen = self._chosen(seen, texts[-1].split())
        prefixes = [TossupPrefix(None, None, tuple(texts[i].split()), token_count, category) for i in chosen]
        before = replace(self.guesser.usage)
        with ThreadPoolExecutor(min(len(prefixes), LLM_THREADS)) as pool:
            replies = list(pool.map(lambda p: self.guesser.ask(self.guesser.tossup_message(p))[:2], prefixes))
        after = self.guesser.usage  # this scan's spending is the difference (a guesser may be reused)
        self._spent = Usage(
            requests=after.requests - before.requests,
            failures=after.failures - before.failures,
            prompt_tokens=after.prompt_tokens - before.prompt_tokens,
            completion_tokens=after.completion_tokens - before.completion_tokens,
            cost=after.cost - before.cost,
            last_failure=after.last_failure if after.failures > before.failures else "",
        )
        out = [("", 0.0)] * len(texts)
        for i, reply in zip(chosen, replies, strict=True):
            out[i] = self._replies[texts[i]] = reply
        self._asked = [seen[i] for i in chosen]
        return out

    def top(self, text: str, k: int) -> list[tuple[str, float]]:
        """Its one guess at ``text`` as the last :meth:`scan` asked it (never a request of its own: the
        scan's cap bounds the cost); empty when that scan did not ask ``text`` or got no guess."""
        guess, confidence = self._replies.get(text, ("", 0.0))
        return [(guess, confidence)] if guess else []

    def answer_scores(self, texts: Sequence[str], answer: str) -> np.ndarray | None:
        return None  # an LLM gives no score to an answer it did not choose

    def drivers(self, words: Sequence[str]) -> np.ndarray:
        return np.zeros(len(words))  # nor to a word

    def report(self) -> dict[str, Any]:
        """What the last scan asked and spent: ``prefixes`` (0-based index of each asked prefix's last
        word), ``max_prefixes``, ``requests``, ``failures``, ``prompt_tokens``, ``completion_tokens``,
        ``cost`` (USD, by the endpoint's token prices), ``cost_per_prefix`` (USD, declared) and
        ``error`` (why the latest failed request failed, without the endpoint's URL or key; None when
        none failed)."""
        spent = self._spent
        error = None
        if spent.failures:
            error = spent.last_failure.replace(self.guesser.endpoint, "the endpoint")
            if self.guesser.api_key:
                error = error.replace(self.guesser.api_key, "[key]")
        return {
            "prefixes": [k - 1 for k in self._asked],
            "max_prefixes": self.max_prefixes,
            "requests": spent.requests,
            "failures": spent.failures,
            "prompt_tokens": spent.prompt_tokens,
            "completion_tokens": spent.completion_tokens,
            "cost": spent.cost,
            "cost_per_prefix": self.cost_per_prefix,
            "error": error,
        }
