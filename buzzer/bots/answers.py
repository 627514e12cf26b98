"""Answer classes for the bots (pure; no Django).

An answer line such as ``<b><u>Marie Curie</u></b> [accept Maria Skłodowska; prompt on Curie]`` names the
main answer first and then the directives. Bots train on and answer with the main answer only, read by the
judge's answer-line parser (``scoring.judge.grammar``: one parser for the judge and the bots), and group
spellings of it by ``answer_key``.
"""

from __future__ import annotations

import re
from collections import Counter, defaultdict
from collections.abc import Callable, Iterable
from functools import lru_cache

import numpy as np
from anyascii import anyascii

from scoring.judge.grammar import main_answer
from scoring.judge.text import tokens

__all__ = ["answer_classes", "answer_key", "judge_key", "main_answer"]

_NON_WORD = re.compile(r"[^0-9a-z]+")


def answer_key(answer: str) -> str:
    """Grouping key for a main answer: ASCII-folded, lower-case, punctuation as single spaces.

    ``"Günter Grass"`` and ``"Gunter  Grass."`` share the key ``"gunter grass"``. Returns ``""`` when nothing
    alphanumeric remains.
    """
    return _NON_WORD.sub(" ", anyascii(answer).lower()).strip()


@lru_cache(maxsize=1 << 17)
def judge_key(answer: str) -> str:
    """Grouping key that merges the spellings the judge treats alike: the judge's folded word keys
    (``scoring.judge.text.tokens``: case, diacritics, numbers as digits, singular nouns) without
    articles. ``"The Netherlands"`` → ``"netherland"``, ``"World War II"`` → ``"world war 2"``,
    ``"Nineteen Eighty-Four"`` → ``"1984"``. Falls back to :func:`answer_key` when no such word
    remains."""
    return " ".join(t.key for t in tokens(answer) if not t.article) or answer_key(answer)


def answer_classes(
    records: Iterable[tuple[str, str]],
    *,
    keep_last: int | None = None,
    key: Callable[[str], str] = answer_key,
) -> tuple[list[str], list[str], np.ndarray]:
    """Group ``(question, answer line)`` records into answer classes by ``key`` (default
    :func:`answer_key`) of the main answer; records without a question or a main answer are dropped, and ``keep_last``
    keeps only the most recent N (records come in date order).

    Returns ``(questions, answers, classes)``: the kept questions; one display spelling per
    class (its most common main answer); and an int array of shape (n_questions,) giving each
    question's class. Raises ValueError when no record is usable."""
    questions, mains = [], []
    for question, line in records:
        if question and (main := main_answer(line)) and key(main):
            questions.append(question)
            mains.append(main)
    if keep_last is not None:
        questions, mains = questions[-keep_last:], mains[-keep_last:]
    if not questions:
        raise ValueError("no usable (question, answer line) records to train on")
    keys = [key(main) for main in mains]
    spellings: dict[str, Counter[str]] = defaultdict(Counter)
    for k, main in zip(keys, mains, strict=True):
        spellings[k][main] += 1
    answers = [spelling.most_common(1)[0][0] for spelling in spellings.values()]
    class_of = {k: i for i, k in enumerate(spellings)}
    return questions, answers, np.array([class_of[k] for k in keys])
