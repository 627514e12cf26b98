"""Match flow: bonuses, pause/resume, skip, undo, adjust, next, end."""

from __future__ import annotations

import pytest

from competition.game import (
    Adjust,
    Answer,
    BonusAnswer,
    Buzz,
    End,
    Next,
    Pause,
    Rename,
    Resume,
    Rule,
    RuleViolation,
    Skip,
    Start,
    Undo,
    view,
)

from .support import BOT, HUMAN_A, HUMAN_A2, HUMAN_B, T0, TEAM_A, TEAM_B, Driver, make_state, started
from .test_tossup import Q0, buzz_won, refused


def win_tossup(d: Driver, at: float = T0 + 2.5) -> None:
    buzz_won(d, HUMAN_A, int(at - T0), at)
    d.do(Answer(HUMAN_A, Q0, "guess", "accept"), at + 0.5)
    if d.state.phase == "ruling":
        d.do(Rule("accept"), at + 0.6)


def test_bonus_flow_auto_rule():
    d = started(auto_rule=True)
    win_tossup(d)
    assert d.types()[-5:] == [
        "buzz_ruled",
        "tossup_ended",
        "bonus_started",
        "bonus_answer_lines",
        "bonus_part",
    ]
    assert d.last("bonus_started").data == {
        "bonus_id": 500,
        "team_id": TEAM_A,
        "leadin": "lead-in 0",
        "parts": 3,
        "leadin_tokens": ["lead-in", "0"],
    }
    part0 = d.last("bonus_part").data
    assert part0["part"] == 0 and part0["value"] == 10 and part0["answer_deadline"] == pytest.approx(T0 + 13)
    assert refused(d, BonusAnswer(HUMAN_B, 500, 0, "x", "accept"), T0 + 4) == "not_your_bonus"
    assert refused(d, BonusAnswer(HUMAN_A, 500, 1, "x", "accept"), T0 + 4) == "wrong_part"
    assert refused(d, BonusAnswer(HUMAN_A, 501, 0, "x", "accept"), T0 + 4) == "wrong_question"
    d.do(BonusAnswer(HUMAN_A2, 500, 0, "right", "accept"), T0 + 4)
    d.do(BonusAnswer(HUMAN_A, 500, 1, "wrong", "reject"), T0 + 5)
    d.run_until(T0 + 15)  # part 2 (opened at T0+5) times out at T0+15
    rulings = [(e.data["ruling"], e.data["points"], e.data["answer_line"]) for e in d.all("bonus_part_ruled")]
    assert rulings == [
        ("correct", 10, "BONUS-LINE-0-0"),
        ("wrong", 0, "BONUS-LINE-0-1"),
        ("timeout", 0, "BONUS-LINE-0-2"),
    ]
    assert d.last("bonus_ended").data == {
        "bonus_id": 500,
        "team_id": TEAM_A,
        "points": 10,
        "scores": {str(TEAM_A): 25, str(TEAM_B): 0, "3": 0},
    }
    assert d.state.phase == "between" and d.state.next_deadline == pytest.approx(T0 + 17)
    d.run_until(T0 + 17)
    assert d.last("tossup_started").data["index"] == 1


def test_bonus_moderator_ruling_and_first_answer_counts():
    d = started()
    win_tossup(d)
    d.do(BonusAnswer(HUMAN_A, 500, 0, "first", "reject"), T0 + 4)
    given = d.last("bonus_answer_given")
    assert given.audience == "moderator" and given.data["guess"] == "first"
    assert d.state.next_deadline is None
    assert refused(d, BonusAnswer(HUMAN_A2, 500, 0, "second", "accept"), T0 + 4.1) == "answer_window_closed"
    d.do(Rule("accept"), T0 + 5)
    assert (
        d.last("bonus_part_ruled").data["points"] == 10
        and d.last("bonus_part_ruled").data["guess"] == "first"
    )
    assert d.state.bonus.part == 1


