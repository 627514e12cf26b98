"""The service layer (the one door): events projected into the buzz log, corrections,
flags, seats, match creation and the event log's sequence numbers. Time is driven by
explicit ``now`` values (the engine is pure), so every assertion is deterministic."""

from __future__ import annotations

import json
from io import StringIO
from typing import Any

import pytest
from django.core.management import call_command
from django.core.management.base import CommandError

from competition import exports, game, selectors, services, signals
from competition.live import store
from competition.models import BonusPartResult, Buzz, Flag, Match, MatchEvent, Outbox, Player, Team
from tests.support.factories import make_match, make_packet

pytestmark = pytest.mark.django_db

T0 = 1_700_000_000.0
WORD = 0.1  # 600 wpm (the factory's speed): token k is revealed at T0 + k * WORD
WINDOW = 0.150  # MatchConfig.collection_window


def run(match: Match, command: Any, now: float, actor: str = "moderator") -> store.Applied:
    return store.apply_command(match_id=match.id, command=command, actor=actor, now=now)


def press(match: Match, player: Player, token_index: int, now: float, **kw: Any) -> store.Applied:
    return services.buzz(
        match_id=match.id,
        player_id=player.id,
        question_id=match.tossup_ids[0],
        token_index=token_index,
        client_time=kw.get("client_time"),
        corrected_press_at=kw.get("corrected_press_at"),
        delay_bound=kw.get("delay_bound", 0.0),
        now=now,
    )


def reply(match: Match, player: Player, text: str, now: float) -> store.Applied:
    return services.answer(
        match_id=match.id, player_id=player.id, question_id=match.tossup_ids[0], text=text, now=now
    )


def log(match: Match, event: str | None = None) -> list[MatchEvent]:
    rows = MatchEvent.objects.filter(match=match).order_by("seq")
    return list(rows.filter(event=event) if event else rows)


def seats(match: Match) -> dict[str, Player]:
    return {p.name: p for p in Player.objects.filter(match=match)}


def scores(match: Match) -> dict[str, int]:
    return Match.objects.get(pk=match.pk).state["scores"]


@pytest.fixture
def match() -> Match:
    """Red (alice, amy), Blue (bob), a light bot team; auto-ruling; started at T0."""
    m = make_match()
    run(m, game.Start(), T0)
    return m


@pytest.fixture
def moderated() -> Match:
    """As ``match`` but the moderator rules every answer (no auto-ruling)."""
    m = make_match(config={"auto_rule": False})
    run(m, game.Start(), T0)
    return m


# -- projection of events into the buzz log -------------------------------------------------


def test_a_won_race_writes_one_buzz_row_with_times_race_record_and_eligible_seats(match):
    p = seats(match)
    # A 250 ms link: token 3 (shown at T0+0.3) may be the last the tablet had shown.
    press(match, p["alice"], 3, T0 + 0.35, client_time=42.0, corrected_press_at=T0 + 0.34, delay_bound=0.25)
    assert not Buzz.objects.filter(match=match).exists()  # the collection window is still open

    run(match, game.Tick(), T0 + 0.35 + WINDOW + 0.01, actor="driver")
    (row,) = Buzz.objects.filter(match=match)
    (race,) = log(match, "race")
    (won,) = log(match, "buzz")
    shown = next(e for e in log(match, "words") if e.payload["start"] <= 3 < e.payload["start"] + 4)
    assert (row.player_id, row.team_id, row.kind) == (p["alice"].id, p["alice"].team_id, "human")
    assert (row.token_index, row.token_count) == (3, 20)
    assert row.revealed_at == pytest.approx(shown.payload["revealed_at"]) == pytest.approx(T0 + 3 * WORD)
    assert row.received_at == row.accepted_at == T0 + 0.35
    assert (row.client_time, row.corrected_press_at) == (42.0, T0 + 0.34)
    assert sorted(row.eligible) == sorted(pl.id for pl in p.values())
    assert row.race == race.payload and race.audience == "moderator"
    assert race.payload["winner"] == p["alice"].id
    assert row.seq == won.seq and (row.ruling, row.verdict, row.points) == ("", "", 0)


def test_an_auto_ruled_answer_records_guess_verdict_ruling_points_and_time(match):
    p = seats(match)
    press(match, p["alice"], 3, T0 + 0.35)
    run(match, game.Tick(), T0 + 0.6, actor="driver")
    reply(match, p["alice"], "moby dick", T0 + 1.5)

    row = Buzz.objects.get(match=match)
    assert (row.guess, row.verdict, row.ruling, row.points) == ("moby dick", "accept", "correct", 15)
    assert "strict match" in row.verdict_reason and row.ruled_at == T0 + 1.5
    assert scores(match)[str(p["alice"].team_id)] == 15
    assert [e.event for e in log(match)][-3:] == ["bonus_started", "bonus_answer_lines", "bonus_part"]


def test_the_judges_verdict_is_kept_when_the_moderator_rules_otherwise(moderated):
    p = seats(moderated)
    press(moderated, p["bob"], 2, T0 + 0.25)
    run(moderated, game.Tick(), T0 + 0.5, actor="driver")
    reply(moderated, p["bob"], "moby dick", T0 + 1.0)
    row = Buzz.objects.get(match=moderated)
    assert (row.verdict, row.ruling) == ("accept", "")  # waiting for the moderator
    (given,) = log(moderated, "answer_given")
    assert given.audience == "moderator" and given.payload["verdict"] == "accept"

    run(moderated, game.Rule("reject"), T0 + 2.0)
    row.refresh_from_db()
    assert (row.guess, row.verdict, row.ruling, row.points) == ("moby dick", "accept", "wrong", -5)
    assert row.ruled_at == T0 + 2.0


