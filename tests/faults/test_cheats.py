"""(f) Cheats gain nothing, against a real ``manage.py serve``: an understated token index,
a lying clock, a seat taken by name, a spectator's buzz, and one seat flooding buzzes from
25 sockets. Each test plays a match of its own on one server shared by this module.

Figures are printed; run with ``-s`` to see them.
"""

from __future__ import annotations

import asyncio
import contextlib
import http.cookiejar
import json
import time
import urllib.error
import urllib.request
from collections import Counter
from collections.abc import Iterator
from typing import Any

import pytest

from buzzer.protocol import MAX_DELAY_BOUND
from tests.faults.clients import Client
from tests.faults.conftest import Served, is_event
from tools.databases import scratch_database

ANSWER = "Moby-Dick"  # the answer to the demo packet's first tossup (93 tokens, power before 57)
POWER_INDEX = 57


def report(title: str, **figures: Any) -> None:
    print(
        f"\n[{title}] "
        + ", ".join(f"{k}={v:.4f}" if isinstance(v, float) else f"{k}={v}" for k, v in figures.items())
    )


@pytest.fixture(scope="module")
def srv(tmp_path_factory: pytest.TempPathFactory, redis_url: str) -> Iterator[Served]:
    """One supervised server for the module (the harness's :class:`Served`)."""
    workdir = tmp_path_factory.mktemp("cheats")
    with scratch_database(workdir) as db_url:
        served = Served(workdir, db_url, redis_url)
        try:
            yield served.start()
        finally:
            served.close()


def preset_points(srv: Served) -> dict[str, Any]:
    return srv.db_query(
        "from scoring.rules import load_preset\np = load_preset('naqt')\nresult = {'power': p.power, 'ten': p.ten}"
    )


def shown_upto(frame: dict[str, Any]) -> int:
    """The last token index a ``words`` event shows."""
    return frame["data"]["start"] + len(frame["data"]["words"]) - 1


def reveal_times(client: Client, qid: int) -> dict[int, float]:
    """Token index → the server's reveal time, from the ``words`` events a client got."""
    out = {}
    for f in client.events("words"):
        if f["data"]["question_id"] == qid:
            for i in range(f["data"]["start"], shown_upto(f) + 1):
                out[i] = f["data"]["revealed_at"]
    return out


async def start(srv: Served, m: dict[str, Any]) -> Client:
    mod = await Client.open(srv.ws_url(m["code"], "moderate", m["moderator_token"]))
    await mod.wait_for(lambda f: f.get("type") == "snapshot")
    await mod.send({"type": "command", "name": "start", "command_id": "start@0"})
    return mod


async def heartbeat_answered(client: Client, timeout: float = 12.0) -> None:
    """Wait until the server's heartbeat reached ``client`` (answered by it at once), so the
    server has measured this connection's round trip."""
    await client.wait_for(lambda f: f.get("type") == "heartbeat", timeout)
    await asyncio.sleep(0.2)


# --- an understated token index ----------------------------------------------------------------


async def _understate(srv: Served, m: dict[str, Any]) -> dict[str, Any]:
    eve = await Client.open(srv.ws_url(m["code"], "play", m["players"]["eve"]["token"]))
    await eve.wait_for(lambda f: f.get("type") == "snapshot")
    await heartbeat_answered(eve)
    mod = await start(srv, m)
    started = await eve.wait_for(is_event("tossup_started"))
    qid = started["data"]["question_id"]
    await eve.wait_for(lambda f: is_event("words")(f) and shown_upto(f) >= 59, timeout=60)
    await eve.send({"type": "buzz", "question_id": qid, "token_index": 0, "client_time": time.time()})
    buzz = await eve.wait_for(is_event("buzz"))
    await eve.send({"type": "answer", "question_id": qid, "text": ANSWER})
    ruled = await eve.wait_for(is_event("buzz_ruled"))
    reveals = reveal_times(eve, qid)
    await eve.close()
    await mod.close()
    return {"qid": qid, "buzz": buzz["data"], "ruled": ruled["data"], "reveals": reveals}


