"""The reference TF-IDF bot: classes merged by the judge's normalisation, held-out sets for the buzzer,
and training + offline evaluation on a small slice of the real packets (skips without ../shared/data)."""

from __future__ import annotations

import gzip
import json
from pathlib import Path

import numpy as np
import pytest
from tossup_bot import TossupPrefix

from buzzer.bots.adapter import ModelGuesser
from buzzer.bots.answers import judge_key
from buzzer.bots.tfidf import TfidfGuesser, TrainingRecord, packet_records
from tools import bot_evaluation as be


def test_judge_key_merges_spellings_the_judge_treats_alike() -> None:
    assert judge_key("The Netherlands") == judge_key("netherlands") == "netherland"
    assert judge_key("World War II") == judge_key("world war 2")
    assert judge_key("Nineteen Eighty-Four") == judge_key("1984")
    assert judge_key("Günter Grass") == judge_key("Gunter Grass.")
    assert judge_key("Marie Curie") != judge_key("Pierre Curie")


def test_the_reference_bot_needs_a_year_to_hold_out() -> None:
    records = [
        TrainingRecord(f"question {i} about topic {i % 3}", f"answer {i % 3}", "", "A", 2019)
        for i in range(60)
    ]
    with pytest.raises(ValueError, match="at least two years"):
        TfidfGuesser.train_reference(records)


def test_packet_records_hold_tossups_and_every_bonus_part(tmp_path: Path) -> None:
    path = tmp_path / "p.jsonl.gz"
    items = [
        {"type": "tossup", "set": "A", "year": 2019, "question": "q1", "answer": "a1", "category": "Science"},
        {
            "type": "bonus",
            "set": "A",
            "year": 2019,
            "leadin": "l",
            "parts": ["p1", "p2"],
            "answers": ["b1", "b2"],
        },
        {"type": "tossup", "set": "B", "year": 2021, "question": "q2", "answer": "a2"},
    ]
    with gzip.open(path, "wt", encoding="utf-8") as handle:
        handle.writelines(json.dumps(item) + "\n" for item in items)
    assert packet_records(path, max_year=2020) == [
        TrainingRecord("q1", "a1", "Science", "A", 2019, True),
        TrainingRecord("p1", "b1", "", "A", 2019, False),
        TrainingRecord("p2", "b2", "", "A", 2019, False),
    ]


@pytest.fixture(scope="module")
def small_reference(shared_data: Path) -> tuple[TfidfGuesser, Path]:
    """Trained on a slice of real sets: PACE and ACF Regionals of 2017–2020 (tossups and bonuses); the
    buzzer is fitted on 200 tossups of 2019–2020, the years held out."""
    packets = shared_data / "packets" / "qbreader_packets_2012_2022.jsonl.gz"
    sets = {
        "2017-ACF-Regionals",
        "2017-PACE",
        "2018-ACF-Regionals",
        "2018-PACE",
        "2019-PACE",
        "2020-ACF-Regionals",
    }
    model = TfidfGuesser.from_packets(packets, max_year=2020, sets=sets, held_out=200, seed=1)
    return model, packets


def test_reference_bot_learns_a_calibrated_buzzer_on_held_out_sets(small_reference) -> None:
    model, packets = small_reference
    assert model.buzzer is not None and model.class_info is not None
    report = model.buzzer.fit_report
    assert report["tossups"] >= 200 and report["prefixes"] > 10 * report["tossups"]
    assert 0.3 <= model.threshold <= 0.99
    assert model.buzzer.categories and all(c == c.lower() for c in model.buzzer.categories)
    # On whole tossups of a year it never saw, the confidence is a probability, higher for right guesses.
    model_tossups = be.packet_tossups(packets, min_year=2021, max_year=2021, sample=80, seed=2)
    right, wrong = [], []
    for t in model_tossups:
        guess, confidence = model.guess_prefix(" ".join(t.tokens), len(t.tokens), len(t.tokens), t.category)
        assert 0.0 <= confidence <= 1.0
        (right if be.Judge(t)(guess, len(t.tokens) - 1) else wrong).append(confidence)
    assert right and wrong and np.mean(right) > np.mean(wrong) + 0.2


def test_reference_bot_evaluates_on_years_it_never_saw(small_reference) -> None:
    model, packets = small_reference
    tossups = be.packet_tossups(packets, min_year=2021, max_year=2021, sample=40, seed=0)
    assert len(tossups) == 40
    humans = be.simulated_humans(tossups, players=4, seed=1)
    guesser = ModelGuesser(model, model.threshold, model.min_tokens)
    result = be.evaluate_guesser(guesser, tossups, humans, every=8)
    m = result["metrics"]
    assert m["tossups"] == 40 and result["errors"] == 0
    # Calibrated on held-out years: on a year it never saw, where this small model knows few answers,
    # its confidence stays as low as its accuracy.
    assert m["answers"] > 40 * 10 and m["ece"] is not None and m["ece"] < 0.15
    # A buzz is a prefix whose confidence reached the model's threshold, after its minimum tokens.
    for outcome in result["outcomes"]:
        if outcome["buzz_token"] is not None:
            assert outcome["buzz_token"] + 1 >= model.min_tokens


def test_model_guesser_asks_the_reference_bot_with_the_prefix_shape(small_reference) -> None:
    model, _ = small_reference
    tokens = tuple(["For", "10", "points,", "name", "this", "playwright", "of", "Hamlet", "and", "Macbeth"])
    guesser = ModelGuesser(model, model.threshold, model.min_tokens)
    whole = guesser.guess_tossup(TossupPrefix(1, 0, tokens, len(tokens), "Literature"))
    unknown_length = guesser.guess_tossup(TossupPrefix(1, 0, tokens, None, "Literature"))
    assert whole.guess == unknown_length.guess
    assert whole.confidence == pytest.approx(
        model.guess_prefix(" ".join(tokens), len(tokens), len(tokens), "Literature")[1]
    )
    assert np.isfinite(unknown_length.confidence)
