"""The control desk over HTTP (``frontend.desk_views``): the director accepts or sends back over
the API, anyone else gets a 403 JSON error and changes nothing; the moderator submits with the
match's token, warnings first acknowledged; the standings API and page count official results and
mark the others; a device pairs to a room by its short code and lands on the room's current game;
the help flag goes up from the dashboard's API and comes down from the control desk; the web form
creates a tournament, and refuses bad input with clear errors, creating nothing."""

from __future__ import annotations

import json

import pytest
from django.contrib.auth import get_user_model
from django.test import Client

from competition import game, review
from competition.live import store
from competition.models import DeskEntry, Match, Tournament, TournamentGame
from tests.competition.test_tournaments import T0, _play, _tournament
from tests.support.factories import make_packet

pytestmark = pytest.mark.django_db


def _login(name: str, **extra) -> tuple[Client, object]:
    user = get_user_model().objects.create_user(name, password="x", **extra)
    client = Client()
    client.force_login(user)
    return client, user


def _post(client: Client, url: str, body: dict | None = None, **headers):
    return client.post(url, json.dumps(body or {}), content_type="application/json", headers=headers)


@pytest.fixture
def directed(db, django_capture_on_commit_callbacks):
    """(tournament, its first game played and ended, the director's client)."""
    director_client, director = _login("td")
    t = _tournament(4)
    t.director = director
    t.save(update_fields=["director"])
    g = t.games.select_related("match", "home").first()
    _play(g.match, g.home.name, django_capture_on_commit_callbacks, bonus=False)  # a warning: bonus-1-missing
    return t, g, director_client


def test_the_moderator_submits_with_the_token_and_the_director_accepts_over_the_api(directed):
    t, g, director = directed
    code, token = g.match.join_code, g.match.moderator_token
    anonymous = Client()
    assert _post(anonymous, f"/api/match/{code}/desk/submit").status_code == 403  # no token, no login
    refused = _post(anonymous, f"/api/match/{code}/desk/submit", X_Moderator_Token=token)
    assert refused.status_code == 400 and refused.json()["code"] == "unacknowledged"
    assert [w["key"] for w in refused.json()["extra"]["warnings"]] == ["bonus-1-missing"]
    assert not DeskEntry.objects.exists()
    desk = anonymous.get(f"/api/match/{code}/desk", headers={"X-Moderator-Token": token}).json()
    assert desk["ended"] and desk["review"] == "open" and desk["warnings"][0]["key"] == "bonus-1-missing"
    ok = _post(
        anonymous,
        f"/api/match/{code}/desk/submit",
        {"acknowledged": ["bonus-1-missing"]},
        X_Moderator_Token=token,
    )
    assert ok.status_code == 200 and ok.json()["review"] == "submitted"

    body = director.get(f"/api/tournament/{t.id}/standings").json()
    assert body["unofficial"] == ["prelim-r1-g1"] and all(r["games"] == 0 for r in body["teams"])
    accepted = _post(director, f"/api/tournament/{t.id}/games/{g.id}/accept")
    assert accepted.status_code == 200 and accepted.json()["review"] == "official"
    body = director.get(f"/api/tournament/{t.id}/standings").json()
    assert body["unofficial"] == [] and sum(r["wins"] for r in body["teams"]) == 1
    page = director.get(f"/tournament/{t.id}/control/").content.decode()
    history = page[page.index('id="desk-history"') :]
    assert 'data-action="submitted"' in history and 'data-action="accepted"' in history, history
    assert "td: accepted the result" in history and "moderator: submitted the result" in history


