"""The pure match engine: ``apply(state, command, now) -> (new_state, events)``.

No clock reads, no I/O, no randomness: time is the ``now`` argument. Every call first applies
the deadlines due at ``now`` (as a Tick would), then the command, then the deadlines the command
made due (e.g. a zero collection window). Deadlines are handled at their own due time, so a late
driver gets the same result as a punctual one. Rules: QUIZBOWL.md; points: ``scoring.rules``.

Undo reverses the points of the last ruling not yet undone; if it was a wrong/timeout/no-penalty
tossup ruling and that tossup has not ended, the team may buzz on it again. It never restarts an
ended tossup or bonus; ReplayTossup does (see ``_replay_tossup``). Bouncebacks
(``preset.bouncebacks``) are not played in this version.
"""

from __future__ import annotations

import math
from bisect import bisect_right
from typing import Any

from scoring.rules import bonus_points, tossup_points

from .commands import (
    MAX_DELAY_BOUND,
    OUTCOMES,
    VERDICTS,
    Adjust,
    Answer,
    BonusAnswer,
    Buzz,
    Command,
    End,
    Event,
    Next,
    Pause,
    Protest,
    ReplayTossup,
    Resume,
    Reveal,
    Rule,
    RuleViolation,
    SeatPlayer,
    SetSpeed,
    Skip,
    Start,
    Tick,
    Undo,
)
from .specs import KINDS, BonusSpec, Kind, PlayerSpec, TossupSpec
from .state import BONUS_PHASES, LIVE_PHASES, TOSSUP_PHASES, BonusRun, MatchState, TossupRun, deadlines

RACE_RULE = (
    "min_token_index, then corrected_press_at (else arrival), then lighter weight class, then player_id"
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
)


def apply(state: MatchState, command: Command, now: float) -> tuple[MatchState, list[Event]]:
    """Apply ``command`` at time ``now`` (seconds since the epoch) to a copy of ``state``.

    Returns the new state and the events to append (in order). Raises RuleViolation(reason)
    for a command the rules refuse; the input state is never mutated.
    """
    st = state.copy()
    events: list[Event] = []
    _advance(st, now, events)
    _dispatch(st, command, now, events)
    _advance(st, now, events)
    return st, events


def _dispatch(st: MatchState, cmd: Command, now: float, ev: list[Event]) -> None:
    match cmd:
        case Tick():
            pass
        case SeatPlayer():
            _seat_player(st, cmd, ev)
        case Start():
            _start(st, now, ev)
        case Buzz():
            _buzz(st, cmd, now, ev)
        case Answer():
            _answer(st, cmd, now, ev)
        case BonusAnswer():
            _bonus_answer(st, cmd, now, ev)
        case Rule():
            _rule(st, cmd, now, ev)
        case Pause():
            _require_running(st)
            st.paused, st.paused_at = True, now
            ev.append(Event("paused", {}))
        case Resume():
            _resume(st, now, ev)
        case SetSpeed():
            _set_speed(st, cmd.wpm, now, ev)
        case Skip():
            _skip(st, now, ev)
        case Undo():
            _undo(st, ev)
        case Adjust():
            _adjust(st, cmd, now, ev)
        case ReplayTossup():
            _replay_tossup(st, now, ev)
        case Protest():
            _protest(st, cmd, now, ev)
        case Reveal():
            _require_running(st)
            if st.phase not in LIVE_PHASES:
                raise RuleViolation("bad_phase", "reveal only while the tossup is read or in dead time")
            t = _tossup(st)
            ev.append(Event("tossup_revealed", {"question_id": t.question_id, "words_revealed": t.revealed}))
            _end_tossup(st, "dead", now, ev)
        case Next():
            _require_running(st)
            if st.phase != "between":
                raise RuleViolation("bad_phase", "Next only between questions")
            _start_tossup(st, st.tossup_index + 1, now, ev)
        case End():
            if st.status == "ended":
                raise RuleViolation("bad_phase", "match already ended")
            _end_match(st, ev)
        case _:
            raise RuleViolation("unknown_command", f"unknown command {cmd!r}")


# -- time ---------------------------------------------------------------------------------


def _advance(st: MatchState, now: float, ev: list[Event]) -> None:
    """Handle every deadline due at or before ``now`` in time order; consecutive word reveals
    are batched into one ``words`` event stamped with the batch's due time."""
    batch: list[str] = []
    while True:
        pending = deadlines(st)
        if not pending:
            break
        at, _, kind = min(pending)
        if at > now:
            break
        if kind == "word":
            batch.append(_reveal_next(st, at))
            continue
        _flush_words(st, batch, ev)
        if kind == "release":
            _release_bot(st, at, ev)
        elif kind == "race":
            _resolve_race(st, at, ev)
        elif kind == "answer":
            _rule_tossup(st, "timeout", at, ev)
        elif kind == "dead":
            _end_tossup(st, "dead", at, ev)
        elif kind == "bonus":
            _rule_bonus(st, "timeout", at, ev)
        elif kind == "between":
            _start_tossup(st, st.tossup_index + 1, at, ev)
    _flush_words(st, batch, ev)


