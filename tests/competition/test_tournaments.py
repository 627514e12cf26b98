"""Tournaments in the database: creation from teams, packets and a format; games as matches with
the tournament's identities; playoffs created when a game's end commits (the events_committed hook);
standings live and from the exported QBJ file; the management command and the standings page."""

from __future__ import annotations

import io
import json
from typing import Any

import pytest
from django.core.management import call_command
from django.core.management.base import CommandError

from competition import game, outbox, review, services, tournaments
from competition import schedule as sc
from competition import standings as st
from competition.live import store
from competition.models import Match, Outbox, Player, TournamentGame
from formats import qbj as qbjfmt
from tests.support.factories import ANSWERS, make_packet

pytestmark = pytest.mark.django_db
T0 = 1_700_000_000.0


def _teams(n: int) -> list[dict]:
    return [
        {
            "name": f"Team {i}",
            "players": [
                {"name": f"p{i}a", "kind": "human"},
                {"name": f"p{i}b", "kind": "human"},
                {"name": f"bot{i}", "kind": "bot", "weight_class": "light"},
            ],
        }
        for i in range(1, n + 1)
    ]


def _tournament(n: int = 4, fmt: dict | None = None, **kwargs):
    tossups, _ = make_packet(n_tossups=2, n_bonuses=2)
    return tournaments.create_tournament(
        name="Cup",
        teams=_teams(n),
        packet_ids=[tossups[0].packet_id],
        fmt=fmt or {"playoff": 2},
        config={"wpm": 600, "auto_rule": True},
        **kwargs,
    )


def _play(match: Match, winner: str, capture, *, neg: bool = False, bonus: bool = True) -> None:
    """Start ``match``; a human of team ``winner`` powers tossup 0 (the other team's human negs
    first when ``neg``), the team answers the bonus (unless not ``bonus``); then the moderator ends
    the match. Commit hooks run (``capture``)."""
    run = store.apply_command
    seat = match.players.filter(team__name=winner, kind=Player.Kind.HUMAN).first()
    other = match.players.exclude(team__name=winner).filter(kind=Player.Kind.HUMAN).first()
    q0 = match.tossup_ids[0]
    with capture(execute=True):
        run(match_id=match.id, command=game.Start(), actor="moderator", now=T0)
        at = T0 + 0.3
        if neg:
            services.buzz(
                match_id=match.id, player_id=other.id, question_id=q0, token_index=2,
                client_time=None, corrected_press_at=None, now=at,
            )  # fmt: skip
            run(match_id=match.id, command=game.Tick(), actor="driver", now=at + 0.3)
            services.answer(match_id=match.id, player_id=other.id, question_id=q0, text="wrong", now=at + 0.5)
            at += 1.0
        services.buzz(
            match_id=match.id, player_id=seat.id, question_id=q0, token_index=3,
            client_time=None, corrected_press_at=None, now=at,
        )  # fmt: skip
        run(match_id=match.id, command=game.Tick(), actor="driver", now=at + 0.3)
        services.answer(match_id=match.id, player_id=seat.id, question_id=q0, text=ANSWERS[0], now=at + 0.5)
        for part in range(3 if bonus else 0):  # the bonus: parts 0 and 2 right
            text = f"bonusanswer{part}" if part != 1 else "no idea"
            services.bonus_answer(
                match_id=match.id, player_id=seat.id, bonus_id=match.bonus_ids[0], part=part, text=text,
                now=at + 0.6 + part * 0.1,
            )  # fmt: skip
        run(match_id=match.id, command=game.End(), actor="moderator", now=at + 1.0)
    match.refresh_from_db()
    assert match.status == Match.Status.ENDED


def test_creation_schedules_the_round_robin_with_rooms_packets_and_the_tournament_identities():
    t = _tournament(4)
    games = list(t.games.select_related("match", "home", "away"))
    assert len(games) == 6 and {g.phase for g in games} == {sc.PRELIM}
    assert sorted({g.round for g in games}) == [1, 2, 3]
    assert {g.room for g in games} == {"Room 1", "Room 2"}
    team_ids = {team.name: team.competitor_id for team in t.teams.all()}
    seat_ids = {s.name: s.competitor_id for team in t.teams.all() for s in team.seats.all()}
    for g in games:
        m = g.match
        assert m.status == Match.Status.LOBBY and len(m.tossup_ids) == 2
        assert {tm.name: tm.competitor_id for tm in m.teams.all()} == {
            g.home.name: team_ids[g.home.name],
            g.away.name: team_ids[g.away.name],
        }
        seats = list(m.players.all())
        assert len(seats) == 6 and {p.kind for p in seats} == {"human", "bot"}
        assert all(p.competitor_id == seat_ids[p.name] for p in seats)
        # the bot sits on its human team (a hybrid team), in the engine's spec too
        assert {p["team_id"] for p in m.spec["players"] if p["kind"] == "bot"} == {
            tm.id for tm in m.teams.all()
        }


