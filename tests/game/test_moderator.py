"""Moderator controls replay / protest / reveal, table-driven: each case is a script of
(seconds after T0, command) on the support match (1 word/s, 10 words, (*) after word 4,
auto-ruled) and the scores, events and state it must produce."""

from __future__ import annotations

import json
from typing import Any

import pytest

from buzzer import protocol
from competition.game import (
    Adjust,
    Answer,
    BonusAnswer,
    Buzz,
    Command,
    End,
    MatchState,
    Pause,
    Protest,
    ReplayTossup,
    Reveal,
    RuleViolation,
    Undo,
    view,
)

from .support import HUMAN_A, HUMAN_B, T0, TEAM_A, TEAM_B, TEAM_BOT, started

POWER_A = [(2.5, Buzz(HUMAN_A, 100, 2)), (2.7, Answer(HUMAN_A, 100, "g", "accept"))]  # A +15, bonus
BONUS_A = [
    (3.0, BonusAnswer(HUMAN_A, 500, 0, "b", "accept")),
    (3.5, BonusAnswer(HUMAN_A, 500, 1, "b", "accept")),
]
NEG_B = [(2.5, Buzz(HUMAN_B, 100, 2)), (2.7, Answer(HUMAN_B, 100, "g", "reject"))]  # B −5


def play(script: list[tuple[float, Command]], **config: Any):
    d = started(auto_rule=True, **config)
    for at, cmd in script:
        d.run_until(T0 + at)
        d.do(cmd, T0 + at)
    return d


def scores(a: int, b: int, bot: int = 0) -> dict[str, int]:
    return {str(TEAM_A): a, str(TEAM_B): b, str(TEAM_BOT): bot}


# name, script, expected scores, event types the LAST command must emit (in order), extra check
CASES: list[tuple[str, list[tuple[float, Command]], dict[str, int], list[str], Any]] = [
    (
        "replay in the bonus reverses the bonus parts then the tossup",
        [*POWER_A, *BONUS_A, (4.0, ReplayTossup())],
        scores(0, 0),
        [
            "ruling_undone",
            "ruling_undone",
            "ruling_undone",
            "tossup_replayed",
            "tossup_started",
            "tossup_answer",
        ],
        lambda st: st.phase == "reading" and st.bonus is None and st.tossup.revealed_at == [T0 + 4.0],
    ),
    (
        "replay after a neg lets the negging team buzz again",
        [
            *NEG_B,
            (4.0, ReplayTossup()),
            (6.5, Buzz(HUMAN_B, 100, 2)),
            (6.7, Answer(HUMAN_B, 100, "g", "accept")),
        ],
        scores(0, 15),
        ["buzz_ruled", "tossup_ended", "bonus_started", "bonus_answer_lines", "bonus_part"],
        lambda st: st.bonus is not None and st.bonus.team_id == TEAM_B,
    ),
    (
        "replay between tossups re-reads the finished tossup, not the next",
        [
            *POWER_A,
            (3.0, BonusAnswer(HUMAN_A, 500, 0, "b", "reject")),
            (3.1, BonusAnswer(HUMAN_A, 500, 1, "b", "reject")),
            (3.2, BonusAnswer(HUMAN_A, 500, 2, "b", "accept")),
            (4.0, ReplayTossup()),
        ],
        scores(0, 0),
        ["ruling_undone"] * 4 + ["tossup_replayed", "tossup_started", "tossup_answer"],
        lambda st: st.tossup.question_id == 100 and st.tossup_index == 0 and st.bonus_index == 1,
    ),
    (
        "replay voids a buzz still being answered",
        [(2.5, Buzz(HUMAN_A, 100, 2)), (2.8, ReplayTossup())],
        scores(0, 0),
        ["ruling_undone", "tossup_replayed", "tossup_started", "tossup_answer"],
        lambda st: st.tossup.buzz is None and st.tossup.locked_teams == [],
    ),
    (
        "reveal while reading ends the tossup dead and shows the answer",
        [(3.5, Reveal())],
        scores(0, 0),
        ["tossup_revealed", "tossup_ended", "between_questions"],
        lambda st: st.phase == "between" and view(st, "all")["tossup"]["answer_line"] == "ANSWER-LINE-0",
    ),
    (
        "reveal in dead time after a neg keeps the neg",
        [*NEG_B, (10.5, Reveal())],
        scores(0, -5),
        ["tossup_revealed", "tossup_ended", "between_questions"],
        lambda st: st.tossup.outcome == "dead",
    ),
    (
        "a protest is marked on the current tossup",
        [*NEG_B, (3.0, Protest("B says 'pulsar' was correct", TEAM_B))],
        scores(0, -5),
        ["protest_marked"],
        lambda st: (
            st.protests[0].to_dict() | {"at": 0}
            == {
                "protest_id": 1,
                "team_id": TEAM_B,
                "question_id": 100,
                "reason": "B says 'pulsar' was correct",
                "at": 0,
                "status": "open",
                "resolution": None,
            }
        ),
    ),
    (
        "an adjustment resolves the protest (also after the match ended)",
        [
            *NEG_B,
            (3.0, Protest("neg?", TEAM_B)),
            (4.0, End()),
            (5.0, Adjust(TEAM_B, 15, "upheld", protest_id=1)),
        ],
        scores(0, 10),
        ["points_adjusted", "protest_resolved"],
        lambda st: (
            st.protests[0].status == "resolved"
            and st.protests[0].to_dict()["resolution"] == {"team_id": TEAM_B, "points": 15, "at": T0 + 5.0}
        ),
    ),
    (
        "a protest may be denied with a zero adjustment while paused",
        [(1.0, Protest("moderator note")), (1.5, Pause()), (2.0, Adjust(TEAM_A, 0, "denied", protest_id=1))],
        scores(0, 0),
        ["points_adjusted", "protest_resolved"],
        lambda st: st.protests[0].team_id is None and st.protests[0].status == "resolved",
    ),
]


