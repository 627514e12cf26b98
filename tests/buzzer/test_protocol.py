"""Frame validation, moderator command mapping, rate limiting and clock offsets (pure)."""

import json
import math

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from buzzer import protocol
from competition import game
from competition.vocabulary import CONNECTION_ROLES


def frame(**kw):
    return json.dumps(kw)


@pytest.mark.parametrize(
    ("text", "role", "code"),
    [
        (None, "player", "malformed"),
        ("not json", "player", "malformed"),
        ("[1, 2]", "player", "malformed"),
        ('"buzz"', "player", "malformed"),
        ("x" * 5000, "player", "malformed"),
        (frame(type="teleport"), "player", "unknown_type"),
        (frame(nope=1), "player", "unknown_type"),
        (frame(type="buzz", question_id=1), "player", "invalid"),
        (frame(type="buzz", question_id="1", token_index=0), "player", "invalid"),
        (frame(type="buzz", question_id=True, token_index=0), "player", "invalid"),
        (frame(type="buzz", question_id=1, token_index=0, client_time="now"), "player", "invalid"),
        (frame(type="buzz", question_id=1, token_index=0, cost=-0.01), "player", "invalid"),
        (frame(type="buzz", question_id=1, token_index=0, cost=1e6), "player", "invalid"),
        (frame(type="buzz", question_id=1, token_index=0, cost="free"), "player", "invalid"),
        ('{"type": "buzz", "question_id": 1, "token_index": 0, "cost": NaN}', "player", "invalid"),
        (frame(type="buzz", question_id=1, token_index=0), "spectator", "forbidden"),
        (frame(type="buzz", question_id=1, token_index=0), "moderator", "forbidden"),
        (frame(type="command", name="start"), "player", "forbidden"),
        (frame(type="command", name="explode"), "moderator", "unknown_type"),
        (frame(type="command", name="speed"), "moderator", "invalid"),
        (frame(type="command", name="speed", wpm=5), "moderator", "invalid"),
        (frame(type="command", name="rule", verdict="maybe"), "moderator", "invalid"),
        (frame(type="command", name="adjust", team_id=1, points=5), "moderator", "invalid"),
        (frame(type="flag", question_id=1, problem="boring"), "player", "invalid"),
        (frame(type="ping"), "player", "invalid"),
        ('{"type": "ping", "client_time": NaN}', "player", "invalid"),
        ('{"type": "ping", "client_time": Infinity}', "player", "invalid"),
        ('{"type": "ping", "client_time": 1.7e308}', "player", "invalid"),
        ('{"type": []}', "spectator", "unknown_type"),
        ('{"type": {"a": 1}}', "spectator", "unknown_type"),
        ("[" * 1500 + "]" * 1500, "spectator", "malformed"),
        (
            '{"type": "ping", "client_time": 1, "x": ' + "[" * 1500 + "]" * 1500 + "}",
            "spectator",
            "malformed",
        ),
        (frame(type="buzz", question_id=2**60, token_index=0), "player", "invalid"),
        (frame(type="buzz", question_id=1, token_index=-(2**53)), "player", "invalid"),
        (frame(type="ping", client_time=1, ref="r" * 65), "player", "invalid"),
        (frame(type="ping", client_time=1, ref=1.5), "player", "invalid"),
        (frame(type="flag", question_id=1, problem="ambiguity", comment=["x"]), "player", "invalid"),
        (frame(type="command", name="undo", command_id=5), "moderator", "invalid"),
        (frame(type="heartbeat_ack"), "spectator", "invalid"),
        (b"{}", "spectator", "malformed"),
    ],
)
def test_bad_frames_are_refused_with_a_code(text, role, code):
    with pytest.raises(protocol.ProtocolError) as err:
        protocol.parse(text, role)
    assert err.value.code == code
    assert err.value.message


def test_ref_is_echoed_on_errors_but_only_scalars():
    with pytest.raises(protocol.ProtocolError) as err:
        protocol.parse(frame(type="buzz", ref=7), "player")
    assert err.value.ref == 7
    with pytest.raises(protocol.ProtocolError) as err:
        protocol.parse(frame(type="buzz", ref={"a": 1}), "player")
    assert err.value.ref is None


@pytest.mark.parametrize(
    ("msg", "expected"),
    [
        ({"name": "start"}, game.Start()),
        ({"name": "pause"}, game.Pause()),
        ({"name": "resume"}, game.Resume()),
        ({"name": "speed", "wpm": 250}, game.SetSpeed(250)),
        ({"name": "skip"}, game.Skip()),
        ({"name": "rule", "verdict": "accept"}, game.Rule("accept")),
        (
            {"name": "rule", "verdict": "prompt", "directed_prompt": "Full name?"},
            game.Rule("prompt", "Full name?"),
        ),
        ({"name": "undo"}, game.Undo()),
        ({"name": "adjust", "team_id": 3, "points": -5, "reason": "protest"}, game.Adjust(3, -5, "protest")),
        ({"name": "next"}, game.Next()),
        ({"name": "end"}, game.End()),
    ],
)
def test_moderator_commands_map_to_engine_commands(msg, expected):
    parsed = protocol.parse(json.dumps({"type": "command", **msg}), "moderator")
    assert protocol.moderator_command(parsed) == expected


