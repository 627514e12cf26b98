"""Simultaneous buzzes on the real database (SQLite here, PostgreSQL on CI via
DATABASE_URL): the row lock in ``store.apply_command`` serialises them, so exactly one
buzz wins the race, every acknowledged press is logged and the event log stays gapless."""

from __future__ import annotations

import sqlite3
import threading
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from django.db import connection, connections

from competition import game, services
from competition.live import store
from competition.models import Buzz, Match, MatchEvent, Player
from tests.support.factories import make_packet

pytestmark = pytest.mark.django_db(transaction=True)

T0 = 1_700_000_000.0
TEAMS = ["North", "South", "East", "West"]


@pytest.fixture
def file_backed_sqlite(tmp_path: Path) -> Iterator[None]:
    """Run on a file copy of the SQLite test database (no-op on PostgreSQL).

    Django tests SQLite on a shared-cache in-memory database, whose table locks fail at
    once ("database table is locked") instead of waiting; deployed SQLite is a file opened
    with ``BEGIN IMMEDIATE`` and a busy timeout (config/settings.py), which this reproduces."""
    memory = connections["default"]
    if memory.vendor != "sqlite" or not memory.is_in_memory_db():
        yield
        return
    path = tmp_path / "race.sqlite3"
    memory.ensure_connection()
    target = sqlite3.connect(path)
    memory.connection.backup(target)
    target.close()
    name = memory.settings_dict["NAME"]
    memory.settings_dict["NAME"] = str(path)  # the dict every thread's connection is built from
    connections["default"] = connections.create_connection("default")
    try:
        yield
    finally:
        connections["default"].close()
        memory.settings_dict["NAME"] = name
        connections["default"] = memory


def four_team_match() -> Match:
    tossups, _ = make_packet(n_tossups=1, n_bonuses=0)
    match = services.create_match(
        name="race", tossup_ids=[tossups[0].id], teams=TEAMS, config={"wpm": 600, "auto_rule": True}
    )
    for team in TEAMS:
        for k in range(2):
            services.join_match(code=match.join_code, name=f"{team}{k}", team=team)
    return match


def test_simultaneous_buzzes_yield_one_winner_and_a_gapless_log(file_backed_sqlite):
    match = four_team_match()
    store.apply_command(match_id=match.id, command=game.Start(), actor="moderator", now=T0)
    # 600 wpm: tokens 0..10 are shown by T0 + 1.0.
    store.apply_command(match_id=match.id, command=game.Tick(), actor="driver", now=T0 + 1.0)
    players = list(Player.objects.filter(match=match).order_by("id"))
    assert len(players) == 8
    qid = match.tossup_ids[0]
    press_at = T0 + 1.01
    barrier = threading.Barrier(len(players))
    outcomes: dict[int, Any] = {}

    def press(i: int, player: Player) -> None:
        try:
            barrier.wait(timeout=10)
            outcomes[player.id] = services.buzz(
                match_id=match.id,
                player_id=player.id,
                question_id=qid,
                # One word per team, distinct across teams, so the race has a clear order. On a
                # 300 ms link the server credits at most tokens 7..10 (token 7 shown at T0 + 0.7).
                token_index=7 + i // 2,
                client_time=None,
                corrected_press_at=None,
                delay_bound=0.3,
                now=press_at,
            )
        except Exception as exc:  # recorded and asserted below: a deadlock or IntegrityError fails
            outcomes[player.id] = exc
        finally:
            connection.close()

    threads = [threading.Thread(target=press, args=(i, p)) for i, p in enumerate(players)]
    for t in threads:
        t.start()
    for t in threads:
        t.join(timeout=60)
    assert not any(t.is_alive() for t in threads), "a buzz never returned (deadlock?)"

    acked = {pid for pid, out in outcomes.items() if isinstance(out, store.Applied)}
    refused = {pid: out for pid, out in outcomes.items() if pid not in acked}
    assert all(
        isinstance(e, game.RuleViolation) and e.code == "team_already_buzzed" for e in refused.values()
    ), refused
    # One buzz per team gets in: the first teammate to take the lock.
    team_of = {p.id: p.team_id for p in players}
    assert len(acked) == len(TEAMS) and {team_of[pid] for pid in acked} == {p.team_id for p in players}

    received = MatchEvent.objects.filter(match=match, event="buzz_received")
    assert sorted(e.payload["player_id"] for e in received) == sorted(acked)
    assert not MatchEvent.objects.filter(match=match, event="buzz").exists()  # window still open

    store.apply_command(match_id=match.id, command=game.Tick(), actor="driver", now=press_at + 0.2)
    (won,) = MatchEvent.objects.filter(match=match, event="buzz")
    token_of = {e.payload["player_id"]: e.payload["token_index"] for e in received}
    assert won.payload["player_id"] == min(acked, key=lambda pid: token_of[pid])
    (race,) = MatchEvent.objects.filter(match=match, event="race")
    assert sorted(c["player_id"] for c in race.payload["candidates"]) == sorted(acked)
    lost = MatchEvent.objects.filter(match=match, event="buzz_lost")
    assert sorted(int(e.audience.split(":")[1]) for e in lost) == sorted(acked - {won.payload["player_id"]})
    assert Buzz.objects.filter(match=match).count() == 1

    seqs = list(MatchEvent.objects.filter(match=match).order_by("seq").values_list("seq", flat=True))
    assert seqs == list(range(1, len(seqs) + 1)) and Match.objects.get(pk=match.pk).seq == seqs[-1]
    assert sorted(out.seq for pid, out in outcomes.items() if pid in acked) == sorted(e.seq for e in received)


