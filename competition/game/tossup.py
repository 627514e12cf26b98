"""A tossup being read: words, buzzes, the race between buzzes and the end of the tossup.

The server decides the race (docs/PROTOCOL.md "The server decides the race"): every buzz of the
collection window is a candidate, ranked by :data:`RACE_RULE`; a bot's buzz is held for its
reaction delay before it becomes one.
"""

from __future__ import annotations

import math
from bisect import bisect_right
from dataclasses import replace
from typing import Any

from competition.vocabulary import (
    LIVE_PHASES,
    TOSSUP_PHASES,
    BuzzMode,
    Phase,
    SeatKind,
    TossupOutcome,
    player_audience,
)

from .bonus import start_bonus
from .commands import MAX_DELAY_BOUND, Buzz, Event, RuleViolation
from .events import BuzzLost, BuzzReceived, BuzzWon, Race, TossupEnded, TossupRevealed, Words
from .flow import after_question
from .guards import current_tossup, require_running, score_table, seated_player
from .lineups import require_active
from .periods import bonuses_in_play
from .proposals import close_proposals, divert_bot_buzz
from .records import Candidate, WinningBuzz
from .specs import PlayerSpec
from .state import MatchState, TossupRun
from .tokens import token_to_json, tokens_json

RACE_RULE = (
    "min_token_index, then corrected_press_at (else arrival), then lighter weight class, "
    "then lower declared cost (bots; undeclared last), then player_id"
)
WEIGHT_RANK = {"light": 1, "mid": 2, "heavy": 3}
# Candidate fields published in the race event (release_at, a bot's earliest press, stays in state).
CANDIDATE_FIELDS = (
    "player_id",
    "team_id",
    "kind",
    "token_index",
    "claimed_token_index",
    "floor_token_index",
    "delay_bound",
    "received_at",
    "client_time",
    "corrected_press_at",
    "claimed_press_at",
    "accepted_at",
    "cost",
)


def reveal_next(st: MatchState, due: float) -> str | dict[str, Any]:
    """Reveal the next token at ``due``; returns it as the ``words`` event carries it. A delay
    token holds the next one back for its duration; a media token's lockout starts now."""
    t = current_tossup(st)
    spec = st.tossups[t.index]
    token = spec.tokens[t.revealed]
    t.revealed += 1
    t.revealed_at.append(due)
    step = 60.0 / st.wpm
    if not isinstance(token, str):
        if token.kind == "delay":
            step = token.duration
        elif token.lockout:
            t.lockout_until = max(t.lockout_until or due, due + token.lockout)
    if t.revealed < len(spec.tokens):
        t.next_word_at = due + step
    else:
        t.next_word_at = None
        st.phase = Phase.DEAD_TIME
        # After a last clue's reveal lockout, the room still gets its whole dead time to buzz.
        t.dead_deadline = max(due, t.lockout_until or due) + st.config.dead_time
    return token_to_json(token)


def flush_words(st: MatchState, batch: list[str | dict[str, Any]], ev: list[Event]) -> None:
    if not batch:
        return
    t = current_tossup(st)
    start = t.revealed - len(batch)
    at = t.revealed_at[-1]
    # One batch, one reveal time: that is when the client could first see any of it.
    t.revealed_at[start - t.revealed_from :] = [at] * len(batch)
    # A buzz is placed at most MAX_DELAY_BOUND back, and decided at most a reaction delay and a
    # collection window later: older reveal times are never read again.
    t.trim_reveals(MAX_DELAY_BOUND + st.config.collection_window + st.config.reaction_delay)
    ev.append(Words(t.question_id, start, list(batch), at).event())
    batch.clear()


# -- buzzing ------------------------------------------------------------------------------


