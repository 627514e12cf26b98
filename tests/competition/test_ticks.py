"""The reading's fast path (competition.live.ticks): a Tick that reveals words is stored in one
statement against the row this process remembers. It must store exactly what the pure engine
produces, and whenever anything else wrote the row meanwhile it must store nothing and leave
the Tick to the locked path. PostgreSQL only (the path's one statement is PostgreSQL's)."""

from __future__ import annotations

from typing import Any

import pytest
from django.db import connection

from competition import game, selectors, services
from competition.live import rowcache, store, ticks
from competition.models import Buzz, Match, MatchEvent, Player
from tests.support.factories import make_match

pytestmark = pytest.mark.django_db

T0 = 1_700_000_000.0


@pytest.fixture(autouse=True)
def postgres_only() -> None:
    if connection.vendor != "postgresql":
        pytest.skip("competition.live.ticks' one-statement write is PostgreSQL's (the suite's CI database)")


@pytest.fixture
def stores(monkeypatch) -> list[bool]:
    """One entry per fast-path write: True stored, False the row had moved on."""
    calls: list[bool] = []
    real = ticks.store_words

    def spy(*args: Any, **kwargs: Any) -> Any:
        out = real(*args, **kwargs)
        calls.append(out is not None)
        return out

    monkeypatch.setattr(ticks, "store_words", spy)
    return calls


def tick(match: Match, now: float) -> store.Applied:
    return ticks.tick(match.id, now)


def three_words_read(match: Match) -> float:
    """Start ``match`` at T0 and tick three times; the next deadline."""
    applied = store.apply_command(match_id=match.id, command=game.Start(), actor="moderator", now=T0)
    for _ in range(3):
        applied = tick(match, applied.next_deadline)
    assert applied.next_deadline is not None
    return applied.next_deadline


def stored(match: Match, after: int = 0) -> list[tuple[int, str, dict, str, str]]:
    rows = MatchEvent.objects.filter(match=match, seq__gt=after).order_by("seq")
    return [(r.seq, r.event, r.payload, r.audience, r.actor) for r in rows]


def test_words_take_the_fast_path_and_store_exactly_what_the_engine_produces(stores):
    match = make_match(bots=False)
    applied = store.apply_command(match_id=match.id, command=game.Start(), actor="moderator", now=T0)
    expected_state = selectors.load_state(match.id)
    seq, now = applied.seq, T0
    expected: list[tuple[int, str, dict, str, str]] = []
    for _ in range(12):
        now = applied.next_deadline
        expected_state, events = game.apply(expected_state, game.Tick(), now)
        for ev in events:
            seq += 1
            expected.append((seq, ev.event, dict(ev.data), ev.audience, "driver"))
        applied = tick(match, now)
        assert applied.seq == seq and applied.next_deadline == expected_state.next_deadline
    assert stores and all(stores)  # words went the fast way, every one stored
    assert any(e[1] == "words" for e in expected)
    assert stored(match, after=seq - len(expected)) == expected
    row = Match.objects.get(pk=match.pk)
    assert row.seq == seq and row.state == expected_state.live_dict() and row.driven_at == now
    # What a process with nothing cached reads is the engine's state.
    rowcache._specs.clear()
    rowcache._records.clear()
    assert selectors.load_state(match.id).live_dict() == expected_state.live_dict()


def test_a_pause_written_by_another_process_sends_the_tick_the_locked_way(stores, monkeypatch):
    match = make_match(bots=False)
    now = three_words_read(match)
    # Another process pauses the match: this process's memory of the row is not told.
    with monkeypatch.context() as other_process:
        other_process.setattr(rowcache, "remember", lambda *args: None)
        paused = store.apply_command(match_id=match.id, command=game.Pause(), actor="moderator", now=now)
    before = stores.copy()
    after_pause = tick(match, now + 0.05)
    assert stores == [*before, False]  # the fast write found the row moved on and stored nothing
    # The locked path ticked the paused match: no word was revealed, seqs stay contiguous.
    assert [e[1] for e in stored(match, after=paused.seq - 1)] == ["paused"]
    assert after_pause.seq == paused.seq and not after_pause.events
    assert list(MatchEvent.objects.filter(match=match).order_by("seq").values_list("seq", flat=True)) == list(
        range(1, paused.seq + 1)
    )
    # Resumed here, the words flow the fast way again.
    resumed = store.apply_command(match_id=match.id, command=game.Resume(), actor="moderator", now=now + 1)
    applied = tick(match, resumed.next_deadline)
    assert [e["event"] for e in applied.events] == ["words"] and stores[-1] is True


def test_a_buzz_through_another_process_is_never_overwritten_by_a_fast_word(stores, monkeypatch):
    match = make_match(bots=False)
    alice = Player.objects.get(match=match, name="alice")
    now = three_words_read(match)
    with monkeypatch.context() as other_process:
        other_process.setattr(rowcache, "remember", lambda *args: None)
        buzzed = services.buzz(
            match_id=match.id, player_id=alice.id, question_id=match.tossup_ids[0], token_index=2,
            client_time=None, corrected_press_at=None, now=now - 0.01,
        )  # fmt: skip
    # What the engine does from the row as stored (the buzz in it):
    _, expected = game.apply(selectors.load_state(match.id), game.Tick(), now)
    applied = tick(match, now)
    assert stores[-1] is False
    assert [(e["event"], e["data"]) for e in applied.events] == [(ev.event, dict(ev.data)) for ev in expected]
    for _ in range(5):  # the race closes when its collection window ends
        if applied.next_deadline is None or any(e["event"] == "buzz" for e in applied.events):
            break
        applied = tick(match, applied.next_deadline)
    events = stored(match, after=buzzed.seq - 1)
    assert events[0][1] == "buzz_received"
    # The race closed on the locked path: alice holds the buzz, logged once.
    assert [e[2]["player_id"] for e in events if e[1] == "buzz"] == [alice.id]
    assert Buzz.objects.filter(match=match, player=alice).count() == 1
