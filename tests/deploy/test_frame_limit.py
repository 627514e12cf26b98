"""The 16 KB frame limit (``buzzer.protocol.MAX_FRAME_BYTES``) holds however the application is
served: plain ``uvicorn config.asgi:application`` (no launcher flags: uvicorn's own limit is
16 MiB) and daphne (its own: 1 MiB), as Channels' deployment docs run it. A player sends a 10 MB
frame, a 17 KB one, and one of 16 KB and a little more in fewer than 4,100 characters — each a
buzz padded, which would be applied if it were parsed: each connection is closed with 1009 and nothing is stored; the server stays up, a
watcher keeps receiving the words, and a normal buzz is acknowledged and stored.
"""

from __future__ import annotations

import asyncio
import json
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import pytest
import websockets

from buzzer.consumers import TOO_LARGE
from buzzer.protocol import MAX_FRAME_BYTES
from tests.faults.clients import open_ws
from tests.faults.conftest import Bystander, Served, is_event
from tools import launcher
from tools.databases import scratch_database

pytestmark = pytest.mark.e2e

BIN = Path(sys.executable).parent
SERVERS = {
    "uvicorn": lambda port: [
        sys.executable, "-m", "uvicorn", "config.asgi:application", "--host", "127.0.0.1", "--port", str(port),
    ],
    "daphne": lambda port: [str(BIN / "daphne"), "-b", "127.0.0.1", "-p", str(port), "config.asgi:application"],
    "launcher": launcher.server_command,  # for comparison: its uvicorn refuses them itself
}  # fmt: skip
EMOJI = "\U0001f600"  # 4 bytes in UTF-8


def padded(frame: dict[str, Any], size: int) -> str:
    """``frame`` as JSON padded with spaces to ``size`` bytes (still valid JSON)."""
    text = json.dumps(frame)
    return text[:-1] + " " * (size - len(text)) + "}"


def in_emoji(frame: dict[str, Any], size: int) -> str:
    """``frame`` as JSON with a ``pad`` field of emoji, ``size`` bytes or a little more: fewer
    characters than the limit's bytes, more bytes."""
    return json.dumps({**frame, "pad": EMOJI * (size // 4)}, ensure_ascii=False)


OVERSIZED = {
    "10 MB": lambda frame: padded(frame, 10 * 1024 * 1024),
    "17 KB": lambda frame: padded(frame, MAX_FRAME_BYTES + 1024),
    "16 KB in 4,100 emoji": lambda frame: in_emoji(frame, MAX_FRAME_BYTES + 16),
}


async def oversized(url: str, text: str) -> tuple[int | str, list[dict[str, Any]]]:
    """Send one frame on a fresh connection: the close code the server closed it with ("open":
    still open 5 s later; "dropped": closed with no close frame) and the frames it sent after
    the snapshot."""
    ws = await open_ws(url, max_size=None)
    answers: list[dict[str, Any]] = []
    try:
        assert json.loads(await asyncio.wait_for(ws.recv(), 15))["type"] == "snapshot"
        await ws.send(text)
        async with asyncio.timeout(5):
            while True:
                frame = json.loads(await ws.recv())
                if frame.get("type") not in ("event", "heartbeat"):
                    answers.append(frame)
    except websockets.ConnectionClosed as exc:
        return (exc.rcvd.code if exc.rcvd else "dropped"), answers
    except TimeoutError:
        return "open", answers
    finally:
        await ws.close()


async def _scenario(srv: Served, m: dict[str, Any], proc: subprocess.Popen) -> dict[str, Any]:
    ada = m["players"]["ada"]
    play = srv.ws_url(m["code"], "play", ada["token"])
    watcher = await Bystander(srv.ws_url(m["code"], "watch")).start()
    mod = await Bystander(srv.ws_url(m["code"], "moderate", m["moderator_token"])).start()
    await mod.send({"type": "command", "name": "start", "command_id": "start@0"})
    started = await watcher.wait_for(is_event("tossup_started"))
    buzz = {"type": "buzz", "question_id": started["data"]["question_id"], "token_index": 2}
    refused = {}
    for name, make in OVERSIZED.items():
        refused[name] = await oversized(play, make({**buzz, "ref": name}))
    sent_at = time.time()
    assert proc.poll() is None, "the server died"
    # The watcher is still served: a word revealed after the oversized frames reaches it.
    await watcher.wait_for(lambda f: is_event("words")(f) and f["data"]["revealed_at"] > sent_at, 15)
    player = await open_ws(play)
    assert json.loads(await asyncio.wait_for(player.recv(), 15))["type"] == "snapshot"
    await player.send(json.dumps({**buzz, "ref": "normal", "client_time": time.time()}))
    async with asyncio.timeout(15):
        while (answer := json.loads(await player.recv())).get("ref") != "normal":
            pass
    await player.close()
    await mod.close()
    await watcher.close()
    return {"refused": refused, "answer": answer, "watcher_connects": len(watcher.connects)}


@pytest.mark.parametrize("server", sorted(SERVERS))
def test_an_oversized_frame_is_refused_without_the_launchers_flags(
    server: str, tmp_path: Path, redis_url: str
):
    with scratch_database(tmp_path) as db_url:
        srv = Served(tmp_path / "serve", db_url, redis_url)
        srv.manage("migrate", "--noinput")
        m = srv.create_match(players={"ada": "Red"}, tossups=1, config={"wpm": 200})
        with open(srv.logs / "server.log", "wb") as out:
            proc = subprocess.Popen(
                SERVERS[server](srv.port), cwd=launcher.BASE_DIR, env=srv.env, stdout=out, stderr=out
            )
        try:
            launcher.wait_for_port(srv.port, timeout=60, proc=proc)
            out_ = asyncio.run(_scenario(srv, m, proc))
            log = srv.events(m["code"])
            buzzes = [e for e in log if e["event"] == "buzz_received"]
        finally:
            launcher.stop(proc)
    # daphne's own limit (1 MiB) drops the connection of a 10 MB frame before the application
    # sees it; every other oversized frame reaches the application, which closes with 1009.
    # The application closes with 1009, or under daphne (which lets it close only with 1000 or
    # 3000-4999) with 4413.
    code = {"uvicorn": 1009, "daphne": TOO_LARGE, "launcher": 1009}[server]
    expected = {name: code for name in OVERSIZED} | {"10 MB": "dropped" if server == "daphne" else 1009}
    assert {name: code for name, (code, _) in out_["refused"].items()} == expected, out_["refused"]
    # Refused unparsed: no error frame, no ack.
    assert [answers for _, answers in out_["refused"].values()] == [[]] * len(OVERSIZED)
    assert out_["answer"]["type"] == "ack", out_["answer"]
    # Only the normal buzz reached the engine.
    assert [b["seq"] for b in buzzes] == [out_["answer"]["seq"]], [(e["seq"], e["event"]) for e in log]
    assert out_["watcher_connects"] == 1
