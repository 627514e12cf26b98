"""Whole matches: a scripted match with hand-computed scores, and seeded random simulations
checking answer-line secrecy, JSON round trips, purity and score bookkeeping at every step."""

from __future__ import annotations

import functools
import json
import random
from collections import Counter

import pytest

from competition.game import (
    Adjust,
    Answer,
    BonusAnswer,
    Buzz,
    Command,
    Event,
    MatchState,
    Pause,
    Resume,
    Rule,
    RuleViolation,
    SetSpeed,
    Start,
    Tick,
    Undo,
    apply,
    view,
)
from competition.vocabulary import JUDGE_VERDICTS, MODERATOR_VERDICTS

from .support import BOT, HUMAN_A, HUMAN_A2, HUMAN_B, T0, TEAM_A, TEAM_B, TEAM_BOT, Driver, make_state

# (time offset, command) for a 4-tossup naqt match, auto-ruled, 10 words/tossup at 1 word/s,
# (*) after word 4. Tossup k starts when the previous one (and its bonus) ended + 2 s.
SCRIPT: list[tuple[float, Command]] = [
    (0.0, Start()),
    # Tossup 100: A powers on token 2 (+15), bonus: 10 + 10 + 0 (A = 35).
    (2.5, Buzz(HUMAN_A, 100, 2)),
    (3.0, Answer(HUMAN_A, 100, "g1", "accept")),
    (3.5, BonusAnswer(HUMAN_A2, 500, 0, "b", "accept")),
    (4.0, BonusAnswer(HUMAN_A, 500, 1, "b", "accept")),
    (4.5, BonusAnswer(HUMAN_A, 500, 2, "b", "reject")),
    # Tossup 101 starts at 6.5: B negs on token 2 (−5); A wrong at token 6 scores 0 (second neg);
    # the bot times out at the end of the read (0); the tossup is dead.
    (9.0, Buzz(HUMAN_B, 101, 2)),
    (9.5, Answer(HUMAN_B, 101, "g2", "reject")),
    (13.0, Buzz(HUMAN_A, 101, 6)),
    (13.5, Answer(HUMAN_A, 101, "g3", "reject")),
    (18.0, Buzz(BOT, 101, 9)),
    # (bot's answer window runs out at 18.15 + 8; tossup 102 starts at 28.15)
    # Tossup 102: B answers in dead time (+10), bonus all time out (B = 5).
    (39.0, Buzz(HUMAN_B, 102, 9)),
    (40.0, Answer(HUMAN_B, 102, "g4", "accept")),
    # bonus parts time out at 50, 60, 70; tossup 103 starts at 72 and goes dead.
]
EXPECTED = {str(TEAM_A): 35, str(TEAM_B): 5, str(TEAM_BOT): 0}


def run_script(punctual: bool) -> Driver:
    d = Driver(make_state(tossups=4, with_bot=True, auto_rule=True))
    for offset, cmd in SCRIPT:
        if punctual:
            d.run_until(T0 + offset)
        d.do(cmd, T0 + offset)
    d.run_until(T0 + 200)
    return d


def team_points(events: list[Event]) -> Counter[str]:
    """Scores rebuilt from the scoring events alone."""
    totals: Counter[str] = Counter()
    bonus_team: dict[int, int] = {}
    for e in events:
        if e.event == "buzz_ruled":
            totals[str(e.data["team_id"])] += e.data["points"]
        elif e.event == "bonus_started":
            bonus_team[e.data["bonus_id"]] = e.data["team_id"]
        elif e.event == "bonus_part_ruled":
            totals[str(bonus_team[e.data["bonus_id"]])] += e.data["points"]
        elif e.event == "ruling_undone":
            totals[str(e.data["team_id"])] -= e.data["points_reversed"]
        elif e.event == "points_adjusted":
            totals[str(e.data["team_id"])] += e.data["points"]
    return totals