def test_a_review_from_anyone_but_the_director_is_a_403_json_error_and_changes_nothing(directed):
    t, g, director = directed
    review.submit(g, acknowledged=["bonus-1-missing"])
    other, _ = _login("someone")
    for client in (other, Client()):
        for step, body in (("accept", {}), ("send-back", {"reason": "no"})):
            r = _post(client, f"/api/tournament/{t.id}/games/{g.id}/{step}", body)
            assert r.status_code == 403 and r.json()["code"] == "forbidden"
            assert "director" in r.json()["message"]
    assert review.review_state(g) == review.ReviewState.SUBMITTED and DeskEntry.objects.count() == 1
    page = other.get(f"/tournament/{t.id}/control/").content.decode()
    assert (
        "you may look but not review" in page
        and "button.accept" not in page
        and 'class="small-btn accept"' not in page
    )
    # the director: a send-back without a reason is refused, with one it reopens the result
    blank = _post(director, f"/api/tournament/{t.id}/games/{g.id}/send-back", {"reason": ""})
    assert blank.status_code == 400 and blank.json()["code"] == "invalid"
    back = _post(director, f"/api/tournament/{t.id}/games/{g.id}/send-back", {"reason": "check the bonus"})
    assert back.status_code == 200 and back.json()["review"] == "sent_back"
    desk = Client().get(
        f"/api/match/{g.match.join_code}/desk", headers={"X-Moderator-Token": g.match.moderator_token}
    )
    assert desk.json()["review"] == "sent_back" and desk.json()["reason"] == "check the bonus"
    again = _post(director, f"/api/tournament/{t.id}/games/{g.id}/accept")
    assert again.status_code == 409 and again.json()["code"] == "bad_state"


def test_a_device_pairs_to_a_room_by_its_short_code_and_follows_the_rooms_games(
    db, django_capture_on_commit_callbacks
):
    t = _tournament(4)
    room = {r.name: r for r in review.ensure_rooms(t)}["Room 1"]
    first, second = list(t.games.filter(room="Room 1").select_related("match", "home").order_by("round"))[:2]
    device = Client()
    wrong = device.get("/room/NOPE22/")
    assert wrong.status_code == 404 and "no room has that code" in wrong.content.decode()
    typed = device.get("/room/", {"code": f" {room.code.lower()} "})
    assert typed.status_code == 302 and typed["Location"] == f"/room/{room.code}/"
    paired = device.get(typed["Location"])
    assert paired.status_code == 302 and paired["Location"] == f"/moderator/{first.match.join_code}/"
    dash = device.get(paired["Location"])  # no token in the URL: the pairing remembered it
    assert dash.status_code == 200 and 'id="help-btn"' in dash.content.decode()
    assert device.get(f"/api/match/{first.match.join_code}/desk").json()["next"] is None
    _play(first.match, first.home.name, django_capture_on_commit_callbacks)
    desk = device.get(f"/api/match/{first.match.join_code}/desk").json()
    assert desk["next"]["code"] == second.match.join_code and desk["next"]["url"] == f"/room/{room.code}/"
    token = {"X-Moderator-Token": first.match.moderator_token}  # an unpaired moderator is not moved on
    assert Client().get(f"/api/match/{first.match.join_code}/desk", headers=token).json()["next"] is None
    assert device.get(f"/room/{room.code}/")["Location"] == f"/moderator/{second.match.join_code}/"
    assert device.get(f"/moderator/{second.match.join_code}/").status_code == 200
    # another match's dashboard stays closed to this device
    other = t.games.exclude(room="Room 1").first()
    assert device.get(f"/moderator/{other.match.join_code}/").status_code == 302


