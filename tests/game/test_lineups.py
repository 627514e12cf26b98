"""Lineups and substitutions, timeouts, halves and overtime (``competition.game.lineups`` / ``periods``)."""

from __future__ import annotations

from dataclasses import replace
from typing import Any

from competition.game import (
    Answer,
    Buzz,
    CallTimeout,
    End,
    EventName,
    MatchConfig,
    MatchState,
    Next,
    Pause,
    Resume,
    Rule,
    SeatPlayer,
    Skip,
    Start,
    Substitute,
    UndoTimeout,
    active_players,
    apply_event,
    event_audiences,
    new_match,
    tossups_heard,
    view,
)
from competition.vocabulary import Audience, MatchStatus, Phase
from scoring.rules import Preset, load_preset

from .support import BOT, HUMAN_A, HUMAN_A2, HUMAN_B, T0, TEAM_A, TEAM_B, TEAM_BOT, Driver, make_state
from .test_tossup import refused


def match(tossups: int = 6, **fmt: Any) -> Driver:
    """Teams A (11, 12), B (21), Robots (31) under NAQT points with format fields ``fmt``;
    the moderator advances (no pace), nothing started yet."""
    base = make_state(tossups=tossups, bonuses=tossups, auto_advance=False)
    fmt.setdefault("substitutions", ("between_tossups",))
    preset = replace(load_preset("naqt"), **fmt)
    return Driver(
        new_match(replace(base.config, preset=preset), base.teams, base.players, base.tossups, base.bonuses)
    )


def now(d: Driver) -> float:
    """A time just after every event so far (commands come one second apart)."""
    return T0 + len(d.log)


def skip_question(d: Driver) -> None:
    """End the live tossup unanswered (skipped): the match goes between questions or ends."""
    d.do(Skip(), now(d))


def win(d: Driver, player: int) -> None:
    """``player`` buzzes on the live tossup's first word and is ruled correct; its bonus (if any)
    is skipped."""
    at = now(d)
    qid = d.state.tossup.question_id
    d.do(Buzz(player, qid, 0, corrected_press_at=at), at)
    d.run_until(at + 0.5)
    d.do(Answer(player, qid, "guess", "accept"), at + 0.6)
    d.do(Rule("accept"), at + 0.7)
    if d.state.bonus is not None:
        d.do(Skip(), at + 0.8)


def follow_views(d: Driver, cmd: Any, at: float) -> None:
    """Apply ``cmd`` and check every audience's reducer folds its events into the view after."""
    before = {a: view(d.state, a) for a in (Audience.MODERATOR, Audience.ALL, f"player:{HUMAN_A}")}
    events = d.do(cmd, at)
    for audience, snap in before.items():
        team = TEAM_A if audience.startswith("player:") else None
        seen = event_audiences(audience, team)
        for e in events:
            if e.audience in seen:
                snap = apply_event(snap, e)
        assert snap == view(d.state, audience), (audience, [e.event for e in events])


# -- lineups ------------------------------------------------------------------------------


def test_a_seat_beyond_the_limit_sits_on_the_bench_and_may_not_buzz() -> None:
    d = match(players_per_team=1)
    assert view(d.state, Audience.ALL)["lineups"] == {
        str(TEAM_A): [HUMAN_A],
        str(TEAM_B): [HUMAN_B],
        str(TEAM_BOT): [BOT],
    }
    d.do(Start(), T0)
    d.run_until(T0 + 1)
    assert refused(d, Buzz(HUMAN_A2, d.state.tossup.question_id, 0), T0 + 1) == "benched"
    win(d, HUMAN_A)  # the active one buzzes as ever
    assert d.state.scores[str(TEAM_A)] > 0


def test_substitution_between_tossups_and_the_tossups_each_player_heard() -> None:
    d = match(players_per_team=1)
    d.do(Start(), T0)
    assert refused(d, Substitute(TEAM_A, HUMAN_A2, HUMAN_A), now(d)) == "no_substitution"  # mid-tossup
    skip_question(d)
    follow_views(d, Substitute(TEAM_A, HUMAN_A2, HUMAN_A), now(d))
    changed = d.last(EventName.LINEUP_CHANGED).data
    assert changed == {
        "team_id": TEAM_A,
        "player_in": HUMAN_A2,
        "player_out": HUMAN_A,
        "players": [HUMAN_A2],
        "first_tossup": 1,
        "reason": "segment_break",
    }
    assert active_players(d.state, TEAM_A) == [HUMAN_A2]
    d.do(Next(), now(d))
    d.run_until(now(d))
    assert refused(d, Buzz(HUMAN_A, d.state.tossup.question_id, 0), now(d)) == "benched"
    win(d, HUMAN_A2)
    d.do(Next(), now(d))
    # Tossup 0 heard by ann, tossups 1 and 2 (the live one) by abe; bea and robo heard all three.
    assert tossups_heard(d.state) == {HUMAN_A: 1, HUMAN_A2: 2, HUMAN_B: 3, BOT: 3}


