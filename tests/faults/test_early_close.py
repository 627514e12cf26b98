"""A client that leaves before its acknowledgement is written: a player buzzes and closes the
socket at once, a moderator pauses and drops TCP at once. What was applied stays applied (the
buzz and the pause are in the log, the bystander saw them), and the server's log records an
ordinary disconnect: one line, no "unexpected fault", no traceback.
"""

from __future__ import annotations

import asyncio
import json
import logging
import time
from typing import Any

import pytest
from channels.db import database_sync_to_async
from channels.testing import WebsocketCommunicator

from competition.models import Player
from config.asgi import application
from tests.faults.clients import drop_tcp, open_ws
from tests.faults.conftest import Bystander, Served, is_event
from tests.support.factories import make_match


async def _leave_early(srv: Served, m: dict[str, Any]) -> dict[str, Any]:
    ada = m["players"]["ada"]
    mod = await Bystander(srv.ws_url(m["code"], "moderate", m["moderator_token"])).start()
    watcher = await Bystander(srv.ws_url(m["code"], "watch")).start()
    await mod.send({"type": "command", "name": "start", "command_id": "start@0"})
    started = await watcher.wait_for(is_event("tossup_started"))
    words = await watcher.wait_for(lambda f: is_event("words")(f) and f["data"]["start"] >= 3)
    shown = words["data"]["start"] + len(words["data"]["words"]) - 1

    # The player buzzes and closes at once (a clean close: the close frame right behind the buzz).
    player = await open_ws(srv.ws_url(m["code"], "play", ada["token"]))
    assert json.loads(await asyncio.wait_for(player.recv(), 15))["type"] == "snapshot"
    buzz = {"type": "buzz", "question_id": started["data"]["question_id"], "token_index": shown}
    await player.send(json.dumps({**buzz, "client_time": time.time(), "ref": "b"}))
    await player.close()
    buzzed = await watcher.wait_for(is_event("buzz"))

    # A moderator pauses and vanishes (TCP dropped right behind the frame).
    quitter = await open_ws(srv.ws_url(m["code"], "moderate", m["moderator_token"]))
    snap = json.loads(await asyncio.wait_for(quitter.recv(), 15))
    assert snap["type"] == "snapshot"
    await quitter.send(json.dumps({"type": "command", "name": "pause", "command_id": f"pause@{snap['seq']}"}))
    drop_tcp(quitter, reset=False)
    paused = await watcher.wait_for(is_event("paused"))
    await asyncio.sleep(1.0)  # the server has written (or failed to write) both acks by now
    await mod.close()
    await watcher.close()
    return {"buzzed": buzzed, "paused": paused}


def test_a_client_leaving_before_its_ack_loses_nothing_and_is_logged_as_a_disconnect(serve):
    srv = serve(env={"LOG_LEVEL": "INFO"})
    m = srv.create_match(players={"ada": "Red"}, tossups=1, config={"wpm": 240, "answer_window": 30})
    out = asyncio.run(_leave_early(srv, m))
    log = srv.events(m["code"])
    buzzes = [e for e in log if e["event"] == "buzz"]
    assert [b["data"]["player_id"] for b in buzzes] == [m["players"]["ada"]["player_id"]]
    assert buzzes[0]["seq"] == out["buzzed"]["seq"]
    assert [e["actor"] for e in log if e["event"] == "paused"] == ["moderator"]
    server_log = (srv.logs / "server.log").read_text(errors="replace")
    assert "unexpected fault" not in server_log
    assert "Traceback" not in server_log, server_log[-3000:]
    # Each early leave is logged once, as what it is.
    assert server_log.count("closed before its answer was sent") == 2, server_log[-3000:]


@pytest.mark.django_db(transaction=True)
async def test_a_real_fault_still_logs_its_traceback(monkeypatch, caplog):
    """Only a disconnect is logged as one: a service that fails on a frame is still an
    unexpected fault, logged with its traceback and answered ``internal``."""
    from buzzer import consumers
    from competition import services

    def broken(**kw: Any) -> None:
        raise KeyError("a bug")

    monkeypatch.setattr(services, "flag_question", broken)
    match = await database_sync_to_async(make_match)()
    bob = await database_sync_to_async(lambda: Player.objects.get(match=match, name="bob"))()
    comm = WebsocketCommunicator(application, f"/ws/match/{match.join_code}/play/?token={bob.token}")
    assert (await comm.connect())[0]
    assert json.loads(await comm.receive_from(5))["type"] == "snapshot"
    with caplog.at_level(logging.INFO, logger=consumers.log.name):
        flag = {"type": "flag", "question_id": 1, "problem": "ambiguity", "ref": "f"}
        await comm.send_to(text_data=json.dumps(flag))
        async with asyncio.timeout(10):
            while (frame := json.loads(await comm.receive_from(5)))["type"] != "error":
                pass
    await comm.disconnect()
    assert (frame["code"], frame["ref"]) == ("internal", "f")
    faults = [r for r in caplog.records if "unexpected fault" in r.getMessage()]
    assert len(faults) == 1 and faults[0].levelno == logging.ERROR
    assert faults[0].exc_info is not None and faults[0].exc_info[0] is KeyError
    assert not [r for r in caplog.records if "closed before" in r.getMessage()]
