"""The judge on real disputes (issue 33, item 10): one table per protest class, each row a rule the
judge follows, and the protest set's tool (``scoring.judge.protests``): deterministic, split before
tuning, held-out misses never listed."""

from __future__ import annotations

import pytest

from scoring.judge import judge
from scoring.judge.protests import CLASSES, HELDOUT_SHARE, Case, _Line, evaluate, generate, hand_cases, main


def _v(line: str, given: str) -> str:
    return str(judge(line, given).verdict)


@pytest.mark.parametrize(
    ("line", "given", "verdict"),
    [
        ("Søren <b><u>Kierkegaard</u></b>", "Kierkegard", "accept"),  # double letter undoubled
        ("Ernest <b><u>Hemingway</u></b>", "Hemmingway", "accept"),  # letter doubled
        ("Friedrich <b><u>Nietzsche</u></b>", "Nietzche", "accept"),  # letter dropped
        ("<b><u>Sweden</u></b>", "Sweeden", "accept"),  # a 6-letter word, one letter added
        ("Battle of <b><u>Thermopylae</u></b>", "Thermopylea", "accept"),  # two letters swapped
        ("Ludwig van <b><u>Beethoven</u></b>", "Beethovan", "accept"),  # a vowel for a vowel, 7+ letters
        ("<b><u>Copenhagen</u></b>", "Copenhaagn", "accept"),  # two slips in a 10-letter word
        ("<b><u>Prussia</u></b>", "Russia", "reject"),  # the first letter is never a slip
        ("<b><u>Delhi</u></b>", "Delphi", "reject"),  # a letter added to a short name: another city
        ("Claude <b><u>Monet</u></b>", "Manet", "reject"),  # a short name: another painter
        ("<b><u>Austria</u></b>", "Australia", "reject"),
    ],
)
def test_misspellings(line: str, given: str, verdict: str) -> None:
    assert _v(line, given) == verdict


@pytest.mark.parametrize(
    ("line", "given", "verdict"),
    [
        ("<b><u>Henry VIII</u></b>", "Henry", "prompt"),  # a monarch without his number
        ("Louis XIV [or Louis the Great]", "Louis", "prompt"),
        ("<b><u>Henry VIII</u></b>", "Henry VII", "reject"),  # another monarch
        ("Charles II [prompt on Charles]", "Charles III", "reject"),  # a number the line lacks
        ("<i><b><u>One Hundred Years of Solitude</u></b></i>", "Hundred Years", "prompt"),  # part of a title
        ("Six Characters in Search of an Author", "Six Characters", "prompt"),
        ("<i>The <b><u>Brothers Karamazov</u></b></i>", "Karamazov", "reject"),  # a name, not a title: as the
        ("<b><u>light pollution</u></b>", "pollution", "reject"),  # conformance data rule partial names
        ("“The Lady, or the Tiger?”", "the lady", "reject"),  # "or" joins alternative titles
        ("Napoleon I [do not accept or prompt on “Napoleon III”]", "Napoleon III", "reject"),
    ],
)
def test_incomplete_names_and_titles(line: str, given: str, verdict: str) -> None:
    assert _v(line, given) == verdict


@pytest.mark.parametrize(
    ("line", "given", "verdict"),
    [
        ("Johann Sebastian <b><u>Bach</u></b>", "J. S. Bach", "accept"),
        ("Johann Sebastian <b><u>Bach</u></b>", "JS Bach", "accept"),
        ("Thomas Stearns <b><u>Eliot</u></b>", "T.S. Eliot", "accept"),
        ("<b><u>John Quincy Adams</u></b>", "J. Q. Adams", "accept"),  # initials of required words
        ("<b><u>Escherichia coli</u></b>", "E. coli", "accept"),
        ("<b><u>Holy Roman Empire</u></b>", "HRE", "accept"),  # acronym of the required words
        ("Johann Sebastian <b><u>Bach</u></b>", "C. P. E. Bach", "reject"),  # another Bach
        ("Stephen Vincent Benet", "B. Benet", "reject"),  # the surname's own initial is no first name
        ("David Hume", "K. Hume", "reject"),
        ("<b><u>USA</u></b>", "u", "reject"),  # a lone letter is no answer
    ],
)
def test_initials_and_abbreviations(line: str, given: str, verdict: str) -> None:
    assert _v(line, given) == verdict


