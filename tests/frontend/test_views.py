"""Django test-client tests of the pages and JSON endpoints in ``frontend``."""

from __future__ import annotations

import csv
import io
import json
import math

import pytest
from asgiref.sync import async_to_sync
from django.contrib.auth import get_user_model
from django.test import Client

from competition import services
from competition.live import store
from competition.models import Bonus, Flag, Match, Packet, Player, QuestionSet, Tossup, hash_secret
from irt.models import Fit, ItemScore, Response, SubjectSkill

pytestmark = pytest.mark.django_db

ANSWER = "<b><u>Zanzibar</u></b> [accept Unguja]"


@pytest.fixture
def packet() -> Packet:
    qs = QuestionSet.objects.create(name="Test Set", year=2024, source="demo")
    packet = Packet.objects.create(question_set=qs, name="Round 1")
    for n in range(1, 6):
        Tossup.objects.create(
            packet=packet,
            number=n,
            question=f"Clue number {n} about a secret island archipelago. For 10 points, name it.",
            answer_line=ANSWER if n == 1 else f"<b><u>Answer{n}</u></b>",
            category="Geography",
        )
    for n in range(1, 4):
        Bonus.objects.create(
            packet=packet,
            number=n,
            leadin="For 10 points each:",
            parts=[{"text": f"part {k}", "answer_line": f"bonus{n}{k}", "value": 10} for k in range(3)],
        )
    return packet


@pytest.fixture
def match(packet: Packet) -> Match:
    ids = list(packet.tossups.order_by("number").values_list("id", flat=True))
    return services.create_match(
        name="Friday",
        tossup_ids=ids[:3],
        preset="naqt",
        teams=["Red", "Blue"],
        bots=[{"name": "tfidf", "weight_class": "light"}],
    )


def create_post(packet: Packet, **overrides) -> dict:
    data = {
        "name": "Semifinal",
        "packet": str(packet.id),
        "n_tossups": "3",
        "preset": "hvc",
        "wpm": "250",
        "auto_rule": "on",
        "team": ["Team A", "Team B", "Team C"],
        "bot_name": ["tfidf", "big"],
        "bot_class": ["light", "heavy"],
    }
    data.update(overrides)
    return data


def test_pages_render(client: Client, organiser: Client, packet: Packet) -> None:
    for url in ("/", "/play/", "/analysis/", "/accounts/login/"):
        assert client.get(url).status_code == 200, url
    assert organiser.get("/moderator/").status_code == 200
    assert client.get("/watch/NOPE99/").status_code == 404
    assert client.get("/moderator/NOPE99/").status_code == 404


def test_static_files_and_plotly_are_served_locally(client: Client) -> None:
    js = client.get("/static/frontend/play.js")
    assert js.status_code == 200 and js["Content-Type"].startswith("text/javascript")
    assert b"MatchSocket" in async_to_sync(read_async_stream)(js)
    plotly = client.get("/vendor/plotly.min.js")
    assert plotly.status_code == 200
    assert b"plotly" in next(iter(plotly.streaming_content))[:5000].lower()


async def read_async_stream(response) -> bytes:
    """servestatic streams files asynchronously (uvicorn serves them the same way)."""
    return b"".join([chunk async for chunk in response.streaming_content])


CRAFTED_STATIC_URLS = [
    "/static/nope.js",
    "/static/frontend/../../config/settings.py",
    "/static/%2e%2e/%2e%2e/config/settings.py",
    "/static/..%2f..%2fconfig%2fsettings.py",
    "/static/frontend/%00.js",
    "/static/frontend/play.js%00",
    "/static//etc/passwd",
    "/static/" + "a/" * 500,
]


@pytest.mark.parametrize("url", CRAFTED_STATIC_URLS)
def test_a_crafted_static_url_is_a_plain_404(client: Client, url: str) -> None:
    from django.conf import settings

    assert settings.DEBUG is False
    response = client.get(url)  # the test client re-raises any exception a view raises
    assert response.status_code == 404
    body = response.content.decode(errors="replace")
    assert "Traceback" not in body and "SECRET_KEY" not in body and "settings" not in body.lower()


