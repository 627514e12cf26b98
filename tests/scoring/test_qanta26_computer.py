"""QANTA 2026 computer-side scoring (``irt.qanta26``) on hand-computed cases: a correct commit in each
quartile of the reveal, at the first decision point (power), a wrong commit, no commit, bonus parts,
the normalised total and each track's size deflation; the preset file and its schema; and
``manage.py evaluate_bot --scoring qanta26`` on a four-tossup file."""

from __future__ import annotations

import dataclasses
import json
from pathlib import Path
from typing import Any

import jsonschema
import pytest
from django.core.management import CommandError, call_command
from tossup_bot import Guess, Guesser, TossupPrefix

from irt import qanta26 as q
from irt.botmetrics import PrefixAnswer, TossupRun
from scoring.rules import SCHEMA_PATH, known_presets
from tools import bot_evaluation as be

SCHEMA = json.loads(SCHEMA_PATH.read_text(encoding="utf-8"))
COMPUTER_SCHEMA = {**SCHEMA["$defs"]["computerScoring"], "$defs": SCHEMA["$defs"]}
MB, GB = 10**6, 10**9


def decisions(n: int, commit_at: int | None, correct: bool, every: int = 1) -> list[q.Decision]:
    """Decision points every ``every`` tokens (and the last) of an ``n``-token tossup, committing at
    token ``commit_at`` (and on every later one, which must be ignored)."""
    tokens = sorted({*range(every - 1, n, every), n - 1})
    return [q.Decision(t, commit_at is not None and t >= commit_at, correct) for t in tokens]


# 20 tokens, a decision point on every token (the first after token 0): the quartile boundaries are
# after 5, 10 and 15 tokens revealed (0-based tokens 4, 9, 14).
@pytest.mark.parametrize(
    "token,points,quartile,power",
    [
        (0, 10 + 3 + 2, 1, True),  # the first decision point: power
        (1, 10 + 3, 1, False),
        (4, 10 + 3, 1, False),  # 5/20 revealed = exactly a quarter: still the first quartile
        (5, 10 + 2, 2, False),
        (9, 10 + 2, 2, False),
        (10, 10 + 1, 3, False),
        (14, 10 + 1, 3, False),
        (15, 10, 4, False),
        (19, 10, 4, False),  # on the last token
    ],
)
def test_a_correct_commit_scores_10_plus_its_quartile_plus_power(token, points, quartile, power):
    score = q.tossup_points(decisions(20, token, True), 20)
    assert score == q.TossupScore(float(points), token, True, quartile, power)


def test_a_wrong_commit_scores_0_and_no_power():
    assert q.tossup_points(decisions(20, 0, False), 20) == q.TossupScore(0.0, 0, False, 1, False)
    assert q.tossup_points(decisions(20, 12, False), 20) == q.TossupScore(0.0, 12, False, 3, False)


def test_no_commit_and_no_decision_point_score_0():
    assert q.tossup_points(decisions(20, None, True), 20) == q.TossupScore(0.0)
    assert q.tossup_points([], 20) == q.TossupScore(0.0)


def test_the_first_commit_ends_the_tossup():
    wrong_then_right = [q.Decision(3, True, False), q.Decision(8, True, True)]
    assert q.tossup_points(wrong_then_right, 20).points == 0.0
    # Without a commit at 3, the correct commit at token 8 (9/20 → second quartile) counts.
    assert q.tossup_points([q.Decision(3, False, False), q.Decision(8, True, True)], 20).points == 12.0


def test_power_is_the_first_decision_point_not_the_first_token():
    # Every 5th token: the first decision point is after token 4 (5/20, first quartile): 10 + 3 + 2.
    assert q.tossup_points(decisions(20, 4, True, every=5), 20).points == 15.0
    assert q.tossup_points(decisions(20, 9, True, every=5), 20).points == 12.0
    # A 4-token tossup asked first after 3 tokens (3/4: third quartile): 10 + 1 + 2.
    assert q.tossup_points(decisions(4, 2, True, every=3), 4) == q.TossupScore(13.0, 2, True, 3, True)


def test_reveal_quartile_boundaries_are_exact():
    assert [q.reveal_quartile(i, 8) for i in range(8)] == [1, 1, 2, 2, 3, 3, 4, 4]
    assert [q.reveal_quartile(i, 3) for i in range(3)] == [2, 3, 4]  # 1/3, 2/3, 3/3
    assert q.reveal_quartile(0, 1) == 4
    with pytest.raises(ValueError):
        q.reveal_quartile(5, 5)
    with pytest.raises(ValueError, match="increase"):
        q.tossup_points([q.Decision(4, False, False), q.Decision(4, True, True)], 20)
    with pytest.raises(ValueError, match="before the first decision point"):
        q.commit_points(20, 3, True, first_decision_token=4)


