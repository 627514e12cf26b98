"""Main-answer extraction from quizbowl answer lines (pure; no Django).

An answer line such as ``<b><u>Marie Curie</u></b> [accept Maria Skłodowska; prompt on Curie]`` names the
main answer first and then the directives (``[or …]``, ``(…)``, ``; prompt on …``) and, in raw packets, editor
tags like ``&lt;JR&gt;``. Bots train on and answer with the main answer only.
"""

from __future__ import annotations

import html
import re
from collections import Counter, defaultdict
from collections.abc import Iterable

import numpy as np
from anyascii import anyascii

# Inline formatting tags vanish without a space ("<u>grandmother</u>s" → "grandmothers").
_INLINE_TAG = re.compile(r"</?(?:b|u|i|em|strong|span|sup|sub)\b[^<>]*>", re.IGNORECASE)
# Innermost-first so nested brackets ("[or X (Y)]") are removed in a few passes.
_BRACKETED = re.compile(r"\[[^\[\]]*\]|\([^()]*\)|\{[^{}]*\}|<[^<>]*>")
# An opener whose closer was lost in the PDF extraction swallows the rest of the line.
_UNCLOSED = re.compile(r"[\[({<].*$")
# Unbracketed directives: "Weimar Republic; prompt on …", "Hume, or David Hume".
_DIRECTIVE_TAIL = re.compile(
    r"(;|,?\s+\b(?:accept|prompt|do not accept|or|also accept|anti-prompt)\b\s*:?)\s.*$", re.IGNORECASE
)
# Packet-extraction residue: the next section's header glued to the last answer line.
_SECTION_HEADER = re.compile(r"\s+Bonus(?:es)?\s*:?\s*$", re.IGNORECASE)
_WS = re.compile(r"\s+")
_NON_WORD = re.compile(r"[^0-9a-z]+")


def main_answer(answer_line: str) -> str:
    """Return the main answer of a tossup/bonus answer line.

    answer_line: raw answer line, possibly with HTML (``<b><u>``), HTML entities, ``[…]``/``(…)``/``<…>``
    sections and ``; prompt on …`` tails. Returns the text before any directive with whitespace collapsed
    and surrounding quotes/punctuation stripped; ``""`` for an empty line. Never raises.
    Example: ``"<b><u>Louis XIII</u></b> [or Louis the Just]"`` → ``"Louis XIII"``.
    """
    text = _INLINE_TAG.sub("", html.unescape(answer_line or ""))
    previous = None
    while previous != text:
        previous, text = text, _BRACKETED.sub(" ", text)
    text = _UNCLOSED.sub(" ", text)
    text = _DIRECTIVE_TAIL.sub("", text)
    text = _SECTION_HEADER.sub("", text)
    text = _WS.sub(" ", text).strip()
    return text.strip(" \"'“”‘’.,;:")


def answer_key(answer: str) -> str:
    """Grouping key for a main answer: ASCII-folded, lower-case, punctuation as single spaces.

    ``"Günter Grass"`` and ``"Gunter  Grass."`` share the key ``"gunter grass"``. Returns ``""`` when nothing
    alphanumeric remains.
    """
    return _NON_WORD.sub(" ", anyascii(answer).lower()).strip()


def answer_classes(
    records: Iterable[tuple[str, str]], *, keep_last: int | None = None
) -> tuple[list[str], list[str], np.ndarray]:
    """Group ``(question, answer line)`` records into answer classes by ``answer_key`` of the
    main answer; records without a question or a main answer are dropped, and ``keep_last``
    keeps only the most recent N (records come in date order).

    Returns ``(questions, answers, classes)``: the kept questions; one display spelling per
    class (its most common main answer); and an int array of shape (n_questions,) giving each
    question's class. Raises ValueError when no record is usable."""
    questions, mains = [], []
    for question, line in records:
        if question and (main := main_answer(line)) and answer_key(main):
            questions.append(question)
            mains.append(main)
    if keep_last is not None:
        questions, mains = questions[-keep_last:], mains[-keep_last:]
    if not questions:
        raise ValueError("no usable (question, answer line) records to train on")
    keys = [answer_key(main) for main in mains]
    spellings: dict[str, Counter[str]] = defaultdict(Counter)
    for key, main in zip(keys, mains, strict=True):
        spellings[key][main] += 1
    answers = [spelling.most_common(1)[0][0] for spelling in spellings.values()]
    class_of = {key: i for i, key in enumerate(spellings)}
    return questions, answers, np.array([class_of[key] for key in keys])
