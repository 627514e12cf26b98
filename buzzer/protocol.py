"""Validation of client frames, moderator command mapping, rate limiting and clock offset
estimation. Pure (no Django), so it is tested without a server.

Hostile input is expected: :func:`parse` turns any text into a validated message dict or a
:class:`ProtocolError` with one of :data:`FRAME_ERROR_CODES`, never another exception."""

from __future__ import annotations

import hashlib
import json
import math
from collections import deque
from dataclasses import dataclass
from enum import StrEnum
from typing import Any

from competition import game
from competition.errors import RULE_CODES, SERVICE_CODES, TossupError
from competition.vocabulary import (
    CONNECTION_ROLES,
    MODERATOR_VERDICTS,
    BonusDecision,
    FlagProblem,
    QuestionKind,
    Role,
)

_NUM = (int, float)
_INT = (int,)
_STR = (str,)


@dataclass(frozen=True)
class Field:
    """One field of a client frame: the JSON types it may have (bool is never a number) and its
    constraints. An optional field sent as null counts as absent. ``doc`` is for people
    (docs/PROTOCOL.md and the JSON Schema are generated from these tables)."""

    types: tuple[type, ...]
    doc: str = ""
    required: bool = True
    choices: tuple[str, ...] = ()
    max_length: int | None = None
    minimum: float | None = None
    maximum: float | None = None


@dataclass(frozen=True)
class FrameSpec:
    """A client frame ``type``: who may send it, its fields besides ``type`` and ``ref``, and what it does."""

    roles: tuple[Role, ...]
    fields: dict[str, Field]
    doc: str


@dataclass(frozen=True)
class CommandSpec:
    """A moderator ``command`` ``name``: the engine command it becomes and its fields (besides
    ``name``, ``command_id`` and ``seen_seq``), which are the engine command's keyword arguments,
    with ``fixed`` keyword arguments of its own (e.g. ``confirm`` of confirm_buzz / decline_buzz).
    ``on_view``: the command decides on what the moderator's view shows, so it is refused
    (``stale_view``) when made on a view the match has moved on from (``seen_seq``); False for
    settings and notes that hold whatever the view (and ``next``, which has ``after_index``)."""

    command: type
    fields: dict[str, Field]
    doc: str
    fixed: tuple[tuple[str, Any], ...] = ()
    on_view: bool = True


MAX_FRAME = 4096
MAX_COMMENT = 1000
MAX_COMMAND_ID = 64  # MatchEvent.command_id's column width
MIN_WPM, MAX_WPM = 30, 1000
MAX_BUZZ_COST = 1000.0  # USD: far above any one guess; bounds a bot's declared cost
_PLAYERS = (Role.PLAYER,)
_MODERATOR = (Role.MODERATOR,)


class FrameType(StrEnum):
    """A client frame's ``type`` (:data:`FRAMES` says who may send it and its fields). Some share
    an event's name (``buzz``, ``bonus_suggestion``, ``bonus_decision``): a frame asks, the event
    reports what the engine did."""

    HEARTBEAT_ACK = "heartbeat_ack"
    PING = "ping"
    RESYNC = "resync"
    BUZZ = "buzz"
    ANSWER = "answer"
    BONUS_ANSWER = "bonus_answer"
    CONFIRM_BUZZ = "confirm_buzz"
    DECLINE_BUZZ = "decline_buzz"
    BONUS_SUGGESTION = "bonus_suggestion"
    BONUS_DECISION = "bonus_decision"
    FLAG = "flag"
    COMMAND = "command"


