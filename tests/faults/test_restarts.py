"""Restarts and outages against a real ``manage.py serve``: a killed server, a stopped Redis,
a killed Celery worker. Players must not notice: the same answer time, no event lost or
sent twice, the match not left paused, every ended match fitted exactly once.

Figures (recovery times, words delivered) are printed; run with ``-s`` to see them.
"""

from __future__ import annotations

import asyncio
import json
import signal
import time
from typing import Any
from urllib.parse import urlsplit

from websockets.asyncio.client import connect
from websockets.exceptions import InvalidStatus

from tests.faults.conftest import Bystander, Frame, Served, is_event

ANSWER = "Moby-Dick"  # the answer to the demo packet's first tossup


def report(title: str, **figures: Any) -> None:
    print(
        f"\n[{title}] "
        + ", ".join(f"{k}={v:.2f}" if isinstance(v, float) else f"{k}={v}" for k, v in figures.items())
    )


def deadline_seen_after(client: Bystander, since: float, old_deadline: float) -> tuple[float, float] | None:
    """The first answer deadline ``client`` learned after ``since`` that was still ahead of it:
    ``(deadline, when learned)``, from a snapshot or a ``resumed`` event (which moves every
    deadline by its ``shift``)."""
    for at, frame in client.frames:
        if at < since:
            continue
        deadline = None
        if frame.get("type") == "snapshot":
            buzz = (frame["state"].get("tossup") or {}).get("buzz") or {}
            deadline = buzz.get("answer_deadline")
        elif is_event("resumed")(frame):
            deadline = old_deadline + frame["data"]["shift"]
        if deadline is not None and deadline > at:
            return deadline, at
    return None


def assert_log_reached(client: Bystander, log: list[Frame]) -> None:
    """Every logged event the client may see, up to what it has seen, reached it once
    (as an event, or inside a snapshot), and none twice."""
    assert client.duplicates == []
    missing = [e["seq"] for e in log if e["seq"] <= client.last_seq and not client.accounted(e["seq"])]
    assert missing == []


# --- (c) the server killed during an answer window ------------------------------------------


async def _buzz_then_kill(srv: Served, m: dict[str, Any]) -> dict[str, Any]:
    ada = m["players"]["ada"]
    mod = await Bystander(srv.ws_url(m["code"], "moderate", m["moderator_token"])).start()
    player = await Bystander(srv.ws_url(m["code"], "play", ada["token"]), give_up_after=60).start()
    watcher = await Bystander(srv.ws_url(m["code"], "watch"), give_up_after=60).start()
    await mod.send({"type": "command", "name": "start", "command_id": "start@0"})
    started = await player.wait_for(is_event("tossup_started"))
    words = await player.wait_for(lambda f: is_event("words")(f) and f["data"]["start"] >= 5)
    shown = words["data"]["start"] + len(words["data"]["words"]) - 1
    qid = started["data"]["question_id"]
    await player.send({"type": "buzz", "question_id": qid, "token_index": shown, "client_time": time.time()})
    buzz = await player.wait_for(is_event("buzz"))
    assert buzz["data"]["player_id"] == ada["player_id"]
    await mod.close()
    await asyncio.sleep(2.0)  # two seconds of the answer window pass while the server runs
    killed_at = time.time()
    await asyncio.to_thread(srv.kill_server)
    return {
        "player": player,
        "watcher": watcher,
        "qid": qid,
        "deadline": buzz["data"]["answer_deadline"],
        "killed_at": killed_at,
    }


async def _restart_and_answer(srv: Served, before: dict[str, Any]) -> dict[str, Any]:
    player: Bystander = before["player"]
    await asyncio.sleep(max(0.0, before["killed_at"] + 20.0 - time.time()))
    restarted_at = time.time()
    http_after = await asyncio.to_thread(srv.start_server)
    async with asyncio.timeout(30):
        while not (player.connects and player.connects[-1] > restarted_at):
            await asyncio.sleep(0.05)
    seen = None
    async with asyncio.timeout(15):
        while seen is None:
            seen = deadline_seen_after(player, restarted_at, before["deadline"])
            await asyncio.sleep(0.05)
    deadline, learned_at = seen
    mark = len(player.frames)
    await player.send({"type": "answer", "question_id": before["qid"], "text": ANSWER})
    ruled = await player.wait_for(is_event("buzz_ruled"), timeout=10, after=mark)
    return {
        "remaining_before": before["deadline"] - before["killed_at"],
        "remaining_after": deadline - learned_at,
        "http_after": http_after,
        "reconnected_after": player.connects[-1] - restarted_at,
        "ruled": ruled["data"],
    }