@pytest.mark.parametrize(
    ("kwargs", "message"),
    [
        ({"fmt": {"playoff": 8}}, "needs 8 teams"),
        ({"fmt": {"rounds": 2}}, "unknown format fields"),
        ({"teams": [{"name": "A", "players": [{"name": "x"}]}, {"name": "A", "players": [{"name": "y"}]}]}, "team names"),
        ({"teams": [{"name": "A", "players": [{"name": "x"}]}, {"name": "B", "players": [{"name": "x"}]}]}, "player names"),
        ({"teams": [{"name": "A", "players": []}, {"name": "B", "players": [{"name": "y"}]}]}, "no players"),
        ({"teams": [{"name": "A", "players": [{"name": "x", "kind": "robot"}]}, {"name": "B", "players": [{"name": "y"}]}]}, "unknown kind"),
        ({"packet_ids": []}, "at least one packet"),
        ({"packet_ids": [10**9]}, "does not exist"),
        ({"tossups_per_game": 0}, "at least 1"),
    ],
)  # fmt: skip
def test_bad_tournaments_are_refused_with_a_reason_and_store_nothing(kwargs, message):
    tossups, _ = make_packet()
    args = {
        "name": "Bad",
        "teams": _teams(4),
        "packet_ids": [tossups[0].packet_id],
        "fmt": {"playoff": 2},
        **kwargs,
    }
    with pytest.raises(services.ServiceError, match=message):
        tournaments.create_tournament(**args)
    assert not TournamentGame.objects.exists() and not Match.objects.exists()


def test_results_advance_to_the_playoff_final_and_standings_equal_the_qbj_recomputation(
    django_capture_on_commit_callbacks, tmp_path
):
    t = _tournament(4)
    strength = {team.name: team.seed for team in t.teams.all()}  # seed 1 wins every game
    for g in t.games.select_related("match", "home", "away"):
        winner = min((g.home.name, g.away.name), key=strength.__getitem__)
        _play(g.match, winner, django_capture_on_commit_callbacks, neg=g.round == 2)
    # the last round-robin game's end created the final, in the process that stored it
    final = t.games.get(phase=sc.PLAYOFF)
    assert (final.home.name, final.away.name, final.round) == ("Team 1", "Team 2", 4)
    assert tournaments.champion(t) is None and not tournaments.complete(t)
    _play(final.match, "Team 2", django_capture_on_commit_callbacks)
    assert tournaments.champion(t) == "Team 2" and tournaments.complete(t)
    assert tournaments.advance(t.id) == []  # nothing more to schedule, ever

    live = tournaments.standings(t, tournaments.results(t))  # as played: none reviewed here
    assert [s.team for s in live.teams][:2] == ["Team 1", "Team 2"]
    one = live.team("Team 1")
    assert (one.wins, one.losses, one.games, one.powers + one.tens) == (3, 1, 4, 3)
    assert (one.bonuses_heard, one.bonus_points, one.ppb) == (3, 60, 20)
    assert sum(s.negs for s in live.teams) == 2  # round 2's two games
    assert {p.player for p in live.players} >= {"p1a", "bot1"}

    path = tmp_path / "cup.qbj"
    path.write_text(json.dumps(tournaments.qbj_document(t)))
    read = qbjfmt.read_qbj(path)
    assert len(read.matches) == 7
    assert {m.phase for m in read.matches} == {qbjfmt.PRELIMS, qbjfmt.PLAYOFFS}
    recomputed = st.compute(tournaments.results_from_qbj(read), power_above=tournaments.power_above(t))
    assert [s.row() for s in recomputed.teams] == [s.row() for s in live.teams]
    assert [p.row() for p in recomputed.players] == [p.row() for p in live.players]


def test_a_server_killed_right_after_a_games_end_leaves_the_advance_to_the_outbox_sweeper(
    django_capture_on_commit_callbacks,
):
    """The last round-robin game's end commits, then its process dies before its commit hooks
    run (captured, never executed): no final yet, and the sweeper of ``serve`` creates it."""
    t = _tournament(4)
    strength = {team.name: team.seed for team in t.teams.all()}
    games = list(t.games.select_related("match", "home", "away"))

    def killed(**_: Any) -> Any:
        return django_capture_on_commit_callbacks(execute=False)

    for g in games:
        winner = min((g.home.name, g.away.name), key=strength.__getitem__)
        _play(g.match, winner, killed if g == games[-1] else django_capture_on_commit_callbacks)
    assert not t.games.filter(phase=sc.PLAYOFF).exists()
    assert Outbox.objects.filter(topic=tournaments.ADVANCE_TOPIC, done_at=None).count() == 1

    outbox.sweep_outbox()
    final = t.games.get(phase=sc.PLAYOFF)
    assert (final.home.name, final.away.name, final.round) == ("Team 1", "Team 2", 4)
    assert not Outbox.objects.filter(topic=tournaments.ADVANCE_TOPIC, done_at=None).exists()