# The one source of the client frames: parse() validates with it; docs/PROTOCOL.md "Frames from
# clients" and docs/protocol.schema.json are generated from it (buzzer/protocol_doc.py).
FRAMES: dict[str, FrameSpec] = {
    FrameType.HEARTBEAT_ACK: FrameSpec(
        CONNECTION_ROLES,
        {"server_time": Field(_NUM, "the heartbeat's server_time, echoed")},
        "sent at once on each `heartbeat`; the round trip measures the connection's delay bound",
    ),
    FrameType.PING: FrameSpec(
        CONNECTION_ROLES,
        {"client_time": Field(_NUM, "the client's clock, seconds since the epoch")},
        "→ `pong`",
    ),
    FrameType.RESYNC: FrameSpec(
        CONNECTION_ROLES,
        {"after_seq": Field(_INT, "the last seq the client applied", required=False)},
        "→ a fresh `snapshot`",
    ),
    FrameType.BUZZ: FrameSpec(
        _PLAYERS,
        {
            "question_id": Field(_INT, "the live tossup"),
            "token_index": Field(_INT, "the last token the client had shown: a claim the server bounds"),
            "client_time": Field(_NUM, "the press time on the client's clock", required=False),
            "cost": Field(
                _NUM,
                "bots: what producing the guess cost, USD (a race tie-break: the cheaper wins)",
                required=False,
                minimum=0,
                maximum=MAX_BUZZ_COST,
            ),
        },
        'a buzz on the live tossup (see "The server decides the race")',
    ),
    FrameType.ANSWER: FrameSpec(
        _PLAYERS,
        {"question_id": Field(_INT, "the live tossup"), "text": Field(_STR, "the answer")},
        "after the seat's buzz won the race (also the reply to a prompt)",
    ),
    FrameType.BONUS_ANSWER: FrameSpec(
        _PLAYERS,
        {
            "bonus_id": Field(_INT, "the live bonus"),
            "part": Field(_INT, "0-based part"),
            "text": Field(_STR, "the answer"),
        },
        "the controlling team's answer to the open part",
    ),
    FrameType.CONFIRM_BUZZ: FrameSpec(
        _PLAYERS,
        {"bot_id": Field(_INT, "the semi-autonomous bot seat of the player's team")},
        "a human teammate confirms the bot's pending buzz (`buzz_proposed`): it joins the race now",
    ),
    FrameType.DECLINE_BUZZ: FrameSpec(
        _PLAYERS,
        {"bot_id": Field(_INT, "the semi-autonomous bot seat of the player's team")},
        "a human teammate declines the bot's pending buzz",
    ),
    FrameType.BONUS_SUGGESTION: FrameSpec(
        _PLAYERS,
        {
            "bonus_id": Field(_INT, "the live bonus"),
            "part": Field(_INT, "0-based open part"),
            "guess": Field(_STR, "the bot's answer", max_length=500),
            "confidence": Field(_NUM, "in [0, 1]", minimum=0, maximum=1),
            "explanation": Field(_STR, "for the team's captain", required=False, max_length=MAX_COMMENT),
        },
        "a bot seat suggests its answer to the open part to its team's captain (presets with bonus decisions)",
    ),
    FrameType.BONUS_DECISION: FrameSpec(
        _PLAYERS,
        {
            "bonus_id": Field(_INT, "the live bonus"),
            "part": Field(_INT, "0-based open part"),
            "decision": Field(_STR, "the captain's choice", choices=tuple(BonusDecision)),
            "bot_id": Field(_INT, "consult: whose suggestion (default: the first)", required=False),
        },
        "the team's captain (its first human seat) decides on the open part: own answer, consult the AI, abstain",
    ),
    FrameType.FLAG: FrameSpec(
        (Role.PLAYER, Role.MODERATOR),
        {
            "question_id": Field(_INT, "a tossup that has ended"),
            "problem": Field(_STR, "why it is ill-posed", choices=tuple(FlagProblem)),
            "comment": Field(_STR, "free text", required=False, max_length=MAX_COMMENT),
        },
        "an expert flag on an ill-posed tossup, after it ended",
    ),
    FrameType.COMMAND: FrameSpec(
        _MODERATOR,
        {
            "name": Field(_STR, "one of the commands below"),
            "command_id": Field(_STR, 'idempotency key (see "Command ids")', required=False),
            "seen_seq": Field(
                _INT,
                'the last seq the dashboard had applied when the moderator acted (see "Stale views")',
                required=False,
                minimum=0,
            ),
        },
        "a moderator command (below); its own fields sit beside `name`",
    ),
}