def test_moderator_form_lists_packets_with_counts_and_presets(organiser: Client, packet: Packet) -> None:
    html = organiser.get("/moderator/").content.decode()
    assert "Test Set / Round 1 — 5 tossups, 3 bonuses" in html
    for preset in ("acf", "hvc", "naqt"):
        assert f'value="{preset}"' in html
    assert 'value="Team A"' in html and 'value="Team B"' in html and 'value="tfidf"' in html


def test_create_match_redirects_to_dashboard(organiser: Client, packet: Packet) -> None:
    client = organiser
    response = client.post("/moderator/", create_post(packet))
    assert response.status_code == 302
    match = Match.objects.get()
    assert response["Location"] == f"/moderator/{match.join_code}/"
    numbers = [Tossup.objects.get(id=i).number for i in match.tossup_ids]
    assert numbers == [1, 2, 3]
    assert [Bonus.objects.get(id=i).number for i in match.bonus_ids] == [1, 2, 3]
    assert match.preset == "hvc"
    assert match.config["wpm"] == 250 and match.config["auto_rule"] is True
    teams = list(match.teams.values_list("name", "kind"))
    assert teams == [
        ("Team A", "human"),
        ("Team B", "human"),
        ("Team C", "human"),
        ("tfidf", "bot"),
        ("big", "bot"),
    ]
    assert list(match.players.filter(kind="bot").values_list("name", "weight_class")) == [
        ("tfidf", "light"),
        ("big", "heavy"),
    ]

    dash = client.get(response["Location"])
    assert dash.status_code == 200
    html = dash.content.decode()
    bot = match.players.get(name="tfidf")
    assert match.join_code in html
    assert f"--code {match.join_code} --token={bot.token} --bot tfidf --train" in html
    assert "python manage.py runbot --url ws://testserver" in html
    assert match.moderator_token in html  # handed to the dashboard's socket


def test_dashboard_needs_a_login_or_the_moderator_token(match: Match, organiser: Client) -> None:
    other = Client()
    url = f"/moderator/{match.join_code}/"
    anonymous = other.get(url)
    assert anonymous.status_code == 302 and anonymous["Location"] == f"/accounts/login/?next={url}"
    assert other.get(f"{url}?token=wrong").status_code == 403
    shared = other.get(f"{url}?token={match.moderator_token}")  # a shared link needs no account
    assert shared.status_code == 200 and match.moderator_token in shared.content.decode()
    # the token is remembered in the session after one good visit
    assert other.get(url).status_code == 200
    assert organiser.get(url).status_code == 200  # organisers open any dashboard


def test_create_and_list_need_an_organiser_login(client: Client, match: Match, packet: Packet) -> None:
    listing = client.get("/moderator/")
    assert listing.status_code == 302 and listing["Location"] == "/accounts/login/?next=/moderator/"
    assert match.join_code not in client.get("/").content.decode()  # the home page lists no join codes
    assert client.post("/moderator/", create_post(packet)).status_code == 302
    assert list(Match.objects.values_list("id", flat=True)) == [match.id]  # nothing created

    get_user_model().objects.create_user("ann", password="a-long-password-1")
    login = client.post("/accounts/login/?next=/moderator/", {"username": "ann", "password": "wrong"})
    assert login.status_code == 200 and not Match.objects.exclude(id=match.id).exists()
    login = client.post("/accounts/login/", {"username": "ann", "password": "a-long-password-1"})
    assert login.status_code == 302 and login["Location"] == "/moderator/"
    page = client.get("/moderator/").content.decode()
    assert match.join_code in page and "Log out ann" in page
    assert client.post("/moderator/", create_post(packet)).status_code == 302
    assert Match.objects.count() == 2
    client.post("/accounts/logout/")
    assert client.get("/moderator/").status_code == 302


@pytest.mark.parametrize(
    ("overrides", "message"),
    [
        ({"n_tossups": "9"}, "That packet has only 5 tossups."),
        ({"team": ["Red", "red"]}, "Team and bot names must be unique."),
        ({"team": ["", " "]}, "Add at least one human team."),
        ({"bot_class": ["light", "huge"]}, "weight class must be light, mid or heavy"),
        ({"name": ""}, "This field is required."),
        ({"preset": "nope"}, "Select a valid choice."),
        ({"wpm": "5"}, "greater than or equal to 60"),
    ],
)
def test_create_form_validation(organiser: Client, packet: Packet, overrides: dict, message: str) -> None:
    response = organiser.post("/moderator/", create_post(packet, **overrides))
    assert response.status_code == 400
    assert message in response.content.decode()
    assert not Match.objects.exists()


