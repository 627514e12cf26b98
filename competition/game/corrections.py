"""Corrections: undo the last ruling, correct a ruling after the fact, adjust points, mark and
resolve protests, replay a tossup."""

from __future__ import annotations

from dataclasses import replace
from typing import Any

from competition.vocabulary import BONUS_PHASES, MatchStatus, Phase, Ruling, SeatKind, TossupOutcome
from scoring.rules import bonus_points, tossup_points

from .bonus import start_bonus
from .commands import Adjust, CorrectRuling, Event, Protest, RuleViolation
from .events import BonusWithdrawn, EventName, PointsAdjusted, RulingCorrected, TossupReplayed
from .flow import go_between, start_tossup
from .guards import require_running, score_table
from .periods import bonuses_in_play
from .proposals import close_proposals
from .records import Adjustment, BonusRuling, ProtestNote, Resolution, RulingRecord, TossupRuling
from .state import MatchState
from .tossup import buzz_lost, end_tossup

# The rulings a correction may give: a tossup buzz, a bonus part.
TOSSUP_CORRECTIONS = (Ruling.CORRECT, Ruling.WRONG, Ruling.NO_PENALTY)
PART_CORRECTIONS = (Ruling.CORRECT, Ruling.WRONG)
MAX_REASON = 200  # characters


def undo(st: MatchState, now: float, ev: list[Event]) -> None:
    """Reverse the newest ruling not yet undone. A wrong buzz on the live tossup makes its team
    eligible again; the correct buzz whose bonus is being read takes the bonus with it (its parts,
    newer, are undone first): the match goes to between questions."""
    position = next((i for i in range(len(st.history) - 1, -1, -1) if not st.history[i].undone), None)
    if position is None:
        raise RuleViolation("nothing_to_undo")
    entry = mark_undone(st, position)
    t = st.tossup
    if (
        isinstance(entry, TossupRuling)
        and entry.ruling != Ruling.CORRECT
        and t is not None
        and t.index == entry.tossup_index
        and t.outcome is None
    ):
        if entry.team_id in t.locked_teams:
            t.locked_teams.remove(entry.team_id)
        t.neg_given = any(
            isinstance(h, TossupRuling) and h.tossup_index == t.index and not h.undone and h.points < 0
            for h in st.history
        )
    withdraw = (
        isinstance(entry, TossupRuling)
        and entry.ruling == Ruling.CORRECT
        and st.bonus is not None
        and st.phase in BONUS_PHASES
        and t is not None
        and t.index == entry.tossup_index
    )
    withdrawn = st.bonus if withdraw else None
    if withdrawn is not None:
        st.bonus = None
    ev.append(Event(EventName.RULING_UNDONE, undone_data(st, entry, position)))
    if withdrawn is not None:
        ev.append(BonusWithdrawn(withdrawn.bonus_id, withdrawn.team_id).event())
        go_between(st, now, ev)


def mark_undone(st: MatchState, position: int) -> RulingRecord:
    """Mark the ruling at ``position`` in the history undone and take its points back."""
    st.history[position] = entry = replace(st.history[position], undone=True)
    st.scores[str(entry.team_id)] -= entry.points
    return entry


def undone_data(st: MatchState, entry: RulingRecord, history_index: int) -> dict[str, Any]:
    """``history_index``: the position of the reversed ruling in the match history."""
    data: dict[str, Any] = {
        "history_index": history_index,
        "question_id": entry.question_id if isinstance(entry, TossupRuling) else None,
        "player_id": entry.player_id,
        "team_id": entry.team_id,
        "points_reversed": entry.points,
        "scores": score_table(st),
    }
    if isinstance(entry, BonusRuling):
        data.update(bonus_id=entry.bonus_id, part=entry.part)
    return data