COMMANDS: dict[str, CommandSpec] = {
    "start": CommandSpec(game.Start, {}, "leave the lobby and read the first tossup"),
    "pause": CommandSpec(game.Pause, {}, "stop the clock"),
    "resume": CommandSpec(game.Resume, {}, "restart the clock"),
    "speed": CommandSpec(
        game.SetSpeed,
        {"wpm": Field(_NUM, "words per minute", minimum=MIN_WPM, maximum=MAX_WPM)},
        "change the reading speed (whatever the view: never `stale_view`)",
        on_view=False,
    ),
    "skip": CommandSpec(game.Skip, {}, "end the current tossup as skipped, or the current bonus"),
    "rule": CommandSpec(
        game.Rule,
        {
            "verdict": Field(_STR, "the moderator's verdict", choices=MODERATOR_VERDICTS),
            "directed_prompt": Field(_STR, "what to ask on a prompt", required=False),
        },
        "rule on the answer waiting for the moderator (tossup buzz or bonus part)",
    ),
    "undo": CommandSpec(
        game.Undo,
        {},
        "reverse the last ruling not yet undone; the correct buzz whose bonus is being read takes the bonus"
        " with it (the match goes to between questions)",
    ),
    "adjust": CommandSpec(
        game.Adjust,
        {
            "team_id": Field(_INT, "the team"),
            "points": Field(_INT, "points to add (may be negative or 0)"),
            "reason": Field(_STR, "shown in the log"),
            "protest_id": Field(_INT, "the open protest it resolves", required=False),
        },
        "add points to a team",
    ),
    "next": CommandSpec(
        game.Next,
        {
            "after_index": Field(
                _INT,
                "the 0-based tossup the moderator saw end: if the match has gone past it, nothing happens"
                " (no error)",
                required=False,
                minimum=0,
            )
        },
        "start the next tossup now (between questions; `after_index` guards a stale view: never `stale_view`)",
        on_view=False,
    ),
    "pace": CommandSpec(
        game.SetPace,
        {
            "between_questions": Field(
                _NUM,
                "seconds from the end of a question (bonus included) to the next tossup; absent or null: the"
                " moderator presses next",
                required=False,
                minimum=0,
                maximum=game.MAX_PACE,
            )
        },
        "set the pace between questions (a wait under way restarts from now; whatever the view: never"
        " `stale_view`)",
        on_view=False,
    ),
    "correct_ruling": CommandSpec(
        game.CorrectRuling,
        {
            "history_index": Field(
                _INT, "position in the snapshot's `history`: the newest tossup ruling or a part of its bonus"
            ),
            "ruling": Field(_STR, "the ruling it should have had", choices=tuple(game.TOSSUP_CORRECTIONS)),
            "reason": Field(_STR, "why (shown in the log, the recap and the exports)", max_length=200),
        },
        "change a ruling after the fact (`ruling_corrected`): scores, bonus and buzz log follow",
    ),
    "end": CommandSpec(game.End, {}, "end the match"),
    "replay": CommandSpec(
        game.ReplayTossup,
        {},
        "re-read the current or just finished tossup from its first word: every ruling on it and on its bonus "
        "is reversed, newest first; adjustments stay",
    ),
    "protest": CommandSpec(
        game.Protest,
        {
            "reason": Field(_STR, "what is protested"),
            "team_id": Field(_INT, "the protesting team (absent: the moderator's own note)", required=False),
            "question_id": Field(_INT, "default: the current or last tossup", required=False),
        },
        "record a protest (whatever the view: never `stale_view`)",
        on_view=False,
    ),
    "reveal": CommandSpec(
        game.Reveal, {}, "end the tossup being read (or in dead time) now, unanswered, and show its answer"
    ),
    "confirm_buzz": CommandSpec(
        game.ConfirmBuzz,
        {"bot_id": Field(_INT, "the semi-autonomous bot seat")},
        "confirm a semi-autonomous bot's pending buzz: it joins the race now",
        fixed=(("confirm", True),),
    ),
    "decline_buzz": CommandSpec(
        game.ConfirmBuzz,
        {"bot_id": Field(_INT, "the semi-autonomous bot seat")},
        "decline a semi-autonomous bot's pending buzz",
        fixed=(("confirm", False),),
    ),
    "delegate": CommandSpec(
        game.Delegate,
        {
            "bot_id": Field(
                _INT, "a bot seat of the buzzer's team (absent: revert to the buzzer)", required=False
            )
        },
        "give the answer of the buzz being answered to the buzzer's team's AI, or back to the buzzer",
    ),
    "bonus_decision": CommandSpec(
        game.DecideBonus,
        {
            "bonus_id": Field(_INT, "the live bonus"),
            "part": Field(_INT, "0-based open part"),
            "decision": Field(_STR, "own, consult or abstain", choices=tuple(BonusDecision)),
            "bot_id": Field(_INT, "consult: whose suggestion (default: the first)", required=False),
        },
        "decide on the open bonus part for the controlling team (consult: the suggestion is judged)",
    ),
    "substitute": CommandSpec(
        game.Substitute,
        {
            "team_id": Field(_INT, "the team"),
            "player_in": Field(_INT, "a bench seat of that team coming in", required=False),
            "player_out": Field(_INT, "an active seat of that team going out", required=False),
        },
        "change a team's lineup, in the lobby or at a break the preset allows (`lineup_changed`)",
    ),
    "timeout": CommandSpec(
        game.CallTimeout,
        {"team_id": Field(_INT, "the team calling it")},
        "a team's timeout, between questions, within the preset's allowance (`timeout_called`)",
    ),
    "undo_timeout": CommandSpec(
        game.UndoTimeout,
        {},
        "take back the newest timeout of this break, until the next tossup starts (`timeout_undone`): its team"
        " gets it back and the next tossup is due as before it; `no_timeout` when there is none",
    ),
    "replace_question": CommandSpec(
        game.ReplaceQuestion,
        {
            "kind": Field(_STR, "which question is thrown out", choices=tuple(QuestionKind)),
            "reason": Field(_STR, "why (shown in the log, the recap and the exports)", max_length=200),
        },
        "throw out the current or just finished tossup (or bonus) and read the match's next spare in its place"
        " (`question_replaced`): its rulings are reversed and it counts in no score or fit; `no_spares` when"
        " none is left",
    ),
    "review_ruling": CommandSpec(
        game.ReviewRuling,
        {
            "history_index": Field(
                _INT, "position in the snapshot's `history`: any ruling that stands", minimum=0
            ),
            "reason": Field(_STR, "why (shown in the log, the recap and the exports)", max_length=200),
            "ruling": Field(
                _STR,
                "the ruling it should have had (absent: keep it)",
                required=False,
                choices=tuple(game.TOSSUP_CORRECTIONS),
            ),
            "player_id": Field(
                _INT, "a tossup buzz: the seat it should be credited to (absent: keep it)", required=False
            ),
        },
        "correct any earlier ruling of the scoresheet (`ruling_reviewed`): ruling, seat; scores, buzz log and"
        " standings follow",
    ),
    "add_buzz": CommandSpec(
        game.AddBuzz,
        {
            "tossup_index": Field(_INT, "0-based index of a tossup already played", minimum=0),
            "player_id": Field(_INT, "the seat that buzzed"),
            "ruling": Field(_STR, "the ruling it should have had", choices=tuple(game.TOSSUP_CORRECTIONS)),
            "reason": Field(_STR, "why (shown in the log, the recap and the exports)", max_length=200),
            "token_index": Field(
                _INT, "0-based word of the buzz (absent: after the question ended)", required=False, minimum=0
            ),
        },
        "add a buzz the moderator missed on a tossup already played (`buzz_added`), scored as live; a"
        " correct one earns no bonus; later negs of the tossup follow (`ruling_reviewed`)",
    ),
}
# Larger frames are refused unparsed (UTF-8: ≤ 4 bytes a character): by the launcher's uvicorn
# before reading them (tools.launcher), by the consumer with a close 1009 under any server.
MAX_FRAME_BYTES = 4 * MAX_FRAME
# Every number in a frame: ids, indexes, points and epoch seconds all fit well inside the
# integers a double represents exactly; 1e308 or 2**70 is never a real value.
MAX_NUMBER = 2**53
MAX_REF = 64  # characters of a string ``ref``
# Heartbeats (server → client) and the one-way delay bound they measure (docs/PROTOCOL.md).
HEARTBEAT_INTERVAL = 5.0  # seconds between a connection's heartbeats
SILENT_SERVER = 15.0  # a client that hears nothing for this long reconnects
MAX_DELAY_BOUND = 0.3  # seconds: the most latency correction may move a buzz earlier than its arrival
MAX_CLOCK_SKEW = 86400.0  # client clocks farther than a day from the server's are not used
# Seat presence (buzzer.presence; the moderator's ``presence`` frame, docs/PROTOCOL.md).
PRESENCE_STATES = ("connected", "reconnecting", "gone")
RECONNECT_WINDOW = 20.0  # seconds after its last socket closed that a seat counts as reconnecting

