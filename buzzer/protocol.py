"""Validation of client frames, moderator command mapping, rate limiting and clock offset
estimation. Pure (no Django), so it is tested without a server.

Hostile input is expected: :func:`parse` turns any text into a validated message dict or a
:class:`ProtocolError` with one of :data:`FRAME_ERROR_CODES`, never another exception."""

from __future__ import annotations

import hashlib
import json
import math
from collections import deque
from typing import Any

from competition import game
from competition.errors import RULE_CODES, SERVICE_CODES, TossupError

PROBLEMS = ("lacks_factuality", "lacks_specificity", "subjectivity", "ambiguity")

# type -> (roles allowed, required fields with their types)
_NUM = (int, float)
MESSAGES: dict[str, tuple[frozenset[str], dict[str, tuple[type, ...]]]] = {
    "ping": (frozenset({"play", "moderate", "watch"}), {"client_time": _NUM}),
    "heartbeat_ack": (frozenset({"play", "moderate", "watch"}), {"server_time": _NUM}),
    "resync": (frozenset({"play", "moderate", "watch"}), {}),
    "buzz": (frozenset({"play"}), {"question_id": (int,), "token_index": (int,)}),
    "answer": (frozenset({"play"}), {"question_id": (int,), "text": (str,)}),
    "bonus_answer": (frozenset({"play"}), {"bonus_id": (int,), "part": (int,), "text": (str,)}),
    "flag": (frozenset({"play", "moderate"}), {"question_id": (int,), "problem": (str,)}),
    "command": (frozenset({"moderate"}), {"name": (str,)}),
}

COMMANDS: dict[str, tuple[type, dict[str, tuple[type, ...]]]] = {
    "start": (game.Start, {}),
    "pause": (game.Pause, {}),
    "resume": (game.Resume, {}),
    "speed": (game.SetSpeed, {"wpm": _NUM}),
    "skip": (game.Skip, {}),
    "rule": (game.Rule, {"outcome": (str,)}),
    "undo": (game.Undo, {}),
    "adjust": (game.Adjust, {"team_id": (int,), "points": (int,), "reason": (str,)}),
    "next": (game.Next, {}),
    "end": (game.End, {}),
    "replay": (game.ReplayTossup, {}),
    "protest": (game.Protest, {"reason": (str,)}),
    "reveal": (game.Reveal, {}),
}
# Optional fields of a command, passed on when present and of the right type.
OPTIONAL: dict[str, dict[str, tuple[type, ...]]] = {
    "rule": {"directed_prompt": (str,)},
    "adjust": {"protest_id": (int,)},
    "protest": {"team_id": (int,), "question_id": (int,)},
}
RULE_OUTCOMES = ("accept", "reject", "no_penalty", "prompt")
MAX_FRAME = 4096
# The websocket server refuses larger frames before reading them (UTF-8: ≤ 4 bytes a character).
MAX_FRAME_BYTES = 4 * MAX_FRAME
# Every number in a frame: ids, indexes, points and epoch seconds all fit well inside the
# integers a double represents exactly; 1e308 or 2**70 is never a real value.
MAX_NUMBER = 2**53
MAX_REF = 64  # characters of a string ``ref``
MAX_COMMAND_ID = 64  # MatchEvent.command_id's column width
MAX_COMMENT = 1000
# Heartbeats (server → client) and the one-way delay bound they measure (docs/PROTOCOL.md).
HEARTBEAT_INTERVAL = 5.0  # seconds between a connection's heartbeats
SILENT_SERVER = 15.0  # a client that hears nothing for this long reconnects
MAX_DELAY_BOUND = 0.3  # seconds: the most latency correction may move a buzz earlier than its arrival
MAX_CLOCK_SKEW = 86400.0  # client clocks farther than a day from the server's are not used

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


def _check_fields(msg: dict[str, Any], fields: dict[str, tuple[type, ...]], ref: Any) -> None:
    for name, types in fields.items():
        value = msg.get(name)
        # bool is an int subclass; never accept it as a number.
        if value is None or isinstance(value, bool) or not isinstance(value, types):
            raise ProtocolError("invalid", f"field {name!r} is missing or not {types[0].__name__}", ref)
        if isinstance(value, float) and not math.isfinite(value):
            raise ProtocolError("invalid", f"field {name!r} must be finite", ref)
        if isinstance(value, (int, float)) and not -MAX_NUMBER < value < MAX_NUMBER:
            raise ProtocolError("invalid", f"field {name!r} is out of range (|x| < 2**53)", ref)