def test_a_timed_out_buzz_is_ruled_timeout_by_the_driver(match):
    p = seats(match)
    press(match, p["bob"], 1, T0 + 0.15)
    run(match, game.Tick(), T0 + 0.4, actor="driver")
    answer_deadline = log(match, "buzz")[0].payload["answer_deadline"]
    run(match, game.Tick(), answer_deadline + 0.01, actor="driver")
    row = Buzz.objects.get(match=match)
    assert (row.ruling, row.points, row.guess) == ("timeout", -5, "")
    assert row.ruled_at == answer_deadline


def test_an_answer_reaching_a_match_nobody_drove_keeps_its_answer_time(match):
    """The server died in the answer window and the tablet's answer arrives before any
    driver took over: the clock stopped when the match was last driven, so the answer is
    judged instead of the overdue timeout firing (−5)."""
    p = seats(match)
    press(match, p["bob"], 1, T0 + 0.15)
    run(match, game.Tick(), T0 + 0.4, actor="driver")  # the race closes: bob answers
    (won,) = log(match, "buzz")
    left = won.payload["answer_deadline"] - (T0 + 0.4)
    back = won.payload["answer_deadline"] + 20.0  # well past the deadline, nobody drove
    reply(match, p["bob"], "moby dick", back)
    row = Buzz.objects.get(match=match)
    assert (row.ruling, row.points) == ("correct", 15)
    paused, resumed = log(match, "paused")[-1], log(match, "resumed")[-1]
    assert paused.seq < resumed.seq < log(match, "buzz_ruled")[0].seq
    state = Match.objects.get(pk=match.pk).state
    assert not state["paused"]
    # The pause started at the last drive (T0 + 0.4), so the answer window kept all ``left``
    # seconds it had then.
    assert resumed.payload["shift"] == pytest.approx(back - (T0 + 0.4))
    assert not log(match, "buzz_ruled")[0].payload.get("timeout") and left > 0


def test_bonus_parts_are_logged_with_verdict_ruling_and_points(match):
    p = seats(match)
    press(match, p["alice"], 3, T0 + 0.35)
    run(match, game.Tick(), T0 + 0.6, actor="driver")
    reply(match, p["alice"], "moby dick", T0 + 1.0)
    bonus_id = match.bonus_ids[0]
    for part, text, now in [(0, "bonusanswer0", 2.0), (1, "nonsense", 3.0)]:
        services.bonus_answer(
            match_id=match.id, player_id=p["amy"].id, bonus_id=bonus_id, part=part, text=text, now=T0 + now
        )
    deadline = log(match, "bonus_part")[-1].payload["answer_deadline"]
    run(match, game.Tick(), deadline + 0.01, actor="driver")

    rows = list(BonusPartResult.objects.filter(match=match).order_by("part"))
    got = [(r.part, r.guess, r.verdict, r.ruling, r.points, r.team_id) for r in rows]
    red = p["alice"].team_id
    assert got == [
        (0, "bonusanswer0", "accept", "correct", 10, red),
        (1, "nonsense", "reject", "wrong", 0, red),
        (2, "", "", "timeout", 0, red),
    ]
    ruled = log(match, "bonus_part_ruled")
    assert [r.seq for r in rows] == [e.seq for e in ruled]
    assert scores(match)[str(red)] == 25


def test_a_moderator_ruled_bonus_part_keeps_the_judges_verdict(moderated):
    p = seats(moderated)
    press(moderated, p["alice"], 3, T0 + 0.35)
    run(moderated, game.Tick(), T0 + 0.6, actor="driver")
    reply(moderated, p["alice"], "moby dick", T0 + 1.0)
    run(moderated, game.Rule("accept"), T0 + 1.5)
    services.bonus_answer(
        match_id=moderated.id,
        player_id=p["alice"].id,
        bonus_id=moderated.bonus_ids[0],
        part=0,
        text="something else",
        now=T0 + 2.0,
    )
    assert not BonusPartResult.objects.filter(match=moderated).exists()
    run(moderated, game.Rule("accept"), T0 + 3.0)
    row = BonusPartResult.objects.get(match=moderated)
    assert (row.guess, row.verdict, row.ruling, row.points) == ("something else", "reject", "correct", 10)


# -- corrections ----------------------------------------------------------------------------


def test_undo_marks_the_buzz_undone_zeroes_its_points_and_restores_the_scores(match):
    p = seats(match)
    blue = str(p["bob"].team_id)
    press(match, p["bob"], 2, T0 + 0.25)
    run(match, game.Tick(), T0 + 0.5, actor="driver")
    reply(match, p["bob"], "gatsby", T0 + 1.0)
    assert scores(match)[blue] == -5
    assert Buzz.objects.get(match=match).ruling == "wrong"

    run(match, game.Undo(), T0 + 1.2)
    row = Buzz.objects.get(match=match)
    assert (row.ruling, row.points, row.verdict) == ("undone", 0, "reject")
    (undone,) = log(match, "ruling_undone")
    assert undone.payload["points_reversed"] == -5 and undone.payload["player_id"] == p["bob"].id
    assert undone.payload["scores"][blue] == 0 == scores(match)[blue]
    # The tossup is still live and Blue may buzz on it again.
    press(match, p["bob"], 9, T0 + 1.3)
    assert log(match, "buzz_received")[-1].payload["player_id"] == p["bob"].id


