"""The bonus earned by a correct tossup: parts, answers, prompts and their rulings."""

from __future__ import annotations

import math

from competition.vocabulary import (
    BONUS_PHASES,
    JUDGE_VERDICTS,
    BonusDecision,
    Phase,
    Ruling,
    SeatKind,
    Verdict,
    team_audience,
)
from scoring.rules import bonus_points

from .commands import BonusAnswer, BonusSuggestion, DecideBonus, Event, RuleViolation
from .events import (
    AwaitingBonusRuling,
    BonusAnswerGiven,
    BonusAnswerLines,
    BonusDecided,
    BonusEnded,
    BonusPartOpened,
    BonusPartRuled,
    BonusPrompted,
    BonusStarted,
    BonusSuggested,
)
from .flow import after_question
from .guards import current_bonus, require_running, score_table, seated_player
from .lineups import require_active
from .records import BonusRuling, PartResult, PendingAnswer, Suggestion
from .specs import BonusSpec, PlayerSpec, text_tokens
from .state import BonusRun, MatchState
from .tokens import tokens_json

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
    leadin = tokens_json(text_tokens(spec.leadin))
    ev.append(BonusStarted(spec.bonus_id, team_id, spec.leadin, parts, leadin).event())
    # The moderator reads the whole bonus: every part's text and answer line, up front.
    lines = [
        {
            "part": k,
            "text": p.text,
            "tokens": tokens_json(text_tokens(p.text)),
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
    b.decision, b.consulted, b.suggestions = "", None, []
    b.deadline = at + st.config.bonus_part_window
    st.phase = Phase.BONUS
    value = bonus_points(st.config.preset, True, spec.value)
    tokens = tokens_json(text_tokens(spec.text))
    ev.append(BonusPartOpened(b.bonus_id, part, spec.text, value, b.deadline, tokens).event())


def take_bonus_answer(st: MatchState, cmd: BonusAnswer, now: float, ev: list[Event]) -> None:
    player = seated_player(st, cmd.player_id)
    require_running(st)
    require_active(st, player)
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
    if st.config.preset.bonus_decisions:
        if player.kind == SeatKind.BOT and captain(st, b.team_id) is not None:
            raise RuleViolation("bots_suggest")
        if b.decision in (BonusDecision.CONSULT, BonusDecision.ABSTAIN) and b.prompts == 0:
            raise RuleViolation("already_decided", f"the captain chose {b.decision} on this part")
        if not b.decision:  # answering is choosing one's own answer
            _decide(st, BonusDecision.OWN, player.player_id, None, ev)
    _pend(st, player.player_id, cmd.text, cmd.verdict, cmd.reason, cmd.directed_prompt, now, ev)


def _pend(
    st: MatchState,
    player_id: int,
    text: str,
    verdict: str,
    reason: str,
    directed_prompt: str | None,
    now: float,
    ev: list[Event],
) -> None:
    """The open part's answer (by ``player_id``, the judge's ``verdict``): ruled at once under
    auto-ruling when the judge decided, else waits for the moderator."""
    b = current_bonus(st)
    b.pending = PendingAnswer(player_id, text, verdict, reason, directed_prompt)
    if st.config.auto_rule:
        if verdict == Verdict.PROMPT:
            bonus_prompt(st, directed_prompt, now, ev)
            return
        if verdict in (Verdict.ACCEPT, Verdict.REJECT) or st.config.unattended:
            rule_bonus(st, Ruling.CORRECT if verdict == Verdict.ACCEPT else Ruling.WRONG, now, ev)
            return
    # The moderator rules: always without auto-ruling, else when the judge could not decide.
    b.deadline = None
    st.phase = Phase.BONUS_RULING
    given = BonusAnswerGiven(b.bonus_id, b.part, player_id, text, verdict, reason, directed_prompt)
    ev.append(given.event())
    ev.append(AwaitingBonusRuling(b.bonus_id, b.part, player_id).event())


def captain(st: MatchState, team_id: int) -> int | None:
    """The team's captain: its first human seat (in seat order); None for a team of bots only."""
    return next((p.player_id for p in st.players if p.team_id == team_id and p.kind == SeatKind.HUMAN), None)


def _open_part_of(st: MatchState, bonus_id: int, part: int, team_id: int | None = None) -> None:
    """Refuse unless the preset has bonus decisions and part ``part`` of bonus ``bonus_id`` is
    open with no answer pending (and, given ``team_id``, that team controls it)."""
    if not st.config.preset.bonus_decisions:
        raise RuleViolation("no_bonus_decisions")
    b = st.bonus
    if b is None or st.phase != Phase.BONUS or b.pending is not None:
        raise RuleViolation("not_live", "no bonus part is open")
    if bonus_id != b.bonus_id:
        raise RuleViolation("wrong_question")
    if part != b.part:
        raise RuleViolation("wrong_part")
    if team_id is not None and team_id != b.team_id:
        raise RuleViolation("not_your_bonus")


def take_suggestion(st: MatchState, cmd: BonusSuggestion, ev: list[Event]) -> None:
    """A bot seat of the controlling team suggests an answer to the open part (one per seat per
    part; a new one replaces it). Shown only to that team and the moderator."""
    player = seated_player(st, cmd.player_id)
    require_running(st)
    if player.kind != SeatKind.BOT:
        raise RuleViolation("bad_value", "suggestions come from the team's bot seats")
    _open_part_of(st, cmd.bonus_id, cmd.part, player.team_id)
    confidence = cmd.confidence
    ok = (
        isinstance(confidence, int | float) and not isinstance(confidence, bool) and math.isfinite(confidence)
    )
    if not ok or not 0 <= confidence <= 1:
        raise RuleViolation("bad_value", f"confidence must be a number in [0, 1], got {confidence!r}")
    if not isinstance(cmd.guess, str) or not isinstance(cmd.explanation, str):
        raise RuleViolation("bad_value", "guess and explanation are text")
    b = current_bonus(st)
    if b.decision:
        raise RuleViolation("already_decided")
    suggestion = Suggestion(player.player_id, b.part, cmd.guess, float(confidence), cmd.explanation)
    b.suggestions = [*(s for s in b.suggestions if s.player_id != player.player_id), suggestion]
    given = BonusSuggested(
        b.bonus_id, b.part, player.player_id, cmd.guess, float(confidence), cmd.explanation
    )
    ev.append(given.event(team_audience(b.team_id)))
    ev.append(given.event("moderator"))


def decide_bonus(st: MatchState, cmd: DecideBonus, now: float, ev: list[Event]) -> None:
    """The captain's (or the moderator's: ``player_id`` None) decision on the open part.
    own: the team answers (``BonusAnswer``); consult: the suggestion of ``bot_id`` (None: the
    first given) is the team's answer, judged by the caller (``verdict``), then ruled as any
    answer; abstain: the part scores the preset's ``abstain_points`` at once. Refusals:
    no_bonus_decisions, not_live, wrong_question, wrong_part, not_captain, already_decided,
    no_suggestion, bad_value (an unknown decision), bad_verdict (consult without a verdict)."""
    require_running(st)
    _open_part_of(st, cmd.bonus_id, cmd.part)
    b = current_bonus(st)
    if cmd.player_id is not None:
        seated_player(st, cmd.player_id)
        if cmd.player_id != captain(st, b.team_id):
            raise RuleViolation("not_captain", "only the team's captain (its first human seat) decides")
    if cmd.decision not in tuple(BonusDecision):
        raise RuleViolation("bad_value", f"decision must be one of {', '.join(BonusDecision)}")
    if b.decision:
        raise RuleViolation("already_decided")
    if cmd.decision == BonusDecision.CONSULT:
        wanted = [s for s in b.suggestions if cmd.bot_id in (None, s.player_id)]
        if not wanted:
            raise RuleViolation("no_suggestion")
        if cmd.verdict not in JUDGE_VERDICTS:
            raise RuleViolation("bad_verdict", f"verdict must be one of {', '.join(JUDGE_VERDICTS)}")
        chosen = wanted[0]
        _decide(st, BonusDecision.CONSULT, cmd.player_id, chosen.player_id, ev)
        _pend(st, chosen.player_id, chosen.guess, cmd.verdict, cmd.reason, cmd.directed_prompt, now, ev)
        return
    _decide(st, BonusDecision(cmd.decision), cmd.player_id, None, ev)
    if cmd.decision == BonusDecision.ABSTAIN:
        rule_bonus(st, Ruling.ABSTAINED, now, ev)


def _decide(
    st: MatchState, decision: BonusDecision, by: int | None, consulted: int | None, ev: list[Event]
) -> None:
    b = current_bonus(st)
    b.decision, b.consulted = decision, consulted
    ev.append(BonusDecided(b.bonus_id, b.part, b.team_id, decision, by, consulted).event())


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
    st.phase = Phase.BONUS
    ev.append(BonusPrompted(b.bonus_id, b.part, directed, b.deadline).event())


def rule_bonus(st: MatchState, ruling: Ruling, at: float, ev: list[Event]) -> None:
    """Score the open bonus part and move on."""
    b = current_bonus(st)
    spec = bonus_spec(st).parts[b.part]
    # No answer (a timeout): nobody answered, nothing was guessed.
    p = b.pending
    player_id, guess, verdict = (None, "", "") if p is None else (p.player_id, p.guess, p.verdict)
    # A consulted part is deflated by the consulted bot's class (a prompt's reply included).
    answerer_id = b.consulted if b.consulted is not None else player_id
    answerer: PlayerSpec | None = None if answerer_id is None else st.player(answerer_id)
    bot_class = answerer.weight_class if answerer is not None and answerer.kind == SeatKind.BOT else None
    decision = b.decision
    points = bonus_points(st.config.preset, ruling == Ruling.CORRECT, spec.value, bot_class, decision)
    st.scores[str(b.team_id)] += points
    b.points += points
    b.results.append(PartResult(b.part, player_id, guess, ruling, points, decision))
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
            decision=decision,
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
            decision=decision,
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