def test_bonus_parts_score_3_33_each():
    assert q.bonus_points([True, False, True]) == pytest.approx(6.66)
    assert q.bonus_points([True, True, True]) == pytest.approx(9.99)
    assert q.bonus_points([False, False, False]) == 0.0


def test_normalised_total_over_tossups_and_bonuses():
    tossups = [q.TossupScore(15.0), q.TossupScore(12.0), q.TossupScore(0.0), q.TossupScore(10.0)]
    total = q.total(tossups, [[True, False, True], [False, False, False]])
    # 37 + 6.66 points out of 4 × 15 + 6 × 3.33 = 79.98.
    assert total.points == pytest.approx(43.66)
    assert total.max_points == pytest.approx(79.98)
    assert total.normalised == pytest.approx(43.66 / 79.98)
    assert (total.deflation, total.deflated) == (1.0, pytest.approx(43.66 / 79.98))  # open track
    perfect = q.total([q.TossupScore(15.0)] * 2, [[True] * 3] * 2)
    assert perfect.normalised == pytest.approx(1.0)
    assert q.total([]).normalised is None


def test_counts_by_quartile_and_powers():
    scores = [
        q.tossup_points(decisions(20, 0, True), 20),  # Q1, power
        q.tossup_points(decisions(20, 6, True), 20),  # Q2
        q.tossup_points(decisions(20, 16, True), 20),  # Q4
        q.tossup_points(decisions(20, 2, False), 20),  # a wrong commit
        q.tossup_points(decisions(20, None, False), 20),
    ]
    total = q.total(scores)
    assert (total.tossups, total.commits, total.correct_commits, total.powers) == (5, 4, 3, 1)
    assert total.by_quartile == (1, 1, 0, 1)
    assert total.points == 15 + 12 + 10
    assert total.normalised == pytest.approx(37 / 75)


@pytest.mark.parametrize(
    "track,size,factor",
    [
        (q.Track.LIGHTWEIGHT, 400 * MB, 1 - 400 / 500),  # 0.2
        (q.Track.LIGHTWEIGHT, 125 * MB, 0.75),
        (q.Track.MIDDLEWEIGHT, 1500 * MB, 0.75),
        (q.Track.MIDDLEWEIGHT, 400 * MB, 1 - 0.4 / 6),
        (q.Track.OPEN, 80 * GB, 1.0),  # no published cap: not deflated
        (q.Track.OPEN, None, 1.0),
        (q.Track.MIDDLEWEIGHT, None, None),  # a capped track without a size: unknown
    ],
)
def test_each_tracks_deflation(track, size, factor):
    assert q.deflation_factor(track, size) == (None if factor is None else pytest.approx(factor))
    total = q.total([q.TossupScore(15.0), q.TossupScore(0.0)], track=track, size_bytes=size)
    assert total.normalised == 0.5
    assert total.deflated == (None if factor is None else pytest.approx(0.5 * factor))


def test_a_system_must_be_under_its_tracks_cap():
    for track, size in ((q.Track.LIGHTWEIGHT, 500 * MB), (q.Track.MIDDLEWEIGHT, 7 * GB)):
        with pytest.raises(ValueError, match="not under"):
            q.deflation_factor(track, size)
    with pytest.raises(ValueError, match="more than 0"):
        q.deflation_factor(q.Track.OPEN, 0)
    # A Hugging Face-style submission registers 100 MB more: 400 MB no longer fits under 500 MB.
    assert q.registered_size(400 * MB, hugging_face=True) == 500 * MB
    assert q.deflation_factor(q.Track.MIDDLEWEIGHT, q.registered_size(400 * MB, hugging_face=True)) == (
        pytest.approx(1 - 0.5 / 6)
    )


def test_tracks_and_sizes_as_declared():
    assert [q.track_of(x) for x in ("500mb", "6GB", "open", "Lightweight", "midweight", "heavyweight")] == [
        q.Track.LIGHTWEIGHT,
        q.Track.MIDDLEWEIGHT,
        q.Track.OPEN,
        q.Track.LIGHTWEIGHT,
        q.Track.MIDDLEWEIGHT,
        q.Track.OPEN,
    ]
    assert q.track_of("middleweight") == q.track_of("mid") == q.Track.MIDDLEWEIGHT
    with pytest.raises(ValueError, match="unknown QANTA 2026 track"):
        q.track_of("flyweight")
    assert [q.parse_size(s) for s in ("420MB", "5.5 GB", "1200k", "123456", "2gb")] == [
        420 * MB,
        5_500 * MB,
        1_200_000,
        123_456,
        2 * GB,
    ]
    for bad in ("big", "0", "-3MB", "5 PB"):
        with pytest.raises(ValueError):
            q.parse_size(bad)


# --- the preset and its schema ----------------------------------------------------------------


