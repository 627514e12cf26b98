"""Simulated human players for ``simulate_match``: real websocket clients with a hidden
true skill.

Model (:class:`HumanModel`; documented so reports can be read): each question j gets a latent
difficulty d_j ~ N(0, 1) drawn from the seed and the question id; a player's true skill is
s ~ N(μ, σ²); a player knows the answer with probability σ(1.7 (s − d_j)). A player who knows buzzes
at the fraction f = e + (1 − e)·σ(−(s − d_j)) + ε, ε ~ N(0, 0.15²), of the question (clipped to
[0.05, 1]): the more the skill exceeds the difficulty, the earlier. A player who does not know negs
with probability q at a random point in the second half, with a wrong answer. Bonus parts are answered
by the team's first player with probability σ(1.7 (max team skill − d)).

Calibration (``python -m tools.calibrate_humans`` prints every figure below from the data). The first
model (μ = 0, σ = 1, e = 0.1, q = 0.1) was never fitted: in 2 × 4-player matches of 20 tossups it
powered 85 % of the tossups, converted 93 %, negged 0.07 per tossup, and the first buzz came at a median
22 % of the question. Real figures: the 2014 HSNCT (1,506 matches, 32,323 tossups read, per-player
powers/tens/negs) powered 17.0 % ± 0.3 % of the tossups, converted 84.3 % ± 0.3 %, had 0.194 ± 0.002
negs per tossup, and a full-game player's gets per tossup heard had a standard deviation of 0.103;
power marks of the PACE NSC sets (4,673 tossups) fall at a median 56 % of the words (quartiles 52 %,
60 %), so about 80 % of real conversions come after 56 % of the question. The four parameters μ, σ, e,
q were fitted to those four figures by simulated moments (vectorised matches with power marks drawn
from the PACE distribution, common random numbers, grid then Nelder–Mead, errors scaled by their
standard errors): μ = −0.33, σ = 0.68, e = 0.71, q = 0.071 reproduce them (power 16.6 %, conversion
84.1 %, negs 0.197, spread 0.103 on fresh draws); the first buzz of a tossup then comes at a median
68 % of the question (quartiles 58 %, 78 %), a correct one at a median 70 %, and 81 % of first buzzes
are right. The noise ε is not identified by these figures and is kept at 0.15: with 0.08 no
parameters reach the HSNCT conversion and spread together; with 0.25 they do (e = 0.93) and the first
buzz median moves to 71 %. Check against the live human-vs-model games of 2024-10-19 (26 first human
buzzes, 5 right; positions in sentences, the model's correct buzzes censoring 86 tossups): the
Kaplan–Meier first quartile of the human buzz point is 66 % of the question and the median is never
reached, consistent with the fitted late buzzing; those few, early-biased, mostly wrong buzzes of
an exhibition crowd are not fitted to. Limits: HSNCT players are high-school nationals teams and the
HSNCT's own power marks are not in the data; skills within a team are drawn independently.

The spread of ε (about 20 words of a 130-word tossup) is also what lets a weaker player win some
races; with 0.08 races were nearly deterministic under the first model.
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

from competition.game import EventName

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


@dataclass(frozen=True)
class HumanModel:
    """The simulated-human population (module docstring): true skill ~ N(``skill_mean``,
    ``skill_sd``²) on the scale of the questions' difficulty d ~ N(0, 1); a player knows with
    probability σ(``slope``·(s − d)), then buzzes at the fraction ``early`` + (1 − ``early``)·σ(−(s − d))
    + N(0, ``noise``²) of the question (clipped to [0.05, 1]); one who does not know negs with
    probability ``neg_rate`` at a uniform point of the second half."""

    skill_mean: float
    skill_sd: float
    early: float
    noise: float
    neg_rate: float
    slope: float = 1.7

    def skill(self, rng: random.Random) -> float:
        """One player's true skill drawn from ``rng``."""
        return rng.gauss(self.skill_mean, self.skill_sd)

    def plan(self, rng: random.Random, gap: float, token_count: int) -> tuple[int, bool] | None:
        """(token index to buzz at, knows the answer) or None to stay silent, for a player whose skill
        exceeds the question's difficulty by ``gap``, drawing from ``rng``."""
        if rng.random() < sigmoid(self.slope * gap):
            frac = self.early + (1.0 - self.early) * sigmoid(-gap) + rng.gauss(0.0, self.noise)
            return min(token_count - 1, int(max(0.05, min(1.0, frac)) * (token_count - 1))), True
        if rng.random() < self.neg_rate:
            return int(rng.uniform(0.5, 1.0) * (token_count - 1)), False
        return None


UNCALIBRATED = HumanModel(skill_mean=0.0, skill_sd=1.0, early=0.1, noise=0.15, neg_rate=0.1)
# Fitted by ``python -m tools.calibrate_humans`` (module docstring): rounded from its output.
HUMANS = HumanModel(skill_mean=-0.33, skill_sd=0.68, early=0.71, noise=0.15, neg_rate=0.071)


@dataclass
class SimPlayer:
    """One simulated tablet. ``answers`` maps question id → the main answer the player
    says when it knows; ``bonus_answers`` maps (bonus id, part) → main answer. The player's
    random draws are keyed by ``seed`` and ``stream`` (default: the name), so a seat that keeps
    its stream plays the same way in every database."""

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
    model: HumanModel = HUMANS
    sent: list[dict[str, Any]] = field(default_factory=list)
    stream: str = ""

    def _rng(self, *key: Any) -> random.Random:
        return random.Random(":".join(map(str, (self.seed, self.stream or self.name, *key))))

    def plan(self, question_id: int, token_count: int) -> tuple[int, bool] | None:
        """(token index to buzz at, knows the answer) or None to stay silent."""
        gap = self.true_skill - difficulty(self.seed, question_id)
        return self.model.plan(self._rng("tossup", question_id), gap, token_count)

    def bonus_reply(self, bonus_id: int, part: int) -> str:
        rng = self._rng("bonus", bonus_id, part)
        d = random.Random(f"{self.seed}:b:{bonus_id}:{part}").gauss(0.0, 1.0)
        if rng.random() < sigmoid(self.model.slope * (self.team_skill - d)):
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
            if event == EventName.TOSSUP_STARTED:
                await self._ping(ws)  # keep the server's clock-offset estimate fresh
                question_id, revealed, buzzed = data["question_id"], 0, False
                plan = self.plan(question_id, data["token_count"])
            elif event == EventName.WORDS and data["question_id"] == question_id:
                revealed = max(revealed, data["start"] + len(data["words"]))
            elif (event == EventName.BUZZ and data["player_id"] == self.me.get("player_id")) or (
                event == EventName.PROMPT and data["player_id"] == self.me.get("player_id")
            ):
                knows = plan is not None and plan[1]
                text = self.answers.get(data["question_id"], WRONG_ANSWER) if knows else WRONG_ANSWER
                await self._send(ws, {"type": "answer", "question_id": data["question_id"], "text": text})
                continue
            elif event == EventName.BUZZ_RULED and data["team_id"] == self.me.get("team_id"):
                buzzed = True  # our team is done with this tossup
            elif (
                event in (EventName.BONUS_PART, EventName.BONUS_PROMPT)
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
            elif event == EventName.BONUS_STARTED:
                self.bonus_team = data["team_id"]
            elif event == EventName.MATCH_ENDED:
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
                    if msg["event"] == EventName.MATCH_ENDED:
                        return events
    return events