def take_buzz(st: MatchState, cmd: Buzz, now: float, ev: list[Event]) -> None:
    player = seated_player(st, cmd.player_id)
    require_running(st)
    require_active(st, player)
    t = st.tossup
    if t is None or t.outcome is not None or st.phase not in TOSSUP_PHASES:
        raise RuleViolation("not_live", "no tossup is being read")
    if cmd.question_id != t.question_id:
        raise RuleViolation("wrong_question")
    # A muted bot never races: its would-be buzz is logged whatever the others do.
    muted = player.kind == SeatKind.BOT and player.buzz_mode == BuzzMode.MUTED
    if not muted and team_has_buzzed(t, player.team_id):
        raise RuleViolation("team_already_buzzed")
    if not muted and st.phase not in LIVE_PHASES:
        raise RuleViolation("locked_out", "another buzz is being answered")
    if t.lockout_until is not None and now < t.lockout_until:
        raise RuleViolation(
            "media_lockout",
            f"no buzz for {t.lockout_until - now:.1f} s more: an image or audio clue was just shown",
            {"until": t.lockout_until},
        )
    if not t.revealed_at:
        raise RuleViolation("not_live", "no word has been read yet")
    bound = _delay_bound(cmd.delay_bound)
    if not isinstance(cmd.token_index, int) or isinstance(cmd.token_index, bool):
        raise RuleViolation("bad_value", "token_index must be an integer")
    token_index, floor = decide_token_index(t.revealed_at, t.revealed_from, cmd.token_index, now, bound)
    candidate = Candidate(
        player_id=player.player_id,
        team_id=player.team_id,
        kind=player.kind,
        weight_class=player.weight_class,
        token_index=token_index,
        claimed_token_index=cmd.token_index,
        floor_token_index=floor,
        delay_bound=bound,
        received_at=now,
        # Non-finite times are logged as None: the log is JSON (no NaN/Infinity in PostgreSQL).
        client_time=_finite_or_none(cmd.client_time),
        corrected_press_at=decide_press_at(cmd.corrected_press_at, now, bound),
        claimed_press_at=_finite_or_none(cmd.corrected_press_at),
        cost=_cost(cmd.cost),
    )
    # The rules below judge the decided index, not the claim.
    if player.kind == SeatKind.BOT:
        preset = st.config.preset
        min_token = max(preset.min_token_for_bots, player.min_token)
        if token_index < min_token:
            raise RuleViolation("bot_min_token", f"this bot may not buzz before token {min_token}")
        if token_index % preset.buzz_period:
            raise RuleViolation("bot_buzz_period", f"bots may buzz only every {preset.buzz_period} tokens")
        if player.buzz_mode != BuzzMode.AUTONOMOUS:
            divert_bot_buzz(st, player, candidate, now, ev)
            return
        candidate = replace(candidate, release_at=t.reveal_time(token_index) + st.config.reaction_delay)
    ev.append(received_event(t.question_id, candidate).event())
    if candidate.release_at is not None and candidate.release_at > now:
        t.held.append(candidate)
        return
    add_candidate(t, candidate, now, st.config.collection_window)


def received_event(question_id: int, c: Candidate) -> BuzzReceived:
    """The log entry of a buzz that reached the engine (``buzz_received``)."""
    return BuzzReceived(
        question_id=question_id,
        player_id=c.player_id,
        token_index=c.token_index,
        claimed_token_index=c.claimed_token_index,
        floor_token_index=c.floor_token_index,
        delay_bound=c.delay_bound,
        client_time=c.client_time,
        corrected_press_at=c.corrected_press_at,
        claimed_press_at=c.claimed_press_at,
        received_at=c.received_at,
    )


def _finite_or_none(value: Any) -> float | None:
    ok = isinstance(value, int | float) and not isinstance(value, bool) and math.isfinite(value)
    return float(value) if ok else None


def _cost(value: Any) -> float | None:
    """A buzz's declared cost in USD (None when undeclared). Raises RuleViolation("bad_value")
    unless a finite number ≥ 0."""
    if value is None:
        return None
    if not isinstance(value, int | float) or isinstance(value, bool) or not math.isfinite(value) or value < 0:
        raise RuleViolation("bad_value", "cost must be a finite number of USD ≥ 0")
    return float(value)


