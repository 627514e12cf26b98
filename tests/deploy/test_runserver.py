"""`manage.py runserver` serves the ASGI application (daphne's runserver), so the live pages'
websockets work on the development server too, and /healthz says which service is down."""

from __future__ import annotations

import asyncio
import json
import subprocess
import sys
from pathlib import Path

import pytest
import websockets
from django.test import Client, override_settings

from tools import launcher
from tools.databases import scratch_database

ROOT = Path(__file__).resolve().parents[2]


def manage(env: dict[str, str], *args: str) -> str:
    done = subprocess.run(
        [sys.executable, "manage.py", *args], cwd=ROOT, env=env, capture_output=True, text=True, timeout=300
    )
    assert done.returncode == 0, done.stderr[-2000:]
    return done.stdout


async def first_frame(url: str) -> dict:
    async with websockets.connect(url) as ws, asyncio.timeout(20):
        return json.loads(await ws.recv())


@pytest.mark.e2e
def test_a_websocket_connects_through_runserver(tmp_path: Path, redis_url: str) -> None:
    with scratch_database(tmp_path) as db_url:
        env = launcher.child_env(DATABASE_URL=db_url, REDIS_URL=redis_url)
        manage(env, "migrate", "--noinput")
        match = json.loads(manage(env, "create_match", "--packet", "demo", "--teams", "Red,Blue", "--json"))
        port = launcher.free_port()
        log = tmp_path / "runserver.log"
        with open(log, "wb") as out:
            proc = subprocess.Popen(
                [sys.executable, "manage.py", "runserver", f"127.0.0.1:{port}", "--noreload"],
                cwd=ROOT,
                env=env,
                stdout=out,
                stderr=out,
            )
        try:
            launcher.wait_for_port(port, timeout=60, proc=proc)
            frame = asyncio.run(first_frame(f"ws://127.0.0.1:{port}/ws/match/{match['code']}/watch/"))
            assert frame["type"] == "snapshot", frame
            assert [t["name"] for t in frame["state"]["teams"]] == ["Red", "Blue"]
        finally:
            launcher.stop(proc)
        assert "ASGI/Daphne" in log.read_text()


@pytest.mark.django_db
def test_healthz_answers_200_when_the_database_and_redis_answer() -> None:
    response = Client().get("/healthz")
    assert response.status_code == 200
    assert response.json() == {"database": "ok", "redis": "ok"}


@pytest.mark.django_db
def test_healthz_answers_503_naming_redis_when_it_is_down() -> None:
    with override_settings(REDIS_URL=f"redis://127.0.0.1:{launcher.free_port()}/0"):
        response = Client().get("/healthz")
    assert response.status_code == 503
    assert response.json() == {"database": "ok", "redis": "error: ConnectionError"}