def _reveal_next(st: MatchState, due: float) -> str:
    t = _tossup(st)
    spec = st.tossups[t.index]
    word = spec.tokens[t.revealed]
    t.revealed += 1
    t.revealed_at.append(due)
    if t.revealed < len(spec.tokens):
        t.next_word_at = due + 60.0 / st.wpm
    else:
        t.next_word_at = None
        st.phase = "dead_time"
        t.dead_deadline = due + st.config.dead_time
    return word


def _flush_words(st: MatchState, batch: list[str], ev: list[Event]) -> None:
    if not batch:
        return
    t = _tossup(st)
    start = t.revealed - len(batch)
    at = t.revealed_at[-1]
    # One batch, one reveal time: that is when the client could first see any of it.
    t.revealed_at[start:] = [at] * len(batch)
    ev.append(
        Event(
            "words", {"question_id": t.question_id, "start": start, "words": list(batch), "revealed_at": at}
        )
    )
    batch.clear()


def _resume(st: MatchState, now: float, ev: list[Event]) -> None:
    if not st.paused or st.paused_at is None:
        raise RuleViolation("not_paused")
    shift = now - st.paused_at
    st.paused, st.paused_at = False, None
    t = st.tossup
    if t is not None:
        t.next_word_at = _shifted(t.next_word_at, shift)
        t.dead_deadline = _shifted(t.dead_deadline, shift)
        t.race_deadline = _shifted(t.race_deadline, shift)
        for h in t.held:
            h["release_at"] += shift
        if t.buzz is not None:
            t.buzz["answer_deadline"] = _shifted(t.buzz["answer_deadline"], shift)
    if st.bonus is not None:
        st.bonus.deadline = _shifted(st.bonus.deadline, shift)
    st.between_deadline = _shifted(st.between_deadline, shift)
    ev.append(Event("resumed", {"shift": shift}))


def _shifted(at: float | None, shift: float) -> float | None:
    return None if at is None else at + shift


def _set_speed(st: MatchState, wpm: float, now: float, ev: list[Event]) -> None:
    if not (isinstance(wpm, int | float) and math.isfinite(wpm) and wpm > 0):
        raise RuleViolation("bad_value", "wpm must be a positive number")
    st.wpm = float(wpm)
    t = st.tossup
    if t is not None and t.next_word_at is not None and t.revealed_at:
        reference = st.paused_at if st.paused and st.paused_at is not None else now
        t.next_word_at = max(t.revealed_at[-1] + 60.0 / st.wpm, reference)
    ev.append(Event("speed_changed", {"wpm": st.wpm}))


# -- match and tossup flow ----------------------------------------------------------------


def _seat_player(st: MatchState, cmd: SeatPlayer, ev: list[Event]) -> None:
    """A new seat in the lobby (the service owns the ids and tokens; the engine only the roster)."""
    if st.status != "lobby":
        raise RuleViolation("bad_phase", "seats are added only in the lobby")
    if st.team(cmd.team_id) is None:
        raise RuleViolation("unknown_team")
    if st.player(cmd.player_id) is not None:
        raise RuleViolation("bad_value", f"player {cmd.player_id} is already seated")
    if cmd.kind not in KINDS:
        raise RuleViolation("bad_value", f"kind must be one of {KINDS}")
    kind: Kind = "bot" if cmd.kind == "bot" else "human"  # checked against KINDS above
    seat = PlayerSpec(cmd.player_id, cmd.team_id, cmd.name, kind, cmd.weight_class)
    st.players = [*st.players, seat]
    # Names and ids only: a seat's token never enters the engine.
    ev.append(Event("player_joined", _seat_data(seat)))


def _seat_data(p: PlayerSpec) -> dict[str, Any]:
    return {
        "player_id": p.player_id,
        "team_id": p.team_id,
        "name": p.name,
        "kind": p.kind,
        "weight_class": p.weight_class,
    }


def _start(st: MatchState, now: float, ev: list[Event]) -> None:
    if st.status != "lobby":
        raise RuleViolation("bad_phase", "match already started")
    if not st.tossups:
        raise RuleViolation("no_tossups")
    st.status = "running"
    ev.append(Event("match_started", {}))
    _start_tossup(st, 0, now, ev)


def _start_tossup(st: MatchState, index: int, at: float, ev: list[Event]) -> None:
    if index >= len(st.tossups):
        _end_match(st, ev)
        return
    spec = st.tossups[index]
    st.tossup_index = index
    st.tossup = TossupRun(index=index, question_id=spec.question_id, next_word_at=at)
    st.bonus = None
    st.between_deadline = None
    st.phase = "reading"
    ev.append(
        Event(
            "tossup_started",
            {
                "index": index,
                "question_id": spec.question_id,
                "token_count": len(spec.tokens),
                "category": spec.category,
                # No source id: it would let a player or bot look the answer up.
            },
        )
    )
    ev.append(Event("tossup_answer", {"question_id": spec.question_id, **_answer_data(spec)}, "moderator"))


