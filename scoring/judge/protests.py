"""The judge on real disputes: a protest set per class, split dev / held-out, and the judge's accuracy on it.

``python -m scoring.judge.protests [--split dev|heldout|all] [--misses]`` prints, per class, how often the
judge's verdict is the label. There is no corpus of real protests; the set is built from the closest real
data, deterministically (``SEED``):

- **generated** cases take real answer lines from the qbreader packets (``../shared/data/packets``,
  ``TOSSUP_SHARED_DATA`` overrides) and make the given answer by a rule whose label is the quizbowl
  convention for that class (ACF/NAQT practice, QUIZBOWL.md "Answer lines and judging"):

  ``misspelling``   accept: the main answer with its longest word (6+ letters) one edit off (a letter
                    changed, dropped, doubled or two swapped; never the first letter), two edits for 10+
                    letters. reject: another main answer of the packets one or two edits away that is
                    not a word form of it and that none of its answer lines lists ("Prussia" for "Russia").
  ``incomplete``    prompt: a monarch's name without its regnal number ("Louis" for "Louis XIII"); the
                    opening words of a 4+ word literary, art or music title, cut before its first inner
                    function word ("Six Characters" for "Six Characters in Search of an Author").
                    reject: the name with the neighbouring regnal number ("Louis XII").
  ``initials``      accept: a person's first names as initials ("J. S. Bach", "J.S. Bach", "JS Bach"), the
                    person told by the tossup's "name this author/composer/…"; an acronym of the main
                    answer's words that another line of the same answer lists ("USA").
                    reject: the surname after an initial that is none of the first names'.
  ``either``        accept: one word of a two-word main answer whose line says "accept either …".
                    reject: a word of another such line's answer.
  ``word_salad``    reject: the answer hedged with other answers of its category ("Bach, Handel or
                    Telemann"); 4–6 consecutive words of the tossup that hold no word of the answer line;
                    the answer's words shuffled among 3+ words of the tossup.

- **hand-labelled** cases (``data/protests_hand.csv``, written before any rule was tuned): famous
  near-miss names that must be rejected (Monet/Manet, Austria/Australia), incomplete names and titles
  with formatted required parts, initials, "accept either" lines and word salads.

Split: each case goes to ``heldout`` when a hash of (``SEED``, class, line, given) falls in the held-out
share (``HELDOUT_SHARE``), else to ``dev``, fixed before tuning. Rules were tuned on ``dev`` only;
``--misses`` lists the misses of ``dev`` and refuses to list held-out cases, so tuning cannot look at them.
"""

from __future__ import annotations

import argparse
import csv
import gzip
import hashlib
import json
import os
import random
import re
import sys
from collections import Counter, defaultdict
from collections.abc import Iterator
from dataclasses import dataclass
from functools import lru_cache
from pathlib import Path

from rapidfuzz.distance import OSA

from scoring.judge.decision import judge
from scoring.judge.grammar import main_answer
from scoring.judge.text import fold

SEED = 33
HELDOUT_SHARE = 0.4
PER_KIND = 120  # generated cases per rule (fewer when the data hold fewer)
CLASSES = ("misspelling", "incomplete", "initials", "either", "word_salad")
DATA = Path(os.environ.get("TOSSUP_SHARED_DATA", Path(__file__).resolve().parents[3] / "shared" / "data"))
PACKETS = DATA / "packets" / "qbreader_packets_2012_2022.jsonl.gz"
HAND = Path(__file__).resolve().parent / "data" / "protests_hand.csv"

_PERSON = re.compile(
    r"(?:name|identify|give)\s+this\s+(?:\w+\s+){0,3}?(author|writer|novelist|poet|playwright|dramatist|composer|"
    r"painter|artist|sculptor|architect|philosopher|thinker|scientist|physicist|chemist|biologist|"
    r"mathematician|economist|psychologist|sociologist|president|man|woman|explorer|general)\b",
    re.I,
)
_EITHER = re.compile(r"accept\s+(?:either|both)\b", re.I)
_INNER = {"of", "in", "and", "the", "to", "for", "on", "with", "from", "a", "an", "at", "by"}
_TITLE_CATEGORIES = {"Literature", "Fine Arts", "Music"}
_ROMAN = [
    "I",
    "II",
    "III",
    "IV",
    "V",
    "VI",
    "VII",
    "VIII",
    "IX",
    "X",
    "XI",
    "XII",
    "XIII",
    "XIV",
    "XV",
    "XVI",
]


