"""Two Tossup instances on one Redis (two demos on a machine, a test run beside an event) never
share work: each instance — the processes serving one database — keeps its channel-layer groups,
Celery queues, cache, driver leases and presence under its own prefix (``settings.REDIS_PREFIX``).

Both instances below have a match with the same id (1, in a fresh database each), so their
channel-layer groups would be the same without the prefix."""

from __future__ import annotations

import asyncio
import json
import subprocess
import time
from pathlib import Path
from typing import Any

import redis
from websockets.asyncio.client import connect

from config.settings import instance_name
from tests.support.live import BASE_DIR, live_server, manage
from tools import launcher


def test_an_instance_is_named_by_its_database():
    sqlite = {"ENGINE": "django.db.backends.sqlite3", "NAME": "/srv/a/tossup.sqlite3"}
    assert instance_name(sqlite) == instance_name(dict(sqlite))  # every process of one instance
    assert instance_name(sqlite) != instance_name({**sqlite, "NAME": "/srv/b/tossup.sqlite3"})
    pg = {"ENGINE": "django.db.backends.postgresql", "HOST": "db", "PORT": 5432, "NAME": "tossup"}
    assert instance_name(pg) != instance_name({**pg, "HOST": "db2"})
    assert len(instance_name(pg)) == 12


def prefix_of(env: dict[str, str]) -> str:
    """The REDIS_PREFIX the instance of ``env`` computes (its own settings, in a process of its own)."""
    code = "from django.conf import settings; print(settings.REDIS_PREFIX)"
    return manage(env, "shell", "-c", code).strip().splitlines()[-1]  # after shell's own notices


async def frames(url: str, seconds: float) -> list[dict[str, Any]]:
    """The event frames a spectator of ``url`` receives in ``seconds`` (after its snapshot)."""
    out: list[dict[str, Any]] = []
    async with connect(url) as ws:
        assert json.loads(await ws.recv())["type"] == "snapshot"
        end = time.monotonic() + seconds
        while (left := end - time.monotonic()) > 0:
            try:
                frame = json.loads(await asyncio.wait_for(ws.recv(), left))
            except TimeoutError:
                break
            if frame["type"] == "event":
                out.append(frame)
    return out


async def start(url: str) -> None:
    async with connect(url) as ws:
        assert json.loads(await ws.recv())["type"] == "snapshot"
        await ws.send(json.dumps({"type": "command", "name": "start", "ref": "s"}))
        while (frame := json.loads(await ws.recv())).get("ref") != "s":
            pass
        assert frame["type"] == "ack", frame


def test_two_instances_on_one_redis_never_share_broadcasts_or_queued_work(tmp_path: Path, redis_url: str):
    setup = lambda env: manage(env, "import_questions", "--demo")  # noqa: E731
    for name in ("a", "b"):
        (tmp_path / name).mkdir()
    with (
        live_server(tmp_path / "a", redis_url, setup) as (url_a, env_a),
        live_server(tmp_path / "b", redis_url, setup) as (url_b, env_b),
    ):
        prefix_a, prefix_b = prefix_of(env_a), prefix_of(env_b)
        assert prefix_a != prefix_b and prefix_a.startswith("tossup:")
        matches = [
            json.loads(manage(env, "create_match", "--teams", "Red,Blue", "--tossups", "2", "--json"))
            for env in (env_a, env_b)
        ]
        ask = "from competition.models import Match; print(Match.objects.get().id)"
        ids = [manage(env, "shell", "-c", ask).strip().splitlines()[-1] for env in (env_a, env_b)]
        assert ids[0] == ids[1]  # the same group name but for the prefix
        ws_a, ws_b = (u.replace("http://", "ws://") for u in (url_a, url_b))
        (code_a, token_a), code_b = (matches[0]["code"], matches[0]["moderator_token"]), matches[1]["code"]

        async def scenario() -> tuple[list[dict[str, Any]], list[dict[str, Any]]]:
            watch_a = asyncio.create_task(frames(f"{ws_a}/ws/match/{code_a}/watch/", 3.0))
            watch_b = asyncio.create_task(frames(f"{ws_b}/ws/match/{code_b}/watch/", 3.0))
            await asyncio.sleep(0.5)
            await start(f"{ws_a}/ws/match/{code_a}/moderate/?token={token_a}")
            return await watch_a, await watch_b

        seen_a, seen_b = asyncio.run(scenario())
        assert "match_started" in [f["event"] for f in seen_a]  # A's spectator sees A's match start
        assert seen_b == []  # B's spectator of B's match 1 hears nothing of it

        # Celery: a worker of B takes B's tasks and never A's.
        broker = redis.Redis.from_url(redis_url)
        send = "from irt.tasks import refit; refit.delay('nobody-here')"
        for env in (env_a, env_b):
            manage(env, "shell", "-c", send)
        assert broker.llen(f"{prefix_a}irt") == 1 and broker.llen(f"{prefix_b}irt") == 1
        worker = subprocess.Popen(
            launcher.worker_command(),
            cwd=BASE_DIR,
            env=env_b,
            stdout=subprocess.DEVNULL,
            stderr=subprocess.STDOUT,
        )
        try:
            end = time.monotonic() + 60
            while broker.llen(f"{prefix_b}irt") and time.monotonic() < end:
                time.sleep(0.2)
            assert broker.llen(f"{prefix_b}irt") == 0, "B's worker never took B's task"
            time.sleep(2)  # time to take A's too, were it in reach
            assert broker.llen(f"{prefix_a}irt") == 1
        finally:
            launcher.stop(worker)
            broker.delete(f"{prefix_a}irt")
