"""The buzzer's answer on a tossup, prompts, the moderator's rulings and answer timeouts."""

from __future__ import annotations

from dataclasses import replace

from competition.vocabulary import (
    BONUS_PHASES,
    JUDGE_VERDICTS,
    MODERATOR_VERDICTS,
    TOSSUP_PHASES,
    Phase,
    Ruling,
    SeatKind,
    TossupOutcome,
    Verdict,
)
from scoring.rules import tossup_points

from .bonus import bonus_prompt, rule_bonus
from .commands import Answer, Event, Rule, RuleViolation
from .events import AnswerGiven, AwaitingRuling, BuzzRuled, Prompted, ReadingResumed
from .guards import current_tossup, require_running, score_table, seated_player
from .hybrid import answering_seat
from .records import TossupRuling
from .state import MatchState, TossupRun
from .tossup import can_race, end_tossup


def take_answer(st: MatchState, cmd: Answer, now: float, ev: list[Event]) -> None:
    player = seated_player(st, cmd.player_id)
    require_running(st)
    if cmd.verdict not in JUDGE_VERDICTS:
        raise RuleViolation("bad_verdict", f"verdict must be one of {', '.join(JUDGE_VERDICTS)}")
    t = st.tossup
    if t is None or st.phase not in TOSSUP_PHASES:
        raise RuleViolation("not_live")
    if cmd.question_id != t.question_id:
        raise RuleViolation("wrong_question")
    b = t.buzz
    if b is None or answering_seat(st) != player.player_id:
        closed = any(
            isinstance(h, TossupRuling) and h.tossup_index == t.index and h.player_id == player.player_id
            for h in st.history
        )
        raise RuleViolation("answer_window_closed" if closed else "not_your_buzz")
    if st.phase != Phase.ANSWERING:
        raise RuleViolation("answer_window_closed", "the answer is waiting for the moderator")
    t.buzz = b = replace(
        b, guess=cmd.text, verdict=cmd.verdict, reason=cmd.reason, directed_prompt=cmd.directed_prompt
    )
    if st.config.auto_rule and (cmd.verdict != Verdict.NEEDS_MODERATOR or st.config.unattended):
        if cmd.verdict == Verdict.PROMPT:
            give_prompt(st, cmd.directed_prompt, now, ev)
        else:  # unattended: an undecided answer counts as wrong
            rule_tossup(st, Ruling.CORRECT if cmd.verdict == Verdict.ACCEPT else Ruling.WRONG, now, ev)
        return
    t.buzz = replace(b, answer_deadline=None)
    st.phase = Phase.RULING
    ev.append(
        AnswerGiven(
            t.question_id, player.player_id, cmd.text, cmd.verdict, cmd.reason, cmd.directed_prompt
        ).event()
    )
    # Everyone else learns only that the clock stopped for a ruling (not the guess or verdict).
    ev.append(AwaitingRuling(t.question_id, player.player_id).event())


def give_prompt(st: MatchState, directed: str | None, at: float, ev: list[Event]) -> None:
    t = current_tossup(st)
    b = t.buzz
    assert b is not None
    if b.prompts >= 1:  # a second prompt counts as wrong
        rule_tossup(st, Ruling.WRONG, at, ev)
        return
    t.buzz = b = replace(
        b, prompts=b.prompts + 1, directed_prompt=directed, answer_deadline=at + st.config.prompt_window
    )
    st.phase = Phase.ANSWERING
    ev.append(Prompted(t.question_id, b.player_id, directed, b.answer_deadline).event())


def apply_rule(st: MatchState, cmd: Rule, now: float, ev: list[Event]) -> None:
    if cmd.verdict not in MODERATOR_VERDICTS:
        raise RuleViolation("bad_verdict", f"verdict must be one of {', '.join(MODERATOR_VERDICTS)}")
    require_running(st)
    if st.phase in (Phase.ANSWERING, Phase.RULING):
        if cmd.verdict == Verdict.PROMPT:
            give_prompt(st, cmd.directed_prompt, now, ev)
        else:
            rule_tossup(st, Ruling.of(cmd.verdict), now, ev)
    elif st.phase in BONUS_PHASES:
        if st.bonus is None or st.bonus.pending is None:
            raise RuleViolation("no_pending_answer")
        if cmd.verdict == Verdict.PROMPT:
            bonus_prompt(st, cmd.directed_prompt, now, ev)
            return
        rule_bonus(st, Ruling.of(cmd.verdict), now, ev)
    else:
        raise RuleViolation("no_pending_answer")


def rule_tossup(st: MatchState, ruling: Ruling, at: float, ev: list[Event]) -> None:
    """Score the current buzz and move on."""
    t = current_tossup(st)
    b = t.buzz
    assert b is not None
    spec = st.tossups[t.index]
    player = seated_player(st, b.player_id)
    # A delegated answer is the delegate's: its weight class deflates the points.
    answerer = seated_player(st, answering_seat(st))
    if ruling == Ruling.NO_PENALTY:
        points = 0
    else:
        points = tossup_points(
            st.config.preset,
            correct=ruling == Ruling.CORRECT,
            token_index=b.token_index,
            token_count=len(spec.tokens),
            power_index=spec.power_index,
            superpower_index=spec.superpower_index,
            fully_read=b.fully_read,
            prior_neg=t.neg_given,
            weight_class=answerer.weight_class if answerer.kind == SeatKind.BOT else None,
        )
    st.scores[str(player.team_id)] += points
    t.neg_given = t.neg_given or points < 0
    st.history.append(
        TossupRuling(
            tossup_index=t.index,
            question_id=t.question_id,
            player_id=player.player_id,
            team_id=player.team_id,
            guess=b.guess,
            verdict=b.verdict,
            ruling=ruling,
            points=points,
            token_index=b.token_index,
            token_count=len(spec.tokens),
            at=at,
            answerer_id=b.answerer_id,
            fully_read=b.fully_read,
        )
    )
    ev.append(
        BuzzRuled(
            question_id=t.question_id,
            player_id=player.player_id,
            team_id=player.team_id,
            guess=b.guess,
            verdict=b.verdict,
            ruling=ruling,
            points=points,
            token_index=b.token_index,
            token_count=len(spec.tokens),
            tossup_index=t.index,
            at=at,
            fully_read=b.fully_read,
            scores=score_table(st),
            answerer_id=b.answerer_id,
        ).event()
    )
    t.buzz = None
    if ruling == Ruling.CORRECT:
        end_tossup(st, TossupOutcome.ANSWERED, at, ev, winner_team=player.team_id)
    elif not eligible_teams(st, t):
        end_tossup(st, TossupOutcome.DEAD, at, ev)
    else:
        if t.revealed < len(spec.tokens):
            st.phase, t.next_word_at = Phase.READING, at
        else:
            st.phase, t.dead_deadline = Phase.DEAD_TIME, at + st.config.dead_time
        ev.append(ReadingResumed(t.question_id).event())


def eligible_teams(st: MatchState, t: TossupRun) -> set[int]:
    return {p.team_id for p in st.players if can_race(p)} - set(t.locked_teams)
