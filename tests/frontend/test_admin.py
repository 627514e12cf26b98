"""The organisers' admin (/admin/): every registered model's list and change pages render, matches
and logs are read-only, and tossups round-trip through the admin's bulk export and import."""

from __future__ import annotations

import csv
import io
import json
import re

import pytest
from django.contrib import admin
from django.contrib.auth import get_user_model
from django.contrib.auth.models import Group
from django.core.management import call_command
from django.test import Client
from django.urls import reverse
from import_export.forms import SelectableFieldsExportForm

from competition import services
from competition.models import (
    Bonus,
    BonusPartResult,
    Buzz,
    DeskEntry,
    Draft,
    Flag,
    Match,
    MatchEvent,
    MediaFile,
    Outbox,
    Packet,
    QuestionSet,
    Submission,
    Tossup,
    Tournament,
    TournamentRoom,
    media_path,
)
from irt.models import Fit, ItemScore, Response, SubjectSkill

pytestmark = pytest.mark.django_db


@pytest.fixture
def superuser() -> Client:
    user = get_user_model().objects.create_superuser("boss", password="pw-for-tests-only")
    client = Client()
    client.force_login(user)
    return client


@pytest.fixture
def packet() -> Packet:
    qs = QuestionSet.objects.create(name="Spring Open", year=2025, source="demo")
    packet = Packet.objects.create(question_set=qs, name="Round 1")
    for n in (1, 2, 3):
        Tossup.objects.create(
            packet=packet,
            number=n,
            question=f"This island, clue {n}, ... For 10 points, name it.",
            answer_line=f"<b><u>Island{n}</u></b> [accept Isle{n}]",
            category="Geography",
        )
    Bonus.objects.create(
        packet=packet,
        number=1,
        leadin="For 10 points each:",
        parts=[{"text": "Name this sea.", "answer_line": "<b>Baltic</b>", "value": 10}],
    )
    return packet


@pytest.fixture
def every_record(packet: Packet) -> Match:
    """One row of every model the admin shows: a match with its teams, seats and log, a buzz, a bonus
    result, a flag, an outbox row, a fit with its tables and a response."""
    tossups = list(packet.tossups.order_by("number"))
    match = services.create_match(
        name="Friday",
        tossup_ids=[t.pk for t in tossups],
        bonus_ids=[b.pk for b in packet.bonuses.all()],
        preset="naqt",
        teams=["Red", "Blue"],
        bots=[{"name": "tfidf", "weight_class": "light"}],
    )
    services.join_match(code=match.join_code, name="Ann", team="Red")
    player = match.players.get(name="Ann")
    Buzz.objects.create(
        match=match,
        tossup=tossups[0],
        player=player,
        team=player.team,
        kind="human",
        token_index=4,
        token_count=12,
        guess="Island1",
        received_at=1.0,
        seq=1,
    )
    BonusPartResult.objects.create(
        match=match, bonus=packet.bonuses.get(), team=player.team, part=0, guess="Baltic", seq=2
    )
    Flag.objects.create(tossup=tossups[0], match=match, reporter="ed", role="editor", problem="ambiguity")
    Outbox.objects.create(topic="fit_after_match", match=match)
    fit = Fit.objects.create(dataset="live", snapshot_hash="a" * 64, settings_hash="b" * 64, status="done")
    SubjectSkill.objects.create(fit=fit, subject="human:Ann", kind="human", skill=0.5, n_responses=3)
    ItemScore.objects.create(
        fit=fit,
        item=f"tossup:{tossups[0].pk}",
        tossup=tossups[0],
        difficulty=0.1,
        discriminability=1.2,
        n_responses=3,
    )
    Response.objects.create(
        dataset="live",
        source=f"match:{match.pk}",
        subject="human:Ann",
        subject_kind="human",
        item=f"tossup:{tossups[0].pk}",
        tossup=tossups[0],
        match=match,
        correct=True,
        position=4,
    )
    Group.objects.create(name="organisers")
    t = Tournament.objects.create(name="Saturday")
    room = TournamentRoom.objects.create(tournament=t, name="Room 1")
    DeskEntry.objects.create(
        tournament=t, room=room, action=DeskEntry.Action.HELP_RAISED, actor_label="moderator"
    )
    writer = get_user_model().objects.create_user("wanda")
    draft = Draft.objects.create(writer=writer, title="x", answer_line="Seine", text="This river.")
    Submission.objects.create(draft=draft, writer=writer)
    MediaFile.objects.create(sha256="d" * 64, mime="image/png", size=3, file=media_path("d" * 64))
    return match


