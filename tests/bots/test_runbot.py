"""``manage.py runbot``: argument errors, and a replay bot and a cached TF-IDF bot playing the fake server."""

from __future__ import annotations

import asyncio
import io
from pathlib import Path

import pytest
from django.core.management import CommandError, call_command

from buzzer.bots.tfidf import TfidfGuesser
from tests.bots.fake_server import ME, MY_TEAM, Session, play, snapshot

RUNNER = """question_id,token_position,guess,confidence,buzz,correct
exp-1,0,Paris,0.2,0,0
exp-1,2,London,0.9,1,1
"""


def runbot(url: str, *args: str) -> str:
    """Run the command against the fake server behind the play ``url``; return its output."""
    out = io.StringIO()
    call_command(
        "runbot", "--url", url.split("/ws/")[0], "--code", "ABC123", "--token", "t/+", *args, stdout=out
    )
    assert "match over" in out.getvalue()
    return out.getvalue()


async def test_replay_bot_buzzes_at_the_recorded_token(tmp_path: Path) -> None:
    buzz_file = tmp_path / "run.buzz.csv"
    buzz_file.write_text(RUNNER, encoding="utf-8")

    async def script(s: Session) -> None:
        assert s.ws.request.path == "/ws/match/ABC123/play/?token=t/%2B"
        await s.ws.send(snapshot())
        await s.event("tossup_started", index=0, question_id=51, token_count=8, category="")
        await s.words(51, 0, "one", "two")
        await s.quiet()
        await s.words(51, 2, "three")
        buzz = await s.expect("buzz")
        assert (buzz["question_id"], buzz["token_index"]) == (51, 2)
        await s.event("buzz", question_id=51, player_id=ME, team_id=MY_TEAM, kind="bot", token_index=2)
        assert (await s.expect("answer"))["text"] == "London"
        await s.event(
            "buzz_ruled", question_id=51, player_id=ME, team_id=MY_TEAM, ruling="correct", points=10
        )
        await s.event("match_ended", scores={})

    question_map = tmp_path / "map.json"  # DB question id → source id, from the launcher's database
    question_map.write_text('{"51": "exp-1"}', encoding="utf-8")
    args = ("--bot", "replay", "--buzz-file", str(buzz_file), "--question-map", str(question_map))
    output, _ = await play(script, lambda url: asyncio.to_thread(runbot, url, *args))
    assert "'buzzes': 1, 'correct': 1" in output


async def test_tfidf_bot_from_model_cache(tmp_path: Path) -> None:
    cache = tmp_path / "model.joblib"
    records = [("polonium radium Sorbonne", "Marie Curie"), ("Tikal quetzal Peten", "Guatemala")]
    TfidfGuesser.train(records, calibrate=False).save(cache)

    async def script(s: Session) -> None:
        await s.ws.send(snapshot())
        await s.event("tossup_started", index=0, question_id=52, token_count=8, category="")
        await s.words(52, 0, "Tikal", "quetzal")
        assert (await s.expect("buzz"))["token_index"] <= 1
        await s.event("buzz", question_id=52, player_id=ME, team_id=MY_TEAM, kind="bot", token_index=1)
        assert (await s.expect("answer"))["text"] == "Guatemala"
        await s.event("match_ended", scores={})

    await play(
        script,
        lambda url: asyncio.to_thread(
            runbot,
            url,
            "--bot",
            "tfidf",
            "--model-cache",
            str(cache),
            "--threshold",
            "0.3",
            "--min-tokens",
            "0",
        ),
    )


def test_argument_errors(tmp_path: Path) -> None:
    base = ["--url", "ws://127.0.0.1:1", "--code", "X", "--token", "t"]
    with pytest.raises(CommandError, match="needs --train"):
        call_command("runbot", *base, "--bot", "tfidf")
    with pytest.raises(CommandError, match="needs --buzz-file"):
        call_command("runbot", *base, "--bot", "replay")
    broken = tmp_path / "b.buzz.csv"
    broken.write_text(
        "question_id,token_position,guess,confidence,buzz,correct\nq,x,g,0.1,1,0\n", encoding="utf-8"
    )
    with pytest.raises(CommandError, match=r"b\.buzz\.csv:2: 'token_position'"):
        call_command("runbot", *base, "--bot", "replay", "--buzz-file", str(broken))