def test_the_shipped_preset_is_the_module_constant_and_matches_the_schema():
    jsonschema.Draft202012Validator.check_schema(SCHEMA)
    path = q.COMPUTER_PRESETS_DIR / "qanta26.json"
    jsonschema.validate(json.loads(path.read_text()), COMPUTER_SCHEMA)
    loaded = q.load_computer_scoring("qanta26")
    assert dataclasses.replace(loaded, description="") == q.QANTA26
    assert loaded.max_tossup_points == 15.0
    # Not a match preset: the match engine's preset list never sees it.
    assert "qanta26" in q.known_computer_scorings() and all("computer" not in p for p in known_presets())
    with pytest.raises(ValueError, match="known: qanta26"):
        q.load_computer_scoring("qanta2099")


BAD = [
    {"base": 10},  # no name
    {"name": "x", "colour": "red"},
    {"name": "x", "base": "10"},
    {"name": "x", "power": -2},
    {"name": "x", "wrong_commit": 5},
    {"name": "x", "quartile_points": [3, 2, 1]},
    {"name": "x", "quartile_points": [3, 2, 1, -1]},
    {"name": "x", "bonus_part_value": True},
    {"name": "x", "tracks": {"500mb": 500000000, "6gb": 6000000000}},
    {"name": "x", "tracks": {"500mb": 0, "6gb": 6000000000, "open": None}},
    {"name": "x", "tracks": {"500mb": 500000000.5, "6gb": 6000000000, "open": None}},
    {"name": "x", "hugging_face_overhead_bytes": -1},
]


@pytest.mark.parametrize("bad", BAD, ids=[json.dumps(b) for b in BAD])
def test_schema_and_from_dict_reject_the_same_bad_presets(bad):
    with pytest.raises(jsonschema.ValidationError):
        jsonschema.validate(bad, COMPUTER_SCHEMA)
    with pytest.raises(ValueError) as err:
        q.ComputerScoring.from_dict(bad)
    assert str(err.value)


def test_a_cap_written_as_a_float_without_fraction_is_an_integer_for_both():
    preset = {"name": "x", "tracks": {"500mb": 5e8, "6gb": 6e9, "open": None}}
    jsonschema.validate(preset, COMPUTER_SCHEMA)
    assert q.ComputerScoring.from_dict(preset).track_caps == q.TRACK_CAP_BYTES


def test_a_preset_with_other_points_changes_the_score():
    harsh = q.ComputerScoring.from_dict({"name": "harsh", "wrong_commit": -5, "power": 0})
    assert q.tossup_points(decisions(20, 0, True), 20, harsh).points == 13.0
    assert q.tossup_points(decisions(20, 0, False), 20, harsh).points == -5.0


# --- from the evaluation's runs, and evaluate_bot --scoring qanta26 ------------------------------


def test_score_from_runs_and_from_a_stored_result_agree():
    runs = [
        TossupRun("a", 20, tuple(PrefixAnswer(t, "x", 0.5, t >= 4, True) for t in (4, 9, 14, 19)), (None,)),
        TossupRun("b", 20, tuple(PrefixAnswer(t, "x", 0.5, t >= 9, True) for t in (4, 9, 14, 19)), (None,)),
        TossupRun("c", 20, tuple(PrefixAnswer(t, "x", 0.5, False, False) for t in (4, 9, 14, 19)), (None,)),
    ]
    from_runs = be.qanta26_score(runs, track="6gb", size_bytes=3 * GB)
    outcomes = [
        {"token_count": 20, "buzz_token": 4, "buzz_correct": True},
        {"token_count": 20, "buzz_token": 9, "buzz_correct": True},
        {"token_count": 20, "buzz_token": None, "buzz_correct": None},
    ]
    from_result = be.qanta26_score(result={"outcomes": outcomes}, every=5, track="6gb", size_bytes=3 * GB)
    assert from_runs == from_result
    assert from_runs["points"] == 15 + 12 and from_runs["max_points"] == 45
    assert from_runs["deflation"] == 0.5 and from_runs["deflated"] == pytest.approx(27 / 45 * 0.5)
    with pytest.raises(be.EvaluationError, match="not under"):
        be.qanta26_score(runs, track="500mb", size_bytes=3 * GB)


WORDS = [f"clue{i}" for i in range(15)]  # 15 words, then 5 more: 20 tokens
TOSSUPS = [("q1", "Alpha"), ("q2", "Beta"), ("q3", "Gamma"), ("q4", "Delta")]
# What the guesser does on each tossup: (token it commits at, right answer?) — None: never commits.
PLAN: dict[str, tuple[int, bool] | None] = {"q1": (4, True), "q2": (9, True), "q3": (14, False), "q4": None}