def test_the_help_flag_goes_up_from_the_dashboard_and_down_from_the_control_desk(db):
    t = _tournament(4)
    director, user = _login("td")
    t.director = user
    t.save(update_fields=["director"])
    g = t.games.select_related("match").first()
    store.apply_command(match_id=g.match.id, command=game.Start(), actor="moderator", now=T0)
    token = {"X_Moderator_Token": g.match.moderator_token}
    up = _post(
        Client(),
        f"/api/match/{g.match.join_code}/desk/help",
        {"raised": True, "note": "scoresheet?"},
        **token,
    )
    assert up.status_code == 200 and up.json()["help"] is True
    twice = _post(Client(), f"/api/match/{g.match.join_code}/desk/help", {"raised": True}, **token)
    assert twice.status_code == 409 and twice.json()["code"] == "bad_state"
    assert (
        _post(Client(), f"/api/match/{g.match.join_code}/desk/help", {"raised": "yes"}, **token).status_code
        == 400
    )
    page = director.get(f"/tournament/{t.id}/control/").content.decode()
    assert f'data-room="{g.room}" data-state="needs_help"' in page and "scoresheet?" in page
    room = review.room_of(g)
    clear = f"/api/tournament/{t.id}/rooms/{room.id}/help/clear"
    other, _ = _login("other")
    assert _post(other, clear).status_code == 403 and review.room_of(g).help_at is not None
    assert _post(director, clear).status_code == 200
    page = director.get(f"/tournament/{t.id}/control/").content.decode()
    assert f'data-room="{g.room}" data-state="reading"' in page
    assert [e.action for e in t.desk_entries.all()] == [
        DeskEntry.Action.HELP_RAISED,
        DeskEntry.Action.HELP_CLEARED,
    ]


GOOD = {
    "name": "Web Cup",
    "preset": "naqt",
    "packets": "",
    "tossups_per_game": "1",
    "round_robin": "single",
    "groups": "1",
    "qualifier": "0",
    "playoff": "2",
    "teams": "Alpha: Ann, Abe\nBeta: Bea, tfidf (bot light)\nGamma: Gus\n",
}


@pytest.mark.parametrize(
    ("change", "error"),
    [
        ({"teams": "Alpha: Ann"}, "at least 2 teams"),
        ({"teams": "Alpha: Ann\nno colon here"}, "line 2: write"),
        ({"teams": "Alpha: Ann\nBeta: x (bot enormous)"}, "weight class is one of"),
        ({"teams": "Alpha: Ann\nAlpha: Bob"}, "team names must be non-empty and unique"),
        ({"packets": "1, 99"}, "has no packets named 99"),
        ({"playoff": "8"}, "needs 8 teams"),
        ({"tossups_per_game": "0"}, "greater than or equal to 1"),
        ({"name": ""}, "This field is required"),
    ],
)
def test_a_bad_tournament_form_says_what_is_wrong_and_creates_nothing(organiser, change, error):
    tossups, _ = make_packet()
    form = {**GOOD, "question_set": str(tossups[0].packet.question_set_id), **change}
    r = organiser.post("/tournament/new/", form)
    assert r.status_code == 400 and error in r.content.decode()
    assert not Tournament.objects.exists() and not Match.objects.exists()


def test_an_organiser_creates_a_tournament_from_the_web_and_directs_it(organiser, client):
    assert client.get("/tournament/new/").status_code == 302  # login first
    page = organiser.get("/tournament/new/")
    assert page.status_code == 200 and 'name="teams"' in page.content.decode()
    tossups, _ = make_packet()
    r = organiser.post("/tournament/new/", {**GOOD, "question_set": str(tossups[0].packet.question_set_id)})
    t = Tournament.objects.get()
    assert r.status_code == 302 and r["Location"] == f"/tournament/{t.id}/control/"
    assert t.director.username == "org" and t.format["playoff"] == 2 and t.tossups_per_game == 1
    assert [team.name for team in t.teams.all()] == ["Alpha", "Beta", "Gamma"]
    assert {s.name: s.kind for s in t.teams.get(name="Beta").seats.all()} == {"Bea": "human", "tfidf": "bot"}
    assert TournamentGame.objects.filter(tournament=t).count() == 3
    control = organiser.get(r["Location"]).content.decode()
    assert control.count("data-room=") == 1 and 'data-room="Room 1" data-state="waiting"' in control
    assert control.count("<svg") == 1  # the room's QR code
