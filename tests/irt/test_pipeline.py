"""The live pipeline: buzz log → responses (policy), versioned idempotent fits, progress,
flag handling, adversary sensitivity in the fit summary, and the Celery task contract."""

from __future__ import annotations

import numpy as np
import pytest
from django.utils import timezone

from competition import services
from competition.models import Buzz, Flag, Match, MatchEvent, Packet, Player, QuestionSet, Team, Tossup
from irt import pipeline
from irt.models import Fit, ItemScore, Response, SubjectSkill
from irt.tasks import fit_after_match

pytestmark = pytest.mark.django_db

# Per tossup: (player name, token index, ruling) buzzes in order; "skip" marks a skipped tossup.
SCRIPT = [
    [("b1", 3, "wrong"), ("alice", 5, "correct")],
    [("b1", 2, "correct")],
    [("bob", 4, "wrong"), ("b2", 6, "correct")],
    [("alice", 7, "correct")],
    [],  # dead: nobody buzzed
    "skip",
    [("b2", 1, "wrong"), ("amy", 8, "correct")],
    [("b1", 5, "correct")],
]


@pytest.fixture
def match() -> Match:
    qs = QuestionSet.objects.create(name="Pipeline set", year=2024, source="test")
    packet = Packet.objects.create(question_set=qs, name="Round 1")
    tossups = [
        Tossup.objects.create(
            packet=packet,
            number=n + 1,
            question="clue " * 12,
            answer_line=f"answer{n}",
            writer="Writer A" if n % 2 else "Writer B",
        )
        for n in range(len(SCRIPT))
    ]
    match = services.create_match(
        name="Pipeline",
        tossup_ids=[t.id for t in tossups],
        preset="naqt",
        teams=["Red", "Blue"],
        bots=[{"name": "b1", "weight_class": "light"}, {"name": "b2", "weight_class": "heavy"}],
    )
    for name, team in (("alice", "Red"), ("amy", "Red"), ("bob", "Blue")):
        services.join_match(code=match.join_code, name=name, team=team)
    seq = 1000
    for tossup, buzzes in zip(tossups, SCRIPT, strict=True):
        for name, index, ruling in [] if buzzes == "skip" else buzzes:
            player = Player.objects.get(match=match, name=name)
            seq += 1
            Buzz.objects.create(
                match=match, tossup=tossup, player=player, team=player.team, kind=player.kind,
                token_index=index, token_count=12, received_at=0.0, ruling=ruling, seq=seq,
            )  # fmt: skip
        seq += 1
        outcome = "skipped" if buzzes == "skip" else "played"
        MatchEvent.objects.create(
            match=match, seq=seq, event="tossup_ended", payload={"question_id": tossup.id, "outcome": outcome}
        )
    return match


def tossup_ids(match: Match) -> list[int]:
    return list(
        Tossup.objects.filter(id__in=match.tossup_ids).order_by("number").values_list("id", flat=True)
    )


def key(match: Match, name: str) -> str:
    """The subject key of a seat (or, failing that, a team) called ``name`` in ``match``: its identity."""
    seat = Player.objects.filter(match=match, name=name).first()
    if seat is not None:
        return pipeline.identity_key(seat.kind, seat.competitor_id, seat.id)
    team = Team.objects.get(match=match, name=name)
    return pipeline.identity_key("team", team.competitor_id, team.id)


def test_match_responses_follow_the_policy(match: Match) -> None:
    ids = tossup_ids(match)
    k = {name: key(match, name) for name in ("alice", "amy", "bob", "b1", "b2", "Red", "Blue")}
    assert all(v.split(":")[1].startswith("#") for v in k.values()) and len(set(k.values())) == 7
    rows = {(r.subject, r.tossup_id): (r.correct, r.position) for r in pipeline.match_responses(match.id)}
    first = {s: v for (s, t), v in rows.items() if t == ids[0]}
    assert first == {
        k["alice"]: (True, 5),
        k["b1"]: (False, 3),
        k["amy"]: (False, None),
        k["bob"]: (False, None),
        k["b2"]: (False, None),
        k["Red"]: (True, 5),
        k["Blue"]: (False, None),
    }
    assert not any(t == ids[5] for _, t in rows)  # the skipped tossup gives no response
    assert len(rows) == 7 * (len(SCRIPT) - 1)

    censored = {(r.subject, r.tossup_id) for r in pipeline.match_responses(match.id, unbuzzed="missing")}
    assert (k["amy"], ids[0]) not in censored and (k["b1"], ids[0]) in censored
    assert (k["amy"], ids[4]) in censored  # dead tossup: nobody answered, so no censoring


