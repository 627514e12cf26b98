"""The live path does not queue behind connecting clients: their authentication and
snapshots run on a thread pool of their own (buzzer.driver.connect_db), ticks, buzzes and
commands on another (live_db). Before, every database call of the process shared asgiref's
one thread, so a burst of connecting clients delayed every match's words and buzzes."""

from __future__ import annotations

import asyncio
import json
import threading
import time

import pytest
from channels.testing import WebsocketCommunicator
from django.conf import settings

from buzzer import consumers
from config.asgi import application
from tests.buzzer.test_consumers import connect, is_event, new_match, recv, until

pytestmark = pytest.mark.django_db(transaction=True)


async def test_a_command_is_applied_and_words_flow_while_connecting_clients_are_stuck(monkeypatch):
    match = await new_match()
    moderator = await connect(match, "moderate", match.moderator_token)
    await recv(moderator)  # the snapshot
    stuck = threading.Event()
    release = threading.Event()
    real = consumers._authenticate

    def slow_authenticate(*args):
        stuck.set()
        release.wait(10)  # bounded: the test releases it at the end either way
        return real(*args)

    monkeypatch.setattr(consumers, "_authenticate", slow_authenticate)
    # More connecting clients than connect threads: every one of them is busy, more queue.
    waiting = [
        WebsocketCommunicator(application, f"/ws/match/{match.join_code}/watch/")
        for _ in range(settings.CONNECT_DB_THREADS + 2)
    ]
    connecting = [asyncio.create_task(c.connect(timeout=15)) for c in waiting]
    try:
        assert await asyncio.to_thread(stuck.wait, 5)
        t0 = time.monotonic()
        await moderator.send_to(text_data=json.dumps({"type": "command", "name": "start", "ref": 1}))
        ack, _ = await until(moderator, lambda f: f["type"] in ("ack", "error"), timeout=5)
        assert ack["type"] == "ack"
        # The reading driver's ticks go on too: the first words arrive while they wait.
        await until(moderator, is_event("words"), timeout=5)
        assert time.monotonic() - t0 < 2.0
        assert not any(task.done() for task in connecting)  # they really were still waiting
    finally:
        release.set()
        await asyncio.gather(*connecting, return_exceptions=True)
    # Released, every waiting client is let in and gets its snapshot.
    for comm in waiting:
        assert (await recv(comm))["type"] == "snapshot"
        await comm.disconnect()
    await moderator.disconnect()