# The websocket edge's own error codes; an ``error`` frame carries one of these or the code of
# the refusal itself (the engine's RULE_CODES, the service's SERVICE_CODES: competition.errors).
FRAME_ERROR_CODES: dict[str, str] = {
    "malformed": "not JSON, not an object, too long or too deeply nested, binary",
    "unknown_type": "unknown message type or command name",
    "invalid": "a field missing, of the wrong type or out of range",
    "forbidden": "the connection's role may not send this (or bad token at connect)",
    "rate_limited": "too many frames on this connection or this seat",
    "unavailable": "the server cannot reach its database or event stream; retry later",
    "internal": "an unexpected server fault; nothing was changed by this frame",
}
# Every code an ``error`` frame may carry (docs/PROTOCOL.md "Frames from the server").
ERROR_CODES: tuple[str, ...] = tuple(dict.fromkeys([*FRAME_ERROR_CODES, *SERVICE_CODES, *RULE_CODES]))


class ProtocolError(TossupError):
    """A client frame refused at the edge: ``code`` one of :data:`FRAME_ERROR_CODES`; ``ref`` the
    frame's ``ref`` to echo (None when it could not be read)."""

    def __init__(self, code: str, message: str, ref: Any = None, extra: dict[str, Any] | None = None):
        super().__init__(code, message, extra)
        self.ref = ref