def test_api_match_lists_human_teams_only(client: Client, match: Match) -> None:
    body = client.get(f"/api/match/{match.join_code.lower()}").json()
    assert body["name"] == "Friday" and body["status"] == "lobby"
    assert [(t["name"], t["kind"]) for t in body["teams"]] == [("Red", "human"), ("Blue", "human")]
    assert [t["team_id"] for t in body["teams"]] == [match.teams.get(name=n).id for n in ("Red", "Blue")]
    missing = client.get("/api/match/ZZZZZZ")
    assert missing.status_code == 404
    assert missing.json()["code"] == "not_found" and missing.json()["message"]


def post_json(client: Client, payload, csrf: str = "", url: str = "/api/join") -> tuple[int, dict]:
    body = payload if isinstance(payload, str) else json.dumps(payload)
    headers = {"X-CSRFToken": csrf} if csrf else {}
    response = client.post(url, body, content_type="application/json", headers=headers)
    return response.status_code, response.json()


def tablet(code: str = "") -> tuple[Client, str]:
    """A browser that enforces CSRF, after loading the play page: (client, the page's CSRF token)."""
    client = Client(enforce_csrf_checks=True)
    page = client.get(f"/play/?code={code}")
    data = json.loads(
        page.content.decode().split('id="page-data" type="application/json">')[1].split("</script>")[0]
    )
    assert data["csrf"] and "csrftoken" in page.cookies
    return client, data["csrf"]


def test_api_join_seats_a_player_and_the_seat_comes_back_only_with_its_token(match: Match) -> None:
    client, csrf = tablet(match.join_code)
    status, body = post_json(client, {"code": match.join_code.lower(), "name": "Ada", "team": "Blue"}, csrf)
    assert status == 200
    player = Player.objects.get(id=body["player_id"])
    assert (player.name, player.team.name, player.kind) == ("Ada", "Blue", "human")
    # A new identity named after the seat; its secret is sent once, for the tablet to keep.
    identity = body.pop("identity")
    assert identity["handle"] == "Ada" and player.competitor.secret_hash == hash_secret(identity["secret"])
    assert body == {
        "player_id": player.id,
        "token": player.token,
        "team_id": player.team_id,
        "code": match.join_code,
    }
    # Another tablet typing the same name, on any team, gets nothing.
    thief, thief_csrf = tablet(match.join_code)
    for team in ("Blue", "Red"):
        status, refused = post_json(thief, {"code": match.join_code, "name": "Ada", "team": team}, thief_csrf)
        assert status == 409 and refused["code"] == "seat_taken" and "token" not in refused
        status, refused = post_json(
            thief, {"code": match.join_code, "name": "Ada", "team": team, "secret": "guess"}, thief_csrf
        )
        assert status == 409 and refused["code"] == "seat_taken"
    # The tablet holding the token gets the same seat back, before and after the start.
    secret = {"code": match.join_code, "name": "Ada", "team": "Blue", "secret": body["token"]}
    body["identity"] = {"handle": "Ada"}  # the seat's identity again, no secret this time
    status, again = post_json(client, secret, csrf)
    assert status == 200 and again == body
    Match.objects.filter(id=match.id).update(status=Match.Status.RUNNING)
    status, again = post_json(client, secret, csrf)
    assert status == 200 and again == body
    assert Player.objects.filter(match=match, name="Ada").count() == 1


