"""Benchmark: the cost of fanning ``words`` events out to N local websocket clients.

Compares, at a reading speed of ``--rate`` words/s for ``--seconds`` seconds:

(a) baseline — every consumer joined to the match's channel-layer group and receiving on
    its own channel: each word is one Redis message, then N channel-layer deliveries,
    N msgpack decodes and N JSON encodings in this process;
(b) Tossup's per-process :class:`buzzer.rooms.Room` — one channel-layer receive per word,
    the frame serialised once, then N local ``push`` calls filtered by audience.

Both run on ``RedisPubSubChannelLayer`` against a private ``redis-server`` started here.
The fake clients do no websocket I/O (identical in both designs), so the figures are the
fan-out cost alone; the baseline's consumers skip Channels' dispatch machinery, so its
cost is a lower bound. Prints CPU seconds per word (``time.process_time``, this process
only), the share of one core at the given rate, and delivery latency percentiles
(publish → push, wall clock, ms).

    python -m tools.bench_fanout [--clients 200 1000] [--seconds 4] [--rate 5]
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import time
import uuid
from dataclasses import dataclass
from typing import Any

import numpy as np


@dataclass
class Result:
    """One run: ``cpu_per_word`` in CPU seconds; ``latencies`` in seconds, one per delivery."""

    design: str
    clients: int
    words: int
    cpu_per_word: float
    latencies: np.ndarray


def words_message(seq: int) -> dict[str, Any]:
    """A channel-layer message as ``buzzer.rooms.publish`` sends it: one ``words`` event."""
    now = time.time()
    event = {
        "seq": seq,
        "event": "words",
        "data": {"question_id": 1, "start": seq, "words": [f"word{seq}"], "revealed_at": now},
        "audience": "all",
        "actor": "driver",
    }
    return {"type": "match.events", "events": [event], "next_deadline": now + 0.2}


class Client:
    """A local connection as the Room sees it; records (seq, delivery time)."""

    def __init__(self) -> None:
        self.audiences = frozenset({"all", f"player:{id(self)}"})
        self.got: list[tuple[int, float]] = []

    async def push(self, seq: int, text: str) -> None:
        self.got.append((seq, time.time()))


async def read_words(layer: Any, group: str, clients: list[Client], words: int, rate: float) -> Result:
    """Publish ``words`` messages at ``rate``/s and wait until every client has them all;
    returns the CPU spent per word and every delivery's latency (design left blank)."""
    sent: dict[int, float] = {}
    cpu0 = time.process_time()
    for seq in range(1, words + 1):
        sent[seq] = time.time()
        await layer.group_send(group, words_message(seq))
        await asyncio.sleep(1 / rate)
    async with asyncio.timeout(60):
        while sum(len(c.got) for c in clients) < len(clients) * words:
            await asyncio.sleep(0.01)
    cpu = time.process_time() - cpu0
    lat = np.array([t - sent[seq] for c in clients for seq, t in c.got])
    return Result("", len(clients), words, cpu / words, lat)


async def baseline(layer: Any, n: int, words: int, rate: float) -> Result:
    """(a) one channel per consumer in the group; each decodes and serialises every frame."""
    group = f"bench.a.{uuid.uuid4().hex}"
    clients = [Client() for _ in range(n)]

    async def consume(client: Client, channel: str) -> None:
        while True:
            message = await layer.receive(channel)
            for ev in message["events"]:
                text = json.dumps(
                    {"type": "event", "seq": ev["seq"], "event": ev["event"], "data": ev["data"]}
                )
                if ev["audience"] in client.audiences:
                    await client.push(ev["seq"], text)

    tasks = []
    for client in clients:
        channel = await layer.new_channel()
        await layer.group_add(group, channel)
        tasks.append(asyncio.create_task(consume(client, channel)))
    try:
        result = await read_words(layer, group, clients, words, rate)
    finally:
        for task in tasks:
            task.cancel()
        await asyncio.gather(*tasks, return_exceptions=True)
    result.design = "group per consumer"
    return result


async def room(layer: Any, n: int, words: int, rate: float) -> Result:
    """(b) one Room subscription, local fan-out. The reading driver is not started (it
    needs a match in the database); the Room only wakes it, which costs nothing here."""
    from buzzer.rooms import Room, group_name

    match_id = 10**9 + uuid.uuid4().int % 10**9
    r = Room(match_id)
    r.driver.start = lambda: None  # type: ignore[method-assign]
    clients = [Client() for _ in range(n)]
    r.members.update(clients)
    await r._ready.wait()
    try:
        result = await read_words(layer, group_name(match_id), clients, words, rate)
    finally:
        r._listener.cancel()
        await asyncio.gather(r._listener, return_exceptions=True)
    result.design = "per-process Room"
    return result


def report(pairs: list[tuple[Result, Result]], rate: float) -> None:
    core = f"core @{rate:g}w/s"
    header = (
        f"{'clients':>7}  {'design':<20} {'CPU ms/word':>11} {core:>12} "
        f"{'p50 ms':>7} {'p95 ms':>7} {'p99 ms':>7} {'max ms':>7}"
    )
    print(header)
    print("-" * len(header))
    for a, b in pairs:
        for r in (a, b):
            p50, p95, p99, top = np.percentile(r.latencies, [50, 95, 99, 100]) * 1000
            print(
                f"{r.clients:>7}  {r.design:<20} {r.cpu_per_word * 1000:>11.2f} "
                f"{r.cpu_per_word * rate:>11.1%} {p50:>7.1f} {p95:>7.1f} {p99:>7.1f} {top:>7.1f}"
            )
        print(f"{'':>7}  {'ratio (a)/(b)':<20} {a.cpu_per_word / b.cpu_per_word:>11.1f}x")


async def run(clients: list[int], seconds: float, rate: float) -> list[tuple[Result, Result]]:
    from channels.layers import get_channel_layer

    layer = get_channel_layer()
    words = max(1, round(seconds * rate))
    out = []
    for n in clients:
        out.append((await baseline(layer, n, words, rate), await room(layer, n, words, rate)))
    return out


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--clients", type=int, nargs="+", default=[200, 1000])
    parser.add_argument("--seconds", type=float, default=4.0, help="reading time per run")
    parser.add_argument("--rate", type=float, default=5.0, help="words per second")
    args = parser.parse_args()

    os.environ.setdefault("DJANGO_SETTINGS_MODULE", "config.settings")
    import django
    from django.conf import settings

    from tools import launcher

    django.setup()
    url, proc = launcher.start_redis()
    settings.REDIS_URL = url
    settings.CHANNEL_LAYERS = {
        "default": {"BACKEND": "channels_redis.pubsub.RedisPubSubChannelLayer", "CONFIG": {"hosts": [url]}}
    }
    try:
        pairs = asyncio.run(run(args.clients, args.seconds, args.rate))
    finally:
        launcher.stop(proc)
    print(f"word fan-out, {args.rate:g} words/s for {args.seconds:g} s, RedisPubSubChannelLayer, one process")
    report(pairs, args.rate)


if __name__ == "__main__":
    main()
