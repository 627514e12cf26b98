"""Pure answer judge for quizbowl answer lines (no Django).

``judge(answer_line, given)`` parses an answer line in qbreader / qb-answer-checker conventions (HTML
``<b><u>…</u></b>`` marks the required part; plain text means the whole main answer is required; Protobowl
``{…}`` braces also mark it) and suggests ``accept | prompt | reject | needs_moderator`` for a player's
answer.
The moderator always confirms or overrides the suggestion.

Decision order (a hit at a stronger match level always wins over a weaker one):

1. match levels, strongest first: *strict* (identical after case/punctuation folding, articles kept),
   *exact* (same words after folding, articles, numbers, plurals, word order, compounds, acronyms,
   nicknames/abbreviations), *fuzzy* (typos: about one edit per 6.5 characters; vowel-insensitive
   transliteration variants), *loose* (plain-text answer lines only: most words, or the last word);
2. within a level: reject clauses first, then accept (incl. anti-prompt), then prompt; at the fuzzy level the
   closest candidate wins;
3. a partial answer (some but not all required words) → prompt when the line says "prompt on partial",
   else reject;
4. nothing matched → needs_moderator if the line has a free-text clause ("accept equivalents", "answers
   indicating …"), else reject.

Timing clauses ("before X is read", "until …", "after …", "but prompt after") need the reveal position.
Policy: with ``token_index=None`` a timing clause is taken as in force (position unknown, as in the
conformance data). With a position, X is located in ``question`` (whitespace tokens, power marks dropped,
as in QUIZBOWL.md); "before/until X" holds iff ``token_index`` < X's first token, "after X" iff
``token_index`` >= X's last token. If X cannot be located but ``token_count`` shows the whole question was
read, "before" clauses are out and "after" clauses in force; otherwise a clause that decides the answer yields
needs_moderator.
"""

from __future__ import annotations

import argparse
import html
import json
import re
from dataclasses import dataclass, field
from functools import lru_cache
from itertools import product
from pathlib import Path
from typing import Literal

import inflect
from anyascii import anyascii
from rapidfuzz.distance import OSA, Levenshtein

Outcome = Literal["accept", "prompt", "reject", "needs_moderator"]


@dataclass(frozen=True)
class Verdict:
    """The judge's suggestion for one given answer.

    outcome: "accept" | "prompt" | "reject" | "needs_moderator".
    directed_prompt: the text to ask the player on a prompt (``with "…"`` / ``by asking "…"``), else None.
    reason: short human-readable note saying which clause (and which match level) decided.
    """

    outcome: Outcome
    directed_prompt: str | None = None
    reason: str = ""


# Sentinels carried through parsing: underline, bold, optional (parenthesised) text.
_U0, _U1, _B0, _B1, _O0, _O1 = "\x01", "\x02", "\x03", "\x04", "\x05", "\x06"
_SENTINELS = _U0 + _U1 + _B0 + _B1 + _O0 + _O1
_KNOWN_TAGS = {
    "b",
    "strong",
    "u",
    "i",
    "em",
    "br",
    "span",
    "p",
    "sub",
    "sup",
    "a",
    "font",
    "div",
    "s",
    "small",
}
_TAG_RE = re.compile(r"<\s*(/?)\s*([a-zA-Z][a-zA-Z0-9]*)\b[^<>]*>")
_QUOTES = '"“”‘’«»„'
_ARTICLES = {"the", "a", "an"}
_STOPWORDS = _ARTICLES | {
    "of", "and", "in", "on", "at", "to", "for", "from", "by", "with", "or", "de", "la", "le", "von", "van",
    "der", "du", "des", "di", "da", "its", "his", "her", "their", "is", "no",
}  # fmt: skip
_WORD_SUFFIXES = ("s", "es", "d", "ed", "ing", "er", "ers")
_ERRORS_PER_CHAR = 1 / 6.5  # typo budget: about one edit per 6-7 characters

_RANK = {"reject": 0, "accept": 1, "antiprompt": 1, "prompt": 2}
_LEVELS = ("strict", "exact", "fuzzy", "loose")

