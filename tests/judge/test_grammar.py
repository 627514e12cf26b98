"""The answer-line parser (scoring/judge/grammar.py) that the judge and the bots share."""

from __future__ import annotations

import pytest

from buzzer.bots import answers
from scoring.judge import judge, main_answer, parse_answer_line


def _clauses(line: str) -> list[tuple[str, list[str]]]:
    return [(c.kind, [a.text for a in c.answers]) for c in parse_answer_line(line).clauses]


def test_main_clause_then_one_clause_per_directive() -> None:
    line = (
        "<b><u>Oedipus Rex</u></b> [or <u>Oedipus Tyrannus</u>; prompt on <u>Oedipus</u> with “which play?”]"
    )
    parsed = parse_answer_line(line)
    assert parsed.clauses[0].main
    assert _clauses(line) == [
        ("accept", ["Oedipus Rex"]),
        ("accept", ["Oedipus Tyrannus"]),
        ("prompt", ["Oedipus"]),
    ]
    assert parsed.clauses[2].directed == "which play?"
    assert [t.surface for t in parsed.clauses[0].answers[0].tokens if t.required] == ["oedipus", "rex"]


def test_reject_and_timing_clauses() -> None:
    parsed = parse_answer_line("<b><u>water</u></b> [accept H-2-O until it’s read; do not accept “ice”]")
    accept, reject = parsed.clauses[1], parsed.clauses[2]
    assert (accept.kind, accept.timing and accept.timing.kind) == ("accept", "before")
    assert (reject.kind, [a.text for a in reject.answers]) == ("reject", ["ice"])


def test_optional_words_are_kept_in_text_and_dropped_from_the_display_form() -> None:
    answer = parse_answer_line("Frédéric (François) Chopin [or Fryderyk Chopin]").clauses[0].answers[0]
    assert (answer.text, answer.bare) == ("Frédéric François Chopin", "Frédéric Chopin")
    assert [t.optional for t in answer.tokens] == [False, True, False]


@pytest.mark.parametrize(
    ("line", "main", "given", "verdict"),
    [
        # the next section's header glued to the last answer line is debris, not answer words
        ("Fatimah Bonuses:", "Fatimah", "Fatimah", "accept"),
        ("glucose [or C6H12O6; prompt on sugars] Bonuses", "glucose", "glucose", "accept"),
        ("signing bonus", "signing bonus", "signing", "reject"),
        # an unbracketed directive ends the main answer
        ("Hume, accept David Hume", "Hume", "David Hume", "accept"),
        ("Marie Curie prompt on Curie", "Marie Curie", "Curie", "prompt"),
        # "OR" in capitals separates main alternatives like "or"
        ("lauds OR vespers", "lauds", "vespers", "accept"),
        # "or" inside an optional group does not split the main answer
        ("(J.J. or George or William) Thomson", "Thomson", "Thomson", "accept"),
        ("Dauphin (“DOFF-in” or “doh-FAN”) of France", "Dauphin of France", "Dauphin of France", "accept"),
        # an editor note whose ">" was lost runs to the end of the line
        ("Merlin [or Myrddin Wyllt] &lt;GH", "Merlin", "Merlin", "accept"),
        # a quoted title keeps its "or"
        ("“The Lady, or the Tiger?”", "The Lady, or the Tiger?", "the lady", "reject"),
    ],
)
def test_grammar_shared_by_judge_and_bots(line: str, main: str, given: str, verdict: str) -> None:
    assert main_answer(line) == main
    assert judge(line, given).verdict == verdict


def test_bots_use_the_judges_parser() -> None:
    assert answers.main_answer is main_answer
    line = "<b><u>Weimar Republic</u></b>; prompt on “<b>Deutsches Reich</b>”"
    assert (
        answers.main_answer(line) == parse_answer_line(line).clauses[0].answers[0].bare == "Weimar Republic"
    )


@pytest.mark.parametrize("line", ["", "   ", "[]", "<>", "(((", "the"])
def test_degenerate_lines_give_a_string_and_no_answer(line: str) -> None:
    assert isinstance(main_answer(line), str)
    assert not parse_answer_line(line).clauses[0].answers