def test_an_understated_token_index_is_not_a_power(srv):
    m = srv.create_match(tossups=1, players={"eve": "Red"}, config={"wpm": 240, "auto_rule": True})
    out = asyncio.run(_understate(srv, m))
    received = next(
        e["data"] for e in srv.events(m["code"]) if e["event"] == "buzz_received"
    )  # the server's arrival time
    # What the server had surely shown: tokens revealed by arrival − the largest delay bound.
    floor = max(i for i, at in out["reveals"].items() if at <= received["received_at"] - MAX_DELAY_BOUND)
    points = preset_points(srv)
    report(
        "understated token index",
        claimed=0,
        decided=out["buzz"]["token_index"],
        floor=floor,
        server_floor=received["floor_token_index"],
        delay_bound_s=received["delay_bound"],
        points=out["ruled"]["points"],
    )
    assert received["claimed_token_index"] == 0  # the claim was made and logged …
    assert out["buzz"]["token_index"] >= floor >= POWER_INDEX  # … and not believed
    assert out["ruled"]["ruling"] == "correct"
    assert out["ruled"]["points"] == points["ten"] != points["power"]


# --- a lying clock ---------------------------------------------------------------------------------

LATER = 0.081  # the liar presses 81 ms after the honest player


async def _race(srv: Served, m: dict[str, Any]) -> dict[str, Any]:
    honest = await Client.open(srv.ws_url(m["code"], "play", m["players"]["hana"]["token"]))
    liar = await Client.open(srv.ws_url(m["code"], "play", m["players"]["lou"]["token"]))
    for c in (honest, liar):
        await c.wait_for(lambda f: f.get("type") == "snapshot")
    await asyncio.gather(heartbeat_answered(honest), heartbeat_answered(liar))
    # The honest tablet's clock is right; the liar's pings claim a clock 1,000 s ahead, so
    # that an honest-looking buzz time would look 1,000 s early.
    for _ in range(3):
        await honest.send({"type": "ping", "client_time": time.time()})
        await liar.send({"type": "ping", "client_time": time.time() + 1000})
        await asyncio.sleep(0.05)
    mod = await start(srv, m)
    started = await honest.wait_for(is_event("tossup_started"))
    qid = started["data"]["question_id"]
    words = await honest.wait_for(lambda f: is_event("words")(f) and shown_upto(f) >= 10, timeout=30)
    shown = shown_upto(words)
    await honest.send({"type": "buzz", "question_id": qid, "token_index": shown, "client_time": time.time()})
    await asyncio.sleep(LATER)
    await liar.send({"type": "buzz", "question_id": qid, "token_index": shown, "client_time": time.time()})
    buzz = await honest.wait_for(is_event("buzz"))
    for c in (honest, liar, mod):
        await c.close()
    return {"qid": qid, "buzz": buzz["data"]}


def test_a_lying_clock_does_not_win_the_race(srv):
    m = srv.create_match(tossups=1, players={"hana": "Red", "lou": "Blue"}, config={"wpm": 120})
    hana, lou = m["players"]["hana"]["player_id"], m["players"]["lou"]["player_id"]
    out = asyncio.run(_race(srv, m))
    race = next(e["data"] for e in srv.events(m["code"]) if e["event"] == "race")
    cands = {c["player_id"]: c for c in race["candidates"]}
    report(
        "lying clock",
        winner="honest" if race["winner"] == hana else "liar",
        arrival_gap_s=cands[lou]["received_at"] - cands[hana]["received_at"],
        liar_moved_earlier_s=cands[lou]["received_at"] - cands[lou]["corrected_press_at"],
        honest_moved_earlier_s=cands[hana]["received_at"] - cands[hana]["corrected_press_at"],
    )
    assert set(cands) == {hana, lou}  # both buzzes were in the race …
    assert cands[lou]["token_index"] == cands[hana]["token_index"]  # … on the same word
    assert race["winner"] == hana and out["buzz"]["player_id"] == hana
    # Latency correction moved the liar's press earlier than its arrival by at most the bound.
    assert cands[lou]["received_at"] - cands[lou]["corrected_press_at"] <= MAX_DELAY_BOUND + 1e-6