def adjust(st: MatchState, cmd: Adjust, now: float, ev: list[Event]) -> None:
    if st.team(cmd.team_id) is None:
        raise RuleViolation("unknown_team")
    if not isinstance(cmd.points, int) or isinstance(cmd.points, bool):
        raise RuleViolation("bad_value", "points must be an integer")
    position = None
    if cmd.protest_id is not None:
        position = next((i for i, p in enumerate(st.protests) if p.protest_id == cmd.protest_id), None)
        if position is None or st.protests[position].status != "open":
            raise RuleViolation("unknown_protest", f"no open protest {cmd.protest_id}")
    st.scores[str(cmd.team_id)] += cmd.points
    st.adjustments.append(Adjustment(cmd.team_id, cmd.points, cmd.reason, now, cmd.protest_id))
    adjusted = PointsAdjusted(cmd.team_id, cmd.points, cmd.reason, score_table(st), cmd.protest_id)
    ev.append(adjusted.event())
    if position is None:
        return
    resolution = Resolution(cmd.team_id, cmd.points, now)
    st.protests[position] = protest = replace(st.protests[position], status="resolved", resolution=resolution)
    ev.append(Event(EventName.PROTEST_RESOLVED, {**protest.to_dict(), "scores": score_table(st)}))


def mark_protest(st: MatchState, cmd: Protest, now: float, ev: list[Event]) -> None:
    if st.status == MatchStatus.LOBBY:
        raise RuleViolation("not_live", "nothing to protest before the match starts")
    if cmd.team_id is not None and st.team(cmd.team_id) is None:
        raise RuleViolation("unknown_team")
    question_id = cmd.question_id
    if question_id is None and st.tossup is not None:
        question_id = st.tossup.question_id
    if question_id is not None and all(q.question_id != question_id for q in st.tossups):
        raise RuleViolation("wrong_question", f"question {question_id} is not in this match")
    protest = ProtestNote(len(st.protests) + 1, cmd.team_id, question_id, cmd.reason, now)
    st.protests.append(protest)
    ev.append(Event(EventName.PROTEST_MARKED, protest.to_dict()))


def replay_tossup(st: MatchState, now: float, ev: list[Event]) -> None:
    """Reverse every ruling on the current (or last finished) tossup and on its bonus, newest
    first, each as a ``ruling_undone`` (so the buzz log follows), then read it again from its
    first word with every team eligible. The next bonus in the packet is used if it is answered."""
    require_running(st)
    t = st.tossup
    if t is None:
        raise RuleViolation("bad_phase", "no tossup to replay")
    for c in [*t.candidates, *t.held]:
        ev.append(buzz_lost(t.question_id, c.player_id, "tossup_ended"))
    close_proposals(st, t.proposals, "tossup_ended", None, ev)
    if t.buzz is not None:  # a buzz still being answered is voided, as if ruled and undone
        ev.append(
            Event(
                EventName.RULING_UNDONE,
                {
                    "question_id": t.question_id,
                    "player_id": t.buzz.player_id,
                    "team_id": t.buzz.team_id,
                    "points_reversed": 0,
                    "scores": score_table(st),
                    "reason": "tossup_replayed",
                    "history_index": None,  # never ruled: nothing in the history to mark
                },
            )
        )
    for position in range(len(st.history) - 1, -1, -1):
        entry = st.history[position]
        if entry.undone or entry.tossup_index != t.index:
            continue
        entry = mark_undone(st, position)
        ev.append(
            Event(EventName.RULING_UNDONE, {**undone_data(st, entry, position), "reason": "tossup_replayed"})
        )
    ev.append(TossupReplayed(t.question_id, t.index, score_table(st)).event())
    start_tossup(st, t.index, now, ev)


def correctable(st: MatchState) -> list[int]:
    """The history positions :func:`correct_ruling` takes, oldest first: the newest tossup ruling
    not undone, then the parts (not undone) of the bonus it earned. Empty before any ruling."""
    position = next(
        (
            i
            for i in range(len(st.history) - 1, -1, -1)
            if _is_tossup(st.history[i]) and not st.history[i].undone
        ),
        None,
    )
    if position is None:
        return []
    index = st.history[position].tossup_index
    parts = [
        i
        for i in range(position + 1, len(st.history))
        if isinstance(st.history[i], BonusRuling)
        and not st.history[i].undone
        and st.history[i].tossup_index == index
    ]
    return [position, *parts]


def _is_tossup(entry: RulingRecord) -> bool:
    return isinstance(entry, TossupRuling)


