"""The race's tie-breaks between bots: at the same token index and press time the lighter weight
class wins, then the lower declared cost (``Buzz.cost``, USD; undeclared ranks last), then the
lower seat id; cost never beats an earlier token or press."""

from __future__ import annotations

import math

import pytest

from competition.game import (
    Buzz,
    MatchConfig,
    PlayerSpec,
    RuleViolation,
    Start,
    TeamSpec,
    apply,
    new_match,
    tokenize_tossup,
)
from competition.game.tossup import RACE_RULE
from scoring.rules import load_preset

from .support import T0, WPM, Driver, tossup_text

Q0 = 100
# Three bot seats, each on its own team; ids ascending so the seat id alone would favour BOT_1.
BOT_1, BOT_2, BOT_3 = 41, 42, 43


def race_of(classes: dict[int, str], humans: int = 1, **config: float) -> Driver:
    """A started match (the hvc preset: bots may buzz early) with bot seats ``{id: weight class}``
    and ``humans`` human seats 11, 12 … each on a team of its own."""
    teams = [TeamSpec(n + 1, f"Humans {n}", "human") for n in range(humans)]
    players = [PlayerSpec(11 + n, n + 1, f"human{n}", "human") for n in range(humans)]
    for n, (bot, weight) in enumerate(classes.items()):
        teams.append(TeamSpec(10 + n, f"Robots {n}", "bot"))
        players.append(PlayerSpec(bot, 10 + n, f"robo{n}", "bot", weight))
    questions = [tokenize_tossup(Q0, tossup_text(0), "ANSWER-LINE-0", "Science")]
    d = Driver(
        new_match(MatchConfig(preset=load_preset("hvc"), wpm=WPM, **config), teams, players, questions, [])
    )
    d.do(Start(), T0)
    return d


def winner(d: Driver, buzzes: list[Buzz], at: float = T0 + 5.01) -> int:
    """Send ``buzzes`` at the same moment; the race's winner once every window closed."""
    d.run_until(at)
    for b in buzzes:
        d.do(b, at)
    d.run_until(at + 2)
    return d.last("race").data["winner"]


def test_same_class_the_cheaper_guess_wins():
    d = race_of({BOT_1: "mid", BOT_2: "mid"})
    assert winner(d, [Buzz(BOT_1, Q0, 5, cost=0.002), Buzz(BOT_2, Q0, 5, cost=0.0005)]) == BOT_2
    candidates = d.last("race").data["candidates"]
    assert [(c["player_id"], c["cost"]) for c in candidates] == [(BOT_2, 0.0005), (BOT_1, 0.002)]
    assert d.last("race").data["rule"] == RACE_RULE and "cost" in RACE_RULE


def test_weight_class_comes_before_cost():
    d = race_of({BOT_1: "heavy", BOT_2: "light"})
    assert winner(d, [Buzz(BOT_1, Q0, 5, cost=0.0), Buzz(BOT_2, Q0, 5, cost=0.05)]) == BOT_2


def test_an_undeclared_cost_ranks_after_any_declared_one():
    d = race_of({BOT_1: "mid", BOT_2: "mid", BOT_3: "mid"})
    buzzes = [Buzz(BOT_1, Q0, 5), Buzz(BOT_2, Q0, 5, cost=0.9), Buzz(BOT_3, Q0, 5, cost=0.1)]
    assert winner(d, buzzes) == BOT_3
    assert [c["player_id"] for c in d.last("race").data["candidates"]] == [BOT_3, BOT_2, BOT_1]


def test_equal_costs_fall_back_to_the_seat_id():
    d = race_of({BOT_1: "mid", BOT_2: "mid"})
    assert winner(d, [Buzz(BOT_2, Q0, 5, cost=0.01), Buzz(BOT_1, Q0, 5, cost=0.01)]) == BOT_1


def test_cost_never_beats_an_earlier_token():
    """The expensive bot buzzed on token 5; the free one arrives on token 6 within the window."""
    d = race_of({BOT_1: "mid", BOT_2: "mid"}, collection_window=2.0)
    d.run_until(T0 + 5.9)
    d.do(Buzz(BOT_1, Q0, 5, cost=0.5), T0 + 5.9)
    d.run_until(T0 + 6.01)
    d.do(Buzz(BOT_2, Q0, 6, cost=0.0), T0 + 6.01)
    d.run_until(T0 + 9)
    race = d.last("race").data
    assert [c["player_id"] for c in race["candidates"]] == [BOT_1, BOT_2] and race["winner"] == BOT_1


@pytest.mark.parametrize("cost", [-0.01, math.nan, math.inf, True, "0.1"])
def test_a_bad_cost_is_refused_and_changes_nothing(cost):
    d = race_of({BOT_1: "mid"})
    d.run_until(T0 + 5.01)
    before = d.state.to_dict()
    with pytest.raises(RuleViolation) as err:
        apply(d.state, Buzz(BOT_1, Q0, 5, cost=cost), T0 + 5.01)
    assert err.value.code == "bad_value" and d.state.to_dict() == before


def test_a_human_claiming_a_cost_gains_nothing():
    """Among humans a tie goes by seat id whatever cost a tablet sends."""
    d = race_of({BOT_1: "light"}, humans=2)
    d.run_until(T0 + 5.01)
    d.do(Buzz(11, Q0, 5, corrected_press_at=T0 + 5.01), T0 + 5.01)
    d.do(Buzz(12, Q0, 5, corrected_press_at=T0 + 5.01, cost=0.0), T0 + 5.01)
    d.run_until(T0 + 8)
    assert d.last("race").data["winner"] == 11
