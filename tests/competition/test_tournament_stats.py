"""A played tournament's YellowFruit-style statistics on its page and in its API, its .yft and
SQBS downloads (organisers only) read back, and the ``tournament_stats`` command."""

from __future__ import annotations

import io
import json

import pytest
from django.contrib.auth import get_user_model
from django.core.management import call_command
from django.core.management.base import CommandError

from competition import review, tournament_stats, tournaments
from formats import sqbs, yft
from tests.competition.test_tournaments import _play, _tournament

pytestmark = pytest.mark.django_db


def _played(capture):
    t = _tournament(4)
    first = t.games.select_related("home", "away").first()
    _play(first.match, first.home.name, capture, neg=True)  # the away human negs, the home human powers
    game_row = t.games.select_related("match").get(pk=first.pk)  # the stats count official results
    review.submit(game_row, acknowledged=[w.key for w in review.warnings(game_row.match)])
    review.accept(game_row, user=get_user_model().objects.create_superuser("director", password="x"))
    return t, first


def test_live_statistics_of_a_played_game(django_capture_on_commit_callbacks):
    t, first = _played(django_capture_on_commit_callbacks)
    s = tournament_stats.tournament_stats(t)
    home, away = s.team(first.home.name), s.team(first.away.name)
    # one tossup read: a ten after the other team's neg (−5); the bonus: parts 1 and 3 (20)
    assert (home.wins, home.tossups_heard, home.bonus_points, home.bonuses_heard) == (1, 1, 20, 1)
    assert home.ppb == 20 and home.pptuh == 30 and home.p20tuh == 600
    assert away.ppb is None and away.pptuh == -5  # no bonus heard: unknown, not 0
    idle = [x for x in s.teams if x.team not in (first.home.name, first.away.name)]
    assert [x.rank for x in idle] == ["3=", "3="] and all(x.pptuh is None for x in idle)
    # every seat heard the one tossup read: one whole game played each
    assert {p.games_played for p in s.players} == {1}
    assert s.players[0].team == first.home.name and s.players[0].p20tuh == 200


def test_downloads_are_for_organisers_and_read_back(
    client, django_user_model, django_capture_on_commit_callbacks
):
    t, first = _played(django_capture_on_commit_callbacks)
    for fmt in ("yft", "sqbs"):
        assert client.get(f"/api/tournament/{t.id}/export.{fmt}").status_code == 403
    anonymous = client.get(f"/tournament/{t.id}/").content.decode()
    assert 'id="team-stats"' in anonymous and "export.yft" not in anonymous
    client.force_login(django_user_model.objects.create_user("td", password="x"))
    page = client.get(f"/tournament/{t.id}/").content.decode()
    assert 'id="yft-export"' in page and 'id="sqbs-export"' in page and 'id="individual-stats"' in page
    scores = first.match.state["scores"]
    want = sorted(scores.values())
    got = client.get(f"/api/tournament/{t.id}/export.sqbs")
    assert got["Content-Disposition"].endswith('.sqbs"')
    back = sqbs.read_sqbs(got.content.decode())
    assert len(back.teams) == 2 and len(back.games) == 1  # the teams of the ended games
    assert sorted(side.score for side in back.games[0].sides) == want
    home = next(side for side in back.games[0].sides if side.team == first.home.name)
    assert (home.bonuses_heard, home.bonus_points) == (1, 20)
    doc = client.get(f"/api/tournament/{t.id}/export.yft")
    again = yft.read_yft(doc.content.decode())
    assert sorted(sqbs.total(mt) for mt in again.matches[0].match_teams) == want
    assert {tm.name for r in again.registrations for tm in r.teams} == {first.home.name, first.away.name}
    body = client.get(f"/api/tournament/{t.id}/standings").json()
    row = next(r for r in body["stats"]["teams"] if r["team"] == first.away.name)
    assert row["ppb"] is None and row["rank"] == "2"


def test_the_command_prints_writes_and_sets_the_feed(tmp_path, django_capture_on_commit_callbacks):
    t, first = _played(django_capture_on_commit_callbacks)
    out = io.StringIO()
    call_command(
        "tournament_stats", str(t.id), "--feed", "player_names=on", "--sqbs", str(tmp_path / "t.sqbs"),
        "--yft", str(tmp_path / "t.yft"), stdout=out,
    )  # fmt: skip
    text = out.getvalue()
    assert "public feed: player_names on, live_scores off, individual_stats off" in text
    assert f"   1 {first.home.name}" in text and "—" in text
    t.refresh_from_db()
    assert t.public_feed == {"player_names": True, "live_scores": False, "individual_stats": False}
    assert sqbs.read_sqbs((tmp_path / "t.sqbs").read_text()).games
    assert yft.read_yft((tmp_path / "t.yft").read_text()).matches
    with pytest.raises(CommandError, match="expected one of"):
        call_command("tournament_stats", str(t.id), "--feed", "names=yes")
    with pytest.raises(CommandError, match="no tournament"):
        call_command("tournament_stats", "999999")
    assert json.loads((tmp_path / "t.yft").read_text())["version"] == "2.1.1"
    assert tournaments.results(t)  # the game the figures came from