def test_scripted_match_scores():
    d = run_script(punctual=True)
    events = [e for _, e in d.log]
    assert d.state.status == "ended" and d.types()[-1] == "match_ended"
    assert [e.data["outcome"] for e in d.all("tossup_ended")] == ["answered", "dead", "answered", "dead"]
    assert [(e.data["ruling"], e.data["points"]) for e in d.all("buzz_ruled")] == [
        ("correct", 15),
        ("wrong", -5),
        ("wrong", 0),
        ("timeout", 0),
        ("correct", 10),
    ]
    assert d.state.scores == EXPECTED == d.last("match_ended").data["scores"]
    assert {k: team_points(events)[k] for k in EXPECTED} == EXPECTED


def test_late_driver_gets_the_same_rulings():
    punctual, late = run_script(punctual=True), run_script(punctual=False)
    assert late.state.scores == punctual.state.scores
    assert late.state.history == punctual.state.history
    assert [e.data for e in late.all("buzz")] == [e.data for e in punctual.all("buzz")]
    # The late driver sees fewer, bigger word batches.
    assert len(late.all("words")) < len(punctual.all("words"))


def secret_lines(state: MatchState) -> set[str]:
    lines = {q.answer_line for q in state.tossups}
    return lines | {p.answer_line for b in state.bonuses for p in b.parts}


class Checker:
    """Applies commands and checks, at every step: the input state is unchanged, the new state
    survives a JSON round trip, and no answer line reaches a non-moderator event or view before
    it was revealed (tossup_ended / bonus_part_ruled)."""

    def __init__(self, driver: Driver) -> None:
        self.d = driver
        self.secret = secret_lines(driver.state)
        self.revealed: set[str] = set()
        self.refusals: Counter[str] = Counter()
        self.audiences = ["all", *(f"player:{p.player_id}" for p in driver.state.players)]

    def do(self, cmd: Command, now: float) -> None:
        before = self.d.state.to_dict()
        try:
            new, events = apply(self.d.state, cmd, now)
        except RuleViolation as err:
            self.refusals[err.code] += 1
            assert self.d.state.to_dict() == before
            return
        assert self.d.state.to_dict() == before, f"{cmd} mutated its input"
        data = json.loads(json.dumps(new.to_dict()))
        assert MatchState.from_dict(data) == new
        for e in events:
            if e.event == "tossup_ended" or e.event == "bonus_part_ruled":
                self.revealed.add(e.data["answer_line"])
            if e.audience != "moderator":
                self._assert_no_secret(json.dumps(e.data), e.event)
        for audience in self.audiences:
            self._assert_no_secret(json.dumps(view(new, audience)), f"view {audience}")
        self.d.state = new
        self.d.log += [(now, e) for e in events]

    def _assert_no_secret(self, text: str, where: str) -> None:
        leaked = {line for line in self.secret - self.revealed if line in text}
        assert not leaked, f"{where} leaks {leaked}"


@functools.cache
def simulate(seed: int, auto_rule: bool, preset: str) -> Checker:
    rng = random.Random(seed)
    d = Driver(make_state(preset=preset, tossups=6, bonuses=4, auto_rule=auto_rule))
    c = Checker(d)
    players = [p.player_id for p in d.state.players]
    now = T0
    c.do(Start(), now)
    guess = 0
    while d.state.status != "ended" and now < T0 + 3000:
        now += rng.choice([0.05, 0.12, 0.4, 0.9, 1.7])
        st = d.state
        guess += 1
        cmds: list[Command] = []
        t = st.tossup
        if t is not None and st.phase in ("reading", "dead_time") and rng.random() < 0.3:
            claimed = max(0, t.revealed - 1 - rng.choice([0, 0, 1, 3]))
            cmds.append(Buzz(rng.choice(players), t.question_id, claimed, corrected_press_at=now - 0.05))
        if t is not None and t.buzz is not None and st.phase == "answering" and rng.random() < 0.08:
            cmds.append(Answer(t.buzz.player_id, t.question_id, f"guess-{guess}", rng.choice(JUDGE_VERDICTS)))
        if (st.phase == "ruling" and rng.random() < 0.4) or (st.phase == "answering" and rng.random() < 0.03):
            cmds.append(Rule(rng.choice(MODERATOR_VERDICTS), directed_prompt="more?"))
        if st.bonus is not None and st.phase == "bonus" and rng.random() < 0.5:
            cmds.append(
                BonusAnswer(
                    rng.choice(players),
                    st.bonus.bonus_id,
                    st.bonus.part,
                    f"guess-{guess}",
                    rng.choice(JUDGE_VERDICTS),
                )
            )
        if st.phase == "bonus_ruling":
            cmds.append(Rule(rng.choice(["accept", "reject", "no_penalty"])))
        roll = rng.random()
        if roll < 0.02:
            cmds.append(Undo())
        elif roll < 0.04:
            cmds.append(Adjust(rng.choice([TEAM_A, TEAM_B, TEAM_BOT]), rng.choice([-5, 5, 10]), "fix"))
        elif roll < 0.06:
            cmds.append(SetSpeed(rng.choice([60, 120, 300])))
        elif roll < 0.08:
            cmds.append(Pause())
        if st.paused and rng.random() < 0.3:
            cmds.append(Resume())
        for cmd in cmds:
            c.do(cmd, now)
        c.do(Tick(), now)
    return c


