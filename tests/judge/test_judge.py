"""Tests of the pure answer judge (scoring/judge/): conformance data plus one table per grammar feature."""

from __future__ import annotations

import csv
import os
import random
import subprocess
import sys
from pathlib import Path

import pytest

from scoring.judge import Judgement, judge, main

ROOT = Path(__file__).resolve().parents[2]
SHARED = Path(os.environ.get("TOSSUP_SHARED_DATA", ROOT / ".." / "shared" / "data"))
CHECKER = SHARED / "answer-checker"


def _verdict(line: str, given: str, **kw: object) -> str:
    return judge(line, given, **kw).verdict  # type: ignore[arg-type]


def test_conformance_241_cases() -> None:
    files = [CHECKER / f"{kind}-tests.csv" for kind in ("formatted", "unformatted")]
    if not all(f.exists() for f in files):
        pytest.skip(f"…/shared/data absent: no answer-checker CSVs under {CHECKER}")
    rows = [row for f in files for row in csv.DictReader(f.open(encoding="utf-8"))]
    assert len(rows) == 241
    misses = []
    for row in rows:
        v = judge(row["Answer Line"], row["Given"])
        want_prompt = row["Directed Prompt"] or None
        if v.verdict != row["Directive"] or (want_prompt and v.directed_prompt != want_prompt):
            misses.append(f"want {row['Directive']}/{want_prompt} got {v.verdict}/{v.directed_prompt}: "
                          f"{row['Given']!r} vs {row['Answer Line'][:80]!r} ({v.reason})")  # fmt: skip
    agreement = 1 - len(misses) / len(rows)
    print(f"\nconformance agreement {agreement:.4f} ({len(rows) - len(misses)}/{len(rows)})")
    print("\n".join(misses))
    assert agreement >= 0.95


@pytest.mark.parametrize(
    ("line", "given", "verdict"),
    [
        # required part: underline, bold only, Protobowl braces, plain text
        ("Jasper <b><u>Johns</u></b>", "johns", "accept"),
        ("Jasper <b><u>Johns</u></b>", "Jasper", "reject"),
        ("Republic of <b>Chad</b>", "chad", "accept"),
        ("Carl {Jung}", "jung", "accept"),
        ("Carl {Jung}", "carl", "reject"),
        ("Rio Grande", "rio grande", "accept"),
        # main alternatives, accept / or / also accept, anti-prompt
        ("<b><u>gypsum</u></b> or <b><u>selenite</u></b>", "selenite", "accept"),
        ("<b><u>Peking</u></b> [or <b><u>Beijing</u></b>; also accept <b><u>Dadu</u></b>]", "dadu", "accept"),
        ("<b><u>Apollo</u></b> program [anti-prompt on <u>Apollo 11</u>]", "apollo 11", "accept"),
        # prompt on, reject, do not accept or prompt on (reject checked first)
        ("<b><u>Oedipus Rex</u></b> [prompt on <u>Oedipus</u>]", "oedipus", "prompt"),
        ("<b><u>enthalpy</u></b> [do not accept or prompt on “entropy”]", "entropy", "reject"),
        ("<b><u>Manet</u></b> [reject “Monet”]", "Monet", "reject"),
        ("<b><u>Paris</u></b> [prompt on <u>France</u>; do not accept “France”]", "france", "reject"),
        # parentheses and leading brackets are optional words; trailing notes are ignored
        ("The (Holy) <b><u>Roman Empire</u></b>", "holy roman empire", "accept"),
        ("[Sir] Isaac <b><u>Newton</u></b>", "sir isaac newton", "accept"),
        ("<b><u>Hamlet</u></b> (The clue refers to Act III.)", "act 3", "reject"),
        ("<b><u>Hamlet</u></b> <Editor: check spelling>", "hamlet", "accept"),
        ("<b><u>Hamlet</u></b> <accept any answer naming the prince>", "the prince", "needs_moderator"),
        ("<b><u>Hamlet</u></b> [or Amleth; anything about the Danish prince]", "prince", "needs_moderator"),
        # accept either, prompt on partial
        ("<b><u>Marie</u></b> <b><u>Curie</u></b> [accept either underlined part]", "marie", "accept"),
        ("<b><u>Marie Curie</u></b>", "marie", "reject"),
        ("<b><u>Marie Curie</u></b> [prompt on partial answer]", "curie", "prompt"),
        # free text → moderator when nothing listed matches
        ("<b><u>eating</u></b> [accept equivalents like “consuming”]", "consuming", "accept"),
        ("<b><u>eating</u></b> [accept equivalents like “consuming”]", "dining", "needs_moderator"),
        ("<b><u>eating</u></b> [accept equivalents like “consuming”]", "", "reject"),
    ],
)
def test_grammar(line: str, given: str, verdict: str) -> None:
    assert _verdict(line, given) == verdict


