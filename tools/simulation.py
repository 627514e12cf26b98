"""Simulated human players for ``simulate_match``: real websocket clients with a hidden
true skill.

Model (documented so reports can be read): each question j gets a latent difficulty
d_j ~ N(0, 1) drawn from the seed and the question id; a player of true skill s knows the
answer with probability σ(1.7 (s − d_j)). A player who knows buzzes at the fraction
f = 0.1 + 0.9·σ(−(s − d_j)) + ε, ε ~ N(0, 0.15²), of the question (clipped to [0.05, 1]): the
more the skill exceeds the difficulty, the earlier. A player who does not know negs with
probability 0.1 at a random point in the second half, with a wrong answer. Bonus parts
are answered by the team's first player with probability σ(1.7 (max team skill − d)).
The spread of ε (about 20 words of a 130-word tossup) is what lets a weaker player win
some races; with 0.08 races were nearly deterministic (seed 1, 60 tossups: one player won
58 of them and six of eight humans never buzzed). Offline, over 30 seeds × 60 tossups, the
fitted human skills' Spearman with the truth averaged 0.88 with 0.08 and 0.91 with 0.15.
"""

from __future__ import annotations

import asyncio
import json
import math
import random
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

import websockets

WRONG_ANSWER = "xyzzy plugh"


def unattended_config(wpm: float) -> dict[str, Any]:
    """The engine settings of a simulated match (``MatchConfig`` fields): read at ``wpm`` words
    per minute, ruled by the judge, advancing by itself, short windows (seconds)."""
    return {
        "wpm": wpm,
        "auto_rule": True,
        "unattended": True,
        "auto_advance": True,
        "between_questions": 0.3,
        "dead_time": 1.0,
        "answer_window": 5.0,
        "prompt_window": 5.0,
        "bonus_part_window": 5.0,
    }


def sigmoid(x: float) -> float:
    return 1.0 / (1.0 + math.exp(-x))


def difficulty(seed: int, question_id: int) -> float:
    return random.Random(f"{seed}:d:{question_id}").gauss(0.0, 1.0)