def test_a_bonus_cut_short_by_the_end_counts_alike_live_and_in_the_qbj_file(
    django_capture_on_commit_callbacks, tmp_path
):
    t = _tournament(4)
    g = t.games.select_related("home").first()
    _play(g.match, g.home.name, django_capture_on_commit_callbacks, bonus=False)
    live = tournaments.standings(t, tournaments.results(t))  # as played: none reviewed here
    path = tmp_path / "t.qbj"
    path.write_text(json.dumps(tournaments.qbj_document(t)))
    recomputed = st.compute(
        tournaments.results_from_qbj(qbjfmt.read_qbj(path)), [x.name for x in t.teams.all()]
    )
    assert live.team(g.home.name).bonuses_heard == 0
    assert [r.row() for r in recomputed.teams] == [r.row() for r in live.teams]


def test_a_tournament_game_takes_an_added_bot_on_a_team_but_no_third_team():
    tournament = _tournament()
    match = tournament.games.first().match
    with pytest.raises(services.ServiceError, match="two teams"):
        services.seat_bot(match_id=match.id, name="Robo", team_id=None, weight_class="light")
    assert match.teams.count() == 2
    home = match.teams.first()
    services.seat_bot(match_id=match.id, name="Robo", team_id=home.id, weight_class="light")
    assert match.players.get(name="Robo").team_id == home.id


def test_create_tournament_command(tmp_path):
    make_packet()
    spec = {"name": "Cmd Cup", "set": "Test set", "format": {"playoff": 2}, "teams": _teams(3)}
    path = tmp_path / "t.json"
    path.write_text(json.dumps(spec))
    out = io.StringIO()
    call_command("create_tournament", str(path), stdout=out)
    text = out.getvalue()
    assert "standings at /tournament/" in text and text.count("moderator /moderator/") == 3
    path.write_text(json.dumps({**spec, "set": "Nope"}))
    with pytest.raises(CommandError, match="no question set"):
        call_command("create_tournament", str(path))


def test_standings_page_shows_teams_players_and_dashboard_links_for_organisers(
    client, django_user_model, django_capture_on_commit_callbacks
):
    t = _tournament(4)
    first = t.games.select_related("home").first()
    _play(first.match, first.home.name, django_capture_on_commit_callbacks)
    home = first.home.name.split()[-1]
    private = client.get(f"/tournament/{t.id}/").content.decode()  # the public feed is private by default
    assert "Team 1" in private and f"p{home}a" not in private and 'id="player-stats"' not in private
    t.public_feed = {"player_names": True, "live_scores": True, "individual_stats": True}
    t.save(update_fields=["public_feed"])
    html = client.get(f"/tournament/{t.id}/").content.decode()
    assert "unofficial" in html and f"p{home}a</th>" not in html  # not counted until official
    review.submit(first, acknowledged=[w.key for w in review.warnings(first.match)])
    review.accept(first, user=django_user_model.objects.create_superuser("td", password="x"))
    page = client.get(f"/tournament/{t.id}/")
    assert page.status_code == 200
    html = page.content.decode()
    assert "Team 1" in html and "Round 3" in html and 'http-equiv="refresh"' in html
    assert f"p{home}a</th><td>human" in html and f"bot{home}</th><td>bot" in html
    assert "moderate " not in html  # moderator tokens only for organisers
    assert client.get(f"/api/tournament/{t.id}/export.qbj").status_code == 403
    client.force_login(django_user_model.objects.create_user("org", password="x"))
    html = client.get(f"/tournament/{t.id}/").content.decode()
    code = t.games.first().match.join_code
    assert f"/moderator/{code}/?token=" in html
    body = client.get(f"/api/tournament/{t.id}/standings").json()
    # Team 1 beat Team 4; the teams that have not played yet come last
    assert [r["team"] for r in body["teams"]] == ["Team 1", "Team 4", "Team 2", "Team 3"]
    assert body["teams"][0]["wins"] == 1 and body["champion"] is None
    assert client.get(f"/api/tournament/{t.id}/export.qbj").status_code == 200


def test_the_tournament_fit_scope_holds_the_responses_of_its_games_only(django_capture_on_commit_callbacks):
    from irt import pipeline

    t = _tournament(4)
    games = list(t.games.select_related("home"))
    for g in games[:3]:
        _play(g.match, g.home.name, django_capture_on_commit_callbacks, neg=True)
        pipeline.record_match_responses(g.match_id)
    elsewhere = tournaments.create_tournament(  # another tournament's game: not in this scope
        name="Other", teams=_teams(4), packet_ids=t.packet_ids, fmt={}, config={"wpm": 600, "auto_rule": True}
    )
    g = elsewhere.games.select_related("home").first()
    _play(g.match, g.home.name, django_capture_on_commit_callbacks, neg=True)
    pipeline.record_match_responses(g.match_id)
    rows = pipeline.scope_responses(f"tournament:{t.id}")
    assert set(rows.values_list("match_id", flat=True)) == {g.match_id for g in games[:3]}
    fit = pipeline.fit_scope(f"tournament:{t.id}")
    assert fit.status == "done" and fit.n_responses == rows.count() > 0
    with pytest.raises(ValueError, match="reserved"):
        pipeline.replace_imported(f"tournament:{t.id}", "x.csv", [])
