"""Hybrid teams (HYBRID.md): bot seats' buzz modes, team lockout with mixed seats, the
moderator's delegation, and the captain's own/consult/abstain on bonus parts (qanta26)."""

from __future__ import annotations

import pytest

from competition.game import (
    Answer,
    BonusAnswer,
    BonusSuggestion,
    Buzz,
    ConfirmBuzz,
    DecideBonus,
    Delegate,
    MatchConfig,
    Pause,
    PlayerSpec,
    ReplayTossup,
    Resume,
    Rule,
    RuleViolation,
    SeatPlayer,
    Start,
    TeamSpec,
    Undo,
    apply,
    new_match,
    view,
)
from competition.game.specs import tokenize_tossup
from scoring.rules import load_preset

from .support import (
    AUTO_B,
    BOT,
    HUMAN_A,
    HUMAN_A2,
    HUMAN_B,
    MUTED_B,
    SEMI_A,
    T0,
    TEAM_A,
    TEAM_B,
    Driver,
    make_state,
    started,
)

Q0 = 100
B0 = 500


def refused(d: Driver, cmd, now: float) -> str:
    """The refusal reason; also checks that nothing changed."""
    before = d.state.to_dict()
    with pytest.raises(RuleViolation) as err:
        apply(d.state, cmd, now)
    assert d.state.to_dict() == before
    return err.value.code


def hybrid(**kw) -> Driver:
    return started(hybrid=True, **{"preset": "qanta26", **kw})


def buzz_and_win(d: Driver, player: int, token: int, at: float) -> None:
    d.run_until(at)
    d.do(Buzz(player, Q0, token, corrected_press_at=at), at)
    bot = d.state.player(player).kind == "bot"  # raced after its reaction delay
    d.run_until(at + d.state.config.collection_window + (d.state.config.reaction_delay if bot else 0))
    assert d.state.phase == "answering" and d.state.tossup.buzz.player_id == player


# -- semi-autonomous: a human confirms ---------------------------------------------------------


def test_semi_autonomous_buzz_waits_for_a_teammate_then_races_at_the_confirmation():
    d = hybrid()
    d.run_until(T0 + 2)
    events = d.do(Buzz(SEMI_A, Q0, 2), T0 + 2)
    assert [(e.event, e.audience) for e in events] == [
        ("buzz_proposed", f"team:{TEAM_A}"),
        ("buzz_proposed", "moderator"),
    ]
    assert events[0].data == {
        "question_id": Q0,
        "player_id": SEMI_A,
        "team_id": TEAM_A,
        "token_index": 2,
        "deadline": T0 + 2 + 3.0,
    }
    # Not a buzz yet: nothing races, the reading goes on.
    assert d.state.phase == "reading" and not d.state.tossup.candidates
    assert view(d.state, f"player:{HUMAN_A2}")["tossup"]["proposals"][0]["player_id"] == SEMI_A
    assert view(d.state, f"player:{HUMAN_B}")["tossup"]["proposals"] == []  # the other team
    assert "proposals" not in view(d.state, "all")["tossup"]
    d.run_until(T0 + 4)  # token 4 revealed at T0 + 4
    events = d.do(ConfirmBuzz(SEMI_A, True, HUMAN_A2), T0 + 4.1)
    assert d.types(events) == ["proposal_closed", "proposal_closed", "buzz_received"]
    assert events[0].data["outcome"] == "confirmed" and events[0].data["by"] == HUMAN_A2
    assert events[2].data["token_index"] == 4 and events[2].data["claimed_token_index"] == 2
    d.run_until(T0 + 4.1 + d.state.config.collection_window)
    assert d.state.phase == "answering"
    assert d.state.tossup.buzz.player_id == SEMI_A and d.state.tossup.buzz.token_index == 4


