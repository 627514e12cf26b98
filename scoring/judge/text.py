"""Text normalisation for the judge (pure): HTML-marked text → folded word tokens.

A ``Token`` is one folded word: ASCII (``anyascii``), lower case, possessives and apostrophes dropped, runs of
single letters joined (``U.S.A.`` → ``usa``), number words grouped into one number (``nineteen eighty-four`` →
key ``1984``), Roman numerals and ordinals as digits, plural nouns singular (``inflect``). Markup reaches this
module as the sentinel characters below, so each token knows whether it was underlined, bold or optional.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from functools import lru_cache

import inflect
from anyascii import anyascii

# Sentinels carried through parsing: underline, bold, optional (parenthesised) text.
U0, U1, B0, B1, O0, O1 = "\x01", "\x02", "\x03", "\x04", "\x05", "\x06"
SENTINELS = U0 + U1 + B0 + B1 + O0 + O1
QUOTES = '"“”‘’«»„'
ARTICLES = {"the", "a", "an"}
STOPWORDS = ARTICLES | {
    "of", "and", "in", "on", "at", "to", "for", "from", "by", "with", "or", "de", "la", "le", "von", "van",
    "der", "du", "des", "di", "da", "its", "his", "her", "their", "is", "no",
}  # fmt: skip

_UNITS = [
    "zero",
    "one",
    "two",
    "three",
    "four",
    "five",
    "six",
    "seven",
    "eight",
    "nine",
    "ten",
    "eleven",
    "twelve",
    "thirteen",
    "fourteen",
    "fifteen",
    "sixteen",
    "seventeen",
    "eighteen",
    "nineteen",
]
_TENS = ["twenty", "thirty", "forty", "fifty", "sixty", "seventy", "eighty", "ninety"]
_ORDINAL_UNITS = [
    "zeroth",
    "first",
    "second",
    "third",
    "fourth",
    "fifth",
    "sixth",
    "seventh",
    "eighth",
    "ninth",
    "tenth",
    "eleventh",
    "twelfth",
    "thirteenth",
    "fourteenth",
    "fifteenth",
    "sixteenth",
    "seventeenth",
    "eighteenth",
    "nineteenth",
]
_ORDINAL_TENS = [
    "twentieth",
    "thirtieth",
    "fortieth",
    "fiftieth",
    "sixtieth",
    "seventieth",
    "eightieth",
    "ninetieth",
]
_NUMBER_WORDS: dict[str, int] = {w: i for i, w in enumerate(_UNITS)}
_NUMBER_WORDS.update({w: 20 + 10 * i for i, w in enumerate(_TENS)})
_NUMBER_WORDS.update({w: i for i, w in enumerate(_ORDINAL_UNITS) if i})
_NUMBER_WORDS.update({w: 20 + 10 * i for i, w in enumerate(_ORDINAL_TENS)})
_SCALES = {"hundred": 100, "hundredth": 100, "thousand": 1000, "thousandth": 1000, "million": 10**6}
_ROMAN_RE = re.compile(r"^(?=[ivx]+$)x{0,3}(?:ix|iv|v?i{0,3})$")
_ROMAN = {"i": 1, "v": 5, "x": 10}

_inflect = inflect.engine()


@dataclass
class Token:
    """One folded word: ``surface`` (ascii, lower case), ``key`` (numbers as digits, singular nouns)."""

    surface: str
    key: str
    underlined: bool = False
    bold: bool = False
    u_prefix: str | None = None  # underlined prefix of a partly underlined word ("chimp" of chimpanzees)
    b_prefix: str | None = None
    optional: bool = False  # inside parentheses: may be given or left out
    upper: bool = False  # written in capitals or as spaced letters in the source (an acronym)
    required: bool = False  # set per answer (underline, else bold, else every non-optional word)
    req_prefix: str | None = None

    @property
    def article(self) -> bool:
        return self.surface in ARTICLES

    @property
    def numeric(self) -> bool:
        return self.key.isdigit()


def _roman_value(s: str) -> int:
    values = [_ROMAN[c] for c in s]
    return sum(-v if i + 1 < len(values) and v < values[i + 1] else v for i, v in enumerate(values))


@lru_cache(maxsize=65536)
def _singular(word: str) -> str:
    if len(word) <= 3 or not word.isalpha():
        return word
    return _inflect.singular_noun(word) or word  # type: ignore[arg-type]


def _word_key(word: str) -> str:
    if m := re.fullmatch(r"(\d+)(?:st|nd|rd|th|s)?", word):
        return m.group(1)
    if _ROMAN_RE.match(word) and word:
        return str(_roman_value(word))
    return _singular(word)


def _chars(text: str) -> list[tuple[str, str]]:
    """Fold ``text`` to (ascii character, flags) pairs; flags has "u"/"b"/"o" for underline/bold/optional."""
    text = re.sub(r"(\w)\((\w+)\)", r"\1", text)  # "War(s)" → "War", "W(illiam)" → "W"
    text = re.sub(r"['’`ʼ]s\b", "", text)  # possessive
    text = re.sub(r"\b([dlDL])['’](?=\w)", "", text)  # French elision: d’Orleans
    out: list[tuple[str, str]] = []
    state = {"u": False, "b": False, "o": 0}
    for ch in text:
        if ch in (U0, U1):
            state["u"] = ch == U0
        elif ch in (B0, B1):
            state["b"] = ch == B0
        elif ch == O0:
            state["o"] = int(state["o"]) + 1
        elif ch == O1:
            state["o"] = max(0, int(state["o"]) - 1)
        else:
            flags = ("u" if state["u"] else "") + ("b" if state["b"] else "") + ("o" if state["o"] else "")
            for c in anyascii(ch) if ord(ch) > 127 else ch:
                out.append((c, flags))
    return out


def raw_words(text: str) -> list[tuple[str, str, bool]]:
    """Split folded text into (word as written, per-character flags, all-capitals?) triples."""
    words: list[tuple[str, str, bool]] = []
    cur: list[tuple[str, str]] = []
    for c, flags in [*_chars(text), (" ", "")]:
        if c.isalnum():
            cur.append((c, flags))
        elif c in "'`" and cur:
            continue  # apostrophes join: Baha'i → bahai
        elif cur:
            word = "".join(x for x, _ in cur)
            words.append((word, "|".join(f for _, f in cur), word.isupper() and len(word) > 1))
            cur = []
    return words


def _merge_numbers(words: list[str]) -> list[tuple[str, str, int]]:
    """Group runs of number words: returns (surface, key, n source words); "nineteen eighty-four" → 1984."""
    out: list[tuple[str, str, int]] = []
    i = 0
    while i < len(words):
        j = i
        while j < len(words) and (
            words[j] in _NUMBER_WORDS
            or words[j] in _SCALES
            or (words[j] == "and" and j > i and j + 1 < len(words) and words[j + 1] in _NUMBER_WORDS)
        ):
            j += 1
        if j == i:
            out.append((words[i], _word_key(words[i]), 1))
            i += 1
            continue
        run = [w for w in words[i:j] if w != "and"]
        chunks: list[int] = []  # two-digit chunks, for years read in pairs
        total = current = 0
        scaled = False
        for w in run:
            if w in _SCALES:
                scaled = True
                if _SCALES[w] == 100:
                    current = max(current, 1) * 100
                else:
                    total += max(current, 1) * _SCALES[w]
                    current = 0
                continue
            v = _NUMBER_WORDS[w]
            if chunks and not (v < 10 and chunks[-1] >= 20 and chunks[-1] % 10 == 0):
                chunks.append(v)
            elif chunks:
                chunks[-1] += v
            else:
                chunks.append(v)
            current += v
        if scaled or len(chunks) == 1:
            key = str(total + current)
        elif len(chunks) == 2 and chunks[0] >= 10:
            key = f"{chunks[0]}{chunks[1]:02d}"
        else:
            out.extend((w, _word_key(w), 1) for w in words[i:j])
            i = j
            continue
        out.append(("".join(words[i:j]), key, j - i))
        i = j
    return out


def tokens(text: str) -> list[Token]:
    """Tokenise (possibly marked) text into folded tokens with underline/bold/optional flags."""
    # Runs of single letters are one word: "U.S.A." → "usa", "H·T·M·L" → "html".
    joined: list[tuple[str, str, bool]] = []
    in_run = False
    for word, flags, upper in raw_words(text):
        letter = len(word) == 1 and word.isalpha()
        if letter and in_run:
            prev = joined[-1]
            joined[-1] = (prev[0] + word, prev[1] + "|" + flags, prev[2])
        else:
            joined.append((word, flags, upper))
        in_run = letter
    toks: list[Token] = []
    pos = 0
    for surface, key, n in _merge_numbers([w.lower() for w, _, _ in joined]):
        parts = joined[pos : pos + n]
        pos += n
        char_flags = [f for _, fl, _ in parts for f in fl.split("|")]
        u = ["u" in f for f in char_flags]
        b = ["b" in f for f in char_flags]
        toks.append(
            Token(
                surface=surface,
                key=key,
                underlined=any(u),
                bold=any(b),
                u_prefix=_marked_prefix(surface, u),
                b_prefix=_marked_prefix(surface, b),
                optional=all("o" in f for f in char_flags),
                upper=all(up for _, _, up in parts)
                or (len(surface) > 1 and all(len(w) == 1 for w, _, _ in parts)),
            )
        )
    return toks


def _marked_prefix(word: str, marks: list[bool]) -> str | None:
    """The marked prefix of a partly marked word ("chimp" of <u>chimp</u>anzees), else None."""
    if len(marks) != len(word) or not marks[0] or all(marks):
        return None
    end = marks.index(False)
    return word[:end] if not any(marks[end:]) else None


def plain(s: str) -> str:
    return re.sub(f"[{SENTINELS}]", "", s).strip()


def fold(text: str) -> str:
    """Case, diacritics and punctuation folded, every word kept: the "strict" comparison form."""
    s = anyascii(plain(text)).lower().replace("'", "")
    return " ".join(re.sub(r"[^a-z0-9]+", " ", s).split())
