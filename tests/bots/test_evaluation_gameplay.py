"""The QANTA metrics (irt.botmetrics) checked against the live 2024-10-19 human-vs-model games: the
logs give, per question, where the model and the humans buzzed (sentence ``run_id`` and the prefix of
that sentence) and whether they were right, so the points the model actually scored in the room are
known. Replayed through the metric code with those buzz points (each game has at most one human buzz
per question, so h is 0 or 1), the expected score, buzz frequency and precision must be what the room
saw, and the human win rates what the room's order of buzzes gives. The question texts are not in the data, so a
position is encoded as (sentence, word of that sentence): order is all the metrics use here."""

from __future__ import annotations

import csv
from pathlib import Path

import pytest

from irt.botmetrics import HumanBuzz, PrefixAnswer, TossupRun, evaluate

SENTENCE = 1000  # tokens per sentence in the encoding: more than any sentence has words


def _position(row: dict[str, str], column: str) -> int:
    return int(row["run_id"]) * SENTENCE + len(row[column].split()) - 1


def _games(folder: Path) -> list[tuple[str, list[dict[str, str]]]]:
    games = []
    for log in sorted(folder.glob("*.csv")):
        if log.stem.endswith(("_human", "_model")):
            continue
        with log.open(encoding="utf-8", newline="") as fh:
            rows = list(csv.DictReader(fh))
        by_question: dict[str, list[dict[str, str]]] = {}
        for row in rows:
            by_question.setdefault(row["qid"], []).append(row)
        games += [(f"{log.stem}:{qid}", qrows) for qid, qrows in by_question.items()]
    return games


def test_metrics_reproduce_the_live_games(shared_data: Path) -> None:
    games = _games(shared_data / "expo" / "gameplay_2024-10-19")
    assert len(games) > 50
    runs, room_points, model_buzzes, model_right = [], [], 0, 0
    strict_wins, soft_wins = [], []
    for key, rows in games:
        model = [r for r in rows if r["model_buzz"] != "N/A"]
        humans = [r for r in rows if r["human_buzz"] != "N/A"]
        # The room: the earliest buzz decides (on the same word the model's comes first); a correct
        # human buzz ends the question, a neg does not.
        events = sorted(
            [(_position(r, "model_buzz"), 0, "model", r["model_correctness"] == "True") for r in model]
            + [(_position(r, "human_buzz"), 1, "human", r["human_correctness"] == "True") for r in humans]
        )
        points = 0.0
        for _, _, who, correct in events:
            if who == "human" and correct:
                break
            if who == "model":
                points = 1.0 if correct else -0.5
                break
        room_points.append(points)
        if humans:  # against the one human buzz: the model right at or before it (strict), or the
            # human wrong before the model (soft)
            first = events[0][2]
            model_right_first = first == "model" and events[0][3]
            human_neg_first = first == "human" and not events[0][3]
            strict_wins.append(model_right_first)
            soft_wins.append(model_right_first or human_neg_first)
        if model:
            model_buzzes += 1
            model_right += model[0]["model_correctness"] == "True"
        answers = tuple(
            PrefixAnswer(
                _position(r, "model_buzz"), r["model_guess"], 1.0, True, r["model_correctness"] == "True"
            )
            for r in model[:1]
        )
        buzzes = tuple(
            HumanBuzz(_position(r, "human_buzz"), r["human_correctness"] == "True") for r in humans
        )
        last = max(int(r["run_id"]) for r in rows)
        runs.append(TossupRun(key, (last + 1) * SENTENCE, answers, buzzes or (None,)))
    m = evaluate(runs)
    assert m.tossups == len(games)
    assert m.expected_score == pytest.approx(sum(room_points) / len(games))
    assert m.tossups_with_human_buzzes == len(strict_wins) > 0
    assert m.human_win_rate_strict == pytest.approx(sum(strict_wins) / len(strict_wins))
    assert m.human_win_rate == pytest.approx(sum(soft_wins) / len(soft_wins))
    assert m.buzz_frequency == pytest.approx(model_buzzes / len(games))
    assert m.buzz_precision == pytest.approx(model_right / model_buzzes)
    # The logs hold both outcomes and a few questions the model never buzzed on (2 of 112).
    assert 0.0 < m.buzz_precision < 1.0 and 0.0 < m.buzz_frequency < 1.0
