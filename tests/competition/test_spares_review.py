"""Spares and the full-scoresheet review through the services and the live store: the buzz log,
the exports, the fit's input (``selectors.match_play``) and the standings' game result follow a
thrown-out question and a ruling corrected long after; bad input changes nothing."""

from __future__ import annotations

from typing import Any

import pytest
from django.contrib.auth.models import Group

from competition import exports, game, selectors, services, tournaments
from competition.live import store
from competition.models import Buzz, Match, MatchEvent, Outbox, Player
from competition.roles import WRITERS_GROUP
from tests.support.factories import make_packet

pytestmark = pytest.mark.django_db

T0 = 1_700_000_000.0
WHY = "the moderator misheard: it was right"


def run(match: Match, command: Any, now: float, actor: str = "moderator") -> store.Applied:
    return store.apply_command(match_id=match.id, command=command, actor=actor, now=now)


def new_match(played: int, packet_tossups: int, packet_bonuses: int | None = None) -> Match:
    """Red (alice) v Blue (bob), the moderator rules and advances; the match plays the first
    ``played`` tossups and bonuses of a packet of ``packet_tossups``: the rest are its spares."""
    tossups, bonuses = make_packet(packet_tossups, packet_bonuses or packet_tossups)
    m = services.create_match(
        name="spares",
        tossup_ids=[t.id for t in tossups[:played]],
        bonus_ids=[b.id for b in bonuses[:played]],
        preset="naqt",
        teams=["Red", "Blue"],
        config={"wpm": 600, "auto_rule": False, "auto_advance": False},
    )
    services.join_match(code=m.join_code, name="alice", team="Red")
    services.join_match(code=m.join_code, name="bob", team="Blue")
    run(m, game.Start(), T0)
    return m


def seat(match: Match, name: str) -> Player:
    return Player.objects.get(match=match, name=name)


def play(match: Match, player: Player, verdict: str, t: float, last: bool = False) -> None:
    """The tossup read from ``t``: ``player`` buzzes on token 10 (after the power mark), the
    moderator rules ``verdict``; a correct buzz's bonus is skipped, a neg's tossup revealed (the
    match ends after the last tossup's bonus, or at once when no bonus is left)."""
    qid = selectors.load_state(match.id).tossup.question_id
    services.buzz(
        match_id=match.id,
        player_id=player.id,
        question_id=qid,
        token_index=10,
        client_time=None,
        corrected_press_at=None,
        now=t + 1.05,
    )
    run(match, game.Tick(), t + 1.25, actor="driver")
    services.answer(match_id=match.id, player_id=player.id, question_id=qid, text="a guess", now=t + 1.3)
    run(match, game.Rule(verdict), t + 1.4)
    if selectors.load_state(match.id).status == "ended":  # the last tossup, no bonus left
        return
    run(match, game.Skip() if verdict == "accept" else game.Reveal(), t + 1.5)
    if not last:
        run(match, game.Next(), t + 1.6)


def scores(match: Match) -> dict[str, int]:
    return Match.objects.get(pk=match.pk).state["scores"]


def test_tossup_2_corrected_after_tossup_5_moves_the_score_buzz_log_standings_and_fit():
    m = new_match(5, 5)
    alice, bob = seat(m, "alice"), seat(m, "bob")
    red, blue = str(alice.team_id), str(bob.team_id)
    for k, (who, verdict) in enumerate(
        [(alice, "accept"), (bob, "reject"), (alice, "accept"), (bob, "accept"), (alice, "accept")]
    ):
        play(m, who, verdict, T0 + 2 * k, last=k == 4)
    assert scores(m) == {red: 30, blue: 5}
    state = selectors.load_state(m.id)
    assert state.status == "ended"
    second = next(
        i for i, h in enumerate(state.history) if isinstance(h, game.TossupRuling) and h.tossup_index == 1
    )

    applied = services.review_ruling(
        match_id=m.id, history_index=second, ruling="correct", reason=WHY, by="organiser:td", now=T0 + 20
    )
    (reviewed,) = [e for e in applied.events if e["event"] == "ruling_reviewed"]
    assert reviewed["actor"] == "organiser:td" and reviewed["data"]["by"] == "organiser:td"
    assert (reviewed["data"]["points_before"], reviewed["data"]["points"]) == (-5, 10)
    assert scores(m) == {red: 30, blue: 20}
    row = Buzz.objects.get(match=m, tossup_id=state.tossups[1].question_id)
    assert (row.ruling, row.points) == ("correct", 10)
    # The fit after the match reads the corrected response; the standings the corrected score.
    play_log = selectors.match_play(m.id)
    assert (row.tossup_id, bob.id, True) in {(b.tossup_id, b.player_id, b.correct) for b in play_log.buzzes}
    result = tournaments.game_result(Match.objects.get(pk=m.pk), key="g1")
    assert {line.team: line.points for line in result.teams} == {"Red": 30, "Blue": 20}
    assert result.tossups_read == 5
    cycle = exports.play_log(m)[1]
    (response,) = cycle["tossup"]["responses"]
    assert response["corrected"] == {"ruling": "wrong", "points": -5, "reason": WHY, "by": "organiser:td"}


