"""Analyst pages, leaderboards (irt.selectors) and exports (irt.exports) over fits made by the real
pipeline: Django test client, no browser."""

from __future__ import annotations

import csv
import io
import json
import time
from pathlib import Path

import numpy as np
import pytest
from django.contrib.auth import get_user_model
from django.core.management import call_command
from django.test import Client
from django.urls import reverse

from competition.models import Flag, Match, Tossup
from frontend import analysis
from irt import pipeline, selectors
from irt.models import Fit, ItemScore, Response, SubjectSkill
from tests.competition.test_outbox import broker, queued  # noqa: F401  (broker: a private Redis)
from tests.irt.test_pipeline import key, match  # noqa: F401  (match: a played match with two bots)
from tools import launcher

pytestmark = pytest.mark.django_db


@pytest.fixture
def live_fit(match: Match) -> Fit:  # noqa: F811
    pipeline.record_match_responses(match.id)
    return pipeline.fit_scope("live")


def subject_url(fit_id: int, subject: str) -> str:
    return reverse("frontend:analysis_subject", args=[fit_id, subject])


def plot_json(html: str) -> dict:
    return json.loads(html.split('id="plot-data" type="application/json">')[1].split("</script>")[0])


def test_fit_page_has_figure2_sensitivity_and_group_tables(
    client: Client,
    live_fit: Fit,
    match: Match,  # noqa: F811
) -> None:
    html = client.get(f"/analysis/fit/{live_fit.id}/").content.decode()
    f2 = plot_json(html)["figure2"]
    assert f2["skill_h0"] == pytest.approx(live_fit.summary["skill_h0"])
    assert f2["skill_m0"] == pytest.approx(live_fit.summary["skill_m0"])
    skills = dict(SubjectSkill.objects.filter(fit=live_fit).values_list("subject", "skill"))
    assert np.mean(f2["human"]["skills"]) == pytest.approx(live_fit.summary["skill_h0"])
    assert set(f2["bot"]["skills"]) <= {skills[key(match, "b1")], skills[key(match, "b2")]}
    assert len(f2["human_curve"]) == len(f2["items"]) == live_fit.n_items
    assert f2["difficulty"] == sorted(f2["difficulty"])
    assert all(0 < p < 1 for p in f2["human_curve"] + f2["bot_curve"])
    assert 'id="density-plot"' in html and 'id="response-plot"' in html

    assert (
        'id="sensitivity"' in html
        and f'title="{key(match, "b1")}">b1<' in html
        and "leave-one-bot-out" in html
    )
    assert "Writer A" in html and "Writer B" in html and "Pipeline set / Round 1" in html
    # Subjects are identities, shown by their handle and linked by their key ("#" escaped).
    alice = key(match, "alice")
    assert (
        alice.startswith("human:#")
        and f'href="{subject_url(live_fit.id, alice)}" title="{alice}">alice<' in html
    )
    assert "%23" in subject_url(live_fit.id, alice)
    for table in ("items", "subjects", "matrix"):
        assert f"/api/fits/{live_fit.id}/{table}.csv" in html


def test_flagged_switch(client: Client, match: Match) -> None:  # noqa: F811
    pipeline.record_match_responses(match.id)
    flagged = Tossup.objects.get(id=match.tossup_ids[0])
    Flag.objects.create(tossup=flagged, match=match, reporter="ed", role="editor", problem="subjectivity")
    fit = pipeline.fit_scope("live")
    default = client.get(f"/analysis/fit/{fit.id}/").context
    included = client.get(f"/analysis/fit/{fit.id}/?flagged=1").context
    assert default["summary"]["kappa"] == pytest.approx(fit.summary["kappa"])
    assert included["summary"]["kappa"] == pytest.approx(fit.summary["with_flagged"]["kappa"])
    assert default["summary"]["n_items"] == fit.n_items - 1 and included["summary"]["n_items"] == fit.n_items
    assert "⚑ 1" in client.get(f"/analysis/fit/{fit.id}/").content.decode()