def test_api_join_with_a_handle_is_one_identity_across_matches(match: Match, packet: Packet) -> None:
    second = services.create_match(
        name="Saturday", tossup_ids=[packet.tossups.first().id], preset="naqt", teams=["Red", "Blue"]
    )
    client, csrf = tablet(match.join_code)
    status, first = post_json(
        client, {"code": match.join_code, "name": "Ada", "team": "Blue", "handle": "ada_l"}, csrf
    )
    assert status == 200 and first["identity"]["handle"] == "ada_l" and first["identity"]["secret"]
    # The same tablet, next match, another display name: the handle and its kept secret.
    claim = {"handle": "ADA_L", "identity_secret": first["identity"]["secret"]}
    status, again = post_json(
        client, {"code": second.join_code, "name": "Ada L.", "team": "Red", **claim}, csrf
    )
    assert status == 200 and again["identity"] == {"handle": "ada_l"}
    seats = Player.objects.filter(id__in=[first["player_id"], again["player_id"]])
    assert len({p.competitor_id for p in seats}) == 1
    # Another tablet cannot take the handle: 409 naming the field, and no seat is made.
    thief, thief_csrf = tablet(second.join_code)
    status, refused = post_json(
        thief, {"code": second.join_code, "name": "Eve", "team": "Red", "handle": "ada_l"}, thief_csrf
    )
    assert status == 409 and refused["code"] == "seat_taken" and refused["extra"] == {"field": "handle"}
    assert not Player.objects.filter(name="Eve").exists()
    status, refused = post_json(
        thief, {"code": second.join_code, "name": "Eve", "team": "Red", "handle": 3}, thief_csrf
    )
    assert status == 400 and refused["code"] == "invalid"


def test_api_join_without_the_csrf_token_is_refused(match: Match) -> None:
    client, _ = tablet(match.join_code)
    status, body = post_json(client, {"code": match.join_code, "name": "Ada", "team": "Blue"})
    assert status == 403 and body["code"] == "csrf" and body["message"]
    bare = Client(enforce_csrf_checks=True)  # no cookie at all (a cross-site form or script)
    status, body = post_json(bare, {"code": match.join_code, "name": "Ada", "team": "Blue"}, "forged")
    assert status == 403 and body["code"] == "csrf"
    assert not Player.objects.filter(name="Ada").exists()


def test_a_reclaim_code_moves_a_seat_once(match: Match) -> None:
    old, old_csrf = tablet(match.join_code)
    _, ada = post_json(old, {"code": match.join_code, "name": "Ada", "team": "Blue"}, old_csrf)
    Match.objects.filter(id=match.id).update(status=Match.Status.RUNNING)  # mid-match: tablet lost

    mod = Client(enforce_csrf_checks=True)
    mod_csrf = mod.get(f"/moderator/{match.join_code}/?token={match.moderator_token}").context["page"]["csrf"]
    reclaim_url = f"/api/match/{match.join_code}/players/{ada['player_id']}/reclaim"
    status, issued = post_json(mod, "", mod_csrf, url=reclaim_url)
    assert status == 200 and issued["player_id"] == ada["player_id"] and issued["name"] == "Ada"
    code = issued["reclaim_code"]
    assert len(code) == 8 and Player.objects.get(id=ada["player_id"]).reclaim_code == code
    roster = mod.get(f"/api/match/{match.join_code}/players").json()["players"]
    assert {"player_id": ada["player_id"], "name": "Ada", "team": "Blue", "team_id": ada["team_id"],
            "kind": "human", "reclaim_pending": True} in roster  # fmt: skip

    new, new_csrf = tablet(match.join_code)
    typed = f"{code[:4].lower()}-{code[4:]}"  # as read aloud and typed: any case, a dash
    status, moved = post_json(
        new, {"code": match.join_code, "name": "Ada", "team": "Red", "secret": typed}, new_csrf
    )
    assert status == 200 and moved["player_id"] == ada["player_id"] and moved["team_id"] == ada["team_id"]
    player = Player.objects.get(id=ada["player_id"])
    assert player.reclaim_code == "" and player.token == moved["token"] != ada["token"]
    # The code is used up, and the old tablet's token no longer takes the seat.
    status, again = post_json(
        new, {"code": match.join_code, "name": "Ada", "team": "Blue", "secret": code}, new_csrf
    )
    assert status == 409 and again["code"] == "seat_taken"
    status, again = post_json(
        old, {"code": match.join_code, "name": "Ada", "team": "Blue", "secret": ada["token"]}, old_csrf
    )
    assert status == 409 and again["code"] == "seat_taken"
    assert Player.objects.filter(match=match, name="Ada").count() == 1