def test_valid_player_frames_pass_through():
    msg = protocol.parse(frame(type="buzz", question_id=4, token_index=9, client_time=1.5, ref="a"), "player")
    assert msg["question_id"] == 4 and msg["token_index"] == 9 and msg["ref"] == "a"
    assert (
        protocol.parse(frame(type="buzz", question_id=4, token_index=9, cost=0.002), "player")["cost"]
        == 0.002
    )
    assert protocol.parse(frame(type="ping", client_time=3), "spectator")["client_time"] == 3


def test_rate_limiter_allows_a_burst_then_refuses_until_refilled():
    limiter = protocol.RateLimiter(rate=10, burst=5)
    assert [limiter.allow(100.0) for _ in range(7)] == [True] * 5 + [False] * 2
    assert limiter.allow(100.05) is False  # half a token
    assert limiter.allow(100.2) is True


def test_clock_estimator_uses_the_least_delayed_frame():
    clock = protocol.ClockEstimator()
    clock.add_rtt(0.7)  # measured delay bound: min(0.35, cap 0.3) = 0.3 s
    assert clock.delay_bound == pytest.approx(protocol.MAX_DELAY_BOUND)
    assert clock.to_server(None, 5.0) is None
    # client clock is 100 s behind the server; one-way delays 0.08, 0.02, 0.05
    for client, delay in [(1.0, 0.08), (2.0, 0.02), (3.0, 0.05)]:
        clock.add(client, client + 100 + delay)
    # a buzz pressed at client time 10 that was held up 0.3 s on the way
    assert clock.to_server(10.0, 110.3) == pytest.approx(110.02)
    # a buzz faster than every ping so far is its own best sample: never later than its arrival
    assert clock.to_server(20.0, 120.01) == pytest.approx(120.01)


def test_without_a_measured_round_trip_the_corrected_time_is_the_arrival():
    clock = protocol.ClockEstimator()
    for client, delay in [(1.0, 0.08), (2.0, 0.02)]:
        clock.add(client, client + 100 + delay)
    assert clock.delay_bound == 0.0
    assert clock.to_server(10.0, 110.3) == pytest.approx(110.3)
    assert protocol.ClockEstimator().to_server(7.0, 50.0) == pytest.approx(50.0)


def test_clock_estimator_forgets_a_jumped_clock_after_its_window():
    clock = protocol.ClockEstimator(window=3)
    clock.add_rtt(1.0)
    clock.add(0.0, 100.0)  # offset 100
    for t in range(3):  # the client clock jumps forward by 50 s
        clock.add(150.0 + t, 200.0 + t + 0.01)
    assert clock.to_server(160.0, 210.2) == pytest.approx(210.01)


def test_a_lying_clock_gains_at_most_the_measured_delay_bound():
    """A ping claiming a clock 1,000 s ahead, then a buzz pressed 81 ms after an honest one:
    the liar's press moves earlier than its arrival by at most its delay bound (RTT/2)."""
    honest, liar = protocol.ClockEstimator(), protocol.ClockEstimator()
    for clock in (honest, liar):
        clock.add_rtt(0.04)  # 20 ms each way
    liar.add(1000.0 + 50.0, 50.02)  # offset −1000: its clock 1,000 s ahead
    honest.add(50.0, 50.02)
    assert liar.delay_bound == pytest.approx(0.02)
    honest_press = honest.to_server(100.0, 100.02)
    # The liar presses 81 ms later and stamps its true time: by its ping's offset that press
    # was 1,000 s ago.
    liar_press = liar.to_server(100.081, 100.101)
    assert honest_press == pytest.approx(100.02)
    assert liar_press == pytest.approx(100.101 - 0.02)  # clamped to arrival − delay bound
    assert liar_press > honest_press


def test_round_trips_are_capped_and_absurd_clocks_ignored():
    clock = protocol.ClockEstimator()
    for rtt in (5.0, 2.0, float("nan"), -1.0):
        clock.add_rtt(rtt)
    assert clock.delay_bound == protocol.MAX_DELAY_BOUND  # a client that delays its acks gains 0.3 s at most
    assert clock.add(1.7e308, 100.0) is False and not clock.samples
    assert clock.to_server(1.7e308, 100.0) is None  # the engine then uses the arrival
    assert clock.add(100.0 - 2 * 86400, 100.0) is False
    assert clock.to_server(99.9, 100.0) == pytest.approx(100.0)