def test_moderator_confirms_and_a_teammate_may_decline():
    d = hybrid()
    d.run_until(T0 + 1)
    d.do(Buzz(SEMI_A, Q0, 1), T0 + 1)
    events = d.do(ConfirmBuzz(SEMI_A, False, HUMAN_A), T0 + 1.5)
    assert d.types(events) == ["proposal_closed", "proposal_closed", "buzz_lost"]
    assert events[0].data["outcome"] == "declined"
    assert events[2].audience == f"player:{SEMI_A}" and events[2].data["reason"] == "declined"
    assert d.state.tossup.proposals == [] and d.state.phase == "reading"
    # A declined buzz is no team buzz: the bot may propose again, the moderator confirms it.
    d.run_until(T0 + 2)
    d.do(Buzz(SEMI_A, Q0, 2), T0 + 2)
    d.do(ConfirmBuzz(SEMI_A, True, None), T0 + 2.2)
    d.run_until(T0 + 2.5)
    assert d.state.tossup.buzz.player_id == SEMI_A


def test_an_unconfirmed_buzz_lapses_after_the_window_and_the_team_may_still_buzz():
    d = hybrid(confirm_window=1.5)
    d.run_until(T0 + 1)
    d.do(Buzz(SEMI_A, Q0, 1), T0 + 1)
    assert d.state.tossup.proposals[0].deadline == T0 + 2.5
    events = d.run_until(T0 + 3)
    lapsed = [e for e in events if e.event in ("proposal_closed", "buzz_lost")]
    assert [(e.event, e.audience, e.data.get("outcome", e.data.get("reason"))) for e in lapsed] == [
        ("proposal_closed", f"team:{TEAM_A}", "timeout"),
        ("proposal_closed", "moderator", "timeout"),
        ("buzz_lost", f"player:{SEMI_A}", "timeout"),
    ]
    assert refused(d, ConfirmBuzz(SEMI_A, True, HUMAN_A), T0 + 3) == "no_pending_buzz"
    buzz_and_win(d, HUMAN_A, 3, T0 + 3.2)


def test_the_confirmation_window_stops_with_the_clock():
    d = hybrid(confirm_window=1.0)
    d.run_until(T0 + 1)
    d.do(Buzz(SEMI_A, Q0, 1), T0 + 1)
    d.do(Pause(), T0 + 1.5)
    d.do(Resume(), T0 + 11.5)
    assert d.state.tossup.proposals[0].deadline == T0 + 12
    d.do(ConfirmBuzz(SEMI_A, True, HUMAN_A), T0 + 11.9)
    d.run_until(T0 + 12.2)
    assert d.state.tossup.buzz.player_id == SEMI_A


def test_only_a_human_teammate_or_the_moderator_confirms():
    d = hybrid()
    d.run_until(T0 + 1)
    d.do(Buzz(SEMI_A, Q0, 1), T0 + 1)
    assert refused(d, ConfirmBuzz(SEMI_A, True, HUMAN_B), T0 + 1.1) == "not_your_team"
    assert refused(d, ConfirmBuzz(SEMI_A, True, SEMI_A), T0 + 1.1) == "not_your_team"  # itself
    assert refused(d, ConfirmBuzz(SEMI_A, True, BOT), T0 + 1.1) == "not_your_team"
    assert refused(d, ConfirmBuzz(SEMI_A, True, 999), T0 + 1.1) == "unknown_player"
    assert refused(d, ConfirmBuzz(AUTO_B, True, HUMAN_B), T0 + 1.1) == "no_pending_buzz"
    assert refused(d, Buzz(SEMI_A, Q0, 1), T0 + 1.2) == "already_buzzed"


def test_a_confirmation_is_refused_like_a_buzz_while_another_is_answered_and_stays_pending():
    d = hybrid()
    d.run_until(T0 + 1)
    d.do(Buzz(SEMI_A, Q0, 1), T0 + 1)
    buzz_and_win(d, HUMAN_B, 1, T0 + 1.2)
    assert refused(d, ConfirmBuzz(SEMI_A, True, HUMAN_A), T0 + 1.5) == "locked_out"
    d.do(Rule("reject"), T0 + 1.6)  # B negs; reading resumes
    d.do(ConfirmBuzz(SEMI_A, True, HUMAN_A), T0 + 1.7)
    d.run_until(T0 + 2)
    assert d.state.tossup.buzz.player_id == SEMI_A