def _answer_data(spec: TossupSpec) -> dict[str, Any]:
    """The reveal of a tossup: its answer line and where its power marks were."""
    return {
        "answer_line": spec.answer_line,
        "power_index": spec.power_index,
        "superpower_index": spec.superpower_index,
    }


def _end_tossup(
    st: MatchState, outcome: str, at: float, ev: list[Event], winner_team: int | None = None
) -> None:
    t = _tossup(st)
    for c in [*t.candidates, *t.held]:
        ev.append(_buzz_lost(t.question_id, c["player_id"], "tossup_ended"))
    t.outcome = outcome
    t.candidates, t.held, t.race_deadline = [], [], None
    t.next_word_at = t.dead_deadline = None
    t.buzz = None
    ev.append(
        Event(
            "tossup_ended",
            {
                "question_id": t.question_id,
                **_answer_data(st.tossups[t.index]),
                "outcome": outcome,
                "scores": _scores(st),
            },
        )
    )
    if winner_team is not None and st.bonus_index < len(st.bonuses):
        _start_bonus(st, winner_team, at, ev)
    else:
        _after_question(st, at, ev)


def _after_question(st: MatchState, at: float, ev: list[Event]) -> None:
    if st.tossup_index + 1 >= len(st.tossups):
        _end_match(st, ev)
        return
    st.phase = "between"
    st.between_deadline = at + st.config.between_questions if st.config.auto_advance else None


def _end_match(st: MatchState, ev: list[Event]) -> None:
    st.status, st.phase = "ended", "ended"
    st.paused, st.paused_at = False, None
    st.between_deadline = None
    ev.append(Event("match_ended", {"scores": _scores(st)}))


def _skip(st: MatchState, now: float, ev: list[Event]) -> None:
    _require_running(st)
    if st.phase in TOSSUP_PHASES:
        _end_tossup(st, "skipped", now, ev)
    elif st.phase in BONUS_PHASES:
        _end_bonus(st, now, ev)
    else:
        raise RuleViolation("bad_phase", "nothing to skip")


# -- buzzing ------------------------------------------------------------------------------


def _buzz(st: MatchState, cmd: Buzz, now: float, ev: list[Event]) -> None:
    player = _player(st, cmd.player_id)
    _require_running(st)
    t = st.tossup
    if t is None or t.outcome is not None or st.phase not in TOSSUP_PHASES:
        raise RuleViolation("not_live", "no tossup is being read")
    if cmd.question_id != t.question_id:
        raise RuleViolation("wrong_question")
    if player.team_id in t.locked_teams or player.team_id in _racing_teams(t):
        raise RuleViolation("team_already_buzzed")
    if st.phase not in LIVE_PHASES:
        raise RuleViolation("locked_out", "another buzz is being answered")
    if not t.revealed_at:
        raise RuleViolation("not_live", "no word has been read yet")
    bound = _delay_bound(cmd.delay_bound)
    if not isinstance(cmd.token_index, int) or isinstance(cmd.token_index, bool):
        raise RuleViolation("bad_value", "token_index must be an integer")
    token_index, floor = decide_token_index(t.revealed_at, cmd.token_index, now, bound)
    candidate: dict[str, Any] = {
        "player_id": player.player_id,
        "team_id": player.team_id,
        "kind": player.kind,
        "weight_class": player.weight_class,
        "token_index": token_index,
        "claimed_token_index": cmd.token_index,
        "floor_token_index": floor,
        "delay_bound": bound,
        "received_at": now,
        # Non-finite times are logged as None: the log is JSON (no NaN/Infinity in PostgreSQL).
        "client_time": _finite_or_none(cmd.client_time),
        "corrected_press_at": decide_press_at(cmd.corrected_press_at, now, bound),
        "claimed_press_at": _finite_or_none(cmd.corrected_press_at),
        "accepted_at": None,
        "release_at": None,
    }
    # The rules below judge the decided index, not the claim.
    if player.kind == "bot":
        preset = st.config.preset
        if token_index < preset.min_token_for_bots:
            raise RuleViolation(
                "bot_min_token", f"bots may not buzz before token {preset.min_token_for_bots}"
            )
        if token_index % preset.buzz_period:
            raise RuleViolation("bot_buzz_period", f"bots may buzz only every {preset.buzz_period} tokens")
        candidate["release_at"] = t.revealed_at[token_index] + st.config.reaction_delay
    ev.append(
        Event("buzz_received", {"question_id": t.question_id, **_received_data(candidate)}, "moderator")
    )
    if candidate["release_at"] is not None and candidate["release_at"] > now:
        t.held.append(candidate)
        return
    _add_candidate(t, candidate, now, st.config.collection_window)