def test_undo_of_a_bonus_part_marks_that_result_undone(match):
    p = seats(match)
    red = str(p["alice"].team_id)
    press(match, p["alice"], 3, T0 + 0.35)
    run(match, game.Tick(), T0 + 0.6, actor="driver")
    reply(match, p["alice"], "moby dick", T0 + 1.0)
    services.bonus_answer(
        match_id=match.id,
        player_id=p["alice"].id,
        bonus_id=match.bonus_ids[0],
        part=0,
        text="bonusanswer0",
        now=T0 + 2.0,
    )
    assert scores(match)[red] == 25
    run(match, game.Undo(), T0 + 2.5)
    assert scores(match)[red] == 15
    assert BonusPartResult.objects.get(match=match, part=0).ruling == "undone"
    assert BonusPartResult.objects.get(match=match, part=0).points == 0
    assert Buzz.objects.get(match=match).ruling == "correct"  # only the last ruling is reversed
    (undone,) = log(match, "ruling_undone")
    assert undone.payload["question_id"] is None and undone.payload["part"] == 0


def test_nothing_to_undo_is_refused_and_stores_nothing(match):
    head = Match.objects.get(pk=match.pk).seq
    with pytest.raises(game.RuleViolation) as exc:
        run(match, game.Undo(), T0 + 0.05)
    assert exc.value.code == "nothing_to_undo"
    assert Match.objects.get(pk=match.pk).seq == head == len(log(match))


def test_adjust_changes_the_score_and_logs_the_reason(match):
    blue = Team.objects.get(match=match, name="Blue")
    applied = run(match, game.Adjust(blue.id, -5, "protest upheld"), T0 + 0.05)
    (adj,) = log(match, "points_adjusted")
    assert adj.payload == {
        "team_id": blue.id,
        "points": -5,
        "reason": "protest upheld",
        "scores": adj.payload["scores"],
    }
    assert adj.payload["scores"][str(blue.id)] == -5 == scores(match)[str(blue.id)]
    assert applied.seq == adj.seq and applied.events[-1]["actor"] == "moderator"
    with pytest.raises(game.RuleViolation) as exc:
        run(match, game.Adjust(999_999, 5, "nobody"), T0 + 0.06)
    assert exc.value.code == "unknown_team"
    assert len(log(match, "points_adjusted")) == 1


# -- flags ----------------------------------------------------------------------------------


def flag(match: Match, question_id: int, problem: str = "ambiguity") -> store.Applied:
    return services.flag_question(
        match_id=match.id,
        question_id=question_id,
        problem=problem,
        comment="two answers fit",
        reporter="alice",
        role="player",
    )


def test_a_question_can_be_flagged_only_after_its_tossup_ended(match):
    qid = match.tossup_ids[0]
    with pytest.raises(services.ServiceError) as exc:
        flag(match, qid)
    assert exc.value.code == "invalid"
    assert not Flag.objects.exists() and not log(match, "question_flagged")

    run(match, game.Skip(), T0 + 0.5)
    head = Match.objects.get(pk=match.pk).seq
    applied = flag(match, qid)
    (row,) = Flag.objects.all()
    assert (row.tossup_id, row.match_id, row.problem, row.reporter, row.role) == (
        qid,
        match.id,
        "ambiguity",
        "alice",
        "player",
    )
    (ev,) = log(match, "question_flagged")
    assert ev.audience == "moderator" and ev.seq == head + 1 == applied.seq
    assert ev.payload == {"question_id": qid, "problem": "ambiguity", "reporter": "alice"}
    # The second tossup has not been played: refused.
    with pytest.raises(services.ServiceError):
        flag(match, match.tossup_ids[1])


def test_an_unknown_problem_type_is_refused(match):
    run(match, game.Skip(), T0 + 0.5)
    with pytest.raises(services.ServiceError) as exc:
        flag(match, match.tossup_ids[0], problem="too_hard")
    assert exc.value.code == "invalid" and not Flag.objects.exists()


# -- seats ----------------------------------------------------------------------------------


def test_a_seat_comes_back_with_its_token_even_after_the_start_never_by_name_alone(match):
    alice = seats(match)["alice"]
    with pytest.raises(services.ServiceError) as exc:
        services.join_match(code=match.join_code, name="alice", team="Red")
    assert exc.value.code == "seat_taken"
    again = services.join_match(code=match.join_code.lower(), name=" alice ", team="Blue", secret=alice.token)
    assert (again.id, again.token, again.team_id) == (alice.id, alice.token, alice.team_id)
    assert Player.objects.filter(match=match, name="alice").count() == 1


def test_a_reclaim_code_moves_the_seat_once_and_retires_the_old_token(match):
    alice = seats(match)["alice"]
    code = services.issue_reclaim_code(match_id=match.id, player_id=alice.id)
    moved = services.join_match(code=match.join_code, name="alice", team="Blue", secret=code.lower())
    assert moved.id == alice.id and moved.team_id == alice.team_id and moved.token != alice.token
    assert Player.objects.get(id=alice.id).reclaim_code == ""
    for stale in (code, alice.token):
        with pytest.raises(services.ServiceError) as exc:
            services.join_match(code=match.join_code, name="alice", team="Red", secret=stale)
        assert exc.value.code == "seat_taken"
    bot = match.players.get(kind=Player.Kind.BOT)
    with pytest.raises(services.ServiceError) as exc:
        services.issue_reclaim_code(match_id=match.id, player_id=bot.id)
    assert exc.value.code == "not_found" and Player.objects.get(id=bot.id).reclaim_code == ""


