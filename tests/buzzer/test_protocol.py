"""Frame validation, moderator command mapping, rate limiting and clock offsets (pure)."""

import json

import pytest

from buzzer import protocol
from competition import game


def frame(**kw):
    return json.dumps(kw)


@pytest.mark.parametrize(
    ("text", "role", "code"),
    [
        (None, "play", "malformed"),
        ("not json", "play", "malformed"),
        ("[1, 2]", "play", "malformed"),
        ('"buzz"', "play", "malformed"),
        ("x" * 5000, "play", "malformed"),
        (frame(type="teleport"), "play", "unknown_type"),
        (frame(nope=1), "play", "unknown_type"),
        (frame(type="buzz", question_id=1), "play", "invalid"),
        (frame(type="buzz", question_id="1", token_index=0), "play", "invalid"),
        (frame(type="buzz", question_id=True, token_index=0), "play", "invalid"),
        (frame(type="buzz", question_id=1, token_index=0, client_time="now"), "play", "invalid"),
        (frame(type="buzz", question_id=1, token_index=0), "watch", "forbidden"),
        (frame(type="buzz", question_id=1, token_index=0), "moderate", "forbidden"),
        (frame(type="command", name="start"), "play", "forbidden"),
        (frame(type="command", name="explode"), "moderate", "unknown_type"),
        (frame(type="command", name="speed"), "moderate", "invalid"),
        (frame(type="command", name="speed", wpm=5), "moderate", "invalid"),
        (frame(type="command", name="rule", outcome="maybe"), "moderate", "invalid"),
        (frame(type="command", name="adjust", team_id=1, points=5), "moderate", "invalid"),
        (frame(type="flag", question_id=1, problem="boring"), "play", "invalid"),
        (frame(type="ping"), "play", "invalid"),
        ('{"type": "ping", "client_time": NaN}', "play", "invalid"),
    ],
)
def test_bad_frames_are_refused_with_a_code(text, role, code):
    with pytest.raises(protocol.ProtocolError) as err:
        protocol.parse(text, role)
    assert err.value.code == code
    assert err.value.message


def test_ref_is_echoed_on_errors_but_only_scalars():
    with pytest.raises(protocol.ProtocolError) as err:
        protocol.parse(frame(type="buzz", ref=7), "play")
    assert err.value.ref == 7
    with pytest.raises(protocol.ProtocolError) as err:
        protocol.parse(frame(type="buzz", ref={"a": 1}), "play")
    assert err.value.ref is None


@pytest.mark.parametrize(
    ("msg", "expected"),
    [
        ({"name": "start"}, game.Start()),
        ({"name": "pause"}, game.Pause()),
        ({"name": "resume"}, game.Resume()),
        ({"name": "speed", "wpm": 250}, game.SetSpeed(250)),
        ({"name": "skip"}, game.Skip()),
        ({"name": "rule", "outcome": "accept"}, game.Rule("accept")),
        (
            {"name": "rule", "outcome": "prompt", "directed_prompt": "Full name?"},
            game.Rule("prompt", "Full name?"),
        ),
        ({"name": "undo"}, game.Undo()),
        ({"name": "adjust", "team_id": 3, "points": -5, "reason": "protest"}, game.Adjust(3, -5, "protest")),
        ({"name": "next"}, game.Next()),
        ({"name": "end"}, game.End()),
    ],
)
def test_moderator_commands_map_to_engine_commands(msg, expected):
    parsed = protocol.parse(json.dumps({"type": "command", **msg}), "moderate")
    assert protocol.moderator_command(parsed) == expected


def test_valid_player_frames_pass_through():
    msg = protocol.parse(frame(type="buzz", question_id=4, token_index=9, client_time=1.5, ref="a"), "play")
    assert msg["question_id"] == 4 and msg["token_index"] == 9 and msg["ref"] == "a"
    assert protocol.parse(frame(type="ping", client_time=3), "watch")["client_time"] == 3


def test_rate_limiter_allows_a_burst_then_refuses_until_refilled():
    limiter = protocol.RateLimiter(rate=10, burst=5)
    assert [limiter.allow(100.0) for _ in range(7)] == [True] * 5 + [False] * 2
    assert limiter.allow(100.05) is False  # half a token
    assert limiter.allow(100.2) is True


def test_clock_estimator_uses_the_least_delayed_frame():
    clock = protocol.ClockEstimator()
    assert clock.to_server(None, 5.0) is None
    # client clock is 100 s behind the server; one-way delays 0.08, 0.02, 0.05
    for client, delay in [(1.0, 0.08), (2.0, 0.02), (3.0, 0.05)]:
        clock.add(client, client + 100 + delay)
    # a buzz pressed at client time 10 that was held up 0.3 s on the way
    assert clock.to_server(10.0, 110.3) == pytest.approx(110.02)
    # a buzz faster than every ping so far is its own best sample: never later than its arrival
    assert clock.to_server(20.0, 120.01) == pytest.approx(120.01)


def test_without_pings_the_corrected_time_is_the_arrival():
    assert protocol.ClockEstimator().to_server(7.0, 50.0) == pytest.approx(50.0)


def test_clock_estimator_forgets_a_jumped_clock_after_its_window():
    clock = protocol.ClockEstimator(window=3)
    clock.add(0.0, 100.0)  # offset 100
    for t in range(3):  # the client clock jumps forward by 50 s
        clock.add(150.0 + t, 200.0 + t + 0.01)
    assert clock.to_server(160.0, 210.5) == pytest.approx(210.01)
