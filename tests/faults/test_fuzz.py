"""(b) 10,000 fuzzed frames from spectators, players and bots — hypothesis strategies built
from the protocol's own schema (``buzzer.protocol.FRAMES``/``COMMANDS``) plus hostile
values (unhashable types, 1,500-deep nesting, NaN/inf/1.7e308, 1 MB strings, 16 MiB frames)
— while a bystander must receive every word, on time, and the event log must show no change
caused by the fuzzers.

Figures (frames sent, answers by code, words delivered, lateness, server RSS) are printed;
run with ``-s`` to see them.
"""

from __future__ import annotations

import asyncio
import collections
import concurrent.futures
import contextlib
import json
import time
from dataclasses import dataclass, field
from typing import Any

import websockets

from buzzer import protocol
from competition.vocabulary import Role
from tests.faults.clients import (
    REPLY_TYPES,
    Client,
    generate_frames,
    hostile_frames,
    open_ws,
    word_delivery,
)
from tests.faults.conftest import Bystander, Served, is_event

FRAMES = 10_000
SEED = 20_260_707
# The scratch database numbers every tossup, bonus, team and player below 100; fuzzed ids
# avoid them, so a fuzzer never really plays (that would be a legitimate change).
REAL_IDS = frozenset(range(100))
SOCKETS_PER_ROLE = 8
PACE = 15.0  # frames/s per socket: under the per-connection rate limit, so frames reach the parser
WPM = 150  # the first demo tossup (93 tokens) is read for 37 s, longer than the fuzzing
REPLY_TIMEOUT = 10.0
BIG_FRAMES = 20  # each of 1 MB and 16 MiB (the issue: 20 such frames grew the server by 230 MB)


def report(title: str, **figures: Any) -> None:
    print(
        f"\n[{title}] "
        + ", ".join(f"{k}={v:.3f}" if isinstance(v, float) else f"{k}={v}" for k, v in figures.items())
    )


def timed(fn: Any, *args: Any) -> tuple[Any, float]:
    t0 = time.monotonic()
    return fn(*args), time.monotonic() - t0


def expects_answer(text: str, role: Role) -> bool:
    """Every frame is answered except a well-formed ``heartbeat_ack`` (itself an answer)."""
    try:
        return protocol.parse(text, role)["type"] != "heartbeat_ack"
    except Exception:
        return True


@dataclass
class FuzzStats:
    sent: int = 0
    expected: int = 0  # frames that must be answered (all but well-formed heartbeat_acks)
    answers: collections.Counter = field(default_factory=collections.Counter)
    unanswered: list[str] = field(default_factory=list)  # frames that got no answer
    dropped: list[tuple[int | None, str]] = field(default_factory=list)  # (close code, frame) ended a socket


async def fuzzer(url: str, role: Role, frames: list[str], stats: FuzzStats) -> None:
    """Send ``frames`` one at a time, each waiting for its answer (``error``/``ack``/``pong``/
    ``snapshot``), at most PACE a second; reconnect if the server ends the connection."""
    client: Client | None = None
    for text in frames:
        if client is None or client.closed.is_set():
            if client is not None:
                await client.close()
            client = await Client.open(url)
            await client.wait_for(lambda f: f.get("type") == "snapshot", REPLY_TIMEOUT)
        started = time.monotonic()
        mark = len(client.frames)
        await client.ws.send(text)
        stats.sent += 1
        if expects_answer(text, role):
            stats.expected += 1
            try:
                reply = await client.wait_for(
                    lambda f: f.get("type") in REPLY_TYPES, REPLY_TIMEOUT, after=mark
                )
                stats.answers[reply.get("code") or reply["type"]] += 1
            except ConnectionError:
                stats.dropped.append((client.ws.close_code, text[:200]))
            except TimeoutError:
                stats.unanswered.append(text[:200])
        await asyncio.sleep(max(0.0, 1 / PACE - (time.monotonic() - started)))
    if client is not None:
        await client.close()


