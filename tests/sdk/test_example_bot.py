"""The SDK against a real ``manage.py serve`` (uvicorn, Celery, Redis, the scratch database): the
20-line example bot of docs/BOTS.md, extracted from the page and run with the installed ``tossup-bot``
command, plays two tossups and a bonus; and an SDK bot keeps playing across a server restart."""

from __future__ import annotations

import asyncio
import json
import re
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from tossup_bot import load_guesser, play_url, run_bot

from tests.faults.conftest import Bystander, Served, is_event, serve

__all__ = ["serve"]  # the fixture, shared with tests/faults

pytestmark = pytest.mark.e2e
ROOT = Path(__file__).resolve().parents[2]
# Clue words of the demo packet's first two tossups and first two bonuses (checked below).
NOTES = {
    "Pequod": "Moby-Dick",
    "Runnymede": "Magna Carta",
    "Yorick": "Hamlet",
    "Iago": "Othello",
    "Cordelia": "King Lear",
    "stormed this fortress": "Bastille",
    "Committee of Public Safety": "Robespierre",
    "execution device": "guillotine",
}
# Fast and unattended: the judge rules at once, nobody needs to press Next.
CONFIG = {"wpm": 1500, "dead_time": 1.0, "between_questions": 0.3, "auto_rule": True, "unattended": True}


def example_source() -> str:
    """The python block after ``<!-- example-bot -->`` in docs/BOTS.md."""
    page = (ROOT / "docs" / "BOTS.md").read_text(encoding="utf-8")
    found = re.search(r"<!-- example-bot -->\s*```python\n(.*?)```", page, re.S)
    assert found, "docs/BOTS.md lost its example bot block"
    return found.group(1)


def write_example(tmp_path: Path) -> tuple[Path, Path]:
    packet = json.loads((ROOT / "competition" / "demo_data" / "demo_packet.json").read_text())
    text = json.dumps(packet["packets"][0]["tossups"][:2] + packet["packets"][0]["bonuses"][:2])
    missing = [clue for clue in NOTES if clue not in text]
    assert not missing, f"the demo packet changed: {missing} no longer in its first questions"
    bot, notes = tmp_path / "keyword_bot.py", tmp_path / "notes.json"
    bot.write_text(example_source(), encoding="utf-8")
    notes.write_text(json.dumps(NOTES), encoding="utf-8")
    return bot, notes


def bot_results(moderator: Bystander, player_id: int) -> tuple[list[Any], list[str], list[str]]:
    """(tossups started, the bot's tossup rulings, the bot's bonus part rulings) as the moderator's
    dashboard connection received them."""
    started = [e["data"]["question_id"] for e in moderator.events("tossup_started")]
    tossups = [
        e["data"]["ruling"] for e in moderator.events("buzz_ruled") if e["data"]["player_id"] == player_id
    ]
    parts = [
        e["data"]["ruling"]
        for e in moderator.events("bonus_part_ruled")
        if e["data"]["player_id"] == player_id
    ]
    return started, tossups, parts


async def wait_for_line(lines: list[str], wanted: Callable[[str], bool], timeout: float = 60.0) -> None:
    async with asyncio.timeout(timeout):
        while not any(wanted(line) for line in lines):
            await asyncio.sleep(0.05)


def test_the_example_is_about_twenty_lines() -> None:
    code = [line for line in example_source().splitlines() if line.strip()]
    assert len(code) <= 20


async def test_the_docs_example_bot_plays_two_tossups_and_a_bonus(serve, tmp_path: Path) -> None:
    srv: Served = serve()
    match = srv.create_match(bots=("keyword",), tossups=2, config=CONFIG)
    seat = match["bots"][0]
    bot_file, notes = write_example(tmp_path)
    command = Path(sys.executable).with_name("tossup-bot")
    assert command.exists(), "the SDK is not installed in this venv: ./run installs it (pip install -e sdk)"
    proc = await asyncio.create_subprocess_exec(
        str(command), "--url", f"ws://127.0.0.1:{srv.port}", "--code", match["code"],
        f"--token={seat['token']}", "--guesser", f"{bot_file}:KeywordGuesser", "--option", f"notes={notes}",
        stdout=asyncio.subprocess.PIPE, stderr=asyncio.subprocess.STDOUT,
    )  # fmt: skip
    assert proc.stdout is not None
    lines: list[str] = []

    async def read() -> None:
        assert proc.stdout is not None
        async for raw in proc.stdout:
            lines.append(raw.decode().rstrip())

    reader = asyncio.create_task(read())
    moderator = await Bystander(srv.ws_url(match["code"], "moderate", match["moderator_token"])).start()
    try:
        await wait_for_line(lines, lambda line: line == "connected", 30)
        await moderator.send({"type": "command", "name": "start"})
        await moderator.wait_for(is_event("match_ended"), timeout=120)
        assert await asyncio.wait_for(proc.wait(), 30) == 0, "\n".join(lines)
        await reader
    finally:
        await moderator.close()
        if proc.returncode is None:
            proc.kill()
    output = "\n".join(lines)
    assert "match over" in output
    started, tossups, parts = bot_results(moderator, seat["player_id"])
    assert len(started) == 2 and tossups == ["correct", "correct"], output
    assert parts and parts.count("correct") == len(parts), output  # every part from the notes
    assert "the clue 'Yorick'" in output  # the bonus explanation reached the bot's log


async def test_an_sdk_bot_keeps_playing_across_a_server_restart(serve, tmp_path: Path) -> None:
    srv: Served = serve()
    match = srv.create_match(bots=("keyword",), tossups=2, config=CONFIG)
    seat = match["bots"][0]
    bot_file, notes = write_example(tmp_path)
    guesser = load_guesser(f"{bot_file}:KeywordGuesser", {"notes": str(notes)})
    lines: list[str] = []
    url = play_url(f"ws://127.0.0.1:{srv.port}", match["code"], seat["token"])
    bot = asyncio.create_task(run_bot(url, guesser, log=lines.append))
    moderator = await Bystander(
        srv.ws_url(match["code"], "moderate", match["moderator_token"]), give_up_after=90
    ).start()
    try:
        await wait_for_line(lines, lambda line: line == "connected", 30)
        await moderator.send({"type": "command", "name": "start"})
        # The server dies once the bot has won the first tossup, and comes back 2 s later.
        await moderator.wait_for(
            lambda f: is_event("buzz_ruled")(f) and f["data"]["player_id"] == seat["player_id"], timeout=60
        )
        await asyncio.to_thread(srv.kill_server)
        await wait_for_line(lines, lambda line: line.startswith("connection lost"), 30)
        await asyncio.sleep(2.0)
        await asyncio.to_thread(srv.start_server)
        await wait_for_line(lines, lambda line: line == "reconnected", 60)
        stats = await asyncio.wait_for(bot, 120)
    finally:
        await moderator.close()
        bot.cancel()
    started, tossups, _ = bot_results(moderator, seat["player_id"])
    assert len(started) == 2 and tossups == ["correct", "correct"], lines  # the second after the restart
    assert stats["correct"] >= 1, lines