def test_every_registered_model_lists_and_shows_one_row(superuser: Client, every_record: Match) -> None:
    expected = {
        Tossup,
        Bonus,
        Packet,
        QuestionSet,
        Match,
        MatchEvent,
        Buzz,
        Flag,
        Outbox,
        Fit,
        SubjectSkill,
        ItemScore,
        Response,
        MediaFile,
        Tournament,
        TournamentRoom,
        DeskEntry,
        Submission,
    }
    assert expected <= set(admin.site._registry), "a model the organisers need is not in the admin"
    for model, model_admin in admin.site._registry.items():
        prefix = f"admin:{model._meta.app_label}_{model._meta.model_name}"
        listing = superuser.get(reverse(f"{prefix}_changelist"))
        assert listing.status_code == 200, f"{model.__name__} list: {listing.status_code}"
        obj = model._default_manager.first()
        assert obj is not None, f"create one {model.__name__} in every_record"
        page = superuser.get(reverse(f"{prefix}_change", args=[obj.pk]))
        assert page.status_code == 200, f"{model.__name__} change page: {page.status_code}"
        if model_admin.search_fields:
            found = superuser.get(reverse(f"{prefix}_changelist"), {"q": "x"})
            assert found.status_code == 200, f"{model.__name__} search: {found.status_code}"


def test_a_match_is_shown_read_only_with_its_logs(superuser: Client, every_record: Match) -> None:
    match = every_record
    match.refresh_from_db()
    url = reverse("admin:competition_match_change", args=[match.pk])
    page = superuser.get(url).content.decode()
    assert match.join_code in page and "Red" in page and "Ann" in page
    assert 'name="_save"' not in page, "a match must not be editable in the admin"
    assert match.moderator_token not in page
    events = reverse("admin:competition_matchevent_changelist") + f"?match__id__exact={match.pk}"
    assert events.replace("&", "&amp;") in page or events in page
    before = (match.name, match.state, match.spec)
    assert superuser.post(url, {"name": "Renamed"}).status_code == 403
    match.refresh_from_db()
    assert (match.name, match.state, match.spec) == before
    seat = match.players.get(name="Ann")
    assert (
        seat.token
        not in superuser.get(reverse("admin:competition_player_change", args=[seat.pk])).content.decode()
    )
    event = MatchEvent.objects.filter(match=match).first()
    assert event is not None
    assert (
        superuser.post(reverse("admin:competition_matchevent_change", args=[event.pk]), {}).status_code == 403
    )


def test_bots_filter_and_question_search(superuser: Client, every_record: Match) -> None:
    bots = superuser.get(reverse("admin:competition_player_changelist"), {"kind__exact": "bot"})
    assert "tfidf" in bots.content.decode() and "Ann" not in bots.content.decode()
    found = superuser.get(reverse("admin:competition_tossup_changelist"), {"q": "Island2"}).content.decode()
    assert "Island2" in found and "Island3" not in found
    by_set = superuser.get(reverse("admin:competition_tossup_changelist"), {"q": "Spring Open"})
    assert "3 tossups" in by_set.content.decode()


def test_deleting_a_finished_test_match_but_not_a_running_one(superuser: Client, every_record: Match) -> None:
    match = every_record
    url = reverse("admin:competition_match_delete", args=[match.pk])
    Match.objects.filter(pk=match.pk).update(status=Match.Status.RUNNING)
    assert superuser.post(url, {"post": "yes"}).status_code == 403
    Match.objects.filter(pk=match.pk).update(status=Match.Status.ENDED)
    assert superuser.post(url, {"post": "yes"}).status_code == 302
    assert not Match.objects.filter(pk=match.pk).exists()


# ---------------------------------------------------------------- bulk import/export