def test_new_players_cannot_join_a_started_match(match):
    with pytest.raises(services.ServiceError) as exc:
        services.join_match(code=match.join_code, name="carol", team="Red")
    assert exc.value.code == "closed"
    assert not Player.objects.filter(name="carol").exists()


def test_bot_teams_are_not_joinable_and_bad_seats_are_refused():
    m = make_match()
    cases = [
        ({"code": m.join_code, "name": "carol", "team": "bot"}, "invalid"),  # the bot's team
        ({"code": m.join_code, "name": "carol", "team": "Green"}, "invalid"),
        ({"code": m.join_code, "name": "bot", "team": "Red"}, "invalid"),  # the bot's name is taken
        ({"code": m.join_code, "name": "   ", "team": "Red"}, "invalid"),
        ({"code": "ZZZZZZ", "name": "carol", "team": "Red"}, "not_found"),
    ]
    before = Player.objects.count()
    for kwargs, code in cases:
        with pytest.raises(services.ServiceError) as exc:
            services.join_match(**kwargs)
        assert exc.value.code == code, kwargs
    assert Player.objects.count() == before


def test_a_lobby_join_adds_the_seat_to_the_engine_state():
    m = make_match()
    carol = services.join_match(code=m.join_code, name="carol", team="Blue")
    state = Match.objects.get(pk=m.pk).spec
    assert {
        "player_id": carol.id,
        "team_id": carol.team_id,
        "name": "carol",
        "kind": "human",
        "weight_class": "",
        "buzz_mode": "autonomous",
        "min_token": 0,
    } in state["players"]


def test_a_lobby_join_is_one_player_joined_event_with_its_own_seq_and_no_token(
    django_capture_on_commit_callbacks,
):
    m = make_match()
    published: list[list[dict[str, Any]]] = []

    def receiver(sender: Any, match_id: int, events: list[dict[str, Any]], **kw: Any) -> None:
        if match_id == m.id:
            published.append(events)

    signals.events_committed.connect(receiver, weak=False, dispatch_uid="test-lobby-join")
    before = Match.objects.get(pk=m.pk)
    try:
        with django_capture_on_commit_callbacks(execute=True):
            carol = services.join_match(code=m.join_code, name="carol", team="Blue")
    finally:
        signals.events_committed.disconnect(dispatch_uid="test-lobby-join")
    after = Match.objects.get(pk=m.pk)
    [row] = log(m)[before.seq :]
    assert (row.seq, row.event, row.audience, row.actor) == (
        before.seq + 1,
        "player_joined",
        "all",
        f"player:{carol.id}",
    )
    assert row.payload == {
        "player_id": carol.id,
        "team_id": carol.team_id,
        "name": "carol",
        "kind": "human",
        "weight_class": "",
        "buzz_mode": "autonomous",
        "min_token": 0,
    }
    assert carol.token not in json.dumps(row.payload)
    assert after.seq == before.seq + 1 and published == [[store.event_dict(row)]]
    # The stored state is the state before the join with that event applied: one state per seq.
    old_state = selectors.match_state(before)
    for audience in ("moderator", "all"):
        event = game.Event(row.event, row.payload, row.audience)
        assert game.apply_event(game.view(old_state, audience), event) == game.view(
            selectors.match_state(after), audience
        )


def test_a_refused_join_stores_no_seat_and_no_event():
    m = make_match()
    before = Match.objects.get(pk=m.pk)
    with pytest.raises(services.ServiceError):
        services.join_match(code=m.join_code, name="alice", team="Red")  # seated, no secret
    with pytest.raises(services.ServiceError):
        services.join_match(code=m.join_code, name="dora", team="Green")  # no such team
    after = Match.objects.get(pk=m.pk)
    assert (after.seq, after.state) == (before.seq, before.state)
    assert Player.objects.filter(match=m).count() == len(before.spec["players"])


def test_an_organiser_seats_a_bot_while_the_match_runs_and_it_races(
    match, django_capture_on_commit_callbacks
):
    """Seats after the start are bots the organiser adds: one ``player_joined`` event with its own
    seq (through the one door), every view follows it, and the new seat buzzes like any other."""
    published: list[list[dict[str, Any]]] = []

    def receiver(sender: Any, match_id: int, events: list[dict[str, Any]], **kw: Any) -> None:
        if match_id == match.id:
            published.append(events)

    blue, bob = match.teams.get(name="Blue"), seats(match)["bob"]
    before = Match.objects.get(pk=match.pk)
    assert before.status == Match.Status.RUNNING
    signals.events_committed.connect(receiver, weak=False, dispatch_uid="test-seat-bot")
    try:
        with django_capture_on_commit_callbacks(execute=True):
            robo = services.seat_bot(
                match_id=match.id, name="Robo", team_id=blue.id, weight_class="mid", now=T0 + 0.05
            )
    finally:
        signals.events_committed.disconnect(dispatch_uid="test-seat-bot")
    after = Match.objects.get(pk=match.pk)
    [row] = log(match)[before.seq :]
    assert (row.seq, row.event, row.audience, row.actor) == (
        before.seq + 1,
        "player_joined",
        "all",
        "moderator",
    )
    assert row.payload == {
        "player_id": robo.id,
        "team_id": blue.id,
        "name": "Robo",
        "kind": "bot",
        "weight_class": "mid",
        "buzz_mode": "autonomous",
        "min_token": 0,
    }
    assert robo.token not in json.dumps(row.payload) and published == [[store.event_dict(row)]]
    old_state = selectors.match_state(before)
    for audience in ("moderator", "all", f"player:{bob.id}"):
        event = game.Event(row.event, row.payload, row.audience)
        assert game.apply_event(game.view(old_state, audience), event) == game.view(
            selectors.match_state(after), audience
        )
    # The new seat plays: it wins the race on this tossup for Blue.
    press(match, robo, 3, T0 + 0.35)
    released = T0 + 3 * WORD + game.MatchConfig.from_dict(after.config).reaction_delay  # a bot's delay
    run(match, game.Tick(), max(T0 + 0.35, released) + WINDOW + 0.01, actor="driver")
    (won,) = log(match, "buzz")
    assert (won.payload["player_id"], won.payload["team_id"]) == (robo.id, blue.id)


