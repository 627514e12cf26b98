"""The full-scoresheet review: correct any earlier ruling after the fact (``ReviewRuling``).

``CorrectRuling`` (``corrections``) reaches only the newest tossup ruling and its bonus, with
what follows for the match being played (a tossup ended, a bonus started or withdrawn). A review
reaches every standing ruling of the scoresheet: only points move, since the match has gone on.
For the current question, a ruling change that ``CorrectRuling`` takes is applied as one."""

from __future__ import annotations

from dataclasses import replace

from competition.vocabulary import MatchStatus, Ruling, SeatKind
from scoring.rules import tossup_points

from .commands import CorrectRuling, Event, ReviewRuling, RuleViolation
from .corrections import (
    MAX_REASON,
    PART_CORRECTIONS,
    TOSSUP_CORRECTIONS,
    check_ruling,
    correct_ruling,
    correctable,
    mark_undone,
    rescore_part,
    undone_data,
)
from .events import EventName, RulingReviewed
from .guards import score_table
from .records import BonusRuling, TossupRuling
from .state import MatchState

MAX_BY = 100  # characters of ``ReviewRuling.by``
REASON = "ruling_reviewed"  # the ``reason`` of the ``ruling_undone`` events it causes


def review_ruling(st: MatchState, cmd: ReviewRuling, now: float, ev: list[Event]) -> None:
    """Correct the standing ruling at ``cmd.history_index`` (one ``ruling_reviewed``):

    - a tossup buzz: its ruling (correct|wrong|no_penalty) and/or the seat credited (any seat of
      the match; its team takes the points). Points are those of the buzz's position, as the
      original ruling would have scored them (power, neg, the bot's weight). A correct buzz that
      no longer stands correct for the same team takes its bonus's ruled parts back
      (``ruling_undone`` each); a buzz made correct earns no bonus (none was read);
    - a bonus part: its ruling (correct|wrong), the part's value.

    Any phase after the start, also after the end (the fits then follow: the store sends the
    match's end jobs again). A ruling of the question being played that ``CorrectRuling``
    takes (the newest tossup ruling or its bonus's parts, the ruling only) is applied as that
    command, with its consequences for the match being played.

    Refusals (nothing changes): ``not_live`` (lobby), ``not_correctable`` (no such standing
    ruling: out of range, undone, thrown out, an abstained part; a ruling of the question being
    played other than those ``CorrectRuling`` takes), ``bad_value`` (nothing changed, a ruling it
    cannot be given, a seat for a bonus part, a team that already has a standing buzz on that
    tossup, no reason or one over :data:`MAX_REASON` characters), ``unknown_player``."""
    if st.status == MatchStatus.LOBBY:
        raise RuleViolation("not_live", "nothing has been ruled yet")
    reason = cmd.reason.strip() if isinstance(cmd.reason, str) else ""
    if not 0 < len(reason) <= MAX_REASON:
        raise RuleViolation("bad_value", f"say why, in 1 to {MAX_REASON} characters")
    by = cmd.by.strip()[:MAX_BY] if isinstance(cmd.by, str) else ""
    position = cmd.history_index
    if (
        isinstance(position, bool)
        or not isinstance(position, int)
        or not 0 <= position < len(st.history)
        or st.history[position].undone
    ):
        raise RuleViolation("not_correctable", "no standing ruling at that place of the scoresheet")
    entry = st.history[position]
    if st.status == MatchStatus.RUNNING and entry.tossup_index == st.tossup_index:
        if cmd.player_id is None and cmd.ruling and position in correctable(st):
            correct_ruling(st, CorrectRuling(position, cmd.ruling, reason), now, ev)
            return
        raise RuleViolation(
            "not_correctable",
            "the question being played: correct its newest ruling, or undo, or wait until it ends",
        )
    if isinstance(entry, TossupRuling):
        _review_tossup(st, position, entry, cmd, reason, by, ev)
    else:
        _review_part(st, position, entry, cmd, reason, by, ev)