def _received_data(c: dict[str, Any]) -> dict[str, Any]:
    keys = ("player_id", "token_index", "claimed_token_index", "floor_token_index", "delay_bound")
    return {
        **{k: c[k] for k in keys},
        "client_time": c["client_time"],
        "corrected_press_at": c["corrected_press_at"],
        "claimed_press_at": c["claimed_press_at"],
        "received_at": c["received_at"],
    }


def _finite_or_none(value: Any) -> float | None:
    ok = isinstance(value, int | float) and not isinstance(value, bool) and math.isfinite(value)
    return float(value) if ok else None


def _delay_bound(value: Any) -> float:
    """The connection's one-way delay bound in seconds, capped at ``MAX_DELAY_BOUND``.
    Raises RuleViolation("bad_value") unless a finite number ≥ 0."""
    if not isinstance(value, int | float) or isinstance(value, bool) or not math.isfinite(value) or value < 0:
        raise RuleViolation("bad_value", f"delay_bound must be a number of seconds ≥ 0, got {value!r}")
    return min(float(value), MAX_DELAY_BOUND)


def decide_token_index(
    revealed_at: list[float], claimed: int, now: float, delay_bound: float
) -> tuple[int, int]:
    """The server's token index of a buzz arriving at ``now``: ``(index, floor)``.

    ``revealed_at[i]``: when token i was shown (non-decreasing; at least one token). ``floor`` is
    the last token revealed at or before ``now − delay_bound`` (0 if none): what the client had
    surely been shown, however slow its link. ``index`` = ``claimed`` clamped to [floor,
    revealed − 1]: a client may say it saw less than the server sent (lag), never less than the
    floor, and never more than was revealed."""
    last = len(revealed_at) - 1
    floor = max(0, min(bisect_right(revealed_at, now - delay_bound) - 1, last))
    return max(floor, min(claimed, last)), floor


def decide_press_at(claimed: float | None, now: float, delay_bound: float) -> float | None:
    """The latency-corrected press time clamped to [now − delay_bound, now] (None: none given,
    or not a number). A lying clock can move a press earlier by at most the delay bound."""
    if claimed is None or not isinstance(claimed, int | float) or math.isnan(claimed):
        return None
    return min(max(float(claimed), now - delay_bound), now)


def _racing_teams(t: TossupRun) -> set[int]:
    return {c["team_id"] for c in [*t.candidates, *t.held]}


def _add_candidate(t: TossupRun, candidate: dict[str, Any], at: float, window: float) -> None:
    candidate["accepted_at"] = at
    t.candidates.append(candidate)
    if t.race_deadline is None:
        t.race_deadline = at + window


def _release_bot(st: MatchState, at: float, ev: list[Event]) -> None:
    t = _tossup(st)
    held = min(t.held, key=lambda h: (h["release_at"], h["player_id"]))
    t.held.remove(held)
    if st.phase in LIVE_PHASES:
        _add_candidate(t, held, at, st.config.collection_window)
    else:
        ev.append(_buzz_lost(t.question_id, held["player_id"], "outraced"))


def _resolve_race(st: MatchState, at: float, ev: list[Event]) -> None:
    t = _tossup(st)

    def rank(c: dict[str, Any]) -> tuple[int, float, int, int]:
        press = c["corrected_press_at"] if c["corrected_press_at"] is not None else c["accepted_at"]
        if c["release_at"] is not None:  # a bot's press counts from the end of its reaction delay
            press = max(press, c["release_at"])
        weight = 0 if c["kind"] == "human" else WEIGHT_RANK.get(c["weight_class"], len(WEIGHT_RANK) + 1)
        return (c["token_index"], press, weight, c["player_id"])

    candidates = sorted(t.candidates, key=rank)
    winner = candidates[0]
    eligible = [p.player_id for p in st.players if p.team_id not in t.locked_teams]
    spec = st.tossups[t.index]
    count = len(spec.tokens)
    # Bot buzzes still in their reaction delay pressed after the winner counted: they lost.
    outraced = [*candidates[1:], *t.held]
    t.candidates, t.held, t.race_deadline = [], [], None
    t.next_word_at = None
    t.locked_teams.append(winner["team_id"])
    t.buzz = {
        **winner,
        "token_count": count,
        "revealed_at": t.revealed_at[winner["token_index"]],
        # Neg or not is decided by the read when the buzz arrived, not when the window closed.
        "fully_read": t.revealed == count and t.revealed_at[-1] <= winner["accepted_at"],
        "answer_deadline": at + st.config.answer_window,
        "prompts": 0,
        "guess": "",
        "verdict": "",
        "reason": "",
        "directed_prompt": None,
    }
    st.phase = "answering"
    ev.append(
        Event(
            "race",
            {
                "question_id": t.question_id,
                "candidates": [{k: c[k] for k in CANDIDATE_FIELDS} for c in candidates],
                "winner": winner["player_id"],
                "rule": RACE_RULE,
                "eligible": eligible,
                "decided_at": at,
            },
            "moderator",
        )
    )
    for loser in outraced:
        ev.append(_buzz_lost(t.question_id, loser["player_id"], "outraced"))
    player, team = _player(st, winner["player_id"]), st.team(winner["team_id"])
    b = t.buzz
    ev.append(
        Event(
            "buzz",
            {
                "question_id": t.question_id,
                "player_id": player.player_id,
                "player": player.name,
                "team_id": player.team_id,
                "team": team.name if team else "",
                "kind": player.kind,
                "token_index": b["token_index"],
                "token_count": b["token_count"],
                "answer_deadline": b["answer_deadline"],
                "revealed_at": b["revealed_at"],
                "received_at": b["received_at"],
                "accepted_at": b["accepted_at"],
                "client_time": b["client_time"],
                "corrected_press_at": b["corrected_press_at"],
            },
        )
    )


