"""Hybrid teams (HYBRID.md): confirming a semi-autonomous bot's buzz, and the moderator's
delegation of a tossup answer to the buzzer's team's AI (and its revert)."""

from __future__ import annotations

from dataclasses import replace

from competition.vocabulary import LIVE_PHASES, TOSSUP_PHASES, Phase, SeatKind

from .commands import ConfirmBuzz, Delegate, Event, RuleViolation
from .events import AnswerDelegated
from .guards import current_tossup, require_running, seated_player
from .proposals import close_proposals
from .records import Candidate
from .state import MatchState
from .tossup import add_candidate, received_event, team_has_buzzed


def confirm_buzz(st: MatchState, cmd: ConfirmBuzz, now: float, ev: list[Event]) -> None:
    """Confirm or decline the pending buzz of ``cmd.bot_id``. The confirmer is a human seat of the
    bot's team or the moderator (``player_id`` None): else RuleViolation("not_your_team"). A
    confirmed buzz joins the race now, at the last token revealed, with no reaction delay (a human
    pressed); refused like any buzz when its team already buzzed or another buzz is answered."""
    bot = seated_player(st, cmd.bot_id)
    require_running(st)
    t = st.tossup
    if t is None or t.outcome is not None or st.phase not in TOSSUP_PHASES:
        raise RuleViolation("not_live", "no tossup is being read")
    proposal = next((p for p in t.proposals if p.player_id == bot.player_id), None)
    if proposal is None:
        raise RuleViolation("no_pending_buzz")
    if cmd.player_id is not None:
        confirmer = seated_player(st, cmd.player_id)
        if confirmer.team_id != bot.team_id or confirmer.kind != SeatKind.HUMAN:
            raise RuleViolation(
                "not_your_team", "only a human teammate or the moderator confirms a bot's buzz"
            )
    if not cmd.confirm:
        close_proposals(st, [proposal], "declined", cmd.player_id, ev)
        return
    if team_has_buzzed(t, bot.team_id):
        raise RuleViolation("team_already_buzzed")
    if st.phase not in LIVE_PHASES:
        raise RuleViolation("locked_out", "another buzz is being answered")
    close_proposals(st, [proposal], "confirmed", cmd.player_id, ev)
    token_index = t.revealed - 1
    candidate = Candidate(
        player_id=bot.player_id,
        team_id=bot.team_id,
        kind=bot.kind,
        weight_class=bot.weight_class,
        token_index=token_index,
        claimed_token_index=proposal.token_index,
        floor_token_index=token_index,
        delay_bound=0.0,
        received_at=now,
        client_time=None,
        corrected_press_at=now,
        claimed_press_at=None,
        cost=proposal.cost,
    )
    ev.append(received_event(t.question_id, candidate).event())
    add_candidate(t, candidate, now, st.config.collection_window)


def delegate(st: MatchState, cmd: Delegate, now: float, ev: list[Event]) -> None:
    """Moderator: give the answer of the buzz being answered to bot seat ``cmd.bot_id`` of the
    buzzer's team, or back to the buzzer (None). Only while the answer is awaited (phase
    answering): RuleViolation("no_pending_answer") otherwise; "not_your_team" for a seat of
    another team or a human seat; "bad_value" for a revert with nothing delegated or a
    delegation to the buzzer itself. The answer
    window starts again; the answerer's weight class deflates the points."""
    require_running(st)
    t = st.tossup
    if t is None or st.phase != Phase.ANSWERING or t.buzz is None:
        raise RuleViolation("no_pending_answer", "delegate while a buzz awaits its answer")
    b = t.buzz
    if cmd.bot_id is None:
        if b.answerer_id is None:
            raise RuleViolation("bad_value", "nothing to revert: the buzzer answers")
        answerer = None
    else:
        bot = seated_player(st, cmd.bot_id)
        if bot.team_id != b.team_id or bot.kind != SeatKind.BOT:
            raise RuleViolation("not_your_team", "delegate to a bot seat of the buzzer's team")
        if bot.player_id == b.player_id:
            raise RuleViolation("bad_value", "the buzzer answers its own buzz: revert instead")
        answerer = bot.player_id
    deadline = now + st.config.answer_window
    t.buzz = replace(b, answerer_id=answerer, answer_deadline=deadline, prompts=0, directed_prompt=None)
    ev.append(AnswerDelegated(t.question_id, b.player_id, answerer or b.player_id, deadline).event())


def answering_seat(st: MatchState) -> int:
    """The seat whose answer the current buzz waits for: the delegate, else the buzzer."""
    b = current_tossup(st).buzz
    assert b is not None
    return b.player_id if b.answerer_id is None else b.answerer_id
