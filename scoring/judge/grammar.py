"""Answer-line grammar (pure): one parser for the judge and the bots.

``parse_answer_line(line)`` reads an answer line in qbreader / qb-answer-checker conventions and returns an
``AnswerLine``: the main clause first (its alternatives split on "or"), then one ``Clause`` per directive —
``accept`` / ``or`` / ``also accept``, ``anti-prompt on``, ``prompt on`` (optionally directed: ``with "…"`` /
``by asking "…"``), ``reject`` / ``do not accept or prompt on``, ``accept either underlined part``, ``prompt on
partial answer`` — each with its answers, an optional timing condition ("before X is read", "until …",
"after …", "but prompt after") and whether it holds free text for the moderator ("accept equivalents").

Markup: HTML ``<b><u>…</u></b>`` (or Protobowl ``{…}``) marks the required words; plain text makes every
non-optional word required (a "lenient" line); ``(…)`` / ``[…]`` without a directive are optional words when text
follows them, else notes; ``<…>`` (also HTML-escaped) are editor notes. Packet-extraction debris at the end of a
line (the next section's "Bonuses:" header) is dropped. ``main_answer(line)`` gives the display form of the
main answer that the bots train on and answer with.
"""

from __future__ import annotations

import html
import re
from dataclasses import dataclass, field
from functools import lru_cache
from typing import Literal

from scoring.judge.text import (
    ARTICLES,
    B0,
    B1,
    O0,
    O1,
    QUOTES,
    SENTINELS,
    U0,
    U1,
    Token,
    fold,
    plain,
    raw_words,
    tokens,
)

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
            r"(?:also\s+)?accept\s+(?:either|both)(?:\s+or\s+both)?\s+(?:of\s+the\s+)?(?:underlined\s+)?"
            r"(?:parts?|names?|answers?|portions?|words?)",
            "either",
        ),
        (r"(?:also\s+)?accept\s+(?:either|any|each)\s+(?:of\s+the\s+)?underlined", "either"),
        # A bare "accept either" (or "either or both") names no answer: the main answer's parts, one at a time.
        (r"(?:also\s+)?accept\s+(?:either|both)(?:\s+or\s+both)?(?=\s*$)", "either"),
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
_TIMING_QUOTED = re.compile(rf"^[{QUOTES}](?P<x>[^{QUOTES}]+)[{QUOTES}]\s*{_READ}?\s*\.?$", re.I)
_TIMING_PLAIN = re.compile(rf"^(?P<x>.+?)\s+{_READ}\s*\.?$", re.I)


@dataclass
class Answer:
    """One acceptable (or prompt-/reject-worthy) answer: tokens with ``required`` resolved."""

    text: str  # as written, markup and quotes removed, optional words kept ("Frédéric François Chopin")
    tokens: list[Token]
    lenient: bool  # from a plain-text line: required words are a guess, so partial coverage may do
    strict: frozenset[str] = frozenset()  # folded spellings with and without the optional words
    bare: str = ""  # ``text`` without the optional words ("Frédéric Chopin"); the display form


@dataclass
class Timing:
    kind: Literal["before", "after"]
    target: str | None  # None: the clause's own answer ("before it is read", "before mention")


@dataclass
class Clause:
    kind: str  # accept | antiprompt | prompt | reject
    source: str
    answers: list[Answer] = field(default_factory=list)
    directed: str | None = None
    timing: Timing | None = None
    free_text: bool = False
    main: bool = False


@dataclass
class AnswerLine:
    clauses: list[Clause]
    partial_prompt: Clause | None = None
    either: bool = False


def _make_answer(text: str, lenient: bool) -> Answer | None:
    toks = tokens(text)
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
    without_optional = re.sub(f"{O0}[^{O1}]*{O1}?", " ", text)
    strict = frozenset(fold(t) for t in (text, without_optional)) - {""}
    return Answer(plain(text).strip(QUOTES + " "), toks, lenient, strict, _bare(text))


def _bare(text: str) -> str:
    """Display form of one sentinel-marked answer: optional words dropped unless nothing else is left."""
    bare = " ".join(plain(re.sub(f"{O0}[^{O1}]*{O1}?", " ", text)).split()).strip(QUOTES + " ")
    return bare if fold(bare) else plain(text).strip(QUOTES + " ")