def test_bad_substitutions_change_nothing() -> None:
    d = match(players_per_team=1)
    at = now(d)
    assert refused(d, Substitute(TEAM_A, HUMAN_B, HUMAN_A), at) == "unknown_player"  # another team's seat
    assert refused(d, Substitute(TEAM_A, 999, HUMAN_A), at) == "unknown_player"  # no such seat
    assert refused(d, Substitute(99, HUMAN_A2, HUMAN_A), at) == "unknown_team"
    assert refused(d, Substitute(TEAM_A, HUMAN_A2), at) == "lineup_full"  # one plays at a time
    assert refused(d, Substitute(TEAM_A, HUMAN_A), at) == "bad_value"  # already playing
    assert refused(d, Substitute(TEAM_A, None, HUMAN_A2), at) == "bad_value"  # on the bench
    assert refused(d, Substitute(TEAM_A), at) == "bad_value"
    d.do(Substitute(TEAM_A, HUMAN_A2, HUMAN_A), at)  # in the lobby: the initial lineup
    assert d.last(EventName.LINEUP_CHANGED).data["reason"] == "initial"
    d.do(Start(), at + 1)
    d.do(End(), at + 2)
    assert refused(d, Substitute(TEAM_A, HUMAN_A, HUMAN_A2), at + 3) == "no_substitution"


def test_a_format_allowing_substitutions_only_at_halftime() -> None:
    d = match(players_per_team=1, substitutions=("halftime",), tossups_per_half=2)
    d.do(Start(), T0)
    skip_question(d)
    assert refused(d, Substitute(TEAM_A, HUMAN_A2, HUMAN_A), now(d)) == "no_substitution"
    d.do(Next(), now(d))
    skip_question(d)
    assert d.last(EventName.HALFTIME).data["half"] == 2
    d.do(Substitute(TEAM_A, HUMAN_A2, HUMAN_A), now(d))
    assert d.last(EventName.LINEUP_CHANGED).data["reason"] == "halftime"
    assert d.last(EventName.LINEUP_CHANGED).data["first_tossup"] == 2


def test_a_bot_added_to_a_full_team_mid_match_joins_the_bench() -> None:
    d = match(players_per_team=1)
    d.do(Start(), T0)
    skip_question(d)
    follow_views(d, SeatPlayer(41, TEAM_BOT, "robo2", "bot", "light"), now(d))
    assert view(d.state, Audience.ALL)["lineups"][str(TEAM_BOT)] == [BOT]
    d.do(Substitute(TEAM_BOT, 41, BOT), now(d))
    d.do(Next(), now(d))
    assert tossups_heard(d.state)[41] == 1 and tossups_heard(d.state)[BOT] == 1


# -- timeouts -----------------------------------------------------------------------------


def test_timeouts_between_questions_within_the_allowance() -> None:
    d = match(timeouts=1, timeout_seconds=30.0, substitutions=("timeout",), players_per_team=1)
    d.do(Start(), T0)
    assert refused(d, CallTimeout(TEAM_A), now(d)) == "bad_phase"  # mid-tossup
    skip_question(d)
    assert refused(d, Substitute(TEAM_A, HUMAN_A2, HUMAN_A), now(d)) == "no_substitution"  # no timeout yet
    at = now(d)
    follow_views(d, CallTimeout(TEAM_B), at)
    assert d.last(EventName.TIMEOUT_CALLED).data == {
        "team_id": TEAM_B,
        "length": 30.0,
        "ends_at": at + 30,
        "left": 0,
        "next_tossup_at": None,
    }
    assert refused(d, CallTimeout(TEAM_B), at + 1) == "no_timeouts_left"
    assert refused(d, CallTimeout(99), at + 1) == "unknown_team"
    # Substitutions during a timeout, in QBJ's words for each team.
    d.do(Substitute(TEAM_A, HUMAN_A2, HUMAN_A), at + 2)
    assert d.last(EventName.LINEUP_CHANGED).data["reason"] == "other_timeout"
    shown = view(d.state, Audience.ALL)["periods"]
    assert shown["timeouts_left"] == {str(TEAM_A): 1, str(TEAM_B): 0, str(TEAM_BOT): 1}
    assert shown["timeout"] == {"team_id": TEAM_B, "length": 30.0, "ends_at": at + 30, "remaining": None}
    follow_views(d, Next(), at + 3)  # the moderator may end it early
    assert view(d.state, Audience.ALL)["periods"]["timeout"] is None


