"""The full-scoresheet review: correct any earlier ruling after the fact (``ReviewRuling``),
add a buzz the moderator missed on a tossup already played (``AddBuzz``).

``CorrectRuling`` (``corrections``) reaches only the newest tossup ruling and its bonus, with
what follows for the match being played (a tossup ended, a bonus started or withdrawn). A review
reaches every standing ruling of the scoresheet: only points move, since the match has gone on.
For the current question, a ruling change that ``CorrectRuling`` takes is applied as one.

A tossup's neg rule depends on its earlier buzzes (``scoring.rules.tossup_points``: with
``neg_after_neg`` off, a wrong interrupt after another team's neg scores 0). A tossup's buzzes are
ordered by word, then by scoresheet position (:func:`_order`); after a review or an added buzz,
every later wrong buzz of that tossup is scored again and each one whose points move is logged
as a ``ruling_reviewed`` with its ruling unchanged (:func:`_rescore_later`)."""

from __future__ import annotations

from dataclasses import replace

from competition.vocabulary import MatchStatus, Ruling, SeatKind
from scoring.rules import tossup_points

from .commands import AddBuzz, CorrectRuling, Event, ReviewRuling, RuleViolation
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
from .events import BuzzAdded, EventName, RulingReviewed
from .guards import score_table
from .lineups import lineup_at, roster
from .records import BonusRuling, TossupRuling
from .specs import PlayerSpec
from .state import MatchState

MAX_BY = 100  # characters of ``ReviewRuling.by`` / ``AddBuzz.by``
REASON = "ruling_reviewed"  # the ``reason`` of the ``ruling_undone`` events it causes
RESCORED = "neg rule follows a review: "  # prefixes the reason of a later buzz scored again
ADDED_RULINGS = (Ruling.CORRECT, Ruling.WRONG, Ruling.NO_PENALTY)  # ``AddBuzz.ruling``


