"""The neural guesser and the ensemble bot on a tiny configuration (the real training is a benchmark,
``manage.py train_guesser``; docs/BOTS.md): loss falls, checkpoints round-trip and refuse what is not
theirs, an interrupted run resumes to the same weights, the ensemble fits, saves and loads, and the
command trains and writes both files on a slice of the shared data."""

from __future__ import annotations

import random
from io import StringIO
from pathlib import Path

import numpy as np
import pytest
import torch
from django.core.management import call_command
from tossup_bot import TossupPrefix

from buzzer.bots import ensemble, neural
from buzzer.bots.adapter import ModelGuesser
from buzzer.bots.tfidf import TrainingRecord, reference_classes
from competition import botlaunch

SHARED = Path(__file__).resolve().parents[3] / "shared" / "data"
DUMP = SHARED / "packets" / "qbreader_packets_2012_2022.jsonl.gz"
CONFIG = neural.DanConfig(hidden=32, layers=1, epochs=3, batch_size=16, max_pieces=48, word_dropout=0.1)
ANSWERS = [
    "Mozart",
    "Photosynthesis",
    "Napoleon",
    "Jupiter",
    "Shakespeare",
    "Mitochondria",
    "Beethoven",
    "Mars",
    "Cleopatra",
    "Einstein",
]
CLUES = {
    "Mozart": "composer requiem magic flute salzburg",
    "Photosynthesis": "chlorophyll light plants glucose leaves",
    "Napoleon": "emperor waterloo corsica austerlitz france",
    "Jupiter": "planet red spot galilean moons giant",
    "Shakespeare": "playwright hamlet globe sonnets stratford",
    "Mitochondria": "organelle cell energy ATP powerhouse",
    "Beethoven": "symphony deaf bonn ninth pastoral",
    "Mars": "planet olympus mons red rover phobos",
    "Cleopatra": "pharaoh egypt ptolemaic antony asp",
    "Einstein": "relativity physicist photon nobel princeton",
}
FILLER = [
    "this",
    "figure",
    "is",
    "known",
    "for",
    "many",
    "things",
    "in",
    "history",
    "and",
    "for",
    "points",
    "name",
    "it",
]


def records(n_per_class: int = 12, seed: int = 0) -> list[TrainingRecord]:
    """Tossups over four years: each a shuffle of its answer's clue words among filler words; a
    third of the clues of another answer mixed in, so some prefixes are guessed wrong."""
    rng = random.Random(seed)
    out = []
    for k in range(n_per_class):
        for i, answer in enumerate(ANSWERS):
            other = CLUES[ANSWERS[(i + 1 + k) % len(ANSWERS)]].split()
            words = FILLER[:] + rng.sample(other, 2) + CLUES[answer].split()
            rng.shuffle(words)
            year = 2017 + k % 4
            out.append(TrainingRecord(" ".join(words), answer, "Science", f"{year} Set", year))
    return out


def trained(config: neural.DanConfig = CONFIG, **kwargs) -> tuple[neural.NeuralGuesser, neural.TrainingState]:
    _usable, questions, answers, classes = reference_classes(records())
    return neural.train(questions, classes.tolist(), answers, config=config, **kwargs)


def test_training_lowers_the_loss_and_learns_the_clues() -> None:
    model, state = trained()
    assert state.epoch == 3 and len(state.losses) == 3
    assert state.losses[-1] < state.losses[0]
    assert model.guess("requiem salzburg")[0] == "Mozart"
    assert model.guess("waterloo corsica")[0] == "Napoleon"
    index, prob = model.top_classes(["olympus mons rover"], 3)
    assert model.answers[int(index[0, 0])] == "Mars"
    assert prob.shape == (1, 3) and np.all(np.diff(prob[0]) <= 0) and 0 < prob[0].sum() <= 1.0 + 1e-6


def test_a_checkpoint_round_trips_and_refuses_other_files(tmp_path: Path) -> None:
    model, _ = trained()
    path = tmp_path / "neural.pt"
    model.save(path)
    loaded = neural.NeuralGuesser.load(path)
    texts = ["relativity photon", "hamlet globe sonnets", "this figure"]
    assert np.allclose(model.probabilities(texts), loaded.probabilities(texts))
    assert loaded.answers == model.answers and loaded.config == model.config
    blob = torch.load(path, weights_only=True)
    blob["version"] = "dan-0"
    torch.save(blob, tmp_path / "old.pt")
    with pytest.raises(ValueError, match="version dan-0"):
        neural.NeuralGuesser.load(tmp_path / "old.pt")
    (tmp_path / "junk.pt").write_bytes(b"not a checkpoint")
    with pytest.raises(ValueError, match="not a neural guesser checkpoint"):
        neural.NeuralGuesser.load(tmp_path / "junk.pt")


