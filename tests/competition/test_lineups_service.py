"""Lineups and timeouts through the services (the match's one door): stored events, refusals that
store nothing, and the QBJ export's tossups heard and lineups (naqt: four players a team,
substitutions at halftime, before overtime and during a timeout; one timeout a game)."""

from __future__ import annotations

import pytest

from competition import exports, game, selectors, services
from competition.game import EventName
from competition.live import store
from competition.models import Match, MatchEvent
from tests.support.factories import make_match

pytestmark = pytest.mark.django_db

T0 = 1000.0


def run(match: Match, cmd: game.Command, at: float) -> None:
    store.apply_command(match_id=match.id, command=cmd, actor="moderator", now=T0 + at)


def seq(match: Match) -> int:
    return Match.objects.get(pk=match.pk).seq


def refused(call, match: Match) -> str:
    before = seq(match)
    with pytest.raises(game.RuleViolation) as err:
        call()
    assert seq(match) == before  # nothing stored
    return err.value.code


def test_substitutions_and_timeouts_through_the_services_and_the_qbj_export() -> None:
    match = make_match(bots=False, n_tossups=3, n_bonuses=3, config={"auto_advance": False})
    for name in ("ava", "ada", "abi"):  # Red: alice, amy, ava, ada play; abi sits on the bench
        services.join_match(code=match.join_code, name=name, team="Red")
    red, blue = match.teams.get(name="Red"), match.teams.get(name="Blue")
    ids = {p.name: p.id for p in match.players.all()}
    state = selectors.load_state(match.id)
    assert game.active_players(state, red.id) == [ids[n] for n in ("alice", "amy", "ava", "ada")]

    run(match, game.Start(), 0)
    sub = {"match_id": match.id, "team_id": red.id, "player_in": ids["abi"], "player_out": ids["amy"]}
    assert refused(lambda: services.substitute(**sub, now=T0 + 1), match) == "no_substitution"  # mid-tossup
    run(match, game.Skip(), 2)
    # naqt: not between any two tossups, only during a timeout (or at halftime, before overtime).
    assert refused(lambda: services.substitute(**sub, now=T0 + 3), match) == "no_substitution"
    stranger = {**sub, "player_in": ids["bob"]}  # Blue's player is not on Red's roster
    assert refused(lambda: services.substitute(**stranger, now=T0 + 3), match) == "unknown_player"
    services.call_timeout(match_id=match.id, team_id=blue.id, now=T0 + 4)
    assert refused(lambda: services.call_timeout(match_id=match.id, team_id=blue.id, now=T0 + 5), match) == (
        "no_timeouts_left"
    )
    services.substitute(**sub, now=T0 + 6)
    changed = MatchEvent.objects.get(match=match, event=EventName.LINEUP_CHANGED).payload
    assert changed["reason"] == "other_timeout" and changed["first_tossup"] == 1
    assert MatchEvent.objects.filter(match=match, event=EventName.TIMEOUT_CALLED).count() == 1
    run(match, game.Next(), 7)
    run(match, game.Skip(), 8)
    run(match, game.Next(), 9)
    run(match, game.End(), 10)

    doc = exports.qbj_document([match])
    names = {
        p["id"]: p["name"]
        for o in doc["objects"]
        if o["type"] == "Registration"
        for t in o["teams"]
        for p in t["players"]
    }
    (m,) = [o for o in doc["objects"] if o["type"] == "Match"]
    red_qbj = m["match_teams"][0]
    heard = {names[p["player"]["$ref"]]: p["tossups_heard"] for p in red_qbj["match_players"]}
    assert heard == {"alice": 3, "amy": 1, "ava": 3, "ada": 3, "abi": 2}
    lineups = [
        (lu["first_question"], lu["reason"], [names[p["$ref"]] for p in lu["players"]])
        for lu in red_qbj["lineups"]
    ]
    assert lineups == [
        (1, "initial", ["alice", "amy", "ava", "ada"]),
        (2, "other_timeout", ["alice", "abi", "ava", "ada"]),
    ]
    blue_qbj = m["match_teams"][1]
    assert [p["tossups_heard"] for p in blue_qbj["match_players"]] == [3]


def test_a_timeout_undone_and_paused_through_the_services() -> None:
    match = make_match(bots=False, n_tossups=3, n_bonuses=3, config={"auto_advance": False})
    blue = match.teams.get(name="Blue")
    run(match, game.Start(), 0)
    assert refused(lambda: services.undo_timeout(match_id=match.id, now=T0 + 1), match) == "bad_phase"
    run(match, game.Skip(), 2)
    assert refused(lambda: services.undo_timeout(match_id=match.id, now=T0 + 3), match) == "no_timeout"
    services.call_timeout(match_id=match.id, team_id=blue.id, now=T0 + 4)  # naqt: one of 30 s a game
    services.moderate(match_id=match.id, command=game.Pause(), now=T0 + 10)  # 24 s left
    shown = selectors.load_state(match.id)
    assert game.view(shown, "all")["periods"]["timeout"]["remaining"] == 24.0
    services.moderate(match_id=match.id, command=game.Resume(), now=T0 + 20)
    assert selectors.load_state(match.id).periods["timeout"]["ends_at"] == T0 + 44  # 24 s from the resume
    services.undo_timeout(match_id=match.id, now=T0 + 21)
    undone = MatchEvent.objects.get(match=match, event=EventName.TIMEOUT_UNDONE).payload
    assert undone == {"team_id": blue.id, "left": 1, "timeout": None, "next_tossup_at": None}
    periods = game.view(selectors.load_state(match.id), "all")["periods"]
    assert periods["timeout"] is None and periods["timeouts_left"][str(blue.id)] == 1
    assert refused(lambda: services.undo_timeout(match_id=match.id, now=T0 + 22), match) == "no_timeout"
    run(match, game.Next(), 23)  # the moderator advances, as before the timeout
    assert selectors.load_state(match.id).tossup_index == 1
