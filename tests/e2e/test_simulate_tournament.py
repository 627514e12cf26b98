"""End to end: ``manage.py simulate_tournament`` on real packets starts a real uvicorn server (Redis
channel layer) and Celery worker; teams of two simulated humans and a TF-IDF AI player play a round
robin and a playoff final as real websocket clients, the games of a round in parallel rooms. The
server schedules the final when the round robin ends; the standings equal those recomputed from the
exported QBJ file (a smaller tournament than the 6-team run the command defaults to, for CI time)."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from competition import standings as st
from competition import tournaments
from formats import qbj as qbjfmt
from tools import launcher
from tools.databases import scratch_database

pytestmark = pytest.mark.e2e
ROOT = Path(__file__).resolve().parents[2]


def test_simulated_tournament_standings_equal_the_qbj_recomputation(shared_data, redis_url, tmp_path):
    packets = shared_data / "packets" / "qbreader_packets_2012_2022.jsonl.gz"
    report_path, qbj_path = tmp_path / "report.json", tmp_path / "t.qbj"
    with scratch_database(tmp_path) as db_url:
        env = launcher.child_env(REDIS_URL=redis_url, DATABASE_URL=db_url)
        cmd = [
            sys.executable, "manage.py", "simulate_tournament",
            "--packets", str(packets), "--set", "2021-PACE", "--teams", "4", "--humans-per-team", "2",
            "--playoff", "2", "--tossups", "3", "--bot", "tfidf",
            "--bot-train", str(packets), "--bot-train-max-year", "2020", "--seed", "5",
            "--report", str(report_path), "--qbj", str(qbj_path), "--timeout", "600", "--no-progress",
        ]  # fmt: skip
        done = subprocess.run(cmd, cwd=ROOT, env=env, capture_output=True, text=True, timeout=1200)
    assert done.returncode == 0, done.stdout[-3000:] + done.stderr[-3000:]
    report = json.loads(report_path.read_text())

    games = report["games"]
    assert [g["phase"] for g in games].count("prelim") == 6 and [g["phase"] for g in games][-1] == "playoff"
    for rnd in {g["round"] for g in games}:  # nobody plays twice in a round; a round's games in parallel
        teams = [t for g in games if g["round"] == rnd for t in (g["home"], g["away"])]
        assert len(teams) == len(set(teams))
    final = games[-1]
    assert report["champion"] in (final["home"], final["away"])
    assert final["score"][report["champion"]] >= max(final["score"].values())

    # recompute here too, from the file, independently of the command's own check
    recomputed = st.compute(tournaments.results_from_qbj(qbjfmt.read_qbj(qbj_path)))
    assert [t.row() for t in recomputed.teams] == report["standings"]["teams"]
    assert [p.row() for p in recomputed.players] == report["standings"]["players"]
    assert report["standings_equal_qbj"] is True
    rows = report["standings"]["teams"]
    assert sum(r["wins"] for r in rows) + sum(r["ties"] for r in rows) / 2 == len(games)
    assert {p["player"].split()[-1] for p in report["standings"]["players"]} >= {"bot"}
    assert report["fit"]["scope"].startswith("tournament:") and report["fit"]["n_responses"] > 0
    assert "equal those recomputed" in done.stdout