_DIRECTIVES: list[tuple[re.Pattern[str], str]] = [
    (re.compile(p, re.I), kind)
    for p, kind in [
        (
            r"(?:do\s+not|don['’]?t|never)\s+(?:accept|give\s+credit\s+for)(?:\s+or\s+prompt(?:\s+on)?)?",
            "reject",
        ),
        (r"(?:do\s+not|don['’]?t|never)\s+prompt(?:\s+on)?(?:\s+or\s+accept)?", "reject"),
        (r"reject", "reject"),
        (r"anti-?\s*prompt(?:\s+on)?", "antiprompt"),
        (
            r"(?:also\s+)?accept\s+(?:either|both)\s+(?:of\s+the\s+)?(?:underlined\s+)?"
            r"(?:parts?|names?|answers?|portions?|words?)",
            "either",
        ),
        (r"(?:also\s+)?accept\s+(?:either|any|each)\s+(?:of\s+the\s+)?underlined", "either"),
        (r"prompt\s+on\s+(?:a\s+|any\s+)?partial(?:\s+answers?)?", "partial"),
        (r"(?:also\s+)?(?:accept|allow|take)(?:\s+on)?", "accept"),
        (r"(?:directed\s+)?prompt(?:\s+on)?", "prompt"),
        (r"or", "accept"),
    ]
]
_FREE_TEXT = re.compile(
    r"\b(?:equivalents?|word\s+forms?|answers?\s+(?:like|indicating|expressing|about|that|mentioning|describing|"
    r"which)|anything|any\s+(?:answers?|reasonable|clear|synonyms?)|in\s+place\s+of|such\s+as|descriptions?|"
    r"synonyms?|specific\s+(?:types?|kinds?|examples?|groups?)|reasonable)\b",
    re.I,
)
_DIRECTED = re.compile(
    r"[\s,]*\b(?P<how>by\s+asking|and\s+ask|asking|with)\b[\s,:]*(?P<rest>.*)$", re.I | re.S
)
_BUT_AFTER = re.compile(
    r"[\s,;]*\bbut\s+(?P<kind>prompt|accept|reject|do\s+not\s+accept)(?:\s+on)?(?:\s+it|\s+them)?\s+"
    r"(?:after(?:wards?)?|thereafter|later)\b.*$",
    re.I | re.S,
)
_TIMING = re.compile(
    r"[\s,]*\b(?P<kind>before|until|till|prior\s+to|after)\b\s*(?:the\s+)?(?:mention\s+of\s+)?(?P<x>.*)$",
    re.I | re.S,
)
_READ = r"(?:is|are|has\s+been|have\s+been|gets)?\s*(?:read|mentioned|said|given|revealed)"
_TIMING_SELF = re.compile(rf"^(?:it|they|this|that)?\s*{_READ}?\s*\.?$|^mention(?:ed)?\.?$", re.I)
_TIMING_QUOTED = re.compile(rf"^[{_QUOTES}](?P<x>[^{_QUOTES}]+)[{_QUOTES}]\s*{_READ}?\s*\.?$", re.I)
_TIMING_PLAIN = re.compile(rf"^(?P<x>.+?)\s+{_READ}\s*\.?$", re.I)

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


# ---------------------------------------------------------------------------------------------------------
# Tokens


@dataclass
class _Tok:
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
        return self.surface in _ARTICLES

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
        if ch in (_U0, _U1):
            state["u"] = ch == _U0
        elif ch in (_B0, _B1):
            state["b"] = ch == _B0
        elif ch == _O0:
            state["o"] = int(state["o"]) + 1
        elif ch == _O1:
            state["o"] = max(0, int(state["o"]) - 1)
        else:
            flags = ("u" if state["u"] else "") + ("b" if state["b"] else "") + ("o" if state["o"] else "")
            for c in anyascii(ch) if ord(ch) > 127 else ch:
                out.append((c, flags))
    return out


def _raw_words(text: str) -> list[tuple[str, str, bool]]:
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