def test_selectors_leaderboards(live_fit: Fit, match: Match) -> None:  # noqa: F811
    bots = selectors.subject_leaderboard(live_fit, "bot")
    assert [b["rank"] for b in bots] == [1, 2] and bots[0]["skill"] >= bots[1]["skill"]
    b = bots[0]
    assert b["lo"] == pytest.approx(b["skill"] - 1.96 * b["se"]) and b["hi"] > b["skill"]

    items = {i.tossup_id: i for i in ItemScore.objects.filter(fit=live_fit)}
    writers = {g["name"]: g for g in selectors.group_leaderboard(live_fit, "writer")}
    writer_a = [i.kappa for t, i in items.items() if Tossup.objects.get(id=t).writer == "Writer A"]
    assert writers["Writer A"]["n_items"] == len(writer_a)
    assert writers["Writer A"]["kappa"] == pytest.approx(np.mean(writer_a))
    [packet] = selectors.group_leaderboard(live_fit, "packet")
    assert packet["kappa"] == pytest.approx(np.mean([i.kappa for i in items.values()]))

    first = Tossup.objects.get(id=match.tossup_ids[0])
    Flag.objects.create(tossup=first, match=match, reporter="m", role="moderator", problem="ambiguity")
    event = selectors.event_summary(live_fit)
    kept = [i.kappa for t, i in items.items() if t != first.id]
    assert event["n_flagged"] == 1 and event["n_items"] == len(kept)
    assert event["kappa"] == pytest.approx(np.mean(kept))
    assert selectors.event_summary(live_fit, include_flagged=True)["n_items"] == len(items)
    [packet] = selectors.group_leaderboard(live_fit, "packet")
    assert packet["n_flagged"] == 1 and packet["kappa"] == pytest.approx(np.mean(kept))
    with pytest.raises(ValueError, match="writer"):
        selectors.group_leaderboard(live_fit, "category")


def test_subject_page(client: Client, live_fit: Fit, match: Match) -> None:  # noqa: F811
    response = client.get(subject_url(live_fit.id, key(match, "alice")))
    assert response.status_code == 200
    ctx = response.context
    assert ctx["subject"]["name"] == "alice"
    alice = SubjectSkill.objects.get(fit=live_fit, subject=key(match, "alice"))
    assert ctx["subject"]["skill"] == pytest.approx(alice.skill)
    assert ctx["subject"]["lo"] == pytest.approx(alice.skill - 1.96 * alice.skill_se)
    assert len(ctx["responses"]) == alice.n_responses and ctx["n_correct"] == 2
    assert sorted(r["position"] for r in ctx["responses"] if r["position"] is not None) == [5, 7]
    assert ctx["rank"] <= ctx["of"] == 3
    assert client.get(subject_url(live_fit.id, "human:alice")).status_code == 404  # a name is no subject
    assert client.get(subject_url(999999, key(match, "alice"))).status_code == 404
    html = response.content.decode()
    assert '<abbr class="missing" title="did not buzz">—</abbr>' in html


def test_csv_tables_and_json_export(client: Client, live_fit: Fit, match: Match) -> None:  # noqa: F811
    items = list(
        csv.DictReader(io.StringIO(client.get(f"/api/fits/{live_fit.id}/items.csv").content.decode()))
    )
    assert len(items) == live_fit.n_items and {"mu", "delta", "kappa", "advscore"} <= set(items[0])
    subjects = client.get(f"/api/fits/{live_fit.id}/subjects.csv")
    assert subjects["Content-Type"].startswith("text/csv")
    assert len(list(csv.DictReader(io.StringIO(subjects.content.decode())))) == live_fit.n_subjects
    body = client.get(f"/api/fits/{live_fit.id}/export.json").json()
    assert body["fit"]["summary"]["sensitivity"]["leave_out"][0]["bot"] == key(match, "b1")
    assert len(body["responses"]) == live_fit.n_responses
    assert client.get("/api/fits/999999/matrix.csv").status_code == 404


