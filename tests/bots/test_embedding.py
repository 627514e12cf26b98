"""EmbeddingGuesser: the real MiniLM encoder from the installed package, on tiny synthetic training sets;
and the ``runbot`` / ``simulate_match`` paths that build it."""

from __future__ import annotations

import asyncio
import gzip
import io
import json
from pathlib import Path

import numpy as np
import pytest
from django.core.management import CommandError, call_command

from buzzer.bots.embedding import (
    EMBEDDING_DIM,
    EmbeddingGuesser,
    EncoderUnavailable,
    MiniLMEncoder,
    default_model_dir,
)
from buzzer.bots.tfidf import Calibration
from tests.bots.fake_server import ME, MY_TEAM, Session, play, snapshot
from tools.management.commands.simulate_match import _cached_guesser


@pytest.fixture(scope="module")
def encoder() -> MiniLMEncoder:
    try:
        return MiniLMEncoder()
    except EncoderUnavailable as exc:
        pytest.skip(f"MiniLM model package cannot load: {exc}")


# One answer per topic; training clues and test clues share no content word (paraphrases).
TRAIN = {
    "<b>Marie Curie</b> [accept Maria Skłodowska]": [
        "This scientist discovered polonium and radium and won two Nobel Prizes.",
        "This Polish-French physicist pioneered research on radioactivity at the Sorbonne.",
    ],
    "photosynthesis": [
        "In this process chlorophyll in plant leaves captures sunlight to make glucose.",
        "The Calvin cycle fixes carbon dioxide during this process in chloroplasts.",
    ],
    "Battle of Waterloo": [
        "Wellington and Blücher defeated Napoleon in this 1815 battle in Belgium.",
        "The Old Guard was repulsed at this final defeat of the French emperor.",
    ],
    "volcano [accept stratovolcano]": [
        "Magma erupts as lava and ash from this kind of mountain, like Vesuvius or Etna.",
        "Pyroclastic flows and a caldera can follow an eruption of this landform.",
    ],
}
PARAPHRASES = {
    "Marie Curie": "This woman isolated radioactive elements and was honoured twice in Stockholm.",
    "photosynthesis": "Green vegetation turns light energy into sugar through this mechanism.",
    "Battle of Waterloo": "The British and Prussians beat Bonaparte in this clash near Brussels.",
    "volcano": "Molten rock bursts out of this geological vent, burying Pompeii.",
}


def runbot(url: str, *args: str) -> str:
    """Run ``manage.py runbot`` against the fake server behind the play ``url``; return its output."""
    out = io.StringIO()
    call_command("runbot", "--url", url.split("/ws/")[0], "--code", "C", "--token", "t", *args, stdout=out)
    assert "match over" in out.getvalue()
    return out.getvalue()


def records() -> list[tuple[str, str]]:
    return [(question, line) for line, questions in TRAIN.items() for question in questions]


@pytest.fixture(scope="module")
def guesser(encoder: MiniLMEncoder) -> EmbeddingGuesser:
    return EmbeddingGuesser.train(records(), encoder=encoder, calibrate=False)


def test_embeddings_are_unit_rows_of_384(encoder: MiniLMEncoder) -> None:
    vectors = encoder.encode(["radium", "a fugue has a subject and a countersubject", ""])
    assert vectors.shape == (3, EMBEDDING_DIM)
    assert vectors.dtype == np.float32
    np.testing.assert_allclose(np.linalg.norm(vectors, axis=1), 1.0, atol=1e-5)
    assert encoder.encode([]).shape == (0, EMBEDDING_DIM)


def test_related_sentences_are_closer_than_unrelated_ones(encoder: MiniLMEncoder) -> None:
    a, b, c = encoder.encode(
        ["The cat sits on the mat.", "A kitten is resting on the rug.", "Interest rates rose sharply."]
    )
    assert a @ b > a @ c + 0.2


