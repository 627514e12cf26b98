"""Bad input at the edges of the fairness features: unreadable answer lines (the judge must hand
them to the moderator, never crash), unknown presets and malformed buzz files given to
simulate_match (clear errors before anything starts)."""

from __future__ import annotations

import random
from io import StringIO
from pathlib import Path

import pytest
from django.core.management import CommandError, call_command

from competition.game import MatchConfig
from scoring.judge import judge
from scoring.rules import known_presets

UNREADABLE = [
    "",
    "   ",
    "<b><u>",
    "</u></b>",
    "[[[",
    "((",
    "\x00",
    "[or <b><u></u></b>]",
    "[accept: ; reject: ]",
]


@pytest.mark.parametrize("answer_line", UNREADABLE)
def test_unreadable_answer_lines_go_to_the_moderator(answer_line: str) -> None:
    for given in ("Paris", "[", "<b>"):  # (an empty answer is a plain reject)
        assert judge(answer_line, given, token_index=3, token_count=10).verdict == "needs_moderator"


def test_fuzzed_answer_lines_never_crash_the_judge() -> None:
    rng = random.Random(7)
    alphabet = "<>[]();:/bu &#\"'orpmtacejdn"
    verdicts = set()
    for _ in range(300):
        line = "".join(rng.choice(alphabet) for _ in range(rng.randint(0, 40)))
        given = "".join(rng.choice(alphabet) for _ in range(rng.randint(0, 12)))
        verdict = judge(line, given, token_index=rng.randint(0, 9), token_count=10)
        assert verdict.verdict in ("accept", "prompt", "reject", "needs_moderator")
        verdicts.add(verdict.verdict)
    assert "needs_moderator" in verdicts


def test_unknown_preset_names_the_known_ones() -> None:
    with pytest.raises(ValueError, match="known presets: " + ", ".join(known_presets())):
        MatchConfig.from_dict({"preset": "pace2099"})
    with pytest.raises(CommandError, match=r"unknown preset 'pace2099'; known presets: acf, hvc, naqt"):
        call_command("simulate_match", "--preset", "pace2099", stdout=StringIO())


@pytest.mark.parametrize("bot_delay", [-0.1, float("nan"), float("inf")])
def test_bad_bot_delay_is_refused(bot_delay: float) -> None:
    with pytest.raises(ValueError, match="bot_delay"):
        MatchConfig.from_dict({"preset": "naqt", "bot_delay": bot_delay})


def test_simulate_match_reports_a_malformed_buzz_file_with_its_line(tmp_path: Path) -> None:
    bad = tmp_path / "bot.buzz.csv"
    bad.write_text(
        "question_id,token_position,guess,confidence,buzz,correct\nq1,3,Paris,0.9,1,1\nq2,x,Oslo,0.5,1,0\n"
    )
    with pytest.raises(CommandError, match=rf"{bad}:3: 'token_position' must be an integer"):
        call_command("simulate_match", "--replay-bot", str(bad), stdout=StringIO())
    with pytest.raises(CommandError, match=r"no \*\.buzz\.csv"):
        call_command("simulate_match", "--replay-bot", str(tmp_path / "missing"), stdout=StringIO())
    with pytest.raises(CommandError, match="--bot-delay-ms must be"):
        call_command("simulate_match", "--bot-delay-ms", "-5", stdout=StringIO())


def test_simulate_match_says_how_to_train_its_default_bot(tmp_path: Path, settings) -> None:
    settings.BOT_CACHE_DIR = tmp_path / "cache"  # no checkpoint there
    dump = tmp_path / "dump.jsonl"
    dump.write_text("")
    with pytest.raises(
        CommandError, match=r"no trained neural guesser at .*manage train_guesser.*--bot tfidf"
    ):
        call_command("simulate_match", "--packets", str(dump), stdout=StringIO())
    with pytest.raises(CommandError, match="no training file"):
        call_command("simulate_match", "--bot-train", str(tmp_path / "missing.jsonl"), stdout=StringIO())
