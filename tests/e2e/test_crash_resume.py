"""A server process killed mid-tossup (SIGKILL, right after it acknowledged a buzz) loses
nothing: a new process serves the same match from the database, the buzz is still the
one being answered, the reading position is kept, and the answer is ruled as usual."""

from __future__ import annotations

import asyncio
import json
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
import websockets

from tools import launcher
from tools.databases import scratch_database

pytestmark = pytest.mark.e2e
ROOT = Path(__file__).resolve().parents[2]

CREATE = """
import json
from competition import services
from competition.importers import import_demo_packet
from competition.models import QuestionSet
counts = import_demo_packet()
qset = QuestionSet.objects.get(name=next(iter(counts["sets"])))
tossups = [t.id for p in qset.packets.order_by("id") for t in p.tossups.order_by("number")][:2]
match = services.create_match(name="crash", tossup_ids=tossups, preset="naqt", teams=["Red", "Blue"],
                              config={"wpm": 240, "auto_rule": True, "answer_window": 20})
player = services.join_match(code=match.join_code, name="ada", team="Red")
print(json.dumps({"code": match.join_code, "moderator": match.moderator_token, "player": player.token}))
"""

REPORT = """
import json
from competition.models import Buzz, MatchEvent
b = Buzz.objects.get()
seqs = list(MatchEvent.objects.order_by("seq").values_list("seq", flat=True))
print(json.dumps({"ruling": b.ruling, "points": b.points, "token_index": b.token_index, "seqs": seqs}))
"""


def manage(env: dict[str, str], *args: str) -> str:
    done = subprocess.run(
        [sys.executable, "manage.py", *args], cwd=ROOT, env=env, capture_output=True, text=True, timeout=300
    )
    assert done.returncode == 0, done.stderr[-2000:]
    return done.stdout


async def frames_until(ws: Any, pred, timeout: float = 20.0) -> dict[str, Any]:
    async with asyncio.timeout(timeout):
        while True:
            frame = json.loads(await ws.recv())
            if pred(frame):
                return frame


def event(name: str):
    return lambda f: f.get("type") == "event" and f["event"] == name


async def play_until_killed(base: str, ids: dict[str, str], server: subprocess.Popen) -> dict[str, Any]:
    async with (
        websockets.connect(f"{base}/ws/match/{ids['code']}/moderate/?token={ids['moderator']}") as mod,
        websockets.connect(f"{base}/ws/match/{ids['code']}/play/?token={ids['player']}") as ada,
    ):
        await frames_until(mod, lambda f: f["type"] == "snapshot")
        await frames_until(ada, lambda f: f["type"] == "snapshot")
        await mod.send(json.dumps({"type": "command", "name": "start"}))
        started = await frames_until(ada, event("tossup_started"))
        words = await frames_until(ada, lambda f: event("words")(f) and f["data"]["start"] >= 5)
        shown = words["data"]["start"] + len(words["data"]["words"]) - 1
        qid = started["data"]["question_id"]
        await ada.send(json.dumps({"type": "buzz", "question_id": qid, "token_index": shown, "ref": "b"}))
        ack = await frames_until(ada, lambda f: f["type"] in ("ack", "error"))
        assert ack["type"] == "ack"
        await frames_until(ada, event("buzz"))  # the buzz won: it is being answered
        server.kill()  # SIGKILL: no shutdown, no flush
        server.wait(timeout=10)
    return {"question_id": qid, "shown": shown}


async def resume_and_answer(base: str, ids: dict[str, str], before: dict[str, Any]) -> dict[str, Any]:
    async with websockets.connect(f"{base}/ws/match/{ids['code']}/play/?token={ids['player']}") as ada:
        snap = await frames_until(ada, lambda f: f["type"] == "snapshot")
        tossup = snap["state"]["tossup"]
        assert tossup["question_id"] == before["question_id"]
        assert tossup["buzz"]["player_id"] == snap["state"]["you"]["player_id"]
        assert len(tossup["words_revealed"]) == before["shown"] + 1  # reading stopped at the buzz
        await ada.send(
            json.dumps({"type": "answer", "question_id": before["question_id"], "text": "Moby-Dick"})
        )
        return (await frames_until(ada, event("buzz_ruled")))["data"]


def test_a_killed_server_loses_nothing_and_the_match_resumes(redis_url, tmp_path):
    with scratch_database(tmp_path) as db_url:
        env = launcher.child_env(REDIS_URL=redis_url, DATABASE_URL=db_url)
        manage(env, "migrate", "--noinput")
        ids = json.loads(manage(env, "shell", "-c", CREATE).strip().splitlines()[-1])
        port = launcher.free_port()
        base = f"ws://127.0.0.1:{port}"
        first = launcher.start_server(port, env, log=tmp_path / "server-1.log")
        try:
            before = asyncio.run(play_until_killed(base, ids, first))
        finally:
            launcher.stop(first)
        second = launcher.start_server(port, env, log=tmp_path / "server-2.log")
        try:
            ruled = asyncio.run(resume_and_answer(base, ids, before))
        finally:
            launcher.stop(second)
        report = json.loads(manage(env, "shell", "-c", REPORT).strip().splitlines()[-1])
    assert (ruled["ruling"], ruled["token_index"]) == ("correct", before["shown"])
    assert report["ruling"] == "correct" and report["points"] == ruled["points"] > 0
    assert report["token_index"] == before["shown"]
    assert report["seqs"] == list(range(1, len(report["seqs"]) + 1))  # nothing lost, nothing twice