def test_a_semi_autonomous_buzz_after_its_team_buzzed_is_refused():
    d = hybrid()
    buzz_and_win(d, HUMAN_A, 1, T0 + 1)
    d.do(Rule("reject"), T0 + 1.5)
    d.run_until(T0 + 2)
    assert refused(d, Buzz(SEMI_A, Q0, 2), T0 + 2) == "team_already_buzzed"


def test_proposals_close_when_the_tossup_ends():
    d = hybrid()
    d.run_until(T0 + 1)
    d.do(Buzz(SEMI_A, Q0, 1), T0 + 1)
    buzz_and_win(d, HUMAN_B, 1, T0 + 1.2)
    events = d.do(Rule("accept"), T0 + 1.5)
    closed = [e for e in events if e.event == "proposal_closed"]
    assert {e.data["outcome"] for e in closed} == {"tossup_ended"}
    assert d.state.tossup.proposals == []


# -- muted: would-be buzzes logged, never racing -------------------------------------------------


def test_a_muted_bot_is_logged_for_the_moderator_only_and_never_races():
    d = hybrid()
    d.run_until(T0 + 3)
    events = d.do(Buzz(MUTED_B, Q0, 3), T0 + 3)
    assert [(e.event, e.audience) for e in events] == [("muted_buzz", "moderator")]
    assert events[0].data == {
        "question_id": Q0,
        "player_id": MUTED_B,
        "team_id": TEAM_B,
        "token_index": 3,
        "claimed_token_index": 3,
        "received_at": T0 + 3,
    }
    assert d.state.phase == "reading" and not d.state.tossup.candidates and not d.state.tossup.held
    assert refused(d, Buzz(MUTED_B, Q0, 3), T0 + 3.1) == "already_buzzed"
    # Its team is not locked: its human buzzes and wins.
    buzz_and_win(d, HUMAN_B, 3, T0 + 3.2)


def test_a_muted_bot_is_logged_even_while_another_buzz_is_answered():
    d = hybrid()
    buzz_and_win(d, HUMAN_A, 1, T0 + 1)
    events = d.do(Buzz(MUTED_B, Q0, 1), T0 + 1.5)
    assert d.types(events) == ["muted_buzz"] and d.state.phase == "answering"


def test_a_team_of_muted_bots_only_does_not_keep_a_tossup_alive():
    cfg = MatchConfig(preset=load_preset("qanta26"), wpm=60)
    teams = [TeamSpec(TEAM_A, "Alpha", "human"), TeamSpec(TEAM_B, "Quiet", "bot")]
    players = [
        PlayerSpec(HUMAN_A, TEAM_A, "ann", "human"),
        PlayerSpec(MUTED_B, TEAM_B, "m", "bot", "mid", "muted"),
    ]
    d = Driver(new_match(cfg, teams, players, [tokenize_tossup(Q0, "a b c d e", "X")], []))
    d.do(Start(), T0)
    buzz_and_win(d, HUMAN_A, 1, T0 + 1)
    d.do(Rule("reject"), T0 + 1.5)
    assert d.state.tossup.outcome == "dead"


# -- autonomous with a minimum token -------------------------------------------------------------


def test_an_autonomous_bot_buzzes_only_from_its_seats_min_token():
    d = hybrid()
    d.run_until(T0 + 1)
    assert refused(d, Buzz(AUTO_B, Q0, 1), T0 + 1) == "bot_min_token"
    d.run_until(T0 + 2)
    events = d.do(Buzz(AUTO_B, Q0, 2), T0 + 2)
    assert d.types(events) == ["buzz_received"]  # held for its reaction delay, then races
    d.run_until(T0 + 2.6)
    assert d.state.tossup.buzz.player_id == AUTO_B


# -- team lockout with mixed seats ---------------------------------------------------------------


