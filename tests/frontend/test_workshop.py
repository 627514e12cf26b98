"""The workshop's pages and API (``buzzer.workshop_views``) with a bot trained in the test: writers
and organisers, a writer-only account refused every organiser power, drafts one writer cannot open of
another, autosave, versions with each bot's buzz, and the bad input (an answer line that does not
parse, a 20,000-word paste, HTML in the text). The organiser's LLM endpoints (stand-ins of
``tests.support.fake_llm``): asked in a request of their own only when enabled for writing, with
their cost, their failures on their own card and their key nowhere in a response."""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path

import pytest
from django.contrib.auth import get_user_model
from django.contrib.auth.models import Group
from django.test import Client

from buzzer import workshop as workshop_bots
from competition.models import Draft, DraftVersion
from tests.bots.workshop_fixture import (
    ANSWER_LINE,
    GIVEAWAY,
    LLM_COMPLETION_TOKENS,
    VAGUE,
    curie_llm,
    fixture_bot,
)
from tests.support.factories import make_match
from tests.support.fake_llm import FakeLLM, fake_llm, prompt_of

KEY = "sk-workshop-0123456789-never-in-a-response"


@pytest.fixture
def bots(monkeypatch) -> None:
    """The fixture bot as this server's only bot (no model file is loaded)."""
    monkeypatch.setitem(workshop_bots._state, "bots", [fixture_bot()])
    monkeypatch.setitem(workshop_bots._state, "problems", ["Wikipedia bot: not in this test"])


def writer_client(name: str) -> tuple[Client, object]:
    user = get_user_model().objects.create_user(name, password="pw-for-tests-only")
    user.groups.add(Group.objects.get_or_create(name="writers")[0])
    client = Client()
    client.force_login(user)
    return client, user


def post(client: Client, url: str, body: dict) -> object:
    return client.post(url, json.dumps(body), content_type="application/json")


@pytest.mark.django_db
def test_a_writer_only_account_has_no_organiser_power(client) -> None:
    writer, _ = writer_client("wendy")
    match = make_match()
    assert writer.get("/workshop/").status_code == 200
    assert writer.get("/moderator/").status_code == 403
    assert writer.get("/moderator/upload/").status_code == 403
    assert writer.get("/workshop/writers/").status_code == 403
    assert writer.get(f"/moderator/{match.join_code}/").status_code == 403  # not the login page: a loop
    assert writer.get(f"/api/match/{match.join_code}/bots").status_code == 403
    assert writer.get("/api/event.qbj").status_code == 403
    assert writer.post("/analysis/refit/").status_code == 403


@pytest.mark.django_db
def test_organisers_invite_writers_and_are_writers_too(organiser) -> None:
    page = organiser.post("/workshop/writers/", {"username": "newwriter"})
    assert page.status_code == 200 and b"newwriter" in page.content and b"shown once" in page.content
    user = get_user_model().objects.get(username="newwriter")
    assert user.groups.filter(name="writers").exists() and not user.is_staff
    assert organiser.post("/workshop/writers/", {"username": "newwriter"}).status_code == 400  # taken
    assert organiser.get("/moderator/").status_code == 200
    made = organiser.post("/workshop/", {"title": "Curie"})
    assert made.status_code == 302 and organiser.get(made["Location"]).status_code == 200


@pytest.mark.django_db
def test_no_login_goes_to_the_login_page(client) -> None:
    page = client.get("/workshop/")
    assert page.status_code == 302 and "login" in page["Location"]
    draft = Draft.objects.create(writer=get_user_model().objects.create_user("x"))
    assert post(client, f"/workshop/api/drafts/{draft.pk}", {"text": "x"}).status_code == 403


@pytest.mark.django_db
def test_a_writer_cannot_open_or_change_another_writers_draft(bots) -> None:
    alice, alice_user = writer_client("alice")
    bob, _ = writer_client("bob")
    draft = Draft.objects.create(writer=alice_user, text="Alice's secret clue.", answer_line="Curie")
    base = f"/workshop/api/drafts/{draft.pk}"
    assert bob.get(f"/workshop/draft/{draft.pk}/").status_code == 404
    assert post(bob, base, {"text": "overwritten"}).status_code == 404
    assert post(bob, f"{base}/analyse", {"text": "x", "answer_line": "Curie"}).status_code == 404
    assert bob.get(f"{base}/versions").status_code == 404
    assert post(bob, f"{base}/versions", {}).status_code == 404
    assert b"secret" not in bob.get("/workshop/").content
    draft.refresh_from_db()
    assert draft.text == "Alice's secret clue." and not draft.versions.exists()
    assert b"secret" in alice.get(f"/workshop/draft/{draft.pk}/").content