def _check_fields(msg: dict[str, Any], fields: dict[str, Field], ref: Any) -> None:
    """ProtocolError ``invalid`` unless every required field is present and every present field
    has its type and meets its constraints."""
    for name, spec in fields.items():
        value: Any = msg.get(name)
        if value is None and not spec.required:
            continue
        # bool is an int subclass; never accept it as a number.
        if value is None or isinstance(value, bool) or not isinstance(value, spec.types):
            raise ProtocolError("invalid", f"field {name!r} is missing or not {spec.types[0].__name__}", ref)
        _check_value(name, spec, value, ref)


def _check_value(name: str, spec: Field, value: Any, ref: Any) -> None:
    """``value`` has one of ``spec.types``: ProtocolError ``invalid`` unless it meets the constraints."""
    if isinstance(value, float) and not math.isfinite(value):
        raise ProtocolError("invalid", f"field {name!r} must be finite", ref)
    if isinstance(value, (int, float)) and not -MAX_NUMBER < value < MAX_NUMBER:
        raise ProtocolError("invalid", f"field {name!r} is out of range (|x| < 2**53)", ref)
    if spec.choices and value not in spec.choices:
        raise ProtocolError("invalid", f"{name} must be one of {', '.join(spec.choices)}", ref)
    if spec.max_length is not None and len(value) > spec.max_length:
        raise ProtocolError("invalid", f"{name} must be at most {spec.max_length} characters", ref)
    low, high = spec.minimum, spec.maximum
    if (low is not None and value < low) or (high is not None and value > high):
        if low is not None and high is not None:
            bounds = f"between {low:g} and {high:g}"
        else:  # one bound only (e.g. a seq or an index: at least 0)
            bounds = f"at least {low:g}" if low is not None else f"at most {high:g}"
        raise ProtocolError("invalid", f"{name} must be {bounds}", ref)