class PlannedGuesser(Guesser):
    """Commits on each of the test tossups as :data:`PLAN` says; declares the 6 GB track."""

    weight_class = "midweight"

    def guess_tossup(self, prefix: TossupPrefix) -> Guess:
        key = str(prefix.question_id)
        answer = dict(TOSSUPS)[key]
        plan = PLAN[key]
        if plan is None or prefix.seen - 1 < plan[0]:
            return Guess("no idea", 0.1)
        return Guess(answer if plan[1] else "Zeta", 0.9, buzz=True)


@pytest.fixture
def tossup_file(tmp_path: Path) -> Path:
    """Four 20-token tossups in the QANTA dump format."""
    text = " ".join([*WORDS, "name", "this", "Greek", "letter", "please"])
    questions = [
        {"text": text, "answer": answer, "tournament": "Test", "year": 2026, "qanta_id": key}
        for key, answer in TOSSUPS
    ]
    path = tmp_path / "tossups.json"
    path.write_text(json.dumps({"questions": questions}), encoding="utf-8")
    return path


def _evaluate(tossup_file: Path, tmp_path: Path, *extra: str) -> tuple[dict[str, Any], str]:
    out = tmp_path / "eval.json"
    sink = _Sink()
    call_command(
        "evaluate_bot",
        "--guesser",
        "tests.scoring.test_qanta26_computer:PlannedGuesser",
        "--tossups",
        str(tossup_file),
        "--every",
        "5",
        "--json",
        str(out),
        *extra,
        stdout=sink,
    )
    document = json.loads(out.read_text())
    return document["bots"]["tests.scoring.test_qanta26_computer:PlannedGuesser"], sink.text


@pytest.mark.django_db
def test_evaluate_bot_scoring_qanta26_with_the_declared_track(tossup_file: Path, tmp_path: Path) -> None:
    result, text = _evaluate(tossup_file, tmp_path, "--scoring", "qanta26", "--size", "1.5GB")
    c = result["computer_score"]
    # Decision points after tokens 4, 9, 14, 19: q1 commits right at the first (10 + 3 + 2), q2 right
    # at token 9 (10/20 revealed: second quartile, 10 + 2), q3 wrong (0), q4 never (0).
    assert (c["tossups"], c["commits"], c["correct_commits"], c["powers"]) == (4, 3, 2, 1)
    assert c["by_quartile"] == [1, 1, 0, 0]
    assert (c["points"], c["max_points"], c["normalised"]) == (27.0, 60.0, 0.45)
    # Declared midweight → the 6 GB track: 1 − 1.5/6 = 0.75.
    assert (c["track"], c["track_source"], c["size_bytes"]) == ("6gb", "declared", 1_500_000_000)
    assert c["deflation"] == 0.75 and c["deflated"] == pytest.approx(0.3375)
    assert "qanta26 computer-side score" in text and "6gb (declared)" in text and "0.3375" in text


@pytest.mark.django_db
def test_evaluate_bot_track_option_overrides_the_declaration(tossup_file: Path, tmp_path: Path) -> None:
    result, _ = _evaluate(
        tossup_file, tmp_path, "--scoring", "qanta26", "--track", "500mb", "--size", "400MB"
    )
    c = result["computer_score"]
    assert (c["track"], c["track_source"]) == ("500mb", "--track")
    assert c["deflation"] == pytest.approx(0.2) and c["deflated"] == pytest.approx(0.09)
    result, _ = _evaluate(tossup_file, tmp_path, "--scoring", "qanta26", "--track", "open")
    assert result["computer_score"]["deflated"] == 0.45
    # Without --scoring the output has no computer-side score.
    result, text = _evaluate(tossup_file, tmp_path)
    assert "computer_score" not in result and "computer-side" not in text


@pytest.mark.django_db
def test_evaluate_bot_refuses_bad_scoring_arguments_before_running(tossup_file: Path) -> None:
    base = ["evaluate_bot", "--guesser", "tests.scoring.test_qanta26_computer:PlannedGuesser"]
    base += ["--tossups", str(tossup_file)]
    cases = [
        (["--scoring", "qanta26", "--size", "7GB"], "not under the 6gb track"),
        (["--scoring", "qanta26", "--track", "flyweight"], "unknown QANTA 2026 track"),
        (["--scoring", "qanta26", "--size", "huge"], "is not a number"),
        (["--track", "6gb"], "--track and --size are for --scoring"),
        (["--scoring", "qanta26", "--queue"], "not with --queue"),
    ]
    for extra, message in cases:
        with pytest.raises(CommandError, match=message):
            call_command(*base, *extra, stdout=_Sink())
    from irt.models import BotEvaluation

    assert not BotEvaluation.objects.exists()


class _Sink:
    """A stdout for call_command that keeps the text."""

    def __init__(self) -> None:
        self.text = ""

    def write(self, text: str) -> None:
        self.text += text

    def flush(self) -> None:
        pass