def _delay_bound(value: Any) -> float:
    """The connection's one-way delay bound in seconds, capped at ``MAX_DELAY_BOUND``.
    Raises RuleViolation("bad_value") unless a finite number ≥ 0."""
    if not isinstance(value, int | float) or isinstance(value, bool) or not math.isfinite(value) or value < 0:
        raise RuleViolation("bad_value", f"delay_bound must be a number of seconds ≥ 0, got {value!r}")
    return min(float(value), MAX_DELAY_BOUND)


def decide_token_index(
    revealed_at: list[float], revealed_from: int, claimed: int, now: float, delay_bound: float
) -> tuple[int, int]:
    """The server's token index of a buzz arriving at ``now``: ``(index, floor)``.

    ``revealed_at[i]``: when token ``revealed_from + i`` was shown (non-decreasing; at least one
    token; the tokens before ``revealed_from`` were shown before ``revealed_at[0]``). ``floor`` is
    the last token revealed at or before ``now − delay_bound`` (0 if none): what the client had
    surely been shown, however slow its link. ``index`` = ``claimed`` clamped to [floor,
    revealed − 1]: a client may say it saw less than the server sent (lag), never less than the
    floor, and never more than was revealed."""
    last = revealed_from + len(revealed_at) - 1
    floor = max(0, min(revealed_from + bisect_right(revealed_at, now - delay_bound) - 1, last))
    return max(floor, min(claimed, last)), floor


def decide_press_at(claimed: float | None, now: float, delay_bound: float) -> float | None:
    """The latency-corrected press time clamped to [now − delay_bound, now] (None: none given,
    or not a number). A lying clock can move a press earlier by at most the delay bound."""
    if claimed is None or not isinstance(claimed, int | float) or math.isnan(claimed):
        return None
    return min(max(float(claimed), now - delay_bound), now)


def can_race(player: PlayerSpec) -> bool:
    """Whether the seat's buzzes race (a muted bot's never do)."""
    return player.kind != SeatKind.BOT or player.buzz_mode != BuzzMode.MUTED


def team_has_buzzed(t: TossupRun, team_id: int) -> bool:
    """Whether ``team_id`` buzzed on this tossup already: locked out after a wrong answer,
    or with a buzz in the race (a candidate or a bot's held buzz); a second buzz of the team
    is refused (``team_already_buzzed``)."""
    return team_id in t.locked_teams or any(c.team_id == team_id for c in [*t.candidates, *t.held])


def add_candidate(t: TossupRun, candidate: Candidate, at: float, window: float) -> None:
    t.candidates.append(replace(candidate, accepted_at=at))
    if t.race_deadline is None:
        t.race_deadline = at + window


def release_bot(st: MatchState, at: float, ev: list[Event]) -> None:
    t = current_tossup(st)
    held = min(t.held, key=lambda h: (h.release_at or 0.0, h.player_id))
    t.held.remove(held)
    if st.phase in LIVE_PHASES:
        add_candidate(t, held, at, st.config.collection_window)
    else:
        ev.append(buzz_lost(t.question_id, held.player_id, "outraced"))