def _ref(msg: dict[str, Any]) -> Any:
    """The client's ``ref``: a short string, a bounded integer or null; anything else is refused
    (with no ref to echo)."""
    ref = msg.get("ref")
    if ref is None or (isinstance(ref, str) and len(ref) <= MAX_REF):
        return ref
    if isinstance(ref, int) and not isinstance(ref, bool) and -MAX_NUMBER < ref < MAX_NUMBER:
        return ref
    raise ProtocolError("invalid", f"ref must be a string of at most {MAX_REF} characters or an integer")


def parse(text: str | None, role: Role) -> dict[str, Any]:
    """Decode and validate one client frame for a connection of ``role`` against :data:`FRAMES`
    and :data:`COMMANDS`.

    Returns the message dict with only its declared fields (and ``ref``); raises ProtocolError
    with code ``malformed`` (not a JSON object, too long, too deeply nested, binary),
    ``unknown_type`` (unknown ``type`` or command ``name``), ``forbidden`` (role may not send it)
    or ``invalid`` (field missing, of the wrong type or out of range; a bad ``ref``). Never
    raises anything else, whatever the text."""
    if not isinstance(text, str):
        raise ProtocolError("malformed", "binary frames are not supported")
    if len(text) > MAX_FRAME:
        raise ProtocolError("malformed", f"frame longer than {MAX_FRAME} characters")
    try:
        msg = json.loads(text)
    except RecursionError:  # e.g. 1,500 nested arrays: the decoder's own stack limit
        raise ProtocolError("malformed", "frame is nested too deeply") from None
    except ValueError:
        raise ProtocolError("malformed", "frame is not valid JSON") from None
    if not isinstance(msg, dict):
        raise ProtocolError("malformed", "frame must be a JSON object")
    ref = _ref(msg)
    kind = msg.get("type")
    if not isinstance(kind, str) or kind not in FRAMES:  # {"type": []} is unhashable
        shown = kind if isinstance(kind, str) and len(kind) <= 40 else type(kind).__name__
        raise ProtocolError("unknown_type", f"unknown message type {shown!r}", ref)
    spec = FRAMES[kind]
    if role not in spec.roles:
        raise ProtocolError("forbidden", f"a {role} connection may not send {kind!r}", ref)
    _check_fields(msg, spec.fields, ref)
    fields = dict(spec.fields)
    if kind == FrameType.COMMAND:
        if msg["name"] not in COMMANDS:
            raise ProtocolError("unknown_type", f"unknown command {msg['name'][:40]!r}", ref)
        fields.update(COMMANDS[msg["name"]].fields)
        _check_fields(msg, COMMANDS[msg["name"]].fields, ref)
    # Only the declared fields go on: an unknown field (say NaN under "x") never reaches a
    # service or the log.
    clean = {k: v for k, v in msg.items() if k == "type" or (k in fields and v is not None)}
    if ref is not None:
        clean["ref"] = ref
    return clean


def command_id(msg: dict[str, Any]) -> str:
    """The moderator's idempotency key of a validated ``command`` frame ("" when none), at
    most :data:`MAX_COMMAND_ID` characters: a longer id (the dashboard derives it from the
    command's fields, e.g. an ``adjust`` reason) is replaced by its SHA-256, so equal ids
    stay equal and different ones stay different."""
    given = msg.get("command_id") or ""
    if len(given) <= MAX_COMMAND_ID:
        return given
    return (
        "sha256:" + hashlib.sha256(given.encode("utf-8", "surrogatepass")).hexdigest()[: MAX_COMMAND_ID - 7]
    )


def seen_seq(msg: dict[str, Any]) -> int | None:
    """The seq of the view a validated ``command`` frame was made on, when its command decides on
    that view (:attr:`CommandSpec.on_view`) and the frame says (``seen_seq``); else None: the
    command is not checked for a stale view."""
    return msg.get("seen_seq") if COMMANDS[msg["name"]].on_view else None


def moderator_command(msg: dict[str, Any]) -> Any:
    """The engine command for a validated ``command`` frame (its fields are the command's keyword
    arguments; absent optional fields take the command's defaults)."""
    spec = COMMANDS[msg["name"]]
    return spec.command(**{name: msg[name] for name in spec.fields if name in msg}, **dict(spec.fixed))


