"""Bots the server runs (competition/botlaunch.py, ``manage.py bot_supervisor`` under ``serve``): a
moderator puts a guesser this server knows on a bot seat from the dashboard; the bot connects over
the protocol like any bot and buzzes, is restarted when killed, and stops when the match ends. The
guesser is an organiser-configured LLM endpoint (here ``tests.support.fake_llm``'s OpenAI-compatible
stand-in), so the test also sees its API key reach the endpoint and never a page."""

from __future__ import annotations

import http.cookiejar
import json
import os
import signal
import urllib.error
import urllib.request
from pathlib import Path
from typing import Any

import pytest

from tests.faults.conftest import Bystander, Served, _group_pids, _wait, is_event
from tests.support.fake_llm import completion, fake_llm

KEY = "sk-test-0123456789-never-in-a-page"


def sure_of_paris(body: dict[str, Any]) -> tuple[int, bytes]:
    """The fake endpoint is always sure of "Paris" (40 prompt and 8 completion tokens)."""
    return 200, completion('{"guess": "Paris", "confidence": 0.99}', 40, 8)


class Moderator:
    """A browser's session on the dashboard (cookies, CSRF token) for the JSON API."""

    def __init__(self, srv: Served, code: str, token: str):
        self.srv, self.code = srv, code
        self.jar = http.cookiejar.CookieJar()
        self.opener = urllib.request.build_opener(urllib.request.HTTPCookieProcessor(self.jar))
        with self.opener.open(f"{srv.base_url}/moderator/{code}/?token={token}", timeout=10) as res:
            self.page = res.read().decode()
        self.csrf = next(c.value for c in self.jar if c.name == "csrftoken")

    def call(self, path: str, body: dict[str, Any] | None = None) -> tuple[int, dict[str, Any]]:
        data = None if body is None else json.dumps(body).encode()
        request = urllib.request.Request(
            f"{self.srv.base_url}/api/match/{self.code}/bots{path}",
            data=data,
            method="GET" if body is None else "POST",
            headers={"X-CSRFToken": self.csrf, "Content-Type": "application/json"},
        )
        try:
            with self.opener.open(request, timeout=10) as res:
                return res.status, json.loads(res.read())
        except urllib.error.HTTPError as exc:
            return exc.code, json.loads(exc.read())


def _launch(srv: Served, player_id: int) -> dict[str, Any]:
    return srv.db_query(
        "from competition.models import BotLaunch\n"
        f"r = BotLaunch.objects.get(player_id={player_id})\n"
        "result = dict(state=r.state, pid=r.pid, restarts=r.restarts, detail=r.detail, wanted=r.wanted)"
    )


def _alive(pid: int) -> bool:
    return bool(_group_pids(pid))


async def test_a_bot_added_from_the_dashboard_connects_buzzes_restarts_and_stops(serve, tmp_path: Path):
    with fake_llm(sure_of_paris) as llm:
        url = llm.url
        endpoints = tmp_path / "llm.json"
        endpoints.write_text(
            json.dumps(
                [
                    {
                        "name": "Sure LLM",
                        "url": url,
                        "model": "fake-1",
                        "key_env": "FAKE_LLM_KEY",
                        "weight_class": "mid",
                        "cost": 0.0004,
                        "min_tokens": 1,
                        "threshold": 0.5,
                        "price_in": 10,
                        "price_out": 20,
                    }
                ]
            )
        )
        env = {"TOSSUP_LLM_ENDPOINTS": str(endpoints), "FAKE_LLM_KEY": KEY}
        srv: Served = serve(env=env)
        assert "bots" in srv.children()  # serve supervises the bot supervisor
        m = srv.create_match(bots=("Robo",), config={"wpm": 400})
        bot_id = srv.db_query(
            f"from competition.models import Player\nresult = Player.objects.get(match__join_code={m['code']!r}, "
            "kind='bot').id"
        )
        mod = Moderator(srv, m["code"], m["moderator_token"])
        status, offered = mod.call("")
        assert status == 200
        sure = next(g for g in offered["guessers"] if g["key"] == "llm:Sure LLM")
        assert (sure["weight_class"], sure["cost"]) == ("mid", 0.0004)
        assert {"wiki"} <= {g["key"] for g in offered["guessers"]}  # the reference bot needs no data

        # Bad requests change nothing.
        assert mod.call(f"/{bot_id}/launch", {"guesser": "llm:nope"})[0] == 400
        assert mod.call("/999999/launch", {"guesser": "llm:Sure LLM"})[0] == 404
        assert mod.call(f"/{bot_id}/stop", {})[0] == 404

        status, after = mod.call(f"/{bot_id}/launch", {"guesser": "llm:Sure LLM"})
        assert status == 200 and after["seats"][0]["launch"]["guesser"] == "llm:Sure LLM"
        _wait(lambda: _launch(srv, bot_id)["state"] == "running", 60, "the bot process")
        first = _launch(srv, bot_id)["pid"]

        # The bot connects over the websocket like any bot: the moderator's presence sees it.
        moderator = await Bystander(
            srv.ws_url(m["code"], "moderate", m["moderator_token"]) + "&presence=1"
        ).start()

        def bot_is(state: str) -> Any:
            return lambda f: (
                f.get("type") == "presence"
                and any(s["player_id"] == bot_id and s["state"] == state for s in f["seats"])
            )

        await moderator.wait_for(bot_is("connected"), timeout=60)

        # Killed, it is restarted (a new process) and connects again.
        os.killpg(first, signal.SIGKILL)
        mark = len(moderator.frames)
        _wait(lambda: _launch(srv, bot_id)["restarts"] >= 1 and _launch(srv, bot_id)["state"] == "running",
              30, "the bot's restart")  # fmt: skip
        second = _launch(srv, bot_id)["pid"]
        assert second != first and _alive(second)
        await moderator.wait_for(bot_is("reconnecting"), timeout=30, after=mark)
        await moderator.wait_for(bot_is("connected"), timeout=60, after=mark)

        await moderator.send({"type": "command", "name": "start", "command_id": "start@0"})
        buzz = await moderator.wait_for(is_event("buzz"), timeout=60)
        assert buzz["data"]["player_id"] == bot_id
        # The bot declared what its guess cost (40 prompt, 8 completion tokens at $10 / $20 per
        # million) with the buzz, and the race recorded it for the tie-break.
        race = await moderator.wait_for(is_event("race"), timeout=5)
        assert race["data"]["candidates"][0]["cost"] == pytest.approx((40 * 10 + 8 * 20) / 1e6)
        assert llm.requests and {r["auth"] for r in llm.requests} == {
            f"Bearer {KEY}"
        }  # the key reached the endpoint

        # No page or API answer shows the key, nor the variable that holds it.
        for text in (mod.page, json.dumps(mod.call("")[1])):
            assert KEY not in text and "FAKE_LLM_KEY" not in text

        await moderator.send({"type": "command", "name": "end", "command_id": "end@0"})
        await moderator.wait_for(is_event("match_ended"), timeout=30)
        _wait(lambda: _launch(srv, bot_id)["state"] == "stopped", 30, "the bot to be stopped")
        _wait(lambda: not _alive(second), 15, "the bot process to exit")
        await moderator.close()