def test_an_interrupted_run_resumes_to_the_same_weights(tmp_path: Path) -> None:
    whole, _ = trained()
    partial = tmp_path / "run.partial"

    def stop_after_two(line: str) -> None:
        if line.startswith("epoch 2:"):
            raise KeyboardInterrupt

    with pytest.raises(KeyboardInterrupt):
        trained(partial=partial, say=stop_after_two)
    resumed_lines: list[str] = []
    resumed, state = trained(partial=partial, resume=True, say=resumed_lines.append)
    assert any("resuming after epoch 2 of 3" in line for line in resumed_lines)
    assert state.epoch == 3 and len(state.losses) == 3
    for name, tensor in whole.network.state_dict().items():
        assert torch.allclose(tensor, resumed.network.state_dict()[name]), name
    with pytest.raises(ValueError, match="another configuration"):
        trained(config=neural.DanConfig(**{**CONFIG.__dict__, "hidden": 16}), partial=partial, resume=True)


def test_the_ensemble_fits_saves_and_plays(tmp_path: Path) -> None:
    data = records(n_per_class=24)
    usable, questions, answers, classes = reference_classes(data)
    held = {r.group for r in usable if r.year in (2019, 2020)}
    keep = [i for i, r in enumerate(usable) if r.group not in held]
    model, _ = neural.train([questions[i] for i in keep], classes[keep].tolist(), answers, config=CONFIG)
    model.meta["id"] = "first"
    lines: list[str] = []
    fitted = ensemble.EnsembleGuesser.train(data, model, say=lines.append)
    assert fitted.weight in ensemble._WEIGHTS
    assert any(line.startswith("top-1 on the held-out prefixes") for line in lines)
    answer, confidence = fitted.guess_prefix("requiem magic flute salzburg composer", 5, 20, "Science")
    assert answer == "Mozart" and 0.0 <= confidence <= 1.0
    assert fitted.bonus_guess("For 10 points each:", "name this planet with olympus mons") == "Mars"
    path = tmp_path / "ensemble.joblib"
    fitted.save(path)
    again = ensemble.EnsembleGuesser.load(path, model)
    assert again.guess_prefix("waterloo corsica emperor", 3, 20) == fitted.guess_prefix(
        "waterloo corsica emperor", 3, 20
    )
    other = neural.NeuralGuesser(
        model.network, model.answers, model.config, model.tokenizer, {"id": "second"}
    )
    with pytest.raises(ValueError, match="another neural checkpoint"):
        ensemble.EnsembleGuesser.load(path, other)
    guesser = ModelGuesser(fitted, fitted.threshold, fitted.min_tokens)
    words = ["composer", "requiem", "magic", "flute", "salzburg"]
    prefix = TossupPrefix(question_id=1, index=0, tokens=tuple(words), token_count=20, category="Science")
    assert guesser.guess_tossup(prefix).guess == "Mozart"


def test_load_or_fit_says_how_to_train_when_there_is_no_checkpoint(tmp_path: Path) -> None:
    with pytest.raises(FileNotFoundError, match="manage train_guesser"):
        ensemble.load_or_fit(tmp_path / "none.pt", tmp_path / "none.joblib", records)


@pytest.mark.skipif(not DUMP.is_file(), reason=f"the shared data is absent ({DUMP}): nothing to train on")
def test_train_guesser_writes_a_checkpoint_the_ensemble_bot_loads(tmp_path: Path, settings) -> None:
    settings.BOT_CACHE_DIR = tmp_path
    out = StringIO()
    call_command("train_guesser", "--config", "tiny", "--limit", "2500", "--train", str(DUMP), stdout=out)
    text = out.getvalue()
    losses = [
        float(line.split("loss ")[1].split(",")[0]) for line in text.splitlines() if line.startswith("epoch ")
    ]
    assert len(losses) == neural.TINY.epochs and losses[-1] < losses[0], text
    assert "neural checkpoint" in text and "ensemble " in text, text
    paths = botlaunch.model_paths(DUMP, None, 2020)
    neural_file, fitted_file = paths.neural, paths.ensemble
    assert neural_file.parent == tmp_path
    assert neural_file.is_file() and fitted_file.is_file()
    loaded = ensemble.load_or_fit(neural_file, fitted_file, lambda: pytest.fail("refitted a saved ensemble"))
    assert loaded.answers == neural.NeuralGuesser.load(neural_file).answers