def test_reclaim_codes_and_the_roster_need_moderator_rights(match: Match, organiser: Client) -> None:
    ada = services.join_match(code=match.join_code, name="Ada", team="Blue")
    url = f"/api/match/{match.join_code}/players"
    reclaim_url = f"{url}/{ada.id}/reclaim"
    anonymous = Client()
    assert anonymous.get(url).status_code == 403 and anonymous.get(url).json()["code"] == "forbidden"
    assert anonymous.post(reclaim_url, headers={"X-Moderator-Token": "wrong"}).status_code == 403
    by_token = anonymous.get(url, headers={"X-Moderator-Token": match.moderator_token})
    assert [p["name"] for p in by_token.json()["players"]] == ["tfidf", "Ada"]
    assert Player.objects.get(id=ada.id).reclaim_code == ""
    # With the token but without the page's CSRF token: refused (a cross-site form cannot set the header,
    # and a session-authorised request must come from the dashboard page).
    strict = Client(enforce_csrf_checks=True)
    strict.get(f"/moderator/{match.join_code}/?token={match.moderator_token}")
    assert strict.post(reclaim_url).json()["code"] == "csrf"
    assert Player.objects.get(id=ada.id).reclaim_code == ""
    issued = organiser.post(reclaim_url).json()
    assert Player.objects.get(id=ada.id).reclaim_code == issued["reclaim_code"]
    bot = match.players.get(name="tfidf")
    missing = organiser.post(f"{url}/{bot.id}/reclaim")  # bots have no reclaimable seat
    assert missing.status_code == 404 and missing.json()["code"] == "not_found"


def test_a_join_flood_from_one_address_is_rate_limited(match: Match, settings) -> None:
    assert settings.JOIN_RATE_LIMIT == "10/m"
    client, csrf = tablet(match.join_code)
    statuses = [
        post_json(client, {"code": match.join_code, "name": f"p{k}", "team": "Red"}, csrf)[0]
        for k in range(10)
    ]
    assert statuses == [200] * 10
    response = client.post(
        "/api/join",
        json.dumps({"code": match.join_code, "name": "p10", "team": "Red"}),
        content_type="application/json",
        headers={"X-CSRFToken": csrf},
    )
    assert response.status_code == 429 and response["Retry-After"] == "60"
    assert response.json()["code"] == "rate_limited" and response.json()["message"]
    assert not Player.objects.filter(name="p10").exists()
    # Failed guesses count too (they are what a reclaim-code guesser sends) …
    assert (
        post_json(client, {"code": match.join_code, "name": "p1", "team": "Red", "secret": "x"}, csrf)[0]
        == 429
    )
    # … and the limit is per client address: another tablet still joins.
    other = Client(REMOTE_ADDR="10.0.0.7")
    status, _ = post_json(other, {"code": match.join_code, "name": "p10", "team": "Red"})
    assert status == 200


@pytest.mark.parametrize(
    ("payload", "code"),
    [
        ("not json", "malformed"),
        ("[1, 2]", "malformed"),
        ({"code": "X", "name": "Ada"}, "invalid"),
        ({"code": "ZZZZZZ", "name": "Ada", "team": "Red"}, "not_found"),
        ({"code": "{code}", "name": "Ada", "team": "Green"}, "invalid"),
        ({"code": "{code}", "name": "Ada", "team": "tfidf"}, "invalid"),  # bot teams are not joinable
    ],
)
def test_api_join_errors(client: Client, match: Match, payload, code: str) -> None:
    if isinstance(payload, dict) and payload.get("code") == "{code}":
        payload = {**payload, "code": match.join_code}
    status, body = post_json(client, payload)
    assert status == 400
    assert body["code"] == code and isinstance(body["message"], str) and body["message"]
    assert not Player.objects.filter(name="Ada").exists()


def test_api_join_closed_after_start(client: Client, match: Match) -> None:
    Match.objects.filter(id=match.id).update(status=Match.Status.RUNNING)
    status, body = post_json(client, {"code": match.join_code, "name": "Late", "team": "Red"})
    assert status == 400 and body["code"] == "closed"
    assert client.get("/api/join").status_code == 405


def test_player_and_spectator_pages_carry_no_question_data(client: Client, match: Match) -> None:
    for url in (f"/play/?code={match.join_code}", f"/watch/{match.join_code}/"):
        html = client.get(url).content.decode()
        assert match.join_code in html
        assert "Zanzibar" not in html and "Unguja" not in html
        assert "secret island" not in html
        assert match.moderator_token not in html