def _tokens(text: str) -> list[_Tok]:
    """Tokenise (possibly marked) text into folded tokens with underline/bold/optional flags."""
    # Runs of single letters are one word: "U.S.A." → "usa", "H·T·M·L" → "html".
    joined: list[tuple[str, str, bool]] = []
    in_run = False
    for word, flags, upper in _raw_words(text):
        letter = len(word) == 1 and word.isalpha()
        if letter and in_run:
            prev = joined[-1]
            joined[-1] = (prev[0] + word, prev[1] + "|" + flags, prev[2])
        else:
            joined.append((word, flags, upper))
        in_run = letter
    toks: list[_Tok] = []
    pos = 0
    for surface, key, n in _merge_numbers([w.lower() for w, _, _ in joined]):
        parts = joined[pos : pos + n]
        pos += n
        char_flags = [f for _, fl, _ in parts for f in fl.split("|")]
        u = ["u" in f for f in char_flags]
        b = ["b" in f for f in char_flags]
        toks.append(
            _Tok(
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


# ---------------------------------------------------------------------------------------------------------
# Answer-line parsing


@dataclass
class _Answer:
    """One acceptable (or prompt-/reject-worthy) answer: tokens with ``required`` resolved."""

    text: str
    tokens: list[_Tok]
    lenient: bool  # from a plain-text line: required words are a guess, so partial coverage may do
    strict: frozenset[str] = frozenset()  # folded spellings with and without the optional words


@dataclass
class _Timing:
    kind: Literal["before", "after"]
    target: str | None  # None: the clause's own answer ("before it is read", "before mention")


@dataclass
class _Clause:
    kind: str  # accept | antiprompt | prompt | reject
    source: str
    answers: list[_Answer] = field(default_factory=list)
    directed: str | None = None
    timing: _Timing | None = None
    free_text: bool = False
    main: bool = False


@dataclass
class _Line:
    clauses: list[_Clause]
    partial_prompt: _Clause | None = None
    either: bool = False


def _plain(s: str) -> str:
    return re.sub(f"[{_SENTINELS}]", "", s).strip()


def _make_answer(text: str, lenient: bool) -> _Answer | None:
    toks = _tokens(text)
    content = [t for t in toks if not t.article]
    if not content:
        return None
    if any(t.underlined for t in content):
        for t in toks:
            t.required, t.req_prefix = t.underlined, t.u_prefix
    elif any(t.bold for t in content):
        for t in toks:
            t.required, t.req_prefix = t.bold, t.b_prefix
    else:
        for t in toks:
            t.required = not t.optional
        if not any(t.required for t in content):
            for t in toks:
                t.required = True
    without_optional = re.sub(f"{_O0}[^{_O1}]*{_O1}?", " ", text)
    strict = frozenset(_fold(t) for t in (text, without_optional)) - {""}
    return _Answer(_plain(text).strip(_QUOTES + " "), toks, lenient, strict)


def _fold(text: str) -> str:
    """Case, diacritics and punctuation folded, every word kept: the "strict" comparison form."""
    s = anyascii(_plain(text)).lower().replace("'", "")
    return " ".join(re.sub(r"[^a-z0-9]+", " ", s).split())


def _split_top(s: str, seps: re.Pattern[str]) -> list[str]:
    """Split ``s`` on ``seps`` outside brackets and quotes."""
    parts: list[str] = []
    depth, in_straight, in_curly, last, i = 0, False, 0, 0, 0
    while i < len(s):
        ch = s[i]
        if ch in "([":
            depth += 1
        elif ch in ")]":
            depth = max(0, depth - 1)
        elif ch == '"':
            in_straight = not in_straight
        elif ch in "“‘":
            in_curly += 1
        elif ch in "”" or (ch == "’" and in_curly and not (i + 1 < len(s) and s[i + 1].isalpha())):
            in_curly = max(0, in_curly - 1)
        elif depth == 0 and not in_straight and not in_curly and (m := seps.match(s, i)) and m.end() > i:
            parts.append(s[last:i])
            last = i = m.end()
            continue
        i += 1
    parts.append(s[last:])
    return parts


_CLAUSE_SEP = re.compile(r"\s*;\s*")
_ITEM_SEP = re.compile(r",\s*(?:or|and)\s+|\s+or\s+|,\s*|\s*/\s*(?=\S)")
_MAIN_SEP = re.compile(r",?\s+or\s+")


def _groups(text: str) -> list[tuple[str, str]]:
    """Split at top level into ("text", s), ("[", inner), ("(", inner) pieces; unbalanced brackets close."""
    out: list[tuple[str, str]] = []
    depth, start, opener = 0, 0, ""
    buf: list[str] = []
    for i, ch in enumerate(text):
        if depth == 0 and ch in "[(":
            out.append(("text", "".join(buf)))
            buf, depth, opener, start = [], 1, ch, i + 1
        elif depth > 0 and ch in "[(":
            depth += 1
        elif depth > 0 and ch in ")]":
            depth -= 1
            if depth == 0:
                out.append((opener, text[start:i]))
        elif depth == 0 and ch not in ")]":
            buf.append(ch)
    if depth > 0:
        out.append((opener, text[start:]))
    out.append(("text", "".join(buf)))
    return [(k, s) for k, s in out if k != "text" or s.strip()]


def _directive(s: str) -> tuple[str | None, str]:
    body = s.lstrip(" ,:" + _SENTINELS)
    lead = s[: len(s) - len(body)]
    for pattern, kind in _DIRECTIVES:
        if (m := pattern.match(body)) and (m.end() == len(body) or not body[m.end()].isalnum()):
            return kind, lead + body[m.end() :]
    return None, s


def _preprocess(line: str) -> tuple[str, list[str], bool]:
    """HTML → sentinel-marked text; returns (text, ``<…>`` editor notes, formatted?)."""

    def tag(m: re.Match[str]) -> str:
        name, closing = m.group(2).lower(), bool(m.group(1))
        if name == "u":
            return _U1 if closing else _U0
        if name in ("b", "strong"):
            return _B1 if closing else _B0
        if name in _KNOWN_TAGS:
            return " " if name in ("br", "p", "div") else ""
        return m.group(0)

    # Entities first: packets escape editor notes as "&lt;JG, World History&gt;".
    text = _TAG_RE.sub(tag, html.unescape(line))
    notes = [n.strip() for n in re.findall(r"<([^<>]*)>", text)]
    text = re.sub(r"<[^<>]*>", " ", text).replace("\xa0", " ")
    if "{" in text and "}" in text:  # Protobowl required-word braces
        text = text.replace("{", _U0).replace("}", _U1)
    formatted = any(c in text for c in (_U0, _B0))
    return text, notes, formatted


def _strip_item(item: str) -> str:
    item = item.strip(" ,.:;")
    item = re.sub(rf"^([{_SENTINELS}]*)\s*(?:on|or|and)\s+", r"\1", item, flags=re.I)
    item = re.sub(r"\s+(?:alone|by\s+itself|by\s+themselves|on\s+its\s+own|only)\W*$", "", item, flags=re.I)
    return item.strip(" ,.:;")


def _quoted(s: str) -> list[str]:
    return [a or b for a, b in re.findall(r"[“‘]([^”’]+)[”’]|\"([^\"]+)\"", s)]


def _answers(body: str, lenient: bool, free_text: list[bool]) -> list[_Answer]:
    """Answers of one clause body; sets ``free_text[0]`` when the body holds free-text descriptions."""
    answers: list[_Answer] = []
    for raw in _split_top(body, _ITEM_SEP):
        item = _strip_item(raw)
        if not _plain(item):
            continue
        plain = _plain(item)
        texts: list[str]
        if _FREE_TEXT.search(plain):
            free_text[0] = True
            if re.search(r"in\s+place\s+of", plain, re.I):
                continue  # a substitution rule, for the moderator
            if _quoted(item):
                texts = _quoted(item)
            elif any(c in item for c in (_U0, _B0)):
                texts = [item]
            else:
                continue
        else:
            whole = _quoted(item)
            texts = whole if len(whole) == 1 and _plain(whole[0]).strip() == plain.strip(_QUOTES) else [item]
        for t in texts:
            t = t.replace("(", _O0).replace(")", _O1).replace("[", _O0).replace("]", _O1)
            t = "".join(c for c in t if c not in _QUOTES or c == "’")
            if a := _make_answer(t, lenient):
                answers.append(a)
    return answers


def _timing(body: str) -> tuple[str, _Timing | None]:
    for m in _TIMING.finditer(body):
        x = _plain(m.group("x")).strip(" ,.;")
        kind: Literal["before", "after"] = "after" if m.group("kind").lower() == "after" else "before"
        if _TIMING_SELF.match(x):
            return body[: m.start()], _Timing(kind, None)
        if q := _TIMING_QUOTED.match(x):
            return body[: m.start()], _Timing(kind, q.group("x"))
        if (p := _TIMING_PLAIN.match(x)) and not _quoted(x):
            return body[: m.start()], _Timing(kind, p.group("x"))
        if m.group("kind").lower() != "after" and x and len(x.split()) <= 3:
            return body[: m.start()], _Timing(kind, x.strip(_QUOTES))
    return body, None


def _parse_clause(text: str, lenient: bool, line: _Line) -> list[_Clause]:
    kind, body = _directive(text)
    source = _plain(text)
    if kind is None:
        return _note(source)
    if kind == "either":
        line.either = True
        body = re.sub(r"^[\s,]*(?:as\s+well\s+as|and\s+also|and|or|also)\b", "", body, flags=re.I)
        kind = "accept"
    if kind == "partial":
        line.partial_prompt = _Clause("prompt", source)
        kind = "prompt"
    clauses: list[_Clause] = []
    after_kind = None
    if m := _BUT_AFTER.search(body):
        after_kind = m.group("kind").lower()
        body = body[: m.start()]
    directed = None
    for m in _DIRECTED.finditer(body):
        rest = m.group("rest")
        quoted = _quoted(rest)
        if m.group("how").lower() == "with" and not (quoted and rest.lstrip(_SENTINELS + " ")[:1] in _QUOTES):
            continue
        directed = _plain(quoted[0] if quoted else rest).strip(" .,;") or None
        body = body[: m.start()]
        break
    if line.partial_prompt is not None and line.partial_prompt.source == source:
        line.partial_prompt.directed = directed
    body, timing = _timing(body)
    free = [False]
    answers = _answers(body, lenient, free)
    clause = _Clause(kind, source, answers, directed, timing, free[0])
    clauses.append(clause)
    if after_kind and timing is not None:
        after = {"do not accept": "reject"}.get(after_kind, after_kind)
        clauses.append(_Clause(after, source, answers, directed, _Timing("after", timing.target), free[0]))
    return [c for c in clauses if c.answers or c.free_text]


def _note(text: str) -> list[_Clause]:
    """A clause without a directive: an editor note, or a free-text instruction for the moderator."""
    return [_Clause("accept", _plain(text), free_text=True)] if _FREE_TEXT.search(text) else []


@lru_cache(maxsize=4096)
def _parse(answer_line: str) -> _Line:
    text, notes, formatted = _preprocess(answer_line)
    lenient = not formatted
    line = _Line([])
    pieces = _groups(text)
    main_parts: list[str] = []
    sections: list[str] = []
    for i, (kind, s) in enumerate(pieces):
        if kind == "text":
            main_parts.append(s)
        elif _directive(s)[0] is not None:
            sections.append(s)
        elif any(k == "text" for k, _ in pieces[i + 1 :]):
            main_parts.append(_O0 + s + _O1)  # "[French] Socialist Party", "Frédéric (François) Chopin"
        else:
            notes.append(_plain(s))
    main_clauses = _split_top("".join(main_parts), _CLAUSE_SEP)
    main = _Clause("accept", _plain(main_clauses[0]), main=True)
    for alt in _split_top(main_clauses[0], _MAIN_SEP):
        alt = alt.strip(" ,.:" + _QUOTES)
        alt = "".join(c for c in alt if c not in _QUOTES or c == "’")
        if a := _make_answer(alt, lenient):
            main.answers.append(a)
    line.clauses.append(main)
    for note in notes:
        line.clauses.extend(_note(note))
    for extra in main_clauses[1:]:
        line.clauses.extend(_parse_clause(extra, lenient, line))
    for section in sections:
        for clause_text in _split_top(section, _CLAUSE_SEP):
            line.clauses.extend(_parse_clause(clause_text, lenient, line))
    return line


# ---------------------------------------------------------------------------------------------------------
# Matching


@dataclass
class _Match:
    level: str  # strict | exact | fuzzy | loose | partial
    cost: int = 0


def _skeleton(word: str) -> str:
    """First letter + consonants, doubles collapsed: Muhammed/Mohamad → mhmd, Sulayman/Solomon → slmn."""
    s = word[0] + re.sub(r"[aeiouy]", "", word[1:])
    return re.sub(r"(.)\1+", r"\1", s)


def _budget(length: int) -> int:
    return int(length * _ERRORS_PER_CHAR)


def _word_form(a: str, b: str) -> bool:
    """``a`` is ``b`` plus an inflectional suffix (testing/test), stems of three letters or more."""
    return len(b) >= 3 and a.startswith(b) and a[len(b) :] in _WORD_SUFFIXES


def _pair_cost(g: _Tok, c: _Tok, lenient: bool) -> int | None:
    """0 for an exact word match, a positive edit cost for a tolerated typo, None for no match."""
    c_forms = {c.surface, c.key} | ({c.req_prefix} if c.req_prefix else set())
    g_forms = {g.surface, g.key}
    if g_forms & c_forms:
        return 0
    if g.numeric or c.numeric:
        return None
    if any(_word_form(x, y) or _word_form(y, x) for x in g_forms for y in c_forms):
        return 0
    best: int | None = None
    for cf in c_forms:
        d = OSA.distance(g.surface, cf)
        if 0 < d <= _budget(len(cf)):
            best = d if best is None else min(best, d)
    if best is None and len(g.surface) >= 5 and len(c.surface) >= 5 and g.surface[0] == c.surface[0]:
        sk = _skeleton(g.surface)
        if len(sk) >= 4 and sk == _skeleton(c.surface):
            best = 1
    if best is None and lenient and len(g.surface) >= 4 and c.surface.startswith(g.surface):
        best = 1 if len(g.surface) >= 0.3 * len(c.surface) else None
    return best


def _join_forms(toks: list[_Tok]) -> set[str]:
    return {"".join(t.surface for t in toks), "".join(t.surface for t in toks[:-1]) + toks[-1].key}


def _acronyms(toks: list[_Tok]) -> set[str]:
    """Initials of the answer: of the required words, of all words, of the non-stopwords (numbers as written,
    as digits or as Roman numerals: WWII, WW2)."""
    out: set[str] = set()
    nonopt = [t for t in toks if not t.optional]
    for words in (
        [t for t in nonopt if t.required],
        [t for t in nonopt if t.required and t.surface not in _STOPWORDS],
        nonopt,
        [t for t in nonopt if t.surface not in _STOPWORDS],
    ):
        if len(words) < 2:
            continue
        options: list[list[str]] = []
        for t in words:
            if t.numeric:
                n = int(t.key)
                options.append([t.key, _to_roman(n)] if 0 < n < 40 else [t.key])
            else:
                options.append([t.surface[0]])
        for combo in product(*options[:8]):
            out.add("".join(combo))
    return out


def _to_roman(n: int) -> str:
    out = ""
    for value, numeral in ((10, "x"), (9, "ix"), (5, "v"), (4, "iv"), (1, "i")):
        while n >= value:
            out, n = out + numeral, n - value
    return out


def _match(ans: _Answer, given: list[_Tok], strict_given: str | None) -> _Match | None:
    """Match the given tokens against one answer; ``strict_given`` is the folded original answer (None for
    nickname/abbreviation variants, which never match strictly). None when no required word is matched."""
    toks = ans.tokens
    if strict_given is not None and strict_given in ans.strict:
        return _Match("strict")
    content = [t for t in toks if not t.article]
    g = [t for t in given if not t.article]
    if not g:
        return None
    required = [i for i, t in enumerate(content) if t.required]
    acronyms = _acronyms(toks)
    for i, t in enumerate(g):
        others = [o for k, o in enumerate(g) if k != i and o.surface not in _STOPWORDS]
        if not t.numeric and len(t.surface) >= 2 and t.surface in acronyms and len(others) <= 1:
            return _Match("exact")
    only = content[required[0]] if len(required) == 1 else None
    if only is not None and only.upper and len(g) >= 2 and "".join(t.surface[0] for t in g) == only.surface:
        return _Match("exact")

    # Candidate pairings: one given word ~ 1-3 answer words, or 1-3 given words ~ one answer word.
    spans: list[tuple[int, int, int, int, int]] = []  # cost, given start, given length, answer start, length
    for gi in range(len(g)):
        for ci in range(len(content)):
            cost = _pair_cost(g[gi], content[ci], ans.lenient)
            if cost is not None:
                spans.append((cost, gi, 1, ci, 1))
            for n in (2, 3):
                if ci + n <= len(content) and _join_forms(content[ci : ci + n]) & {g[gi].surface, g[gi].key}:
                    spans.append((0, gi, 1, ci, n))
                if gi + n <= len(g) and _join_forms(g[gi : gi + n]) & {content[ci].surface, content[ci].key}:
                    spans.append((0, gi, n, ci, 1))
    # Greedy assignment: exact before fuzzy, then pairs covering more required words, then longer spans.
    spans.sort(
        key=lambda p: (p[0], -sum(content[k].required for k in range(p[3], p[3] + p[4])), -p[2] - p[4])
    )
    used_g: set[int] = set()
    used_c: set[int] = set()
    total_cost = 0
    budget_len = 0
    for cost, gi, gn, ci, cn in spans:
        gs, cs = set(range(gi, gi + gn)), set(range(ci, ci + cn))
        if gs & used_g or cs & used_c:
            continue
        used_g |= gs
        used_c |= cs
        total_cost += cost
        budget_len += sum(len(content[k].surface) for k in cs)
    matched_req = [i for i in required if i in used_c]
    extra = [t for i, t in enumerate(g) if i not in used_g and t.surface not in _STOPWORDS]
    if not matched_req:
        return _phrase_fuzzy(content, required, g)
    if len(extra) > max(1, len(used_c) // 2):
        return None  # padded answer: many words beyond the answer
    if len(matched_req) == len(required):
        if total_cost == 0:
            return _Match("exact")
        return _Match("fuzzy", total_cost) if total_cost <= max(1, _budget(budget_len)) else None
    if phrase := _phrase_fuzzy(content, required, g):
        return phrase
    if ans.lenient and (len(matched_req) * 2 > len(required) or required[-1] in used_c):
        return _Match("loose", total_cost)
    return _Match("partial", total_cost)


def _phrase_fuzzy(content: list[_Tok], required: list[int], g: list[_Tok]) -> _Match | None:
    """Whole-phrase typo tolerance for multi-word answers ("second contentinal congress")."""
    given = " ".join(t.surface for t in g)
    phrase = " ".join(content[i].surface for i in required)
    if len(required) < 2 or len(g) < 2:
        return None
    if sorted(t.key for t in g if t.numeric) != sorted(
        content[i].key for i in required if content[i].numeric
    ):
        return None  # World War I is not World War II, however close the spelling
    d = Levenshtein.distance(given, phrase)
    return _Match("fuzzy", d) if d <= _budget(len(phrase)) else None


# ---------------------------------------------------------------------------------------------------------
# Equivalents, timing and the verdict

_DATA = Path(__file__).resolve().parent / "judge_data" / "equivalents.json"


@lru_cache(maxsize=1)
def _equivalents() -> list[list[list[str]]]:
    groups = json.loads(_DATA.read_text(encoding="utf-8"))["groups"]
    return [[[w.lower() for w, _, _ in _raw_words(p)] for p in group] for group in groups]


def _variants(given: str) -> list[list[_Tok]]:
    """The given answer and its spellings with one nickname/abbreviation substituted (Dr. → Doctor)."""
    words = [w.lower() for w, _, _ in _raw_words(given)]
    seen = {tuple(words)}
    out = [words]
    for group in _equivalents():
        for member in group:
            n = len(member)
            for i in range(len(words) - n + 1):
                if words[i : i + n] != member:
                    continue
                for other in group:
                    v = tuple(words[:i] + other + words[i + n :])
                    if v not in seen:
                        seen.add(v)
                        out.append(list(v))
    return [_tokens(" ".join(v)) for v in out]


def _question_tokens(question: str) -> list[_Tok]:
    words = [w.replace("(*)", "").replace("(+)", "") for w in question.split()]
    return [(_tokens(w) or [_Tok("", "")])[0] for w in words if w]


def _locate(target: list[_Tok], question: list[_Tok]) -> tuple[int, int] | None:
    target = [t for t in target if not t.article]
    if not target:
        return None
    for i in range(len(question) - len(target) + 1):
        if all(_pair_cost(question[i + k], t, False) is not None for k, t in enumerate(target)):
            return i, i + len(target) - 1
    return None


def _timing_state(
    clause: _Clause,
    answer: _Answer,
    token_index: int | None,
    token_count: int | None,
    question: str | None,
) -> str:
    """ "active" | "inactive" | "unknown" for a clause with a timing condition (see the module docstring)."""
    timing = clause.timing
    if timing is None or token_index is None:
        return "active"
    if question:
        target = _tokens(timing.target) if timing.target else [t for t in answer.tokens if not t.optional]
        if where := _locate(target, _question_tokens(question)):
            start, end = where
            holds = token_index < start if timing.kind == "before" else token_index >= end
            return "active" if holds else "inactive"
    if token_count is not None and token_index >= token_count - 1:
        return "inactive" if timing.kind == "before" else "active"
    return "unknown"


def _describe(clause: _Clause) -> str:
    return "main answer" if clause.main else f'clause "{clause.source}"'


def _decide(
    line: _Line,
    given: str,
    token_index: int | None,
    token_count: int | None,
    question: str | None,
) -> Verdict:
    variants = _variants(given)
    if not any(t for v in variants for t in v if not t.article):
        return Verdict("reject", None, "empty answer")
    strict = [_fold(given)] + [None] * (len(variants) - 1)
    either = [
        _Answer(a.text, [_Tok(**{**t.__dict__, "required": t is req}) for t in a.tokens], a.lenient, a.strict)
        for a in line.clauses[0].answers
        for req in a.tokens
        if line.either and req.required and not req.article
    ]
    hits: dict[str, list[tuple[int, int, _Clause, _Answer]]] = {lv: [] for lv in (*_LEVELS, "partial")}
    for order, clause in enumerate(line.clauses):
        answers = clause.answers + (either if clause.main else [])
        for ans in answers:
            for v, s in zip(variants, strict, strict=True):
                if m := _match(ans, v, s):
                    hits[m.level].append((m.cost, order, clause, ans))
    undecided: tuple[_Clause, str] | None = None
    expired: _Clause | None = None
    for level in _LEVELS:
        found = sorted(hits[level], key=lambda h: (h[0] if level == "fuzzy" else 0, _RANK[h[2].kind], h[1]))
        for _, _, clause, ans in found:
            state = _timing_state(clause, ans, token_index, token_count, question)
            if state == "inactive":
                expired = expired or clause
                continue
            if state == "unknown":
                undecided = undecided or (clause, level)
                continue
            if undecided:
                break
            outcome: Outcome = "accept" if clause.kind in ("accept", "antiprompt") else clause.kind  # type: ignore[assignment]
            note = " (anti-prompt)" if clause.kind == "antiprompt" else ""
            directed = clause.directed if outcome == "prompt" else None
            return Verdict(outcome, directed, f"{outcome}: {level} match on {_describe(clause)}{note}")
        if undecided:
            clause, level = undecided
            return Verdict(
                "needs_moderator",
                clause.directed,
                f"{level} match on {_describe(clause)}, but its timing condition cannot be located",
            )
    if line.partial_prompt is not None:
        for _, _, clause, _ in hits["partial"]:
            if clause.kind in ("accept", "antiprompt"):
                pp = line.partial_prompt
                return Verdict("prompt", pp.directed, f'prompt: partial answer ("{pp.source}")')
    free = [c for c in line.clauses if c.free_text and c.kind in ("accept", "antiprompt")]
    if free:
        return Verdict(
            "needs_moderator", None, f'no listed answer matched; free-text clause "{free[0].source}"'
        )
    if hits["partial"]:
        return Verdict("reject", None, f"reject: partial answer to {_describe(hits['partial'][0][2])}")
    if expired:
        return Verdict("reject", None, f"reject: {_describe(expired)} no longer applies at this buzz")
    return Verdict("reject", None, "reject: no clause matched")


def judge(
    answer_line: str,
    given: str,
    *,
    token_index: int | None = None,
    token_count: int | None = None,
    question: str | None = None,
) -> Verdict:
    """Judge a player's answer against a quizbowl answer line.

    answer_line: HTML (``<b><u>…</u></b>`` or ``<u>…</u>`` = required part) or plain text, with ``[…]`` or
        ``(…)`` directive sections (accept / or / prompt on / anti-prompt / reject / do not accept or prompt
        on, accept either, prompt on partial, directed prompts, timing clauses) and ``<…>`` editor notes.
    given: the player's answer; empty (after folding) → reject.
    token_index: 0-based index of the last question token the player had seen at the buzz, or None.
    token_count: number of tokens in the question (power marks excluded), or None.
    question: the tossup text, used to locate X in "before/after X is read" clauses; optional.
    Returns a Verdict; never raises (an answer line that cannot be parsed gives needs_moderator).
    Grammar: QUIZBOWL.md "Answer lines and judging" (qbreader qb-answer-checker conventions).
    """
    if not given or not given.strip():
        return Verdict("reject", None, "empty answer")
    try:
        line = _parse(answer_line or "")
        if not line.clauses[0].answers and len(line.clauses) == 1:
            return Verdict("needs_moderator", None, "answer line has no parsable answer")
        return _decide(line, given, token_index, token_count, question)
    except Exception as exc:  # a judge must never take the match down; the moderator rules instead
        return Verdict("needs_moderator", None, f"could not parse answer line ({type(exc).__name__}: {exc})")


def main(argv: list[str] | None = None) -> int:
    """CLI: ``python -m scoring.judge "<answer line>" "<given>" [--token-index N --token-count M]``."""
    parser = argparse.ArgumentParser(prog="python -m scoring.judge", description=main.__doc__)
    parser.add_argument("answer_line")
    parser.add_argument("given")
    parser.add_argument("--token-index", type=int, default=None)
    parser.add_argument("--token-count", type=int, default=None)
    parser.add_argument("--question", default=None, help="tossup text, to locate timing clauses")
    args = parser.parse_args(argv)
    v = judge(
        args.answer_line,
        args.given,
        token_index=args.token_index,
        token_count=args.token_count,
        question=args.question,
    )
    print(f"outcome: {v.outcome}")
    print(f"directed prompt: {v.directed_prompt or '-'}")
    print(f"reason: {v.reason}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