@dataclass(frozen=True)
class Case:
    """One dispute: ``label`` the right verdict (accept | prompt | reject), ``source`` generated|hand,
    ``rule`` which generation rule (or the hand file's note)."""

    cls: str
    label: str
    given: str
    answer_line: str
    source: str
    rule: str

    @property
    def split(self) -> str:
        key = f"{SEED}|{self.cls}|{self.answer_line}|{self.given}".encode()
        share = int.from_bytes(hashlib.sha256(key).digest()[:4], "big") / 2**32
        return "heldout" if share < HELDOUT_SHARE else "dev"


@dataclass(frozen=True)
class _Line:
    answer_line: str
    main: str
    question: str
    category: str


def _clean(line: str) -> str:
    """An answer line without its editor notes (``<…>``, ``&lt;…&gt;``)."""
    line = re.sub(r"&lt;.*?&gt;|<(?![/]?[bui]>)[^<>]*>", "", line)
    return " ".join(line.split())


def _lines(path: Path) -> list[_Line]:
    out = []
    with gzip.open(path, "rt", encoding="utf-8") as fh:
        for raw in fh:
            row = json.loads(raw)
            if row.get("type") != "tossup" or not row.get("answer") or not row.get("question"):
                continue
            line = _clean(row["answer"])
            main = main_answer(line)
            if main and len(main) < 60:
                out.append(_Line(line, main, row["question"], row.get("category") or ""))
    return out


def _edit(word: str, rng: random.Random) -> str:
    """``word`` with one typo, never at its first letter."""
    for _ in range(20):
        kind = rng.choice(("change", "drop", "double", "swap"))
        i = rng.randrange(1, len(word) - (1 if kind == "swap" else 0))
        if kind == "change":
            new = (
                word[:i]
                + rng.choice([c for c in "abcdefghijklmnopqrstuvwxyz" if c != word[i]])
                + word[i + 1 :]
            )
        elif kind == "drop":
            new = word[:i] + word[i + 1 :]
        elif kind == "double":
            new = word[: i + 1] + word[i:]
        else:
            new = word[:i] + word[i + 1] + word[i] + word[i + 2 :]
        if new.lower() != word.lower():
            return new
    return word


def _words(text: str) -> list[str]:
    return re.findall(r"[A-Za-z][A-Za-z'-]*", text)