def _buzz_lost(question_id: int, player_id: int, reason: str) -> Event:
    return Event("buzz_lost", {"question_id": question_id, "reason": reason}, f"player:{player_id}")


# -- answering and ruling -----------------------------------------------------------------


def _answer(st: MatchState, cmd: Answer, now: float, ev: list[Event]) -> None:
    player = _player(st, cmd.player_id)
    _require_running(st)
    if cmd.verdict not in VERDICTS:
        raise RuleViolation("bad_verdict", f"verdict must be one of {VERDICTS}")
    t = st.tossup
    if t is None or st.phase not in TOSSUP_PHASES:
        raise RuleViolation("not_live")
    if cmd.question_id != t.question_id:
        raise RuleViolation("wrong_question")
    b = t.buzz
    if b is None or b["player_id"] != player.player_id:
        closed = any(
            h["kind"] == "tossup" and h["tossup_index"] == t.index and h["player_id"] == player.player_id
            for h in st.history
        )
        raise RuleViolation("answer_window_closed" if closed else "not_your_buzz")
    if st.phase != "answering":
        raise RuleViolation("answer_window_closed", "the answer is waiting for the moderator")
    b.update(guess=cmd.text, verdict=cmd.verdict, reason=cmd.reason, directed_prompt=cmd.directed_prompt)
    if st.config.auto_rule and (cmd.verdict != "needs_moderator" or st.config.unattended):
        if cmd.verdict == "prompt":
            _prompt(st, cmd.directed_prompt, now, ev)
        else:
            _rule_tossup(st, "correct" if cmd.verdict == "accept" else "wrong", now, ev)
        return
    b["answer_deadline"] = None
    st.phase = "ruling"
    ev.append(
        Event(
            "answer_given",
            {
                "question_id": t.question_id,
                "player_id": player.player_id,
                "guess": cmd.text,
                "verdict": cmd.verdict,
                "reason": cmd.reason,
                "directed_prompt": cmd.directed_prompt,
            },
            "moderator",
        )
    )
    # Everyone else learns only that the clock stopped for a ruling (not the guess or verdict).
    ev.append(Event("awaiting_ruling", {"question_id": t.question_id, "player_id": player.player_id}))


def _prompt(st: MatchState, directed: str | None, at: float, ev: list[Event]) -> None:
    t = _tossup(st)
    b = t.buzz
    assert b is not None
    if b["prompts"] >= 1:  # a second prompt counts as wrong
        _rule_tossup(st, "wrong", at, ev)
        return
    b["prompts"] += 1
    b["directed_prompt"] = directed
    b["answer_deadline"] = at + st.config.prompt_window
    st.phase = "answering"
    ev.append(
        Event(
            "prompt",
            {
                "question_id": t.question_id,
                "player_id": b["player_id"],
                "directed_prompt": directed,
                "answer_deadline": b["answer_deadline"],
            },
        )
    )


def _rule(st: MatchState, cmd: Rule, now: float, ev: list[Event]) -> None:
    if cmd.outcome not in OUTCOMES:
        raise RuleViolation("bad_outcome", f"outcome must be one of {OUTCOMES}")
    _require_running(st)
    if st.phase in ("answering", "ruling"):
        if cmd.outcome == "prompt":
            _prompt(st, cmd.directed_prompt, now, ev)
        else:
            _rule_tossup(st, {"accept": "correct", "reject": "wrong"}.get(cmd.outcome, cmd.outcome), now, ev)
    elif st.phase in BONUS_PHASES:
        if st.bonus is None or st.bonus.pending is None:
            raise RuleViolation("no_pending_answer")
        if cmd.outcome == "prompt":
            _bonus_prompt(st, cmd.directed_prompt, now, ev)
            return
        _rule_bonus(st, {"accept": "correct", "reject": "wrong"}.get(cmd.outcome, cmd.outcome), now, ev)
    else:
        raise RuleViolation("no_pending_answer")