class RateLimiter:
    """Token bucket per connection: ``rate`` frames/s sustained, ``burst`` at once."""

    def __init__(self, rate: float = 20.0, burst: float = 40.0):
        self.rate, self.burst = rate, burst
        self.tokens, self.at = burst, None  # type: float, float | None

    def allow(self, now: float) -> bool:
        if self.at is not None:
            self.tokens = min(self.burst, self.tokens + (now - self.at) * self.rate)
        self.at = now
        if self.tokens >= 1.0:
            self.tokens -= 1.0
            return True
        return False


# Frames that act for a seat, limited per seat across all its sockets (on top of the per-socket
# limit): a person presses a buzzer and answers a few times a tossup, never dozens a second.
SEAT_LIMITED = frozenset(
    {
        FrameType.BUZZ,
        FrameType.ANSWER,
        FrameType.BONUS_ANSWER,
        FrameType.CONFIRM_BUZZ,
        FrameType.DECLINE_BUZZ,
        FrameType.BONUS_SUGGESTION,
        FrameType.BONUS_DECISION,
    }
)


class SeatLimiter:
    """One :class:`RateLimiter` per seat key (e.g. ``(match_id, player_id)``), shared by every
    socket of that seat in this process. Idle seats are forgotten, so memory stays bounded
    by the seats active in the last ``idle`` seconds."""

    def __init__(self, rate: float = 2.0, burst: float = 5.0, idle: float = 60.0):
        self.rate, self.burst, self.idle = rate, burst, idle
        self.buckets: dict[Any, RateLimiter] = {}
        self._swept = 0.0

    def allow(self, key: Any, now: float) -> bool:
        if now - self._swept > self.idle:
            self.buckets = {
                k: b for k, b in self.buckets.items() if b.at is not None and now - b.at < self.idle
            }
            self._swept = now
        bucket = self.buckets.get(key)
        if bucket is None:
            bucket = self.buckets[key] = RateLimiter(self.rate, self.burst)
        return bucket.allow(now)


class ClockEstimator:
    """Client clock → server clock for one connection, and its one-way delay bound.

    Delay bound: half the smallest round-trip time of the recent heartbeats
    (:meth:`add_rtt`), capped at :data:`MAX_DELAY_BOUND`; 0 until one is measured. A client
    can only inflate it (by answering heartbeats late), never past the cap.

    Press time: each timestamped frame (pings, buzzes) gives ``server_received − client_time``
    = clock offset + one-way delay; the minimum over a recent window (the least-queued frame)
    estimates the offset. :meth:`to_server` maps a buzz's client time to the server clock
    with it, then clamps the result to ``[arrival − delay_bound, arrival]``: latency
    correction moves a press earlier than its arrival by at most the delay this connection
    measurably has, so a lying clock gains nothing more. Client times farther than
    :data:`MAX_CLOCK_SKEW` from the server clock are ignored."""

    def __init__(self, window: int = 20, rtt_window: int = 12):
        self.samples: deque[float] = deque(maxlen=window)
        self.rtts: deque[float] = deque(maxlen=rtt_window)

    def add(self, client_time: float, server_time: float) -> bool:
        """Record one offset sample; False (ignored) when the client clock is absurd."""
        offset = server_time - client_time
        if not math.isfinite(offset) or abs(offset) > MAX_CLOCK_SKEW:
            return False
        self.samples.append(offset)
        return True

    def add_rtt(self, rtt: float) -> None:
        """A heartbeat's round-trip time in seconds (server send → its ack's arrival)."""
        if math.isfinite(rtt) and rtt >= 0:
            self.rtts.append(rtt)

    @property
    def delay_bound(self) -> float:
        """Seconds, in ``[0, MAX_DELAY_BOUND]``."""
        return min(min(self.rtts) / 2, MAX_DELAY_BOUND) if self.rtts else 0.0

    def to_server(self, client_time: float | None, received_at: float) -> float | None:
        """The press time in seconds since the epoch on the server clock, within
        ``[received_at − delay_bound, received_at]``; None without a usable client time."""
        if client_time is None or not self.add(client_time, received_at):
            return None
        corrected = client_time + min(self.samples)
        return min(received_at, max(received_at - self.delay_bound, corrected))