def test_a_timeout_holds_the_next_tossup_when_the_match_goes_on_by_itself() -> None:
    base = make_state(tossups=3, bonuses=3, between_questions=5.0)
    preset = replace(load_preset("naqt"), timeouts=2, timeout_seconds=20.0)
    d = Driver(
        new_match(replace(base.config, preset=preset), base.teams, base.players, base.tossups, base.bonuses)
    )
    d.do(Start(), T0)
    d.do(Skip(), T0 + 1)
    assert d.state.between_deadline == T0 + 6
    d.do(CallTimeout(TEAM_A), T0 + 2)
    assert d.state.between_deadline == T0 + 22
    d.run_until(T0 + 21)
    assert d.state.phase == Phase.BETWEEN
    d.run_until(T0 + 22)
    assert d.state.phase == Phase.READING and d.state.tossup_index == 1


def test_timeouts_per_half_are_renewed_at_halftime() -> None:
    d = match(timeouts=1, timeouts_per="half", tossups_per_half=2)
    d.do(Start(), T0)
    skip_question(d)
    d.do(CallTimeout(TEAM_A), now(d))
    assert refused(d, CallTimeout(TEAM_A), now(d)) == "no_timeouts_left"
    d.do(Next(), now(d))
    skip_question(d)
    half = d.last(EventName.HALFTIME).data
    assert half["timeouts_left"][str(TEAM_A)] == 1
    d.do(CallTimeout(TEAM_A), now(d))
    assert refused(d, CallTimeout(TEAM_A), now(d)) == "no_timeouts_left"


def paced(between_questions: float = 5.0, timeouts: int = 1, **fmt: Any) -> Driver:
    """Three tossups, the next one ``between_questions`` s after a question, ``timeouts`` 20 s
    timeouts a game; tossup 0 skipped at T0 + 1: between questions, the next due at T0 + 6."""
    base = make_state(tossups=3, bonuses=3, between_questions=between_questions)
    preset = replace(load_preset("naqt"), timeouts=timeouts, timeout_seconds=20.0, **fmt)
    d = Driver(
        new_match(replace(base.config, preset=preset), base.teams, base.players, base.tossups, base.bonuses)
    )
    d.do(Start(), T0)
    d.do(Skip(), T0 + 1)
    return d


def test_an_undone_timeout_gives_the_team_its_timeout_back_and_the_next_tossup_its_time() -> None:
    d = paced()
    follow_views(d, CallTimeout(TEAM_A), T0 + 2)
    assert d.state.between_deadline == T0 + 22
    follow_views(d, UndoTimeout(), T0 + 3)
    assert d.last(EventName.TIMEOUT_UNDONE).data == {
        "team_id": TEAM_A,
        "left": 1,
        "timeout": None,
        "next_tossup_at": T0 + 6,
    }
    shown = view(d.state, Audience.ALL)
    assert shown["periods"]["timeout"] is None and shown["periods"]["timeouts_left"][str(TEAM_A)] == 1
    assert shown["next_tossup_at"] == T0 + 6 and d.state.periods["timeouts"] == []
    d.run_until(T0 + 6)  # the next tossup starts when it was due before the timeout
    assert d.state.phase == Phase.READING and d.state.tossup_index == 1
    assert d.last(EventName.TOSSUP_STARTED).data["index"] == 1
    # The team has its timeout again: it may call it at the next break.
    d.do(Skip(), T0 + 7)
    d.do(CallTimeout(TEAM_A), T0 + 8)
    assert d.last(EventName.TIMEOUT_CALLED).data["left"] == 0