def test_analysis_empty_state(client: Client) -> None:
    Fit.objects.create(dataset="live", snapshot_hash="a", settings_hash="b", status=Fit.Status.RUNNING)
    html = client.get("/analysis/").content.decode()
    assert "No fit yet" in html
    assert "plotly.min.js" not in html


@pytest.fixture
def fit(match: Match) -> Fit:
    """A finished live fit over the match's three tossups, with buzzes and a flag."""
    t1, t2, t3 = (Tossup.objects.get(id=i) for i in match.tossup_ids)
    fit = Fit.objects.create(
        dataset="live",
        snapshot_hash="s",
        settings_hash="h",
        status=Fit.Status.DONE,
        n_responses=4,
        n_subjects=2,
        n_items=3,
        summary={"mu": 0.1234, "kappa": 0.8, "delta": 0.05, "advscore": 0.2468},
    )
    SubjectSkill.objects.create(
        fit=fit, subject="human:Ada", kind="human", skill=1.25, skill_se=0.5, n_responses=3
    )
    SubjectSkill.objects.create(
        fit=fit, subject="bot:tfidf", kind="bot", skill=-0.4, skill_se=None, n_responses=3
    )
    ItemScore.objects.create(
        fit=fit, item=f"tossup:{t1.id}", tossup=t1, difficulty=0.5, discriminability=2.0,
        mu=0.3, delta=0.1, kappa=0.9, advscore=0.49, n_responses=2,
        human_buzz_index=5.0, human_buzz_read=(5 / 12 + 7 / 12) / 2, human_buzzes=2,
        bot_buzz_index=9.0, bot_buzz_read=10 / 12, bot_buzzes=1,
    )  # fmt: skip
    ItemScore.objects.create(
        fit=fit, item=f"tossup:{t2.id}", tossup=t2, difficulty=-1.0, discriminability=0.7,
        mu=-0.2, delta=math.nan, kappa=0.4, advscore=math.nan, n_responses=2,
    )  # fmt: skip
    Flag.objects.create(tossup=t1, match=match, reporter="Ada", role="player", problem="ambiguity")
    Flag.objects.create(tossup=t1, match=match, reporter="mod", role="moderator", problem="subjectivity")
    for subject, kind, tossup, correct in (
        ("human:Ada", "human", t1, True),
        ("bot:tfidf", "bot", t1, False),
        ("human:Ada", "human", t2, True),
        ("human:Old", "human", t3, False),
    ):
        Response.objects.create(
            dataset="live", source=f"match:{match.id}", subject=subject, subject_kind=kind,
            item=f"tossup:{tossup.id}", tossup=tossup, match=match, correct=correct,
        )  # fmt: skip
    return fit


def test_analysis_page_shows_the_latest_live_fit(client: Client, organiser: Client, fit: Fit) -> None:
    Fit.objects.create(dataset="other", snapshot_hash="x", settings_hash="y", status=Fit.Status.DONE)
    response = client.get("/analysis/")
    html = response.content.decode()
    assert response.context["fit"] == fit
    assert "human:Ada" in html and "bot:tfidf" in html
    assert "1.25 ± 0.98" in html  # β ± 1.96·SE
    # Aggregates over the items as flagged now: t1 (flagged twice) is left out; t2's ADVSCORE is NaN.
    summary = response.context["summary"]
    assert summary["mu"] == pytest.approx(-0.2) and summary["advscore"] is None and summary["n_items"] == 1
    with_flagged = client.get(f"/analysis/fit/{fit.id}/?flagged=1").context["summary"]
    assert with_flagged["advscore"] == pytest.approx(0.49) and with_flagged["mu"] == pytest.approx(0.05)
    rows = {r["tossup_id"]: r for r in response.context["items"]}
    t1, t2 = match_tossups(fit)
    assert rows[t1]["flags"] == 2 and rows[t2]["flags"] == 0
    assert rows[t1]["human_buzz"]["index"] == pytest.approx(5.0)
    assert rows[t1]["human_buzz"]["read"] == pytest.approx((5 / 12 + 7 / 12) / 2)
    assert rows[t1]["bot_buzz"]["index"] == pytest.approx(9.0)
    assert rows[t2]["human_buzz"] is None
    assert rows[t2]["advscore"] is None and rows[t2]["delta"] is None  # NaN shown as "—"
    # The fit's match has not ended: its answer lines are for logged-in users only.
    assert "Zanzibar" not in html and rows[t1]["answer_hidden"] is True
    assert "Zanzibar" in organiser.get("/analysis/").content.decode()
    Match.objects.filter(id=fit_match(fit)).update(status=Match.Status.ENDED)
    assert "Zanzibar" in client.get("/analysis/").content.decode()  # once it ended, everyone
    assert '<script src="/vendor/plotly.min.js"' in html

    plots = json.loads(html.split('id="plot-data" type="application/json">')[1].split("</script>")[0])
    assert plots["skills"]["human"]["skill"] == [1.25] and plots["skills"]["bot"]["skill"] == [-0.4]
    first = plots["curves"][0]  # most discriminating item: γ = 2, θ = 0.5
    assert first["label"] == "#1"
    peak = max(range(len(plots["grid"])), key=lambda i: first["y"][i])
    assert plots["grid"][peak] == pytest.approx(0.5)
    assert first["y"][peak] == pytest.approx(2.0**2 / 4, abs=1e-4)  # IIF max γ²/4 at t = θ

    assert client.get(f"/analysis/fit/{fit.id}/").context["fit"] == fit
    assert client.get("/analysis/fit/999999/").status_code == 404


