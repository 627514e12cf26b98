"""The distractor probe as an evaluation: a toy bot on the toy set falls by exactly what
``tests.tools.probe_toy`` computes by hand, the paired intervals bracket the difference, and
``manage.py probe_bot`` prints the table, writes the JSON and stores the report."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest
from django.core.management import CommandError, call_command

from irt import probe_results
from tests.tools.probe_toy import LastClueGuesser, write_toy_set
from tools import bot_evaluation as be
from tools import probe_evaluation as pe


@pytest.fixture
def toy_set(tmp_path: Path) -> Path:
    return write_toy_set(tmp_path / "toy.jsonl")


def test_toy_bot_falls_by_the_computed_amount(toy_set: Path) -> None:
    tossups = be.load_tossups(str(toy_set))
    report = pe.run(LastClueGuesser(), tossups, seed=1, every=1, players=4, resamples=200)
    assert report["tossups"] == 6 and report["skipped"] == 1  # the Science tossup: no donor
    original, probes = report["original"], report["probes"]
    assert original["accuracy"] == [0.0, 1.0, 1.0, 1.0]
    assert original["buzz_precision"] == 1.0 and original["mean_buzz_position"] == 10.0
    start, middle, giveaway = probes["start"], probes["middle"], probes["before_giveaway"]
    assert [a["probed"] for a in start["accuracy"]] == [0.0, 1.0, 1.0, 1.0]
    assert start["buzz_precision"]["probed"] == 0.0 and start["buzz_precision"]["difference"] == -1.0
    assert start["fooled"] == 1.0 and start["in_distractor"] == 1.0
    assert start["buzz_shift"]["difference"] == -10.0  # buzzed after 0 original words instead of 10
    assert [a["probed"] for a in middle["accuracy"]] == [0.0, 1.0, 0.0, 1.0]
    assert middle["buzz_precision"]["probed"] == 1.0 and middle["fooled"] == 0.0
    assert [a["probed"] for a in giveaway["accuracy"]] == [0.0, 1.0, 1.0, 0.0]
    assert giveaway["final_fooled"] == 1.0 and giveaway["buzz_shift"]["difference"] == 0.0
    # every toy tossup falls alike, so every resample gives the same difference
    assert giveaway["accuracy"][3]["low"] == giveaway["accuracy"][3]["high"] == -1.0
    assert start["expected_score"]["difference"] < 0 < original["qanta26"]
    assert start["qanta26"]["probed"] == 0.0  # a wrong commit scores nothing


def test_paired_bootstrap_brackets_the_difference() -> None:
    rng = np.random.default_rng(0)
    base = rng.random(300) < 0.6
    other = base & (rng.random(300) < 0.8)  # loses about 12 points, paired
    draws = np.random.default_rng(1).integers(0, 300, size=(1000, 300))
    d = pe.paired(base.astype(float), other.astype(float), draws)
    assert d["difference"] == pytest.approx(other.mean() - base.mean())
    assert d["low"] < d["difference"] < d["high"] < 0


def test_probe_bot_command(toy_set: Path, tmp_path: Path, settings, capsys) -> None:
    settings.VAR_DIR = tmp_path / "var"
    out = tmp_path / "out.json"
    call_command(
        "probe_bot", "--guesser", "tests.tools.probe_toy:LastClueGuesser", "--tossups", str(toy_set),
        "--every", "1", "--players", "4", "--resamples", "100", "--json", str(out), "--no-progress",
    )  # fmt: skip
    printed = capsys.readouterr().out
    assert "| before_giveaway |" in printed and "6 tossups probed (1 without a distractor" in printed
    report = json.loads(out.read_text())
    assert report["probes"]["before_giveaway"]["accuracy"][3]["difference"] == -1.0
    assert report["bot"] == "tests.tools.probe_toy:LastClueGuesser" and report["seed"] == 1
    stored = probe_results.latest()
    assert [r["bot"] for r in stored] == [report["bot"]] and stored[0]["tossups"] == 6


def test_probe_bot_refuses_bad_input(toy_set: Path, db) -> None:
    toy = "tests.tools.probe_toy:LastClueGuesser"
    with pytest.raises(CommandError, match="--positions"):
        call_command("probe_bot", "--guesser", toy, "--tossups", str(toy_set), "--positions", "end")
    with pytest.raises(CommandError, match="--every must be"):
        call_command("probe_bot", "--guesser", toy, "--tossups", str(toy_set), "--every", "0")
    with pytest.raises(CommandError, match="neither a question file"):
        call_command("probe_bot", "--guesser", toy, "--tossups", "no-such-set", "--no-store")