async def _supervised_restart(srv: Served, watcher: Bystander) -> float:
    """Kill the server without holding it: serve itself must bring it back. Returns the
    seconds from the kill to the watcher's next snapshot."""
    killed_at = time.time()
    await asyncio.to_thread(srv.kill_server, signal.SIGKILL, False)
    async with asyncio.timeout(30):
        while not any(t > killed_at and f.get("type") == "snapshot" for t, f in watcher.frames):
            await asyncio.sleep(0.05)
    return next(t for t, f in watcher.frames if t > killed_at and f.get("type") == "snapshot") - killed_at


async def first_frame(url: str, timeout: float = 15.0) -> Frame:
    """The first frame a fresh connection gets (a snapshot, or an error)."""
    async with connect(url, origin=f"http://{urlsplit(url).netloc}", open_timeout=timeout) as ws:  # type: ignore[arg-type]
        return json.loads(await asyncio.wait_for(ws.recv(), timeout))


def test_a_server_killed_in_an_answer_window_keeps_the_buzzers_time(serve):
    srv = serve()
    m = srv.create_match(
        players={"ada": "Red"}, tossups=2, config={"wpm": 240, "answer_window": 12, "auto_rule": True}
    )

    async def scenario() -> dict[str, Any]:
        before = await _buzz_then_kill(srv, m)
        after = await _restart_and_answer(srv, before)
        after["supervised_restart"] = await _supervised_restart(srv, before["watcher"])
        after["watcher"] = before["watcher"]
        await before["player"].close()
        await before["watcher"].close()
        return after

    out = asyncio.run(scenario())
    log = srv.events(m["code"])
    report(
        "server kill -9, 20 s down",
        remaining_before_s=out["remaining_before"],
        remaining_after_s=out["remaining_after"],
        http_back_s=out["http_after"],
        reconnect_s=out["reconnected_after"],
        supervised_restart_s=out["supervised_restart"],
    )
    assert abs(out["remaining_after"] - out["remaining_before"]) <= 1.0
    assert out["ruled"]["ruling"] == "correct" and out["ruled"]["points"] > 0
    rulings = [e["data"]["ruling"] for e in log if e["event"] == "buzz_ruled"]
    assert rulings == ["correct"]  # no timeout ruled while nobody drove the match
    seqs = [e["seq"] for e in log]
    assert seqs == list(range(1, len(seqs) + 1))
    # The clock was stopped by the driver (once per restart), not by anyone's command.
    clock = [(e["event"], e["actor"]) for e in log if e["event"] in ("paused", "resumed")]
    assert clock[:2] == [("paused", "driver"), ("resumed", "driver")]
    assert {actor for _, actor in clock} == {"driver"}
    assert_log_reached(out["watcher"], [e for e in log if e["audience"] == "all"])
    assert out["supervised_restart"] < 15.0


# --- (d) Redis stopped for 10 s mid-tossup ----------------------------------------------------