def test_a_bot_on_a_team_of_its_own_joins_a_running_match_and_scores(match):
    before = Match.objects.get(pk=match.pk)
    robo = services.seat_bot(
        match_id=match.id, name="Robo", team_id=None, weight_class="light", now=T0 + 0.05
    )
    team = Team.objects.get(pk=robo.team_id)
    assert (team.match_id, team.name, team.kind) == (match.id, "Robo", "bot")
    added, joined = log(match)[before.seq :]
    assert (added.event, added.payload, added.seq) == (
        "team_added",
        {"team_id": team.id, "name": "Robo", "kind": "bot"},
        before.seq + 1,
    )
    assert (joined.event, joined.payload["team_id"], joined.seq) == ("player_joined", team.id, before.seq + 2)
    assert scores(match)[str(team.id)] == 0
    old_state = selectors.match_state(before)
    after = selectors.match_state(Match.objects.get(pk=match.pk))
    for audience in ("moderator", "all"):
        view = game.view(old_state, audience)
        for row in (added, joined):
            view = game.apply_event(view, game.Event(row.event, row.payload, row.audience))
        assert view == game.view(after, audience)
    # It races and scores for its own team.
    press(match, robo, 3, T0 + 0.35)
    released = T0 + 3 * WORD + game.MatchConfig.from_dict(match.config).reaction_delay
    run(match, game.Tick(), max(T0 + 0.35, released) + WINDOW + 0.01, actor="driver")
    reply(match, robo, "Moby-Dick", T0 + 1.5)
    assert scores(match)[str(team.id)] > 0
    with pytest.raises(services.ServiceError) as err:  # a second team of that name
        services.seat_bot(match_id=match.id, name="Red", team_id=None, weight_class="light", now=T0 + 2)
    assert err.value.code == "invalid"


def test_a_refused_bot_seat_stores_no_seat_and_no_event(match):
    blue = match.teams.get(name="Blue")
    before = Match.objects.get(pk=match.pk)
    refusals = [
        ({"name": "bob"}, "invalid"),  # a seat's name
        ({"name": " "}, "invalid"),
        ({"weight_class": "huge"}, "invalid"),
        ({"buzz_mode": "chatty"}, "invalid"),
        ({"team_id": -1}, "not_found"),
        ({"match_id": -1}, "not_found"),
    ]
    for change, code in refusals:
        kwargs = {"match_id": match.id, "name": "Robo", "team_id": blue.id, "weight_class": "light", **change}
        with pytest.raises(services.ServiceError) as err:
            services.seat_bot(**kwargs, now=T0 + 0.05)
        assert err.value.code == code, change
    run(match, game.End(), T0 + 1)
    ended = Match.objects.get(pk=match.pk)
    with pytest.raises(services.ServiceError) as err:
        services.seat_bot(match_id=match.id, name="Robo", team_id=blue.id, weight_class="light", now=T0 + 2)
    assert err.value.code == "closed"
    assert Match.objects.get(pk=match.pk).seq == ended.seq > before.seq
    assert not Player.objects.filter(match=match, name="Robo").exists()


def test_humans_still_join_only_in_the_lobby(match):
    with pytest.raises(game.RuleViolation) as err:
        run(match, game.SeatPlayer(9999, match.teams.get(name="Blue").id, "late"), T0 + 0.05)
    assert err.value.code == "bad_phase"


# -- creating matches -----------------------------------------------------------------------


@pytest.mark.parametrize(
    ("kwargs", "code"),
    [
        ({"preset": "no-such-preset"}, "unknown_preset"),
        ({"tossup_ids": []}, "invalid"),
        ({"tossup_ids": [987_654]}, "invalid"),
        ({"teams": ["Red", "Red"]}, "invalid"),
        ({"bots": [{"name": "Red", "weight_class": "mid"}]}, "invalid"),
    ],
)
def test_create_match_refuses_bad_requests_and_creates_nothing(kwargs, code):
    tossups, _ = make_packet()
    request = {"name": "m", "tossup_ids": [t.id for t in tossups], "teams": ["Red", "Blue"], **kwargs}
    with pytest.raises(services.ServiceError) as exc:
        services.create_match(**request)
    assert exc.value.code == code
    assert not Match.objects.exists() and not Team.objects.exists()