def test_a_team_is_locked_out_as_a_team_whoever_buzzed():
    d = hybrid()
    buzz_and_win(d, AUTO_B, 2, T0 + 2)  # B's bot buzzes and negs
    d.do(Rule("reject"), T0 + 2.8)
    assert refused(d, Buzz(HUMAN_B, Q0, 2), T0 + 2.9) == "team_already_buzzed"
    buzz_and_win(d, HUMAN_A, 3, T0 + 3)  # A's human buzzes and negs
    d.do(Rule("reject"), T0 + 3.5)
    assert refused(d, Buzz(SEMI_A, Q0, 3), T0 + 3.6) == "team_already_buzzed"
    assert refused(d, Buzz(HUMAN_A2, Q0, 3), T0 + 3.6) == "team_already_buzzed"


def test_one_buzz_per_team_in_the_collection_window_with_mixed_seats():
    d = hybrid(collection_window=0.5)
    d.run_until(T0 + 2)
    d.do(Buzz(HUMAN_B, Q0, 2), T0 + 2.0)
    assert refused(d, Buzz(AUTO_B, Q0, 2), T0 + 2.1) == "team_already_buzzed"
    d.do(Buzz(SEMI_A, Q0, 2), T0 + 2.1)
    d.do(ConfirmBuzz(SEMI_A, True, HUMAN_A), T0 + 2.2)
    assert refused(d, Buzz(HUMAN_A, Q0, 2), T0 + 2.3) == "team_already_buzzed"
    d.run_until(T0 + 2.6)
    assert d.state.tossup.buzz.player_id == HUMAN_B  # pressed first on the same token


# -- delegation ----------------------------------------------------------------------------------


def test_the_moderator_delegates_the_answer_to_the_teams_ai_and_points_are_deflated():
    d = hybrid()
    buzz_and_win(d, HUMAN_B, 1, T0 + 1)  # before the power mark: 15
    events = d.do(Delegate(AUTO_B), T0 + 2)
    assert [(e.event, e.audience) for e in events] == [("answer_delegated", "all")]
    assert events[0].data == {
        "question_id": Q0,
        "player_id": HUMAN_B,
        "answerer_id": AUTO_B,
        "answer_deadline": T0 + 2 + d.state.config.answer_window,
    }
    assert refused(d, Answer(HUMAN_B, Q0, "mine", "accept"), T0 + 2.1) == "not_your_buzz"
    d.do(Answer(AUTO_B, Q0, "bot's", "accept"), T0 + 2.2)
    events = d.do(Rule("accept"), T0 + 2.3)
    ruled = next(e for e in events if e.event == "buzz_ruled")
    assert ruled.data["player_id"] == HUMAN_B and ruled.data["answerer_id"] == AUTO_B
    assert ruled.data["points"] == 12  # 15 × 0.8 (mid)
    assert d.state.history[-1].answerer_id == AUTO_B


def test_revert_gives_the_answer_back_to_the_buzzer_at_full_points():
    d = hybrid()
    buzz_and_win(d, HUMAN_B, 1, T0 + 1)
    d.do(Delegate(AUTO_B), T0 + 2)
    events = d.do(Delegate(None), T0 + 3)
    assert events[0].data["answerer_id"] == HUMAN_B
    assert refused(d, Answer(AUTO_B, Q0, "bot's", "accept"), T0 + 3.1) == "not_your_buzz"
    d.do(Answer(HUMAN_B, Q0, "mine", "accept"), T0 + 3.2)
    events = d.do(Rule("accept"), T0 + 3.3)
    ruled = next(e for e in events if e.event == "buzz_ruled")
    assert ruled.data["points"] == 15 and "answerer_id" not in ruled.data


def test_a_delegated_answers_timeout_counts_from_the_delegation():
    d = hybrid()
    buzz_and_win(d, HUMAN_B, 1, T0 + 1)
    d.do(Delegate(AUTO_B), T0 + 5)
    window = d.state.config.answer_window
    d.run_until(T0 + 5 + window - 0.1)
    assert d.state.phase == "answering"
    d.run_until(T0 + 5 + window + 0.1)
    assert d.state.history[-1].ruling == "timeout" and d.state.history[-1].answerer_id == AUTO_B


