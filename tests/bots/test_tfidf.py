"""TfidfGuesser: training on synthetic tossups, calibration, persistence and the qbreader reader."""

from __future__ import annotations

import gzip
import json
from pathlib import Path

import pytest

from buzzer.bots.answers import answer_key, main_answer
from buzzer.bots.tfidf import TfidfGuesser, read_packet_tossups

TOPICS = {
    "<b><u>Marie Curie</u></b> [accept Maria Skłodowska]": "polonium radium radioactivity Sorbonne Nobel",
    "Louis XIII [or Louis the Just]": "Richelieu Rochelle Dupes Luynes Medici regent monarch",
    "Guatemala [or Republica de Guatemala]": "Tikal quetzal Quiche Maya Antigua Peten Belize",
    "fugue [prompt on counterpoint]": "subject countersubject stretto episode exposition Bach voices",
    "mitochondria": "cristae ATP synthase Krebs matrix oxidative phosphorylation organelle",
}


def synthetic_records(copies: int = 4) -> list[tuple[str, str]]:
    """``copies`` rounds of one tossup per answer, each from that answer's clue words in a rotated order."""
    records = []
    for k in range(copies):
        for line, clues in TOPICS.items():
            words = clues.split()
            rotated = words[k % len(words) :] + words[: k % len(words)]
            records.append(
                (f"This thing is known for {' '.join(rotated[:5])}. For 10 points, name it.", line)
            )
    return records


@pytest.fixture(scope="module")
def guesser() -> TfidfGuesser:
    return TfidfGuesser.train(synthetic_records(), calibrate=False)


def test_guesses_the_main_answer_of_the_nearest_class(guesser: TfidfGuesser) -> None:
    assert sorted(guesser.answers) == ["Guatemala", "Louis XIII", "Marie Curie", "fugue", "mitochondria"]
    answer, confidence = guesser.guess("this element was discovered alongside polonium; radium")
    assert answer == "Marie Curie"
    assert 0.0 < confidence <= 1.0
    assert guesser.guess("the stretto of this form")[0] == "fugue"
    assert guesser.guess("Tikal is in this country")[0] == "Guatemala"


def test_confidence_grows_with_evidence_and_is_zero_without_known_terms(guesser: TfidfGuesser) -> None:
    _, weak = guesser.guess("cristae")
    _, strong = guesser.guess("cristae ATP synthase Krebs matrix oxidative phosphorylation")
    assert strong > weak
    assert guesser.guess("zzz qqq")[1] == 0.0


def test_spellings_are_merged_into_one_class() -> None:
    records = [("radium polonium", "Marie Curie"), ("radium Sorbonne", "MARIE CURIE [or Madame Curie]")]
    records += [("Tikal quetzal", "Guatemala")]
    trained = TfidfGuesser.train(records, calibrate=False)
    assert len(trained.answers) == 2
    assert trained.guess("Sorbonne")[0] in {"Marie Curie", "MARIE CURIE"}


def test_calibrated_confidence_is_a_probability() -> None:
    trained = TfidfGuesser.train(synthetic_records(copies=12), calibrate=True, seed=1)
    assert trained.calibration is not None
    _, early = trained.guess("This thing")
    answer, late = trained.guess("Richelieu Rochelle Dupes Luynes Medici")
    assert answer == "Louis XIII"
    assert 0.0 <= early < late <= 1.0


def test_train_rejects_records_without_usable_answers() -> None:
    with pytest.raises(ValueError, match="no usable"):
        TfidfGuesser.train([("some question", "[or nothing]"), ("", "Answer")])


def test_bonus_guess_uses_the_part_text(guesser: TfidfGuesser) -> None:
    assert (
        guesser.bonus_guess("Answer these about Central America.", "Name this country with Tikal.")
        == "Guatemala"
    )


def test_save_load_round_trip(guesser: TfidfGuesser, tmp_path: Path) -> None:
    path = tmp_path / "model.joblib"
    guesser.save(path)
    loaded = TfidfGuesser.load(path)
    for text in ["polonium", "stretto exposition", "Richelieu regent", "ATP"]:
        assert loaded.guess(text) == guesser.guess(text)


def test_load_rejects_other_files(tmp_path: Path) -> None:
    import joblib

    joblib.dump({"something": "else"}, tmp_path / "x.joblib")
    with pytest.raises(ValueError, match="not a TfidfGuesser"):
        TfidfGuesser.load(tmp_path / "x.joblib")


def write_packets(path: Path, items: list[object]) -> None:
    with gzip.open(path, "wt", encoding="utf-8") as handle:
        for item in items:
            handle.write((item if isinstance(item, str) else json.dumps(item)) + "\n")


def test_read_packet_tossups_filters_type_year_and_set(tmp_path: Path) -> None:
    path = tmp_path / "p.jsonl.gz"
    write_packets(
        path,
        [
            {"type": "tossup", "set": "2019-ACF", "year": 2019, "question": "q1", "answer": "a1"},
            {"type": "tossup", "set": "2021-PACE", "year": 2021, "question": "q2", "answer": "a2"},
            {"type": "bonus", "set": "2019-ACF", "year": 2019, "leadin": "l", "parts": [], "answers": []},
            {"type": "tossup", "set": "2019-PACE", "year": 2019, "question": "q3", "answer": "a3"},
        ],
    )
    assert list(read_packet_tossups(path)) == [("q1", "a1"), ("q2", "a2"), ("q3", "a3")]
    assert list(read_packet_tossups(path, max_year=2020)) == [("q1", "a1"), ("q3", "a3")]
    assert list(read_packet_tossups(path, min_year=2021)) == [("q2", "a2")]
    assert list(read_packet_tossups(path, sets={"2019-PACE"})) == [("q3", "a3")]


def test_read_packet_tossups_names_the_bad_line(tmp_path: Path) -> None:
    path = tmp_path / "bad.jsonl.gz"
    write_packets(path, [{"type": "tossup", "question": "q", "answer": "a"}, "{not json"])
    with pytest.raises(ValueError, match=r"bad\.jsonl\.gz:2: invalid JSON"):
        list(read_packet_tossups(path))


def test_real_packets_beat_chance_on_later_years(shared_data: Path) -> None:
    """Train on one year of real tossups and answer the same answers' tossups from later years."""
    path = shared_data / "packets" / "qbreader_packets_2012_2022.jsonl.gz"
    trained = TfidfGuesser.train(read_packet_tossups(path, min_year=2019, max_year=2019), calibrate=False)
    known = {answer_key(a) for a in trained.answers}
    test = [
        (q, key)
        for q, a in read_packet_tossups(path, min_year=2022)
        if (key := answer_key(main_answer(a))) in known
    ]
    test = test[:300]
    assert len(test) >= 100
    correct = sum(answer_key(trained.guess(q)[0]) == key for q, key in test)
    assert correct / len(test) > 0.3  # chance is 1/len(answers) < 0.001
