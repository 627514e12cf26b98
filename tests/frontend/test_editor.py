"""The editor's desk and the writer's pages as users reach them (``buzzer.editor_views``): a writer
submits (the prediction is the server's), an editor reviews, edits and sends back, assembles a packet,
an organiser creates a match with it on the moderator page, the match plays, and the writer's results
page then shows the question's ADVSCORE; and what adversaries try: another writer's draft, a
writer-only account on the editor's pages, a packet with a question not accepted, a client-sent
prediction."""

from __future__ import annotations

import re

import pytest
from django.test import Client

from competition import services
from competition.models import Match, Packet, Submission, Tossup
from competition.vocabulary import FlagProblem
from irt.models import ItemScore
from irt.tasks import fit_after_match
from tests.bots.workshop_fixture import ANSWER_LINE
from tests.support.editorial import CHOPIN, EARLY, LATE, draft, play, workshop_bots, writer

pytestmark = pytest.mark.django_db
__all__ = ["workshop_bots"]


def logged_in(user) -> Client:
    client = Client()
    client.force_login(user)
    return client


@pytest.fixture
def editor(organiser: Client) -> Client:
    return organiser


def submit(client: Client, draft_id: int, **extra) -> object:
    return client.post(f"/workshop/draft/{draft_id}/submit/", extra)


def test_a_writer_submits_with_the_servers_prediction_and_sees_the_comment(workshop_bots, editor) -> None:
    alice = writer("alice")
    d = draft(alice)
    page = logged_in(alice)
    # A prediction the client sends is ignored: the server computes it.
    response = submit(page, d.pk, predictions='{"tfidf": {"buzz_index": 0, "correct": true}}')
    assert response.status_code == 302 and response["Location"].endswith(f"?submitted={d.pk}")
    s = Submission.objects.get(draft=d)
    tfidf = s.versions.get().predictions["tfidf"]
    assert tfidf["buzz_index"] > 10 and tfidf["answer"] == "Marie Curie"

    listing = page.get(response["Location"]).content.decode()
    assert (
        "Submitted: the editors have it now." in listing
        and f"word {tfidf['buzz_index'] + 1} (right)" in listing
    )

    sent = editor.post(
        f"/editor/submission/{s.pk}/", {"action": "send_back", "comment": "Give Pierre later."}
    )
    assert sent.status_code == 302
    listing = page.get("/workshop/submissions/").content.decode()
    assert "Give Pierre later." in listing and "Resubmit" in listing


def test_another_writers_draft_is_404_and_an_unsaved_answer_line_is_a_clear_error(workshop_bots) -> None:
    alice, bob = writer("alice"), writer("bob")
    d = draft(alice)
    assert submit(logged_in(bob), d.pk).status_code == 404
    assert submit(Client(), d.pk).status_code == 302  # to the login page
    broken = draft(alice, answer_line="Curie [accept Maria")
    response = submit(logged_in(alice), broken.pk)
    assert response.status_code == 400 and "unclosed" in response.content.decode()
    assert not Submission.objects.exists()


def test_writer_only_accounts_may_not_review_or_assemble(workshop_bots) -> None:
    alice = writer("alice")
    s_id = (submit(logged_in(alice), draft(alice).pk), Submission.objects.get().pk)[1]
    mallory = logged_in(writer("mallory"))
    for url in ("/editor/", f"/editor/submission/{s_id}/", "/editor/packets/"):
        assert mallory.get(url).status_code == 403, url
    assert mallory.post(f"/editor/submission/{s_id}/", {"action": "accept"}).status_code == 403
    assert logged_in(alice).post(f"/editor/submission/{s_id}/", {"action": "accept"}).status_code == 403
    assert Submission.objects.get().status == "submitted"


def test_the_editor_edits_as_a_new_version_and_a_packet_with_one_not_accepted_is_refused(
    workshop_bots, editor
) -> None:
    alice = writer("alice")
    page = logged_in(alice)
    for d in (draft(alice), draft(alice, EARLY, CHOPIN, "Fine Arts")):
        submit(page, d.pk)
    curie, chopin = Submission.objects.order_by("pk")
    edited = LATE.replace("many years", "decades")
    response = editor.post(
        f"/editor/submission/{curie.pk}/",
        {
            "action": "edit",
            "text": edited,
            "answer_line": ANSWER_LINE,
            "category": "Science",
            "note": "tighter",
        },
    )
    assert response.status_code == 302
    review = editor.get(f"/editor/submission/{curie.pk}/").content.decode()
    assert "v1" in review and "v2" in review and "tighter" in review and "decades" in review
    assert editor.post(f"/editor/submission/{curie.pk}/", {"action": "accept"}).status_code == 302
    bad = editor.post(f"/editor/submission/{curie.pk}/", {"action": "accept"})
    assert bad.status_code == 400 and "only a submitted question" in bad.content.decode()

    refused = editor.post(
        "/editor/packets/",
        {"set_name": "Club", "packet_name": "R1", "pick": [curie.pk, chopin.pk]},
    )
    assert refused.status_code == 400
    assert "Nothing was created" in refused.content.decode() and "not accepted" in refused.content.decode()
    assert not Packet.objects.exists() and not Tossup.objects.exists()


