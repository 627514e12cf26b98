"""Tossup rules: reading, buzz arbitration, answers, rulings and points."""

from __future__ import annotations

from dataclasses import replace

import pytest

from competition.game import (
    Answer,
    BonusAnswer,
    Buzz,
    MatchConfig,
    Rule,
    RuleViolation,
    SetSpeed,
    Start,
    apply,
    view,
)
from scoring.rules import load_preset

from .support import (
    BOT,
    HUMAN_A,
    HUMAN_A2,
    HUMAN_B,
    T0,
    TEAM_A,
    TEAM_B,
    TEAM_BOT,
    Driver,
    make_state,
    started,
)

Q0 = 100


def buzz_won(d: Driver, player: int, token: int, at: float) -> None:
    """Buzz at ``at`` on ``token`` and close the collection window."""
    d.run_until(at)
    d.do(Buzz(player, Q0, token, corrected_press_at=at), at)
    d.run_until(at + d.state.config.collection_window)
    assert d.state.phase == "answering" and d.state.tossup.buzz.player_id == player


def refused(d: Driver, cmd, now: float) -> str:
    """The refusal reason; also checks that nothing changed."""
    before = d.state.to_dict()
    with pytest.raises(RuleViolation) as err:
        apply(d.state, cmd, now)
    assert d.state.to_dict() == before
    return err.value.code


def test_start_reveals_first_word_and_reads_at_preset_speed():
    d = started()
    assert d.types() == ["match_started", "tossup_started", "tossup_answer", "words"]
    assert d.last("tossup_answer").audience == "moderator"
    assert d.last("words").data == {"question_id": Q0, "start": 0, "words": ["t0w0"], "revealed_at": T0}
    assert d.state.next_deadline == pytest.approx(T0 + 1)  # 60 wpm
    assert d.tick(T0 + 0.99) == []
    assert [e.data["words"] for e in d.tick(T0 + 1)] == [["t0w1"]]


def test_late_tick_reveals_due_words_in_one_event():
    d = started()
    events = d.tick(T0 + 3.5)
    assert [e.event for e in events] == ["words"]
    assert events[0].data["start"] == 1 and events[0].data["words"] == ["t0w1", "t0w2", "t0w3"]
    assert events[0].data["revealed_at"] == pytest.approx(T0 + 3)
    assert d.state.tossup.revealed_at == pytest.approx([T0, T0 + 3, T0 + 3, T0 + 3])
    assert d.state.next_deadline == pytest.approx(T0 + 4)  # the schedule does not drift


# (preset, buzz token, time of buzz, outcome, expected points): 10 words, (*) after word 4.
@pytest.mark.parametrize(
    "preset,token,at,outcome,points",
    [
        ("naqt", 2, 2.5, "accept", 15),
        ("naqt", 3, 3.5, "accept", 15),
        ("naqt", 4, 4.5, "accept", 10),
        ("acf", 2, 2.5, "accept", 10),
        ("naqt", 5, 5.5, "reject", -5),
        ("acf", 5, 5.5, "reject", -5),
        ("naqt", 9, 10.0, "reject", 0),  # after the full read
        ("naqt", 5, 5.5, "no_penalty", 0),
        ("naqt", 20, 2.5, "accept", 15),  # claimed token is clamped to what was revealed
    ],
)
def test_points_by_ruling(preset, token, at, outcome, points):
    d = started(preset=preset)
    buzz_won(d, HUMAN_A, token, T0 + at)
    d.do(Rule(outcome), T0 + at + 1)
    ruled = d.last("buzz_ruled")
    assert ruled.data["points"] == points
    assert ruled.data["scores"][str(TEAM_A)] == points == d.state.scores[str(TEAM_A)]
    assert ruled.data["ruling"] == {"accept": "correct", "reject": "wrong"}.get(outcome, outcome)


def test_superpower_mark():
    d = Driver(make_state(texts=["a b (+) c d (*) e f g h"]))
    d.do(Start(), T0)
    buzz_won(d, HUMAN_A, 1, T0 + 1.5)
    d.do(Rule("accept"), T0 + 2)
    assert d.last("buzz_ruled").data["points"] == 20