def test_moderator_prompts_on_a_bonus_part_and_a_second_prompt_is_wrong():
    d = started()
    win_tossup(d)
    assert refused(d, Rule("prompt"), T0 + 3.5) == "no_pending_answer"
    d.do(BonusAnswer(HUMAN_A, 500, 0, "Curie", "prompt", directed_prompt="Which Curie?"), T0 + 4)
    d.do(Rule("prompt", "Which Curie?"), T0 + 5)
    prompt = d.last("bonus_prompt")
    assert prompt.audience == "all" and prompt.data == {
        "bonus_id": 500,
        "part": 0,
        "directed_prompt": "Which Curie?",
        "answer_deadline": pytest.approx(T0 + 13),  # prompt window 8 s
    }
    assert d.state.phase == "bonus" and d.state.next_deadline == pytest.approx(T0 + 13)
    d.do(BonusAnswer(HUMAN_A2, 500, 0, "Curie again", "prompt"), T0 + 6)
    d.do(Rule("prompt"), T0 + 7)  # a second prompt counts as wrong
    ruled = d.last("bonus_part_ruled").data
    assert (ruled["part"], ruled["ruling"], ruled["points"], ruled["guess"]) == (0, "wrong", 0, "Curie again")
    assert d.state.bonus.part == 1 and d.state.bonus.prompts == 0


def test_auto_ruled_bonus_prompt_then_a_right_answer_scores():
    d = started(auto_rule=True)
    win_tossup(d)
    d.do(BonusAnswer(HUMAN_A, 500, 0, "Curie", "prompt", directed_prompt="Which Curie?"), T0 + 4)
    assert d.last("bonus_prompt").data["directed_prompt"] == "Which Curie?"
    d.do(BonusAnswer(HUMAN_A, 500, 0, "Marie Curie", "accept"), T0 + 5)
    assert d.last("bonus_part_ruled").data["points"] == 10 and d.state.bonus.part == 1


def test_a_bonus_prompt_window_times_out_as_wrong():
    d = started(auto_rule=True)
    win_tossup(d)
    d.do(BonusAnswer(HUMAN_A, 500, 0, "Curie", "prompt"), T0 + 4)
    d.run_until(T0 + 12.5)  # prompt window ends at T0 + 12
    assert d.last("bonus_part_ruled").data["ruling"] == "timeout" and d.state.bonus.part == 1


def test_no_bonus_when_bonuses_run_out():
    d = started(bonuses=0)
    win_tossup(d)
    assert "bonus_started" not in d.types() and d.state.phase == "between"


def test_pause_shifts_every_deadline():
    d = started()
    d.run_until(T0 + 2.5)
    d.do(Pause(), T0 + 2.5)
    assert d.state.next_deadline is None
    assert d.tick(T0 + 50) == []
    assert refused(d, Buzz(HUMAN_A, Q0, 2), T0 + 50) == "paused"
    assert refused(d, Pause(), T0 + 50) == "paused"
    d.do(Resume(), T0 + 102.5)
    assert d.last("resumed").data == {"shift": pytest.approx(100)}
    assert d.state.next_deadline == pytest.approx(T0 + 103) and d.state.tossup.revealed == 3
    assert refused(d, Resume(), T0 + 103) == "not_paused"


def test_pause_during_answer_window():
    d = started()
    buzz_won(d, HUMAN_A, 2, T0 + 2.5)
    deadline = d.last("buzz").data["answer_deadline"]
    d.do(Pause(), T0 + 3)
    d.do(Resume(), T0 + 33)
    assert d.state.next_deadline == pytest.approx(deadline + 30)
    d.run_until(deadline + 29.9)
    assert not d.all("buzz_ruled")


def test_skip_ends_tossup_without_points_or_bonus():
    d = started()
    buzz_won(d, HUMAN_A, 2, T0 + 2.5)
    d.do(Skip(), T0 + 3)
    ended = d.last("tossup_ended").data
    assert ended["outcome"] == "skipped" and ended["answer_line"] == "ANSWER-LINE-0"
    assert not d.all("buzz_ruled") and "bonus_started" not in d.types()
    assert set(d.state.scores.values()) == {0}
    d.run_until(T0 + 5)
    assert d.last("tossup_started").data["question_id"] == 101
    assert refused(d, Answer(HUMAN_A, Q0, "x", "accept"), T0 + 5.1) == "wrong_question"