CONFIGS = [(True, "naqt"), (False, "hvc"), (True, "acf")]
SEEDS = range(4)


@pytest.mark.parametrize("seed", SEEDS)
@pytest.mark.parametrize("auto_rule,preset", CONFIGS)
def test_simulated_match_invariants(seed: int, auto_rule: bool, preset: str):
    c = simulate(seed, auto_rule, preset)
    d = c.d
    assert d.state.status == "ended", "simulation should finish the match"
    events = [e for _, e in d.log]
    rebuilt = team_points(events)
    assert {k: rebuilt[k] for k in d.state.scores} == d.state.scores == d.last("match_ended").data["scores"]
    # Every buzz that won a race was ruled (or its tossup was skipped/ended by the match end).
    assert len(d.all("buzz_ruled")) <= len(d.all("buzz"))
    assert len(d.all("tossup_started")) == len(d.all("tossup_ended")) == 6
    # The seeds exercise real play, not just dead tossups.
    assert d.all("buzz") and d.all("words")


def test_simulations_cover_the_rules():
    """Across the seeds, every ruling and the main refusals actually happen."""
    rulings: Counter[str] = Counter()
    refusals: Counter[str] = Counter()
    kinds: Counter[str] = Counter()
    for seed in SEEDS:
        for auto_rule, preset in CONFIGS:
            c = simulate(seed, auto_rule, preset)
            rulings.update(e.data["ruling"] for e in c.d.all("buzz_ruled"))
            refusals.update(c.refusals)
            kinds.update(e.event for _, e in c.d.log)
    assert {"correct", "wrong", "timeout", "no_penalty"} <= set(rulings)
    assert {"team_already_buzzed", "locked_out", "paused"} <= set(refusals)
    assert {"prompt", "bonus_part_ruled", "ruling_undone", "race", "buzz_lost", "resumed"} <= set(kinds)


def test_round_trip_and_purity_mid_race_and_mid_bonus():
    d = Driver(make_state(preset="hvc"))
    d.do(Start(), T0)
    d.run_until(T0 + 5.05)
    d.do(Buzz(BOT, 100, 5), T0 + 5.05)  # held
    d.do(Buzz(HUMAN_B, 100, 5), T0 + 5.1)  # in the collection window
    states = [d.state]
    d.run_until(T0 + 5.5)
    d.do(Answer(HUMAN_B, 100, "g", "accept"), T0 + 6)
    d.do(Rule("accept"), T0 + 6.5)
    d.do(BonusAnswer(HUMAN_B, 500, 0, "g", "needs_moderator"), T0 + 7)
    states.append(d.state)
    assert states[0].tossup.held and states[0].tossup.candidates and states[1].phase == "bonus_ruling"
    for st, cmd in zip(states, [Tick(), Rule("reject")], strict=True):
        snapshot = json.dumps(st.to_dict(), sort_keys=True)
        restored = MatchState.from_dict(json.loads(snapshot))
        assert restored == st and restored.next_deadline == st.next_deadline
        new, events = apply(st, cmd, T0 + 30)
        assert events and new is not st
        assert json.dumps(st.to_dict(), sort_keys=True) == snapshot
        # The restored copy behaves exactly like the original.
        again, events_again = apply(restored, cmd, T0 + 30)
        assert again == new and events_again == events
