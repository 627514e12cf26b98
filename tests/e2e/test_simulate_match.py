"""End to end: ``manage.py simulate_match`` on real tossups starts a real uvicorn server
(Redis channel layer) and a real Celery worker, plays simulated humans and the TF-IDF bot
as real websocket clients, waits for the IRT task and writes a consistent report."""

from __future__ import annotations

import json
import math
import subprocess
import sys
from pathlib import Path

import pytest

from tools import launcher
from tools.databases import scratch_database

pytestmark = pytest.mark.e2e
ROOT = Path(__file__).resolve().parents[2]


def test_simulated_match_on_real_tossups_reports_consistently(shared_data, redis_url, tmp_path):
    report_path = tmp_path / "report.json"
    with scratch_database(tmp_path) as db_url:
        # As the headline command: the set by name alone, read from the shared data's
        # qbreader dump (which also trains the bot).
        env = launcher.child_env(
            REDIS_URL=redis_url, DATABASE_URL=db_url, TOSSUP_SHARED_DATA=str(shared_data)
        )
        cmd = [
            sys.executable, "manage.py", "simulate_match",
            "--set", "2021-PACE", "--tossups", "5",
            "--teams", "2", "--players-per-team", "3", "--bot", "tfidf", "--bot-train-max-year", "2020",
            "--bot-delay-ms", "300", "--seed", "3", "--report", str(report_path), "--timeout", "600",
        ]  # fmt: skip
        done = subprocess.run(cmd, cwd=ROOT, env=env, capture_output=True, text=True, timeout=1200)
    assert done.returncode == 0, done.stdout[-3000:] + done.stderr[-3000:]
    report = json.loads(report_path.read_text())
    assert report["question_set"] == "2021-PACE", report["question_set"]

    teams = {"Team 1", "Team 2", "tfidf"}
    assert set(report["scoreboard"]) == teams
    for team in teams:
        tossup_points = sum(b["points"] for b in report["buzzes"] if b["team"] == team)
        assert report["scoreboard"][team] == tossup_points + report["bonus_points"][team]

    assert report["buzzes"], "five real tossups and six players produced no buzz"
    played = {q["question_id"] for q in report["questions"]}
    assert len(played) == 5
    for b in report["buzzes"]:
        assert b["question_id"] in played
        assert 0 <= b["token_index"] < b["token_count"]
        assert b["kind"] in ("human", "bot")
        assert b["ruling"] in ("correct", "wrong", "timeout", "no_penalty")
        assert b["verdict"] in ("accept", "prompt", "reject", "needs_moderator")
        assert b["revealed_at"] <= b["received_at"] <= b["accepted_at"]
        if b["kind"] == "bot":
            # the reaction delay: no bot buzz takes effect within 300 ms of its token's reveal
            assert b["accepted_at"] - b["revealed_at"] >= 0.3 - 1e-6
    for race in report["races"]:
        assert race["winner"] in [c["player_id"] for c in race["candidates"]]

    humans = [r for r in report["leaderboard"] if r["kind"] == "human"]
    assert len(humans) == 6 and all("true_skill" in r for r in humans)
    assert any(r["kind"] == "bot" for r in report["leaderboard"])
    assert all(math.isfinite(r["skill"]) for r in report["leaderboard"])
    for q in report["questions"]:
        assert q["mu"] is None or -1.0 <= q["mu"] <= 1.0
        assert q["kappa"] is None or 0.0 <= q["kappa"] <= 1.0