@pytest.mark.parametrize("neg_after_neg,second", [(False, 0), (True, -5)])
def test_second_neg(neg_after_neg, second):
    d = started()
    d.state.config = replace(
        d.state.config, preset=replace(d.state.config.preset, neg_after_neg=neg_after_neg)
    )
    buzz_won(d, HUMAN_A, 2, T0 + 2.5)
    assert d.types(d.do(Rule("reject"), T0 + 3)) == ["buzz_ruled", "reading_resumed", "words"]
    buzz_won(d, HUMAN_B, 5, T0 + 5.5)
    d.do(Rule("reject"), T0 + 6)
    assert [e.data["points"] for e in d.all("buzz_ruled")] == [-5, second]
    assert d.state.scores == {str(TEAM_A): -5, str(TEAM_B): second, str(TEAM_BOT): 0}


def test_reading_resumes_where_it_stopped_after_a_wrong_answer():
    d = started()
    buzz_won(d, HUMAN_A, 2, T0 + 2.5)
    assert d.state.next_deadline == pytest.approx(T0 + 2.65 + 8)  # only the answer window
    d.do(Rule("reject"), T0 + 7)
    words = d.last("words")
    assert words.data["start"] == 3 and words.data["revealed_at"] == pytest.approx(T0 + 7)
    assert d.state.next_deadline == pytest.approx(T0 + 8)


def test_one_buzz_per_team_and_lockouts():
    d = started(collection_window=0.2)
    d.run_until(T0 + 2.5)
    d.do(Buzz(HUMAN_A, Q0, 2), T0 + 2.5)
    assert refused(d, Buzz(HUMAN_A2, Q0, 2), T0 + 2.55) == "team_already_buzzed"
    assert refused(d, Buzz(HUMAN_A, Q0, 2), T0 + 2.55) == "team_already_buzzed"
    d.run_until(T0 + 2.7)
    assert refused(d, Buzz(HUMAN_B, Q0, 2), T0 + 2.8) == "locked_out"
    d.do(Rule("reject"), T0 + 3)
    assert refused(d, Buzz(HUMAN_A2, Q0, 3), T0 + 3.1) == "team_already_buzzed"
    d.do(Buzz(HUMAN_B, Q0, 3), T0 + 3.2)  # the other team is still eligible


@pytest.mark.parametrize(
    "cmd,reason",
    [
        (Buzz(HUMAN_A, 999, 1), "wrong_question"),
        (Buzz(77, Q0, 1), "unknown_player"),
        (Answer(HUMAN_A, Q0, "x", "accept"), "not_your_buzz"),
        (Answer(HUMAN_A, Q0, "x", "maybe"), "bad_verdict"),
        (Rule("accept"), "no_pending_answer"),
        (Rule("sure"), "bad_verdict"),
        (SetSpeed(0), "bad_value"),
        (Start(), "bad_phase"),
    ],
)
def test_refused_commands_change_nothing(cmd, reason):
    d = started()
    d.run_until(T0 + 1.5)
    assert refused(d, cmd, T0 + 1.6) == reason


def test_buzz_before_start_and_after_the_tossup_is_refused():
    d = Driver(make_state())
    assert refused(d, Buzz(HUMAN_A, Q0, 0), T0) == "not_live"
    d.do(Start(), T0)
    d.run_until(T0 + 14)  # 10 words + 5 s dead time
    assert d.last("tossup_ended").data["outcome"] == "dead"
    assert refused(d, Buzz(HUMAN_A, Q0, 9), T0 + 14.01) == "not_live"


def test_dead_time_after_full_read():
    d = started()
    d.run_until(T0 + 13.99)
    assert d.state.phase == "dead_time" and not d.all("tossup_ended")
    d.run_until(T0 + 14)
    assert d.last("tossup_ended").data == {
        "question_id": Q0,
        "answer_line": "ANSWER-LINE-0",
        "power_index": 4,
        "superpower_index": None,
        "outcome": "dead",
        "scores": {str(TEAM_A): 0, str(TEAM_B): 0, str(TEAM_BOT): 0},
        "words": [f"t0w{k}" for k in range(10)],
    }
    assert d.state.phase == "between" and d.state.next_deadline == pytest.approx(T0 + 16)