def test_skip_bonus():
    d = started()
    win_tossup(d)
    d.do(Skip(), T0 + 4)
    assert d.last("bonus_ended").data["points"] == 0 and d.state.phase == "between"
    assert refused(d, Skip(), T0 + 4.5) == "bad_phase"


def test_undo_neg_restores_points_and_eligibility_while_live():
    d = started()
    buzz_won(d, HUMAN_A, 2, T0 + 2.5)
    d.do(Rule("reject"), T0 + 3)
    assert d.state.scores[str(TEAM_A)] == -5
    d.do(Undo(), T0 + 3.5)
    assert d.last("ruling_undone").data == {
        "history_index": 0,
        "question_id": Q0,
        "player_id": HUMAN_A,
        "team_id": TEAM_A,
        "points_reversed": -5,
        "scores": {str(TEAM_A): 0, str(TEAM_B): 0, "3": 0},
    }
    assert view(d.state, "all")["history"][0]["undone"] is True
    buzz_won(d, HUMAN_A2, 4, T0 + 4.5)  # team A may buzz again; the neg no longer counts as prior
    d.do(Rule("reject"), T0 + 5)
    assert d.last("buzz_ruled").data["points"] == -5


def test_undo_correct_keeps_tossup_ended_and_undo_bonus_part():
    d = started(auto_rule=True)
    win_tossup(d)
    d.do(BonusAnswer(HUMAN_A, 500, 0, "yes", "accept"), T0 + 4)
    d.do(Undo(), T0 + 4.5)
    undone = d.last("ruling_undone").data
    assert undone["bonus_id"] == 500 and undone["part"] == 0 and undone["points_reversed"] == 10
    d.do(Undo(), T0 + 4.6)
    assert d.state.scores[str(TEAM_A)] == 0 and d.state.tossup.outcome == "answered"
    assert refused(d, Undo(), T0 + 4.7) == "nothing_to_undo"


def test_undo_of_the_correct_buzz_withdraws_its_bonus():
    d = started(auto_rule=True, auto_advance=False)
    win_tossup(d)
    assert d.state.phase == "bonus" and d.state.scores[str(TEAM_A)] == 15  # a power
    events = d.do(Undo(), T0 + 4)
    assert d.state.scores[str(TEAM_A)] == 0
    assert d.state.bonus is None and d.state.phase == "between"  # the team no longer has a bonus
    assert [e.event for e in events] == ["ruling_undone", "bonus_withdrawn", "between_questions"]
    assert events[1].data == {"bonus_id": 500, "team_id": TEAM_A}
    assert events[2].data == {"next_tossup_at": None}  # auto_advance off: the moderator goes on
    assert view(d.state, "all")["bonus"] is None
    assert refused(d, BonusAnswer(HUMAN_A, 500, 0, "yes", "accept"), T0 + 5) == "not_live"
    d.do(Next(), T0 + 6)  # the moderator goes on (auto_advance off: nothing happens until Next)
    assert d.state.phase == "reading" and d.state.tossup.index == 1


def test_adjust_points():
    d = started()
    d.do(Adjust(TEAM_B, 7, "protest upheld"), T0 + 1)
    assert d.last("points_adjusted").data == {
        "team_id": TEAM_B,
        "points": 7,
        "reason": "protest upheld",
        "scores": {str(TEAM_A): 0, str(TEAM_B): 7, "3": 0},
    }
    assert refused(d, Adjust(99, 1, "x"), T0 + 1) == "unknown_team"


def test_end_immediately():
    d = started()
    d.run_until(T0 + 2)
    d.do(End(), T0 + 2)
    assert d.last("match_ended").data == {"scores": {str(TEAM_A): 0, str(TEAM_B): 0, "3": 0}}
    assert d.state.status == "ended" and d.state.next_deadline is None
    assert refused(d, End(), T0 + 3) == "bad_phase"
    assert refused(d, Buzz(HUMAN_A, Q0, 1), T0 + 3) == "bad_phase"
    assert "answer_line" not in view(d.state, "all")["tossup"]