def test_the_seat_credited_is_corrected_in_the_buzz_log():
    m = new_match(2, 2)
    alice, bob = seat(m, "alice"), seat(m, "bob")
    play(m, alice, "accept", T0)
    play(m, bob, "accept", T0 + 2, last=True)
    services.review_ruling(
        match_id=m.id,
        history_index=0,
        player_id=bob.id,
        reason="bob buzzed, not alice",
        by="moderator",
        now=T0 + 5,
    )
    row = Buzz.objects.get(match=m, tossup_id=m.tossup_ids[0])
    assert (row.player_id, row.team_id, row.ruling, row.points) == (bob.id, bob.team_id, "correct", 10)
    assert scores(m) == {str(alice.team_id): 0, str(bob.team_id): 20}


def test_a_thrown_out_tossup_is_out_of_the_scores_the_fit_and_the_qbj_and_shown_as_thrown_out(client):
    m = new_match(2, 3)
    alice, bob = seat(m, "alice"), seat(m, "bob")
    qid = m.tossup_ids[0]
    services.buzz(match_id=m.id, player_id=alice.id, question_id=qid, token_index=10, client_time=None, corrected_press_at=None, now=T0 + 1.05)  # fmt: skip
    run(m, game.Tick(), T0 + 1.25, actor="driver")
    services.answer(match_id=m.id, player_id=alice.id, question_id=qid, text="x", now=T0 + 1.3)
    run(m, game.Rule("accept"), T0 + 1.4)
    assert scores(m)[str(alice.team_id)] == 10

    applied = services.replace_question(
        match_id=m.id, kind="tossup", reason="misread the power clue", now=T0 + 2
    )
    names = [e["event"] for e in applied.events]
    assert names[:4] == ["ruling_undone", "question_replaced", "tossup_started", "tossup_answer"]
    spare = selectors.load_state(m.id).tossup.question_id
    assert spare not in m.tossup_ids  # the packet's third tossup, beyond those the game plays
    assert scores(m)[str(alice.team_id)] == 0
    row = Buzz.objects.get(match=m, tossup_id=qid)
    assert (row.ruling, row.points) == ("thrown_out", 0)  # kept in the buzz log, marked
    # The spare, then the second tossup, are played.
    play(m, bob, "accept", T0 + 2)
    play(m, alice, "accept", T0 + 4, last=True)
    play_log = selectors.match_play(m.id)
    assert qid not in play_log.played_tossup_ids and spare in play_log.played_tossup_ids
    assert all(b.tossup_id != qid for b in play_log.buzzes)
    cycles = exports.play_log(m)
    assert cycles[0]["thrown_out"] == {"reason": "misread the power clue", "spare_id": spare}
    assert cycles[1]["question_id"] == spare and cycles[1]["thrown_out"] is None
    qbj, _ = exports.qbj_match(m)
    assert len(qbj.match_questions) == 2
    assert tournaments.game_result(Match.objects.get(pk=m.pk), key="g").tossups_read == 2
    recap = client.get(f"/match/{m.join_code}/recap/").content.decode()
    assert "thrown out (misread the power clue): a spare was read in its place" in recap


def test_replacing_from_an_empty_spares_list_is_refused_and_changes_nothing():
    m = new_match(2, 2, packet_bonuses=2)
    before = (Match.objects.get(pk=m.pk).seq, MatchEvent.objects.filter(match=m).count(), scores(m))
    for kind in ("tossup", "bonus"):
        with pytest.raises(game.RuleViolation) as err:
            services.replace_question(match_id=m.id, kind=kind, reason="misread", now=T0 + 1)
        assert err.value.code in ("no_spares", "bad_phase")
    assert err.value.code == "bad_phase"  # no bonus is being read
    with pytest.raises(game.RuleViolation) as err:
        services.replace_question(match_id=m.id, kind="tossup", reason="misread", now=T0 + 1)
    assert err.value.code == "no_spares" and "no spare tossup" in str(err.value)
    after = (Match.objects.get(pk=m.pk).seq, MatchEvent.objects.filter(match=m).count(), scores(m))
    assert after == before