def _ref(msg: dict[str, Any]) -> Any:
    """The client's ``ref``: a short string, a bounded integer or null; anything else is refused
    (with no ref to echo)."""
    ref = msg.get("ref")
    if ref is None or (isinstance(ref, str) and len(ref) <= MAX_REF):
        return ref
    if isinstance(ref, int) and not isinstance(ref, bool) and -MAX_NUMBER < ref < MAX_NUMBER:
        return ref
    raise ProtocolError("invalid", f"ref must be a string of at most {MAX_REF} characters or an integer")


def parse(text: str | None, role: str) -> dict[str, Any]:
    """Decode and validate one client frame for a connection of ``role``.

    Returns the message dict; raises ProtocolError with code ``malformed`` (not a JSON
    object, too long, too deeply nested, binary), ``unknown_type``, ``forbidden`` (role may
    not send it) or ``invalid`` (field missing, of the wrong type or out of range; a bad
    ``ref``). Never raises anything else, whatever the text."""
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
    if not isinstance(kind, str) or kind not in MESSAGES:  # {"type": []} is unhashable
        shown = kind if isinstance(kind, str) and len(kind) <= 40 else type(kind).__name__
        raise ProtocolError("unknown_type", f"unknown message type {shown!r}", ref)
    roles, fields = MESSAGES[kind]
    if role not in roles:
        raise ProtocolError("forbidden", f"a {role} connection may not send {kind!r}", ref)
    _check_fields(msg, fields, ref)
    if kind == "buzz" and msg.get("client_time") is not None:
        _check_fields(msg, {"client_time": _NUM}, ref)
    if kind == "flag":
        if msg["problem"] not in PROBLEMS:
            raise ProtocolError("invalid", f"problem must be one of {', '.join(PROBLEMS)}", ref)
        comment = msg.get("comment", "")
        if not isinstance(comment, str) or len(comment) > MAX_COMMENT:
            raise ProtocolError(
                "invalid", f"comment must be a string of at most {MAX_COMMENT} characters", ref
            )
    if kind == "command":
        if msg["name"] not in COMMANDS:
            raise ProtocolError("unknown_type", f"unknown command {msg['name'][:40]!r}", ref)
        if not isinstance(msg.get("command_id", ""), str):
            raise ProtocolError("invalid", "command_id must be a string", ref)
        _check_fields(msg, COMMANDS[msg["name"]][1], ref)
        optional = OPTIONAL.get(msg["name"], {})
        _check_fields(msg, {k: v for k, v in optional.items() if msg.get(k) is not None}, ref)
        if msg["name"] == "rule" and msg["outcome"] not in RULE_OUTCOMES:
            raise ProtocolError("invalid", f"outcome must be one of {', '.join(RULE_OUTCOMES)}", ref)
        if msg["name"] == "speed" and not 30 <= msg["wpm"] <= 1000:
            raise ProtocolError("invalid", "wpm must be between 30 and 1000", ref)
    # Only the validated fields go on: an unknown field (say NaN under "x") never reaches a
    # service or the log.
    keep = {"type", *fields, *_VALIDATED_EXTRAS.get(kind, ())}
    if kind == "command":
        keep |= {"name", "command_id", *COMMANDS[msg["name"]][1], *OPTIONAL.get(msg["name"], {})}
    clean = {k: v for k, v in msg.items() if k in keep}
    if ref is not None:
        clean["ref"] = ref
    return clean


# Optional fields a frame type may carry besides its required ones (checked in parse).
_VALIDATED_EXTRAS: dict[str, tuple[str, ...]] = {"buzz": ("client_time",), "flag": ("comment",)}


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


def moderator_command(msg: dict[str, Any]) -> Any:
    """The engine command for a validated ``command`` frame (optional fields included when given)."""
    cls, fields = COMMANDS[msg["name"]]
    kwargs = {name: msg[name] for name in fields}
    kwargs.update({k: msg[k] for k in OPTIONAL.get(msg["name"], {}) if msg.get(k) is not None})
    return cls(**kwargs)


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
SEAT_LIMITED = frozenset({"buzz", "answer", "bonus_answer"})


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