def test_create_match_seats_bots_on_their_own_teams_and_drops_unknown_bonuses():
    tossups, bonuses = make_packet(n_tossups=2, n_bonuses=1)
    m = services.create_match(
        name="m",
        tossup_ids=[t.id for t in tossups],
        bonus_ids=[bonuses[0].id, 987_654],
        teams=["Red"],
        bots=[{"name": "qanta", "weight_class": "heavy"}],
    )
    assert m.status == Match.Status.LOBBY and m.bonus_ids == [bonuses[0].id]
    bot = Player.objects.get(match=m, kind=Player.Kind.BOT)
    assert (bot.team.name, bot.team.kind, bot.weight_class) == ("qanta", Team.Kind.BOT, "heavy")
    assert [t["name"] for t in m.spec["teams"]] == ["Red", "qanta"]


# -- the event log --------------------------------------------------------------------------


def test_a_whole_match_has_strictly_increasing_gapless_seqs(match):
    p = seats(match)
    heads = []
    steps = [
        lambda: press(match, p["bob"], 2, T0 + 0.25),
        lambda: run(match, game.Tick(), T0 + 0.5, actor="driver"),
        lambda: reply(match, p["bob"], "gatsby", T0 + 1.0),
        lambda: press(match, p["alice"], 12, T0 + 1.3),
        lambda: run(match, game.Tick(), T0 + 1.6, actor="driver"),
        lambda: reply(match, p["alice"], "moby dick", T0 + 2.0),
        lambda: run(match, game.Adjust(p["bob"].team_id, 5, "fix"), T0 + 2.1),
        lambda: run(match, game.Skip(), T0 + 2.2),
        lambda: run(match, game.Tick(), T0 + 5.0, actor="driver"),
        lambda: run(match, game.End(), T0 + 5.5),
    ]
    for step in steps:
        heads.append(step().seq)
    rows = log(match)
    assert [r.seq for r in rows] == list(range(1, len(rows) + 1))
    assert heads == sorted(heads) and heads[-1] == rows[-1].seq == Match.objects.get(pk=match.pk).seq
    assert rows[-1].event == "match_ended"
    assert Match.objects.get(pk=match.pk).status == Match.Status.ENDED


def test_applied_events_are_the_stored_rows_with_the_actor(match):
    applied = run(match, game.Tick(), T0 + 0.35, actor="driver")
    stored = log(match)[-len(applied.events) :]
    assert [(e["seq"], e["event"], e["data"], e["audience"]) for e in applied.events] == [
        (r.seq, r.event, r.payload, r.audience) for r in stored
    ]
    assert {e["actor"] for e in applied.events} == {"driver"}
    assert applied.next_deadline == pytest.approx(T0 + 4 * WORD)


def test_every_acknowledged_buzz_is_logged_even_when_it_loses_the_race(match):
    p = seats(match)
    run(match, game.Tick(), T0 + 0.55, actor="driver")
    press(match, p["alice"], 5, T0 + 0.6, delay_bound=0.3)
    # Bob: later, inside the window, on an earlier word (both on 300 ms links): wins.
    press(match, p["bob"], 3, T0 + 0.65, delay_bound=0.3)
    run(match, game.Tick(), T0 + 0.9, actor="driver")

    received = log(match, "buzz_received")
    assert [(e.payload["player_id"], e.payload["token_index"], e.audience) for e in received] == [
        (p["alice"].id, 5, "moderator"),
        (p["bob"].id, 3, "moderator"),
    ]
    assert [e.payload["received_at"] for e in received] == [T0 + 0.6, T0 + 0.65]
    (race,) = log(match, "race")
    assert [c["player_id"] for c in race.payload["candidates"]] == [p["bob"].id, p["alice"].id]
    (lost,) = log(match, "buzz_lost")
    assert lost.audience == f"player:{p['alice'].id}" and lost.payload["reason"] == "outraced"
    assert list(Buzz.objects.filter(match=match).values_list("player_id", flat=True)) == [p["bob"].id]


@pytest.mark.parametrize(
    ("who", "token", "reason"),
    [("alice", 0, "wrong_question"), ("amy", 1, "team_already_buzzed"), ("bob", 1, "locked_out")],
)
def test_a_refused_command_stores_nothing(match, who, token, reason):
    p = seats(match)
    press(match, p["alice"], 1, T0 + 0.15)
    run(match, game.Tick(), T0 + 0.4, actor="driver")
    before = Match.objects.get(pk=match.pk)
    n_events, n_buzzes = len(log(match)), Buzz.objects.count()
    qid = match.tossup_ids[1] if reason == "wrong_question" else match.tossup_ids[0]
    with pytest.raises(game.RuleViolation) as exc:
        services.buzz(
            match_id=match.id,
            player_id=p[who].id,
            question_id=qid,
            token_index=token,
            client_time=None,
            corrected_press_at=None,
            now=T0 + 0.45,
        )
    assert exc.value.code == reason
    after = Match.objects.get(pk=match.pk)
    assert (after.seq, after.state) == (before.seq, before.state)
    assert (len(log(match)), Buzz.objects.count()) == (n_events, n_buzzes)


def test_a_buzz_before_the_start_is_refused_and_stores_nothing():
    m = make_match()
    alice = seats(m)["alice"]
    joined = Match.objects.get(pk=m.pk).seq  # one player_joined per seat
    with pytest.raises(game.RuleViolation) as exc:
        press(m, alice, 0, T0)
    assert exc.value.code == "not_live"
    assert {e.event for e in log(m)} == {"player_joined"} and Match.objects.get(pk=m.pk).seq == joined == 3