def _review_tossup(
    st: MatchState,
    position: int,
    entry: TossupRuling,
    cmd: ReviewRuling,
    reason: str,
    by: str,
    ev: list[Event],
) -> None:
    ruling = cmd.ruling or entry.ruling
    if cmd.ruling and ruling not in TOSSUP_CORRECTIONS:
        raise RuleViolation("bad_value", f"ruling must be one of {', '.join(TOSSUP_CORRECTIONS)}")
    player_id = entry.player_id if cmd.player_id is None else cmd.player_id
    seat = st.player(player_id)
    if seat is None:
        raise RuleViolation("unknown_player")
    if ruling == entry.ruling and player_id == entry.player_id:
        raise RuleViolation("bad_value", "nothing to change: give another ruling or seat")
    others = [
        (i, h)
        for i, h in enumerate(st.history)
        if i != position
        and isinstance(h, TossupRuling)
        and h.tossup_index == entry.tossup_index
        and not h.undone
    ]
    if seat.team_id != entry.team_id and any(h.team_id == seat.team_id for _, h in others):
        raise RuleViolation(
            "bad_value", "that seat's team already has a buzz on this tossup: correct that one"
        )
    answerer_id = entry.answerer_id if player_id == entry.player_id else None
    answerer = st.player(answerer_id) if answerer_id is not None else seat
    spec = st.tossups[entry.tossup_index]
    prior_neg = any(h.points < 0 for i, h in others if i < position)
    points = 0
    if ruling in (Ruling.CORRECT, Ruling.WRONG):
        points = tossup_points(
            st.config.preset,
            correct=ruling == Ruling.CORRECT,
            token_index=entry.token_index,
            token_count=entry.token_count,
            power_index=spec.power_index,
            superpower_index=spec.superpower_index,
            fully_read=entry.fully_read,
            prior_neg=prior_neg,
            weight_class=answerer.weight_class
            if answerer is not None and answerer.kind == SeatKind.BOT
            else None,
        )
    st.history[position] = replace(
        entry,
        ruling=ruling,
        points=points,
        player_id=player_id,
        team_id=seat.team_id,
        answerer_id=answerer_id,
    )
    st.scores[str(entry.team_id)] -= entry.points
    st.scores[str(seat.team_id)] += points
    ev.append(
        RulingReviewed(
            history_index=position,
            tossup_index=entry.tossup_index,
            question_id=entry.question_id,
            bonus_id=None,
            part=None,
            player_before=entry.player_id,
            player_id=player_id,
            team_before=entry.team_id,
            team_id=seat.team_id,
            ruling_before=entry.ruling,
            ruling=ruling,
            points_before=entry.points,
            points=points,
            reason=reason,
            by=by,
            scores=score_table(st),
        ).event()
    )
    if entry.ruling == Ruling.CORRECT and (ruling != Ruling.CORRECT or seat.team_id != entry.team_id):
        for i in range(len(st.history) - 1, position, -1):
            part = st.history[i]
            if isinstance(part, BonusRuling) and not part.undone and part.tossup_index == entry.tossup_index:
                part = mark_undone(st, i)
                ev.append(Event(EventName.RULING_UNDONE, {**undone_data(st, part, i), "reason": REASON}))


def _review_part(
    st: MatchState,
    position: int,
    entry: BonusRuling,
    cmd: ReviewRuling,
    reason: str,
    by: str,
    ev: list[Event],
) -> None:
    if entry.ruling == Ruling.ABSTAINED:
        raise RuleViolation("not_correctable", "an abstained part is the captain's choice, not a ruling")
    if cmd.player_id is not None:
        raise RuleViolation("bad_value", "a bonus part is the controlling team's: correct its ruling only")
    ruling = check_ruling(cmd.ruling, PART_CORRECTIONS, entry.ruling)
    points = rescore_part(st, position, entry, ruling)
    ev.append(
        RulingReviewed(
            history_index=position,
            tossup_index=entry.tossup_index,
            question_id=None,
            bonus_id=entry.bonus_id,
            part=entry.part,
            player_before=entry.player_id,
            player_id=entry.player_id,
            team_before=entry.team_id,
            team_id=entry.team_id,
            ruling_before=entry.ruling,
            ruling=ruling,
            points_before=entry.points,
            points=points,
            reason=reason,
            by=by,
            scores=score_table(st),
        ).event()
    )