def _split_top(s: str, seps: re.Pattern[str]) -> list[str]:
    """Split ``s`` on ``seps`` outside brackets and quotes."""
    parts: list[str] = []
    depth, in_straight, in_curly, last, i = 0, False, 0, 0, 0
    while i < len(s):
        ch = s[i]
        if ch in "([" + O0:  # O0/O1: an optional group already marked in the main text
            depth += 1
        elif ch in ")]" + O1:
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
# The main text also ends at an unbracketed directive: "Hume, accept David Hume", "Curie prompt on Marie".
_MAIN_CLAUSE_SEP = re.compile(
    r"\s*;\s*|,?\s+(?=(?:also\s+)?accept\b|prompt\s+on\b|do\s+not\s+(?:accept|prompt)\b|anti-?\s*prompt\b)",
    re.I,
)
# Packet-extraction debris: the next section's header glued to the last answer line ("Glasgow Bonuses:").
_SECTION_HEADER = re.compile(r"\s+(?:bonuses\s*:?|bonus\s*:)\s*$", re.I)
_ITEM_SEP = re.compile(r",\s*(?:or|and)\s+|\s+or\s+|,\s*|\s*/\s*(?=\S)")
_MAIN_SEP = re.compile(r",?\s+or\s+", re.I)  # packets also write "lauds OR vespers"


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
    body = s.lstrip(" ,:" + SENTINELS)
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
            return U1 if closing else U0
        if name in ("b", "strong"):
            return B1 if closing else B0
        if name in _KNOWN_TAGS:
            return " " if name in ("br", "p", "div") else ""
        return m.group(0)

    # Entities first: packets escape editor notes as "&lt;JG, World History&gt;".
    text = _TAG_RE.sub(tag, html.unescape(line))
    notes = [n.strip() for n in re.findall(r"<([^<>]*)>|<([^<>]*)$", text) for n in n if n]
    text = re.sub(r"<[^<>]*(?:>|$)", " ", text).replace("\xa0", " ")  # an unclosed "<JR" note runs to the end
    text = _SECTION_HEADER.sub("", text)
    if "{" in text and "}" in text:  # Protobowl required-word braces
        text = text.replace("{", U0).replace("}", U1)
    formatted = any(c in text for c in (U0, B0))
    return text, notes, formatted


def _strip_item(item: str) -> str:
    item = item.strip(" ,.:;")
    item = re.sub(rf"^([{SENTINELS}]*)\s*(?:on|or|and)\s+", r"\1", item, flags=re.I)
    item = re.sub(r"\s+(?:alone|by\s+itself|by\s+themselves|on\s+its\s+own|only)\W*$", "", item, flags=re.I)
    return item.strip(" ,.:;")


def _quoted(s: str) -> list[str]:
    return [a or b for a, b in re.findall(r"[“‘]([^”’]+)[”’]|\"([^\"]+)\"", s)]


def _answers(body: str, lenient: bool, free_text: list[bool]) -> list[Answer]:
    """Answers of one clause body; sets ``free_text[0]`` when the body holds free-text descriptions."""
    answers: list[Answer] = []
    for raw in _split_top(body, _ITEM_SEP):
        item = _strip_item(raw)
        if not plain(item):
            continue
        item_text = plain(item)
        texts: list[str]
        if _FREE_TEXT.search(item_text):
            free_text[0] = True
            if re.search(r"in\s+place\s+of", item_text, re.I):
                continue  # a substitution rule, for the moderator
            if _quoted(item):
                texts = _quoted(item)
            elif any(c in item for c in (U0, B0)):
                texts = [item]
            else:
                continue
        else:
            whole = _quoted(item)
            texts = (
                whole if len(whole) == 1 and plain(whole[0]).strip() == item_text.strip(QUOTES) else [item]
            )
        for t in texts:
            t = t.replace("(", O0).replace(")", O1).replace("[", O0).replace("]", O1)
            t = "".join(c for c in t if c not in QUOTES or c == "’")
            if a := _make_answer(t, lenient):
                answers.append(a)
    return answers


def _timing(body: str) -> tuple[str, Timing | None]:
    for m in _TIMING.finditer(body):
        x = plain(m.group("x")).strip(" ,.;")
        kind: Literal["before", "after"] = "after" if m.group("kind").lower() == "after" else "before"
        if _TIMING_SELF.match(x):
            return body[: m.start()], Timing(kind, None)
        if q := _TIMING_QUOTED.match(x):
            return body[: m.start()], Timing(kind, q.group("x"))
        if (p := _TIMING_PLAIN.match(x)) and not _quoted(x):
            return body[: m.start()], Timing(kind, p.group("x"))
        if m.group("kind").lower() != "after" and x and len(x.split()) <= 3:
            return body[: m.start()], Timing(kind, x.strip(QUOTES))
    return body, None


def _parse_clause(text: str, lenient: bool, line: AnswerLine) -> list[Clause]:
    kind, body = _directive(text)
    source = plain(text)
    if kind is None:
        return _note(source)
    if kind == "either":
        line.either = True
        body = re.sub(r"^[\s,]*(?:as\s+well\s+as|and\s+also|and|or|also)\b", "", body, flags=re.I)
        kind = "accept"
    if kind == "partial":
        line.partial_prompt = Clause("prompt", source)
        kind = "prompt"
    clauses: list[Clause] = []
    after_kind = None
    if m := _BUT_AFTER.search(body):
        after_kind = m.group("kind").lower()
        body = body[: m.start()]
    directed = None
    for m in _DIRECTED.finditer(body):
        rest = m.group("rest")
        quoted = _quoted(rest)
        if m.group("how").lower() == "with" and not (quoted and rest.lstrip(SENTINELS + " ")[:1] in QUOTES):
            continue
        directed = plain(quoted[0] if quoted else rest).strip(" .,;") or None
        body = body[: m.start()]
        break
    if line.partial_prompt is not None and line.partial_prompt.source == source:
        line.partial_prompt.directed = directed
    body, timing = _timing(body)
    free = [False]
    answers = _answers(body, lenient, free)
    clause = Clause(kind, source, answers, directed, timing, free[0])
    clauses.append(clause)
    if after_kind and timing is not None:
        after = {"do not accept": "reject"}.get(after_kind, after_kind)
        clauses.append(Clause(after, source, answers, directed, Timing("after", timing.target), free[0]))
    return [c for c in clauses if c.answers or c.free_text]