def test_an_answer_out_of_turn_is_refused_and_records_no_verdict(match):
    p = seats(match)
    press(match, p["alice"], 1, T0 + 0.15)
    run(match, game.Tick(), T0 + 0.4, actor="driver")
    head = Match.objects.get(pk=match.pk).seq
    with pytest.raises(game.RuleViolation) as exc:
        reply(match, p["bob"], "moby dick", T0 + 0.5)
    assert exc.value.code == "not_your_buzz"
    assert Match.objects.get(pk=match.pk).seq == head
    assert Buzz.objects.get(match=match).verdict == ""


def test_an_editor_flags_any_tossup_and_bad_flags_are_refused():
    tossups, _ = make_packet(n_tossups=1, n_bonuses=0)
    out = StringIO()
    call_command(
        "flag_question", str(tossups[0].id), "--problem", "ambiguity", "--comment", "two answers", stdout=out
    )
    flag = Flag.objects.get(tossup=tossups[0])
    assert (flag.role, flag.problem, flag.comment, flag.match) == ("editor", "ambiguity", "two answers", None)
    assert "ambiguity" in out.getvalue()
    with pytest.raises(CommandError, match="no tossup"):
        call_command("flag_question", "999999", "--problem", "ambiguity")


# -- idempotent moderator commands ------------------------------------------------------------


def test_a_repeated_command_id_applies_once_and_returns_the_earlier_result(match):
    p = seats(match)
    red, blue = str(p["alice"].team_id), str(p["bob"].team_id)
    press(match, p["bob"], 2, T0 + 0.25)
    run(match, game.Tick(), T0 + 0.5, actor="driver")
    reply(match, p["bob"], "gatsby", T0 + 1.0)  # -5 to Blue: the first ruling
    press(match, p["alice"], 12, T0 + 1.3)
    run(match, game.Tick(), T0 + 1.6, actor="driver")
    reply(match, p["alice"], "moby dick", T0 + 2.0)  # +10 to Red: the last ruling
    assert (scores(match)[red], scores(match)[blue]) == (10, -5)

    undo = {"match_id": match.id, "command": game.Undo(), "actor": "moderator", "command_id": "undo:{}@41"}
    first = store.apply_command(**undo, now=T0 + 2.5)
    again = store.apply_command(**undo, now=T0 + 2.6)  # a double click
    assert not first.duplicate and first.events
    assert again.duplicate and again.events == [] and again.seq == first.seq
    assert (scores(match)[red], scores(match)[blue]) == (0, -5)  # only Alice's ruling reversed
    assert len(log(match, "ruling_undone")) == 1
    assert {e.command_id for e in log(match) if e.seq > first.seq - len(first.events)} == {"undo:{}@41"}

    # A new id is a new command: it reverses the ruling before.
    store.apply_command(**{**undo, "command_id": "undo:{}@43"}, now=T0 + 2.7)
    assert (scores(match)[red], scores(match)[blue]) == (0, 0)

    adjust = {"match_id": match.id, "actor": "moderator", "command": game.Adjust(int(blue), 15, "protest")}
    long_id = "adjust:" + json.dumps({"team_id": int(blue), "points": 15, "reason": "x" * 80}) + "@50"
    results = [store.apply_command(**adjust, command_id=long_id, now=T0 + 3 + k / 10) for k in range(3)]
    assert [r.duplicate for r in results] == [False, True, True]
    assert scores(match)[blue] == 15 and len(log(match, "points_adjusted")) == 1
    assert len(log(match, "points_adjusted")[0].command_id) == 64  # a long id is stored hashed


def test_commands_without_an_id_are_never_deduplicated_and_a_bad_id_is_refused(match):
    blue = Team.objects.get(match=match, name="Blue")
    for k in range(2):
        run(match, game.Adjust(blue.id, 5, "same"), T0 + 0.1 + k / 10)
    assert scores(match)[str(blue.id)] == 10
    head = Match.objects.get(pk=match.pk).seq
    with pytest.raises(services.ServiceError) as exc:
        store.apply_command(
            match_id=match.id,
            command=game.Adjust(blue.id, 5),
            actor="moderator",
            command_id=["x"],  # type: ignore[arg-type]
        )
    assert exc.value.code == "invalid" and Match.objects.get(pk=match.pk).seq == head


def moderate(match: Match, command: Any, now: float, seen: int, command_id: str = "") -> store.Applied:
    """A dashboard's command made on its view at seq ``seen``."""
    return services.moderate(
        match_id=match.id, command=command, now=now, command_id=command_id, seen_seq=seen
    )


def test_of_two_commands_made_on_the_same_view_the_second_is_refused_and_stores_nothing(match):
    """Pause and skip sent from two dashboards that both saw seq ``seen``: the skip lands first,
    so the pause (made on a tossup that has since ended) is refused ``stale_view``."""
    applied = run(match, game.Tick(), T0 + WORD, actor="driver")
    seen = applied.seq
    skipped = moderate(match, game.Skip(), T0 + 0.15, seen, command_id=f"skip:{{}}@{seen}")
    assert "tossup_ended" in [e["event"] for e in skipped.events]
    head = Match.objects.get(pk=match.pk).seq
    with pytest.raises(services.ServiceError) as refused:
        moderate(match, game.Pause(), T0 + 0.16, seen, command_id=f"pause:{{}}@{seen}")
    assert refused.value.code == "stale_view"
    assert refused.value.extra == {"seen_seq": seen, "seq": head}
    assert Match.objects.get(pk=match.pk).seq == head and not log(match, "paused")
    # The skip sent again (a double click) is still a duplicate, not a refusal.
    again = moderate(match, game.Skip(), T0 + 0.17, seen, command_id=f"skip:{{}}@{seen}")
    assert again.duplicate and again.seq == skipped.seq
    # A setting holds whatever the view: not checked (protocol.COMMANDS' on_view, its caller).
    assert run(match, game.SetSpeed(300), T0 + 0.18).events