def test_delegation_refusals():
    d = hybrid()
    assert refused(d, Delegate(AUTO_B), T0) == "no_pending_answer"
    buzz_and_win(d, HUMAN_B, 1, T0 + 1)
    assert refused(d, Delegate(SEMI_A), T0 + 2) == "not_your_team"  # another team's bot
    assert refused(d, Delegate(HUMAN_A), T0 + 2) == "not_your_team"  # a human
    assert refused(d, Delegate(None), T0 + 2) == "bad_value"  # nothing to revert
    assert refused(d, Delegate(999), T0 + 2) == "unknown_player"
    d.do(Answer(HUMAN_B, Q0, "x", "needs_moderator"), T0 + 2.5)
    assert refused(d, Delegate(AUTO_B), T0 + 3) == "no_pending_answer"  # waits for a ruling


# -- bonus decisions (qanta26) -------------------------------------------------------------------


def at_bonus(preset: str = "qanta26", semi_class: str = "light", **kw) -> Driver:
    """Team A (captain HUMAN_A, bot SEMI_A of ``semi_class``) earned bonus B0 at T0 + 2."""
    state = make_state(preset=preset, hybrid=True, **kw)
    state.players = [
        PlayerSpec(p.player_id, p.team_id, p.name, p.kind, semi_class, p.buzz_mode)
        if p.player_id == SEMI_A
        else p
        for p in state.players
    ]
    d = Driver(state)
    d.do(Start(), T0)
    buzz_and_win(d, HUMAN_A, 5, T0 + 5)
    d.do(Rule("accept"), T0 + 5.5)
    assert d.state.phase == "bonus" and d.state.bonus.team_id == TEAM_A
    return d


def suggest(d: Driver, at: float, guess: str = "Curie") -> list:
    part = d.state.bonus.part
    return d.do(BonusSuggestion(SEMI_A, B0, part, guess, 0.8, "she won two Nobels"), at)


def test_the_ai_suggestion_reaches_only_its_team_and_the_moderator():
    d = at_bonus()
    events = suggest(d, T0 + 6)
    assert [(e.event, e.audience) for e in events] == [
        ("bonus_suggestion", f"team:{TEAM_A}"),
        ("bonus_suggestion", "moderator"),
    ]
    assert events[0].data == {
        "bonus_id": B0,
        "part": 0,
        "player_id": SEMI_A,
        "guess": "Curie",
        "confidence": 0.8,
        "explanation": "she won two Nobels",
    }
    mine = view(d.state, f"player:{HUMAN_A2}")["bonus"]["suggestions"]
    assert [s["guess"] for s in mine] == ["Curie"]
    assert view(d.state, f"player:{HUMAN_B}")["bonus"]["suggestions"] == []
    assert "suggestions" not in view(d.state, "all")["bonus"]


@pytest.mark.parametrize(
    "preset,semi_class,points",
    [
        ("qanta26", "light", 9),
        ("qanta26", "mid", 8),
        ("qanta26", "heavy", 7),
        ("qanta26_static", "light", 8),
        ("qanta26_static", "mid", 8),
        ("qanta26_static", "heavy", 8),
    ],
)
def test_a_correct_consult_is_deflated_by_the_preset(preset, semi_class, points):
    d = at_bonus(preset, semi_class, auto_rule=True)
    suggest(d, T0 + 6)
    events = d.do(DecideBonus(B0, 0, "consult", HUMAN_A, verdict="accept"), T0 + 7)
    decided = next(e for e in events if e.event == "bonus_decision")
    assert decided.audience == "all"
    assert decided.data == {
        "bonus_id": B0,
        "part": 0,
        "team_id": TEAM_A,
        "decision": "consult",
        "by": HUMAN_A,
        "consulted": SEMI_A,
    }
    ruled = next(e for e in events if e.event == "bonus_part_ruled")
    assert (ruled.data["player_id"], ruled.data["guess"], ruled.data["ruling"]) == (
        SEMI_A,
        "Curie",
        "correct",
    )
    assert ruled.data["points"] == points and ruled.data["decision"] == "consult"
    assert d.state.history[-1].decision == "consult"