def generate(lines: list[_Line], seed: int = SEED) -> Iterator[Case]:
    """The generated cases of every class (see the module docstring), in a fixed order."""
    rng = random.Random(seed)
    order = list(range(len(lines)))
    rng.shuffle(order)
    pool = [lines[i] for i in order]
    counts: Counter[str] = Counter()

    def take(rule: str) -> bool:
        counts[rule] += 1
        return counts[rule] <= PER_KIND

    by_category: dict[str, list[str]] = defaultdict(list)
    for ln in pool:
        if re.fullmatch(r"[A-Z][A-Za-z]+", ln.main):
            by_category[ln.category].append(ln.main)
    acronyms: dict[str, str] = {}
    for ln in pool:
        words = _words(ln.main)
        if len(words) >= 2:
            initials = "".join(w[0] for w in words).upper()
            content = "".join(w[0] for w in words if w.lower() not in _INNER).upper()
            for token in re.findall(r"\b[A-Z]{2,6}\b", ln.answer_line):
                if token in (initials, content) and ln.main not in acronyms:
                    acronyms[ln.main] = token
    near_misses = _near_misses(pool)
    either_words = [w for ln in pool if _EITHER.search(ln.answer_line) for w in _words(ln.main) if len(w) > 3]

    for ln in pool:
        words = _words(ln.main)
        plain_words = ln.main.split()
        # misspelling
        alpha = [w for w in plain_words if w.isalpha()]
        if alpha and len(plain_words) <= 4:
            longest = max(alpha, key=len)
            if len(longest) >= 6 and take("misspelling:typo"):
                typo = _edit(longest, rng)
                if len(longest) >= 10:
                    typo = _edit(typo, rng)
                given = ln.main.replace(longest, typo, 1)
                yield Case("misspelling", "accept", given, ln.answer_line, "generated", "typo")
        if (miss := near_misses.get(ln.main)) and take("misspelling:near miss"):
            yield Case(
                "misspelling",
                "reject",
                miss,
                ln.answer_line,
                "generated",
                "another answer a letter or two off",
            )
        # incomplete: regnal numbers
        if m := re.fullmatch(r"([A-Z][a-z]+) ([IVX]+)", ln.main):
            name, numeral = m.groups()
            if numeral in _ROMAN and take("incomplete:regnal"):
                yield Case("incomplete", "prompt", name, ln.answer_line, "generated", "no regnal number")
                k = _ROMAN.index(numeral)
                other = (
                    _ROMAN[k + 1] if (k + 1 < len(_ROMAN) and rng.random() < 0.5) or k == 0 else _ROMAN[k - 1]
                )
                yield Case(
                    "incomplete", "reject", f"{name} {other}", ln.answer_line, "generated", "other number"
                )
        # incomplete: titles
        if (
            ln.category in _TITLE_CATEGORIES
            and len(plain_words) >= 4
            and not _PERSON.search(ln.question[-200:])
        ):
            cut = next((i for i, w in enumerate(plain_words[1:], 1) if w.lower() in _INNER), None)
            rest = [w for w in plain_words[cut or 0 :] if w.lower() not in _INNER]
            if cut and len(rest) >= 2 and take("incomplete:title"):
                given = " ".join(plain_words[:cut])
                yield Case("incomplete", "prompt", given, ln.answer_line, "generated", "title cut short")
        # initials of a person's first names
        if (
            2 <= len(plain_words) <= 4
            and all(re.fullmatch(r"[A-Z][a-z]{2,}", w) for w in plain_words)
            and _PERSON.search(ln.question[-200:])
            and take("initials:first names")
        ):
            firsts, surname = plain_words[:-1], plain_words[-1]
            style = rng.choice(("spaced", "dotted", "run"))
            letters = [w[0] for w in firsts]
            joined = {
                "spaced": " ".join(f"{c}." for c in letters),
                "dotted": "".join(f"{c}." for c in letters),
            }
            given = f"{joined.get(style, ''.join(letters))} {surname}"
            yield Case("initials", "accept", given, ln.answer_line, "generated", "initials of first names")
            wrong = rng.choice([c for c in "ABCDEFGHJKLMNPRSTW" if c not in letters])
            yield Case(
                "initials", "reject", f"{wrong}. {surname}", ln.answer_line, "generated", "wrong initial"
            )
        # acronym another line of the same answer lists
        if (acr := acronyms.get(ln.main)) and acr not in ln.answer_line and take("initials:acronym"):
            yield Case("initials", "accept", acr, ln.answer_line, "generated", "acronym listed elsewhere")
        # accept either
        two_words = len(plain_words) == 2 and all(len(w) > 3 for w in words)
        if _EITHER.search(ln.answer_line) and two_words and take("either:part"):
            part = rng.choice(plain_words)
            yield Case("either", "accept", part, ln.answer_line, "generated", "one part")
            for other in _others(either_words, ln.answer_line, rng, 1):
                yield Case("either", "reject", other, ln.answer_line, "generated", "another line's part")
        # word salad
        same = by_category.get(ln.category, [])
        if (
            re.fullmatch(r"[A-Z][A-Za-z]+", ln.main)
            and len(same) >= 20
            and take("word_salad:hedge")
            and len(picks := _others(same, ln.answer_line, rng, 2)) == 2
        ):
            a, b = picks
            given = rng.choice((f"{ln.main}, {a} or {b}", f"{a} or {ln.main}", f"{ln.main} {a} {b}"))
            yield Case(
                "word_salad", "reject", given, ln.answer_line, "generated", "hedged with other answers"
            )
        q_words = ln.question.replace("(*)", " ").split()
        line_words = {fold(w) for w in _words(ln.answer_line)}
        if len(q_words) > 20 and take("word_salad:question words"):
            n = rng.randint(4, 6)
            for _ in range(10):
                start = rng.randrange(0, len(q_words) - n)
                chunk = [w.strip(".,;:\"'()") for w in q_words[start : start + n]]
                if chunk and not any(fold(w) in line_words for w in chunk):
                    yield Case(
                        "word_salad", "reject", " ".join(chunk), ln.answer_line, "generated", "question words"
                    )
                    break
        if len(q_words) > 20 and len(plain_words) <= 2 and take("word_salad:shuffled"):
            extra = [w.strip(".,;:\"'()") for w in rng.sample(q_words, 4)]
            extra = [
                w for w in extra if w and fold(w) not in line_words and fold(w) not in ("the", "a", "an")
            ]
            if len(extra) >= 3:
                mix = plain_words + extra
                rng.shuffle(mix)
                yield Case(
                    "word_salad", "reject", " ".join(mix), ln.answer_line, "generated", "answer among salad"
                )