def test_buzz_in_dead_time_and_wrong_restarts_dead_time():
    d = started()
    buzz_won(d, HUMAN_A, 9, T0 + 12)
    d.do(Rule("reject"), T0 + 13)
    assert d.last("buzz_ruled").data["points"] == 0
    assert d.state.phase == "dead_time" and d.state.next_deadline == pytest.approx(T0 + 18)


def test_all_teams_wrong_ends_the_tossup_dead():
    d = started()
    for player, t in ((HUMAN_A, 2.5), (HUMAN_B, 3.5), (BOT, 5.5)):
        buzz_won(d, player, int(t), T0 + t)
        d.do(Rule("reject"), T0 + t + 0.4)
    assert d.last("tossup_ended").data["outcome"] == "dead"
    assert [e.data["points"] for e in d.all("buzz_ruled")] == [-5, 0, 0]


def test_collection_window_ranks_by_token_then_corrected_press_time():
    d = started()
    d.run_until(T0 + 5.05)
    d.do(Buzz(HUMAN_B, Q0, 5, corrected_press_at=T0 + 5.04, delay_bound=0.02), T0 + 5.05)
    # A slower network (measured one-way delay up to 0.2 s): token 5, shown at T0+5, may not
    # have reached A's tablet by T0+5.12 − 0.2, so its claim of token 4 stands.
    d.do(Buzz(HUMAN_A, Q0, 4, corrected_press_at=T0 + 5.08, delay_bound=0.2), T0 + 5.12)
    assert d.tick(T0 + 5.19) == []
    events = d.tick(T0 + 5.2)
    race = next(e for e in events if e.event == "race")
    assert race.audience == "moderator" and race.data["winner"] == HUMAN_A
    assert [c["player_id"] for c in race.data["candidates"]] == [HUMAN_A, HUMAN_B]
    lost = next(e for e in events if e.event == "buzz_lost")
    assert lost.audience == f"player:{HUMAN_B}" and lost.data["reason"] == "outraced"
    assert lost.data["margin"] is None  # outraced on an earlier word: no margin in time
    assert d.last("buzz").data["token_index"] == 4
    d.do(Rule("reject"), T0 + 6)
    d.do(Buzz(HUMAN_B, Q0, 6), T0 + 6.1)  # the loser stayed eligible


def test_token_tie_broken_by_corrected_press_time_not_arrival():
    d = started()
    d.run_until(T0 + 5.05)
    d.do(Buzz(HUMAN_A, Q0, 5, corrected_press_at=T0 + 5.03, delay_bound=0.1), T0 + 5.05)
    d.do(Buzz(HUMAN_B, Q0, 5, corrected_press_at=T0 + 5.01, delay_bound=0.1), T0 + 5.10)
    d.run_until(T0 + 5.3)
    assert d.last("race").data["winner"] == HUMAN_B
    # the loser learns the margin as the race counted it, not as its own clock saw it
    assert d.last("buzz_lost").data == {
        "question_id": Q0,
        "reason": "outraced",
        "margin": pytest.approx(0.02),
    }


def test_zero_collection_window_first_arrival_wins_at_once():
    d = started(collection_window=0.0)
    d.run_until(T0 + 5.05)
    events = d.do(Buzz(HUMAN_B, Q0, 5), T0 + 5.05)
    assert [e.event for e in events] == ["buzz_received", "race", "buzz"]
    assert events[2].data["answer_deadline"] == pytest.approx(T0 + 5.05 + 8)
    assert refused(d, Buzz(HUMAN_A, Q0, 4), T0 + 5.06) == "locked_out"


def test_bot_buzz_held_until_reaction_delay():
    d = started(preset="hvc")
    d.run_until(T0 + 5.01)
    # Held: token 5 revealed at T0+5, reaction delay 0.3; only the receipt is logged.
    assert d.types(d.do(Buzz(BOT, Q0, 5), T0 + 5.01)) == ["buzz_received"]
    assert d.state.next_deadline == pytest.approx(T0 + 5.3)
    # The held buzz is in the race (moderator's view) and its team may not buzz again.
    assert [c["player_id"] for c in view(d.state, "moderator")["tossup"]["racing"]] == [BOT]
    assert refused(d, Buzz(BOT, Q0, 5), T0 + 5.1) == "team_already_buzzed"
    assert d.tick(T0 + 5.29) == []
    d.run_until(T0 + 5.45)
    buzz = d.last("buzz").data
    assert buzz["player_id"] == BOT and buzz["accepted_at"] == pytest.approx(T0 + 5.3)
    assert buzz["revealed_at"] == pytest.approx(T0 + 5) and buzz["received_at"] == pytest.approx(T0 + 5.01)