@pytest.mark.parametrize("preset", ["qanta26", "qanta26_static"])
def test_a_wrong_consult_scores_zero_and_abstain_scores_one(preset):
    d = at_bonus(preset, "heavy", auto_rule=True)
    before = d.state.scores[str(TEAM_A)]
    suggest(d, T0 + 6, "Bohr")
    d.do(DecideBonus(B0, 0, "consult", HUMAN_A, verdict="reject"), T0 + 7)
    assert d.state.bonus.results[-1].points == 0
    events = d.do(DecideBonus(B0, 1, "abstain", HUMAN_A), T0 + 8)
    ruled = next(e for e in events if e.event == "bonus_part_ruled")
    assert (ruled.data["ruling"], ruled.data["points"], ruled.data["player_id"]) == ("abstained", 1, None)
    d.do(DecideBonus(B0, 2, "own", HUMAN_A), T0 + 9)
    d.do(BonusAnswer(HUMAN_A2, B0, 2, "mine", "accept"), T0 + 9.5)
    assert [r.decision for r in d.state.bonus.results] == ["consult", "abstain", "own"]
    assert d.state.scores[str(TEAM_A)] == before + 0 + 1 + 10


def test_a_consult_the_judge_cannot_decide_waits_for_the_moderator():
    d = at_bonus("qanta26", "mid")
    suggest(d, T0 + 6)
    events = d.do(DecideBonus(B0, 0, "consult", None, verdict="needs_moderator"), T0 + 7)
    assert d.types(events) == ["bonus_decision", "bonus_answer_given", "awaiting_ruling"]
    assert events[1].audience == "moderator" and events[1].data["player_id"] == SEMI_A
    events = d.do(Rule("accept"), T0 + 8)
    assert next(e for e in events if e.event == "bonus_part_ruled").data["points"] == 8


def test_undo_takes_a_consulted_parts_points_back():
    d = at_bonus(auto_rule=True)
    before = d.state.scores[str(TEAM_A)]
    suggest(d, T0 + 6)
    d.do(DecideBonus(B0, 0, "consult", HUMAN_A, verdict="accept"), T0 + 7)
    assert d.state.scores[str(TEAM_A)] == before + 9
    d.do(Undo(), T0 + 8)
    assert d.state.scores[str(TEAM_A)] == before


def test_answering_is_choosing_ones_own_answer():
    d = at_bonus(auto_rule=True)
    events = d.do(BonusAnswer(HUMAN_A2, B0, 0, "mine", "accept"), T0 + 6)
    assert d.types(events)[0] == "bonus_decision" and events[0].data["decision"] == "own"
    assert d.state.bonus.results[0].points == 10


def test_bonus_decision_refusals():
    d = at_bonus(auto_rule=True)
    assert refused(d, DecideBonus(B0, 0, "consult", HUMAN_A, verdict="accept"), T0 + 6) == "no_suggestion"
    assert refused(d, DecideBonus(B0, 0, "abstain", HUMAN_A2), T0 + 6) == "not_captain"
    assert refused(d, DecideBonus(B0, 0, "abstain", HUMAN_B), T0 + 6) == "not_captain"
    assert refused(d, DecideBonus(B0, 0, "abstain", SEMI_A), T0 + 6) == "not_captain"
    assert refused(d, DecideBonus(B0, 0, "maybe", HUMAN_A), T0 + 6) == "bad_value"
    assert refused(d, DecideBonus(B0, 1, "abstain", HUMAN_A), T0 + 6) == "wrong_part"
    assert refused(d, DecideBonus(B0 + 1, 0, "abstain", HUMAN_A), T0 + 6) == "wrong_question"
    assert refused(d, BonusAnswer(SEMI_A, B0, 0, "bot", "accept"), T0 + 6) == "bots_suggest"
    assert refused(d, BonusSuggestion(AUTO_B, B0, 0, "x", 0.5), T0 + 6) == "not_your_bonus"
    assert refused(d, BonusSuggestion(HUMAN_A2, B0, 0, "x", 0.5), T0 + 6) == "bad_value"
    for confidence in (1.5, -0.1, float("nan"), True):
        assert refused(d, BonusSuggestion(SEMI_A, B0, 0, "x", confidence), T0 + 6) == "bad_value"
    suggest(d, T0 + 6)
    assert refused(d, DecideBonus(B0, 0, "consult", HUMAN_A, verdict=""), T0 + 6.5) == "bad_verdict"
    assert refused(d, DecideBonus(B0, 0, "consult", HUMAN_A, bot_id=AUTO_B, verdict="accept"), T0 + 6.5) == (
        "no_suggestion"
    )
    d.do(DecideBonus(B0, 0, "own", HUMAN_A), T0 + 7)
    assert refused(d, DecideBonus(B0, 0, "abstain", HUMAN_A), T0 + 7.5) == "already_decided"
    assert refused(d, BonusSuggestion(SEMI_A, B0, 0, "late", 0.5), T0 + 7.5) == "already_decided"