def test_words_and_buzz_claims_since_a_view_do_not_make_it_stale(match):
    p = seats(match)
    seen = run(match, game.Tick(), T0 + WORD, actor="driver").seq
    for k in range(2, 5):  # the reading goes on
        run(match, game.Tick(), T0 + k * WORD, actor="driver")
    press(match, p["bob"], 4, T0 + 0.45)  # buzz_received: a claim, the race still open
    assert [e.event for e in log(match) if e.seq > seen] == ["words"] * 3 + ["buzz_received"]
    paused = moderate(match, game.Pause(), T0 + 0.46, seen)
    assert [e["event"] for e in paused.events] == ["paused"]
    # The pause changed what the view showed: a command on the view before it is refused.
    with pytest.raises(services.ServiceError, match="moved on") as refused:
        moderate(match, game.Skip(), T0 + 0.47, seen)
    assert refused.value.code == "stale_view"
    # On the view that saw the pause it applies.
    assert moderate(match, game.Resume(), T0 + 0.5, paused.seq).events


def test_a_bot_takes_a_seat_on_a_human_team_with_its_buzz_mode():
    tossups, _ = make_packet()
    bot = {"name": "ai", "weight_class": "mid", "team": "Red", "buzz_mode": "semi_autonomous", "min_token": 3}
    m = services.create_match(
        name="hybrid", tossup_ids=[t.id for t in tossups], preset="qanta26", teams=["Red", "Blue"], bots=[bot]
    )
    seat = m.players.get(name="ai")
    assert (seat.team.name, seat.kind, seat.buzz_mode, seat.min_token) == ("Red", "bot", "semi_autonomous", 3)
    assert m.teams.count() == 2  # no team of its own
    spec = next(p for p in Match.objects.get(pk=m.pk).spec["players"] if p["name"] == "ai")
    assert (spec["buzz_mode"], spec["min_token"], spec["weight_class"]) == ("semi_autonomous", 3, "mid")


@pytest.mark.parametrize(
    "bot,message",
    [
        ({"name": "ai", "team": "Green"}, "no human team named 'Green'"),
        ({"name": "ai", "team": "Red", "buzz_mode": "loud"}, "buzz_mode must be one of"),
        ({"name": "ai", "team": "Red", "min_token": -2}, "min_token must be an integer"),
    ],
)
def test_a_bad_team_bot_is_refused_with_the_reason(bot, message):
    tossups, _ = make_packet()
    with pytest.raises(services.ServiceError, match=message) as err:
        services.create_match(name="x", tossup_ids=[t.id for t in tossups], teams=["Red", "Blue"], bots=[bot])
    assert err.value.code == "invalid"


# -- a ruling corrected after the fact ----------------------------------------------------------


def test_a_corrected_ruling_is_what_the_buzz_log_exports_and_the_fit_read(moderated):
    """Bob's right answer was rejected; the moderator corrects it after the match ended: the buzz
    log, the exports and the fit's input all say correct, the event keeps who and why, and the
    match's fits are queued again."""
    p = seats(moderated)
    blue = str(p["bob"].team_id)
    press(moderated, p["bob"], 2, T0 + 0.25)
    run(moderated, game.Tick(), T0 + 0.5, actor="driver")
    reply(moderated, p["bob"], "moby dick", T0 + 1.0)
    run(moderated, game.Rule("reject"), T0 + 2.0)
    assert scores(moderated)[blue] == -5
    run(moderated, game.End(), T0 + 3.0)
    jobs = set(signals.match_ended_topics())
    queued = Outbox.objects.filter(match=moderated).count()
    assert queued == len(jobs)

    run(moderated, game.CorrectRuling(0, "correct", "moby dick is on the answer line"), T0 + 9.0)
    row = Buzz.objects.get(match=moderated)
    # a power: the buzz came before the power mark
    assert (row.ruling, row.points, row.guess, row.verdict) == ("correct", 15, "moby dick", "accept")
    (corrected,) = log(moderated, "ruling_corrected")
    assert corrected.actor == "moderator"
    assert {
        k: corrected.payload[k] for k in ("ruling_before", "points_before", "ruling", "points", "reason")
    } == {
        "ruling_before": "wrong",
        "points_before": -5,
        "ruling": "correct",
        "points": 15,
        "reason": "moby dick is on the answer line",
    }
    assert scores(moderated)[blue] == 15
    (cycle,) = exports.play_log(moderated)
    (response,) = cycle["tossup"]["responses"]
    assert (response["ruling"], response["points"], response["isCorrect"]) == ("correct", 15, True)
    assert response["corrected"] == {
        "ruling": "wrong",
        "points": -5,
        "reason": "moby dick is on the answer line",
    }
    # The fit reads the buzz as correct, and the match's end jobs are stored again for it.
    play = selectors.match_play(moderated.id)
    assert [(b.player_id, b.correct) for b in play.buzzes] == [(p["bob"].id, True)]
    assert Outbox.objects.filter(match=moderated).count() == 2 * queued