@pytest.mark.django_db
def test_autosave_analysis_and_versions_with_the_buzz_shift(bots) -> None:
    writer, user = writer_client("wanda")
    draft = Draft.objects.create(writer=user)
    base = f"/workshop/api/drafts/{draft.pk}"
    saved = post(writer, base, {"answer_line": ANSWER_LINE, "category": "Science", "text": GIVEAWAY + VAGUE})
    assert saved.status_code == 200 and saved.json()["text"] == GIVEAWAY + VAGUE
    analysis = post(
        writer,
        f"{base}/analyse",
        {"text": GIVEAWAY + VAGUE, "answer_line": ANSWER_LINE, "category": "Science"},
    )
    body = analysis.json()
    assert analysis.status_code == 200 and body["problems"] == ["Wikipedia bot: not in this test"]
    (bot,) = body["bots"]
    assert bot["buzz"]["correct"] and body["target"]["state"] == "giveaway_early"
    first = post(writer, f"{base}/versions", {})
    assert first.status_code == 201
    post(writer, base, {"text": VAGUE + GIVEAWAY})
    second = post(writer, f"{base}/versions", {}).json()["versions"]
    before, after = (v["predictions"]["tfidf"]["buzz_index"] for v in second)
    assert after > before
    assert second[1]["shift"] == {"tfidf": f"buzzed {after - before} words later than the last version"}
    assert DraftVersion.objects.filter(draft=draft).count() == 2


@pytest.mark.django_db
def test_bad_input_gets_a_clear_error_and_loses_nothing(bots) -> None:
    writer, user = writer_client("wes")
    draft = Draft.objects.create(writer=user, text="kept", answer_line="Curie")
    base = f"/workshop/api/drafts/{draft.pk}"
    line = post(writer, "/workshop/api/answer-line", {"answer_line": "Curie [accept Marie"}).json()
    assert line["errors"] == ["unclosed '[' opened at character 7"]
    bad = post(writer, f"{base}/analyse", {"text": VAGUE, "answer_line": "[accept Curie]"})
    assert bad.status_code == 400 and bad.json()["code"] == "bad_answer_line"
    paste = "word " * 20_000
    saved = post(writer, base, {"text": paste})
    assert saved.status_code == 200 and len(Draft.objects.get(pk=draft.pk).text) == len(paste)  # kept
    too_long = post(writer, f"{base}/analyse", {"text": paste, "answer_line": "Curie"})
    assert too_long.status_code == 413 and "20,000 words" in too_long.json()["message"]
    huge = post(writer, base, {"text": "x" * 300_001})
    assert huge.status_code == 413 and huge.json()["code"] == "text_too_long"
    assert len(Draft.objects.get(pk=draft.pk).text) == len(paste)  # nothing changed
    assert post(writer, base, {"text": 5}).status_code == 400
    html = '<script>alert("x")</script> This scientist discovered polonium.'
    post(writer, base, {"text": html})
    page = writer.get(f"/workshop/draft/{draft.pk}/").content.decode()
    assert '<script>alert("x")</script>' not in page and "&lt;script&gt;" in page
    analysis = post(writer, f"{base}/analyse", {"text": html, "answer_line": "Curie"}).json()
    assert analysis["words"][0] == '<script>alert("x")</script>'  # data, shown as text by the page


@pytest.mark.django_db
def test_the_analysis_waits_for_the_bots_to_load(monkeypatch) -> None:
    writer, user = writer_client("wait")
    draft = Draft.objects.create(writer=user)
    monkeypatch.setattr(workshop_bots, "bots_now", lambda wait=False: None)
    loading = post(writer, f"/workshop/api/drafts/{draft.pk}/analyse", {"text": "x", "answer_line": "Curie"})
    assert loading.status_code == 202 and loading.json()["loading"] is True


def write_endpoints(settings, path: Path, entries: list[dict]) -> None:
    path.write_text(json.dumps(entries))
    settings.BOT_LLM_ENDPOINTS = str(path)


@pytest.fixture
def llms(settings, tmp_path: Path, monkeypatch) -> Iterator[tuple[FakeLLM, FakeLLM]]:
    """Three endpoints: "Writing LLM" (enabled for writing, 3 prefixes, its key in ``FAKE_LLM_KEY``)
    and "Down LLM" (enabled, HTTP 500) on one stand-in; "Match LLM" (not enabled) on another."""
    monkeypatch.setenv("FAKE_LLM_KEY", KEY)
    with fake_llm(curie_llm) as writing, fake_llm(curie_llm) as match_only:
        write_endpoints(
            settings,
            tmp_path / "llm.json",
            [
                {"name": "Writing LLM", "url": writing.url, "model": "curie", "key_env": "FAKE_LLM_KEY",
                 "workshop": True, "workshop_prefixes": 3, "cost": 0.001, "threshold": 0.8, "min_tokens": 1,
                 "price_in": 2, "price_out": 10},
                {"name": "Down LLM", "url": writing.url, "model": "error", "workshop": True},
                {"name": "Match LLM", "url": match_only.url, "model": "curie", "key_env": "FAKE_LLM_KEY"},
            ],
        )  # fmt: skip
        yield writing, match_only


