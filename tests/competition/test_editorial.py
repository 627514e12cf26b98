"""The editor's services (``competition.editorial``): submit and resubmit with the prediction kept
per version, accept, edit (versions kept), send back, and packets assembled from accepted questions
that play in a match like imported ones; every refusal changes nothing."""

from __future__ import annotations

import pytest

from buzzer.bots import workshop
from competition import editorial, services, tournaments
from competition.errors import ServiceError
from competition.models import Packet, QuestionSet, Submission, SubmissionVersion, Tossup
from tests.bots.workshop_fixture import ANSWER_LINE, VAGUE, fixture_bot
from tests.support.editorial import CHOPIN, EARLY, LATE, draft, play, writer

pytestmark = pytest.mark.django_db


@pytest.fixture(scope="module")
def bot() -> workshop.TfidfBot:
    return fixture_bot()


@pytest.fixture
def editor(django_user_model):
    return django_user_model.objects.create_user("ed", password="pw-for-tests-only")


def submitted(bot, user, text=LATE, line=ANSWER_LINE, category="Science") -> Submission:
    d = draft(user, text, line, category)
    return editorial.submit_draft(
        draft=d, writer=user, predictions=workshop.predict([bot], text, line, category)
    )


def test_a_submission_keeps_each_versions_prediction_and_a_returned_one_is_resubmitted(bot, editor) -> None:
    alice = writer("alice")
    s = submitted(bot, alice)
    v1 = editorial.current_version(s)
    assert (s.status, v1.number, v1.kind, v1.text) == ("submitted", 1, "submitted", LATE)
    assert v1.predictions["tfidf"] == {**v1.predictions["tfidf"], "answer": "Marie Curie", "correct": True}
    assert v1.predictions["tfidf"]["buzz_index"] >= len(VAGUE.split())  # not before the giveaway
    with pytest.raises(ServiceError, match="already submitted as it is"):
        editorial.submit_draft(draft=s.draft, writer=alice, predictions={})

    editorial.send_back(submission_id=s.pk, editor=editor, comment="Move Pierre later.")
    s.refresh_from_db()
    assert (s.status, s.comment) == ("returned", "Move Pierre later.")

    d = s.draft
    d.text = EARLY
    d.answer_line, d.category = CHOPIN, "Fine Arts"
    d.save()
    again = editorial.submit_draft(draft=d, writer=alice, predictions=workshop.predict([bot], EARLY, CHOPIN))
    v2 = editorial.current_version(again)
    assert (again.pk, again.status, v2.number, v2.text) == (s.pk, "submitted", 2, EARLY)
    assert v2.predictions["tfidf"]["buzz_index"] < v1.predictions["tfidf"]["buzz_index"]
    assert [h["action"] for h in again.history] == ["submitted", "sent back", "resubmitted"]


def test_another_writers_draft_and_empty_ones_are_refused(bot) -> None:
    alice, bob = writer("alice"), writer("bob")
    d = draft(alice)
    with pytest.raises(ServiceError) as caught:
        editorial.submit_draft(draft=d, writer=bob, predictions={})
    assert caught.value.code == "not_found"
    empty = draft(alice, text="  ")
    with pytest.raises(ServiceError, match="needs the tossup's text"):
        editorial.submit_draft(draft=empty, writer=alice, predictions={})
    assert not Submission.objects.exists()


def test_an_edit_is_a_new_version_and_the_old_ones_stay(bot, editor) -> None:
    s = submitted(bot, writer("alice"))
    new_text = LATE.replace("many years", "decades")
    v2 = editorial.edit(
        submission_id=s.pk, editor=editor, text=new_text, answer_line=ANSWER_LINE, category="Science",
        predictions=workshop.predict([bot], new_text, ANSWER_LINE), note="tightened",
    )  # fmt: skip
    assert (v2.number, v2.kind, v2.author, v2.text) == (2, "edited", editor, new_text)
    assert list(s.versions.values_list("number", "text")) == [(1, LATE), (2, new_text)]
    with pytest.raises(ServiceError, match="changes nothing"):
        editorial.edit(
            submission_id=s.pk,
            editor=editor,
            text=new_text,
            answer_line=ANSWER_LINE,
            category="Science",
            predictions={},
        )
    editorial.accept(submission_id=s.pk, editor=editor)
    with pytest.raises(ServiceError, match="only a submitted question can be accepted"):
        editorial.accept(submission_id=s.pk, editor=editor)
    with pytest.raises(ServiceError, match="was accepted"):
        editorial.submit_draft(draft=s.draft, writer=s.writer, predictions={})
    with pytest.raises(ServiceError, match="comment is empty"):
        editorial.send_back(submission_id=s.pk, editor=editor, comment="   ")
    assert SubmissionVersion.objects.count() == 2


