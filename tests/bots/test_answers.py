"""main_answer / answer_key on answer lines shaped like real packets and the answer-checker suite."""

from __future__ import annotations

import csv

import pytest

from buzzer.bots.answers import answer_key, main_answer


@pytest.mark.parametrize(
    ("line", "expected"),
    [
        ("<b><u>Marie Curie</u></b> [accept Maria Skłodowska-Curie; prompt on Curie]", "Marie Curie"),
        ('Louis XIII [or Louis the Just or Louis le Juste; prompt on "Louis"]', "Louis XIII"),
        ("Gunter Wilhelm Grass", "Gunter Wilhelm Grass"),
        (
            "Johann Sebastian Bach &lt;The above question is for the category Arts Music&gt;",
            "Johann Sebastian Bach",
        ),
        (
            "O. J. Simpson [accept either underlined part; full name: Orenthal James Simpson] &lt;IKD&gt;",
            "O. J. Simpson",
        ),
        ("Arabic [or al-ʿarabiyyah] (The poet in the first clue is Nazim al-Malaika.)", "Arabic"),
        (
            "<b><u>Weimar Republic</u></b>; prompt on “<b>Deutsches Reich</b>” or “<b>Germany</b>”",
            "Weimar Republic",
        ),
        ("T cells [or T lymphocytes (CD4+ cells)] <Jonathen/Ed. JS>", "T cells"),
        ("War of 1812 [or Second War of Independence", "War of 1812"),
        ("Glasgow &lt;CJ&gt; Bonuses:", "Glasgow"),
        ("Moses or Moshe", "Moses"),
        ('"fugue" ', "fugue"),
        ("Tibetans and Mongolians", "Tibetans and Mongolians"),
        (
            "Six Characters in Search of an Author [or Sei personaggi in cerca d'autore]",
            "Six Characters in Search of an Author",
        ),
        ("<b><u>grandmother</u></b>s [prompt on <u>grandparent</u>s]", "grandmothers"),
        ("Romeo and Juliet (accept either)", "Romeo and Juliet"),
        ("Hume, accept David Hume", "Hume"),
        ("", ""),
    ],
)
def test_main_answer(line: str, expected: str) -> None:
    assert main_answer(line) == expected


def test_answer_key_folds_case_accents_and_punctuation() -> None:
    assert answer_key("Günter  Grass.") == answer_key("gunter grass") == "gunter grass"
    assert answer_key("Gunter Grass") != answer_key("Gunter Wilhelm Grass")
    assert answer_key("!!!") == ""


def test_main_answer_on_the_answer_checker_suite(shared_data) -> None:
    """Every formatted answer line reduces to a non-empty main answer free of markup and directives."""
    path = shared_data / "answer-checker" / "formatted-tests.csv"
    with path.open(newline="", encoding="utf-8") as handle:
        lines = {row["Answer Line"] for row in csv.DictReader(handle)}
    assert len(lines) > 50
    for line in lines:
        main = main_answer(line)
        assert main, line
        assert not any(mark in main for mark in "<>[]"), (line, main)
        assert "prompt on" not in main.lower(), (line, main)


def test_answer_classes_group_spellings_and_keep_the_most_common():
    from buzzer.bots.answers import answer_classes

    records = [
        ("q1", "<b><u>Marie Curie</u></b> [accept Skłodowska]"),
        ("q2", "marie curie"),
        ("q3", "Marie Curie"),
        ("", "Nobody"),  # no question: dropped
        ("q4", "[missing]"),  # no main answer: dropped
        ("q5", "Tikal"),
    ]
    questions, answers, classes = answer_classes(records)
    assert questions == ["q1", "q2", "q3", "q5"]
    assert answers == ["Marie Curie", "Tikal"]
    assert classes.tolist() == [0, 0, 0, 1]
    assert answer_classes(records, keep_last=1)[1] == ["Tikal"]
    with pytest.raises(ValueError, match="no usable"):
        answer_classes([("", "x")])