@pytest.mark.parametrize(
    ("line", "given", "verdict"),
    [
        ("<b><u>Castor</u></b> and <b><u>Pollux</u></b> [accept either]", "Pollux", "accept"),
        ("Galileo Galilei [accept either]", "Galilei", "accept"),
        ("Sancho Panza (accept either)", "Sancho", "accept"),
        ("Romulus and Remus [accept either or both]", "Romulus", "accept"),
        (
            "Fitzwilliam Darcy (accept either or both underlined portions; or Mr. Darcy)",
            "Fitzwilliam",
            "accept",
        ),
        ("<b><u>Castor</u></b> and <b><u>Pollux</u></b> [accept either]", "Helen", "reject"),
        ("Dvorak [accept either Dvorak or Antonin]", "Antonin", "accept"),  # "either" naming answers
        ("<b><u>Romulus</u></b> [do not accept Remus]", "Remus", "reject"),
    ],
)
def test_accept_either(line: str, given: str, verdict: str) -> None:
    assert _v(line, given) == verdict


@pytest.mark.parametrize(
    ("line", "given", "verdict"),
    [
        ("Wolfgang Amadeus <b><u>Mozart</u></b>", "Mozart or Haydn", "reject"),  # a hedge
        ("<b><u>Finland</u></b> [or Suomi]", "Greenland, Finland", "reject"),
        ("Johann Sebastian <b><u>Bach</u></b>", "Bach Handel Telemann Vivaldi", "reject"),
        ("Henry James", "In rejects James Henry of", "reject"),  # the answer among salad
        ("<b><u>stars</u></b>", "stars For symbol of", "reject"),
        ("<b><u>mitochondria</u></b>", "the thing with the cells and energy", "reject"),
        ("<b><u>Castor</u></b> and <b><u>Pollux</u></b> [accept either]", "Castor or Pollux", "accept"),
        ("<i>Twelfth Night, or What You Will</i>", "Twelfth Night", "accept"),
        ("the Battle of <b><u>Hastings</u></b>", "the battle of hastings", "accept"),
    ],
)
def test_word_salad(line: str, given: str, verdict: str) -> None:
    assert _v(line, given) == verdict


def test_generated_cases_are_deterministic_and_labelled_by_their_rule() -> None:
    lines = [
        _Line(
            "Louis XIV [or Louis the Great]", "Louis XIV", "For 10 points, name this French king.", "History"
        ),
        _Line(
            "Six Characters in Search of an Author",
            "Six Characters in Search of an Author",
            "For 10 points, name this play by Luigi Pirandello.",
            "Literature",
        ),
        _Line(
            "Johann Sebastian Bach",
            "Johann Sebastian Bach",
            "This man wrote many cantatas and fugues. For 10 points, name this composer of the Mass in B minor.",
            "Fine Arts",
        ),
        _Line(
            "Robinson Crusoe [accept either underlined portion]", "Robinson Crusoe", "Q " * 30, "Literature"
        ),
    ]
    first, again = list(generate(lines, seed=5)), list(generate(lines, seed=5))
    assert first == again and first
    kinds = {(c.cls, c.label, c.rule) for c in first}
    assert ("incomplete", "prompt", "no regnal number") in kinds
    assert ("incomplete", "reject", "other number") in kinds
    assert ("incomplete", "prompt", "title cut short") in kinds
    assert ("initials", "accept", "initials of first names") in kinds
    assert ("either", "accept", "one part") in kinds
    by_rule = {c.rule: c for c in first}
    assert by_rule["no regnal number"].given == "Louis"
    assert by_rule["title cut short"].given == "Six Characters"
    assert by_rule["initials of first names"].given.endswith(" Bach")


def test_split_is_fixed_by_the_case_and_held_out_is_never_listed(capsys: pytest.CaptureFixture[str]) -> None:
    hand = hand_cases()
    assert {c.cls for c in hand} == set(CLASSES)
    splits = [c.split for c in hand]
    assert splits == [c.split for c in hand_cases()]  # a hash of the case, not of the run
    share = splits.count("heldout") / len(splits)
    assert abs(share - HELDOUT_SHARE) < 0.2
    moved = Case("either", "accept", "Pollux", "Castor and Pollux [accept either]", "hand", "")
    assert (
        moved.split
        == Case("either", "accept", "Pollux", "Castor and Pollux [accept either]", "generated", "x").split
    )
    table = evaluate(hand)
    assert sum(n for _, n in table.values()) == len(hand)
    with pytest.raises(SystemExit):
        main(["--split", "heldout", "--misses"])
    assert "held-out cases are never looked at" in capsys.readouterr().err