def test_long_texts_are_chunked_and_averaged(encoder: MiniLMEncoder) -> None:
    head = "Napoleon lost at Waterloo in 1815. " * 20  # ≈ 200 word pieces: more than one window
    tail = "Photosynthesis makes glucose in chloroplasts. " * 20
    long, first, second = encoder.encode([head + tail, head, tail])
    # Truncation would keep only the head; the window average sees both halves.
    assert long @ second > 0.5
    assert abs(long @ first - long @ second) < 0.3


def test_ranks_the_right_answer_first_for_paraphrased_clues(guesser: EmbeddingGuesser) -> None:
    assert sorted(guesser.answers) == ["Battle of Waterloo", "Marie Curie", "photosynthesis", "volcano"]
    for answer, clue in PARAPHRASES.items():
        guess, confidence = guesser.guess(clue)
        assert guess == answer, clue
        assert 0.0 < confidence <= 1.0
    assert guesser.guess("   ") == (guesser.answers[0], 0.0)
    assert (
        guesser.bonus_guess("Name these things.", "Bonaparte's defeat by Wellington.") == "Battle of Waterloo"
    )


def test_max_train_keeps_the_most_recent_records(encoder: MiniLMEncoder) -> None:
    trained = EmbeddingGuesser.train(records(), encoder=encoder, max_train=4, calibrate=False)
    assert sorted(trained.answers) == ["Battle of Waterloo", "volcano"]


def test_calibration_is_a_probability_that_grows_with_evidence(encoder: MiniLMEncoder) -> None:
    known = [(f"{question} Clue number {k}.", line) for k in range(6) for question, line in records()]
    # The held-out latest 20 % (12 of 60) mixes known answers (guessed right) with unseen ones (never right).
    latest = []
    for k in range(6):
        latest += [records()[k], (f"This obscure thing number {k} is a riddle.", f"Unseen answer {k}")]
    trained = EmbeddingGuesser.train(known + latest, encoder=encoder, calibration_size=100, seed=1)
    assert trained.calibration is not None
    _, vague = trained.guess("This thing")
    _, clear = trained.guess("Wellington defeated Napoleon at this 1815 battle near Brussels.")
    assert 0.0 <= vague < clear <= 1.0


def test_save_load_round_trip(guesser: EmbeddingGuesser, encoder: MiniLMEncoder, tmp_path: Path) -> None:
    path = tmp_path / "model.npz"
    guesser.save(path)
    loaded = EmbeddingGuesser.load(path, encoder=encoder)
    assert loaded.answers == guesser.answers
    np.testing.assert_array_equal(loaded.class_vectors, guesser.class_vectors)
    assert loaded.calibration == guesser.calibration
    for clue in PARAPHRASES.values():
        assert loaded.guess(clue) == guesser.guess(clue)
    calibrated = EmbeddingGuesser(encoder, guesser.class_vectors, guesser.answers, guesser.calibration)
    calibrated.calibration = Calibration((3.0, 5.0), -1.0)
    calibrated.save(path)
    assert EmbeddingGuesser.load(path, encoder=encoder).calibration == calibrated.calibration


def test_load_rejects_other_files(encoder: MiniLMEncoder, tmp_path: Path) -> None:
    other = tmp_path / "other.npz"
    np.savez(other, something=np.zeros(3))
    with pytest.raises(ValueError, match="not an EmbeddingGuesser model"):
        EmbeddingGuesser.load(other, encoder=encoder)
    text = tmp_path / "text.npz"
    text.write_text("hello")
    with pytest.raises(ValueError, match="not an EmbeddingGuesser model"):
        EmbeddingGuesser.load(text, encoder=encoder)


