"""Matching (pure): how closely a given answer's tokens match one parsed answer.

``match_answer`` grades a match *strict* (identical after folding), *exact* (same words after folding,
articles, numbers, plurals, word order, compounds, acronyms, initials of consecutive words), *fuzzy* (typos:
about one edit per 6.5 characters, and slips beyond it: ``_slip``; never a changed first letter;
vowel-insensitive transliteration variants), *loose* (lenient lines only: most words, or the last)
or *partial* (some but not all required words; ``Match.shape`` says what is missing). A given with
many words beyond the answer, or a number the answer lacks, does not match. ``given_variants`` adds the given answer's spellings with one
nickname/abbreviation substituted (``data/equivalents.json``: Dr. → Doctor).
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass
from functools import lru_cache
from itertools import product
from pathlib import Path

from rapidfuzz.distance import OSA, Levenshtein

from scoring.judge.grammar import Answer
from scoring.judge.text import STOPWORDS, Token, raw_words, tokens

_WORD_SUFFIXES = ("s", "es", "d", "ed", "ing", "er", "ers")
_ERRORS_PER_CHAR = 1 / 6.5  # typo budget: about one edit per 6-7 characters


@dataclass
class Match:
    level: str  # strict | exact | fuzzy | loose | partial
    cost: int = 0
    shape: str = ""  # partial matches: "title" | "regnal" | "name" (what an incomplete answer lacks), else ""


def _skeleton(word: str) -> str:
    """First letter + consonants, doubles collapsed: Muhammed/Mohamad → mhmd, Sulayman/Solomon → slmn."""
    s = word[0] + re.sub(r"[aeiouy]", "", word[1:])
    return re.sub(r"(.)\1+", r"\1", s)


def _budget(length: int) -> int:
    return int(length * _ERRORS_PER_CHAR)


def _word_form(a: str, b: str) -> bool:
    """``a`` is ``b`` plus an inflectional suffix (testing/test), stems of three letters or more."""
    return len(b) >= 3 and a.startswith(b) and a[len(b) :] in _WORD_SUFFIXES


def pair_cost(g: Token, c: Token, lenient: bool) -> int | None:
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
        slip = d > 0 and _slip(g.surface, cf)
        # a changed first letter is another word (Prussia/Russia), not a typo
        if (0 < d <= _budget(len(cf)) and g.surface[:1] == cf[:1]) or slip:
            cost = 1 if slip else d  # a slip costs one edit however it is spelled
            best = cost if best is None else min(best, cost)
    if best is None and len(g.surface) >= 5 and len(c.surface) >= 5 and g.surface[0] == c.surface[0]:
        sk = _skeleton(g.surface)
        if len(sk) >= 4 and sk == _skeleton(c.surface):
            best = 1
    if best is None and lenient and len(g.surface) >= 4 and c.surface.startswith(g.surface):
        best = 1 if len(g.surface) >= 0.3 * len(c.surface) else None
    return best


def _undouble(word: str) -> str:
    return re.sub(r"(.)\1+", r"\1", word)


def _slip(g: str, c: str) -> bool:
    """A misspelling moderators accept beyond the typo budget: same first letter, a word of 6+ letters,
    and after undoubling letters (Kierkegard, Hemmingway) at most one slip (two for 10+ letters) of the
    kinds hands and ears make: a letter dropped or added, two letters swapped, a vowel for a vowel (7+
    letters). A consonant changed in a short word is a different word (Iceland/Ireland), and so is a
    changed first letter (Prussia/Russia)."""
    if len(c) < 6 or g[:1] != c[:1] or not (g.isalpha() and c.isalpha()):
        return False
    gu, cu = _undouble(g), _undouble(c)
    d = OSA.distance(gu, cu)
    if d == 0:
        return True
    if d > (2 if len(c) >= 10 else 1):
        return False
    if d == 2 or len(gu) != len(cu) or sorted(gu) == sorted(cu):
        return True
    diff = [(x, y) for x, y in zip(gu, cu, strict=True) if x != y]
    return len(c) >= 7 and all(x in "aeiouy" and y in "aeiouy" for x, y in diff)


def _initials(word: str, words: list[Token]) -> bool:
    """``word`` (1–3 letters) is the initials of the consecutive answer ``words`` (J. S. → Johann Sebastian)."""
    return (
        len(words) == len(word)
        and word.isalpha()
        and all(
            not t.numeric and len(t.surface) > 1 and t.surface[0] == ch
            for t, ch in zip(words, word, strict=True)
        )
    )


def _join_forms(toks: list[Token]) -> set[str]:
    return {"".join(t.surface for t in toks), "".join(t.surface for t in toks[:-1]) + toks[-1].key}


def _acronyms(toks: list[Token]) -> set[str]:
    """Initials of the answer: of the required words, of all words, of the non-stopwords (numbers as written,
    as digits or as Roman numerals: WWII, WW2)."""
    out: set[str] = set()
    nonopt = [t for t in toks if not t.optional]
    for words in (
        [t for t in nonopt if t.required],
        [t for t in nonopt if t.required and t.surface not in STOPWORDS],
        nonopt,
        [t for t in nonopt if t.surface not in STOPWORDS],
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


def match_answer(ans: Answer, given: list[Token], strict_given: str | None) -> Match | None:
    """Match the given tokens against one answer; ``strict_given`` is the folded original answer (None for
    nickname/abbreviation variants, which never match strictly). None when no required word is matched."""
    toks = ans.tokens
    if strict_given is not None and strict_given in ans.strict:
        return Match("strict")
    content = [t for t in toks if not t.article]
    g = [t for t in given if not t.article]
    if not g:
        return None
    required = [i for i, t in enumerate(content) if t.required]
    acronyms = _acronyms(toks)
    for i, t in enumerate(g):
        others = [o for k, o in enumerate(g) if k != i and o.surface not in STOPWORDS]
        if not t.numeric and len(t.surface) >= 2 and t.surface in acronyms and len(others) <= 1:
            return Match("exact")
    only = content[required[0]] if len(required) == 1 else None
    if only is not None and only.upper and len(g) >= 2 and "".join(t.surface[0] for t in g) == only.surface:
        return Match("exact")

    # Candidate pairings: one given word ~ 1-3 answer words, or 1-3 given words ~ one answer word.
    spans: list[tuple[int, int, int, int, int]] = []  # cost, given start, given length, answer start, length
    for gi in range(len(g)):
        for ci in range(len(content)):
            cost = pair_cost(g[gi], content[ci], ans.lenient)
            if cost is not None:
                spans.append((cost, gi, 1, ci, 1))
            w = g[gi].surface
            initial_ok = len(w) > 1 or len(g) > 1  # a lone letter is no answer ("u" for USA)
            if len(w) <= 3 and w not in STOPWORDS and initial_ok and _initials(w, content[ci : ci + len(w)]):
                spans.append((0, gi, 1, ci, len(w)))
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
    unmatched = [t for i, t in enumerate(g) if i not in used_g]
    extra = [t for t in unmatched if t.surface not in STOPWORDS]
    if not matched_req:
        return _phrase_fuzzy(content, required, g)
    if len(extra) > max(1, len(used_c) // 2) or len(unmatched) > max(2, len(used_c)):
        return None  # padded answer: many words beyond the answer (a word salad around it)
    if any(t.numeric for t in unmatched):
        return None  # a number the answer does not have (Louis XV for Louis XIV) names something else
    if len(matched_req) == len(required):
        if total_cost == 0:
            return Match("exact")
        return Match("fuzzy", total_cost) if total_cost <= max(1, _budget(budget_len)) else None
    if phrase := _phrase_fuzzy(content, required, g):
        return phrase
    shape = _missing(content, required, used_c)
    if ans.lenient and shape != "title" and (len(matched_req) * 2 > len(required) or required[-1] in used_c):
        return Match("loose", total_cost)
    return Match("partial", total_cost, shape)


def _missing(content: list[Token], required: list[int], used: set[int]) -> str:
    """What a partial answer leaves out of the required words: "regnal" (only the number: Louis for
    Louis XIV), "title" (part of a title: a function word other than "or" inside it, "Six Characters
    in Search of an Author"), "name" (other words of a name or phrase), or "" when it matched only function words."""
    if not any(i in used and content[i].surface not in STOPWORDS for i in required):
        return ""
    missing = [content[i] for i in required if i not in used]
    if missing and all(t.numeric for t in missing):
        return "regnal"
    inner = [content[i] for i in required[1:-1]]
    # "or" inside a title joins alternative titles ("Twelfth Night, or What You Will"): not a title's glue
    if any(t.surface in STOPWORDS and t.surface != "or" for t in inner) and len(required) >= 3:
        return "title"
    return "name"


def _phrase_fuzzy(content: list[Token], required: list[int], g: list[Token]) -> Match | None:
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
    return Match("fuzzy", d) if d <= _budget(len(phrase)) else None


_DATA = Path(__file__).resolve().parent / "data" / "equivalents.json"


@lru_cache(maxsize=1)
def _equivalents() -> list[list[list[str]]]:
    groups = json.loads(_DATA.read_text(encoding="utf-8"))["groups"]
    return [[[w.lower() for w, _, _ in raw_words(p)] for p in group] for group in groups]


def given_variants(given: str) -> list[list[Token]]:
    """The given answer and its spellings with one nickname/abbreviation substituted (Dr. → Doctor)."""
    words = [w.lower() for w, _, _ in raw_words(given)]
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
    return [tokens(" ".join(v)) for v in out]