def test_fits_are_idempotent_and_versioned(match: Match) -> None:
    pipeline.record_match_responses(match.id)
    first = pipeline.fit_scope("live")
    again = pipeline.fit_scope("live")
    assert again.id == first.id and Fit.objects.count() == 1
    assert first.status == Fit.Status.DONE and first.duration_s is not None

    assert pipeline.fit_scope("live", seed=1).id != first.id  # other settings → other fit
    Response.objects.filter(subject=key(match, "bob")).update(correct=True)  # changed responses
    changed = pipeline.fit_scope("live")
    assert changed.id != first.id and changed.snapshot_hash != first.snapshot_hash
    assert Fit.objects.filter(dataset="live").count() == 3

    with pytest.raises(ValueError, match="no responses"):
        pipeline.fit_scope("nothing-here")


def test_progress_is_reported_and_saved(match: Match) -> None:
    pipeline.record_match_responses(match.id)
    seen: list[float] = []
    fit = pipeline.fit_scope(f"match:{match.id}", progress=seen.append)
    assert seen == sorted(seen) and seen[0] > 0 and seen[-1] == 1.0 and len(seen) >= 4
    fit.refresh_from_db()
    assert fit.progress == 1.0


def test_fit_after_match_twice_gives_one_fit_per_scope(match: Match, monkeypatch) -> None:
    meta: list[dict] = []
    monkeypatch.setattr(fit_after_match, "update_state", lambda **kw: meta.append(kw["meta"]))
    for _ in range(2):
        result = fit_after_match.apply(args=[match.id]).get()
    assert Fit.objects.filter(dataset=f"match:{match.id}").count() == 1
    assert Fit.objects.filter(dataset="live").count() == 1
    fit = Fit.objects.get(pk=result["match_fit"])
    assert fit.status == Fit.Status.DONE
    fractions = [m["fraction"] for m in meta]
    assert {m["scope"] for m in meta} == {f"match:{match.id}", "live"}
    assert all(0 < f <= 1 for f in fractions) and fractions[-1] == 1.0

    skills = {s.subject: s for s in SubjectSkill.objects.filter(fit=fit)}
    assert set(skills) == {key(match, n) for n in ("alice", "amy", "bob", "b1", "b2", "Red", "Blue")}
    assert skills[key(match, "Red")].kind == "team" and skills[key(match, "b1")].kind == "bot"
    assert all(s.skill_se and s.skill_se > 0 for s in skills.values())
    items = ItemScore.objects.filter(fit=fit)
    assert items.count() == len(SCRIPT) - 1
    assert all(i.tossup_id and i.mu is not None and i.kappa is not None for i in items)


def test_flagged_tossups_leave_the_aggregates_by_default(match: Match) -> None:
    pipeline.record_match_responses(match.id)
    plain = pipeline.fit_scope("live")
    assert plain.summary["n_flagged"] == 0
    flagged = tossup_ids(match)[0]
    Flag.objects.create(tossup_id=flagged, match=match, reporter="mod", role="moderator", problem="ambiguity")
    fit = pipeline.fit_scope("live")
    assert fit.id != plain.id  # the flag is an input of the fit
    items = list(ItemScore.objects.filter(fit=fit))
    kept = [i.kappa for i in items if i.tossup_id != flagged]
    every = [i.kappa for i in items]
    assert fit.summary["n_flagged"] == 1
    assert fit.summary["kappa"] == pytest.approx(np.mean(kept))
    assert fit.summary["with_flagged"]["kappa"] == pytest.approx(np.mean(every))
    assert fit.summary["kappa"] != pytest.approx(fit.summary["with_flagged"]["kappa"])


def test_sensitivity_is_stored_in_the_summary(match: Match) -> None:
    pipeline.record_match_responses(match.id)
    fit = pipeline.fit_scope("live")
    sens = fit.summary["sensitivity"]
    assert [r["bot"] for r in sens["leave_out"]] == sorted([key(match, "b1"), key(match, "b2")])
    values = [r["advscore"] for r in sens["leave_out"] if r["advscore"] is not None]
    if values:
        assert sens["advscore_min"] == pytest.approx(min(values))
        assert sens["advscore_max"] == pytest.approx(max(values))
    assert all(r["tau"] is None for r in sens["leave_out"])  # one bot left: no ranking to compare
    off = pipeline.fit_scope("live", settings={"sensitivity": False})
    assert "sensitivity" not in off.summary