def test_human_pressing_within_the_bot_delay_beats_the_bot():
    d = started(preset="hvc")
    d.run_until(T0 + 5.01)
    d.do(Buzz(BOT, Q0, 5), T0 + 5.01)
    d.do(Buzz(HUMAN_A, Q0, 5, corrected_press_at=T0 + 5.25), T0 + 5.28)
    d.run_until(T0 + 6)
    race = d.last("race").data
    assert race["winner"] == HUMAN_A and {c["player_id"] for c in race["candidates"]} == {HUMAN_A, BOT}
    assert d.last("buzz_lost").audience == f"player:{BOT}"


def test_bot_cannot_claim_a_press_inside_its_reaction_delay():
    d = started(preset="hvc")
    d.run_until(T0 + 5.4)
    # Counts as pressed at T0+5.3 (its release), not at its claimed T0+5.01.
    d.do(Buzz(BOT, Q0, 5, corrected_press_at=T0 + 5.01, delay_bound=0.3), T0 + 5.4)
    d.do(Buzz(HUMAN_A, Q0, 5, corrected_press_at=T0 + 5.25, delay_bound=0.3), T0 + 5.45)
    d.run_until(T0 + 6)
    assert d.last("race").data["winner"] == HUMAN_A


def test_held_bot_buzz_dropped_when_a_human_already_won():
    d = started(preset="hvc", collection_window=0.0)
    d.run_until(T0 + 5.01)
    d.do(Buzz(BOT, Q0, 5), T0 + 5.01)
    d.do(Buzz(HUMAN_A, Q0, 5), T0 + 5.1)
    d.run_until(T0 + 5.5)
    assert d.last("buzz").data["player_id"] == HUMAN_A
    assert d.last("buzz_lost").audience == f"player:{BOT}"
    assert d.state.tossup.held == []


def test_bot_handicaps_min_token_and_buzz_period():
    d = started(preset="hvc")
    preset = replace(d.state.config.preset, min_token_for_bots=3, buzz_period=2)
    d.state.config = replace(d.state.config, preset=preset)
    d.run_until(T0 + 2.1)
    assert refused(d, Buzz(BOT, Q0, 2, delay_bound=0.3), T0 + 2.1) == "bot_min_token"
    d.run_until(T0 + 5.9)
    # The rules judge the server's index: token 5 was surely shown by T0+5.9 − 0.3, so a claim
    # of token 4 is decided as 5, an odd token.
    assert refused(d, Buzz(BOT, Q0, 4, delay_bound=0.3), T0 + 5.9) == "bot_buzz_period"
    assert refused(d, Buzz(BOT, Q0, 5, delay_bound=0.3), T0 + 5.9) == "bot_buzz_period"
    d.run_until(T0 + 6.1)
    d.do(Buzz(BOT, Q0, 6, delay_bound=0.3), T0 + 6.1)
    d.do(Buzz(HUMAN_A, Q0, 5, delay_bound=0.3), T0 + 6.11)  # the humans are not handicapped
    t = d.state.tossup
    assert [(c.player_id, c.token_index) for c in [*t.held, *t.candidates]] == [(BOT, 6), (HUMAN_A, 5)]


def test_bot_points_deflated_by_weight_class():
    d = started(preset="hvc", bot_class="heavy")
    d.run_until(T0 + 2.5)
    d.do(Buzz(BOT, Q0, 2), T0 + 2.5)
    d.run_until(T0 + 3)
    d.do(Rule("accept"), T0 + 3)
    assert d.last("buzz_ruled").data["points"] == 12  # 15 × 0.8