def fit_match(fit: Fit) -> int:
    return Response.objects.filter(dataset=fit.dataset).values_list("match_id", flat=True).first()


def match_tossups(fit: Fit) -> tuple[int, int]:
    ids = list(ItemScore.objects.filter(fit=fit).order_by("difficulty").values_list("tossup_id", flat=True))
    return ids[1], ids[0]


def test_fit_export_json_and_csv(client: Client, fit: Fit) -> None:
    body = json.loads(client.get(f"/api/fits/{fit.id}/export.json").content)
    assert body["fit"]["id"] == fit.id and body["fit"]["summary"]["advscore"] == 0.2468
    assert len(body["responses"]) == 4 and len(body["subjects"]) == 2 and len(body["items"]) == 2
    assert any(i["advscore"] is None for i in body["items"])  # NaN → null (strict JSON)

    response = client.get(f"/api/fits/{fit.id}/export.csv")
    assert response["Content-Type"].startswith("text/csv")
    rows = list(csv.DictReader(io.StringIO(response.content.decode())))
    assert len(rows) == 4
    ada_t1 = next(r for r in rows if r["subject"] == "human:Ada" and r["difficulty"] == "0.5")
    assert ada_t1["correct"] == "1" and ada_t1["skill"] == "1.25" and ada_t1["discriminability"] == "2.0"
    old = next(r for r in rows if r["subject"] == "human:Old")
    assert old["skill"] == "" and old["difficulty"] == ""  # no fitted parameters for it

    missing = client.get("/api/fits/999999/export.json")
    assert missing.status_code == 404 and missing.json()["code"] == "not_found"


def test_blank_tossup_count_takes_the_whole_packet(organiser: Client, packet: Packet) -> None:
    assert organiser.post("/moderator/", create_post(packet, n_tossups="")).status_code == 302
    assert len(Match.objects.get().tossup_ids) == 5


def test_the_question_list_gives_the_moderator_every_tossup_and_how_it_ended(
    match: Match, organiser: Client
) -> None:
    from competition import game

    url = f"/api/match/{match.join_code}/questions"
    assert Client().get(url).status_code == 403  # the answer lines are for the moderator only
    tossups = organiser.get(url).json()["tossups"]
    assert [t["question_id"] for t in tossups] == match.tossup_ids
    first = tossups[0]
    assert first["answer_line"] == ANSWER and first["tokens"][:3] == ["Clue", "number", "1"]
    assert all(t["outcome"] is None for t in tossups)  # nothing read yet
    for command in (game.Start(), game.Skip()):
        store.apply_command(match_id=match.id, command=command, actor="moderator")
    tossups = Client().get(url, headers={"X-Moderator-Token": match.moderator_token}).json()["tossups"]
    assert [t["outcome"] for t in tossups] == ["skipped", None, None]