def test_matrix_export_round_trips(client: Client, live_fit: Fit, tmp_path: Path, match: Match) -> None:  # noqa: F811
    body = client.get(f"/api/fits/{live_fit.id}/matrix.csv").content.decode()
    header = body.splitlines()[0].split(",")
    alice, b1 = key(match, "alice").split(":")[1], key(match, "b1").split(":")[1]  # identities: "#<id>"
    assert header[0] == "item_id" and f"h_{alice}" in header and b1 in header
    assert not any(col.startswith("team") or col in ("Red", "Blue") for col in header)
    path = tmp_path / "matrix.csv"
    path.write_text(body)
    call_command("import_responses", str(path), "--format", "advscore", "--dataset", "roundtrip")

    def triples(qs):
        return set(qs.values_list("subject", "subject_kind", "item", "correct"))

    original = triples(Response.objects.filter(dataset="live").exclude(subject_kind="team"))
    assert triples(Response.objects.filter(dataset="roundtrip")) == original
    again = pipeline.fit_scope("roundtrip")
    live_adv = dict(ItemScore.objects.filter(fit=live_fit).values_list("item", "advscore"))
    assert set(ItemScore.objects.filter(fit=again).values_list("item", flat=True)) == set(live_adv)


def test_answer_lines_of_tossups_in_an_unended_match_stay_hidden(
    client: Client,
    live_fit: Fit,
    match: Match,  # noqa: F811
) -> None:
    """Once the fit's own match ended, its answers show; a second match that schedules tossup #1
    and is running (then in the lobby) hides that answer line from the anonymous analysis page,
    the subject page and every export; ``reveal_answers`` (a logged-in analyst) shows it."""
    Match.objects.filter(pk=match.pk).update(status=Match.Status.ENDED)
    first, second = (Tossup.objects.get(id=i) for i in sorted(match.tossup_ids)[:2])
    assert first.answer_line in client.get(f"/analysis/fit/{live_fit.id}/").content.decode()
    other = Match.objects.create(
        name="Now playing", preset="naqt", tossup_ids=[first.id], status=Match.Status.RUNNING
    )
    pages = [f"/analysis/fit/{live_fit.id}/", "/analysis/", subject_url(live_fit.id, key(match, "b1"))]
    exports = [
        f"/api/fits/{live_fit.id}/{t}" for t in ("export.json", "export.csv", "items.csv", "matrix.csv")
    ]
    for status in (Match.Status.RUNNING, Match.Status.LOBBY):
        Match.objects.filter(pk=other.pk).update(status=status)
        for url in pages + exports:
            response = client.get(url)
            assert response.status_code == 200, url
            body = response.content.decode()
            assert first.answer_line not in body, (status, url)
        page = client.get(pages[0]).content.decode()
        assert second.answer_line in page and "hidden until its match ends" in page
        rows = {r["tossup_id"]: r for r in client.get(pages[0]).context["items"]}
        assert rows[first.id]["answer_hidden"] and rows[first.id]["answer"] == ""
        assert not rows[second.id]["answer_hidden"]

    revealed = {
        r["tossup_id"]: r["answer"] for r in analysis.fit_context(live_fit, reveal_answers=True)["items"]
    }
    assert revealed[first.id] == first.answer_line
    subject = analysis.subject_context(live_fit, key(match, "b1"), reveal_answers=True)
    assert subject is not None and first.answer_line in {r["answer"] for r in subject["responses"]}

    Match.objects.filter(pk=other.pk).update(status=Match.Status.ENDED)
    assert first.answer_line in client.get(pages[0]).content.decode()


@pytest.fixture
def eager_celery():
    """Tasks queued with ``delay`` run at once in this process (no worker in these tests)."""
    from config.celery import app

    app.conf.task_always_eager = True
    yield
    app.conf.task_always_eager = False


