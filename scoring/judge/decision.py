"""The decision (pure): parsed answer line + given answer + reveal position → ``Judgement``.

Decision order (a hit at a stronger match level always wins over a weaker one):

1. match levels, strongest first: strict, exact, fuzzy, loose (see ``scoring.judge.matching``);
2. within a level: reject clauses first, then accept (incl. anti-prompt), then prompt; at the fuzzy level the
   closest candidate wins;
3. a partial answer (some but not all required words) → prompt when the line says "prompt on partial", or
   when it lacks only a monarch's number ("Louis" for Louis XIV) or is part of a title (a function word inside
   the required words: "Six Characters"), else reject (a partial name, as qb-answer-checker's data rules);
4. initials in the given must stand for the answer's words before its last ("J. S. Bach", not "C. P. E.
   Bach"), else that answer does not match; a given listing candidates ("Mozart or Haydn") is rejected when
   one of them matches nothing;
5. nothing matched → needs_moderator if the line has a free-text clause ("accept equivalents", "answers
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

import re
from dataclasses import dataclass
from typing import Any

from competition.vocabulary import Verdict
from scoring.judge.grammar import Answer, AnswerLine, Clause, parse_answer_line
from scoring.judge.matching import given_variants, match_answer, pair_cost
from scoring.judge.text import Token, fold, tokens


@dataclass(frozen=True)
class Judgement:
    """The judge's suggestion for one given answer.

    verdict: accept | prompt | reject | needs_moderator (``competition.vocabulary.JUDGE_VERDICTS``).
    directed_prompt: the text to ask the player on a prompt (``with "…"`` / ``by asking "…"``), else None.
    reason: short human-readable note saying which clause (and which match level) decided.
    """

    verdict: Verdict
    directed_prompt: str | None = None
    reason: str = ""


_RANK = {"reject": 0, "accept": 1, "antiprompt": 1, "prompt": 2}
_LEVELS = ("strict", "exact", "fuzzy", "loose")


def _question_tokens(question: str) -> list[Token]:
    words = [w.replace("(*)", "").replace("(+)", "") for w in question.split()]
    return [(tokens(w) or [Token("", "")])[0] for w in words if w]


def _locate(target: list[Token], question: list[Token]) -> tuple[int, int] | None:
    target = [t for t in target if not t.article]
    if not target:
        return None
    for i in range(len(question) - len(target) + 1):
        if all(pair_cost(question[i + k], t, False) is not None for k, t in enumerate(target)):
            return i, i + len(target) - 1
    return None


def _timing_state(
    clause: Clause,
    answer: Answer,
    token_index: int | None,
    token_count: int | None,
    question: str | None,
) -> str:
    """ "active" | "inactive" | "unknown" for a clause with a timing condition (see the module docstring)."""
    timing = clause.timing
    if timing is None or token_index is None:
        return "active"
    if question:
        target = tokens(timing.target) if timing.target else [t for t in answer.tokens if not t.optional]
        if where := _locate(target, _question_tokens(question)):
            start, end = where
            holds = token_index < start if timing.kind == "before" else token_index >= end
            return "active" if holds else "inactive"
    if token_count is not None and token_index >= token_count - 1:
        return "inactive" if timing.kind == "before" else "active"
    return "unknown"


def _describe(clause: Clause) -> str:
    return "main answer" if clause.main else f'clause "{clause.source}"'


def _decide(
    line: AnswerLine,
    given: str,
    token_index: int | None,
    token_count: int | None,
    question: str | None,
) -> Judgement:
    variants = given_variants(given)
    if not any(t for v in variants for t in v if not t.article):
        return Judgement(Verdict.REJECT, None, "empty answer")
    strict = [fold(given)] + [None] * (len(variants) - 1)
    either = [
        Answer(a.text, [Token(**{**t.__dict__, "required": t is req}) for t in a.tokens], a.lenient, a.strict)
        for a in line.clauses[0].answers
        for req in a.tokens
        if line.either and req.required and not req.article
    ]
    hits: dict[str, list[tuple[int, int, Clause, Answer]]] = {lv: [] for lv in (*_LEVELS, "partial")}
    shapes: dict[int, str] = {}  # id(answer) → what a partial match of it lacks
    initials = _given_initials(given)
    for order, clause in enumerate(line.clauses):
        answers = clause.answers + (either if clause.main else [])
        for ans in answers:
            if initials and not all(_fits(i, ans) for i in initials):
                continue  # "C. P. E. Bach" is not Johann Sebastian Bach
            for v, s in zip(variants, strict, strict=True):
                if m := match_answer(ans, v, s):
                    hits[m.level].append((m.cost, order, clause, ans))
                    if m.level == "partial":
                        shapes[id(ans)] = m.shape
    undecided: tuple[Clause, str] | None = None
    expired: Clause | None = None
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
            verdict = Verdict.ACCEPT if clause.kind in ("accept", "antiprompt") else Verdict(clause.kind)
            note = " (anti-prompt)" if clause.kind == "antiprompt" else ""
            directed = clause.directed if verdict is Verdict.PROMPT else None
            return Judgement(verdict, directed, f"{verdict}: {level} match on {_describe(clause)}{note}")
        if undecided:
            clause, level = undecided
            return Judgement(
                Verdict.NEEDS_MODERATOR,
                clause.directed,
                f"{level} match on {_describe(clause)}, but its timing condition cannot be located",
            )
    if line.partial_prompt is not None:
        for _, _, clause, _ in hits["partial"]:
            if clause.kind in ("accept", "antiprompt"):
                pp = line.partial_prompt
                return Judgement(Verdict.PROMPT, pp.directed, f'prompt: partial answer ("{pp.source}")')
    free = [c for c in line.clauses if c.free_text and c.kind in ("accept", "antiprompt")]
    if free:
        return Judgement(
            Verdict.NEEDS_MODERATOR, None, f'no listed answer matched; free-text clause "{free[0].source}"'
        )
    for _, _, clause, ans in hits["partial"]:
        shape = shapes.get(id(ans), "")
        if clause.kind in ("accept", "antiprompt") and shape in ("regnal", "title"):
            what = "a name without its number" if shape == "regnal" else "part of a title"
            return Judgement(
                Verdict.PROMPT, None, f"prompt: incomplete answer ({what}) to {_describe(clause)}"
            )
    if hits["partial"]:
        return Judgement(
            Verdict.REJECT, None, f"reject: partial answer to {_describe(hits['partial'][0][2])}"
        )
    if expired:
        return Judgement(Verdict.REJECT, None, f"reject: {_describe(expired)} no longer applies at this buzz")
    return Judgement(Verdict.REJECT, None, "reject: no clause matched")


_INITIALS = re.compile(r"\b((?:[A-Za-z]\.\s*){1,4}|[A-Z]{2,3}\s)(?=\s*[A-Za-z]{2,})")
_HEDGE = re.compile(r"\s*(?:,|;|/|\bor\b)\s*", re.I)


def _given_initials(given: str) -> list[str]:
    """The runs of initials before a name in ``given`` ("J. S. Bach", "JS Bach" → ["js"])."""
    return [re.sub(r"[^a-z]", "", m.group(1).lower()) for m in _INITIALS.finditer(given)]


def _fits(initials: str, ans: Answer) -> bool:
    """The initials are the first letters of some of the answer's words before its last, in order (J. S.
    → Johann Sebastian Bach, not C. P. E.; B. Benet is not Stephen Vincent Benet)."""
    words = [t for t in ans.tokens if t.surface and not t.article]
    firsts = iter(t.surface[0] for t in words[:-1])
    return all(ch in firsts for ch in initials)


def _hedged(line: AnswerLine, source: str, given: str, verdict: Judgement, **kw: Any) -> Judgement:
    """A given answer listing candidates ("Bach, Handel or Telemann") earns the credit of its worst part:
    one that matches nothing makes it a reject (a hedge is not an answer)."""
    parts = [p for p in _HEDGE.split(given) if p.strip()]
    if verdict.verdict not in (Verdict.ACCEPT, Verdict.PROMPT) or len(parts) < 2:
        return verdict
    if fold(given) in fold(source):
        return verdict  # the whole given is written in the line ("Twelfth Night, or What You Will")
    for part in parts:
        if _decide(line, part, **kw).verdict is Verdict.REJECT:
            return Judgement(Verdict.REJECT, None, f'reject: hedged answer, "{part.strip()}" matches nothing')
    return verdict


def judge(
    answer_line: str,
    given: str,
    *,
    token_index: int | None = None,
    token_count: int | None = None,
    question: str | None = None,
) -> Judgement:
    """Judge a player's answer against a quizbowl answer line.

    answer_line: HTML (``<b><u>…</u></b>`` or ``<u>…</u>`` = required part) or plain text, with ``[…]`` or
        ``(…)`` directive sections (accept / or / prompt on / anti-prompt / reject / do not accept or prompt
        on, accept either, prompt on partial, directed prompts, timing clauses) and ``<…>`` editor notes.
    given: the player's answer; empty (after folding) → reject.
    token_index: 0-based index of the last question token the player had seen at the buzz, or None.
    token_count: number of tokens in the question (power marks excluded), or None.
    question: the tossup text, used to locate X in "before/after X is read" clauses; optional.
    Returns a Judgement; never raises (an answer line that cannot be parsed gives needs_moderator).
    Grammar: QUIZBOWL.md "Answer lines and judging" (qbreader qb-answer-checker conventions).
    """
    if not given or not given.strip():
        return Judgement(Verdict.REJECT, None, "empty answer")
    try:
        line = parse_answer_line(answer_line or "")
        if not line.clauses[0].answers and len(line.clauses) == 1:
            return Judgement(Verdict.NEEDS_MODERATOR, None, "answer line has no parsable answer")
        kw: dict[str, Any] = {"token_index": token_index, "token_count": token_count, "question": question}
        return _hedged(line, answer_line, given, _decide(line, given, **kw), **kw)
    except Exception as exc:  # a judge must never take the match down; the moderator rules instead
        return Judgement(
            Verdict.NEEDS_MODERATOR, None, f"could not parse answer line ({type(exc).__name__}: {exc})"
        )