def test_a_packet_with_a_question_not_accepted_is_refused_and_nothing_is_created(bot, editor) -> None:
    alice = writer("alice")
    good, waiting = submitted(bot, alice), submitted(bot, alice, EARLY, CHOPIN, "Fine Arts")
    editorial.accept(submission_id=good.pk, editor=editor)
    bad_calls = [
        ([good.pk, waiting.pk], "submitted, not accepted"),
        ([good.pk, good.pk], "picked twice"),
        ([good.pk, 999_999], "no submissions"),
        ([], "at least one"),
    ]
    for ids, message in bad_calls:
        with pytest.raises(ServiceError, match=message):
            editorial.assemble_packet(
                set_name="Club 2026", packet_name="Round 1", submission_ids=ids, editor=editor
            )
    with pytest.raises(ServiceError, match="give the set and the packet a name"):
        editorial.assemble_packet(
            set_name=" ", packet_name="Round 1", submission_ids=[good.pk], editor=editor
        )
    QuestionSet.objects.create(name="Imported", source="qbreader")
    with pytest.raises(ServiceError, match="imported one"):
        editorial.assemble_packet(
            set_name="Imported", packet_name="R1", submission_ids=[good.pk], editor=editor
        )
    assert not Packet.objects.exists() and not Tossup.objects.exists()
    assert QuestionSet.objects.filter(source=editorial.SOURCE).count() == 0
    good.refresh_from_db()
    assert good.tossup is None


def test_an_assembled_packet_keeps_writers_and_plays_in_a_match(bot, editor) -> None:
    alice, bob = writer("alice"), writer("bob")
    first, second = submitted(bot, alice), submitted(bot, bob, EARLY, CHOPIN, "Fine Arts")
    for s in (first, second):
        editorial.accept(submission_id=s.pk, editor=editor)
    packet = editorial.assemble_packet(
        set_name="Club 2026", packet_name="Round 1", submission_ids=[second.pk, first.pk], editor=editor
    )
    assert packet.question_set.source == editorial.SOURCE
    tossups = list(packet.tossups.order_by("number"))
    assert [(t.number, t.writer, t.question, t.category) for t in tossups] == [
        (1, "bob", EARLY, "Fine Arts"),
        (2, "alice", LATE, "Science"),
    ]
    first.refresh_from_db()
    assert first.tossup == tossups[1] and tossups[1].submission.versions.get().predictions["tfidf"]
    assert editorial.category_counts([first, second]) == {"Fine Arts": 1, "Science": 1}
    with pytest.raises(ServiceError, match="in a packet already"):
        editorial.assemble_packet(
            set_name="Club 2026", packet_name="Round 2", submission_ids=[first.pk], editor=editor
        )
    with pytest.raises(ServiceError, match="cannot change"):
        editorial.send_back(submission_id=first.pk, editor=editor, comment="too late")

    match = services.create_match(
        name="Workshop round", tossup_ids=[t.id for t in tossups], teams=["Red"],
        bots=[{"name": "bot", "weight_class": "light"}], config={"auto_rule": True, "wpm": 600},
    )  # fmt: skip
    services.join_match(code=match.join_code, name="ann", team="Red")
    play(match, {0: [("bot", 3, "Chopin")], 1: [("ann", 20, "Marie Curie")]})
    buzzes = {b.tossup_id: (b.player.name, b.ruling, b.points) for b in match.buzzes.select_related("player")}
    assert buzzes == {tossups[0].id: ("bot", "correct", 10), tossups[1].id: ("ann", "correct", 10)}

    # A tournament takes the packet as it takes an imported one: each game plays its tossups.
    cup = tournaments.create_tournament(
        name="Workshop cup", packet_ids=[packet.pk], fmt={}, config={"wpm": 600, "auto_rule": True},
        teams=[{"name": f"T{i}", "players": [{"name": f"p{i}", "kind": "human"}]} for i in (1, 2)],
    )  # fmt: skip
    (game,) = cup.games.select_related("match")
    assert game.match.tossup_ids == [t.id for t in tossups]
    play(game.match, {1: [("p1", 20, "Marie Curie")]})
    assert game.match.buzzes.get().tossup.writer == "alice"