def _near_misses(pool: list[_Line]) -> dict[str, str]:
    """Main answer → another main answer (both one capitalised word of 5+ letters, each the main answer
    of 2+ lines) one or two edits away that is a different answer: not a word form of it (one a prefix
    of the other) and named in none of its lines (so not a listed variant spelling)."""
    mains: Counter[str] = Counter(ln.main for ln in pool if re.fullmatch(r"[A-Z][a-z]{4,}", ln.main))
    words = sorted(w for w, n in mains.items() if n >= 2)
    text: dict[str, str] = defaultdict(str)
    for ln in pool:
        if ln.main in mains:
            text[ln.main] += " " + fold(ln.answer_line)
    out: dict[str, str] = {}
    for i, a in enumerate(words):
        for b in words[i + 1 :]:
            al, bl = a.lower(), b.lower()
            if abs(len(a) - len(b)) > 2 or al.startswith(bl[:-1]) or bl.startswith(al[:-1]):
                continue
            if OSA.distance(al, bl) <= 2 and fold(b) not in text[a] and fold(a) not in text[b]:
                out.setdefault(a, b)
                out.setdefault(b, a)
    return out


def _others(pool: list[str], answer_line: str, rng: random.Random, n: int) -> list[str]:
    """``n`` distinct members of ``pool`` whose words are not in ``answer_line`` (fewer when 100 draws
    find fewer)."""
    line = fold(answer_line)
    out: list[str] = []
    for _ in range(100):
        if len(out) == n:
            break
        pick = rng.choice(pool)
        if pick not in out and fold(pick) not in line:
            out.append(pick)
    return out


def hand_cases(path: Path = HAND) -> list[Case]:
    """The hand-labelled cases of ``data/protests_hand.csv`` (class, verdict, given, answer_line, note)."""
    with path.open(encoding="utf-8", newline="") as fh:
        return [
            Case(r["class"], r["verdict"], r["given"], r["answer_line"], "hand", r["note"])
            for r in csv.DictReader(fh)
        ]


@lru_cache(maxsize=1)
def cases(packets: Path = PACKETS) -> tuple[Case, ...]:
    """Every case: generated from ``packets`` (skipped when absent) and hand-labelled, deduplicated."""
    out = hand_cases()
    if packets.is_file():
        out += list(generate(_lines(packets)))
    seen: set[tuple[str, str, str]] = set()
    unique = []
    for c in out:
        if (c.cls, c.given, c.answer_line) not in seen:
            seen.add((c.cls, c.given, c.answer_line))
            unique.append(c)
    return tuple(unique)


def correct(case: Case) -> bool:
    """Whether the judge gives the case's label."""
    return str(judge(case.answer_line, case.given).verdict) == case.label


def evaluate(selected: list[Case]) -> dict[str, tuple[int, int]]:
    """Per class: (right, total)."""
    table: dict[str, list[int]] = {c: [0, 0] for c in CLASSES}
    for case in selected:
        table[case.cls][0] += correct(case)
        table[case.cls][1] += 1
    return {c: (r, n) for c, (r, n) in table.items()}


def main(argv: list[str] | None = None) -> int:
    """Print the per-class accuracy table of the chosen split; ``--misses`` lists dev misses."""
    parser = argparse.ArgumentParser(
        prog="python -m scoring.judge.protests", description=__doc__.split("\n")[0]
    )
    parser.add_argument("--split", choices=("dev", "heldout", "all"), default="heldout")
    parser.add_argument("--misses", action="store_true", help="list the misses (dev only)")
    args = parser.parse_args(argv)
    if args.misses and args.split != "dev":
        parser.error("--misses lists dev cases only: held-out cases are never looked at while tuning")
    every = cases()
    if not PACKETS.is_file():
        print(f"{PACKETS} absent: hand-labelled cases only", file=sys.stderr)
    selected = [c for c in every if args.split in ("all", c.split)]
    table = evaluate(selected)
    print(f"split {args.split}: {len(selected)} cases (seed {SEED})")
    print(f"{'class':<12} {'cases':>6} {'right':>6} {'accuracy':>9}")
    for cls, (right, n) in table.items():
        print(f"{cls:<12} {n:>6} {right:>6} {right / n if n else 0:>9.1%}")
    total_right, total = sum(r for r, _ in table.values()), sum(n for _, n in table.values())
    print(f"{'all':<12} {total:>6} {total_right:>6} {total_right / total if total else 0:>9.1%}")
    if args.misses:
        for c in selected:
            if not correct(c):
                v = judge(c.answer_line, c.given)
                print(
                    f"[{c.cls}/{c.rule}] want {c.label} got {v.verdict}: {c.given!r} vs {c.answer_line[:90]!r} ({v.reason})"
                )
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