def test_refit_now_needs_a_login_and_queues_a_fit_with_the_flags_as_they_are(
    client: Client,
    organiser: Client,
    live_fit: Fit,
    match: Match,  # noqa: F811
    eager_celery: None,
) -> None:
    page = f"/analysis/fit/{live_fit.id}/"
    assert 'id="refit"' not in client.get(page).content.decode()
    assert 'id="refit"' in organiser.get(page).content.decode()
    Flag.objects.create(
        tossup_id=match.tossup_ids[0], match=match, reporter="ed", role="editor", problem="ambiguity"
    )
    form = {"scope": "live", "fit": str(live_fit.id)}

    anonymous = client.post("/analysis/refit/", form)
    assert anonymous.status_code == 302 and "/login" in anonymous["Location"]
    assert Fit.objects.filter(dataset="live").count() == 1  # nothing queued

    strict = Client(enforce_csrf_checks=True)
    strict.force_login(get_user_model().objects.get(username="org"))
    assert strict.post("/analysis/refit/", form).status_code == 403  # no CSRF token

    response = organiser.post("/analysis/refit/", form)
    assert response.status_code == 302 and response["Location"] == f"{page}?refit=queued"
    new = Fit.objects.filter(dataset="live").exclude(pk=live_fit.pk).get()
    assert new.status == Fit.Status.DONE and new.summary["n_flagged"] == 1
    queued = organiser.get(response["Location"]).content.decode()
    assert 'data-queued="1"' in queued and "Refit queued" in queued
    assert organiser.get("/api/fits/progress?dataset=live").json() == {"running": [], "latest": new.id}
    assert organiser.post("/analysis/refit/", {"scope": "nothing"}).status_code == 400


def test_running_fits_show_their_progress(client: Client, live_fit: Fit) -> None:
    running = Fit.objects.create(
        dataset="live", snapshot_hash="r", settings_hash="s", progress=0.4, heartbeat_at=time.time()
    )
    html = client.get(f"/analysis/fit/{live_fit.id}/").content.decode()
    assert (
        f'<li data-fit="{running.id}">' in html
        and '<progress max="1" value="0.4">' in html
        and "40 %" in html
    )
    body = client.get("/api/fits/progress?dataset=live").json()
    assert body == {
        "running": [{"id": running.id, "dataset": "live", "progress": 0.4, "stale": False}],
        "latest": live_fit.id,
    }


def test_every_dash_says_why(client: Client, live_fit: Fit) -> None:
    # One bot left in the sensitivity table: τ is undefined, with the fit's own reason.
    ItemScore.objects.filter(fit=live_fit).update(delta=None, advscore=None)
    Fit.objects.filter(pk=live_fit.pk).update(
        summary={**live_fit.summary, "delta_reason": "H(1) is empty: no human has skill above mean + 1 sd"}
    )
    html = client.get(f"/analysis/fit/{live_fit.id}/").content.decode()
    dashes = html.count("—")
    explained = html.count('<abbr class="missing" title="')
    assert explained > 0 and dashes == explained + html.count("Hover a — ")
    assert 'title="H(1) is empty: no human has skill above mean + 1 sd">—' in html
    assert 'title="ADVSCORE needs δ: H(1) is empty' in html


def test_refit_now_puts_one_task_on_the_broker_or_says_it_cannot(
    organiser: Client,
    live_fit: Fit,
    broker: dict,  # noqa: F811
) -> None:
    form = {"scope": "live", "fit": str(live_fit.id)}
    assert organiser.post("/analysis/refit/", form).status_code == 302
    assert queued(broker["url"]) == 1  # on the irt queue, for the worker
    launcher.stop(broker["proc"])
    down = organiser.post("/analysis/refit/", form)
    assert down.status_code == 503 and "nothing was queued" in down.content.decode()


def test_a_scope_that_gained_responses_since_its_fit_says_a_refit_includes_them(
    client: Client, live_fit: Fit
) -> None:
    page = f"/analysis/fit/{live_fit.id}/"
    assert 'id="scope-changed"' not in client.get(page).content.decode()  # fitted on all there is
    Fit.objects.filter(pk=live_fit.pk).update(n_responses=live_fit.n_responses - 1)  # as if one came after
    html = client.get(page).content.decode()
    now = Response.objects.filter(match__isnull=False).count()
    assert f"holds {now} responses now ({live_fit.n_responses - 1} when fitted)" in html
