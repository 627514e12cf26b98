"""A small match played through the services with explicit times (shared by the export tests)."""

from __future__ import annotations

import pytest

from competition import game, services
from competition.live import store
from competition.models import Match
from tests.support.factories import make_match

T0 = 1000.0  # 600 wpm: token i is revealed at T0 + 0.1 i (20 words, power mark after word 8)


def mod(match: Match, cmd, at: float) -> None:
    # Ticks are the reading driver's (its heartbeat keeps the match driven; see services).
    actor = "driver" if isinstance(cmd, game.Tick) else "moderator"
    store.apply_command(match_id=match.id, command=cmd, actor=actor, now=T0 + at)


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