def _rule_tossup(st: MatchState, ruling: str, at: float, ev: list[Event]) -> None:
    """Score the current buzz (ruling: correct|wrong|no_penalty|timeout) and move on."""
    t = _tossup(st)
    b = t.buzz
    assert b is not None
    spec = st.tossups[t.index]
    player = _player(st, b["player_id"])
    if ruling == "no_penalty":
        points = 0
    else:
        points = tossup_points(
            st.config.preset,
            correct=ruling == "correct",
            token_index=b["token_index"],
            token_count=len(spec.tokens),
            power_index=spec.power_index,
            superpower_index=spec.superpower_index,
            fully_read=b["fully_read"],
            prior_neg=t.neg_given,
            weight_class=player.weight_class if player.kind == "bot" else None,
        )
    st.scores[str(player.team_id)] += points
    t.neg_given = t.neg_given or points < 0
    st.history.append(
        {
            "kind": "tossup",
            "tossup_index": t.index,
            "question_id": t.question_id,
            "player_id": player.player_id,
            "team_id": player.team_id,
            "guess": b["guess"],
            "verdict": b["verdict"],
            "ruling": ruling,
            "points": points,
            "token_index": b["token_index"],
            "token_count": len(spec.tokens),
            "at": at,
            "undone": False,
        }
    )
    ev.append(
        Event(
            "buzz_ruled",
            {
                "question_id": t.question_id,
                "player_id": player.player_id,
                "team_id": player.team_id,
                "guess": b["guess"],
                "verdict": b["verdict"],
                "ruling": ruling,
                "points": points,
                "token_index": b["token_index"],
                "token_count": len(spec.tokens),
                "tossup_index": t.index,
                "at": at,
                "scores": _scores(st),
            },
        )
    )
    t.buzz = None
    if ruling == "correct":
        _end_tossup(st, "answered", at, ev, winner_team=player.team_id)
    elif not _eligible_teams(st, t):
        _end_tossup(st, "dead", at, ev)
    else:
        if t.revealed < len(spec.tokens):
            st.phase, t.next_word_at = "reading", at
        else:
            st.phase, t.dead_deadline = "dead_time", at + st.config.dead_time
        ev.append(Event("reading_resumed", {"question_id": t.question_id}))


def _eligible_teams(st: MatchState, t: TossupRun) -> set[int]:
    return {p.team_id for p in st.players} - set(t.locked_teams)


# -- bonuses ------------------------------------------------------------------------------


def _bonus_spec(st: MatchState) -> BonusSpec:
    b = _bonus(st)
    return next(s for s in st.bonuses if s.bonus_id == b.bonus_id)


def _bonus_parts(st: MatchState) -> int:
    return min(len(_bonus_spec(st).parts), st.config.preset.bonus_parts)


def _start_bonus(st: MatchState, team_id: int, at: float, ev: list[Event]) -> None:
    spec = st.bonuses[st.bonus_index]
    st.bonus_index += 1
    st.bonus = BonusRun(bonus_id=spec.bonus_id, team_id=team_id)
    parts = _bonus_parts(st)
    ev.append(
        Event(
            "bonus_started",
            {"bonus_id": spec.bonus_id, "team_id": team_id, "leadin": spec.leadin, "parts": parts},
        )
    )
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
    ev.append(Event("bonus_answer_lines", {"bonus_id": spec.bonus_id, "parts": lines}, "moderator"))
    if parts:
        _open_part(st, 0, at, ev)
    else:
        _end_bonus(st, at, ev)


def _open_part(st: MatchState, part: int, at: float, ev: list[Event]) -> None:
    b = _bonus(st)
    spec = _bonus_spec(st).parts[part]
    b.part, b.pending, b.prompts = part, None, 0
    b.deadline = at + st.config.bonus_part_window
    st.phase = "bonus"
    ev.append(
        Event(
            "bonus_part",
            {
                "bonus_id": b.bonus_id,
                "part": part,
                "text": spec.text,
                "value": bonus_points(st.config.preset, True, spec.value),
                "answer_deadline": b.deadline,
            },
        )
    )


def _bonus_answer(st: MatchState, cmd: BonusAnswer, now: float, ev: list[Event]) -> None:
    player = _player(st, cmd.player_id)
    _require_running(st)
    if cmd.verdict not in VERDICTS:
        raise RuleViolation("bad_verdict", f"verdict must be one of {VERDICTS}")
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
    b.pending = {
        "player_id": player.player_id,
        "guess": cmd.text,
        "verdict": cmd.verdict,
        "reason": cmd.reason,
        "directed_prompt": cmd.directed_prompt,
    }
    if st.config.auto_rule:
        if cmd.verdict == "prompt":
            _bonus_prompt(st, cmd.directed_prompt, now, ev)
            return
        if cmd.verdict in ("accept", "reject") or st.config.unattended:
            _rule_bonus(st, "correct" if cmd.verdict == "accept" else "wrong", now, ev)
            return
    # The moderator rules: always without auto-ruling, else when the judge could not decide.
    b.deadline = None
    st.phase = "bonus_ruling"
    ev.append(
        Event(
            "bonus_answer_given",
            {
                "bonus_id": b.bonus_id,
                "part": b.part,
                "player_id": player.player_id,
                "guess": cmd.text,
                "verdict": cmd.verdict,
                "reason": cmd.reason,
                "directed_prompt": cmd.directed_prompt,
            },
            "moderator",
        )
    )
    ev.append(
        Event("awaiting_ruling", {"bonus_id": b.bonus_id, "part": b.part, "player_id": player.player_id})
    )