def format_index(kind: str, title: str) -> str:
    model_admin = admin.site._registry[Tossup]
    formats = model_admin.get_export_formats() if kind == "export" else model_admin.get_import_formats()
    return str([f().get_title() for f in formats].index(title))


def export_csv(client: Client, model: type = Tossup) -> list[dict[str, str]]:
    """Every column of ``model``'s admin export, as CSV rows."""
    resource = admin.site._registry[model].resource_classes[0]
    form = SelectableFieldsExportForm(admin.site._registry[model].get_export_formats(), [resource])
    data = {name: "on" for name in form.fields if name.startswith(f"{resource.__name__.lower()}_")}
    data.update(format=format_index("export", "csv"), resource="0")
    response = client.post(reverse(f"admin:competition_{model._meta.model_name}_export"), data)
    assert response.status_code == 200, response.content[:2000]
    assert response["Content-Type"].startswith("text/csv")
    return list(csv.DictReader(io.StringIO(response.content.decode("utf-8-sig"))))


def import_csv(client: Client, rows: list[dict[str, str]], model: type = Tossup):
    """Step 1 of the admin import (dry run); returns the response."""
    out = io.StringIO()
    writer = csv.DictWriter(out, fieldnames=list(rows[0]))
    writer.writeheader()
    writer.writerows(rows)
    upload = io.BytesIO(out.getvalue().encode())
    upload.name = "questions.csv"
    return client.post(
        reverse(f"admin:competition_{model._meta.model_name}_import"),
        {"import_file": upload, "format": format_index("import", "csv"), "resource": "0"},
    )


def confirm(client: Client, dry_run, model: type = Tossup):
    """Step 2: confirm the import the dry run offered."""
    page = dry_run.content.decode()
    hidden = dict(
        re.findall(r'name="(import_file_name|original_file_name|format|resource)"[^>]*value="([^"]*)"', page)
    )
    assert set(hidden) >= {"import_file_name", "original_file_name", "format"}, page[:3000]
    return client.post(reverse(f"admin:competition_{model._meta.model_name}_process_import"), hidden)


def test_tossups_round_trip_through_the_admin(superuser: Client, packet: Packet) -> None:
    rows = export_csv(superuser)
    assert [r["number"] for r in rows] == ["1", "2", "3"]
    assert {r["set"] for r in rows} == {"Spring Open"} and {r["packet"] for r in rows} == {"Round 1"}
    assert rows[1]["answer_line"] == "<b><u>Island2</u></b> [accept Isle2]"
    ids = dict(Tossup.objects.values_list("number", "id"))

    rows[1]["answer_line"] = "<b><u>Island Two</u></b>"  # fix a typo
    rows.append(dict(rows[0], set="Autumn Open", packet="Final", number="1"))
    dry_run = import_csv(superuser, rows)
    assert dry_run.status_code == 200
    assert Tossup.objects.get(number=2).answer_line == "<b><u>Island2</u></b> [accept Isle2]"  # not yet
    done = confirm(superuser, dry_run)
    assert done.status_code == 302

    fixed = Tossup.objects.get(packet=packet, number=2)
    assert fixed.answer_line == "<b><u>Island Two</u></b>" and fixed.pk == ids[2]
    added = Tossup.objects.get(packet__question_set__name="Autumn Open", packet__name="Final", number=1)
    assert added.question == Tossup.objects.get(packet=packet, number=1).question
    assert QuestionSet.objects.get(name="Autumn Open").source == "admin"
    again = export_csv(superuser)
    assert len(again) == 4 and again[1]["answer_line"] == "<b><u>Island Two</u></b>"


def test_a_bad_row_imports_nothing(superuser: Client, packet: Packet) -> None:
    rows = export_csv(superuser)
    rows[0]["answer_line"] = "<b><u>Changed</u></b>"
    rows.append(dict(rows[1], set="", number="9"))  # no set
    rows.append(dict(rows[1], number="10", answer_line=""))  # empty answer line
    before = (Tossup.objects.count(), QuestionSet.objects.count(), Packet.objects.count())
    response = import_csv(superuser, rows)
    page = response.content.decode()
    assert "every row needs a &#x27;set&#x27; and a &#x27;packet&#x27; name" in page
    assert "answer_line" in page and "import_file_name" not in page  # no confirm step offered
    assert (Tossup.objects.count(), QuestionSet.objects.count(), Packet.objects.count()) == before
    assert Tossup.objects.get(packet=packet, number=1).answer_line == "<b><u>Island1</u></b> [accept Isle1]"