def test_a_bonus_is_replaced_from_the_packets_spare_bonuses():
    m = new_match(2, 2, packet_bonuses=3)
    alice = seat(m, "alice")
    qid = m.tossup_ids[0]
    services.buzz(match_id=m.id, player_id=alice.id, question_id=qid, token_index=10, client_time=None, corrected_press_at=None, now=T0 + 1.05)  # fmt: skip
    run(m, game.Tick(), T0 + 1.25, actor="driver")
    services.answer(match_id=m.id, player_id=alice.id, question_id=qid, text="x", now=T0 + 1.3)
    run(m, game.Rule("accept"), T0 + 1.4)
    first = selectors.load_state(m.id).bonus.bonus_id
    services.moderate(
        match_id=m.id, command=game.ReplaceQuestion("bonus", "two answers to part 1"), now=T0 + 2
    )
    state = selectors.load_state(m.id)
    assert state.bonus.bonus_id not in (first, *m.bonus_ids) and state.bonus.team_id == alice.team_id
    assert state.replaced[0]["bonus_id"] == first


# -- the control desk over HTTP ------------------------------------------------------------


def assert_writer_refused(client: Any, user_model: Any, url: str, body: dict[str, Any]) -> None:
    """A writer-only account (the workshop's invited writers) is logged in but no control desk: 403,
    nothing stored."""
    writer = user_model.objects.create_user("writer", password="pw-for-tests-only")
    writer.groups.add(Group.objects.get_or_create(name=WRITERS_GROUP)[0])
    client.force_login(writer)
    seq = Match.objects.get(join_code=url.split("/")[3]).seq
    refused = client.post(url, body, content_type="application/json")
    assert refused.status_code == 403 and refused.json()["code"] == "forbidden"
    assert Match.objects.get(join_code=url.split("/")[3]).seq == seq
    client.logout()


def test_the_control_desk_reviews_a_ruling_and_a_moderator_token_or_bad_body_changes_nothing(
    client, django_user_model
):
    m = new_match(2, 2)
    alice, bob = seat(m, "alice"), seat(m, "bob")
    play(m, alice, "accept", T0)
    play(m, bob, "reject", T0 + 2, last=True)
    url = f"/api/match/{m.join_code}/review"
    body = {"history_index": 1, "ruling": "correct", "reason": "bob was right"}
    seq = Match.objects.get(pk=m.pk).seq
    # Not logged in: a moderator token does not make a control desk.
    refused = client.post(
        url, body, content_type="application/json", HTTP_X_MODERATOR_TOKEN=m.moderator_token
    )
    assert refused.status_code == 403 and refused.json()["code"] == "forbidden"
    assert_writer_refused(client, django_user_model, url, body)
    client.force_login(django_user_model.objects.create_user("td", password="pw-for-tests-only"))
    assert client.post(url, {"reason": "x"}, content_type="application/json").json()["code"] == "malformed"
    bad = client.post(url, {**body, "ruling": "timeout"}, content_type="application/json")
    assert bad.status_code == 400 and bad.json()["code"] == "bad_value"
    assert Match.objects.get(pk=m.pk).seq == seq  # nothing stored
    ok = client.post(url, body, content_type="application/json")
    assert ok.status_code == 200 and ok.json()["event"] == "ruling_reviewed"
    assert ok.json()["scores"] == {str(alice.team_id): 10, str(bob.team_id): 10}
    (row,) = MatchEvent.objects.filter(match=m, event="ruling_reviewed")
    assert row.actor == "organiser:td" and row.payload["reason"] == "bob was right"


# -- a missed buzz added on review (game.AddBuzz) --------------------------------------------


def dead_then_answered(m: Match, alice: Player) -> None:
    """Tossup 0 read out with nobody buzzing (dead); tossup 1 alice's (+10, bonus skipped); ended."""
    state = selectors.load_state(m.id)
    words = len(state.tossups[0].tokens)
    run(m, game.Tick(), T0 + 30, actor="driver")  # read out and past the dead time
    assert selectors.load_state(m.id).tossup.outcome == "dead" and words > 3
    run(m, game.Next(), T0 + 31)
    play(m, alice, "accept", T0 + 32, last=True)
    assert selectors.load_state(m.id).status == "ended"