def test_auto_rule_prompt_then_second_prompt_is_wrong():
    d = started(auto_rule=True)
    buzz_won(d, HUMAN_A, 5, T0 + 5.5)
    d.do(Answer(HUMAN_A, Q0, "partial", "prompt", directed_prompt="Full name?"), T0 + 6)
    prompt = d.last("prompt").data
    assert prompt["directed_prompt"] == "Full name?" and prompt["answer_deadline"] == pytest.approx(T0 + 14)
    assert d.state.phase == "answering"
    d.do(Answer(HUMAN_A, Q0, "still partial", "prompt"), T0 + 7)
    ruled = d.last("buzz_ruled").data
    assert ruled["ruling"] == "wrong" and ruled["points"] == -5 and ruled["guess"] == "still partial"


def test_auto_rule_accept_and_needs_moderator():
    d = started(auto_rule=True)
    buzz_won(d, HUMAN_A, 5, T0 + 5.5)
    d.do(Answer(HUMAN_A, Q0, "hmm", "needs_moderator", reason="free text"), T0 + 6)
    given = d.last("answer_given")
    assert given.audience == "moderator" and given.data["guess"] == "hmm"
    assert d.state.phase == "ruling" and d.state.next_deadline is None
    assert refused(d, Answer(HUMAN_A, Q0, "again", "accept"), T0 + 7) == "answer_window_closed"
    d.do(Rule("accept"), T0 + 30)
    assert d.last("buzz_ruled").data["points"] == 10


def test_moderator_prompt_then_accept():
    d = started()
    buzz_won(d, HUMAN_A, 2, T0 + 2.5)
    d.do(Answer(HUMAN_A, Q0, "Curie", "prompt", directed_prompt="Which one?"), T0 + 3)
    assert d.last("answer_given").data["verdict"] == "prompt"
    d.do(Rule("prompt", directed_prompt="Which one?"), T0 + 4)
    assert d.last("prompt").data["answer_deadline"] == pytest.approx(T0 + 12)
    d.do(Answer(HUMAN_A, Q0, "Marie Curie", "accept"), T0 + 5)
    assert d.state.phase == "ruling"
    d.do(Rule("accept"), T0 + 6)
    assert d.last("buzz_ruled").data == {
        "question_id": Q0,
        "player_id": HUMAN_A,
        "team_id": TEAM_A,
        "guess": "Marie Curie",
        "verdict": "accept",
        "ruling": "correct",
        "points": 15,
        "token_index": 2,
        "token_count": 10,
        "tossup_index": 0,
        "at": T0 + 6,
        "fully_read": False,
        "scores": {str(TEAM_A): 15, str(TEAM_B): 0, str(TEAM_BOT): 0},
    }


def test_answer_timeout_scores_like_wrong():
    d = started()
    buzz_won(d, HUMAN_A, 3, T0 + 3.5)
    deadline = d.last("buzz").data["answer_deadline"]
    assert deadline == pytest.approx(T0 + 3.65 + 8)
    d.run_until(deadline - 0.01)
    assert not d.all("buzz_ruled")
    d.run_until(deadline)
    ruled = d.last("buzz_ruled").data
    assert ruled["ruling"] == "timeout" and ruled["points"] == -5
    assert refused(d, Answer(HUMAN_A, Q0, "late", "accept"), deadline + 0.1) == "answer_window_closed"


def test_answer_only_from_the_buzzer():
    d = started()
    buzz_won(d, HUMAN_A, 3, T0 + 3.5)
    assert refused(d, Answer(HUMAN_A2, Q0, "x", "accept"), T0 + 4) == "not_your_buzz"
    assert refused(d, Answer(HUMAN_A, 101, "x", "accept"), T0 + 4) == "wrong_question"


def test_speed_change_keeps_position():
    d = started()
    d.run_until(T0 + 2.1)
    d.do(SetSpeed(30), T0 + 2.1)  # 2 s per word from the last reveal at T0+2
    assert d.state.tossup.revealed == 3 and d.state.next_deadline == pytest.approx(T0 + 4)
    assert d.last("speed_changed").data == {"wpm": 30}
    d.run_until(T0 + 3.9)
    events = d.do(SetSpeed(600), T0 + 3.9)  # already late: the next word comes now
    assert [e.event for e in events] == ["speed_changed", "words"]
    assert d.state.tossup.revealed == 4 and d.state.next_deadline == pytest.approx(T0 + 4.0)


