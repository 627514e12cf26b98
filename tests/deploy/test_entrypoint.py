"""The image's entrypoint (docker/entrypoint.py) run directly, without Docker, as compose runs it:
on a fresh scratch database it migrates and then serves (/healthz 200, /play/, static files from
STATIC_ROOT), the worker answers its compose health check, containers that start together migrate
one at a time, and a database that never answers is a clear exit."""

from __future__ import annotations

import json
import os
import socket
import subprocess
import sys
import time
import urllib.request
from pathlib import Path

import pytest
import yaml

from tools import launcher
from tools.databases import scratch_database

ROOT = Path(__file__).resolve().parents[2]
ENTRYPOINT = [sys.executable, str(ROOT / "docker" / "entrypoint.py")]

pytestmark = pytest.mark.e2e


def container_env(db_url: str, redis_url: str, **extra: str) -> dict[str, str]:
    return launcher.child_env(DATABASE_URL=db_url, REDIS_URL=redis_url, SECRET_KEY="entrypoint-test", **extra)


def get(url: str) -> tuple[int, bytes]:
    try:
        with urllib.request.urlopen(url, timeout=10) as response:
            return response.status, response.read()
    except urllib.error.HTTPError as exc:
        return exc.code, exc.read()


def migrations_pending(env: dict[str, str]) -> bool:
    done = subprocess.run(
        [sys.executable, "manage.py", "migrate", "--check"],
        cwd=ROOT,
        env=env,
        capture_output=True,
        timeout=120,
    )
    return done.returncode != 0


def uvicorn_workers(master: int) -> int:
    """Processes uvicorn's master spawned to serve (multiprocessing spawn children)."""
    children = subprocess.run(
        # -ww: unlimited width (without a terminal ps cuts lines at 80 columns, a long venv path
        # pushes "spawn_main" past them)
        ["ps", "-ww", "--ppid", str(master), "-o", "args="],
        capture_output=True,
        text=True,
        check=True,
    ).stdout
    return sum("spawn_main" in line for line in children.splitlines())


def test_web_migrates_a_fresh_database_then_serves(tmp_path: Path, redis_url: str) -> None:
    with scratch_database(tmp_path) as db_url:
        port = launcher.free_port()
        static = tmp_path / "static"
        env = container_env(
            db_url,
            redis_url,
            PORT=str(port),
            HOST="127.0.0.1",
            WEB_PROCESSES="2",
            # As the image: collected at build time, served from STATIC_ROOT only.
            STATIC_ROOT=str(static),
            SERVESTATIC_USE_FINDERS="0",
        )
        subprocess.run(
            [sys.executable, "manage.py", "collectstatic", "--noinput"],
            cwd=ROOT, env=env, check=True, capture_output=True, timeout=120,
        )  # fmt: skip
        (static / "frontend" / "sortable.js").unlink()  # the app folder's copy must not be served
        assert migrations_pending(env)
        log = tmp_path / "web.log"
        with open(log, "wb") as out:
            proc = subprocess.Popen([*ENTRYPOINT, "web"], cwd=tmp_path, env=env, stdout=out, stderr=out)
        try:
            launcher.wait_for_port(port, timeout=180, proc=proc)
            status, body = get(f"http://127.0.0.1:{port}/healthz")
            assert (status, json.loads(body)) == (200, {"database": "ok", "redis": "ok"}), log.read_text()
            status, body = get(f"http://127.0.0.1:{port}/play/")
            assert status == 200 and b"<html" in body.lower()
            assert get(f"http://127.0.0.1:{port}/static/frontend/play.js")[0] == 200
            assert get(f"http://127.0.0.1:{port}/static/admin/css/base.css")[0] == 200
            assert get(f"http://127.0.0.1:{port}/static/frontend/sortable.js")[0] == 404
            assert not migrations_pending(env)
            assert "Applying competition.0001_initial... OK" in log.read_text()
            assert uvicorn_workers(proc.pid) == 2  # WEB_PROCESSES
        finally:
            launcher.stop(proc)


def worker_health(env: dict[str, str], hostname: str) -> subprocess.CompletedProcess:
    """compose.yaml's health check of the worker, run as compose runs it (a shell, $HOSTNAME set)."""
    compose = yaml.safe_load((ROOT / "compose.yaml").read_text())
    kind, line = compose["services"]["worker"]["healthcheck"]["test"]
    assert kind == "CMD-SHELL"
    return subprocess.run(
        ["sh", "-c", line.replace("$$", "$")],
        cwd=ROOT,
        # As in the image, the environment's `celery` is on the PATH.
        env={**env, "HOSTNAME": hostname, "PATH": f"{Path(sys.executable).parent}:{env['PATH']}"},
        capture_output=True,
        text=True,
        timeout=60,
    )


def test_the_worker_starts_after_migrating_and_passes_its_compose_health_check(
    tmp_path: Path, redis_url: str
) -> None:
    with scratch_database(tmp_path) as db_url:
        env = container_env(db_url, redis_url)
        log = tmp_path / "worker.log"
        with open(log, "wb") as out:
            proc = subprocess.Popen([*ENTRYPOINT, "worker"], cwd=tmp_path, env=env, stdout=out, stderr=out)
        try:
            deadline = time.monotonic() + 120
            while (check := worker_health(env, socket.gethostname())).returncode != 0:
                assert proc.poll() is None, log.read_text()[-2000:]
                assert time.monotonic() < deadline, check.stdout + check.stderr
                time.sleep(2)
            assert "pong" in check.stdout
            assert not migrations_pending(env)
            assert worker_health(env, "no-such-container").returncode != 0  # the check can fail
        finally:
            launcher.stop(proc)


def test_containers_starting_together_migrate_one_at_a_time(tmp_path: Path, redis_url: str) -> None:
    if not os.environ.get("DATABASE_URL", "").startswith(("postgres://", "postgresql://")):
        pytest.skip("the migration lock is PostgreSQL's (compose runs PostgreSQL); DATABASE_URL is not")
    with scratch_database(tmp_path) as db_url:
        env = container_env(db_url, redis_url)
        both = [
            subprocess.Popen(
                [*ENTRYPOINT, sys.executable, "-c", "print('command ran')"],
                cwd=tmp_path,
                env=env,
                stdout=subprocess.PIPE,
                stderr=subprocess.PIPE,
                text=True,
            )
            for _ in range(2)
        ]
        results = [proc.communicate(timeout=300) for proc in both]
        for proc, (out, err) in zip(both, results, strict=True):
            assert proc.returncode == 0, err[-2000:]
            assert out.rstrip().endswith("command ran")
        applied = [out.count("... OK") for out, _ in results]
        assert min(applied) == 0 and max(applied) > 0  # one migrated, the other found nothing to do
        assert not migrations_pending(env)


def test_a_database_that_never_answers_is_a_clear_exit(tmp_path: Path, redis_url: str) -> None:
    nobody = f"postgres://tossup@127.0.0.1:{launcher.free_port()}/tossup"
    done = subprocess.run(
        [*ENTRYPOINT, "web"],
        cwd=tmp_path,
        env=container_env(nobody, redis_url, DB_WAIT_SECONDS="2"),
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert done.returncode == 1
    assert "entrypoint: waiting for the database" in done.stderr
    assert "entrypoint: no database after 2 s" in done.stderr


def test_without_a_command_it_prints_its_usage() -> None:
    done = subprocess.run(ENTRYPOINT, capture_output=True, text=True, timeout=30)
    assert done.returncode == 1 and "python docker/entrypoint.py web" in done.stderr
