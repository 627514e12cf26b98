"""Helpers for the editor's tests (issue 32, items 3 and 4): writers and drafts, the workshop's bots
made of a toy TF-IDF model trained in milliseconds, and a match played through the engine on a
simulated clock (the driver's ticks, real buzzes and answers ruled by the judge)."""

from __future__ import annotations

from typing import Any

import pytest
from django.contrib.auth import get_user_model
from django.contrib.auth.models import Group

from competition import game, services
from competition.game.events import EventName
from competition.live import ticks
from competition.models import Draft, Match
from competition.roles import WRITERS_GROUP
from tests.bots.workshop_fixture import ANSWER_LINE, GIVEAWAY, VAGUE, fixture_bot

T0 = 1_800_000_000.0
#: A tossup the toy bot buzzes on late (its giveaway last) and one it buzzes on at once.
LATE = (VAGUE + GIVEAWAY).strip()
EARLY = "This composer wrote nocturnes, mazurkas and polonaises for the piano before moving to Paris."
CHOPIN = "Frédéric <b><u>Chopin</u></b>"


@pytest.fixture
def workshop_bots(monkeypatch) -> None:
    """The workshop's bots are the toy TF-IDF bot, loaded already (``buzzer.workshop``)."""
    from buzzer import workshop

    monkeypatch.setitem(workshop._state, "bots", [fixture_bot()])
    monkeypatch.setitem(workshop._state, "problems", [])


def writer(username: str) -> Any:
    """A writer-only account (in the ``writers`` group, not staff): no organiser, no editor."""
    user = get_user_model().objects.create_user(username, password="pw-for-tests-only")
    user.groups.add(Group.objects.get_or_create(name=WRITERS_GROUP)[0])
    return user


def draft(user: Any, text: str = LATE, answer_line: str = ANSWER_LINE, category: str = "Science") -> Draft:
    return Draft.objects.create(
        writer=user, title=answer_line[:30], text=text, answer_line=answer_line, category=category
    )


def play(match: Match, plan: dict[int, list[tuple[str, int, str]]]) -> None:
    """Play ``match`` to its end on a simulated clock: on tossup ``i`` of ``plan`` each seat
    ``(name, token, answer)`` in turn buzzes once ``token`` words (0-based index) are read, and
    answers; other tossups are read to their end. The judge rules (the match needs ``auto_rule``)."""
    seats = {p.name: p for p in match.players.all()}
    pending = {i: list(buzzes) for i, buzzes in plan.items()}
    now = T0
    applied = services.moderate(match_id=match.id, command=game.Start(), now=now)
    index, qid, revealed, ended = -1, 0, 0, False

    def note(events: list[dict[str, Any]]) -> None:
        nonlocal index, qid, revealed, ended
        for e in events:
            if e["event"] == EventName.TOSSUP_STARTED:
                index, qid, revealed = e["data"]["index"], e["data"]["question_id"], 0
            elif e["event"] == EventName.WORDS:
                revealed = e["data"]["start"] + len(e["data"]["words"])
            elif e["event"] == EventName.MATCH_ENDED:
                ended = True

    note(applied.events)
    deadline = applied.next_deadline
    for _ in range(5_000):
        if ended or deadline is None:
            break
        now = max(now, deadline)
        applied = ticks.tick(match.id, now)
        note(applied.events)
        deadline = applied.next_deadline
        if pending.get(index) and revealed > pending[index][0][1]:
            name, token, text = pending[index].pop(0)
            seat = seats[name]
            services.buzz(
                match_id=match.id, player_id=seat.id, question_id=qid, token_index=token,
                client_time=None, corrected_press_at=None, now=now,
            )  # fmt: skip
            for _ in range(20):  # the buzz race closes on the driver's ticks
                if any(e["event"] == EventName.BUZZ for e in applied.events):
                    break
                now = max(now, applied.next_deadline or now)
                applied = ticks.tick(match.id, now)
                note(applied.events)
            applied = services.answer(
                match_id=match.id, player_id=seat.id, question_id=qid, text=text, now=now
            )
            note(applied.events)
            deadline = ticks.tick(match.id, now).next_deadline
    if not ended:
        services.moderate(match_id=match.id, command=game.End(), now=now)
    match.refresh_from_db()
    assert match.status == Match.Status.ENDED


EDITOR = ("ed", "editor-test-password")
WRITER_PASSWORD = "writer-test-password"


def scene() -> dict[str, int]:
    """A small event for the page tests, written to the current database: an organiser ``ed``
    (an editor), writers ``alice`` and ``bob`` (password :data:`WRITER_PASSWORD`); alice's Curie and
    bob's Chopin submitted with the toy bot's prediction, accepted, put in a packet, played in an
    ended match and fitted; bob's Seine submitted, edited by the editor and waiting for review;
    alice's Paris not submitted. Returns ``{"review": submission id, "fresh_draft": draft id}``."""
    from buzzer.bots import workshop
    from competition import editorial
    from irt.tasks import fit_after_match

    bot = fixture_bot()
    editor = get_user_model().objects.create_user(EDITOR[0], password=EDITOR[1])
    alice, bob = writer("alice"), writer("bob")
    for user in (alice, bob):
        user.set_password(WRITER_PASSWORD)
        user.save()

    def submit(user: Any, *args: str) -> Any:
        d = draft(user, *args)
        return editorial.submit_draft(
            draft=d, writer=user, predictions=workshop.predict([bot], d.text, d.answer_line, d.category)
        )

    curie, chopin = submit(alice), submit(bob, EARLY, CHOPIN, "Fine Arts")
    for s in (curie, chopin):
        editorial.accept(submission_id=s.pk, editor=editor)
    packet = editorial.assemble_packet(
        set_name="Club workshop 2026",
        packet_name="Round 1",
        submission_ids=[chopin.pk, curie.pk],
        editor=editor,
    )
    match = services.create_match(
        name="Workshop round 1", tossup_ids=list(packet.tossups.order_by("number").values_list("id", flat=True)),
        teams=["Red", "Blue"], bots=[{"name": "tfidf", "weight_class": "light"}],
        config={"auto_rule": True, "wpm": 600},
    )  # fmt: skip
    for name, team in (("ann", "Red"), ("ben", "Blue"), ("cy", "Blue")):
        services.join_match(code=match.join_code, name=name, team=team)
    play(
        match,
        {
            0: [("ben", 2, "Liszt"), ("tfidf", 3, "Chopin")],
            1: [("tfidf", 6, "Warsaw"), ("cy", 10, "Paris"), ("ann", 22, "Marie Curie")],
        },
    )
    fit_after_match.apply(args=[match.id]).get()

    seine_text = "This river rises on the Langres plateau and flows through Paris to the English Channel."
    seine = submit(bob, seine_text, "<b><u>Seine</u></b>", "Geography")
    edited = seine_text.replace("This river", "This waterway")
    editorial.edit(
        submission_id=seine.pk, editor=editor, text=edited, answer_line="<b><u>Seine</u></b> [accept Sequana]",
        category="Geography", predictions=workshop.predict([bot], edited, "Seine [accept Sequana]"),
        note="a vaguer lead-in; Sequana accepted",
    )  # fmt: skip
    fresh = draft(
        alice,
        "This city on the Seine has the Louvre and the Eiffel Tower.",
        "<b><u>Paris</u></b>",
        "Geography",
    )
    return {"review": seine.pk, "fresh_draft": fresh.pk}
