"""The distractor generator (``irt.probe``): deterministic for a seed, never the answer by the judge,
from a donor of the same category, inserted where the field puts it."""

from __future__ import annotations

import pytest

from irt import probe
from scoring.judge import judge
from tests.tools.probe_toy import ANSWERS, CATEGORY, clue, known_clues, toy_tossups

TUPLES = [(str(t["number"]), str(t["question"]), str(t["answer"]), str(t["category"])) for t in toy_tossups()]


def pool() -> probe.DistractorPool:
    return probe.DistractorPool.build(TUPLES)


def test_sentences_split_at_ends_not_at_initials_or_abbreviations() -> None:
    text = 'J. R. R. Tolkien met Mr. Lewis at St. Giles. "Who?" he asked. For 10 points, name this author.'
    assert probe.sentences(text) == [
        "J. R. R. Tolkien met Mr. Lewis at St. Giles.",
        '"Who?" he asked.',
        "For 10 points, name this author.",
    ]
    assert probe.sentences("  ") == []


def test_giveaway_and_answer_type() -> None:
    parts = ["A clue.", "For 10 points, name this Russian novel.", "Note after it."]
    assert probe.giveaway_index(parts) == 1
    assert probe.giveaway_index(["One.", "Two."]) == 1  # no "For 10 points": the last sentence
    assert probe.answer_type("Clue. For 10 points, name this Russian novel.") == "novel"
    assert probe.answer_type("Clue. For 10 points, what vehicles that sail up the Mississippi?") == "vehicles"
    assert probe.answer_type("Clue. For 10 points, who wrote it?") == ""


def test_deterministic_for_a_seed_and_independent_of_order() -> None:
    key, question, line, category = TUPLES[0]
    first = pool().distractor(key, question, line, category, seed=3)
    again = probe.DistractorPool.build(reversed(TUPLES)).distractor(key, question, line, category, seed=3)
    assert first is not None and first == again
    seeds = {pool().distractor(key, question, line, category, seed=s).sentence for s in range(12)}  # type: ignore[union-attr]
    assert len(seeds) > 1  # the seed does choose


def test_never_the_answer_same_category_different_answer() -> None:
    clues = known_clues()
    for key, question, line, category in TUPLES:
        d = pool().distractor(key, question, line, category, seed=1)
        if category != CATEGORY:
            assert d is None  # the one Science tossup has no donor of its category
            continue
        assert d is not None
        assert d.sentence in clues and clues[d.sentence] != ANSWERS[int(key) - 1]
        assert d.donor_key != key and d.same_type  # "this novel" like its own giveaway
        assert not probe.contains_answer(line, d.sentence)
        assert judge(line, d.donor_answer).verdict.value == "reject"


def test_a_sentence_naming_the_answer_or_a_near_spelling_is_refused() -> None:
    line = "<b><u>Zorvantha</u></b> [prompt on Zorv]"
    assert probe.contains_answer(line, "In this novel Zorvantha's glass orchard burns.")
    assert probe.contains_answer(line, "In this novel Zorvanta's glass orchard burns.")  # a misspelling
    assert probe.contains_answer(line, "In this novel Zorv sleeps.")  # a prompt is refused too
    assert not probe.contains_answer(line, "In this novel the glass orchard burns.")
    # a pool whose only other clue names the answer gives no distractor
    named = [
        ("1", f"{clue(0, 0)} {clue(0, 1)} For 10 points, name this novel.", line, CATEGORY),
        ("2", f"Zorvantha haunts this novel's glass orchard every night. {clue(1, 1)} For 10 points, name this novel.",
         "<b><u>Quellibrin</u></b>", CATEGORY),
    ]  # fmt: skip
    only = probe.DistractorPool.build(named)
    d = only.distractor("1", named[0][1], line, CATEGORY)
    assert d is not None and d.sentence == clue(1, 1)  # the clean clue, never the one naming it


@pytest.mark.parametrize(
    ("position", "before"),
    [("start", 0), ("middle", 2), ("before_giveaway", 3)],
)
def test_positions(position: str, before: int) -> None:
    question = TUPLES[0][1]
    parts = probe.sentences(question)
    p = probe.probed(question, "This novel is a distractor of ten words, no more.", position)
    new = probe.sentences(p.question)
    assert new[before] == "This novel is a distractor of ten words, no more."
    assert new[:before] + new[before + 1 :] == parts
    assert p.word_start == sum(len(s.split()) for s in parts[:before]) and p.word_count == 10
    assert p.question.split()[p.word_start : p.word_start + p.word_count] == new[before].split()


def test_start_goes_after_a_note_to_players_and_bad_position_is_refused() -> None:
    parts = ["Note to players: specific term required.", "A clue here.", "For 10 points, name this term."]
    assert probe.insertion_index(parts, "start") == 1
    with pytest.raises(ValueError, match="unknown position"):
        probe.insertion_index(parts, "end")