# --- a seat taken by name ------------------------------------------------------------------------


class Http:
    """A browser-like client: the play page's CSRF cookie, then JSON POSTs with X-CSRFToken."""

    def __init__(self, base_url: str):
        self.base = base_url
        self.jar = http.cookiejar.CookieJar()
        self.opener = urllib.request.build_opener(urllib.request.HTTPCookieProcessor(self.jar))
        with self.opener.open(f"{base_url}/play/", timeout=10) as page:
            assert page.status == 200
        self.csrf = next((c.value for c in self.jar if c.name == "csrftoken"), "")

    def post(self, path: str, body: dict[str, Any]) -> tuple[int, dict[str, Any]]:
        req = urllib.request.Request(
            f"{self.base}{path}",
            data=json.dumps(body).encode(),
            headers={
                "Content-Type": "application/json",
                "X-CSRFToken": self.csrf,
                "Origin": self.base,
                "Referer": f"{self.base}/play/",
            },
            method="POST",
        )
        try:
            with self.opener.open(req, timeout=10) as resp:
                return resp.status, json.loads(resp.read())
        except urllib.error.HTTPError as exc:
            with contextlib.suppress(ValueError):
                return exc.code, json.loads(exc.read())
            return exc.code, {}


def test_a_seat_is_not_taken_by_name(srv):
    m = srv.create_match(players={"ada": "Red"})
    ada = m["players"]["ada"]
    web = Http(srv.base_url)
    # The door works: a new name in the lobby is seated.
    status, seated = web.post("/api/join", {"code": m["code"], "name": "zed", "team": "Blue"})
    assert status == 200 and seated["token"]
    # An existing name, without its secret, in the lobby and mid-match, on either team.
    tries = [web.post("/api/join", {"code": m["code"], "name": "ada", "team": "Blue"})]
    asyncio.run(_start_and_close(srv, m))
    for team in ("Red", "Blue"):
        tries.append(web.post("/api/join", {"code": m["code"], "name": "ada", "team": team}))
    tries.append(web.post("/api/join", {"code": m["code"], "name": "ada", "team": "Red", "secret": "guess"}))
    report("seat by name", answers=[(s, b.get("code")) for s, b in tries])
    for status, body in tries:
        assert status == 409 and body.get("code") == "seat_taken"
        assert "token" not in body and ada["token"] not in json.dumps(body)
    # Ada's seat is still hers.
    token = srv.db_query(
        f"from competition.models import Player\nresult = Player.objects.get(pk={ada['player_id']}).token"
    )
    assert token == ada["token"]


async def _start_and_close(srv: Served, m: dict[str, Any]) -> None:
    mod = await start(srv, m)
    await mod.wait_for(is_event("match_started"))
    await mod.close()


# --- a spectator's buzz ----------------------------------------------------------------------------


async def _spectator_buzz(srv: Served, m: dict[str, Any]) -> dict[str, Any]:
    fan = await Client.open(srv.ws_url(m["code"], "watch"))
    await fan.wait_for(lambda f: f.get("type") == "snapshot")
    mod = await start(srv, m)
    started = await fan.wait_for(is_event("tossup_started"))
    qid = started["data"]["question_id"]
    words = await fan.wait_for(lambda f: is_event("words")(f) and shown_upto(f) >= 5)
    mark = len(fan.frames)
    await fan.send(
        {
            "type": "buzz",
            "question_id": qid,
            "token_index": shown_upto(words),
            "client_time": time.time(),
            "ref": 1,
        }
    )
    reply = await fan.wait_for(lambda f: f.get("type") in ("error", "ack"), after=mark)
    await asyncio.sleep(1.0)  # anything the buzz caused would be logged by now
    for c in (fan, mod):
        await c.close()
    return {"reply": reply}


