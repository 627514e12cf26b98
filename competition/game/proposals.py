"""Bot seats that do not buzz by themselves (HYBRID.md "Hybrid teams"): a muted bot's would-be
buzz is logged and never races; a semi-autonomous bot's buzz is a proposal that a human
teammate or the moderator confirms within the match's ``confirm_window`` (``hybrid.confirm_buzz``)
or that lapses."""

from __future__ import annotations

from competition.vocabulary import BuzzMode, player_audience, team_audience

from .commands import Event, RuleViolation
from .events import BuzzLost, BuzzProposed, MutedBuzz, ProposalClosed
from .guards import current_tossup
from .records import Candidate, Proposal
from .specs import PlayerSpec
from .state import MatchState


def divert_bot_buzz(
    st: MatchState, player: PlayerSpec, candidate: Candidate, now: float, ev: list[Event]
) -> None:
    """A muted or semi-autonomous bot's buzz (``candidate``, its token index decided): log it
    (muted) or hold it for confirmation (semi-autonomous). One of either per seat per tossup at
    a time: RuleViolation("already_buzzed") otherwise."""
    t = current_tossup(st)
    if player.buzz_mode == BuzzMode.MUTED:
        if player.player_id in t.muted:
            raise RuleViolation("already_buzzed")
        t.muted.append(player.player_id)
        logged = MutedBuzz(
            t.question_id,
            player.player_id,
            player.team_id,
            candidate.token_index,
            candidate.claimed_token_index,
            now,
        )
        ev.append(logged.event())
        return
    if any(p.player_id == player.player_id for p in t.proposals):
        raise RuleViolation("already_buzzed")
    proposal = Proposal(
        player.player_id,
        player.team_id,
        candidate.token_index,
        now,
        now + st.config.confirm_window,
        candidate.cost,
    )
    t.proposals.append(proposal)
    proposed = BuzzProposed(
        t.question_id, proposal.player_id, proposal.team_id, proposal.token_index, proposal.deadline
    )
    ev.append(proposed.event(team_audience(player.team_id)))
    ev.append(proposed.event("moderator"))


def close_proposals(
    st: MatchState, proposals: list[Proposal], outcome: str, by: int | None, ev: list[Event]
) -> None:
    """End ``proposals`` (removed from the tossup) with ``outcome``: each team and the moderator
    are told (``proposal_closed``); unless confirmed, the bot learns its buzz was lost."""
    t = current_tossup(st)
    for p in list(proposals):
        t.proposals.remove(p)
        closed = ProposalClosed(t.question_id, p.player_id, p.team_id, outcome, by)
        ev.append(closed.event(team_audience(p.team_id)))
        ev.append(closed.event("moderator"))
        if outcome != "confirmed":
            ev.append(BuzzLost(t.question_id, outcome).event(player_audience(p.player_id)))


def expire_proposal(st: MatchState, ev: list[Event]) -> None:
    """The earliest proposal's confirmation window is over: it lapses (outcome timeout)."""
    t = current_tossup(st)
    first = min(t.proposals, key=lambda p: (p.deadline, p.player_id))
    close_proposals(st, [first], "timeout", None, ev)
