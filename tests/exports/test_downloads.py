"""Every export is a download: match exports for organisers or the match's moderator token (they carry
guesses and answer lines), never for players; the event file for organisers; links on the pages."""

from __future__ import annotations

import io
import json
import uuid
import zipfile

import pytest
from django.contrib.auth import get_user_model
from django.test import Client
from django.urls import reverse

from competition.models import Match


@pytest.fixture(autouse=True)
def private_cache(settings) -> None:  # the pages' rate limits count per test-client address
    settings.CACHES = {
        "default": {"BACKEND": "django.core.cache.backends.locmem.LocMemCache", "LOCATION": uuid.uuid4().hex}
    }


@pytest.fixture
def organiser(db) -> Client:
    client = Client()
    client.force_login(get_user_model().objects.create_user("org", password="pw-for-tests-only"))
    return client


def url(match: Match, fmt: str) -> str:
    return reverse("frontend:match_export", args=[match.join_code, fmt])


@pytest.mark.parametrize(
    ("fmt", "content_type", "suffix"),
    [("qbj", "application/vnd.quizbowl.qbj+json", ".qbj"), ("cycles", "application/x-ndjson", "-cycles.jsonl"),
     ("runner", "application/zip", "-runner.zip")],
)  # fmt: skip
def test_a_moderator_downloads_a_running_match_and_a_player_cannot(
    played: Match, fmt, content_type, suffix
) -> None:
    Match.objects.filter(pk=played.pk).update(
        status=Match.Status.RUNNING
    )  # answers must not leak before the end
    player = Client()
    assert player.get(url(played, fmt)).status_code == 403
    assert player.get(url(played, fmt), headers={"X-Moderator-Token": "wrong"}).status_code == 403
    seat = played.players.get(name="alice")
    assert player.get(url(played, fmt), headers={"X-Moderator-Token": seat.token}).status_code == 403
    got = player.get(url(played, fmt), headers={"X-Moderator-Token": played.moderator_token})
    assert got.status_code == 200 and got["Content-Type"] == content_type
    assert got["Content-Disposition"] == f'attachment; filename="{played.join_code}{suffix}"'
    if fmt == "runner":
        assert zipfile.ZipFile(io.BytesIO(got.content)).namelist()
    elif fmt == "qbj":
        assert json.loads(got.content)["objects"][-1]["type"] == "Tournament"


def test_the_dashboard_links_its_exports_and_its_session_may_download(played: Match) -> None:
    moderator = Client()
    page = moderator.get(f"/moderator/{played.join_code}/?token={played.moderator_token}")
    assert page.status_code == 200
    for fmt in ("qbj", "cycles", "runner"):
        assert url(played, fmt) in page.content.decode()
        assert moderator.get(url(played, fmt)).status_code == 200  # the session remembers the token


def test_event_export_is_for_organisers(played: Match, organiser: Client) -> None:
    event = reverse("frontend:event_export")
    assert Client().get(event).status_code == 403
    got = organiser.get(event)
    assert got.status_code == 200 and got["Content-Disposition"] == 'attachment; filename="event.qbj"'
    assert [o["type"] for o in json.loads(got.content)["objects"]].count("Match") == 1
    assert event in organiser.get(reverse("frontend:moderator")).content.decode()
    assert organiser.get(url(played, "nope")).status_code == 404
    assert organiser.get(reverse("frontend:match_export", args=["NOPE42", "qbj"])).status_code == 404
