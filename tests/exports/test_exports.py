"""Match exports (cycles.jsonl, QBJ) of a small match played through the services with explicit
times: a power and a bonus, a neg that is protested, adjusted and then replayed, and the replay
answered. Every figure below follows from the script and the naqt preset."""

from __future__ import annotations

import json
from io import StringIO

import pytest
from django.core.management import CommandError, call_command

from competition import exports, game, services
from competition.models import Match
from tests.support.factories import make_match

T0 = 1000.0  # 600 wpm: token i is revealed at T0 + 0.1 i (20 words, power mark after word 8)


def mod(match: Match, cmd, at: float) -> None:
    # Ticks are the reading driver's (its heartbeat keeps the match driven; see services).
    actor = "driver" if isinstance(cmd, game.Tick) else "moderator"
    services.apply_command(match_id=match.id, command=cmd, actor=actor, now=T0 + at)


def buzz(match: Match, player, question_id: int, token: int, at: float) -> None:
    # A 250 ms link: the claimed tokens (up to two words behind the reading) stand.
    services.buzz(
        match_id=match.id,
        player_id=player.id,
        question_id=question_id,
        token_index=token,
        client_time=None,
        corrected_press_at=None,
        delay_bound=0.25,
        now=T0 + at,
    )
    mod(match, game.Tick(), at + 0.2)  # the collection window (150 ms) closes


def answer(match: Match, player, question_id: int, text: str, at: float) -> None:
    services.answer(match_id=match.id, player_id=player.id, question_id=question_id, text=text, now=T0 + at)


def bonus(match: Match, player, bonus_id: int, part: int, text: str, at: float) -> None:
    services.bonus_answer(
        match_id=match.id, player_id=player.id, bonus_id=bonus_id, part=part, text=text, now=T0 + at
    )


@pytest.fixture
def played(db) -> Match:
    match = make_match(bots=False)
    q0, q1 = match.tossup_ids
    b0 = match.bonus_ids[0]
    alice, bob = match.players.get(name="alice"), match.players.get(name="bob")
    blue = match.teams.get(name="Blue")
    mod(match, game.Start(), 0.0)
    buzz(match, alice, q0, 4, 0.5)
    answer(match, alice, q0, "Moby-Dick", 0.8)  # power: +15
    bonus(match, alice, b0, 0, "bonusanswer0", 1.0)
    bonus(match, alice, b0, 1, "no idea", 1.1)
    bonus(match, alice, b0, 2, "bonusanswer2", 1.2)  # bonus 20; tossup 1 starts at 3.2
    buzz(match, bob, q1, 5, 3.8)
    answer(match, bob, q1, "Ahab", 4.1)  # neg: −5
    mod(match, game.Protest("Blue says Ahab should be prompted", blue.id), 4.2)
    mod(match, game.Adjust(blue.id, 5, "protest upheld", protest_id=1), 4.3)
    mod(match, game.ReplayTossup(), 4.4)  # the −5 is reversed; the +5 adjustment stays
    buzz(match, alice, q1, 3, 4.9)
    answer(match, alice, q1, "Magna Carta", 5.2)  # power again: +15
    mod(match, game.Tick(), 60.0)  # the three bonus parts time out; the match ends
    match.refresh_from_db()
    assert match.status == "ended"
    red = match.teams.get(name="Red")
    assert match.state["scores"] == {str(red.id): 50, str(blue.id): 5}
    return match


def test_cycles_record_every_tossup_cycle(played: Match) -> None:
    q0, q1 = played.tossup_ids
    rows = [json.loads(line) for line in exports.render(played, "cycles").splitlines()]
    assert [(r["cycle"], r["question_id"], r["replayed"], r["tossup"]["outcome"]) for r in rows] == [
        (0, q0, False, "answered"),
        (1, q1, True, "replayed"),
        (2, q1, False, "answered"),
    ]
    first = rows[0]["tossup"]["responses"]
    assert [(r["playerName"], r["position"], r["guess"], r["points"], r["isCorrect"]) for r in first] == [
        ("alice", 4, "Moby-Dick", 15, True)
    ]
    assert first[0]["verdict"] == "accept" and first[0]["ruling"] == "correct"
    assert first[0]["received_at"] == T0 + 0.5 and first[0]["revealed_at"] == pytest.approx(T0 + 0.4)
    assert first[0]["race"]["winner"] == first[0]["playerId"]
    assert [(p["part"], p["points"], p["isCorrect"]) for p in rows[0]["bonus"]["parts"]] == [
        (0, 10, True),
        (1, 0, False),
        (2, 10, True),
    ]
    neg = rows[1]["tossup"]["responses"]
    assert [(r["playerName"], r["position"], r["points"], r["undone"]) for r in neg] == [("bob", 5, -5, True)]
    assert [a["points"] for a in rows[1]["adjustments"]] == [5]
    assert [p["event"] for p in rows[1]["protests"]] == ["protest_marked", "protest_resolved"]
    assert [(r["playerName"], r["position"], r["points"]) for r in rows[2]["tossup"]["responses"]] == [
        ("alice", 3, 15)
    ]
    assert [p["ruling"] for p in rows[2]["bonus"]["parts"]] == ["timeout"] * 3
    for r in rows:
        assert r["match_id"] == played.id and r["match_code"] == played.join_code
        assert r["token_count"] == 20 and r["started_at"] <= r["ended_at"]


def test_qbj_keeps_the_rulings_that_stand(played: Match) -> None:
    doc = exports.qbj(played)
    (m,) = doc["objects"]
    assert m["type"] == "Match" and m["tossups_read"] == 2
    assert [q["buzzes"] for q in m["match_questions"]] == [
        [{"player": {"name": "alice"}, "team": {"name": "Red"}, "buzz_position": {"word_index": 4}, "result": {"value": 15}}],
        [{"player": {"name": "alice"}, "team": {"name": "Red"}, "buzz_position": {"word_index": 3}, "result": {"value": 15}}],
    ]  # fmt: skip
    assert [p["controlled_points"] for p in m["match_questions"][0]["bonus"]["parts"]] == [10, 0, 10]
    red, blue = m["match_teams"]
    assert red["team"]["name"] == "Red" and red["bonus_points"] == 20 and blue["bonus_points"] == 0
    alice = next(p for p in red["match_players"] if p["player"]["name"] == "alice")
    assert alice["answer_counts"] == [{"number": 2, "answer": {"value": 15}}]
    bob = blue["match_players"][0]
    assert bob["answer_counts"] == [] and bob["tossups_heard"] == 2


def test_export_command_writes_files_and_refuses_unknown_codes(played: Match, tmp_path) -> None:
    out = tmp_path / "m.qbj"
    call_command(
        "export_match", played.join_code.lower(), "--format", "qbj", "--out", str(out), stdout=StringIO()
    )
    assert json.loads(out.read_text())["objects"][0]["tossups_read"] == 2
    buf = StringIO()
    call_command("export_match", played.join_code, "--format", "cycles", stdout=buf)
    assert len(buf.getvalue().splitlines()) == 3
    with pytest.raises(CommandError, match="no match"):
        call_command("export_match", "NOPE42", stdout=StringIO())
    with pytest.raises(ValueError, match="unknown export format"):
        exports.render(played, "csv")