def correct_ruling(st: MatchState, cmd: CorrectRuling, now: float, ev: list[Event]) -> None:
    """Change a ruling after the fact, leaving the match as if the moderator had ruled that way
    (one ``ruling_corrected`` event, then what follows from it):

    - a tossup buzz made correct while its tossup is still read ends it, its team's bonus follows;
      made correct just after its tossup ended (between questions, no bonus read since), the
      bonus follows; the points are those of the buzz's position (power, ten, the bot's weight);
    - a correct buzz made wrong (a neg as the original ruling would have given it: not at the end
      of the tossup, not after another team's neg unless the preset allows it) or no penalty
      takes its bonus with it (each ruled part reversed, ``ruling_undone``; a bonus being read is
      withdrawn); its tossup, whose answer everyone has seen, ends dead and is not read on;
    - a bonus part takes its new points.

    Once the match has gone on to another tossup (or ended), only the points change. Refusals:
    ``not_correctable`` (not the newest tossup ruling or a part of its bonus, or an abstained
    part), ``bad_value`` (a ruling it cannot be given, the same ruling, no reason or one over
    :data:`MAX_REASON` characters), ``bad_phase`` (another buzz on that tossup is being answered)."""
    if st.status == MatchStatus.LOBBY:
        raise RuleViolation("not_live", "nothing has been ruled yet")
    reason = cmd.reason.strip() if isinstance(cmd.reason, str) else ""
    if not 0 < len(reason) <= MAX_REASON:
        raise RuleViolation("bad_value", f"say why, in 1 to {MAX_REASON} characters")
    position = cmd.history_index
    if isinstance(position, bool) or not isinstance(position, int) or position not in correctable(st):
        raise RuleViolation("not_correctable")
    entry = st.history[position]
    at = st.paused_at if st.paused and st.paused_at is not None else now
    if isinstance(entry, TossupRuling):
        _correct_tossup(st, position, entry, cmd.ruling, reason, at, ev)
    else:
        _correct_part(st, position, entry, cmd.ruling, reason, ev)


def check_ruling(ruling: str, allowed: tuple[Ruling, ...], before: str) -> Ruling:
    if ruling not in allowed:
        raise RuleViolation("bad_value", f"ruling must be one of {', '.join(allowed)}")
    if ruling == before:
        raise RuleViolation("bad_value", f"it is already ruled {before}")
    return Ruling(ruling)


def _correct_tossup(
    st: MatchState, position: int, entry: TossupRuling, given: str, reason: str, at: float, ev: list[Event]
) -> None:
    ruling = check_ruling(given, TOSSUP_CORRECTIONS, entry.ruling)
    t = st.tossup
    current = st.status == MatchStatus.RUNNING and t is not None and t.index == entry.tossup_index
    if current and t is not None and t.buzz is not None:
        raise RuleViolation("bad_phase", "another buzz on this tossup is being answered: rule it first")
    spec = st.tossups[entry.tossup_index]
    answerer = st.player(entry.answerer_id if entry.answerer_id is not None else entry.player_id)
    prior_neg = any(
        isinstance(h, TossupRuling) and h.tossup_index == entry.tossup_index and not h.undone and h.points < 0
        for h in st.history[:position]
    )
    points = 0
    if ruling != Ruling.NO_PENALTY:
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
    st.history[position] = replace(entry, ruling=ruling, points=points)
    st.scores[str(entry.team_id)] += points - entry.points
    live = current and t is not None and t.outcome is None
    outcome: str | None = None
    if current and t is not None:
        t.neg_given = any(
            isinstance(h, TossupRuling) and h.tossup_index == t.index and not h.undone and h.points < 0
            for h in st.history
        )
        if not live:  # it has ended: answered now, or dead (its answer was shown: it is not read on)
            if ruling == Ruling.CORRECT:
                t.outcome = TossupOutcome.ANSWERED
            elif entry.ruling == Ruling.CORRECT:
                t.outcome = TossupOutcome.DEAD
            outcome = t.outcome
    ev.append(
        RulingCorrected(
            history_index=position,
            tossup_index=entry.tossup_index,
            question_id=entry.question_id,
            bonus_id=None,
            part=None,
            player_id=entry.player_id,
            team_id=entry.team_id,
            ruling_before=entry.ruling,
            points_before=entry.points,
            ruling=ruling,
            points=points,
            reason=reason,
            outcome=outcome,
            scores=score_table(st),
        ).event()
    )
    if entry.ruling == Ruling.CORRECT:
        _take_bonus_back(st, position, entry, current, at, ev)
    elif ruling == Ruling.CORRECT and live:
        end_tossup(st, TossupOutcome.ANSWERED, at, ev, winner_team=entry.team_id)
    elif ruling == Ruling.CORRECT and current and st.phase == Phase.BETWEEN and st.bonus is None:
        _late_bonus(st, entry.team_id, at, ev)


