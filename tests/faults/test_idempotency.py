"""(g) Moderator commands are idempotent: a double ``undo`` and a double ``adjust`` carrying
the same ``command_id`` — sent twice quickly on one dashboard and once more from a second
dashboard — apply once (scores and the event log), and every copy is acknowledged.

The ids are made as the shared browser client makes them (frontend/static/frontend/match.js):
``${name}:${JSON of the other fields}@${lastSeq}`` — what the moderator saw.
"""

from __future__ import annotations

import asyncio
import json
from typing import Any

from tests.faults.clients import Client
from tests.faults.conftest import Served, is_event

WRONG = "zzz not it"


def report(title: str, **figures: Any) -> None:
    print(f"\n[{title}] " + ", ".join(f"{k}={v}" for k, v in figures.items()))


def command_id(name: str, fields: dict[str, Any], last_seq: int) -> str:
    return f"{name}:{json.dumps(fields, separators=(',', ':'))}@{last_seq}"


def last_seq(client: Client) -> int:
    seqs = [f["seq"] for _, f in client.frames if f.get("type") in ("event", "snapshot")]
    return max(seqs)


async def send_thrice(mod1: Client, mod2: Client, name: str, fields: dict[str, Any]) -> list[dict[str, Any]]:
    """The same command (same id) twice at once from one dashboard, once from another;
    returns the three answers."""
    cid = command_id(name, fields, last_seq(mod1))
    marks = (len(mod1.frames), len(mod2.frames))
    frame = {"type": "command", "name": name, **fields, "command_id": cid}
    await asyncio.gather(
        mod1.send({**frame, "ref": f"{name}-1a"}),
        mod1.send({**frame, "ref": f"{name}-1b"}),
        mod2.send({**frame, "ref": f"{name}-2"}),
    )
    answers = []
    for client, mark, ref in (
        (mod1, marks[0], f"{name}-1a"),
        (mod1, marks[0], f"{name}-1b"),
        (mod2, marks[1], f"{name}-2"),
    ):
        answers.append(
            await client.wait_for(
                lambda f, ref=ref: f.get("type") in ("ack", "error") and f.get("ref") == ref, after=mark
            )
        )
    return answers


async def neg(player: Client, qid: int, after_word: int) -> dict[str, Any]:
    """Buzz once ``after_word`` is shown, answer wrong, return the ruling."""
    words = await player.wait_for(
        lambda f: is_event("words")(f) and f["data"]["start"] + len(f["data"]["words"]) > after_word,
        timeout=30,
    )
    shown = words["data"]["start"] + len(words["data"]["words"]) - 1
    mark = len(player.frames)
    await player.send({"type": "buzz", "question_id": qid, "token_index": shown})
    await player.wait_for(is_event("buzz"), after=mark)
    await player.send({"type": "answer", "question_id": qid, "text": WRONG})
    return (await player.wait_for(is_event("buzz_ruled"), after=mark))["data"]


async def _double_commands(srv: Served, m: dict[str, Any]) -> dict[str, Any]:
    code = m["code"]
    mod1 = await Client.open(srv.ws_url(code, "moderate", m["moderator_token"]))
    mod2 = await Client.open(srv.ws_url(code, "moderate", m["moderator_token"]))
    ana = await Client.open(srv.ws_url(code, "play", m["players"]["ana"]["token"]))
    ben = await Client.open(srv.ws_url(code, "play", m["players"]["ben"]["token"]))
    for c in (mod1, mod2, ana, ben):
        await c.wait_for(lambda f: f.get("type") == "snapshot")
    await mod1.send(
        {"type": "command", "name": "start", "command_id": command_id("start", {}, last_seq(mod1))}
    )
    qid = (await ana.wait_for(is_event("tossup_started")))["data"]["question_id"]
    rulings = [await neg(ana, qid, 5), await neg(ben, qid, 10)]
    await mod1.wait_for(
        lambda f: is_event("buzz_ruled")(f) and f["data"]["player_id"] == rulings[1]["player_id"]
    )
    undo = await send_thrice(mod1, mod2, "undo", {})
    red = next(t["team_id"] for t in m["teams"] if t["name"] == "Red")
    adjust_fields = {"team_id": red, "points": 7, "reason": "protest upheld"}
    await mod1.wait_for(is_event("ruling_undone"))
    adjust = await send_thrice(mod1, mod2, "adjust", adjust_fields)
    # The same adjustment decided again later (the moderator saw its effect) is a new command.
    await mod1.wait_for(is_event("points_adjusted"))
    mark = len(mod1.frames)
    await mod1.send(
        {
            "type": "command",
            "name": "adjust",
            **adjust_fields,
            "command_id": command_id("adjust", adjust_fields, last_seq(mod1)),
            "ref": "again",
        }
    )
    again = await mod1.wait_for(
        lambda f: f.get("type") in ("ack", "error") and f.get("ref") == "again", after=mark
    )
    for c in (mod1, mod2, ana, ben):
        await c.close()
    return {"rulings": rulings, "undo": undo, "adjust": adjust, "again": again, "red": red}


def test_a_double_undo_and_a_double_adjust_apply_once(serve):
    srv = serve()
    m = srv.create_match(
        tossups=2,
        players={"ana": "Red", "ben": "Blue"},
        config={"wpm": 240, "auto_rule": True, "auto_advance": False},
    )
    out = asyncio.run(_double_commands(srv, m))
    log = srv.events(m["code"])
    red, blue = str(out["red"]), str(next(t["team_id"] for t in m["teams"] if t["name"] == "Blue"))
    undone = [e for e in log if e["event"] == "ruling_undone"]
    adjusted = [e for e in log if e["event"] == "points_adjusted"]
    final = srv.db_query(
        f"from competition.models import Match\nresult = Match.objects.get(join_code={m['code']!r}).state['scores']"
    )
    report(
        "double commands",
        rulings=[(r["ruling"], r["points"]) for r in out["rulings"]],
        undo_acks=[(a["type"], a.get("duplicate", False)) for a in out["undo"]],
        adjust_acks=[(a["type"], a.get("duplicate", False)) for a in out["adjust"]],
        ruling_undone_events=len(undone),
        points_adjusted_events=len(adjusted),
        scores=final,
    )
    neg_points = out["rulings"][0]["points"]
    assert out["rulings"][0]["ruling"] == out["rulings"][1]["ruling"] == "wrong" and neg_points < 0
    for answers in (out["undo"], out["adjust"]):
        # Every copy is acknowledged with the same seq; exactly one was applied.
        assert [a["type"] for a in answers] == ["ack"] * 3
        assert sorted(a.get("duplicate", False) for a in answers) == [False, True, True]
        assert len({a["seq"] for a in answers}) == 1
    # Undo reversed only the last ruling (Blue's), not Red's neg as well.
    assert len(undone) == 1 and undone[0]["data"]["player_id"] == out["rulings"][1]["player_id"]
    # Adjust added 7 once; the later, separately decided adjustment added 7 again.
    assert out["again"]["type"] == "ack" and not out["again"].get("duplicate")
    assert len(adjusted) == 2
    assert final[red] == neg_points + 7 + 7 and final[blue] == 0
