"""Distractor probes for tossup bots, AddSent-style (Jia & Liang 2017), pure (no Django).

For a tossup, :meth:`DistractorPool.distractor` picks one **distractor sentence**: a clue sentence of
another tossup of the same category whose answer the judge rules different, in the register of a
quizbowl clue — kept as written, so its answer-revealing words still point at that other answer and
its "this X" phrasing reads as a clue to the tossup at hand. :func:`probed` inserts it where the
field puts a clue (:data:`POSITIONS`): at the ``start``, in the ``middle`` of the clues, or
``before_giveaway`` (the giveaway is the last sentence holding "For 10 points" / "FTP", else the
last sentence). A good player ignores the sentence; a bot that buzzes on it, or whose answer moves to
the distractor's, was fooled.

Rules of the choice (all deterministic for a ``seed`` and the tossup's key, independent of the order
of the tossups):

- donors: tossups of the same category (case-folded) whose main answer the tossup's answer line
  neither accepts nor prompts (``scoring.judge``); those whose giveaway names the same answer type
  ("name this **novel**") first, as AddSent keeps the answer type;
- sentences: a donor's clue sentences (not its giveaway), 6–60 words, power marks removed; those with
  "this/these <the tossup's answer type>" first, then any "this/these …" phrasing, then the rest;
- never the answer: no run of up to ``max answer words + 1`` consecutive words of the sentence is
  accepted or prompted by the tossup's answer line (the judge's normalisation and matching), so
  neither the answer nor a near spelling of it appears (:func:`contains_answer`).

Sentences are split at ``.``/``?``/``!`` (also before a closing quote) followed by a capital or a
quote, except after a known abbreviation or a single capital (an initial): :func:`sentences`.
"""

from __future__ import annotations

import random
import re
from collections.abc import Iterable
from dataclasses import dataclass, field

from competition.vocabulary import Verdict
from scoring.judge import judge, main_answer, parse_answer_line

#: Where a distractor goes, in the order the tables show them.
POSITIONS = ("start", "middle", "before_giveaway")
MIN_WORDS, MAX_WORDS = 6, 60
#: Donors tried per tossup before giving up (each costs a few judge calls per candidate sentence).
MAX_DONORS = 40

_GIVEAWAY = re.compile(r"\b(?:for\s+(?:10|ten|15|fifteen|20|twenty)\s+points|ftp)\b", re.I)
_TYPE = re.compile(
    r"\b(?:(?:name|identify|give)\s+(?:this|these)|what|which)\s+((?:[\w'-]+\s+){0,3}?[\w'-]+?)"
    r"(?=\s*(?:[,.;:?!()\"“”]|$|\s+(?:of|who|that|which|whose|from|in|by|for|to|with|described|where|when)\b))",
    re.I,
)
_NOTE = re.compile(r"^\W*(?:note\s+to\s+(?:players|moderators?)|description\s+acceptable|moderator)", re.I)
_THIS = re.compile(r"\b(?:this|these)\s+([a-z][\w'-]*)", re.I)
_MARKS = re.compile(r"\s*\((?:\*|\+)\)\s*")
_END = re.compile(r"([.?!][\"”’')\]]*)\s+(?=[\"“‘(\[]?[A-Z0-9])")
_ABBREVIATIONS = frozenset(
    [
        "mr",
        "mrs",
        "ms",
        "dr",
        "st",
        "sr",
        "jr",
        "mt",
        "ft",
        "vs",
        "etc",
        "no",
        "nos",
        "ca",
        "cf",
        "al",
        "co",
        "corp",
        "inc",
        "ltd",
        "gen",
        "col",
        "capt",
        "lt",
        "sgt",
        "rev",
        "prof",
        "gov",
        "pres",
        "sen",
        "rep",
        "fr",
        "op",
        "vol",
        "ch",
        "fig",
        "approx",
        "dept",
        "univ",
        "jan",
        "feb",
        "mar",
        "apr",
        "jun",
        "jul",
        "aug",
        "sep",
        "sept",
        "oct",
        "nov",
        "dec",
    ]
)


def sentences(text: str) -> list[str]:
    """The sentences of a tossup's text, in order, each stripped (see the module docstring); the whole
    text as one sentence when it has no break; [] for blank text."""
    out: list[str] = []
    start = 0
    for m in _END.finditer(text):
        before = text[start : m.start()].split()
        last = before[-1].rstrip(".").lstrip('("“') if before else ""
        if last.lower() in _ABBREVIATIONS or (len(last) == 1 and last.isupper()):
            continue
        out.append(text[start : m.end(1)].strip())
        start = m.end()
    tail = text[start:].strip()
    if tail:
        out.append(tail)
    return [s for s in out if s]


def giveaway_index(parts: list[str]) -> int:
    """The index of the giveaway sentence: the last one saying "For 10 points"/"FTP", else the last."""
    for i in range(len(parts) - 1, -1, -1):
        if _GIVEAWAY.search(parts[i]):
            return i
    return max(len(parts) - 1, 0)


def answer_type(question: str) -> str:
    """The answer type the giveaway names, folded ("… name this Russian novel." → ``"novel"``; the
    last word of up to four after "name/identify/give this|these"); "" when it names none."""
    parts = sentences(question)
    if not parts:
        return ""
    m = _TYPE.search(parts[giveaway_index(parts)])
    return m.group(1).split()[-1].lower().strip("'") if m else ""