def _late_bonus(st: MatchState, team_id: int, at: float, ev: list[Event]) -> None:
    """The bonus of a buzz made correct after its tossup ended, while the match waits between
    questions (nothing has been read since); none when the packet has no bonus left."""
    if st.bonus_index < len(st.bonuses) and bonuses_in_play(st):
        st.between_deadline = None
        start_bonus(st, team_id, at, ev)


def _take_bonus_back(
    st: MatchState, position: int, entry: TossupRuling, current: bool, at: float, ev: list[Event]
) -> None:
    """The bonus a correct buzz earned, once that buzz is ruled otherwise: its ruled parts are
    reversed newest first; while it is still the match's bonus it is withdrawn."""
    for i in range(len(st.history) - 1, position, -1):
        part = st.history[i]
        if isinstance(part, BonusRuling) and not part.undone and part.tossup_index == entry.tossup_index:
            part = mark_undone(st, i)
            ev.append(
                Event(EventName.RULING_UNDONE, {**undone_data(st, part, i), "reason": "ruling_corrected"})
            )
    withdrawn = st.bonus if current else None
    if withdrawn is None:
        return
    st.bonus = None
    ev.append(BonusWithdrawn(withdrawn.bonus_id, withdrawn.team_id).event())
    if st.phase in BONUS_PHASES:
        go_between(st, at, ev)


def rescore_part(st: MatchState, position: int, entry: BonusRuling, ruling: str) -> int:
    """Give bonus part ``entry`` (at ``MatchState.history[position]``) the ruling ``ruling``: its
    points as the preset scores that ruling (a bot answerer's weight class and the captain's
    decision counted), the team's score and the bonus still shown follow. Returns the new points."""
    spec = next(b for b in st.bonuses if b.bonus_id == entry.bonus_id).parts[entry.part]
    answerer = st.player(entry.player_id) if entry.player_id is not None else None
    bot_class = answerer.weight_class if answerer is not None and answerer.kind == SeatKind.BOT else None
    points = bonus_points(st.config.preset, ruling == Ruling.CORRECT, spec.value, bot_class, entry.decision)
    st.history[position] = replace(entry, ruling=ruling, points=points)
    st.scores[str(entry.team_id)] += points - entry.points
    b = st.bonus  # the last bonus, still shown once the match has ended
    if b is not None and b.bonus_id == entry.bonus_id:
        b.results = [
            replace(r, ruling=ruling, points=points) if r.part == entry.part else r for r in b.results
        ]
        b.points += points - entry.points
    return points


def _correct_part(
    st: MatchState, position: int, entry: BonusRuling, given: str, reason: str, ev: list[Event]
) -> None:
    if entry.ruling == Ruling.ABSTAINED:
        raise RuleViolation("not_correctable", "an abstained part is the captain's choice, not a ruling")
    ruling = check_ruling(given, PART_CORRECTIONS, entry.ruling)
    points = rescore_part(st, position, entry, ruling)
    ev.append(
        RulingCorrected(
            history_index=position,
            tossup_index=entry.tossup_index,
            question_id=None,
            bonus_id=entry.bonus_id,
            part=entry.part,
            player_id=entry.player_id,
            team_id=entry.team_id,
            ruling_before=entry.ruling,
            points_before=entry.points,
            ruling=ruling,
            points=points,
            reason=reason,
            outcome=None,
            scores=score_table(st),
        ).event()
    )
