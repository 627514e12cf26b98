"""The organisers' question upload (/moderator/upload/): the same import as ``manage.py
import_questions``, the same line-numbered errors, nothing written from a bad file."""

from __future__ import annotations

import gzip
import io
import json
from pathlib import Path

import pytest
from django.core.files.uploadedfile import SimpleUploadedFile
from django.core.management import call_command
from django.core.management.base import CommandError
from django.test import Client
from django.urls import reverse

from competition.importers import DEMO_PACKET
from competition.models import Bonus, Packet, QuestionSet, Tossup

pytestmark = pytest.mark.django_db

URL = "/moderator/upload/"


def counts() -> tuple[int, int, int, int]:
    return QuestionSet.objects.count(), Packet.objects.count(), Tossup.objects.count(), Bonus.objects.count()


def tossup(number: int, answer: str = "<b><u>Zanzibar</u></b>") -> dict:
    return {
        "type": "tossup",
        "set": "2024 Club Open",
        "year": 2024,
        "packet": "Round 1",
        "number": number,
        "question": f"Clue {number} about an island. For 10 points, name it.",
        "answer": answer,
        "category": "Geography",
    }


def jsonl(rows: list) -> bytes:
    return "".join((r if isinstance(r, str) else json.dumps(r)) + "\n" for r in rows).encode()


def upload(client: Client, name: str, content: bytes, **fields: str):
    return client.post(URL, {"file": SimpleUploadedFile(name, content), "fmt": "auto", **fields})


def test_upload_needs_an_organiser_login() -> None:
    anonymous = Client()
    assert anonymous.get(URL).status_code == 302
    response = upload(anonymous, "packet.jsonl", jsonl([tossup(1)]))
    assert response.status_code == 302 and "/accounts/login/" in response["Location"]
    assert counts() == (0, 0, 0, 0)


def test_the_moderator_page_links_to_the_upload(organiser: Client) -> None:
    page = organiser.get(reverse("frontend:moderator")).content.decode()
    assert f'href="{URL}"' in page


def test_a_bad_line_is_refused_with_the_commands_error_and_nothing_written(
    organiser: Client, tmp_path: Path
) -> None:
    upload(organiser, "good.jsonl", jsonl([tossup(1)]))
    before = counts()
    assert before == (1, 1, 1, 0)
    # Line 1 is new, line 2 changes a stored tossup, line 3 is not JSON: none of it may land.
    bad = jsonl([tossup(2), tossup(1, answer="<b><u>Pemba</u></b>"), '{"type": "tossup", "set": '])
    response = upload(organiser, "bad.jsonl", bad)
    assert response.status_code == 400
    page = response.content.decode()
    assert "nothing imported: bad.jsonl:3: invalid JSON" in page
    assert counts() == before
    assert Tossup.objects.get().answer_line == "<b><u>Zanzibar</u></b>"

    # The command says the same about the same file, naming its own path.
    path = tmp_path / "bad.jsonl"
    path.write_bytes(bad)
    with pytest.raises(CommandError) as refused:
        call_command("import_questions", str(path))
    message = str(refused.value).replace(str(path), "bad.jsonl")
    assert message in page.replace("&#x27;", "'").replace("&quot;", '"')


def test_an_empty_answer_names_its_line_unless_skipped(organiser: Client) -> None:
    rows = jsonl([tossup(1), tossup(2, answer="  ")])
    refused = upload(organiser, "packet.jsonl", rows)
    assert refused.status_code == 400 and "packet.jsonl:2:" in refused.content.decode()
    assert counts() == (0, 0, 0, 0)
    skipped = upload(organiser, "packet.jsonl", rows, skip_invalid="on")
    assert skipped.status_code == 200
    assert "skipped packet.jsonl:2:" in skipped.content.decode()
    assert counts() == (1, 1, 1, 0)


def test_a_good_file_imports_what_the_command_imports(organiser: Client) -> None:
    response = upload(organiser, DEMO_PACKET.name, gzip.compress(DEMO_PACKET.read_bytes()))
    assert response.status_code == 200, response.content.decode()[:2000]
    n_tossups, n_bonuses = Tossup.objects.count(), Bonus.objects.count()
    assert n_tossups > 0 and n_bonuses > 0
    page = response.content.decode()
    assert f"{n_tossups} tossups and {n_bonuses} bonuses: {n_tossups + n_bonuses} created" in page
    # The command on the same file finds every row already there, unchanged: the same rows.
    out = io.StringIO()
    call_command("import_questions", "--demo", stdout=out)
    assert f"0 created, 0 updated, {n_tossups + n_bonuses} unchanged" in out.getvalue()
    assert (Tossup.objects.count(), Bonus.objects.count()) == (n_tossups, n_bonuses)


def test_a_set_name_renames_the_files_set(organiser: Client) -> None:
    response = upload(organiser, "packet.jsonl", jsonl([tossup(1), tossup(2)]), set_name="Club night 3")
    assert response.status_code == 200
    assert list(QuestionSet.objects.values_list("name", "year")) == [("Club night 3", 2024)]
    two_sets = jsonl([tossup(1), dict(tossup(1), set="Other")])
    refused = upload(organiser, "two.jsonl", two_sets, set_name="Mine")
    assert refused.status_code == 400 and "holds 2 sets" in refused.content.decode()
    assert QuestionSet.objects.count() == 1


def test_an_exhibition_csv_needs_a_set_name(organiser: Client) -> None:
    csv = b"id,answer,sent,text\nq1,Zanzibar,0,This island is off Tanzania.\nq1,Zanzibar,1,Name it.\n"
    refused = upload(organiser, "geography.csv", csv)
    assert refused.status_code == 400 and "give a set name" in refused.content.decode()
    assert counts() == (0, 0, 0, 0)
    response = upload(organiser, "geography.csv", csv, set_name="../2024 exhibition")  # any name is safe
    assert response.status_code == 200
    t = Tossup.objects.get()
    assert (t.packet.question_set.name, t.packet.name, t.answer_line) == (
        "../2024 exhibition",
        "geography",
        "Zanzibar",
    )
    assert t.question == "This island is off Tanzania. Name it."