@pytest.mark.parametrize(
    ("line", "given", "verdict"),
    [
        ("<b><u>Göttingen</u></b>", "gottingen", "accept"),  # diacritics
        ("<b><u>Tolstoy</u></b>", "Толстой", "accept"),  # transliteration (anyascii)
        ("<b><u>Richard III</u></b>", "richard the third", "accept"),  # Roman ↔ ordinal words
        ("<b><u>Richard III</u></b>", "Richard 3", "accept"),
        ("<b><u>Richard III</u></b>", "Richard 2", "reject"),
        ("<b><u>Catch-22</u></b>", "catch twenty-two", "accept"),  # digits ↔ words
        ("<b><u>1776</u></b>", "seventeen seventy six", "accept"),
        ("<b><u>1776</u></b>", "1777", "reject"),  # numbers get no typo tolerance
        (
            "<b><u>N</u></b>orth <b><u>A</u></b>tlantic <b><u>T</u></b>reaty <b><u>O</u></b>rganization",
            "nato",
            "accept",
        ),
        ("<b><u>North Atlantic Treaty Organization</u></b>", "nato", "accept"),  # acronym of the words
        ("<b><u>NATO</u></b>", "north atlantic treaty organization", "accept"),  # words of an acronym
        ("<b><u>Robert Frost</u></b>", "Bob Frost", "accept"),  # nickname data
        ("<b><u>Saint Louis</u></b>", "St. Louis", "accept"),  # abbreviation data
        ("<b><u>Mount Rainier</u></b>", "Mt. Rainier", "accept"),
        ("<b><u>hippopotamus</u></b>", "hipopotamus", "accept"),  # one typo in 12 letters
        ("<b><u>Hume</u></b>", "Home", "reject"),  # short words get no typo
        ("<b><u>Monet</u></b>", "Manet", "reject"),
        ("<b><u>geese</u></b>", "goose", "accept"),  # singular/plural (inflect)
        ("<b><u>Tiananmen Square</u></b>", "square tiananmen", "accept"),  # word order
        ("<b><u>football</u></b>", "foot ball", "accept"),  # compounds
        ("<b><u>Mussorgsky</u></b>", "Musorgskiy", "accept"),  # transliteration variants
        ("<b><u>Washington</u></b>", "George Washington", "accept"),  # one extra word is fine
        ("<b><u>Washington</u></b>", "Lincoln Washington Jefferson Adams", "reject"),  # padded answer
        ("<b><u>Great Expectations</u></b>", "the great expectations", "accept"),  # articles
        ("<b><u>Steppenwolf</u></b>", "steppen", "reject"),  # a fragment of a word is not the word
        ("<b><u>chimp</u></b>anzees", "chimp", "accept"),  # underlined prefix
        ("Hermann <b><u>Hesse</u></b>", "HESSE!", "accept"),  # case and punctuation
    ],
)
def test_matching(line: str, given: str, verdict: str) -> None:
    assert _verdict(line, given) == verdict


def test_strict_text_beats_article_folding() -> None:
    line = "<b><u>Lord of the Flies</u></b> [do not accept “The Lord of the Flies”]"
    assert _verdict(line, "Lord of the Flies") == "accept"
    assert _verdict(line, "The Lord of the Flies") == "reject"