def test_a_missed_buzz_added_after_the_end_moves_score_buzz_log_standings_fit_and_exports():
    m = new_match(2, 2)
    alice, bob = seat(m, "alice"), seat(m, "bob")
    red, blue = str(alice.team_id), str(bob.team_id)
    dead_then_answered(m, alice)
    assert scores(m) == {red: 10, blue: 0}
    jobs = Outbox.objects.filter(match=m).count()
    qid = selectors.load_state(m.id).tossups[0].question_id

    applied = services.add_buzz(
        match_id=m.id, tossup_index=0, player_id=bob.id, ruling="correct", token_index=2,
        reason="bob's buzz was missed", by="organiser:td", now=T0 + 40,
    )  # fmt: skip
    (added,) = [e for e in applied.events if e["event"] == game.EventName.BUZZ_ADDED]
    assert added["actor"] == "organiser:td" and added["data"]["points"] == 15  # a power
    assert scores(m) == {red: 10, blue: 15}
    row = Buzz.objects.get(match=m, tossup_id=qid)
    assert (row.player_id, row.ruling, row.points, row.token_index, row.added_by_review) == (
        bob.id, "correct", 15, 2, True,
    )  # fmt: skip
    assert Outbox.objects.filter(match=m).count() > jobs  # the fits follow
    assert (qid, bob.id, True) in {
        (b.tossup_id, b.player_id, b.correct) for b in selectors.match_play(m.id).buzzes
    }
    result = tournaments.game_result(Match.objects.get(pk=m.pk), key="g1")
    assert {line.team: line.points for line in result.teams} == {"Red": 10, "Blue": 15}
    cycle = exports.play_log(m)[0]
    (response,) = cycle["tossup"]["responses"]
    assert response["addedByReview"] == {"reason": "bob's buzz was missed", "by": "organiser:td"}
    assert cycle["tossup"]["outcome"] == "answered" and response["points"] == 15

    # the same buzz again: refused, nothing stored
    seq = Match.objects.get(pk=m.pk).seq
    with pytest.raises(game.RuleViolation) as err:
        services.add_buzz(
            match_id=m.id, tossup_index=0, player_id=bob.id, ruling="correct", token_index=2,
            reason="again", by="organiser:td", now=T0 + 41,
        )  # fmt: skip
    assert err.value.code == "team_already_buzzed"
    assert Match.objects.get(pk=m.pk).seq == seq and Buzz.objects.filter(match=m, tossup_id=qid).count() == 1


def test_the_control_desk_adds_a_missed_buzz_and_a_moderator_token_or_bad_body_changes_nothing(
    client, django_user_model
):
    m = new_match(2, 2)
    alice, bob = seat(m, "alice"), seat(m, "bob")
    dead_then_answered(m, alice)
    url = f"/api/match/{m.join_code}/review/buzz"
    body = {"tossup_index": 0, "player_id": bob.id, "ruling": "wrong", "token_index": 1, "reason": "missed"}
    seq = Match.objects.get(pk=m.pk).seq
    refused = client.post(
        url, body, content_type="application/json", HTTP_X_MODERATOR_TOKEN=m.moderator_token
    )
    assert refused.status_code == 403 and refused.json()["code"] == "forbidden"
    assert_writer_refused(client, django_user_model, url, body)
    client.force_login(django_user_model.objects.create_user("td", password="pw-for-tests-only"))
    assert client.post(url, {"reason": "x"}, content_type="application/json").json()["code"] == "malformed"
    later = client.post(url, {**body, "tossup_index": 5}, content_type="application/json")
    assert later.status_code == 400 and later.json()["code"] == "not_correctable"
    unknown = client.post(url, {**body, "player_id": 99999}, content_type="application/json")
    assert unknown.status_code == 400 and unknown.json()["code"] == "unknown_player"
    assert Match.objects.get(pk=m.pk).seq == seq  # nothing stored
    ok = client.post(url, body, content_type="application/json")
    assert ok.status_code == 200 and ok.json()["event"] == "buzz_added" and ok.json()["points"] == -5
    assert ok.json()["scores"] == {str(alice.team_id): 10, str(bob.team_id): -5}
    (row,) = MatchEvent.objects.filter(match=m, event="buzz_added")
    assert row.actor == "organiser:td" and row.payload["reason"] == "missed"
    assert client.post(url, body, content_type="application/json").json()["code"] == "team_already_buzzed"