def test_an_undo_after_the_tossup_was_due_starts_it_now() -> None:
    d = paced()
    d.do(CallTimeout(TEAM_A), T0 + 2)
    events = d.do(UndoTimeout(), T0 + 10)  # without the timeout it would have started at T0 + 6
    assert d.types(events)[:3] == [
        EventName.TIMEOUT_UNDONE,
        EventName.TOSSUP_STARTED,
        EventName.TOSSUP_ANSWER,
    ]
    assert d.last(EventName.TIMEOUT_UNDONE).data["next_tossup_at"] == T0 + 10
    words = d.last(EventName.WORDS).data  # its first word now, none read in the past
    assert words["revealed_at"] == T0 + 10 and len(words["words"]) == 1


def test_an_undo_gives_back_the_earlier_timeout_of_the_break() -> None:
    d = paced()
    d.do(CallTimeout(TEAM_A), T0 + 2)  # ends at T0 + 22
    d.do(CallTimeout(TEAM_B), T0 + 4)  # ends at T0 + 24
    follow_views(d, UndoTimeout(), T0 + 5)
    undone = d.last(EventName.TIMEOUT_UNDONE).data
    assert undone["team_id"] == TEAM_B and undone["left"] == 1 and undone["next_tossup_at"] == T0 + 22
    assert undone["timeout"] == {"team_id": TEAM_A, "length": 20.0, "ends_at": T0 + 22, "remaining": None}
    follow_views(d, UndoTimeout(), T0 + 5.5)  # A's too: the next tossup is due as before both
    assert d.last(EventName.TIMEOUT_UNDONE).data == {
        "team_id": TEAM_A,
        "left": 1,
        "timeout": None,
        "next_tossup_at": T0 + 6,
    }
    assert refused(d, UndoTimeout(), T0 + 5.5) == "no_timeout"


def test_a_timeout_is_undone_only_until_the_next_tossup_starts() -> None:
    d = match(timeouts=1, timeout_seconds=30.0)
    assert refused(d, UndoTimeout(), T0) == "bad_phase"  # the lobby
    d.do(Start(), T0)
    assert refused(d, UndoTimeout(), now(d)) == "bad_phase"  # mid-tossup
    skip_question(d)
    assert refused(d, UndoTimeout(), now(d)) == "no_timeout"  # none called this break
    at = now(d)
    d.do(CallTimeout(TEAM_A), at)
    d.run_until(at + 40)  # its countdown is over; the moderator has not pressed Next
    follow_views(d, UndoTimeout(), at + 40)  # still this break: it may be taken back
    assert d.last(EventName.TIMEOUT_UNDONE).data["left"] == 1
    d.do(CallTimeout(TEAM_A), at + 41)
    d.do(Next(), at + 42)  # play moved on: the timeout stands
    assert refused(d, UndoTimeout(), at + 43) == "bad_phase"
    skip_question(d)
    assert refused(d, UndoTimeout(), now(d)) == "no_timeout"  # the last break's timeout is not this one's
    assert view(d.state, Audience.ALL)["periods"]["timeouts_left"][str(TEAM_A)] == 0


def test_a_pause_stops_the_timeout_countdown_and_resume_goes_on_with_what_was_left() -> None:
    d = paced()
    follow_views(d, CallTimeout(TEAM_A), T0 + 2)  # ends at T0 + 22
    follow_views(d, Pause(), T0 + 12)  # 10 s left
    assert d.last(EventName.PAUSED).data == {"at": T0 + 12}
    running = view(d.state, Audience.ALL)["periods"]["timeout"]
    assert running == {"team_id": TEAM_A, "length": 20.0, "ends_at": T0 + 22, "remaining": 10.0}
    d.run_until(T0 + 100)  # nothing falls due while paused
    assert d.state.phase == Phase.BETWEEN
    follow_views(d, Resume(), T0 + 100)
    running = view(d.state, Audience.ALL)["periods"]["timeout"]
    assert running == {"team_id": TEAM_A, "length": 20.0, "ends_at": T0 + 110, "remaining": None}
    assert d.state.periods["timeouts"][0]["ends_at"] == T0 + 110
    d.run_until(T0 + 109)
    assert d.state.phase == Phase.BETWEEN
    d.run_until(T0 + 110)  # the 10 s left ran out: the next tossup starts
    assert d.state.phase == Phase.READING and d.state.tossup_index == 1