def test_directed_prompts() -> None:
    line = (
        "<b><u>Boyle’s law</u></b> [prompt on <u>gas law</u> by asking “which one?”; "
        "prompt on <u>law</u> with “whose?”]"
    )
    assert judge(line, "gas law") == Judgement("prompt", "which one?", judge(line, "gas law").reason)
    assert judge(line, "law").directed_prompt == "whose?"
    assert judge(line, "boyle law").directed_prompt is None
    assert judge(line, "which one").verdict == "reject"  # the prompt text is not an answer


QUESTION = (
    "Zoroastrians keep this in an Atash Behram temple. For 10 points, name this (*) element, "
    "which Atar personifies."
)
TIMED = (
    "<b><u>fire</u></b> [accept <b><u>Atash</u></b> before it is read; "
    "accept <b><u>Atar</u></b> until “Atar” is read, but prompt after; "
    "prompt on <u>element</u> after “element” is read]"
)
N_TOKENS = len([w for w in QUESTION.split() if w != "(*)"])


@pytest.mark.parametrize(
    ("given", "token_index", "verdict"),
    [
        ("atash", 4, "accept"),  # Atash is token 5
        ("atash", 5, "reject"),
        ("atar", 14, "accept"),  # Atar is token 15
        ("atar", 15, "prompt"),  # "but prompt after"
        ("element", 13, "prompt"),  # "element," is token 13
        ("element", 12, "reject"),
        ("atash", None, "accept"),  # position unknown: the clause is taken as in force
    ],
)
def test_timing_with_question(given: str, token_index: int | None, verdict: str) -> None:
    kw = {"token_index": token_index, "token_count": N_TOKENS, "question": QUESTION}
    assert _verdict(TIMED, given, **kw) == verdict


def test_timing_without_question_text() -> None:
    assert _verdict(TIMED, "atash", token_index=4, token_count=N_TOKENS) == "needs_moderator"
    assert _verdict(TIMED, "atash", token_index=N_TOKENS - 1, token_count=N_TOKENS) == "reject"
    assert _verdict(TIMED, "element", token_index=N_TOKENS - 1, token_count=N_TOKENS) == "prompt"
    assert _verdict(TIMED, "fire", token_index=4, token_count=N_TOKENS) == "accept"


@pytest.mark.parametrize("line", ["", "[[[(((", "<b><u>", "]]]); or ; prompt on", "<<<>>>", "\x00\x01\x02"])
def test_malformed_lines_never_raise(line: str) -> None:
    assert _verdict(line, "anything") == "needs_moderator"


def test_random_garbage_never_raises() -> None:
    rng = random.Random(7)
    alphabet = "ab <>[]();,“”\"'/-*{}uorcept " + "é北"
    for _ in range(300):
        line = "".join(rng.choice(alphabet) for _ in range(rng.randint(0, 60)))
        given = "".join(rng.choice(alphabet) for _ in range(rng.randint(0, 15)))
        v = judge(line, given)
        assert v.verdict in ("accept", "prompt", "reject", "needs_moderator") and v.reason


@pytest.mark.parametrize("given", ["", "   ", "the", "?!"])
def test_empty_given_is_rejected(given: str) -> None:
    assert _verdict("<b><u>Mars</u></b>", given) == "reject"


def test_verdict_is_frozen() -> None:
    v = judge("<b><u>Mars</u></b>", "mars")
    with pytest.raises(AttributeError):
        v.verdict = "reject"  # type: ignore[misc]


def test_cli_main(capsys: pytest.CaptureFixture[str]) -> None:
    main(["<b><u>Oedipus Rex</u></b> [prompt on <u>Oedipus</u> with “which play?”]", "oedipus"])
    out = capsys.readouterr().out
    assert "verdict: prompt" in out and "directed prompt: which play?" in out and "reason:" in out


def test_cli_module_entry_point() -> None:
    args = [
        sys.executable,
        "-m",
        "scoring.judge",
        "Jasper <b><u>Johns</u></b>",
        "johns",
        "--token-index",
        "3",
    ]
    done = subprocess.run(args, cwd=ROOT, capture_output=True, text=True, check=True, timeout=60)
    assert done.stdout.splitlines()[0] == "verdict: accept"
