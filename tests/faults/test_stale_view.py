"""Two moderators at once: "pause" and "skip" sent together from two dashboards that saw the
same match. Before, both were applied in 4 of 10 rounds (the pause landed on the gap after the
skipped tossup). Each command carries the seq of the view it was made on (``seen_seq``, as the
dashboard's ``MatchSocket.send`` adds it); the server decides under the match's row lock, so
exactly one applies and the other is refused ``stale_view``, with no seq gap in the log or on
either dashboard.
"""

from __future__ import annotations

import asyncio
from typing import Any

from tests.faults.clients import Client
from tests.faults.conftest import Served, is_event
from tests.faults.test_idempotency import command_id, last_seq, report

ROUNDS = 4


def answer_to(client: Client, ref: str, mark: int):
    return client.wait_for(lambda f: f.get("type") in ("ack", "error") and f.get("ref") == ref, after=mark)


def command(client: Client, name: str, ref: str, **fields: Any) -> dict[str, Any]:
    """A command frame as the dashboard sends it: its id and the seq of its view."""
    seen = last_seq(client)
    return {"type": "command", "name": name, **fields, "command_id": command_id(name, fields, seen),
            "seen_seq": seen, "ref": ref}  # fmt: skip


def event_seqs(client: Client) -> list[int]:
    """The seqs a dashboard applied: its first snapshot's, then every event's."""
    frames = [f for _, f in client.frames if f.get("type") in ("snapshot", "event")]
    return [frames[0]["seq"]] + [f["seq"] for f in frames[1:] if f["type"] == "event"]


async def _rounds(srv: Served, m: dict[str, Any]) -> list[dict[str, Any]]:
    mod1 = await Client.open(srv.ws_url(m["code"], "moderate", m["moderator_token"]))
    mod2 = await Client.open(srv.ws_url(m["code"], "moderate", m["moderator_token"]))
    for mod in (mod1, mod2):
        await mod.wait_for(lambda f: f.get("type") == "snapshot")
    await mod1.send(command(mod1, "start", "start"))
    outcomes = []
    for k in range(ROUNDS):
        # Both dashboards watch a tossup being read.
        marks = (len(mod1.frames), len(mod2.frames))
        for mod, mark in zip((mod1, mod2), marks, strict=True):
            await mod.wait_for(is_event("words"), timeout=30, after=mark)
        marks = (len(mod1.frames), len(mod2.frames))
        pause, skip = command(mod1, "pause", f"pause{k}"), command(mod2, "skip", f"skip{k}")
        await asyncio.gather(mod1.send(pause), mod2.send(skip))
        answers = {
            "pause": await answer_to(mod1, f"pause{k}", marks[0]),
            "skip": await answer_to(mod2, f"skip{k}", marks[1]),
        }
        outcomes.append(answers)
        applied = [name for name, a in answers.items() if a["type"] == "ack"]
        # Go on to the next round's reading: resume a pause, start the next tossup after a skip.
        if applied == ["pause"]:
            await mod1.wait_for(is_event("paused"), after=marks[0])
            await mod1.send(command(mod1, "resume", f"resume{k}"))
            await mod1.wait_for(is_event("resumed"), after=marks[0])
            await mod1.send(command(mod1, "skip", f"skip-after{k}"))
        await mod1.wait_for(is_event("tossup_ended"), after=marks[0])
        ended = len(mod1.frames)
        await mod1.send(command(mod1, "next", f"next{k}"))
        await mod1.wait_for(is_event("tossup_started"), after=ended)
    await asyncio.sleep(0.5)  # the last events reach both dashboards
    outcomes.append({"seqs": [event_seqs(mod1), event_seqs(mod2)]})
    for mod in (mod1, mod2):
        await mod.close()
    return outcomes


def test_pause_and_skip_from_two_dashboards_at_once_apply_exactly_once(serve):
    srv = serve()
    m = srv.create_match(tossups=ROUNDS + 2, config={"wpm": 240, "auto_advance": False})
    *rounds, last = asyncio.run(_rounds(srv, m))
    log = srv.events(m["code"])
    report(
        "two moderators",
        rounds=[{n: a["type"] if a["type"] == "ack" else a["code"] for n, a in r.items()} for r in rounds],
        paused=sum(e["event"] == "paused" for e in log),
        ended=sum(e["event"] == "tossup_ended" for e in log),
    )
    for answers in rounds:
        kinds = sorted(a["type"] for a in answers.values())
        assert kinds == ["ack", "error"], answers
        refused = next(a for a in answers.values() if a["type"] == "error")
        assert refused["code"] == "stale_view" and refused["extra"]["seen_seq"] < refused["extra"]["seq"]
        assert not any(a.get("duplicate") for a in answers.values())
    # Never a pause on the gap after a skipped tossup: each pause came while a tossup was read.
    names = [e["event"] for e in log]
    for i, name in enumerate(names):
        if name == "paused":
            before = [n for n in names[:i] if n in ("tossup_started", "tossup_ended")]
            assert before[-1] == "tossup_started", names[max(0, i - 5) : i + 1]
    # No seq gap: the log is 1..n, and each dashboard applied every seq after its snapshot (the
    # reading went on after they closed: the log is longer).
    assert [e["seq"] for e in log] == list(range(1, len(log) + 1))
    for seqs in last["seqs"]:
        assert seqs == list(range(seqs[0], seqs[0] + len(seqs))) and seqs[-1] <= len(log)