def insertion_index(parts: list[str], position: str) -> int:
    """The index of the sentence the distractor goes before: 0 (``start``; after a "Note to players" or "Description acceptable" preamble), the giveaway's
    (``before_giveaway``), or the boundary halfway through the clues before the giveaway
    (``middle``: ⌈g / 2⌉ for giveaway index g). Raises ValueError for another position."""
    g = giveaway_index(parts)
    if position == "start":  # after any "Note to players" preamble
        return next((i for i, p in enumerate(parts[:g]) if not _NOTE.match(p)), 0)
    if position == "before_giveaway":
        return g
    if position == "middle":
        return (g + 1) // 2
    raise ValueError(f"unknown position {position!r}: use one of {', '.join(POSITIONS)}")


def contains_answer(answer_line: str, text: str) -> bool:
    """Whether some run of consecutive words of ``text`` (up to the longest answer of the line + 1
    words) is accepted or prompted by ``answer_line``, as the judge rules a player's answer."""
    line = parse_answer_line(answer_line)
    longest = max(
        (len(a.tokens) for c in line.clauses if c.kind != "reject" for a in c.answers),
        default=3,
    )
    words = text.split()
    for n in range(1, min(longest + 1, len(words)) + 1):
        for i in range(len(words) - n + 1):
            verdict = judge(answer_line, " ".join(words[i : i + n])).verdict
            if verdict in (Verdict.ACCEPT, Verdict.PROMPT):
                return True
    return False


@dataclass(frozen=True)
class Donor:
    """A tossup whose clues may serve as distractors: ``key``, ``answer`` (its main answer), its
    ``answer_line``, folded ``category``, ``answer_type`` and clue sentences (marks removed)."""

    key: str
    answer: str
    answer_line: str
    category: str
    answer_type: str
    clues: tuple[str, ...]


@dataclass(frozen=True)
class Distractor:
    """The sentence chosen for one tossup, from the donor ``donor_key`` whose main answer is
    ``donor_answer``; ``donor_answer_line`` judges whether a bot took the bait."""

    sentence: str
    donor_key: str
    donor_answer: str
    donor_answer_line: str
    same_type: bool


@dataclass(frozen=True)
class Probed:
    """A tossup text with the distractor inserted at ``position``: the new ``question`` and, in its
    whitespace words, the distractor's first word ``word_start`` and its ``word_count`` words."""

    position: str
    question: str
    word_start: int
    word_count: int


def probed(question: str, sentence: str, position: str) -> Probed:
    """``question`` with ``sentence`` inserted before the sentence :func:`insertion_index` names.
    Raises ValueError for an unknown position."""
    parts = sentences(question)
    at = insertion_index(parts, position)
    before, after = parts[:at], parts[at:]
    start = sum(len(p.split()) for p in before)
    return Probed(position, " ".join([*before, sentence, *after]), start, len(sentence.split()))


def _fold(category: str) -> str:
    return " ".join((category or "").casefold().split())


def _tier(sentence: str, wanted: str) -> int:
    """0: "this/these <wanted type>"; 1: other "this/these …" phrasing; 2: none."""
    nouns = [m.group(1).lower() for m in _THIS.finditer(sentence)]
    if wanted and any(n == wanted or n.rstrip("s") == wanted.rstrip("s") for n in nouns):
        return 0
    return 1 if nouns else 2


@dataclass
class DistractorPool:
    """The donors of distractor sentences, by folded category. Build it from ``(key, question,
    answer_line, category)`` tuples (the question set being probed, or any other); a tossup with no
    answer or no clue sentence is no donor."""

    donors: dict[str, list[Donor]] = field(default_factory=dict)

    @classmethod
    def build(cls, tossups: Iterable[tuple[str, str, str, str]]) -> DistractorPool:
        pool = cls()
        for key, question, answer_line, category in tossups:
            answer = main_answer(answer_line)
            parts = [_MARKS.sub(" ", p).strip() for p in sentences(question)]
            if not answer or len(parts) < 2:
                continue
            g = giveaway_index(parts)
            clues = tuple(
                " ".join(p.split())
                for i, p in enumerate(parts)
                if i != g and MIN_WORDS <= len(p.split()) <= MAX_WORDS and not _GIVEAWAY.search(p)
            )
            if clues:
                donor = Donor(str(key), answer, answer_line, _fold(category), answer_type(question), clues)
                pool.donors.setdefault(donor.category, []).append(donor)
        for members in pool.donors.values():
            members.sort(key=lambda d: d.key)
        return pool

    def __len__(self) -> int:
        return sum(len(v) for v in self.donors.values())

    def distractor(
        self, key: str, question: str, answer_line: str, category: str, seed: int = 0
    ) -> Distractor | None:
        """The distractor for one tossup (module docstring), or None when no donor of its category
        offers a sentence free of its answer within :data:`MAX_DONORS` donors."""
        rng = random.Random(f"{seed}|{key}")
        wanted = answer_type(question)
        candidates = [d for d in self.donors.get(_fold(category), []) if d.key != str(key)]
        rng.shuffle(candidates)
        candidates.sort(key=lambda d: not (wanted and d.answer_type == wanted))  # stable: same type first
        tried = 0
        for donor in candidates:
            if tried >= MAX_DONORS:
                break
            if judge(answer_line, donor.answer).verdict in (Verdict.ACCEPT, Verdict.PROMPT):
                continue  # the same answer (or close enough to be prompted): no distractor
            tried += 1
            clues = list(donor.clues)
            rng.shuffle(clues)
            clues.sort(key=lambda s: _tier(s, wanted))
            for sentence in clues:
                if not contains_answer(answer_line, sentence):
                    return Distractor(
                        sentence,
                        donor.key,
                        donor.answer,
                        donor.answer_line,
                        bool(wanted) and donor.answer_type == wanted,
                    )
        return None