@pytest.mark.django_db
def test_llm_endpoints_enabled_for_writing_are_asked_after_the_built_in_bots(bots, llms) -> None:
    writing, match_only = llms
    writer, user = writer_client("lena")
    draft = Draft.objects.create(writer=user, answer_line=ANSWER_LINE, text=GIVEAWAY + VAGUE)
    fields = {"text": GIVEAWAY + VAGUE, "answer_line": ANSWER_LINE, "category": "Science"}
    base = f"/workshop/api/drafts/{draft.pk}"

    local = post(writer, f"{base}/analyse", fields)
    assert local.status_code == 200 and [b["name"] for b in local.json()["bots"]] == ["tfidf"]
    assert local.json()["llm"] == [
        {"name": "llm:Writing LLM", "label": "Writing LLM", "max_prefixes": 3, "cost_per_prefix": 0.001},
        {"name": "llm:Down LLM", "label": "Down LLM", "max_prefixes": 6, "cost_per_prefix": 0.0},
    ]
    assert writing.requests == []  # the built-in bots' answer waits for no LLM

    asked = post(writer, f"{base}/analyse", {**fields, "llm": True})
    assert asked.status_code == 200
    sure, down = asked.json()["bots"]
    assert sure["name"] == "llm:Writing LLM" and sure["buzz"]["correct"]
    assert sure["buzz"]["index"] == len(GIVEAWAY.split()) - 1  # the end of the giveaway sentence
    prompts = [prompt_of(r["body"]) for r in writing.requests if r["body"]["model"] == "curie"]
    assert len(prompts) == 3 and sure["llm"]["requests"] == 3
    tokens = sum(len(p.split()) for p in prompts)
    assert sure["llm"]["cost"] == pytest.approx((tokens * 2 + 3 * LLM_COMPLETION_TOKENS * 10) / 1e6)
    assert down["buzz"] is None and down["llm"]["error"].startswith("HTTP 500 from the endpoint")
    assert match_only.requests == []  # not enabled for writing: never asked
    assert {r["auth"] for r in writing.requests if r["body"]["model"] == "curie"} == {f"Bearer {KEY}"}
    assert {r["auth"] for r in writing.requests if r["body"]["model"] == "error"} == {None}  # no key_env

    # A saved version keeps the LLM's buzz too; the endpoint that failed is left out, not "no buzz".
    saved = post(writer, f"{base}/versions", {})
    assert saved.status_code == 201
    predictions = saved.json()["versions"][0]["predictions"]
    assert set(predictions) == {"tfidf", "llm:Writing LLM"} and predictions["llm:Writing LLM"]["correct"]

    page = writer.get(f"/workshop/draft/{draft.pk}/").content.decode()
    for text in (page, local.content.decode(), asked.content.decode(), saved.content.decode()):
        assert KEY not in text and "FAKE_LLM_KEY" not in text and writing.url not in text
    assert post(writer, f"{base}/analyse", {**fields, "llm": "yes"}).status_code == 400


@pytest.mark.django_db
def test_a_bad_workshop_field_is_a_problem_line_and_breaks_nothing_else(bots, settings, tmp_path) -> None:
    writer, user = writer_client("lars")
    draft = Draft.objects.create(writer=user)
    write_endpoints(
        settings,
        tmp_path / "llm.json",
        [
            {"name": "Typo", "url": "http://127.0.0.1:9/v1", "model": "m", "workshop": "yes"},
            {"name": "Good", "url": "http://127.0.0.1:9/v1", "model": "m", "workshop": True},
        ],
    )
    fields = {"text": GIVEAWAY + VAGUE, "answer_line": ANSWER_LINE}
    body = post(writer, f"/workshop/api/drafts/{draft.pk}/analyse", fields).json()
    assert body["bots"][0]["buzz"]["correct"]  # the built-in bot is unaffected
    assert any("Typo: workshop must be true or false" in p for p in body["problems"]), body["problems"]
    assert [e["name"] for e in body["llm"]] == ["llm:Good"]
    write_endpoints(settings, tmp_path / "llm.json", [{"name": "Match", "url": "http://x/v1", "model": "m"}])
    body = post(writer, f"/workshop/api/drafts/{draft.pk}/analyse", fields).json()
    assert body["llm"] == [] and any("none is enabled for writing" in p for p in body["problems"])