async def _redis_outage(srv: Served, live: dict[str, Any], ending: dict[str, Any]) -> dict[str, Any]:
    watcher = await Bystander(srv.ws_url(live["code"], "watch")).start()
    player = await Bystander(srv.ws_url(live["code"], "play", live["players"]["ada"]["token"])).start()
    mod = await Bystander(srv.ws_url(live["code"], "moderate", live["moderator_token"])).start()
    other_mod = await Bystander(srv.ws_url(ending["code"], "moderate", ending["moderator_token"])).start()
    # bob sits at his tablet: the ending match has a player to fit.
    bob = await Bystander(srv.ws_url(ending["code"], "play", ending["players"]["bob"]["token"])).start()
    await mod.send({"type": "command", "name": "start", "command_id": "start@0"})
    await other_mod.send({"type": "command", "name": "start", "command_id": "start@0"})
    await watcher.wait_for(lambda f: is_event("words")(f) and f["data"]["start"] >= 4)
    await other_mod.wait_for(is_event("tossup_started"))
    # One tossup heard in the other match (so its fit has responses), before the outage.
    await other_mod.send({"type": "command", "name": "reveal", "command_id": "reveal@1"})
    await other_mod.wait_for(is_event("tossup_ended"))

    await asyncio.to_thread(srv.stop_redis)
    stopped_at = time.time()
    seq_at_stop = watcher.last_seq
    await asyncio.sleep(1.0)
    # A new connection during the outage is told the stream is unavailable (no HTTP 500).
    try:
        refused = await first_frame(srv.ws_url(live["code"], "watch"))
    except InvalidStatus as exc:
        refused = {"http_status": exc.response.status_code}
    # The other match ends during the outage; its fit must still happen.
    mark = len(other_mod.frames)
    await other_mod.send({"type": "command", "name": "end", "command_id": "end@x", "ref": "end"})
    try:
        end_reply: Frame | None = await other_mod.wait_for(lambda f: f.get("ref") == "end", 15, mark)
    except TimeoutError:
        end_reply = None  # asserted after the rest of the scenario has been measured
    await asyncio.sleep(max(0.0, stopped_at + 10.0 - time.time()))

    await asyncio.to_thread(srv.start_redis)
    back_at = time.time()
    async with asyncio.timeout(30):
        while True:
            later = [t for t, f in watcher.frames if t >= back_at and f.get("type") in ("event", "snapshot")]
            if later and watcher.last_seq > seq_at_stop:
                break
            await asyncio.sleep(0.05)
    resumed_after = later[0] - back_at
    ended = await watcher.wait_for(is_event("match_ended"), timeout=90)
    await asyncio.sleep(1.0)  # let any duplicate arrive, if one were coming
    for client in (player, mod, other_mod, bob):
        await client.close()
    await watcher.close()
    return {
        "watcher": watcher,
        "resumed_after": resumed_after,
        "refused": refused,
        "end_reply": end_reply,
        "back_at": back_at,
        "ended": ended,
    }


def test_a_redis_outage_loses_nothing_and_leaves_nothing_paused(serve):
    srv = serve(private_redis=True)
    cfg = {"wpm": 300, "auto_rule": True}
    live = srv.create_match(players={"ada": "Red"}, tossups=1, config=cfg)
    ending = srv.create_match(players={"bob": "Red"}, tossups=3, config=cfg)
    out = asyncio.run(_redis_outage(srv, live, ending))
    watcher: Bystander = out["watcher"]

    log = srv.events(live["code"], audiences=("all",))
    words_logged = [e for e in log if e["event"] == "words"]
    tokens = sum(len(e["data"]["words"]) for e in words_logged)
    as_events = sum(len(f["data"]["words"]) for f in watcher.events("words"))
    report(
        "Redis down 10 s",
        resumed_after_s=out["resumed_after"],
        words_logged=tokens,
        words_as_events=as_events,
        resyncs_asked=watcher.resyncs,
        snapshots=sum(1 for _, f in watcher.frames if f.get("type") == "snapshot"),
        reconnects=len(watcher.connects) - 1,
        end_reply_during_outage=out["end_reply"],
        new_connection_during_outage=out["refused"],
    )
    assert out["resumed_after"] <= 5.0
    assert_log_reached(watcher, log)
    assert watcher.last_seq == log[-1]["seq"]  # it saw the match to its end
    state = srv.db_query(
        f"from competition.models import Match\nm = Match.objects.get(join_code={live['code']!r})\n"
        "result = {'paused': m.state.get('paused'), 'status': m.status}"
    )
    assert state == {"paused": False, "status": "ended"}
    fits = _wait_for_fits(srv, [ending["match_id"], live["match_id"]], timeout=90)
    assert fits == {f"match:{ending['match_id']}": ["done"], f"match:{live['match_id']}": ["done"]}
    # The moderator's End during the outage was answered (it was stored: the fit above).
    assert out["end_reply"] is not None and out["end_reply"]["type"] == "ack", out["end_reply"]
    # A connection opened during the outage was told so in the protocol (not an HTTP 500).
    assert (out["refused"].get("type"), out["refused"].get("code")) == ("error", "unavailable"), out[
        "refused"
    ]