def test_seats_that_never_played_give_no_responses(match: Match) -> None:
    """A bot seat that never connected, a human who joined and never connected, and a team none
    of whose players played are in no fit; one answer (no buzz row yet) or one connection is
    enough to count."""
    team = Team.objects.create(match=match, name="Ghost bot", kind=Team.Kind.BOT)
    ghost = Player.objects.create(match=match, team=team, name="Ghost bot", kind=Player.Kind.BOT)
    silent = services.join_match(code=match.join_code, name="sam", team="Blue")
    green_team = Team.objects.create(match=match, name="Green", kind=Team.Kind.HUMAN)
    green = Player.objects.create(match=match, team=green_team, name="gil")
    subjects = {r.subject for r in pipeline.match_responses(match.id)}
    assert key(match, "alice") in subjects and key(match, "Blue") in subjects  # they played
    for idle in ("Ghost bot", "sam", "gil", "Green"):
        assert key(match, idle) not in subjects, idle
    assert len(subjects) == 7

    # An answer counts as playing (as logged by the one door: actor player:<id>).
    MatchEvent.objects.create(
        match=match, seq=5000, event="answer_given", actor=f"player:{green.id}", payload={}
    )
    subjects = {r.subject for r in pipeline.match_responses(match.id)}
    assert key(match, "gil") in subjects and key(match, "Green") in subjects
    assert key(match, "sam") not in subjects and key(match, "Ghost bot") not in subjects

    pipeline.record_match_responses(match.id)
    fit = pipeline.fit_scope("live")
    fitted = set(SubjectSkill.objects.filter(fit=fit).values_list("subject", flat=True))
    assert pipeline.identity_key("bot", ghost.competitor_id, ghost.id) not in fitted
    assert pipeline.identity_key("human", silent.competitor_id, silent.id) not in fitted
    assert key(match, "gil") in fitted

    # A seat whose token opened a socket played, though it never buzzed: not buzzing is its answer.
    Player.objects.filter(id=silent.id).update(first_connected_at=timezone.now())
    responses = [r for r in pipeline.match_responses(match.id) if r.subject == key(match, "sam")]
    assert responses and not any(r.correct for r in responses)


def test_the_fit_reads_silent_seats_by_its_unbuzzed_policy(match: Match) -> None:
    """Responses are stored as played (silent: 0, no position); the fit's ``unbuzzed`` setting
    reads them: censored by default (irt.races), or the old 0."""
    pipeline.record_match_responses(match.id)
    default = pipeline.fit_scope("live")
    assert default.settings["unbuzzed"] == "censored"
    wrong = pipeline.fit_scope("live", settings={"unbuzzed": "wrong"})
    missing = pipeline.fit_scope("live", settings={"unbuzzed": "missing"})
    assert len({default.id, wrong.id, missing.id}) == 3
    assert default.n_responses == wrong.n_responses == missing.n_responses == Response.objects.count()

    def skills(fit: Fit) -> dict[str, float]:
        return dict(SubjectSkill.objects.filter(fit=fit).values_list("subject", "skill"))

    # amy answered once, late; elsewhere alice, b1 or b2 took the tossup before her chance.
    amy = key(match, "amy")
    assert skills(default)[amy] > skills(wrong)[amy]
    # Dropped pairs count in neither the subject's nor the item's responses.
    censored_pairs = {(r.subject, r.tossup_id) for r in pipeline.match_responses(match.id)} - {
        (r.subject, r.tossup_id) for r in pipeline.match_responses(match.id, unbuzzed="missing")
    }
    n_amy = SubjectSkill.objects.get(fit=missing, subject=amy).n_responses
    assert n_amy == len(SCRIPT) - 1 - sum(1 for s, _ in censored_pairs if s == amy)
    with pytest.raises(ValueError, match="unbuzzed policy"):
        pipeline.fit_scope("live", settings={"unbuzzed": "zero"})


def test_teams_are_fitted_apart_from_their_players(match: Match) -> None:
    """A team's response repeats its player's buzz: the players' and bots' skills and the items
    come from a fit without the teams' responses, the teams' skills from one of their own."""
    pipeline.record_match_responses(match.id)
    together = pipeline.fit_scope("live")
    teams = {key(match, "Red"), key(match, "Blue")}
    Response.objects.filter(subject__in=teams).delete()
    apart = pipeline.fit_scope("live")
    assert apart.id != together.id

    def skills(fit: Fit) -> dict[str, float]:
        return dict(SubjectSkill.objects.filter(fit=fit).values_list("subject", "skill"))

    with_teams, without = skills(together), skills(apart)
    assert set(with_teams) - set(without) == teams
    for subject, skill in without.items():
        assert with_teams[subject] == pytest.approx(skill, abs=1e-9)
    assert with_teams[key(match, "Red")] != with_teams[key(match, "Blue")]
    difficulty = dict(ItemScore.objects.filter(fit=together).values_list("item", "difficulty"))
    for item, theta in ItemScore.objects.filter(fit=apart).values_list("item", "difficulty"):
        assert difficulty[item] == pytest.approx(theta, abs=1e-9)