def test_an_accepted_question_plays_in_a_match_and_its_writers_page_shows_its_advscore(
    workshop_bots, editor
) -> None:
    alice, bob = writer("alice"), writer("bob")
    for who, args in ((alice, ()), (bob, (EARLY, CHOPIN, "Fine Arts"))):
        submit(logged_in(who), draft(who, *args).pk)
    curie, chopin = Submission.objects.order_by("pk")
    before = logged_in(alice).get("/workshop/results/").content.decode()
    assert "is in a packet yet" in before

    for s in (curie, chopin):
        assert editor.post(f"/editor/submission/{s.pk}/", {"action": "accept"}).status_code == 302
    packets = editor.get("/editor/packets/").content.decode()
    assert re.search(
        r'data-category="Science"><th scope="row">Science</th><td class="picked"[^>]*>0</td><td>1</td>',
        packets,
    )
    made = editor.post(
        "/editor/packets/",
        {
            "set_name": "Club 2026",
            "packet_name": "Round 1",
            "pick": [curie.pk, chopin.pk],
            f"order_{chopin.pk}": "1",
        },
    )
    assert made.status_code == 302
    packet = Packet.objects.get(name="Round 1")
    assert "created with 2 tossups" in editor.get(made["Location"]).content.decode()
    tossups = list(packet.tossups.order_by("number"))
    assert [t.writer for t in tossups] == ["bob", "alice"]

    # The organiser's moderator page creates a match with the packet, as with an imported one.
    created = editor.post(
        "/moderator/",
        {"name": "Workshop round", "packet": packet.pk, "preset": "naqt", "wpm": 600, "auto_rule": "on", "auto_advance": "on",
         "team": ["Red", "Blue"], "bot_name": ["bot"], "bot_class": ["light"], "bot_guesser": [""]},
    )  # fmt: skip
    assert created.status_code == 302, created.content.decode()[:2000]
    match = Match.objects.get(name="Workshop round")
    assert match.tossup_ids == [t.id for t in tossups]
    services.join_match(code=match.join_code, name="ann", team="Red")
    services.join_match(code=match.join_code, name="ben", team="Blue")
    services.join_match(code=match.join_code, name="cy", team="Blue")
    # Three humans, one clearly the strongest (ADVSCORE's δ needs a human above mean + 1 sd).
    play(
        match,
        {
            0: [("ben", 2, "Liszt"), ("bot", 3, "Chopin")],
            1: [("cy", 10, "Paris"), ("ann", 22, "Marie Curie")],
        },
    )
    fits = fit_after_match.apply(args=[match.id]).get()
    score = ItemScore.objects.get(fit_id=fits["live_fit"], tossup=tossups[1])
    assert score.advscore is not None

    mine = logged_in(alice).get("/workshop/results/").content.decode()
    row = re.search(rf'<tr data-tossup="{tossups[1].pk}">(.*?)</tr>', mine, re.S).group(1)
    assert f'<td class="advscore">{score.advscore:.3f}</td>' in row
    assert "ann: token 23/" in row and "correct" in row
    assert "bot: token" not in row  # the bot did not buzz on Curie: its tossup column says so
    assert re.search(r"tfidf: word \d+, right", row)
    assert "Rank among writers: <strong>" in mine and "of 2" in mine
    assert "Chopin" not in mine  # bob's question is not alice's to see
    # An expert flag raised on her question after play shows beside it.
    services.flag_question_as_editor(
        question_id=tossups[1].id, problem=FlagProblem.AMBIGUITY, comment="Maria or Marie?", reporter="ed"
    )
    flagged = logged_in(alice).get("/workshop/results/").content.decode()
    assert f"{FlagProblem.AMBIGUITY.label} (editor): Maria or Marie?" in flagged
    assert "Expert flags: <strong>1</strong>" in flagged
    everyone = editor.get("/workshop/results/").content.decode()
    assert "Chopin" in everyone and "Curie" in everyone
    assert "Chopin" not in editor.get("/workshop/results/?writer=alice").content.decode()


def test_no_fit_yet_is_unknown_never_zero(workshop_bots, editor) -> None:
    alice = writer("alice")
    submit(logged_in(alice), draft(alice).pk)
    s = Submission.objects.get()
    editor.post(f"/editor/submission/{s.pk}/", {"action": "accept"})
    editor.post("/editor/packets/", {"set_name": "Club", "packet_name": "R1", "pick": [s.pk]})
    page = logged_in(alice).get("/workshop/results/").content.decode()
    assert "there is no fit yet" in page
    assert '<td class="advscore">unknown</td>' in page and "0.000" not in page
