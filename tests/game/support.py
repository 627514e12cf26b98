"""Builders and a tiny driver for engine tests (deterministic times, no database)."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from competition.game import (
    BonusPartSpec,
    BonusSpec,
    Command,
    Event,
    MatchConfig,
    MatchState,
    PlayerSpec,
    Start,
    TeamSpec,
    Tick,
    apply,
    new_match,
    tokenize_tossup,
)
from scoring.rules import load_preset

T0 = 1000.0
# 60 wpm = one word per second, so token i is revealed at T0 + i.
WPM = 60
HUMAN_A, HUMAN_A2, HUMAN_B, BOT = 11, 12, 21, 31
# Hybrid seats (``make_state(hybrid=True)``): a semi-autonomous light bot on team A, a muted heavy
# bot and an autonomous mid bot that may buzz only from token 2 on team B.
SEMI_A, MUTED_B, AUTO_B = 32, 33, 34
TEAM_A, TEAM_B, TEAM_BOT = 1, 2, 3


def tossup_text(i: int, words: int = 10, power_after: int | None = 4) -> str:
    toks = [f"t{i}w{k}" for k in range(words)]
    if power_after is not None:
        toks.insert(power_after, "(*)")
    return " ".join(toks)


def make_state(
    preset: str = "naqt",
    tossups: int = 3,
    bonuses: int = 3,
    words: int = 10,
    power_after: int | None = 4,
    with_bot: bool = True,
    bot_class: str = "mid",
    texts: list[str] | None = None,
    hybrid: bool = False,
    **config: Any,
) -> MatchState:
    """Teams A (players 11, 12), B (21) and optionally a bot team (31); with ``hybrid``, bot seats
    on the human teams (``SEMI_A``, ``MUTED_B``, ``AUTO_B``); question ids 100+i
    (``texts`` overrides the generated tossup texts),
    answer lines ANSWER-LINE-<i> (never used as a guess), bonus ids 500+i."""
    config.setdefault("between_questions", 2.0)  # the engine tests' short gap (the default is 10 s)
    cfg = MatchConfig(preset=load_preset(preset), wpm=WPM, **config)
    teams = [TeamSpec(TEAM_A, "Alpha", "human"), TeamSpec(TEAM_B, "Beta", "human")]
    players = [
        PlayerSpec(HUMAN_A, TEAM_A, "ann", "human"),
        PlayerSpec(HUMAN_A2, TEAM_A, "abe", "human"),
        PlayerSpec(HUMAN_B, TEAM_B, "bea", "human"),
    ]
    if hybrid:
        players += [
            PlayerSpec(SEMI_A, TEAM_A, "semi", "bot", "light", "semi_autonomous"),
            PlayerSpec(MUTED_B, TEAM_B, "mute", "bot", "heavy", "muted"),
            PlayerSpec(AUTO_B, TEAM_B, "auto", "bot", "mid", "autonomous", 2),
        ]
    if with_bot:
        teams.append(TeamSpec(TEAM_BOT, "Robots", "bot"))
        players.append(PlayerSpec(BOT, TEAM_BOT, "robo", "bot", bot_class))
    texts = texts or [tossup_text(i, words, power_after) for i in range(tossups)]
    qs = [tokenize_tossup(100 + i, text, f"ANSWER-LINE-{i}", "Science") for i, text in enumerate(texts)]
    bs = [
        BonusSpec(
            500 + i, f"lead-in {i}", [BonusPartSpec(f"part {k}", f"BONUS-LINE-{i}-{k}") for k in range(3)]
        )
        for i in range(bonuses)
    ]
    return new_match(cfg, teams, players, qs, bs)


@dataclass
class Driver:
    """Applies commands, keeps every event with the time it was produced."""

    state: MatchState
    log: list[tuple[float, Event]] = field(default_factory=list)

    def do(self, cmd: Command, now: float) -> list[Event]:
        self.state, events = apply(self.state, cmd, now)
        self.log += [(now, e) for e in events]
        return events

    def tick(self, now: float) -> list[Event]:
        return self.do(Tick(), now)

    def run_until(self, until: float) -> list[Event]:
        """Tick punctually at each deadline up to ``until`` (like the real driver)."""
        out: list[Event] = []
        while (d := self.state.next_deadline) is not None and d <= until:
            out += self.tick(d)
        return out + self.tick(until)

    def types(self, events: list[Event] | None = None) -> list[str]:
        return [e.event for e in (events if events is not None else [e for _, e in self.log])]

    def last(self, type_: str) -> Event:
        return next(e for _, e in reversed(self.log) if e.event == type_)

    def all(self, type_: str) -> list[Event]:
        return [e for _, e in self.log if e.event == type_]


def started(**kwargs: Any) -> Driver:
    """A driver whose match started at T0 (token 0 revealed at T0)."""
    d = Driver(make_state(**kwargs))
    d.do(Start(), T0)
    return d