def _bonus_prompt(st: MatchState, directed: str | None, at: float, ev: list[Event]) -> None:
    """Prompt the controlling team on the open part: it answers again within the prompt
    window; a second prompt on the same part counts as wrong (QUIZBOWL.md)."""
    b = _bonus(st)
    if b.prompts >= 1:
        _rule_bonus(st, "wrong", at, ev)
        return
    b.prompts += 1
    b.pending = None
    b.deadline = at + st.config.prompt_window
    st.phase = "bonus"
    ev.append(
        Event(
            "bonus_prompt",
            {
                "bonus_id": b.bonus_id,
                "part": b.part,
                "directed_prompt": directed,
                "answer_deadline": b.deadline,
            },
        )
    )


def _rule_bonus(st: MatchState, ruling: str, at: float, ev: list[Event]) -> None:
    """Score the open bonus part (ruling: correct|wrong|no_penalty|timeout) and move on."""
    b = _bonus(st)
    spec = _bonus_spec(st).parts[b.part]
    pending = b.pending or {"player_id": None, "guess": "", "verdict": ""}
    answerer: PlayerSpec | None = None if pending["player_id"] is None else st.player(pending["player_id"])
    bot_class = answerer.weight_class if answerer is not None and answerer.kind == "bot" else None
    points = bonus_points(st.config.preset, ruling == "correct", spec.value, bot_class)
    st.scores[str(b.team_id)] += points
    b.points += points
    result = {"part": b.part, "player_id": pending["player_id"], "guess": pending["guess"], "ruling": ruling}
    b.results.append({**result, "points": points})
    st.history.append(
        {
            "kind": "bonus",
            "tossup_index": st.tossup_index,
            "bonus_id": b.bonus_id,
            "team_id": b.team_id,
            **result,
            "verdict": pending["verdict"],
            "points": points,
            "at": at,
            "undone": False,
        }
    )
    ev.append(
        Event(
            "bonus_part_ruled",
            {
                "bonus_id": b.bonus_id,
                "part": b.part,
                "team_id": b.team_id,
                "player_id": pending["player_id"],
                "guess": pending["guess"],
                "verdict": pending["verdict"],
                "ruling": ruling,
                "points": points,
                "answer_line": spec.answer_line,
                "tossup_index": st.tossup_index,
                "at": at,
                "scores": _scores(st),
            },
        )
    )
    if b.part + 1 < _bonus_parts(st):
        _open_part(st, b.part + 1, at, ev)
    else:
        _end_bonus(st, at, ev)


def _end_bonus(st: MatchState, at: float, ev: list[Event]) -> None:
    b = _bonus(st)
    b.deadline, b.pending = None, None
    ev.append(
        Event(
            "bonus_ended",
            {"bonus_id": b.bonus_id, "team_id": b.team_id, "points": b.points, "scores": _scores(st)},
        )
    )
    _after_question(st, at, ev)


# -- corrections --------------------------------------------------------------------------


def _undo(st: MatchState, ev: list[Event]) -> None:
    position = next((i for i in range(len(st.history) - 1, -1, -1) if not st.history[i]["undone"]), None)
    if position is None:
        raise RuleViolation("nothing_to_undo")
    entry = st.history[position]
    entry["undone"] = True
    st.scores[str(entry["team_id"])] -= entry["points"]
    t = st.tossup
    if (
        entry["kind"] == "tossup"
        and entry["ruling"] != "correct"
        and t is not None
        and t.index == entry["tossup_index"]
        and t.outcome is None
    ):
        if entry["team_id"] in t.locked_teams:
            t.locked_teams.remove(entry["team_id"])
        t.neg_given = any(
            h["kind"] == "tossup" and h["tossup_index"] == t.index and not h["undone"] and h["points"] < 0
            for h in st.history
        )
    ev.append(Event("ruling_undone", _undone_data(st, entry, position)))


def _undone_data(st: MatchState, entry: dict[str, Any], history_index: int) -> dict[str, Any]:
    """``history_index``: the position of the reversed ruling in the match history."""
    data: dict[str, Any] = {
        "history_index": history_index,
        "question_id": entry.get("question_id"),
        "player_id": entry["player_id"],
        "team_id": entry["team_id"],
        "points_reversed": entry["points"],
        "scores": _scores(st),
    }
    if entry["kind"] == "bonus":
        data.update(bonus_id=entry["bonus_id"], part=entry["part"])
    return data