@dataclass
class SimPlayer:
    """One simulated tablet. ``answers`` maps question id → the main answer the player
    says when it knows; ``bonus_answers`` maps (bonus id, part) → main answer."""

    url: str
    name: str
    true_skill: float
    seed: int
    answers: dict[int, str]
    bonus_answers: dict[tuple[int, int], str]
    team_skill: float = 0.0
    captain: bool = False
    me: dict[str, Any] = field(default_factory=dict)
    bonus_team: int | None = None
    sent: list[dict[str, Any]] = field(default_factory=list)

    def _rng(self, *key: Any) -> random.Random:
        return random.Random(":".join(map(str, (self.seed, self.name, *key))))

    def plan(self, question_id: int, token_count: int) -> tuple[int, bool] | None:
        """(token index to buzz at, knows the answer) or None to stay silent."""
        rng = self._rng("tossup", question_id)
        gap = self.true_skill - difficulty(self.seed, question_id)
        if rng.random() < sigmoid(1.7 * gap):
            frac = 0.1 + 0.9 * sigmoid(-gap) + rng.gauss(0.0, 0.15)
            return min(token_count - 1, int(max(0.05, min(1.0, frac)) * (token_count - 1))), True
        if rng.random() < 0.1:
            return int(rng.uniform(0.5, 1.0) * (token_count - 1)), False
        return None

    def bonus_reply(self, bonus_id: int, part: int) -> str:
        rng = self._rng("bonus", bonus_id, part)
        d = random.Random(f"{self.seed}:b:{bonus_id}:{part}").gauss(0.0, 1.0)
        if rng.random() < sigmoid(1.7 * (self.team_skill - d)):
            return self.bonus_answers.get((bonus_id, part), WRONG_ANSWER)
        return WRONG_ANSWER

    async def run(self) -> None:
        async with websockets.connect(self.url, compression=None, max_size=2**22) as ws:
            await self._play(ws)

    async def _send(self, ws: Any, msg: dict[str, Any]) -> None:
        self.sent.append(msg)
        await ws.send(json.dumps(msg))

    async def _ping(self, ws: Any) -> None:
        await ws.send(json.dumps({"type": "ping", "client_time": time.time()}))

    async def _play(self, ws: Any) -> None:
        question_id: int | None = None
        plan: tuple[int, bool] | None = None
        revealed = 0
        buzzed = False  # our buzz is in flight or was accepted for this tossup
        ref = 0
        buzz_refs: set[int] = set()
        async for raw in ws:
            msg = json.loads(raw)
            kind = msg["type"]
            if kind == "snapshot":
                self.me = msg["state"].get("you", {})
                await self._ping(ws)
                continue
            if kind == "error":
                if msg.get("ref") in buzz_refs and msg.get("code") != "team_already_buzzed":
                    buzzed = False  # refused (someone was answering): try again when reading resumes
                continue
            if kind != "event":
                continue
            event, data = msg["event"], msg["data"]
            if event == "tossup_started":
                await self._ping(ws)  # keep the server's clock-offset estimate fresh
                question_id, revealed, buzzed = data["question_id"], 0, False
                plan = self.plan(question_id, data["token_count"])
            elif event == "words" and data["question_id"] == question_id:
                revealed = max(revealed, data["start"] + len(data["words"]))
            elif (event == "buzz" and data["player_id"] == self.me.get("player_id")) or (
                event == "prompt" and data["player_id"] == self.me.get("player_id")
            ):
                knows = plan is not None and plan[1]
                text = self.answers.get(data["question_id"], WRONG_ANSWER) if knows else WRONG_ANSWER
                await self._send(ws, {"type": "answer", "question_id": data["question_id"], "text": text})
                continue
            elif event == "buzz_ruled" and data["team_id"] == self.me.get("team_id"):
                buzzed = True  # our team is done with this tossup
            elif (
                event in ("bonus_part", "bonus_prompt")
                and self.captain
                and self.bonus_team == self.me.get("team_id")
            ):
                text = self.bonus_reply(data["bonus_id"], data["part"])
                await self._send(
                    ws,
                    {
                        "type": "bonus_answer",
                        "bonus_id": data["bonus_id"],
                        "part": data["part"],
                        "text": text,
                    },
                )
                continue
            elif event == "bonus_started":
                self.bonus_team = data["team_id"]
            elif event == "match_ended":
                return
            if plan is not None and not buzzed and question_id is not None and revealed - 1 >= plan[0]:
                ref += 1
                buzz_refs.add(ref)
                buzzed = True
                await self._send(
                    ws,
                    {
                        "type": "buzz",
                        "ref": ref,
                        "question_id": question_id,
                        "token_index": revealed - 1,
                        "client_time": time.time(),
                    },
                )


async def moderate(
    url: str,
    *,
    start: bool = True,
    timeout: float = 3600.0,
    on_event: Callable[[dict[str, Any]], None] | None = None,
) -> list[dict[str, Any]]:
    """Connect as the moderator, send ``start``, and collect every event until
    ``match_ended`` (the moderator sees all audiences, e.g. ``race``); ``on_event`` (optional) is
    called with each event frame as it arrives (e.g. to advance a progress bar)."""
    events: list[dict[str, Any]] = []
    async with websockets.connect(url, compression=None, max_size=2**22) as ws:
        first = json.loads(await ws.recv())
        if first.get("type") != "snapshot":
            raise RuntimeError(f"moderator socket refused: {first}")
        if start:
            await ws.send(json.dumps({"type": "command", "name": "start", "ref": "start"}))
        async with asyncio.timeout(timeout):
            async for raw in ws:
                msg = json.loads(raw)
                if msg["type"] == "error":
                    raise RuntimeError(f"moderator command refused: {msg}")
                if msg["type"] == "event":
                    events.append(msg)
                    if on_event is not None:
                        on_event(msg)
                    if msg["event"] == "match_ended":
                        return events
    return events
