"""``./run demo`` as a fresh clone with the shared data runs it: no ``var/`` (no model cache, no logs
folder), SQLite, the qbreader dump present — the demo's TF-IDF bot trains, saves its model into a
folder nothing created yet, connects to the demo match (the moderator's presence frames say
"connected") and shows on the dashboard's "Bots the server runs" as running; SIGTERM stops every
process. Training on the whole dump takes minutes, so the bot trains on a slice of it
(``TOSSUP_BOT_TFIDF_TRAIN``), which is the only difference from a user's first run."""

from __future__ import annotations

import asyncio
import gzip
import json
import os
import re
import signal
import subprocess
import sys
import time
import urllib.request
from pathlib import Path
from typing import Any

import pytest
from websockets.asyncio.client import connect

from tests.support.live import BASE_DIR
from tools import launcher

pytestmark = pytest.mark.e2e

DUMP = Path("packets") / "qbreader_packets_2012_2022.jsonl.gz"
SLICE_YEARS = (2019, 2020)  # the reference bot trains up to 2020 and holds its last year out
SLICE_TOSSUPS = 1500  # per year


def training_slice(shared_data: Path, out: Path) -> Path:
    """The first SLICE_TOSSUPS tossups of each of SLICE_YEARS in the dump (and the bonuses among them)."""
    tossups = dict.fromkeys(SLICE_YEARS, 0)
    with gzip.open(shared_data / DUMP, "rt", encoding="utf-8") as src, gzip.open(out, "wt") as dst:
        for line in src:
            item = json.loads(line)
            year = item.get("year")
            if year in tossups and tossups[year] < SLICE_TOSSUPS:
                dst.write(line)
                tossups[year] += item["type"] == "tossup"
    assert set(tossups.values()) == {SLICE_TOSSUPS}, tossups
    return out


def printed(path: Path, pattern: str, proc: subprocess.Popen, timeout: float) -> re.Match[str]:
    """The first match of ``pattern`` in the demo's output, waiting for it."""
    end = time.monotonic() + timeout
    while time.monotonic() < end:
        found = re.search(pattern, path.read_text(errors="replace"))
        if found:
            return found
        assert proc.poll() is None, path.read_text()[-3000:]
        time.sleep(0.2)
    raise AssertionError(f"{pattern!r} never printed:\n{path.read_text()[-3000:]}")


async def bot_connected(ws_url: str, bot_id: int, timeout: float, launch: Any) -> list[str]:
    """Waits until the moderator's presence frames say the bot's seat is connected; the names
    of the match's teams (its snapshot). Fails at once when ``launch()`` (the dashboard's view of
    the bot process) says it failed."""
    async with asyncio.timeout(timeout):
        while True:
            try:
                async with connect(ws_url) as ws:
                    teams: list[str] = []
                    async for message in ws:
                        frame = json.loads(message)
                        if frame["type"] == "snapshot":
                            teams = [t["name"] for t in frame["state"]["teams"]]
                        elif frame["type"] == "presence":
                            states = {s["player_id"]: s["state"] for s in frame["seats"]}
                            if states.get(bot_id) == "connected":
                                return teams
                            state = await asyncio.to_thread(launch)
                            assert state["state"] != "failed", state
            except OSError:
                await asyncio.sleep(0.5)  # the server is still starting


def bots(base: str, code: str, token: str) -> dict[str, Any]:
    """The dashboard's "Bots the server runs" (its JSON API)."""
    ask = urllib.request.Request(f"{base}/api/match/{code}/bots", headers={"X-Moderator-Token": token})
    with urllib.request.urlopen(ask, timeout=10) as res:
        return dict(json.loads(res.read()))


def test_the_demo_on_a_fresh_clone_seats_its_bot(shared_data: Path, tmp_path: Path, redis_url: str) -> None:
    var = tmp_path / "var"  # as a fresh clone: no var/, so no var/cache for the model
    train = training_slice(shared_data, tmp_path / "slice.jsonl.gz")
    port = launcher.free_port()
    env = launcher.child_env(
        DATABASE_URL=f"sqlite:///{tmp_path / 'tossup.sqlite3'}",  # the demo's own database, as a user's
        REDIS_URL=redis_url,
        TOSSUP_VAR_DIR=str(var),
        TOSSUP_BOT_TFIDF_TRAIN=str(train),
        TOSSUP_SHARED_DATA=str(shared_data),
    )
    env.pop("TOSSUP_BOT_CACHE_DIR", None)
    out = tmp_path / "demo.out"
    with open(out, "wb") as sink:
        demo = subprocess.Popen(
            [sys.executable, "manage.py", "demo", "--port", str(port)],
            cwd=BASE_DIR,
            env=env,
            stdout=sink,
            stderr=subprocess.STDOUT,
            start_new_session=True,
        )
    try:
        started = time.monotonic()
        url = printed(out, r"Moderator dashboard: (\S+)", demo, 120).group(1)
        code, token = re.search(r"/moderator/([^/]+)/\?token=([^&\s]+)", url).groups()
        assert "TF-IDF bot: trained on slice.jsonl.gz up to 2020" in out.read_text()
        assert "(teams: Team A, Team B)" in out.read_text()
        base = f"http://127.0.0.1:{port}"
        launcher.wait_for_port(port, timeout=120, proc=demo)
        seats = bots(base, code, token)["seats"]
        assert [(s["name"], s["launch"]["guesser"]) for s in seats] == [("TF-IDF bot", "tfidf")]
        ws = f"ws://127.0.0.1:{port}/ws/match/{code}/moderate/?token={token}&presence=1"
        launch = lambda: bots(base, code, token)["seats"][0]["launch"]  # noqa: E731
        teams = asyncio.run(bot_connected(ws, seats[0]["player_id"], 400, launch))
        connected_after = time.monotonic() - started
        state = launch()
        assert (state["state"], state["restarts"]) == ("running", 0), state
        assert list((var / "cache").glob("tfidf-slice-2020.joblib")), list(var.rglob("*"))
        assert teams == ["Team A", "Team B", "Computer"]  # not a team named after the bot
        print(f"fresh-clone demo: bot connected {connected_after:.1f} s after the start")
    finally:
        os.killpg(demo.pid, signal.SIGTERM)
        demo.wait(timeout=60)
    assert demo.returncode in (0, 128 + signal.SIGTERM), out.read_text()[-2000:]
    leftovers = subprocess.run(["pgrep", "-f", f"127.0.0.1:{port}"], capture_output=True, text=True).stdout
    assert not leftovers.strip(), leftovers  # no server, worker or bot outlives the demo