def test_a_timeout_undone_while_paused_resumes_the_break_as_before() -> None:
    d = paced()
    d.do(CallTimeout(TEAM_A), T0 + 2)
    d.do(Pause(), T0 + 4)  # the next tossup was due at T0 + 6: 2 s left
    follow_views(d, UndoTimeout(), T0 + 30)
    assert d.last(EventName.TIMEOUT_UNDONE).data["next_tossup_at"] == T0 + 6
    d.do(Resume(), T0 + 50)  # 2 s of the break left, as when the clock stopped
    assert d.state.between_deadline == T0 + 52 and d.state.phase == Phase.BETWEEN
    d.run_until(T0 + 52)
    assert d.state.phase == Phase.READING and d.state.tossup_index == 1


# -- halves and overtime ------------------------------------------------------------------


def test_regulation_ends_the_match_when_not_tied() -> None:
    d = match(tossups=6, tossups_per_half=1)
    d.do(Start(), T0)
    win(d, HUMAN_A)
    assert d.all(EventName.HALFTIME)
    d.do(Next(), now(d))
    skip_question(d)
    assert d.state.status == MatchStatus.ENDED and d.state.tossup_index == 1  # 4 tossups left unread


def test_a_tie_goes_to_sudden_death_without_bonuses() -> None:
    d = match(tossups=6, tossups_per_half=1, overtime_tossups=0)
    d.do(Start(), T0)
    skip_question(d)
    d.do(Next(), now(d))
    follow_views(d, Skip(), now(d))  # 0–0 after regulation
    started = d.last(EventName.OVERTIME_STARTED).data
    assert started == {"first_tossup": 2, "tossups": 0, "bonuses": False, "scores": d.state.scores}
    assert view(d.state, Audience.ALL)["periods"]["overtime"] is True
    d.do(Next(), now(d))
    skip_question(d)  # still tied: sudden death goes on
    assert d.state.status == MatchStatus.RUNNING
    d.do(Next(), now(d))
    win(d, HUMAN_B)
    assert not d.all(EventName.BONUS_STARTED)  # no bonus in overtime
    assert d.state.status == MatchStatus.ENDED and d.state.scores[str(TEAM_B)] > 0


def test_naqt_style_overtime_reads_its_tossups_before_sudden_death() -> None:
    d = match(tossups=8, tossups_per_half=1, overtime_tossups=2)
    d.do(Start(), T0)
    skip_question(d)
    d.do(Next(), now(d))
    skip_question(d)
    d.do(Next(), now(d))
    win(d, HUMAN_A)  # first overtime tossup: A leads, but two are read
    assert d.state.status == MatchStatus.RUNNING
    d.do(Next(), now(d))
    skip_question(d)
    assert d.state.status == MatchStatus.ENDED and d.state.tossup_index == 3


def test_a_packet_that_runs_out_in_overtime_ends_the_match_tied() -> None:
    d = match(tossups=3, tossups_per_half=1)
    d.do(Start(), T0)
    for _ in range(2):
        skip_question(d)
        d.do(Next(), now(d))
    skip_question(d)
    assert d.state.status == MatchStatus.ENDED and d.state.scores[str(TEAM_A)] == d.state.scores[str(TEAM_B)]


def test_state_round_trips_with_lineups_and_periods() -> None:
    d = match(players_per_team=1, timeouts=1, tossups_per_half=1)
    d.do(Start(), T0)
    skip_question(d)
    d.do(CallTimeout(TEAM_A), now(d))
    d.do(Substitute(TEAM_A, HUMAN_A2, HUMAN_A), now(d))
    assert MatchState.from_dict(d.state.to_dict()) == d.state


def test_shipped_presets_follow_their_rules() -> None:
    acf, naqt = load_preset("acf"), load_preset("naqt")
    assert (acf.players_per_team, acf.tossups_per_half, acf.overtime_tossups) == (4, 10, 0)
    assert (naqt.players_per_team, naqt.overtime_tossups, naqt.timeouts) == (4, 3, 1)
    assert "timeout" in naqt.substitutions and "timeout" not in acf.substitutions
    assert Preset.from_dict(acf.to_dict()) == acf
    assert isinstance(MatchConfig(acf).preset.substitutions, tuple)


def test_a_packet_shorter_than_two_halves_is_read_through() -> None:
    d = match(tossups=3, tossups_per_half=2)
    assert view(d.state, Audience.ALL)["periods"]["tossups_per_half"] is None
    d.do(Start(), T0)
    for _ in range(2):
        skip_question(d)
        d.do(Next(), now(d))
    skip_question(d)
    assert not d.all(EventName.HALFTIME) and not d.all(EventName.OVERTIME_STARTED)
    assert d.state.status == MatchStatus.ENDED and d.state.tossup_index == 2