def resolve_race(st: MatchState, at: float, ev: list[Event]) -> None:
    t = current_tossup(st)

    def press(c: Candidate) -> float:
        pressed = c.corrected_press_at if c.corrected_press_at is not None else c.accepted_at
        assert pressed is not None  # every candidate in the race was accepted
        # a bot's press counts from the end of its reaction delay
        return pressed if c.release_at is None else max(pressed, c.release_at)

    def rank(c: Candidate) -> tuple[int, float, int, float, int]:
        weight = 0 if c.kind == SeatKind.HUMAN else WEIGHT_RANK.get(c.weight_class, len(WEIGHT_RANK) + 1)
        # Same token, press and class: the cheaper guess wins; an undeclared cost ranks last. Only
        # bots declare one (a tablet claiming a cost gains nothing over another human).
        cost = c.cost if c.kind == SeatKind.BOT and c.cost is not None else math.inf
        return (c.token_index, press(c), weight, cost, c.player_id)

    candidates = sorted(t.candidates, key=rank)
    winner = candidates[0]
    eligible = [p.player_id for p in st.players if p.team_id not in t.locked_teams and can_race(p)]
    spec = st.tossups[t.index]
    count = len(spec.tokens)
    # The losers in the race learn by how much (on the winner's word); bot buzzes still in their
    # reaction delay pressed after the winner counted: they lost too.
    margins = {
        c.player_id: press(c) - press(winner) if c.token_index == winner.token_index else None
        for c in candidates[1:]
    }
    outraced = [*candidates[1:], *t.held]
    t.candidates, t.held, t.race_deadline = [], [], None
    t.next_word_at = None
    t.locked_teams.append(winner.team_id)
    assert winner.accepted_at is not None
    t.buzz = b = WinningBuzz(
        **winner.to_dict(),
        token_count=count,
        revealed_at=t.reveal_time(winner.token_index),
        # Neg or not is decided by the read when the buzz arrived, not when the window closed.
        fully_read=t.revealed == count and t.revealed_at[-1] <= winner.accepted_at,
        answer_deadline=at + st.config.answer_window,
    )
    st.phase = Phase.ANSWERING
    ev.append(
        Race(
            t.question_id, [_race_entry(c) for c in candidates], winner.player_id, RACE_RULE, eligible, at
        ).event()
    )
    for loser in outraced:
        ev.append(buzz_lost(t.question_id, loser.player_id, "outraced", margins.get(loser.player_id)))
    player, team = seated_player(st, winner.player_id), st.team(winner.team_id)
    ev.append(
        BuzzWon(
            question_id=t.question_id,
            player_id=player.player_id,
            player=player.name,
            team_id=player.team_id,
            team=team.name if team else "",
            kind=player.kind,
            token_index=b.token_index,
            token_count=b.token_count,
            answer_deadline=b.answer_deadline,
            revealed_at=b.revealed_at,
            received_at=b.received_at,
            accepted_at=b.accepted_at,
            client_time=b.client_time,
            corrected_press_at=b.corrected_press_at,
        ).event()
    )


def _race_entry(c: Candidate) -> dict[str, Any]:
    """A candidate as published in the ``race`` event (``release_at`` stays in the state)."""
    d = c.to_dict()
    return {k: d[k] for k in CANDIDATE_FIELDS}


def buzz_lost(question_id: int, player_id: int, reason: str, margin: float | None = None) -> Event:
    return BuzzLost(question_id, reason, margin).event(player_audience(player_id))


def end_tossup(
    st: MatchState, outcome: TossupOutcome, at: float, ev: list[Event], winner_team: int | None = None
) -> None:
    t = current_tossup(st)
    for c in [*t.candidates, *t.held]:
        ev.append(buzz_lost(t.question_id, c.player_id, "tossup_ended"))
    close_proposals(st, t.proposals, "tossup_ended", None, ev)
    t.outcome = outcome
    t.candidates, t.held, t.race_deadline = [], [], None
    t.next_word_at = t.dead_deadline = None
    t.buzz = None
    spec = st.tossups[t.index]
    ev.append(
        TossupEnded(
            t.question_id,
            spec.answer_line,
            spec.power_index,
            spec.superpower_index,
            outcome,
            score_table(st),
            tokens_json(spec.tokens),
        ).event()
    )
    if winner_team is not None and st.bonus_index < len(st.bonuses) and bonuses_in_play(st):
        start_bonus(st, winner_team, at, ev)
    else:
        after_question(st, at, ev)


def reveal(st: MatchState, now: float, ev: list[Event]) -> None:
    """End the tossup being read (or in dead time) unanswered and show its answer line."""
    require_running(st)
    if st.phase not in LIVE_PHASES:
        raise RuleViolation("bad_phase", "reveal only while the tossup is read or in dead time")
    t = current_tossup(st)
    ev.append(TossupRevealed(t.question_id, t.revealed).event())
    end_tossup(st, TossupOutcome.DEAD, now, ev)