@pytest.mark.parametrize(("name", "script", "want", "types", "check"), CASES, ids=[c[0] for c in CASES])
def test_moderator_controls(name, script, want, types, check) -> None:
    d = play(script)
    assert d.state.scores == want
    if types is not None:
        # the events of the last command, without the word reveals that follow it
        last = [e.event for t, e in d.log if t == T0 + script[-1][0] and e.event != "words"]
        assert last[-len(types) :] == types
    if check is not None:
        assert check(d.state)
    assert MatchState.from_dict(d.state.to_dict()) == d.state


def test_replay_reversals_carry_the_points_and_scores() -> None:
    d = play([*POWER_A, *BONUS_A, (4.0, ReplayTossup())])
    undone = [e.data for e in d.all("ruling_undone")]
    assert [(u.get("bonus_id"), u.get("part"), u["points_reversed"]) for u in undone] == [
        (500, 1, 10),
        (500, 0, 10),
        (None, None, 15),
    ]
    assert [u["scores"][str(TEAM_A)] for u in undone] == [25, 15, 0]
    assert all(u["reason"] == "tossup_replayed" for u in undone)
    assert d.last("tossup_replayed").data == {"question_id": 100, "index": 0, "scores": scores(0, 0)}
    # the re-read starts at the replay time: token 0 at T0 + 4
    d.run_until(T0 + 6.0)
    assert [w.data["revealed_at"] for w in d.all("words")[-3:]] == [T0 + 4.0, T0 + 5.0, T0 + 6.0]
    assert d.all("words")[-3].data["start"] == 0