def test_presets_without_bonus_decisions_refuse_them_and_keep_bot_answers():
    d = at_bonus("naqt", auto_rule=True)
    assert refused(d, BonusSuggestion(SEMI_A, B0, 0, "x", 0.5), T0 + 6) == "no_bonus_decisions"
    assert refused(d, DecideBonus(B0, 0, "abstain", HUMAN_A), T0 + 6) == "no_bonus_decisions"
    d.do(BonusAnswer(SEMI_A, B0, 0, "bot", "accept"), T0 + 6)
    assert d.state.bonus.results[0].decision == "" and d.state.bonus.results[0].points == 10


def test_a_team_of_bots_only_answers_its_bonus_itself():
    d = started(preset="qanta26", auto_rule=True)
    buzz_and_win(d, BOT, 5, T0 + 5)
    d.do(Rule("accept"), T0 + 6)
    d.do(BonusAnswer(BOT, B0, 0, "bot", "accept"), T0 + 7)
    assert d.state.bonus.results[0].decision == "own" and d.state.bonus.results[0].points == 8  # mid: 10×0.8


# -- seats -----------------------------------------------------------------------------------


def test_seat_buzz_settings_are_checked():
    state = make_state(with_bot=False)
    for cmd in (
        SeatPlayer(70, TEAM_A, "x", "bot", "mid", "chatty"),
        SeatPlayer(70, TEAM_A, "x", "bot", "mid", "muted", -1),
        SeatPlayer(70, TEAM_A, "x", "human", "", "muted"),
        SeatPlayer(70, TEAM_A, "x", "human", "", "autonomous", 3),
    ):
        with pytest.raises(RuleViolation) as err:
            apply(state, cmd, T0)
        assert err.value.code == "bad_value"
    _, events = apply(state, SeatPlayer(70, TEAM_A, "x", "bot", "mid", "semi_autonomous", 4), T0)
    assert events[0].data["buzz_mode"] == "semi_autonomous" and events[0].data["min_token"] == 4
    with pytest.raises(ValueError, match="buzz_mode"):
        new_match(state.config, state.teams, [PlayerSpec(1, TEAM_A, "x", "bot", "mid", "loud")], [], [])


def test_a_replay_closes_the_pending_proposals():
    d = hybrid()
    d.run_until(T0 + 1)
    d.do(Buzz(SEMI_A, Q0, 1), T0 + 1)
    events = d.do(ReplayTossup(), T0 + 1.5)
    closed = [(e.event, e.audience, e.data.get("outcome", e.data.get("reason"))) for e in events[:3]]
    assert closed == [
        ("proposal_closed", f"team:{TEAM_A}", "tossup_ended"),
        ("proposal_closed", "moderator", "tossup_ended"),
        ("buzz_lost", f"player:{SEMI_A}", "tossup_ended"),
    ]
    assert d.state.tossup.proposals == []


def test_a_confirmed_semi_autonomous_buzz_races_with_the_cost_its_bot_declared():
    """The race's last tie-break is the declared cost: a confirmation must not drop it."""
    d = hybrid()
    d.run_until(T0 + 2)
    d.do(Buzz(SEMI_A, Q0, 2, cost=0.002), T0 + 2)
    assert d.state.tossup.proposals[0].cost == 0.002
    d.do(ConfirmBuzz(SEMI_A, True, HUMAN_A2), T0 + 2.5)
    (candidate,) = d.state.tossup.candidates
    assert candidate.player_id == SEMI_A and candidate.cost == 0.002
