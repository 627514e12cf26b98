"""The server decides the race: a buzz's token index and press time are bounded by what the
server had revealed and the connection's measured delay, whatever the client claims; no source
id reaches players, bots or spectators."""

from __future__ import annotations

import json
import math

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from competition.game import (
    MAX_DELAY_BOUND,
    Answer,
    Buzz,
    MatchConfig,
    PlayerSpec,
    Rule,
    RuleViolation,
    Start,
    TeamSpec,
    new_match,
    tokenize_tossup,
    view,
)
from competition.game.state import TossupRun
from competition.game.tossup import decide_press_at, decide_token_index
from scoring.rules import load_preset

from .support import BOT, HUMAN_A, HUMAN_B, T0, Driver, started

Q0 = 100


def reveal_times(draw_gaps: list[float], batch: list[bool]) -> list[float]:
    """Non-decreasing reveal times from gaps; ``batch[i]`` makes token i share i−1's time."""
    times, at = [], T0
    for gap, same in zip(draw_gaps, batch, strict=True):
        at = at if same and times else at + gap
        times.append(at)
    return times


@st.composite
def reveals(draw: st.DrawFn) -> tuple[list[float], float]:
    n = draw(st.integers(1, 60))
    gaps = draw(st.lists(st.floats(0.0, 2.0), min_size=n, max_size=n))
    batch = draw(st.lists(st.booleans(), min_size=n, max_size=n))
    times = reveal_times(gaps, batch)
    now = times[-1] + draw(st.floats(0.0, 3.0))
    return times, now


@settings(max_examples=2000, deadline=None)
@given(
    reveals(),
    st.integers(-(10**12), 10**12),
    st.floats(0.0, MAX_DELAY_BOUND),
    st.one_of(st.none(), st.floats(allow_nan=True, allow_infinity=True)),
    st.floats(0.0, 2.0),
)
def test_decided_token_index_is_between_floor_and_last_revealed(reveal, claimed, bound, press, slack):
    times, now = reveal
    index, floor = decide_token_index(times, 0, claimed, now, bound)
    # The floor, recomputed by brute force: the last token shown at or before now − bound.
    surely_shown = [i for i, at in enumerate(times) if at <= now - bound]
    assert floor == (surely_shown[-1] if surely_shown else 0)
    assert floor <= index <= len(times) - 1
    if floor <= claimed <= len(times) - 1:
        assert index == claimed  # an honest claim inside the window stands
    # The live state keeps only the tail of reveal times a buzz can still be placed in: the
    # decision from it is the decision from them all.
    run = TossupRun(0, 0, revealed=len(times), revealed_at=list(times))
    run.trim_reveals(bound + slack)
    assert decide_token_index(run.revealed_at, run.revealed_from, claimed, now, bound) == (index, floor)
    assert run.reveal_time(index) == times[index]
    decided = decide_press_at(press, now, bound)
    if press is None or math.isnan(press):
        assert decided is None
    else:
        assert now - bound <= decided <= now
        if now - bound <= press <= now:
            assert decided == press


@settings(max_examples=300, deadline=None)
@given(
    st.floats(0.0, 9.5),
    st.integers(-5, 50),
    st.floats(0.0, 1.0),
    st.one_of(st.none(), st.floats(-1e6, 1e6)),
)
def test_engine_buzz_token_index_is_bounded_by_what_was_shown(offset, claimed, bound, press_shift):
    """Through ``apply``: the race candidate's index lies in [floor, revealed − 1], the floor
    taken from the ``words`` events the clients received; bounds above the cap are capped."""
    d = started(with_bot=False)
    now = T0 + offset
    d.run_until(now)
    shown = [
        (e.data["start"] + k, e.data["revealed_at"])
        for e in d.all("words")
        for k in range(len(e.data["words"]))
    ]
    press = None if press_shift is None else now + press_shift
    d.do(Buzz(HUMAN_A, Q0, claimed, corrected_press_at=press, delay_bound=bound), now)
    (c,) = d.state.tossup.candidates
    capped = min(bound, MAX_DELAY_BOUND)
    floor = max([i for i, at in shown if at <= now - capped], default=0)
    assert (c.floor_token_index, c.delay_bound, c.claimed_token_index) == (floor, capped, claimed)
    assert floor <= c.token_index <= len(shown) - 1
    assert press is None or now - capped <= c.corrected_press_at <= now
    received = d.last("buzz_received")
    assert received.audience == "moderator"
    assert received.data["token_index"] == c.token_index and received.data["claimed_token_index"] == claimed
    assert received.data["claimed_press_at"] == press


@pytest.mark.parametrize("lie", [math.inf, -math.inf, math.nan])
def test_non_finite_press_times_are_bounded_and_logged_as_none(lie):
    d = started(with_bot=False)
    d.run_until(T0 + 3.1)
    d.do(Buzz(HUMAN_A, Q0, 3, client_time=lie, corrected_press_at=lie, delay_bound=0.1), T0 + 3.1)
    (c,) = d.state.tossup.candidates
    assert (c.client_time, c.claimed_press_at) == (None, None)
    expected = {math.inf: T0 + 3.1, -math.inf: T0 + 3.0}.get(lie)
    assert c.corrected_press_at == (None if expected is None else pytest.approx(expected))
    json.dumps(d.state.to_dict(), allow_nan=False)  # the stored state stays strict JSON


@pytest.mark.parametrize("bad", [-0.01, math.inf, math.nan, "0.1", True])
def test_bad_delay_bound_is_refused_and_changes_nothing(bad):
    d = started()
    d.run_until(T0 + 3)
    before = d.state.to_dict()
    with pytest.raises(RuleViolation) as err:
        d.do(Buzz(HUMAN_A, Q0, 3, delay_bound=bad), T0 + 3)
    assert err.value.code == "bad_value"
    assert d.state.to_dict() == before