def _note(text: str) -> list[Clause]:
    """A clause without a directive: an editor note, or a free-text instruction for the moderator."""
    return [Clause("accept", plain(text), free_text=True)] if _FREE_TEXT.search(text) else []


@dataclass(frozen=True)
class _Layout:
    """An answer line cut into its parts, before any answer is tokenised (sentinel-marked text)."""

    main: str  # the main clause: "Marie Curie" of "Marie Curie [prompt on Curie]"
    alternatives: tuple[str, ...]  # the main clause split on "or", quotes and outer punctuation removed
    tails: tuple[str, ...]  # unbracketed clauses after the main one ("; prompt on Curie", ", accept Hume")
    sections: tuple[str, ...]  # bracketed directive sections ("[or …; prompt on …]")
    notes: tuple[str, ...]  # editor notes and trailing bracketed remarks
    formatted: bool  # marked with underline/bold/braces (else every non-optional word is required)


@lru_cache(maxsize=4096)
def _layout(answer_line: str) -> _Layout:
    text, notes, formatted = _preprocess(answer_line)
    pieces = _groups(text)
    main_parts: list[str] = []
    sections: list[str] = []
    for i, (kind, s) in enumerate(pieces):
        if kind == "text":
            main_parts.append(s)
        elif _directive(s)[0] is not None:
            sections.append(s)
        elif any(k == "text" for k, _ in pieces[i + 1 :]):
            main_parts.append(O0 + s + O1)  # "[French] Socialist Party", "Frédéric (François) Chopin"
        else:
            notes.append(plain(s))
    main_clauses = _split_top("".join(main_parts), _MAIN_CLAUSE_SEP)
    alternatives = []
    for alt in _split_top(main_clauses[0], _MAIN_SEP):
        alt = alt.strip(" ,.:" + QUOTES)
        alternatives.append("".join(c for c in alt if c not in QUOTES or c == "’"))
    return _Layout(
        main_clauses[0],
        tuple(alternatives),
        tuple(main_clauses[1:]),
        tuple(sections),
        tuple(notes),
        formatted,
    )


@lru_cache(maxsize=4096)
def parse_answer_line(answer_line: str) -> AnswerLine:
    """Parse one answer line (HTML or plain text; see the module docstring) into an ``AnswerLine``.

    Never raises on text: an unparsable main answer leaves ``clauses[0].answers`` empty. The result is cached
    and shared between callers, so treat it as read-only.
    """
    layout = _layout(answer_line)
    lenient = not layout.formatted
    line = AnswerLine([])
    main = Clause("accept", plain(layout.main), main=True)
    for alt in layout.alternatives:
        if a := _make_answer(alt, lenient):
            main.answers.append(a)
    line.clauses.append(main)
    for note in layout.notes:
        line.clauses.extend(_note(note))
    for extra in layout.tails:
        line.clauses.extend(_parse_clause(extra, lenient, line))
    for section in layout.sections:
        for clause_text in _split_top(section, _CLAUSE_SEP):
            line.clauses.extend(_parse_clause(clause_text, lenient, line))
    return line


def main_answer(answer_line: str) -> str:
    """The main answer of a tossup/bonus answer line, as displayed and as the bots answer with it.

    answer_line: raw answer line, possibly with HTML (``<b><u>``), HTML entities, ``[…]``/``(…)``/``<…>``
    sections and ``; prompt on …`` tails. Returns the first alternative of the main clause that
    ``parse_answer_line`` keeps as an answer (``Answer.bare``: optional words dropped), whitespace collapsed
    and surrounding quotes/punctuation stripped; the main clause's text when no alternative is kept ("A",
    all articles); ``""`` for an empty line. Never raises. Reads only the main clause (no tokenising), so it
    costs a few microseconds per line on a whole packet dump.
    Example: ``"<b><u>Louis XIII</u></b> [or Louis the Just]"`` → ``"Louis XIII"``.
    """
    layout = _layout(answer_line or "")
    kept = (a for a in layout.alternatives if _has_content(a))
    text = _bare(alt) if (alt := next(kept, None)) is not None else plain(layout.main)
    return " ".join(text.split()).strip(" \"'“”‘’.,;:")


def _has_content(text: str) -> bool:
    """``_make_answer``'s test (a token other than an article) without tokenising the usual answer: a word of
    two letters or more that is not an article stays a non-article token; only runs of single letters (which
    join: "A N" → "an") and number words need the tokeniser."""
    words = [w.lower() for w, _, _ in raw_words(text)]
    if any(len(w) > 1 and w not in ARTICLES for w in words):
        return True
    return any(not t.article for t in tokens(text))