def test_views_hide_answer_line_until_the_reveal():
    d = started()
    buzz_won(d, HUMAN_A, 2, T0 + 2.5)
    d.do(Answer(HUMAN_A, Q0, "my guess", "reject"), T0 + 3)
    mod, spectator = view(d.state, "moderator"), view(d.state, "all")
    me, other = view(d.state, f"player:{HUMAN_A}"), view(d.state, f"player:{HUMAN_B}")
    assert mod["tossup"]["answer_line"] == "ANSWER-LINE-0"
    for v in (spectator, me, other):
        assert "answer_line" not in v["tossup"]
    # The guess and the judge's verdict wait for the moderator; the buzzer's tablet knows its own text.
    assert mod["tossup"]["buzz"]["guess"] == "my guess" and mod["tossup"]["buzz"]["verdict"] == "reject"
    for v in (spectator, me, other):
        assert "guess" not in v["tossup"]["buzz"] and v["phase"] == "ruling"
    assert other["tossup"]["words_revealed"] == ["t0w0", "t0w1", "t0w2"]
    d.do(Rule("accept"), T0 + 4)
    assert view(d.state, "all")["tossup"]["answer_line"] == "ANSWER-LINE-0"
    with pytest.raises(ValueError):
        view(d.state, "team:1")


def test_an_early_answer_shows_every_player_the_whole_tossup_once_it_ended():
    d = started()
    buzz_won(d, HUMAN_A, 2, T0 + 2.5)
    assert "words" not in view(d.state, f"player:{HUMAN_B}")["tossup"]  # not while it is live
    d.do(Rule("accept"), T0 + 3)
    full = [f"t0w{k}" for k in range(10)]
    assert d.last("tossup_ended").data["words"] == full
    for audience in ("all", f"player:{HUMAN_B}", "moderator"):
        t = view(d.state, audience)["tossup"]
        assert t["words"] == full and t["words_revealed"] == full[:3]


def test_config_round_trip():
    cfg = MatchConfig(preset=load_preset("hvc"), wpm=250, auto_rule=True, collection_window=0)
    assert MatchConfig.from_dict(cfg.to_dict()) == cfg
    assert MatchConfig.from_dict({"preset": "acf"}).preset == load_preset("acf")
    with pytest.raises(ValueError):
        MatchConfig(preset=load_preset("acf"), wpm=0)


def test_neg_decided_by_the_read_when_the_buzz_arrived():
    d = started()
    d.run_until(T0 + 8.95)
    d.do(Buzz(HUMAN_A, Q0, 8), T0 + 8.95)
    d.run_until(T0 + 9.1)  # the last word came out inside the collection window
    assert d.state.tossup.revealed == 10 and d.state.phase == "answering"
    d.do(Rule("reject"), T0 + 10)
    assert d.last("buzz_ruled").data["points"] == -5


def test_held_bot_buzz_cannot_return_after_a_fast_ruling():
    d = started(preset="hvc", collection_window=0.0, auto_rule=True)
    d.run_until(T0 + 5.01)
    d.do(Buzz(BOT, Q0, 5), T0 + 5.01)  # held until T0+5.3
    d.do(Buzz(HUMAN_A, Q0, 5), T0 + 5.1)
    assert d.state.tossup.held == [] and d.last("buzz_lost").audience == f"player:{BOT}"
    d.do(Answer(HUMAN_A, Q0, "nope", "reject"), T0 + 5.15)
    d.run_until(T0 + 5.5)
    assert d.state.phase == "reading" and [e.data["player_id"] for e in d.all("buzz")] == [HUMAN_A]
    d.do(Buzz(BOT, Q0, 5), T0 + 5.5)  # the bot may buzz again


def test_the_moderator_view_names_the_bonus_part_waiting_for_a_ruling():
    """A dashboard that resyncs while a bonus answer waits shows which part it is for."""
    d = started()
    buzz_won(d, HUMAN_A, 2, T0 + 2.5)
    d.do(Answer(HUMAN_A, Q0, "g", "accept"), T0 + 2.7)
    d.do(Rule("accept"), T0 + 2.8)
    bonus_id = d.state.bonus.bonus_id
    d.do(BonusAnswer(HUMAN_A, bonus_id, 0, "b", "reject"), T0 + 3)
    pending = view(d.state, "moderator")["bonus"]["pending"]
    assert pending["part"] == 0 and pending["guess"] == "b"