REFUSALS: list[tuple[str, list[tuple[float, Command]], Command, str]] = [
    ("replay while paused", [(1.0, Pause())], ReplayTossup(), "paused"),
    (
        "undo after a replay reverses nothing twice",
        [*NEG_B, (4.0, ReplayTossup())],
        Undo(),
        "nothing_to_undo",
    ),
    ("replay after the match ended", [(1.0, End())], ReplayTossup(), "bad_phase"),
    ("reveal while a buzz is answered", [(2.5, Buzz(HUMAN_A, 100, 2))], Reveal(), "bad_phase"),
    ("reveal during the bonus", POWER_A, Reveal(), "bad_phase"),
    ("reveal while paused", [(1.0, Pause())], Reveal(), "paused"),
    ("protest by an unknown team", [], Protest("x", 99), "unknown_team"),
    ("protest on a question not in the match", [], Protest("x", TEAM_A, 12345), "wrong_question"),
    ("adjust for an unknown protest", [], Adjust(TEAM_A, 5, "x", protest_id=3), "unknown_protest"),
    (
        "resolve a protest twice",
        [(1.0, Protest("x", TEAM_A)), (1.5, Adjust(TEAM_A, 5, "x", protest_id=1))],
        Adjust(TEAM_A, 5, "again", protest_id=1),
        "unknown_protest",
    ),
]


@pytest.mark.parametrize(("name", "script", "cmd", "reason"), REFUSALS, ids=[r[0] for r in REFUSALS])
def test_moderator_refusals(name, script, cmd, reason) -> None:
    d = play(script)
    before = d.state.to_dict()
    with pytest.raises(RuleViolation) as caught:
        d.do(cmd, T0 + 3.0 if not script else T0 + script[-1][0] + 0.3)
    assert caught.value.code == reason
    assert d.state.to_dict() == before


def test_lobby_refuses_replay_protest_reveal() -> None:
    from competition.game import apply

    from .support import make_state

    st = make_state()
    for cmd, reason in ((ReplayTossup(), "not_live"), (Protest("x"), "not_live"), (Reveal(), "not_live")):
        with pytest.raises(RuleViolation) as caught:
            apply(st, cmd, T0)
        assert caught.value.code == reason


@pytest.mark.parametrize(
    ("frame", "expected"),
    [
        ({"name": "replay"}, ReplayTossup()),
        ({"name": "reveal"}, Reveal()),
        ({"name": "protest", "reason": "neg?"}, Protest("neg?")),
        ({"name": "protest", "reason": "neg?", "team_id": 2, "question_id": 100}, Protest("neg?", 2, 100)),
        ({"name": "adjust", "team_id": 2, "points": 5, "reason": "r"}, Adjust(2, 5, "r")),
        ({"name": "adjust", "team_id": 2, "points": 5, "reason": "r", "protest_id": 1}, Adjust(2, 5, "r", 1)),
    ],
)
def test_protocol_maps_the_moderator_commands(frame: dict[str, Any], expected: Command) -> None:
    msg = protocol.parse(json.dumps({"type": "command", **frame}), "moderator")
    assert protocol.moderator_command(msg) == expected


@pytest.mark.parametrize(
    "frame",
    [
        {"name": "protest"},
        {"name": "protest", "reason": "x", "team_id": "two"},
        {"name": "adjust", "team_id": 2, "points": 5, "reason": "r", "protest_id": 1.5},
    ],
)
def test_protocol_refuses_bad_moderator_fields(frame: dict[str, Any]) -> None:
    with pytest.raises(protocol.ProtocolError) as caught:
        protocol.parse(json.dumps({"type": "command", **frame}), "moderator")
    assert caught.value.code == "invalid"
    with pytest.raises(protocol.ProtocolError) as caught:
        protocol.parse(json.dumps({"type": "command", "name": "replay"}), "player")
    assert caught.value.code == "forbidden"


@pytest.mark.parametrize(
    ("preset", "bot_delay", "expected"),
    [("naqt", None, 0.3), ("naqt", 0.5, 0.5), ("hvc", None, 0.3), ("hvc", 0.0, 0.0), ("hvc", 1.25, 1.25)],
)
def test_the_match_bot_delay_wins_over_the_preset(
    preset: str, bot_delay: float | None, expected: float
) -> None:
    from .support import BOT

    d = started(preset=preset, bot_delay=bot_delay)
    d.run_until(T0 + 2.0)
    d.do(Buzz(BOT, 100, 2), T0 + 2.0)
    d.run_until(T0 + 2.0 + expected + 0.2)
    assert d.last("buzz").data["accepted_at"] == pytest.approx(T0 + 2.0 + expected)