def test_clear_error_for_a_missing_model(tmp_path: Path) -> None:
    with pytest.raises(EncoderUnavailable, match="not a MiniLM model directory"):
        MiniLMEncoder(tmp_path / "nowhere")
    broken = tmp_path / "broken"
    broken.mkdir()
    for name in ("config.json", "tokenizer.json", "model.safetensors"):
        (broken / name).write_text("{}" if name.endswith(".json") else "garbage")
    with pytest.raises(EncoderUnavailable, match="cannot load the MiniLM model"):
        MiniLMEncoder(broken)


def test_default_model_dir_is_the_package_directory() -> None:
    try:
        directory = default_model_dir()
    except EncoderUnavailable as exc:
        pytest.skip(f"MiniLM model package not installed: {exc}")
    assert (directory / "model.safetensors").is_file()


def test_train_rejects_empty_records(encoder: MiniLMEncoder) -> None:
    with pytest.raises(ValueError, match="no usable"):
        EmbeddingGuesser.train([("", "x"), ("question", "")], encoder=encoder)


def test_from_packets_filters_by_year(encoder: MiniLMEncoder, tmp_path: Path) -> None:
    path = tmp_path / "packets.jsonl.gz"
    rows = [
        {"type": "tossup", "year": 2019, "question": "Napoleon lost this 1815 battle.", "answer": "Waterloo"},
        {"type": "tossup", "year": 2023, "question": "Chlorophyll captures light here.", "answer": "leaf"},
        {"type": "bonus", "year": 2019, "leadin": "x", "parts": []},
    ]
    with gzip.open(path, "wt", encoding="utf-8") as out:
        out.writelines(json.dumps(row) + "\n" for row in rows)
    trained = EmbeddingGuesser.from_packets(path, max_year=2020, encoder=encoder, calibrate=False)
    assert trained.answers == ["Waterloo"]


async def test_runbot_plays_the_embedding_bot_from_its_model_cache(
    guesser: EmbeddingGuesser, tmp_path: Path
) -> None:
    cache = tmp_path / "model.npz"
    guesser.save(cache)

    async def script(s: Session) -> None:
        await s.ws.send(snapshot())
        await s.event("tossup_started", index=0, question_id=53, token_count=8, category="")
        await s.words(53, 0, "Napoleon's", "defeat", "by", "Wellington")
        assert (await s.expect("buzz"))["token_index"] <= 3
        await s.event("buzz", question_id=53, player_id=ME, team_id=MY_TEAM, kind="bot", token_index=3)
        assert (await s.expect("answer"))["text"] == "Battle of Waterloo"
        await s.event("match_ended", scores={})

    args = ["--bot", "embedding", "--model-cache", str(cache), "--threshold", "0.3", "--min-tokens", "0"]
    output, _ = await play(script, lambda url: asyncio.to_thread(runbot, url, *args))
    assert f"loading model from {cache}" in output


def test_runbot_embedding_needs_training_data() -> None:
    with pytest.raises(CommandError, match="--bot embedding needs --train"):
        call_command(
            "runbot", "--url", "ws://127.0.0.1:1", "--code", "X", "--token", "t", "--bot", "embedding"
        )


def test_simulate_match_caches_the_embedding_bot(settings, tmp_path: Path) -> None:
    settings.BASE_DIR = tmp_path
    path = tmp_path / "packets.jsonl.gz"
    rows = [
        {"type": "tossup", "year": 2019, "question": question, "answer": line} for question, line in records()
    ]
    with gzip.open(path, "wt", encoding="utf-8") as out:
        out.writelines(json.dumps(row) + "\n" for row in rows)
    said: list[str] = []
    trained = _cached_guesser("embedding", path, 2020, said.append)
    assert isinstance(trained, EmbeddingGuesser)
    assert said and "training the embedding bot" in said[0]
    (cached,) = (tmp_path / "var" / "cache").glob("embedding-*.npz")
    again = _cached_guesser("embedding", path, 2020, said.append)
    assert len(said) == 1  # loaded, not retrained
    assert again.answers == trained.answers
    assert again.guess(PARAPHRASES["volcano"])[0] == "volcano"
    assert cached.exists()