def test_seat_limiter_shares_one_bucket_per_seat_and_forgets_idle_seats():
    seats = protocol.SeatLimiter(rate=2, burst=5, idle=60)
    allowed = sum(seats.allow((1, 7), 100.0 + i / 1000) for i in range(2001))  # 2,001 over two seconds
    assert allowed == 5 + 4  # the burst, then 2/s for the two seconds
    assert seats.allow((1, 8), 100.5) is True  # another seat has its own bucket
    seats.allow((1, 9), 200.0)  # a sweep: seats idle over 60 s are forgotten
    assert set(seats.buckets) == {(1, 9)}


def test_long_command_ids_are_hashed_to_the_column_width_and_stay_distinct():
    short = {"type": "command", "name": "undo", "command_id": "undo:{}@41"}
    assert protocol.command_id(short) == "undo:{}@41"
    assert protocol.command_id({"type": "command", "name": "undo"}) == ""
    reason = 'adjust:{"team_id":3,"points":-5,"reason":"' + "x" * 100 + '"}@7'
    a = protocol.command_id({"command_id": reason})
    b = protocol.command_id({"command_id": reason.replace("@7", "@8")})
    assert len(a) == len(b) == protocol.MAX_COMMAND_ID and a != b
    assert a == protocol.command_id({"command_id": reason})


# --- fuzz: any text gives a message dict or a ProtocolError with a known code ------------------
_HOSTILE = st.one_of(
    st.none(),
    st.booleans(),
    st.integers(min_value=-(2**70), max_value=2**70),
    st.floats(allow_nan=True, allow_infinity=True),
    st.sampled_from([1.7e308, -1.7e308, 2**53, 2**53 - 1, 0, -1]),
    st.text(max_size=20),
    st.just("x" * 2000),
    st.lists(st.integers(), max_size=3),
    st.dictionaries(st.text(max_size=3), st.integers(), max_size=2),
)
_NAMES = sorted({*protocol.FRAMES, *protocol.COMMANDS, "warp", ""})
_FIELDS = sorted(
    {f for spec in protocol.FRAMES.values() for f in spec.fields}
    | {f for spec in protocol.COMMANDS.values() for f in spec.fields}
    | {"ref", "x"}
)


def _nest(depth: int) -> str:
    return "[" * depth + "]" * depth


@st.composite
def hostile_frames(draw) -> str | bytes | None:
    """Frames built from the protocol's own schema, with hostile values in any field."""
    kind = draw(st.integers(0, 9))
    if kind == 0:
        return draw(st.one_of(st.none(), st.binary(max_size=20)))
    if kind == 1:
        return draw(st.text(max_size=50))
    if kind == 2:  # deep nesting in the body or in a field
        depth = draw(st.integers(1, 2100))
        return draw(
            st.sampled_from([_nest(depth), '{"type": "ping", "client_time": 1, "x": ' + _nest(depth) + "}"])
        )
    if kind == 3:  # 1 MB strings (the server's max size refuses them earlier; the parser too)
        return '{"type": "answer", "question_id": 1, "text": "' + "a" * 1_000_000 + '"}'
    msg: dict[str, object] = {"type": draw(st.one_of(st.sampled_from(_NAMES), _HOSTILE))}
    if draw(st.booleans()):
        msg["name"] = draw(st.one_of(st.sampled_from(_NAMES), _HOSTILE))
    for field in draw(st.lists(st.sampled_from(_FIELDS), max_size=6)):
        msg[field] = draw(_HOSTILE)
    return json.dumps(msg, allow_nan=True)


@settings(max_examples=1500, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(text=hostile_frames(), role=st.sampled_from(CONNECTION_ROLES))
def test_fuzzed_frames_give_a_message_or_a_known_error(text, role):
    try:
        msg = protocol.parse(text, role)  # type: ignore[arg-type]
    except protocol.ProtocolError as exc:
        assert exc.code in protocol.ERROR_CODES and exc.message
        assert exc.ref is None or isinstance(exc.ref, (str, int))
        return
    assert isinstance(msg, dict) and msg["type"] in protocol.FRAMES
    spec = protocol.FRAMES[msg["type"]]
    assert role in spec.roles
    fields = {**spec.fields, **(protocol.COMMANDS[msg["name"]].fields if msg["type"] == "command" else {})}
    assert set(msg) <= {"type", "ref", *fields}  # nothing undeclared goes on
    for name in set(fields) & set(msg):  # every number is finite and bounded
        value = msg[name]
        assert not isinstance(value, bool)
        if isinstance(value, (int, float)):
            assert math.isfinite(value) and abs(value) < protocol.MAX_NUMBER
    if msg["type"] == "command":
        protocol.moderator_command(msg)  # maps to an engine command without raising
        assert len(protocol.command_id(msg)) <= protocol.MAX_COMMAND_ID
    json.dumps(msg, allow_nan=False)  # storable as strict JSON
