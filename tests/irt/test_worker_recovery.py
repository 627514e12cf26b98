"""A Celery worker killed (SIGKILL) in the middle of a fit: once a worker is back, the broker
redelivers the unacknowledged task after its visibility timeout, the fit the dead worker left
``running`` is run again (its heartbeat went stale), and exactly one fit ends ``done``, within
2 minutes. Real worker subprocesses, real Redis, a database file shared with them."""

from __future__ import annotations

import sqlite3
import subprocess
import sys
import time
from pathlib import Path

import pytest

from tools import launcher
from tools.databases import scratch_database

pytestmark = pytest.mark.e2e
ROOT = Path(__file__).resolve().parents[2]

# ~130,000 responses: the fit takes several seconds, so the worker dies mid-fit.
IMPORT = """
import numpy as np
from irt import pipeline
from irt.importers import ImportedResponse
rng = np.random.default_rng(7)
rows = []
for s in range(608):
    kind = "human" if s < 600 else "bot"
    for i in range(400):
        if kind == "bot" or rng.random() < 0.5:
            rows.append(ImportedResponse(f"s{s}", kind, f"q{i}", bool(rng.random() < 0.5)))
print(pipeline.replace_imported("killset", "import:kill", rows))
"""


def manage(env: dict[str, str], *args: str) -> str:
    done = subprocess.run(
        [sys.executable, "manage.py", *args], cwd=ROOT, env=env, capture_output=True, text=True, timeout=300
    )
    assert done.returncode == 0, done.stderr[-2000:]
    return done.stdout


def fits(db_url: str) -> list[tuple[str, str, float | None]]:
    """(status, worker claim, heartbeat) of every fit of the set, read straight from the database."""
    query = "SELECT status, worker, heartbeat_at FROM irt_fit WHERE dataset = 'killset' ORDER BY id"
    if db_url.startswith("sqlite:///"):
        with sqlite3.connect(db_url.removeprefix("sqlite:///"), timeout=30) as conn:
            return list(conn.execute(query))
    import psycopg

    with psycopg.connect(db_url) as conn:
        return list(conn.execute(query))


def wait_for(pred, timeout: float, step: float = 0.1):
    end = time.monotonic() + timeout
    while time.monotonic() < end:
        value = pred()
        if value:
            return value
        time.sleep(step)
    return None


def test_a_fit_killed_with_its_worker_completes_once_within_two_minutes_of_a_new_worker(redis_url, tmp_path):
    with scratch_database(tmp_path) as db_url:
        env = launcher.child_env(REDIS_URL=redis_url, DATABASE_URL=db_url)
        manage(env, "migrate", "--noinput")
        assert int(manage(env, "shell", "-c", IMPORT).strip().splitlines()[-1]) > 100_000
        first = launcher.start_worker(env, log=tmp_path / "worker-1.log")
        second = None
        try:
            # Queued by a process of the scratch database's instance: its queue is the worker's.
            manage(env, "shell", "-c", "from irt.tasks import refit; refit.delay('killset')")
            running = wait_for(lambda: [f for f in fits(db_url) if f[0] == "running"], timeout=60)
            assert running, (tmp_path / "worker-1.log").read_text()[-2000:]
            time.sleep(1.0)  # well into the fit
            assert fits(db_url)[0][0] == "running"
            first.kill()  # SIGKILL: no ack, no cleanup; the fit row stays "running"
            first.wait(timeout=10)
            dead_claim = fits(db_url)[0][1]

            second = launcher.start_worker(env, log=tmp_path / "worker-2.log")
            back_at = time.monotonic()
            done = wait_for(lambda: [f for f in fits(db_url) if f[0] == "done"], timeout=120, step=0.5)
            recovered_in = time.monotonic() - back_at
            assert done, (tmp_path / "worker-2.log").read_text()[-3000:]
            time.sleep(2.0)  # a duplicate delivery, had there been one, would show by now
            rows = fits(db_url)
        finally:
            launcher.stop(first, second)
    print(f"killed fit done {recovered_in:.1f}s after the new worker started")
    assert recovered_in < 120
    assert [r[0] for r in rows] == ["done"]  # one fit row, done once
    assert rows[0][1] != dead_claim  # the new worker ran it again
