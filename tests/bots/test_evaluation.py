"""Offline bot evaluation end to end: ``manage.py evaluate_bot`` on the demo packet with simulated
humans and with the buzz log, the Celery task storing its progress and result, the recorded 2024
exhibition bots, and the bot leaderboard page."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from django.core.management import CommandError, call_command
from tossup_bot import Guess, Guesser, TossupPrefix

from competition.importers import DEMO_PACKET, import_demo_packet, parse_file
from competition.models import Tossup
from irt.botmetrics import Human, HumanBuzz
from irt.models import BotEvaluation, Response
from scoring.judge.grammar import main_answer
from tools import bot_evaluation as be
from tools.tasks import evaluate_bot

pytestmark = pytest.mark.django_db


class OracleGuesser(Guesser):
    """Knows the demo packet's answers: says "no idea" until token ``at``, then buzzes with the main
    answer — except on the tossups listed in ``wrong`` (comma-separated ids), where it says "Paris"."""

    def __init__(self, at: str = "5", wrong: str = "") -> None:
        parsed = parse_file(DEMO_PACKET)
        self.answers = {t.external_id: main_answer(t.answer_line) for t in parsed.tossups}
        self.answers |= {str(t.id): main_answer(t.answer_line) for t in Tossup.objects.all()}
        self.at, self.wrong = int(at), set(filter(None, wrong.split(",")))

    def guess_tossup(self, prefix: TossupPrefix) -> Guess:
        if prefix.seen - 1 < self.at:
            return Guess("no idea", 0.1)
        key = str(prefix.question_id)
        return Guess("Paris" if key in self.wrong else self.answers[key], 0.9, buzz=True)


def expected(humans: dict[str, tuple[Human, ...]], at: int, wrong: set[str]) -> float:
    """The expected score by hand (qb_metrics): a buzz at token ``at`` scores its points × (1 − h), h
    the share of the humans' buzzes (negs included; the silent ones are no buzz) that were right
    strictly before it."""
    total = 0.0
    for key, plans in humans.items():
        buzzes = [h for h in plans if isinstance(h, HumanBuzz)]
        h = sum(1 for b in buzzes if b.correct and b.token_index < at) / len(buzzes) if buzzes else 0.0
        total += (-0.5 if key in wrong else 1.0) * (1 - h)
    return total / len(humans)


def test_oracle_on_the_demo_packet_against_simulated_humans(tmp_path: Path) -> None:
    tossups = be.load_tossups(str(DEMO_PACKET))
    wrong = {tossups[0].key, tossups[3].key}
    out = tmp_path / "eval.json"
    call_command(
        "evaluate_bot",
        "--guesser",
        "tests.bots.test_evaluation:OracleGuesser",
        "-o",
        "at=5",
        "-o",
        f"wrong={','.join(wrong)}",
        "--tossups",
        str(DEMO_PACKET),
        "--players",
        "6",
        "--seed",
        "3",
        "--json",
        str(out),
        stdout=(log := _Sink()),
    )
    document = json.loads(out.read_text())
    result = document["bots"]["tests.bots.test_evaluation:OracleGuesser"]
    m = result["metrics"]
    humans = be.simulated_humans(tossups, 6, 3)
    assert m["tossups"] == len(tossups) == 24
    assert m["buzz_frequency"] == 1.0 and m["mean_buzz_position"] == 6.0  # 6 tokens read at token 5
    assert m["buzz_precision"] == pytest.approx(22 / 24)  # the judge accepts every main answer
    assert m["expected_score"] == pytest.approx(expected(humans, 5, wrong))
    assert any(isinstance(h, HumanBuzz) and not h.correct for hs in humans.values() for h in hs)  # negs too
    assert m["buzz_accuracy"] == pytest.approx(22 / 24) and m["outcome_classes"]["best-buzz"] == 22
    assert -0.5 < m["expected_score"] < 1.0
    # Before token 5 every answer ("no idea", 0.1) is wrong; from it on 0.9, wrong on two tossups.
    low = next(b for b in result["reliability"] if b["lo"] == 0.1)
    high = next(b for b in result["reliability"] if b["lo"] == 0.9)
    assert (low["count"], low["accuracy"]) == (5 * 24, 0.0)
    after = {t.key: len(t.tokens) - 5 for t in tossups}  # answers from token 5 on
    assert high["count"] == sum(after.values())
    assert high["accuracy"] == pytest.approx(
        sum(n for k, n in after.items() if k not in wrong) / high["count"]
    )
    assert result["accuracy_by_fraction"][-1] == {"fraction": 1.0, "accuracy": pytest.approx(22 / 24)}
    assert "exp. score" in log.text and document["humans"].startswith("simulated (6 players")
    stored = BotEvaluation.objects.get()
    assert stored.status == "done" and stored.progress == 1.0 and stored.result["metrics"] == m


def test_tfidf_bot_trained_on_the_demo_packet() -> None:
    call_command(
        "evaluate_bot",
        "--bot",
        "tfidf",
        "--train",
        str(DEMO_PACKET),
        "--tossups",
        str(DEMO_PACKET),
        "--limit",
        "6",
        "--every",
        "4",
        stdout=_Sink(),
    )
    m = BotEvaluation.objects.get(name="tfidf").result["metrics"]
    # It knows every answer (trained on what it plays): it buzzes and is right.
    assert m["tossups"] == 6 and m["buzzes"] > 0 and m["buzz_precision"] == 1.0
    assert m["mean_buzz_position"] >= 10  # never before its 10 minimum tokens (1-based positions)


def test_buzz_log_humans() -> None:
    import_demo_packet()
    first, second = Tossup.objects.order_by("id")[:2]
    for subject, tossup, correct, position in (
        ("human:#1", first, True, 3),  # beats a buzz at token 5
        ("human:#2", first, False, 7),  # a neg does not stop the bot
        ("human:#1", second, True, 40),
    ):
        Response.objects.create(
            dataset="live",
            source="match:1",
            subject=subject,
            subject_kind="human",
            item=f"tossup:{tossup.id}",
            tossup=tossup,
            correct=correct,
            position=position,
        )
    call_command(
        "evaluate_bot",
        "--guesser",
        "tests.bots.test_evaluation:OracleGuesser",
        "--tossups",
        "Tossup Demo",
        "--humans",
        "log",
        stdout=_Sink(),
    )
    m = BotEvaluation.objects.get().result["metrics"]
    assert m["tossups"] == 2  # only the played tossups
    assert m["expected_score"] == pytest.approx(((0 + 1) / 2 + 1) / 2)  # h = 1/2, then 0
    # Strict wins: the neg on 7 (the bot, right on 5, was first) and the right buzz on 40.
    assert m["human_win_rate_strict"] == pytest.approx((1 / 2 + 1) / 2) == m["human_win_rate"]


def test_bad_sources_are_refused_and_leave_nothing(tmp_path: Path) -> None:
    with pytest.raises(CommandError, match="neither a question file nor an imported question set"):
        call_command(
            "evaluate_bot", "--bot", "tfidf", "--train", str(DEMO_PACKET), "--tossups", "No Such Set"
        )
    with pytest.raises(CommandError, match="imported question set, not a file"):
        call_command(
            "evaluate_bot",
            "--guesser",
            "tests.bots.test_evaluation:OracleGuesser",
            "--tossups",
            str(DEMO_PACKET),
            "--humans",
            "log",
        )
    with pytest.raises(CommandError, match="no_such_module"):
        call_command("evaluate_bot", "--guesser", "no_such_module:X", "--tossups", str(DEMO_PACKET))
    assert not BotEvaluation.objects.exists()


def test_celery_task_stores_progress_and_result() -> None:
    spec = {
        "guesser": "tests.bots.test_evaluation:OracleGuesser",
        "options": {"at": "2"},
        "tossups": str(DEMO_PACKET),
        "humans": "simulated",
        "players": 4,
        "seed": 1,
        "limit": 5,
    }
    evaluation = BotEvaluation.objects.create(name="oracle", spec=spec)
    states: list[dict[str, Any]] = []
    original = evaluate_bot.update_state
    evaluate_bot.update_state = lambda state, meta, **kw: states.append(  # type: ignore[method-assign]
        {**meta, "stored": BotEvaluation.objects.get(pk=evaluation.id).progress}
    )
    try:
        outcome = evaluate_bot.apply(args=[evaluation.id], task_id="t-1").get()
    finally:
        evaluate_bot.update_state = original  # type: ignore[method-assign]
    evaluation.refresh_from_db()
    assert outcome == {"evaluation": evaluation.id, "status": "done"}
    assert evaluation.status == "done" and evaluation.progress == 1.0 and evaluation.finished_at
    assert (
        evaluation.result["metrics"]["tossups"] == 5
        and evaluation.result["metrics"]["mean_buzz_position"] == 3  # token 2: 3 tokens read
    )
    assert [s["done"] for s in states] == [1, 2, 3, 4, 5]
    assert [s["stored"] for s in states] == pytest.approx([0.2, 0.4, 0.6, 0.8, 1.0])  # saved as it went

    bad = BotEvaluation.objects.create(name="bad", spec={**spec, "tossups": "nowhere"})
    assert evaluate_bot.apply(args=[bad.id]).get() == {"evaluation": bad.id, "status": "failed"}
    bad.refresh_from_db()
    assert bad.status == "failed" and "nowhere" in bad.error


def test_queue_hands_the_run_to_the_worker() -> None:
    import redis
    from django.conf import settings

    queue = redis.Redis.from_url(settings.CELERY_BROKER_URL)
    name = f"{settings.REDIS_PREFIX}celery"  # this instance's queue
    before = queue.llen(name)
    call_command(
        "evaluate_bot",
        "--bot",
        "tfidf",
        "--train",
        str(DEMO_PACKET),
        "--tossups",
        str(DEMO_PACKET),
        "--queue",
        stdout=(log := _Sink()),
    )
    evaluation = BotEvaluation.objects.get()
    assert evaluation.status == "queued" and f"queued evaluation {evaluation.id}" in log.text
    assert queue.llen(name) == before + 1
    message = queue.lpop(name)  # ours, the newest (no worker here: it would linger)
    assert message is not None and b"tools.tasks.evaluate_bot" in message


def test_recorded_2024_exhibition_bots(shared_data: Path, tmp_path: Path) -> None:
    from buzzer.bots.replay import load_buzz_file

    expo_dir = shared_data / "expo" / "2024_470"
    out = tmp_path / "recorded.json"
    call_command(
        "evaluate_bot",
        "--tossups",
        str(expo_dir),
        "--recorded",
        str(expo_dir),
        "--json",
        str(out),
        stdout=_Sink(),
    )
    bots = json.loads(out.read_text())["bots"]
    assert set(bots) == {"blapuma (recorded)", "gpr_aim (recorded)", "kitopang (recorded)"}
    assert BotEvaluation.objects.filter(status="done").count() == 3
    for team, result in bots.items():
        assert result["metrics"]["tossups"] == 79  # all on the same tossups
        # The first buzz of each tossup is where formats' independent reader puts it.
        first: dict[str, int] = {}
        for log in (expo_dir / team.split()[0]).glob("*.buzz.csv"):
            for qid, buzz in load_buzz_file(log).items():
                first[qid] = buzz.token_index
        buzzed = {o["tossup"]: o["buzz_token"] for o in result["outcomes"] if o["buzz_token"] is not None}
        assert buzzed == first


def test_leaderboard_page(client) -> None:
    empty = client.get("/analysis/bots/")
    assert empty.status_code == 200 and b"No bot evaluated yet" in empty.content
    call_command(
        "evaluate_bot",
        "--guesser",
        "tests.bots.test_evaluation:OracleGuesser",
        "--tossups",
        str(DEMO_PACKET),
        "--limit",
        "4",
        "--name",
        "oracle-4",
        stdout=_Sink(),
    )
    BotEvaluation.objects.create(name="waiting-bot", spec={"tossups": "x"}, status="running", progress=0.25)
    page = client.get("/analysis/bots/")
    html = page.content.decode()
    assert page.status_code == 200
    assert "oracle-4" in html and "waiting-bot" in html and "25 %" in html
    # The oracle is right on token 5, its first right answer, on all 4: best-buzz each time.
    assert (
        '<span title="hopeless / never buzzed / best buzz / late buzz / premature">0 / 0 / 4 / 0 / 0' in html
    )
    assert 'id="bot-plot-data"' in html and "reliability" in html
    assert 'href="/analysis/bots/"' in client.get("/analysis/").content.decode()


class _Sink:
    """A stdout for call_command that keeps the text."""

    def __init__(self) -> None:
        self.text = ""

    def write(self, text: str) -> None:
        self.text += text

    def flush(self) -> None:
        pass
