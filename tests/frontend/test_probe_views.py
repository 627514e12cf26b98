"""The distractor probe on the web: ``POST /workshop/api/probe`` (login, bad input, the answer's shape
with the toy bot of ``tests.tools.probe_toy``) and the analysis page of stored reports."""

from __future__ import annotations

import json

import pytest
from django.test import Client

from frontend import probe_views
from irt import probe_results
from irt.probe import DistractorPool
from tests.tools.probe_toy import ANSWERS, LastClueGuesser, known_clues, toy_tossups
from tools import probe_evaluation as pe

URL = "/workshop/api/probe"
TOY = toy_tossups()


@pytest.fixture
def toy_bots(monkeypatch) -> None:
    """The toy bot stands in for every built-in bot; the toy set is the donor pool."""
    pool = DistractorPool.build(
        (str(t["number"]), str(t["question"]), str(t["answer"]), str(t["category"])) for t in TOY
    )
    monkeypatch.setattr(probe_views, "donor_pool", lambda: pool)
    monkeypatch.setattr(probe_views, "LOADER", "tests.tools.probe_toy:LastClueGuesser")


def post(client: Client, body: object) -> tuple[int, dict]:
    response = client.post(URL, data=json.dumps(body) if not isinstance(body, str) else body,
                           content_type="application/json")  # fmt: skip
    return response.status_code, response.json()


def request(**changes: object) -> dict:
    return {"text": TOY[0]["question"], "answer_line": TOY[0]["answer"], "category": "Literature"} | changes


def test_needs_a_login(db, toy_bots) -> None:
    status, body = post(Client(), request())
    assert status == 403 and body["code"] == "forbidden"
    assert Client().get(URL).status_code == 405


@pytest.mark.parametrize(
    ("body", "code"),
    [
        ("not json", "bad_json"),
        ([1, 2], "bad_json"),
        (request(text=None), "bad_field"),
        (request(text="   "), "bad_field"),
        (request(answer_line="[accept nothing]"), "bad_answer_line"),
        (request(answer_line=""), "bad_answer_line"),
        (request(text="word " * 5001), "too_long"),
        (request(bot="gpt-9"), "unknown_bot"),
    ],
)
def test_bad_input_is_a_clear_400(organiser: Client, toy_bots, body: object, code: str) -> None:
    status, answer = post(organiser, body)
    assert status == 400 and answer["code"] == code and answer["message"]


def test_probes_every_position_with_the_bot(organiser: Client, toy_bots) -> None:
    status, body = post(organiser, request(bot="tfidf"))
    assert status == 200 and body["skipped"] == []
    probes = body["probes"]
    assert [p["position"] for p in probes] == ["start", "middle", "before_giveaway"]
    sentence = probes[0]["sentence"]
    assert sentence in known_clues() and known_clues()[sentence] != ANSWERS[0]
    assert all(p["sentence"] == sentence and p["bot"] == "tfidf" for p in probes)
    assert all(p["original_buzz_index"] == 9 and p["original_correct"] for p in probes)
    start, middle, giveaway = probes
    # a distractor first: the toy bot buzzes at its last word, wrongly, with the donor's answer
    assert start["buzz_index"] == 9 and not start["correct"] and start["fooled"]
    assert middle["buzz_index"] == 9 and middle["correct"] and not middle["fooled"]
    assert giveaway["buzz_index"] == 9 and giveaway["correct"]
    assert set(start) == {"position", "sentence", "bot", "buzz_index", "answer", "correct", "fooled",
                          "original_buzz_index", "original_correct"}  # fmt: skip
    # the donor's answer line never goes out, nor the caller's
    raw = json.dumps(body)
    assert TOY[0]["answer"] not in raw and "<b>" not in raw


def test_every_bot_when_none_is_named(organiser: Client, toy_bots) -> None:
    status, body = post(organiser, request(bot=None))
    assert status == 200
    assert [p["bot"] for p in body["probes"]] == [b for b in probe_views.BUILT_IN for _ in range(3)]


def test_a_category_without_donors(organiser: Client, toy_bots) -> None:
    status, body = post(organiser, request(category="Mythology", bot="wiki"))
    assert status == 200 and body["probes"] == [] and "Mythology" in body["note"]


def test_analysis_page_renders_the_stored_reports(client: Client, settings, tmp_path, db) -> None:
    settings.VAR_DIR = tmp_path
    empty = client.get("/analysis/probe/")
    assert empty.status_code == 200 and b'id="no-probes"' in empty.content
    tossups = pe.be.load_tossups(str(_toy_file(tmp_path)))
    probe_results.store("toy bot", pe.run(LastClueGuesser(), tossups, every=1, players=4, resamples=50))
    page = client.get("/analysis/probe/").content.decode()
    assert 'data-bot="toy bot"' in page and "before giveaway" in page
    assert "<strong>-100.0</strong>" in page  # accuracy at 100 %: −100 points, interval excludes 0
    assert ANSWERS[0] not in page  # aggregates only: no answer on the page
    assert 'id="probe-link"' in client.get("/analysis/").content.decode()


def _toy_file(tmp_path):
    from tests.tools.probe_toy import write_toy_set

    return write_toy_set(tmp_path / "toy.jsonl")


def test_a_post_without_the_csrf_token_is_a_json_403(db, toy_bots) -> None:
    from django.contrib.auth import get_user_model

    client = Client(enforce_csrf_checks=True)
    client.force_login(get_user_model().objects.create_user("writer"))
    status, body = post(client, request())
    assert status == 403 and body["code"] == "csrf"