def test_admin_needs_staff_login(packet: Packet) -> None:
    response = Client().get(reverse("admin:competition_tossup_changelist"))
    assert response.status_code == 302 and "/admin/login/" in response["Location"]


def test_an_organiser_account_edits_questions_but_not_matches(every_record: Match) -> None:
    call_command("create_organiser", "ann", stdout=io.StringIO())
    client = Client()
    client.force_login(get_user_model().objects.get(username="ann"))
    assert client.get(reverse("admin:competition_tossup_changelist")).status_code == 200
    assert client.get(reverse("admin:competition_tossup_import")).status_code == 200
    tossup = Tossup.objects.first()
    assert tossup is not None
    assert client.get(reverse("admin:competition_tossup_change", args=[tossup.pk])).status_code == 200
    match_page = client.get(reverse("admin:competition_match_change", args=[every_record.pk]))
    assert match_page.status_code == 200 and 'name="_save"' not in match_page.content.decode()
    assert client.get(reverse("admin:irt_fit_changelist")).status_code == 200
    assert client.get(reverse("admin:auth_user_changelist")).status_code == 403


def test_bonuses_round_trip_and_bad_parts_are_refused(superuser: Client, packet: Packet) -> None:
    rows = export_csv(superuser, Bonus)
    assert len(rows) == 1 and json.loads(rows[0]["parts"])[0]["answer_line"] == "<b>Baltic</b>"
    parts = json.loads(rows[0]["parts"])
    parts[0]["answer_line"] = "<b>Baltic</b> [accept Baltic Sea]"
    rows[0]["parts"] = json.dumps(parts)
    assert confirm(superuser, import_csv(superuser, rows, Bonus), Bonus).status_code == 302
    bonus = Bonus.objects.get()
    assert bonus.parts[0]["answer_line"] == "<b>Baltic</b> [accept Baltic Sea]"

    rows[0]["parts"] = json.dumps([{"text": "Name this sea.", "value": 10}])
    page = import_csv(superuser, rows, Bonus).content.decode()
    assert "part 1 needs" in page and "import_file_name" not in page
    bonus.refresh_from_db()
    assert bonus.parts[0]["answer_line"] == "<b>Baltic</b> [accept Baltic Sea]"


def test_renaming_a_team_and_a_seat_goes_through_the_one_door(superuser: Client, every_record: Match) -> None:
    match = every_record
    red = match.teams.get(name="Red")
    ann = match.players.get(name="Ann")
    page = reverse("admin:competition_team_change", args=[red.pk])
    assert superuser.post(page, {"name": "  Red Foxes "}).status_code == 302
    page = reverse("admin:competition_player_change", args=[ann.pk])
    assert superuser.post(page, {"name": "Anne"}).status_code == 302
    match.refresh_from_db()
    assert match.teams.get(pk=red.pk).name == "Red Foxes" and match.players.get(pk=ann.pk).name == "Anne"
    # The spec (what every snapshot is built from) and the log agree with the rows.
    assert [t["name"] for t in match.spec["teams"] if t["team_id"] == red.pk] == ["Red Foxes"]
    assert [p["name"] for p in match.spec["players"] if p["player_id"] == ann.pk] == ["Anne"]
    renamed = [(e.payload["team_id"], e.payload["player_id"], e.payload["name"], e.actor)
               for e in MatchEvent.objects.filter(match=match, event="renamed").order_by("seq")]  # fmt: skip
    assert renamed == [(red.pk, None, "Red Foxes", "organiser"), (None, ann.pk, "Anne", "organiser")]
    # An empty name is refused by the form: nothing changes.
    response = superuser.post(reverse("admin:competition_team_change", args=[red.pk]), {"name": " "})
    assert response.status_code == 200 and match.teams.get(pk=red.pk).name == "Red Foxes"
    assert MatchEvent.objects.filter(match=match, event="renamed").count() == 2
