"""Fits key on identities, never on display names: one handle across two matches is one subject,
two players called "Alex" without a shared identity are two, and an organiser's merge or split
reaches the fit at the next refit (``irt.tasks.refit``, what "Refit now" queues). Buzz positions
stored with the fit come from exactly its responses (an undone buzz is not counted)."""

from __future__ import annotations

import pytest

from competition import identities, services
from competition.models import Buzz, Match, MatchEvent, Player, Tossup
from competition.vocabulary import BuzzLogRuling
from irt import pipeline
from irt.models import Fit, ItemScore, SubjectSkill
from irt.selectors import subject_labels
from irt.tasks import refit
from tests.support.factories import make_packet

pytestmark = pytest.mark.django_db

# Per tossup: (seat name, token index, ruling) in order.
SCRIPT = [
    [("bot", 3, "wrong"), ("Alex", 6, "correct")],
    [("bot", 2, "correct")],
    [("Alex", 4, "wrong"), ("Sam", 5, "correct")],
    [("Sam", 7, "correct")],
]


def tossups() -> list[Tossup]:
    return (
        list(Tossup.objects.order_by("id")[: len(SCRIPT)])
        or make_packet(n_tossups=len(SCRIPT), n_bonuses=0)[0]
    )


def played_match(name: str, alex: dict[str, str], extra: list[tuple[str, int, int, str]] = ()) -> Match:
    """An ended match of ``SCRIPT``: ``Alex`` (joined with ``alex``: handle, secret…) and ``Sam`` on
    Red, a bot; ``extra`` adds ``(seat, tossup index, token index, ruling)`` buzzes."""
    ts = tossups()
    match = services.create_match(
        name=name,
        tossup_ids=[t.id for t in ts],
        teams=["Red"],
        bots=[{"name": "bot", "weight_class": "light"}],
    )
    identities.join(code=match.join_code, name="Alex", team="Red", **alex)
    identities.join(code=match.join_code, name="Sam", team="Red")
    buzzes = [(who, j, at, ruling) for j, line in enumerate(SCRIPT) for who, at, ruling in line] + list(extra)
    seq = 1000
    for who, j, at, ruling in buzzes:
        seat = Player.objects.get(match=match, name=who)
        seq += 1
        Buzz.objects.create(
            match=match, tossup=ts[j], player=seat, team=seat.team, kind=seat.kind,
            token_index=at, token_count=12, received_at=0.0, ruling=ruling, seq=seq,
        )  # fmt: skip
    for t in ts:
        seq += 1
        MatchEvent.objects.create(match=match, seq=seq, event="tossup_ended", payload={"question_id": t.id})
    match.status = Match.Status.ENDED
    match.save(update_fields=["status"])
    pipeline.record_match_responses(match.id)
    return match


def alex_subjects(fit: Fit) -> dict[str, int]:
    """Subject key → number of responses of the fit's subjects shown as an Alex handle."""
    skills = {s.subject: s.n_responses for s in SubjectSkill.objects.filter(fit=fit, kind="human")}
    labels = subject_labels(skills)
    return {s: n for s, n in skills.items() if labels[s].lower().startswith("alex")}


def test_one_handle_across_two_matches_is_one_subject() -> None:
    first = played_match("one", {"handle": "alex_k"})
    owner = Player.objects.get(match=first, name="Alex").competitor
    secret = identities.reset_secret(owner)  # what the tablet kept (the join returned it once)
    played_match("two", {"handle": "alex_k", "identity_secret": secret})
    fit = pipeline.fit_scope("live")
    assert alex_subjects(fit) == {f"human:#{owner.id}": 2 * len(SCRIPT)}
    assert subject_labels([f"human:#{owner.id}"]) == {f"human:#{owner.id}": "alex_k"}


def test_two_alexes_without_one_identity_are_two_subjects_until_merged_then_split_again() -> None:
    m1, m2 = played_match("one", {}), played_match("two", {})
    a, b = (Player.objects.get(match=m, name="Alex").competitor for m in (m1, m2))
    before = Fit.objects.get(pk=refit.apply(args=["live"]).get())
    assert alex_subjects(before) == {f"human:#{a.id}": len(SCRIPT), f"human:#{b.id}": len(SCRIPT)}
    teams = SubjectSkill.objects.filter(fit=before, kind="team").count()
    assert teams == 2  # two matches' "Red": two teams, not one

    identities.merge(a, [b])
    merged = Fit.objects.get(pk=refit.apply(args=["live"]).get())
    assert merged.id != before.id and merged.n_subjects == before.n_subjects - 1
    assert alex_subjects(merged) == {f"human:#{a.id}": 2 * len(SCRIPT)}

    (c,) = identities.split_by_match(a)
    split = Fit.objects.get(pk=refit.apply(args=["live"]).get())
    assert alex_subjects(split) == {f"human:#{a.id}": len(SCRIPT), f"human:#{c.id}": len(SCRIPT)}
    assert split.n_subjects == before.n_subjects

    # The match's own fit follows too.
    identities.merge(a, [c])
    assert f"human:#{c.id}" not in alex_subjects(
        Fit.objects.get(pk=refit.apply(args=[f"match:{m2.id}"]).get())
    )


def test_buzz_positions_come_from_the_fits_responses_only() -> None:
    # Alex's undone buzz at token 1 on the first tossup (the moderator took it back) must not count.
    match = played_match(
        "one", {}, extra=[("Alex", 0, 1, BuzzLogRuling.UNDONE), ("Sam", 1, 9, BuzzLogRuling.PENDING)]
    )
    fit = pipeline.fit_scope(f"match:{match.id}")
    first, second, third, _ = (
        ItemScore.objects.get(fit=fit, tossup=t)
        for t in Tossup.objects.filter(id__in=match.tossup_ids).order_by("id")
    )
    assert (first.human_buzz_index, first.human_buzzes) == (6.0, 1)
    assert first.human_buzz_read == pytest.approx(7 / 12)
    assert (first.bot_buzz_index, first.bot_buzzes) == (3.0, 1)
    assert second.human_buzzes is None and second.bot_buzz_index == 2.0  # the pending buzz is not ruled
    assert third.human_buzz_index == pytest.approx(4.5) and third.human_buzzes == 2
    assert fit.summary["buzz_positions"] is True