def _wait_for_fits(srv: Served, match_ids: list[int], timeout: float) -> dict[str, list[str]]:
    scopes = [f"match:{i}" for i in match_ids]
    query = (
        "from irt.models import Fit\nresult = {}\n"
        f"for s in {scopes!r}:\n"
        "    result[s] = list(Fit.objects.filter(dataset=s).values_list('status', flat=True))\n"
    )
    end = time.monotonic() + timeout
    while True:
        fits = srv.db_query(query)
        if all(v == ["done"] for v in fits.values()) or time.monotonic() > end:
            return fits
        time.sleep(2.0)


# --- (e) the Celery worker killed mid-fit -----------------------------------------------------

SEED_RESPONSES = """
import random
from irt.models import Response
rng = random.Random(5)
# Bots make the fit long: each one adds a leave-one-bot-out refit (irt.sensitivity).
rows = [Response(dataset="live", source="import:synthetic", subject="s%d" % s,
                 subject_kind="bot" if s < {bots} else "human",
                 item="i%d" % i, correct=rng.random() < 0.5) for s in range({subjects}) for i in range({items})]
Response.objects.bulk_create(rows, batch_size=5000)
result = Response.objects.filter(dataset="live").count()
"""

END_MATCH = """
from django.utils import timezone
from competition import game, services
from competition.live import store
from competition.models import Match
m = Match.objects.get(join_code={code!r})
# Its players sat at their tablets (a seat that never connected is in no fit).
m.players.update(first_connected_at=timezone.now())
for command in (game.Start(), game.Reveal()):  # one tossup heard, unanswered: the match ends
    store.apply_command(match_id=m.id, command=command, actor="moderator")
m.refresh_from_db()
assert m.status == "ended", m.status
result = m.id
"""

FITS = """
from irt.models import Fit
result = [dict(id=f.id, dataset=f.dataset, status=f.status, progress=f.progress, snapshot=f.snapshot_hash,
               finished=str(f.finished_at)) for f in Fit.objects.order_by("id")]
"""


def test_a_worker_killed_mid_fit_is_replaced_and_the_fit_done_once(serve):
    srv = serve()
    m = srv.create_match(players={"ada": "Red"}, tossups=1)
    seeded = srv.db_query(SEED_RESPONSES.format(subjects=400, items=300, bots=30))
    assert seeded == 400 * 300
    srv.db_query(END_MATCH.format(code=m["code"]))

    # Wait for the big ("live") fit to be under way, then kill the worker mid-fit.
    end = time.monotonic() + 60
    while True:
        fits = srv.db_query(FITS)
        live = [f for f in fits if f["dataset"] == "live"]
        if live and live[0]["status"] == "running":
            break
        assert not (live and live[0]["status"] == "done"), "the fit finished before it could be killed"
        assert time.monotonic() < end, f"no live fit started: {fits}"
        time.sleep(0.5)
    time.sleep(1.0)
    killed_at = time.monotonic()
    srv.kill_worker(hold=False)  # serve itself restarts the worker
    assert [f["status"] for f in srv.db_query(FITS) if f["dataset"] == "live"] == ["running"]

    while True:
        fits = srv.db_query(FITS)
        live = [f for f in fits if f["dataset"] == "live"]
        if (live and all(f["status"] == "done" for f in live)) or time.monotonic() - killed_at > 120:
            break
        time.sleep(2.0)
    recovered = time.monotonic() - killed_at
    report("worker kill -9 mid-fit", fit_done_after_kill_s=recovered, responses=seeded)
    assert [f["status"] for f in live] == ["done"]  # one fit row for those inputs, done
    assert recovered <= 120.0
    match_fits = [f for f in fits if f["dataset"] == f"match:{m['match_id']}"]
    assert [f["status"] for f in match_fits] == ["done"]
    outbox = srv.db_query(
        "from competition.models import Outbox\nresult = list(Outbox.objects.filter(topic='fit_after_match').values_list('topic', 'done_at'))"
    )
    assert len(outbox) == 1 and outbox[0][1] is not None