def long_tossup_match(power_after: int = 40, words: int = 80, wpm: float = 200) -> Driver:
    text = " ".join(
        [f"w{k}" for k in range(power_after)] + ["(*)"] + [f"w{k}" for k in range(power_after, words)]
    )
    state = new_match(
        MatchConfig(preset=load_preset("naqt"), wpm=wpm),
        [TeamSpec(1, "Alpha", "human"), TeamSpec(2, "Beta", "human")],
        [PlayerSpec(HUMAN_A, 1, "ann", "human"), PlayerSpec(HUMAN_B, 2, "bea", "human")],
        [tokenize_tossup(Q0, text, "ANSWER", "Science", external_id="SRC-SECRET-42")],
        [],
    )
    d = Driver(state)
    d.do(Start(), T0)
    return d


@pytest.mark.parametrize("bound", [0.0, 0.05, MAX_DELAY_BOUND])
def test_claiming_token_zero_after_word_57_scores_no_power(bound):
    d = long_tossup_match()
    word = 60.0 / 200
    now = T0 + 57 * word + 0.01  # token 57 shown 10 ms ago; 56 and before long ago
    d.run_until(now)
    assert d.state.tossup.revealed == 58
    d.do(Buzz(HUMAN_A, Q0, 0, corrected_press_at=T0, delay_bound=bound), now)
    d.run_until(now + 0.2)
    buzz = d.last("buzz").data
    assert buzz["token_index"] >= 56  # at worst the token before the one still in flight
    d.do(Answer(HUMAN_A, Q0, "ANSWER", "accept"), now + 1)
    d.do(Rule("accept"), now + 1.1)
    ruled = d.last("buzz_ruled").data
    assert ruled["points"] == 10 and ruled["token_index"] == buzz["token_index"]
    (race,) = d.all("race")
    assert race.data["candidates"][0]["claimed_token_index"] == 0


@pytest.mark.parametrize("lie", [1000.0, -1000.0, math.inf])
@pytest.mark.parametrize("bound", [0.0, 0.03, 0.08])
def test_a_lying_clock_cannot_win_for_a_press_81_ms_later(lie, bound):
    """Both on links with the same measured delay ≤ 80 ms, 20 ms actual; B pressed 81 ms after A
    on the same word and reports a clock ``lie`` seconds ahead (its latency-corrected press time
    is then ``lie`` seconds early)."""
    d = started(with_bot=False)
    pressed_a = T0 + 5.2
    pressed_b = pressed_a + 0.081
    d.run_until(pressed_a + 0.02)
    d.do(Buzz(HUMAN_A, Q0, 5, corrected_press_at=pressed_a, delay_bound=bound), pressed_a + 0.02)
    d.run_until(pressed_b + 0.02)
    d.do(Buzz(HUMAN_B, Q0, 5, corrected_press_at=pressed_b - lie, delay_bound=bound), pressed_b + 0.02)
    d.run_until(pressed_a + 0.5)
    race = d.last("race").data
    assert race["winner"] == HUMAN_A
    liar = next(c for c in race["candidates"] if c["player_id"] == HUMAN_B)
    assert liar["corrected_press_at"] >= pressed_b + 0.02 - bound


def all_strings(value) -> str:
    return json.dumps(value, default=str)


def test_no_audience_ever_sees_the_source_id():
    """A whole tossup: started, buzzed, wrong, buzzed, right, bonus-less end — no event and no
    player, bot or spectator view carries the question's external id."""
    d = long_tossup_match(power_after=10, words=20)
    assert "SRC-SECRET-42" in all_strings(d.state.to_dict())  # the server keeps it
    audiences = ["all", f"player:{HUMAN_A}", f"player:{HUMAN_B}"]
    views = [view(d.state, a) for a in audiences]
    d.run_until(T0 + 2)
    d.do(Buzz(HUMAN_A, Q0, 6, delay_bound=0.1), T0 + 2)
    d.run_until(T0 + 2.2)
    views += [view(d.state, a) for a in audiences]
    d.do(Answer(HUMAN_A, Q0, "nope", "reject"), T0 + 2.5)
    d.do(Rule("reject"), T0 + 2.6)
    d.run_until(T0 + 4)
    d.do(Buzz(HUMAN_B, Q0, 12, delay_bound=0.1), T0 + 4)
    d.run_until(T0 + 4.2)
    d.do(Answer(HUMAN_B, Q0, "ANSWER", "accept"), T0 + 4.5)
    d.do(Rule("accept"), T0 + 4.6)
    views += [view(d.state, a) for a in audiences]
    started_event = d.last("tossup_started").data
    assert "external_id" not in started_event and started_event["question_id"] == Q0
    assert d.state.status == "ended"
    for _, event in d.log:
        assert "SRC-SECRET-42" not in all_strings(event.to_dict()), event.event
    for snapshot in views:
        assert "SRC-SECRET-42" not in all_strings(snapshot)


def test_bot_reaction_delay_counts_from_the_decided_token():
    """A bot claiming an old token is placed on the floor token; its release waits for that
    token's reveal plus the reaction delay."""
    d = started(preset="hvc")
    d.run_until(T0 + 5.25)
    d.do(Buzz(BOT, Q0, 1, delay_bound=0.2), T0 + 5.25)  # token 5 shown at T0+5 ≤ T0+5.05
    (held,) = d.state.tossup.held
    assert (held.token_index, held.claimed_token_index) == (5, 1)
    assert held.release_at == pytest.approx(T0 + 5 + d.state.config.reaction_delay)