def review_ruling(st: MatchState, cmd: ReviewRuling, now: float, ev: list[Event]) -> None:
    """Correct the standing ruling at ``cmd.history_index`` (one ``ruling_reviewed``):

    - a tossup buzz: its ruling (correct|wrong|no_penalty) and/or the seat credited (any seat of
      the match; its team takes the points). Points are those of the buzz's position, as the
      original ruling would have scored them (power, neg, the bot's weight). A correct buzz that
      no longer stands correct for the same team takes its bonus's ruled parts back
      (``ruling_undone`` each); a buzz made correct earns no bonus (none was read);
    - a bonus part: its ruling (correct|wrong), the part's value.

    A tossup buzz's new points can change the neg rule of its tossup's later wrong buzzes: each
    one whose points move follows as one more ``ruling_reviewed`` (:func:`_rescore_later`).

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
    reason, by = _why(cmd.reason, cmd.by)
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
    prior_neg = any(h.points < 0 for i, h in others if _order(i, h) < _order(position, entry))
    points = _points(st, entry, ruling, answerer, prior_neg)
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
    _rescore_later(st, position, reason, by, ev)


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


def add_buzz(st: MatchState, cmd: AddBuzz, now: float, ev: list[Event]) -> None:
    """Add the buzz the moderator missed on tossup ``cmd.tossup_index`` (one ``buzz_added``, a
    new standing ruling appended to ``history``), scored as the live rules would have: power
    before the power mark, a neg only for an interrupt and as the preset's neg rule says given
    the tossup's earlier buzzes (by word), the bot's weight for a bot seat. ``token_index`` None
    is a buzz after the question ended (the last word; a wrong one scores 0). Later wrong buzzes
    of the tossup whose neg depended on it are scored again (``ruling_reviewed`` each).

    A correct buzz added to a dead tossup earns no bonus: none was read, so the team's bonus is
    recorded as not heard (0 points); the packet's bonuses are not moved.

    Any phase after the start, also after the end (the fits then follow: the store sends the
    match's end jobs again). Refusals (nothing changes): ``not_live`` (lobby),
    ``not_correctable`` (no such tossup, one not yet played or still being read, one thrown out
    for a spare, one answered correctly: review its buzzes instead), ``unknown_player``,
    ``benched`` (the seat was on its team's bench for that tossup), ``team_already_buzzed`` (the
    seat's team has a standing buzz on that tossup; so a repeated command is refused),
    ``bad_value`` (a ruling other than correct|wrong|no_penalty, a word outside the tossup, no
    reason or one over :data:`MAX_REASON` characters)."""
    if st.status == MatchStatus.LOBBY:
        raise RuleViolation("not_live", "nothing has been played yet")
    reason, by = _why(cmd.reason, cmd.by)
    index = cmd.tossup_index
    if isinstance(index, bool) or not isinstance(index, int) or not 0 <= index <= st.tossup_index:
        raise RuleViolation("not_correctable", "that tossup has not been played yet")
    live = st.tossup is not None and st.tossup.index == index and st.tossup.outcome is None
    if live and st.status == MatchStatus.RUNNING:
        raise RuleViolation("not_correctable", "that tossup is being read: wait until it ends")
    if any(r["kind"] == "tossup" and r["tossup_index"] == index for r in st.replaced):
        raise RuleViolation("not_correctable", "that tossup was thrown out for a spare")
    if cmd.ruling not in ADDED_RULINGS:
        raise RuleViolation("bad_value", f"ruling must be one of {', '.join(ADDED_RULINGS)}")
    plain = isinstance(cmd.player_id, int) and not isinstance(cmd.player_id, bool)
    seat = st.player(cmd.player_id) if plain else None
    if seat is None:
        raise RuleViolation("unknown_player")
    limit = st.config.preset.players_per_team
    if seat.player_id not in lineup_at(st.lineups, roster(st, seat.team_id)[:limit], seat.team_id, index):
        raise RuleViolation("benched", f"{seat.name} was on the bench for that tossup")
    standing = [
        h for h in st.history if isinstance(h, TossupRuling) and h.tossup_index == index and not h.undone
    ]
    if any(h.team_id == seat.team_id for h in standing):
        raise RuleViolation("team_already_buzzed", "that seat's team already has a buzz on this tossup")
    if any(h.ruling == Ruling.CORRECT for h in standing):
        raise RuleViolation("not_correctable", "that tossup was answered: review its buzzes instead")
    spec = st.tossups[index]
    count = len(spec.tokens)
    fully_read = cmd.token_index is None
    word = count - 1 if cmd.token_index is None else cmd.token_index
    if isinstance(word, bool) or not isinstance(word, int) or not 0 <= word < count:
        raise RuleViolation("bad_value", f"the word is 0 to {count - 1}, or none (after the end)")
    entry = TossupRuling(
        tossup_index=index,
        question_id=spec.question_id,
        player_id=seat.player_id,
        team_id=seat.team_id,
        guess="",
        verdict="",
        ruling=cmd.ruling,
        points=0,
        token_index=word,
        token_count=count,
        at=now,
        fully_read=fully_read,
    )
    position = len(st.history)
    prior_neg = any(h.points < 0 and h.token_index <= word for h in standing)
    entry = replace(entry, points=_points(st, entry, cmd.ruling, seat, prior_neg))
    st.history.append(entry)
    st.scores[str(seat.team_id)] += entry.points
    if live and st.tossup is not None:  # the match ended while it was read
        st.tossup.neg_given = st.tossup.neg_given or entry.points < 0
    ev.append(
        BuzzAdded(
            history_index=position,
            tossup_index=index,
            question_id=spec.question_id,
            player_id=seat.player_id,
            team_id=seat.team_id,
            ruling=cmd.ruling,
            points=entry.points,
            token_index=word,
            token_count=count,
            fully_read=fully_read,
            at=now,
            reason=reason,
            by=by,
            scores=score_table(st),
        ).event()
    )
    _rescore_later(st, position, reason, by, ev)


def _why(reason: object, by: object) -> tuple[str, str]:
    """The command's ``reason`` (refused ``bad_value`` if empty or too long) and ``by`` (cut)."""
    why = reason.strip() if isinstance(reason, str) else ""
    if not 0 < len(why) <= MAX_REASON:
        raise RuleViolation("bad_value", f"say why, in 1 to {MAX_REASON} characters")
    return why, by.strip()[:MAX_BY] if isinstance(by, str) else ""


def _order(position: int, entry: TossupRuling) -> tuple[int, int]:
    """Where a buzz falls among its tossup's: by word, then by scoresheet position (a buzz
    added by review after those ruled live at the same word)."""
    return (entry.token_index, position)


def _points(
    st: MatchState, entry: TossupRuling, ruling: str, answerer: PlayerSpec | None, prior_neg: bool
) -> int:
    """The live rules' points for ``entry`` ruled ``ruling`` (no_penalty and timeout: 0)."""
    if ruling not in (Ruling.CORRECT, Ruling.WRONG):
        return 0
    spec = st.tossups[entry.tossup_index]
    return tossup_points(
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


def _rescore_later(st: MatchState, position: int, reason: str, by: str, ev: list[Event]) -> None:
    """Score again the wrong buzzes after the one at ``position`` on its tossup (their neg rule
    depends on the earlier negs); each whose points move: one ``ruling_reviewed`` (same ruling
    and seat, ``reason`` prefixed with :data:`RESCORED`)."""
    changed = st.history[position]
    assert isinstance(changed, TossupRuling)
    buzzes = sorted(
        (
            (i, h)
            for i, h in enumerate(st.history)
            if isinstance(h, TossupRuling) and h.tossup_index == changed.tossup_index and not h.undone
        ),
        key=lambda ih: _order(*ih),
    )
    prior_neg = False
    for i, h in buzzes:
        if _order(i, h) > _order(position, changed) and h.ruling == Ruling.WRONG:
            answerer = st.player(h.answerer_id if h.answerer_id is not None else h.player_id)
            points = _points(st, h, h.ruling, answerer, prior_neg)
            if points != h.points:
                st.history[i] = replace(h, points=points)
                st.scores[str(h.team_id)] += points - h.points
                ev.append(
                    RulingReviewed(
                        history_index=i,
                        tossup_index=h.tossup_index,
                        question_id=h.question_id,
                        bonus_id=None,
                        part=None,
                        player_before=h.player_id,
                        player_id=h.player_id,
                        team_before=h.team_id,
                        team_id=h.team_id,
                        ruling_before=h.ruling,
                        ruling=h.ruling,
                        points_before=h.points,
                        points=points,
                        reason=(RESCORED + reason)[:MAX_REASON],
                        by=by,
                        scores=score_table(st),
                    ).event()
                )
                h = st.history[i]  # type: ignore[assignment]
        prior_neg = prior_neg or h.points < 0