def _adjust(st: MatchState, cmd: Adjust, now: float, ev: list[Event]) -> None:
    if st.team(cmd.team_id) is None:
        raise RuleViolation("unknown_team")
    if not isinstance(cmd.points, int) or isinstance(cmd.points, bool):
        raise RuleViolation("bad_value", "points must be an integer")
    protest = None
    if cmd.protest_id is not None:
        protest = next((p for p in st.protests if p["protest_id"] == cmd.protest_id), None)
        if protest is None or protest["status"] != "open":
            raise RuleViolation("unknown_protest", f"no open protest {cmd.protest_id}")
    st.scores[str(cmd.team_id)] += cmd.points
    st.adjustments.append(
        {
            "team_id": cmd.team_id,
            "points": cmd.points,
            "reason": cmd.reason,
            "at": now,
            "protest_id": cmd.protest_id,
        }
    )
    data = {"team_id": cmd.team_id, "points": cmd.points, "reason": cmd.reason, "scores": _scores(st)}
    if protest is None:
        ev.append(Event("points_adjusted", data))
        return
    protest.update(status="resolved", resolution={"team_id": cmd.team_id, "points": cmd.points, "at": now})
    ev.append(Event("points_adjusted", {**data, "protest_id": cmd.protest_id}))
    ev.append(Event("protest_resolved", {**protest, "scores": _scores(st)}))


def _protest(st: MatchState, cmd: Protest, now: float, ev: list[Event]) -> None:
    if st.status == "lobby":
        raise RuleViolation("not_live", "nothing to protest before the match starts")
    if cmd.team_id is not None and st.team(cmd.team_id) is None:
        raise RuleViolation("unknown_team")
    question_id = cmd.question_id
    if question_id is None and st.tossup is not None:
        question_id = st.tossup.question_id
    if question_id is not None and all(q.question_id != question_id for q in st.tossups):
        raise RuleViolation("wrong_question", f"question {question_id} is not in this match")
    protest = {
        "protest_id": len(st.protests) + 1,
        "team_id": cmd.team_id,
        "question_id": question_id,
        "reason": cmd.reason,
        "at": now,
        "status": "open",
        "resolution": None,
    }
    st.protests.append(protest)
    ev.append(Event("protest_marked", dict(protest)))


def _replay_tossup(st: MatchState, now: float, ev: list[Event]) -> None:
    """Reverse every ruling on the current (or last finished) tossup and on its bonus, newest
    first, each as a ``ruling_undone`` (so the buzz log follows), then read it again from its
    first word with every team eligible. The next bonus in the packet is used if it is answered."""
    _require_running(st)
    t = st.tossup
    if t is None:
        raise RuleViolation("bad_phase", "no tossup to replay")
    for c in [*t.candidates, *t.held]:
        ev.append(_buzz_lost(t.question_id, c["player_id"], "tossup_ended"))
    if t.buzz is not None:  # a buzz still being answered is voided, as if ruled and undone
        ev.append(
            Event(
                "ruling_undone",
                {
                    "question_id": t.question_id,
                    "player_id": t.buzz["player_id"],
                    "team_id": t.buzz["team_id"],
                    "points_reversed": 0,
                    "scores": _scores(st),
                    "reason": "tossup_replayed",
                    "history_index": None,  # never ruled: nothing in the history to mark
                },
            )
        )
    for position in range(len(st.history) - 1, -1, -1):
        entry = st.history[position]
        if entry["undone"] or entry.get("tossup_index") != t.index:
            continue
        entry["undone"] = True
        st.scores[str(entry["team_id"])] -= entry["points"]
        ev.append(Event("ruling_undone", {**_undone_data(st, entry, position), "reason": "tossup_replayed"}))
    ev.append(
        Event("tossup_replayed", {"question_id": t.question_id, "index": t.index, "scores": _scores(st)})
    )
    _start_tossup(st, t.index, now, ev)


# -- helpers ------------------------------------------------------------------------------


def _scores(st: MatchState) -> dict[str, int]:
    return dict(st.scores)


def _player(st: MatchState, player_id: int) -> PlayerSpec:
    player = st.player(player_id)
    if player is None:
        raise RuleViolation("unknown_player")
    return player


def _tossup(st: MatchState) -> TossupRun:
    assert st.tossup is not None
    return st.tossup


def _bonus(st: MatchState) -> BonusRun:
    assert st.bonus is not None
    return st.bonus


def _require_running(st: MatchState) -> None:
    if st.status != "running":
        raise RuleViolation("not_live" if st.status == "lobby" else "bad_phase", f"match is {st.status}")
    if st.paused:
        raise RuleViolation("paused")