def test_manual_advance_with_next():
    d = started(auto_advance=False)
    assert refused(d, Next(), T0 + 1) == "bad_phase"
    d.run_until(T0 + 14)
    assert d.state.phase == "between" and d.state.next_deadline is None
    d.run_until(T0 + 100)
    assert d.last("tossup_started").data["index"] == 0
    d.do(Next(), T0 + 100)
    assert d.last("tossup_started").data["index"] == 1 and d.state.tossup.revealed == 1


def test_match_ends_after_last_tossup():
    d = Driver(make_state(tossups=2))
    d.do(Start(), T0)
    d.run_until(T0 + 100)
    assert d.types().count("tossup_ended") == 2 and d.types()[-1] == "match_ended"
    assert d.state.status == "ended" and d.state.next_deadline is None


def test_bot_bonus_points_deflated():
    d = started(preset="hvc", auto_rule=True, bot_class="heavy")
    d.run_until(T0 + 2.5)
    d.do(Buzz(BOT, Q0, 2), T0 + 2.5)
    d.run_until(T0 + 3)
    d.do(Answer(BOT, Q0, "g", "accept"), T0 + 3)
    d.do(BonusAnswer(BOT, 500, 0, "g", "accept"), T0 + 3.5)
    assert [e.data["points"] for e in d.all("buzz_ruled") + d.all("bonus_part_ruled")] == [12, 8]


@pytest.mark.parametrize("unattended", [False, True])
def test_undecidable_bonus_answers_wait_for_a_moderator_unless_unattended(unattended):
    d = started(auto_rule=True, unattended=unattended)
    win_tossup(d)
    d.do(BonusAnswer(HUMAN_A, 500, 0, "western novels", "needs_moderator"), T0 + 4)
    if unattended:
        assert d.last("bonus_part_ruled").data["ruling"] == "wrong" and d.state.bonus.part == 1
    else:
        assert d.last("bonus_answer_given").audience == "moderator" and d.state.next_deadline is None


@pytest.mark.parametrize("unattended", [False, True])
def test_needs_moderator_on_a_tossup_waits_unless_unattended(unattended):
    d = started(auto_rule=True, unattended=unattended)
    d.do(Buzz(HUMAN_B, 100, 6), T0 + 6.5)
    d.run_until(T0 + 7)
    d.do(Answer(HUMAN_B, 100, "something odd", "needs_moderator"), T0 + 7.1)
    if unattended:
        ruled = d.last("buzz_ruled").data
        assert (ruled["ruling"], ruled["points"]) == ("wrong", -5)
    else:
        assert d.state.phase == "ruling" and d.last("answer_given").data["verdict"] == "needs_moderator"


def test_an_organiser_renames_a_team_and_a_seat_at_any_time():
    d = started()
    d.do(Rename(" Alpha Wolves ", team_id=TEAM_A), T0 + 0.5)
    assert d.last("renamed").data == {"team_id": TEAM_A, "player_id": None, "name": "Alpha Wolves"}
    assert d.state.team(TEAM_A).name == "Alpha Wolves"
    d.do(End(), T0 + 1)
    d.do(Rename("Bea B.", player_id=HUMAN_B), T0 + 2)  # a typo fixed after the match
    assert d.state.player(HUMAN_B).name == "Bea B."
    assert [p["name"] for p in view(d.state, "all")["players"] if p["player_id"] == HUMAN_B] == ["Bea B."]
    for bad, reason in [
        (Rename("  ", team_id=TEAM_A), "bad_value"),
        (Rename("x" * 101, team_id=TEAM_A), "bad_value"),
        (Rename("Both", team_id=TEAM_A, player_id=HUMAN_B), "bad_value"),
        (Rename("Neither"), "bad_value"),
        (Rename("Ghosts", team_id=999), "unknown_team"),
        (Rename("Ghost", player_id=999), "unknown_player"),
    ]:
        with pytest.raises(RuleViolation) as exc:
            d.do(bad, T0 + 3)
        assert exc.value.code == reason