async def big_frame(url: str, size: int) -> int | None:
    """Send one frame of ``size`` characters; the server must refuse it by closing the
    connection (its frame limit) without answering. Returns the close code seen."""
    ws = await open_ws(url, close_timeout=1)
    await asyncio.wait_for(ws.recv(), REPLY_TIMEOUT)  # the snapshot
    payload = json.dumps({"type": "ping", "client_time": 1, "ref": "x" * size})
    sending = asyncio.create_task(ws.send(payload))
    # The server's close frame arrives while our frame is still being written (and our close
    # reply queues behind it): the close code, not the closing handshake, is the answer.
    with contextlib.suppress(websockets.ConnectionClosed, OSError, TimeoutError):
        async with asyncio.timeout(REPLY_TIMEOUT):
            while ws.protocol.close_rcvd is None and ws.close_code is None:
                with contextlib.suppress(TimeoutError):
                    frame = json.loads(await asyncio.wait_for(ws.recv(), 0.25))
                    assert frame.get("type") in ("heartbeat", "event"), f"a {size}-char frame was answered"
    ws.transport.abort()
    sending.cancel()
    with contextlib.suppress(BaseException):
        await sending
    received = ws.protocol.close_rcvd
    return received.code if received is not None else ws.close_code


async def _fuzz_a_tossup(srv: Served, m: dict[str, Any], frames: list[str]) -> dict[str, Any]:
    code = m["code"]
    bystander = await Bystander(srv.ws_url(code, "watch")).start()
    mod = await Bystander(srv.ws_url(code, "moderate", m["moderator_token"])).start()
    urls = {
        "watch": [srv.ws_url(code, "watch")] * SOCKETS_PER_ROLE,
        "player": [srv.ws_url(code, "play", p["token"]) for p in m["players"].values()] * 2,
        "bot": [srv.ws_url(code, "play", b["token"]) for b in m["bots"]]
        * (SOCKETS_PER_ROLE // len(m["bots"])),
    }
    sockets = [(role, url) for role, role_urls in urls.items() for url in role_urls]
    hostile = hostile_frames()
    # Each socket gets its share of the fuzzed frames and every hand-picked hostile frame.
    shares = [hostile + frames[i :: len(sockets)] for i in range(len(sockets))]
    stats = {role: FuzzStats() for role in urls}
    await mod.send({"type": "command", "name": "start", "command_id": "start@0"})
    started = await bystander.wait_for(is_event("tossup_started"))
    qid, count = started["data"]["question_id"], started["data"]["token_count"]
    head = (await asyncio.to_thread(srv.events, code))[-1]["seq"]
    rss_before = srv.rss_mb()
    t0 = time.monotonic()
    await asyncio.gather(
        *(
            fuzzer(url, Role.SPECTATOR if role == "watch" else Role.PLAYER, share, stats[role])
            for (role, url), share in zip(sockets, shares, strict=True)
        )
    )
    fuzz_seconds = time.monotonic() - t0
    rss_after_fuzz = srv.rss_mb()
    t1 = time.monotonic()
    closes = []
    for size in [1_000_000] * BIG_FRAMES + [16 * 2**20] * BIG_FRAMES:
        closes.append(await big_frame(srv.ws_url(code, "watch"), size))
    big_seconds = time.monotonic() - t1
    await asyncio.sleep(1.0)
    rss_after_big = srv.rss_mb()
    await bystander.wait_for(
        lambda f: (
            is_event("words")(f)
            and f["data"]["question_id"] == qid
            and f["data"]["start"] + len(f["data"]["words"]) >= count
        ),
        timeout=count * 60 / WPM,
    )
    await bystander.close()
    await mod.close()
    return {
        "qid": qid,
        "count": count,
        "head": head,
        "stats": stats,
        "fuzz_seconds": fuzz_seconds,
        "big_seconds": big_seconds,
        "delivery": word_delivery(bystander.frames, qid),
        "bystander_connects": len(bystander.connects),
        "closes": closes,
        "rss": (rss_before, rss_after_fuzz, rss_after_big),
    }


def test_fuzzed_frames_change_nothing_and_silence_no_one(serve):
    t0 = time.monotonic()
    with concurrent.futures.ThreadPoolExecutor(1) as pool:
        # Generated (deterministically, by seed) while the server starts.
        generated = pool.submit(timed, generate_frames, FRAMES, SEED, REAL_IDS)
        srv = serve()
        m = srv.create_match(
            tossups=1,
            bots=("Hal", "Deep"),
            players={"ada": "Red", "bo": "Red", "cy": "Blue", "di": "Blue"},
            config={"wpm": WPM},
        )
        frames, generate_seconds = generated.result(timeout=300)
    setup_seconds = time.monotonic() - t0
    ids = srv.db_query(
        f"""
from competition.models import Match
m = Match.objects.get(join_code={m["code"]!r})
result = [*m.tossup_ids, *m.bonus_ids, *m.teams.values_list("id", flat=True), *m.players.values_list("id", flat=True)]
"""
    )
    assert set(ids) <= REAL_IDS, "the fuzzed ids must avoid the match's own ids"
    out = asyncio.run(_fuzz_a_tossup(srv, m, frames))
    log = srv.events(m["code"])
    seats = {f"player:{p['player_id']}" for p in [*m["players"].values(), *m["bots"]]}
    stats, delivery = out["stats"], out["delivery"]
    rss_before, rss_fuzz, rss_big = out["rss"]
    for role, s in stats.items():
        report(
            f"fuzz {role}",
            sent=s.sent,
            answers=dict(s.answers),
            unanswered=len(s.unanswered),
            dropped=len(s.dropped),
        )
    report(
        "fuzz",
        frames=sum(s.sent for s in stats.values()),
        generate_seconds=generate_seconds,
        setup_seconds=setup_seconds,
        fuzz_seconds=out["fuzz_seconds"],
        big_frames_seconds=out["big_seconds"],
        words=f"{len(delivery.indexes)}/{out['count']}",
        max_lateness_s=delivery.max_lateness,
        big_frame_closes=collections.Counter(out["closes"]),
        rss_before_mb=rss_before,
        rss_after_fuzz_mb=rss_fuzz,
        rss_after_big_frames_mb=rss_big,
    )
    assert sum(s.sent for s in stats.values()) >= FRAMES
    # Every frame was answered, and none ended its connection.
    for s in stats.values():
        assert s.unanswered == [] and s.dropped == []
        assert sum(s.answers.values()) == s.expected > 0.8 * s.sent
    assert "internal" not in collections.Counter(c for s in stats.values() for c in s.answers)
    # Oversized frames are refused by closing (1009: message too big) and cost no memory.
    assert all(c in (1009, 1006) for c in out["closes"]), out["closes"]
    assert rss_big - rss_fuzz < 30 and rss_fuzz - rss_before < 60
    # The bystander saw every word, in order, on time, on its one connection.
    assert out["bystander_connects"] == 1
    assert delivery.indexes == list(range(out["count"]))
    assert delivery.max_lateness <= 1.0
    # The log shows nothing from the fuzzers: no event by a fuzzer's seat, no buzz, no flag,
    # no score: only the reading of the tossup went on.
    during = [e for e in log if e["seq"] > out["head"]]
    assert [e for e in during if e["actor"] in seats] == []
    assert {e["event"] for e in log if e["actor"] in seats} <= {"player_joined"}  # their seating
    assert {e["event"] for e in during} <= {
        "words",
        "tossup_ended",
        "tossup_revealed",
        "bonus_started",
        "match_ended",
    }
    assert all(v == 0 for e in log for v in (e["data"].get("scores") or {}).values())
