"""The bonus earned by a correct tossup: parts, answers, prompts and their rulings."""

from __future__ import annotations

from competition.vocabulary import JUDGE_VERDICTS, Ruling, Verdict
from scoring.rules import bonus_points

from .commands import BonusAnswer, Event, RuleViolation
from .events import (
    AwaitingBonusRuling,
    BonusAnswerGiven,
    BonusAnswerLines,
    BonusEnded,
    BonusPartOpened,
    BonusPartRuled,
    BonusPrompted,
    BonusStarted,
)
from .flow import after_question
from .guards import current_bonus, require_running, score_table, seated_player
from .records import BonusRuling, PartResult, PendingAnswer
from .specs import BonusSpec, PlayerSpec
from .state import BONUS_PHASES, BonusRun, MatchState

# -- bonuses ------------------------------------------------------------------------------


def bonus_spec(st: MatchState) -> BonusSpec:
    b = current_bonus(st)
    return next(s for s in st.bonuses if s.bonus_id == b.bonus_id)


def bonus_parts(st: MatchState) -> int:
    return min(len(bonus_spec(st).parts), st.config.preset.bonus_parts)


def start_bonus(st: MatchState, team_id: int, at: float, ev: list[Event]) -> None:
    spec = st.bonuses[st.bonus_index]
    st.bonus_index += 1
    st.bonus = BonusRun(bonus_id=spec.bonus_id, team_id=team_id)
    parts = bonus_parts(st)
    ev.append(BonusStarted(spec.bonus_id, team_id, spec.leadin, parts).event())
    # The moderator reads the whole bonus: every part's text and answer line, up front.
    lines = [
        {
            "part": k,
            "text": p.text,
            "value": bonus_points(st.config.preset, True, p.value),
            "answer_line": p.answer_line,
        }
        for k, p in enumerate(spec.parts[:parts])
    ]
    ev.append(BonusAnswerLines(spec.bonus_id, lines).event())
    if parts:
        open_part(st, 0, at, ev)
    else:
        end_bonus(st, at, ev)


def open_part(st: MatchState, part: int, at: float, ev: list[Event]) -> None:
    b = current_bonus(st)
    spec = bonus_spec(st).parts[part]
    b.part, b.pending, b.prompts = part, None, 0
    b.deadline = at + st.config.bonus_part_window
    st.phase = "bonus"
    value = bonus_points(st.config.preset, True, spec.value)
    ev.append(BonusPartOpened(b.bonus_id, part, spec.text, value, b.deadline).event())


def take_bonus_answer(st: MatchState, cmd: BonusAnswer, now: float, ev: list[Event]) -> None:
    player = seated_player(st, cmd.player_id)
    require_running(st)
    if cmd.verdict not in JUDGE_VERDICTS:
        raise RuleViolation("bad_verdict", f"verdict must be one of {', '.join(JUDGE_VERDICTS)}")
    b = st.bonus
    if b is None or st.phase not in BONUS_PHASES:
        raise RuleViolation("not_live", "no bonus part is open")
    if cmd.bonus_id != b.bonus_id:
        raise RuleViolation("wrong_question")
    if cmd.part != b.part:
        raise RuleViolation("wrong_part")
    if player.team_id != b.team_id:
        raise RuleViolation("not_your_bonus")
    if b.pending is not None:
        raise RuleViolation("answer_window_closed", "this part already has an answer")
    b.pending = PendingAnswer(player.player_id, cmd.text, cmd.verdict, cmd.reason, cmd.directed_prompt)
    if st.config.auto_rule:
        if cmd.verdict == Verdict.PROMPT:
            bonus_prompt(st, cmd.directed_prompt, now, ev)
            return
        if cmd.verdict in (Verdict.ACCEPT, Verdict.REJECT) or st.config.unattended:
            rule_bonus(st, Ruling.CORRECT if cmd.verdict == Verdict.ACCEPT else Ruling.WRONG, now, ev)
            return
    # The moderator rules: always without auto-ruling, else when the judge could not decide.
    b.deadline = None
    st.phase = "bonus_ruling"
    given = BonusAnswerGiven(
        b.bonus_id, b.part, player.player_id, cmd.text, cmd.verdict, cmd.reason, cmd.directed_prompt
    )
    ev.append(given.event())
    ev.append(AwaitingBonusRuling(b.bonus_id, b.part, player.player_id).event())


def bonus_prompt(st: MatchState, directed: str | None, at: float, ev: list[Event]) -> None:
    """Prompt the controlling team on the open part: it answers again within the prompt
    window; a second prompt on the same part counts as wrong (QUIZBOWL.md)."""
    b = current_bonus(st)
    if b.prompts >= 1:
        rule_bonus(st, Ruling.WRONG, at, ev)
        return
    b.prompts += 1
    b.pending = None
    b.deadline = at + st.config.prompt_window
    st.phase = "bonus"
    ev.append(BonusPrompted(b.bonus_id, b.part, directed, b.deadline).event())


def rule_bonus(st: MatchState, ruling: Ruling, at: float, ev: list[Event]) -> None:
    """Score the open bonus part and move on."""
    b = current_bonus(st)
    spec = bonus_spec(st).parts[b.part]
    # No answer (a timeout): nobody answered, nothing was guessed.
    p = b.pending
    player_id, guess, verdict = (None, "", "") if p is None else (p.player_id, p.guess, p.verdict)
    answerer: PlayerSpec | None = None if player_id is None else st.player(player_id)
    bot_class = answerer.weight_class if answerer is not None and answerer.kind == "bot" else None
    points = bonus_points(st.config.preset, ruling == Ruling.CORRECT, spec.value, bot_class)
    st.scores[str(b.team_id)] += points
    b.points += points
    b.results.append(PartResult(b.part, player_id, guess, ruling, points))
    st.history.append(
        BonusRuling(
            tossup_index=st.tossup_index,
            bonus_id=b.bonus_id,
            team_id=b.team_id,
            part=b.part,
            player_id=player_id,
            guess=guess,
            ruling=ruling,
            verdict=verdict,
            points=points,
            at=at,
        )
    )
    ev.append(
        BonusPartRuled(
            bonus_id=b.bonus_id,
            part=b.part,
            team_id=b.team_id,
            player_id=player_id,
            guess=guess,
            verdict=verdict,
            ruling=ruling,
            points=points,
            answer_line=spec.answer_line,
            tossup_index=st.tossup_index,
            at=at,
            scores=score_table(st),
        ).event()
    )
    if b.part + 1 < bonus_parts(st):
        open_part(st, b.part + 1, at, ev)
    else:
        end_bonus(st, at, ev)


def end_bonus(st: MatchState, at: float, ev: list[Event]) -> None:
    b = current_bonus(st)
    b.deadline, b.pending = None, None
    ev.append(BonusEnded(b.bonus_id, b.team_id, b.points, score_table(st)).event())
    after_question(st, at, ev)
