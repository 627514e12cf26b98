"""Django test-client tests of the pages and JSON endpoints in ``frontend``."""

from __future__ import annotations

import csv
import io
import json
import math

import pytest
from django.test import Client

from competition import services
from competition.models import Bonus, Buzz, Flag, Match, Packet, Player, QuestionSet, Tossup
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


def test_pages_render(client: Client, packet: Packet) -> None:
    for url in ("/", "/moderator/", "/play/", "/analysis/"):
        assert client.get(url).status_code == 200, url
    assert client.get("/watch/NOPE99/").status_code == 404
    assert client.get("/moderator/NOPE99/").status_code == 404


def test_static_files_and_plotly_are_served_locally(client: Client) -> None:
    js = client.get("/static/frontend/play.js")
    assert js.status_code == 200
    assert b"MatchSocket" in b"".join(js.streaming_content)
    plotly = client.get("/vendor/plotly.min.js")
    assert plotly.status_code == 200
    assert b"plotly" in next(iter(plotly.streaming_content))[:5000].lower()


def test_moderator_form_lists_packets_with_counts_and_presets(client: Client, packet: Packet) -> None:
    html = client.get("/moderator/").content.decode()
    assert "Test Set / Round 1 — 5 tossups, 3 bonuses" in html
    for preset in ("acf", "hvc", "naqt"):
        assert f'value="{preset}"' in html
    assert 'value="Team A"' in html and 'value="Team B"' in html and 'value="tfidf"' in html


def test_create_match_redirects_to_dashboard(client: Client, packet: Packet) -> None:
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
    assert f"--code {match.join_code} --token {bot.token} --bot tfidf --train" in html
    assert "python manage.py runbot --url ws://testserver" in html
    assert match.moderator_token in html  # handed to the dashboard's socket


def test_dashboard_needs_the_moderator_token(match: Match) -> None:
    other = Client()
    assert other.get(f"/moderator/{match.join_code}/").status_code == 403
    assert other.get(f"/moderator/{match.join_code}/?token=wrong").status_code == 403
    assert other.get(f"/moderator/{match.join_code}/?token={match.moderator_token}").status_code == 200
    # the token is remembered in the session after one good visit
    assert other.get(f"/moderator/{match.join_code}/").status_code == 200


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
def test_create_form_validation(client: Client, packet: Packet, overrides: dict, message: str) -> None:
    response = client.post("/moderator/", create_post(packet, **overrides))
    assert response.status_code == 400
    assert message in response.content.decode()
    assert not Match.objects.exists()


def test_api_match_lists_human_teams_only(client: Client, match: Match) -> None:
    body = client.get(f"/api/match/{match.join_code.lower()}").json()
    assert body["name"] == "Friday" and body["status"] == "lobby"
    assert [(t["name"], t["kind"]) for t in body["teams"]] == [("Red", "human"), ("Blue", "human")]
    missing = client.get("/api/match/ZZZZZZ")
    assert missing.status_code == 404
    assert missing.json()["code"] == "not_found" and missing.json()["message"]


def post_json(client: Client, payload) -> tuple[int, dict]:
    body = payload if isinstance(payload, str) else json.dumps(payload)
    response = client.post("/api/join", body, content_type="application/json")
    return response.status_code, response.json()


def test_api_join_seats_a_player_and_rejoins_by_name(match: Match) -> None:
    client = Client(enforce_csrf_checks=True)  # tablets post without a CSRF cookie
    status, body = post_json(client, {"code": match.join_code.lower(), "name": "Ada", "team": "Blue"})
    assert status == 200
    player = Player.objects.get(id=body["player_id"])
    assert (player.name, player.team.name, player.kind) == ("Ada", "Blue", "human")
    assert body == {
        "player_id": player.id,
        "token": player.token,
        "team_id": player.team_id,
        "code": match.join_code,
    }
    status, again = post_json(client, {"code": match.join_code, "name": "Ada", "team": "Blue"})
    assert status == 200 and again["token"] == body["token"]


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
    red = match.teams.get(name="Red")
    ada = Player.objects.create(match=match, team=red, name="Ada")
    bot = match.players.get(name="tfidf")
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
    )  # fmt: skip
    ItemScore.objects.create(
        fit=fit, item=f"tossup:{t2.id}", tossup=t2, difficulty=-1.0, discriminability=0.7,
        mu=-0.2, delta=math.nan, kappa=0.4, advscore=math.nan, n_responses=2,
    )  # fmt: skip
    for player, tossup, index in ((ada, t1, 4), (ada, t1, 6), (bot, t1, 9)):
        Buzz.objects.create(
            match=match, tossup=tossup, player=player, team=player.team, kind=player.kind,
            token_index=index, token_count=12, received_at=0.0, seq=index,
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


def test_analysis_page_shows_the_latest_live_fit(client: Client, fit: Fit) -> None:
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
    assert "Zanzibar" in html  # analysts see answers
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


def test_blank_tossup_count_takes_the_whole_packet(client: Client, packet: Packet) -> None:
    assert client.post("/moderator/", create_post(packet, n_tossups="")).status_code == 302
    assert len(Match.objects.get().tossup_ids) == 5
