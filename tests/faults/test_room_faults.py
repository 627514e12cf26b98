"""(a) No client can silence a room: 200 tablets connecting and leaving for 30 s (half
cleanly, half by dropping TCP) and one tablet that stops reading, while a bystander must
receive every word of the tossup, in order, none more than 1 s after the server revealed it.

Figures (words delivered, max lateness, server RSS) are printed; run with ``-s`` to see them.
"""

from __future__ import annotations

import asyncio
import time
from typing import Any

from tests.faults.clients import SleepingTablet, churn, word_delivery
from tests.faults.conftest import Bystander, Served, is_event

CHURN_CLIENTS = 200
CHURN_SECONDS = 30.0
# The demo packet's first tossup has 93 tokens: at 150 wpm it is read for 37 s, longer than
# the churn, so every word is revealed while the room is being churned.
WPM = 150
MAX_LATENESS = 1.0


def report(title: str, **figures: Any) -> None:
    print(
        f"\n[{title}] "
        + ", ".join(f"{k}={v:.3f}" if isinstance(v, float) else f"{k}={v}" for k, v in figures.items())
    )


async def _churn_during_a_tossup(srv: Served, m: dict[str, Any]) -> dict[str, Any]:
    watch = srv.ws_url(m["code"], "watch")
    bystander = await Bystander(watch).start()
    mod = await Bystander(srv.ws_url(m["code"], "moderate", m["moderator_token"])).start()
    sleeper = await SleepingTablet.open(watch)
    rss_before = srv.rss_mb()
    await mod.send({"type": "command", "name": "start", "command_id": "start@0"})
    started = await bystander.wait_for(is_event("tossup_started"))
    qid, count = started["data"]["question_id"], started["data"]["token_count"]
    deadline = time.time() + CHURN_SECONDS
    stats, _ = await asyncio.gather(churn(watch, CHURN_CLIENTS, CHURN_SECONDS), sleeper.doze(deadline))
    rss_after_churn = srv.rss_mb()
    sleeper_backlog = sleeper.queued_bytes()
    # The reading goes on past the churn: wait for the last word (bounded by the read time).
    await bystander.wait_for(
        lambda f: (
            is_event("words")(f)
            and f["data"]["question_id"] == qid
            and f["data"]["start"] + len(f["data"]["words"]) >= count
        ),
        timeout=count * 60 / WPM,
    )
    await asyncio.sleep(1.0)  # let the server settle: the churned connections are gone
    rss_after = srv.rss_mb()
    sleeper.drop()
    await bystander.close()
    await mod.close()
    return {
        "qid": qid,
        "count": count,
        "stats": stats,
        "delivery": word_delivery(bystander.frames, qid),
        "bystander_connects": len(bystander.connects),
        "sleeper_requests": sleeper.requested,
        "sleeper_backlog": sleeper_backlog,
        "rss": (rss_before, rss_after_churn, rss_after),
    }


def test_churn_and_a_sleeping_tablet_do_not_silence_the_room(serve):
    srv = serve()
    m = srv.create_match(tossups=1, config={"wpm": WPM})
    out = asyncio.run(_churn_during_a_tossup(srv, m))
    stats, delivery = out["stats"], out["delivery"]
    rss_before, rss_churn, rss_after = out["rss"]
    report(
        "churn",
        connects=stats.connects,
        clean=stats.clean_closes,
        dropped=stats.dropped,
        failed=len(stats.failed),
        words=f"{len(delivery.indexes)}/{out['count']}",
        max_lateness_s=delivery.max_lateness,
        sleeper_snapshot_requests=out["sleeper_requests"],
        sleeper_backlog_bytes=out["sleeper_backlog"],
        rss_before_mb=rss_before,
        rss_after_churn_mb=rss_churn,
        rss_after_mb=rss_after,
    )
    # The churn really happened: every client came and went several times, both ways.
    assert stats.connects >= 2 * CHURN_CLIENTS
    assert stats.clean_closes >= CHURN_CLIENTS // 2 and stats.dropped >= CHURN_CLIENTS // 2
    assert stats.failed == []  # every connection got its snapshot
    # The sleeping tablet really stopped reading: the server's sends to it backed up.
    assert out["sleeper_backlog"] > 64 * 1024
    # The bystander never had to reconnect and saw every word, in order, on time.
    assert out["bystander_connects"] == 1
    assert delivery.indexes == list(range(out["count"]))
    assert delivery.max_lateness <= MAX_LATENESS
    # Connections that are gone hold no memory.
    assert rss_after - rss_before < 60