def test_a_spectators_buzz_is_refused_and_logs_nothing(srv):
    m = srv.create_match(tossups=1, players={"ada": "Red"})
    out = asyncio.run(_spectator_buzz(srv, m))
    log = srv.events(m["code"])
    assert (out["reply"]["type"], out["reply"]["code"], out["reply"]["ref"]) == ("error", "forbidden", 1)
    assert not [e for e in log if e["event"] in ("buzz_received", "race", "buzz", "buzz_ruled")]
    # The lobby seat (player_joined, logged by the joining player) is the only non-moderator entry.
    assert {e["actor"] for e in log if e["event"] != "player_joined"} <= {"moderator", "driver"}
    buzzes = f"from competition.models import Buzz\nresult = Buzz.objects.filter(match__join_code={m['code']!r}).count()"
    assert srv.db_query(buzzes) == 0


# --- one seat, 25 sockets, 1,000 buzzes in 2 s ------------------------------------------------

SOCKETS = 25
BUZZES = 1000
FLOOD_SECONDS = 2.0


async def _flood(srv: Served, m: dict[str, Any]) -> dict[str, Any]:
    url = srv.ws_url(m["code"], "play", m["players"]["flo"]["token"])
    sockets = await asyncio.gather(*(Client.open(url) for _ in range(SOCKETS)))
    for c in sockets:
        await c.wait_for(lambda f: f.get("type") == "snapshot")
    mod = await start(srv, m)
    first = sockets[0]
    started = await first.wait_for(is_event("tossup_started"))
    qid = started["data"]["question_id"]
    words = await first.wait_for(lambda f: is_event("words")(f) and shown_upto(f) >= 3)
    per_socket = BUZZES // SOCKETS
    marks = [len(c.frames) for c in sockets]

    async def burst(c: Client) -> None:
        for k in range(per_socket):
            await c.send({"type": "buzz", "question_id": qid, "token_index": shown_upto(words), "ref": k})
            await asyncio.sleep(FLOOD_SECONDS / per_socket)

    t0 = time.monotonic()
    await asyncio.gather(*(burst(c) for c in sockets))
    seconds = time.monotonic() - t0
    answers: Counter[str] = Counter()
    for c, mark in zip(sockets, marks, strict=True):
        # Every buzz gets its answer (bounded wait), in order on its socket.
        async with asyncio.timeout(20):
            while sum(1 for _, f in c.frames[mark:] if f.get("type") in ("ack", "error")) < per_socket:
                await asyncio.sleep(0.05)
        for _, f in c.frames[mark:]:
            if f.get("type") in ("ack", "error"):
                answers[f.get("code") or "ack"] += 1
    for c in [*sockets, mod]:
        await c.close()
    return {"answers": answers, "seconds": seconds}


def test_one_seat_flooding_from_25_sockets_buzzes_a_few_times_at_most(srv):
    m = srv.create_match(tossups=1, players={"flo": "Red", "gus": "Blue"}, config={"wpm": 120})
    out = asyncio.run(_flood(srv, m))
    log = srv.events(m["code"])
    received = [e for e in log if e["event"] == "buzz_received"]
    answers = out["answers"]
    # Every answer but the seat limiter's came from the service: an ack or a rule's own refusal code.
    reached_service = sum(n for code, n in answers.items() if code != "rate_limited")
    report(
        "seat flood",
        buzzes=sum(answers.values()),
        seconds=out["seconds"],
        answers=dict(answers),
        buzz_received_events=len(received),
    )
    assert sum(answers.values()) == BUZZES  # each buzz was answered
    assert 1 <= len(received) <= 3
    # The seat's limit held across its sockets: most buzzes never reached the match.
    assert answers["rate_limited"] >= BUZZES - 50 and reached_service <= 50