@pytest.mark.parametrize("name", ["undo", "adjust"])
def test_the_same_moderator_command_from_two_dashboards_at_once_applies_once(file_backed_sqlite, name):
    match = four_team_match()
    store.apply_command(match_id=match.id, command=game.Start(), actor="moderator", now=T0)
    teams = {t.name: t.id for t in match.teams.all()}
    seat = {p.name: p.id for p in Player.objects.filter(match=match)}
    qid = match.tossup_ids[0]
    for at, name_, text in ((T0 + 1.0, "North0", "gatsby"), (T0 + 1.6, "South0", "Moby-Dick")):  # two rulings
        store.apply_command(match_id=match.id, command=game.Tick(), actor="driver", now=at)
        services.buzz(
            match_id=match.id,
            player_id=seat[name_],
            question_id=qid,
            token_index=9,
            client_time=None,
            corrected_press_at=None,
            now=at + 0.01,
        )
        store.apply_command(match_id=match.id, command=game.Tick(), actor="driver", now=at + 0.2)
        services.answer(match_id=match.id, player_id=seat[name_], question_id=qid, text=text, now=at + 0.3)
    scores = Match.objects.get(pk=match.pk).state["scores"]
    assert (scores[str(teams["North"])], scores[str(teams["South"])]) == (-5, 10)
    command = game.Undo() if name == "undo" else game.Adjust(teams["East"], 5, "protest")
    command_id = f"{name}:{{}}@{Match.objects.get(pk=match.pk).seq}"
    barrier = threading.Barrier(2)
    outcomes: list[Any] = []

    def send() -> None:
        try:
            barrier.wait(timeout=10)
            outcomes.append(
                store.apply_command(
                    match_id=match.id, command=command, actor="moderator", now=T0 + 5, command_id=command_id
                )
            )
        except Exception as exc:  # asserted below
            outcomes.append(exc)
        finally:
            connection.close()

    threads = [threading.Thread(target=send) for _ in range(2)]
    for t in threads:
        t.start()
    for t in threads:
        t.join(timeout=60)
    assert not any(t.is_alive() for t in threads)
    assert all(isinstance(o, store.Applied) for o in outcomes), outcomes
    assert sorted(o.duplicate for o in outcomes) == [False, True]
    assert outcomes[0].seq == outcomes[1].seq
    scores = Match.objects.get(pk=match.pk).state["scores"]
    if name == "undo":  # South's ruling reversed, North's neg kept
        assert (scores[str(teams["North"])], scores[str(teams["South"])]) == (-5, 0)
        assert MatchEvent.objects.filter(match=match, event="ruling_undone").count() == 1
    else:
        assert scores[str(teams["East"])] == 5
        assert (
            MatchEvent.objects.filter(match=match, event="points_adjusted", command_id=command_id).count()
            == 1
        )
