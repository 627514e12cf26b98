"""Validation of client frames, moderator command mapping, rate limiting and clock offset
estimation. Pure (no Django), so it is tested without a server."""

from __future__ import annotations

import json
import math
from collections import deque
from typing import Any

from competition import game

PROBLEMS = ("lacks_factuality", "lacks_specificity", "subjectivity", "ambiguity")

# type -> (roles allowed, required fields with their types)
_NUM = (int, float)
MESSAGES: dict[str, tuple[frozenset[str], dict[str, tuple[type, ...]]]] = {
    "ping": (frozenset({"play", "moderate", "watch"}), {"client_time": _NUM}),
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


class ProtocolError(Exception):
    def __init__(self, code: str, message: str, ref: Any = None):
        super().__init__(message)
        self.code, self.message, self.ref = code, message, ref


def _check_fields(msg: dict[str, Any], fields: dict[str, tuple[type, ...]], ref: Any) -> None:
    for name, types in fields.items():
        value = msg.get(name)
        # bool is an int subclass; never accept it as a number.
        if value is None or isinstance(value, bool) or not isinstance(value, types):
            raise ProtocolError("invalid", f"field {name!r} is missing or not {types[0].__name__}", ref)
        if isinstance(value, float) and not math.isfinite(value):
            raise ProtocolError("invalid", f"field {name!r} must be finite", ref)


def parse(text: str | None, role: str) -> dict[str, Any]:
    """Decode and validate one client frame for a connection of ``role``.

    Returns the message dict; raises ProtocolError with code ``malformed`` (not a JSON
    object, too long, binary), ``unknown_type``, ``forbidden`` (role may not send it) or
    ``invalid`` (field missing or of the wrong type)."""
    if text is None:
        raise ProtocolError("malformed", "binary frames are not supported")
    if len(text) > MAX_FRAME:
        raise ProtocolError("malformed", f"frame longer than {MAX_FRAME} characters")
    try:
        msg = json.loads(text)
    except ValueError:
        raise ProtocolError("malformed", "frame is not valid JSON") from None
    if not isinstance(msg, dict):
        raise ProtocolError("malformed", "frame must be a JSON object")
    ref = msg.get("ref")
    if isinstance(ref, (dict, list)):
        ref = None
    kind = msg.get("type")
    if kind not in MESSAGES:
        raise ProtocolError("unknown_type", f"unknown message type {kind!r}", ref)
    roles, fields = MESSAGES[kind]
    if role not in roles:
        raise ProtocolError("forbidden", f"a {role} connection may not send {kind!r}", ref)
    _check_fields(msg, fields, ref)
    if kind == "buzz" and msg.get("client_time") is not None:
        _check_fields(msg, {"client_time": _NUM}, ref)
    if kind == "flag" and msg["problem"] not in PROBLEMS:
        raise ProtocolError("invalid", f"problem must be one of {', '.join(PROBLEMS)}", ref)
    if kind == "command":
        if msg["name"] not in COMMANDS:
            raise ProtocolError("unknown_type", f"unknown command {msg['name']!r}", ref)
        _check_fields(msg, COMMANDS[msg["name"]][1], ref)
        optional = OPTIONAL.get(msg["name"], {})
        _check_fields(msg, {k: v for k, v in optional.items() if msg.get(k) is not None}, ref)
        if msg["name"] == "rule" and msg["outcome"] not in RULE_OUTCOMES:
            raise ProtocolError("invalid", f"outcome must be one of {', '.join(RULE_OUTCOMES)}", ref)
        if msg["name"] == "speed" and not 30 <= msg["wpm"] <= 1000:
            raise ProtocolError("invalid", "wpm must be between 30 and 1000", ref)
    return msg


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


class ClockEstimator:
    """Client clock → server clock from timestamped frames (pings and buzzes).

    Each frame gives ``server_received − client_time`` = clock offset + one-way delay. The
    minimum over a recent window (the least-queued frame) estimates offset + the client's
    shortest delay, so ``to_server(t, received_at)`` is the press time on the server clock as
    if the buzz had travelled as fast as this client's fastest frame: never later than its
    arrival, and earlier by however much this buzz was held up on the way. A jumping client
    clock drops out of the window after ``window`` frames."""

    def __init__(self, window: int = 20):
        self.samples: deque[float] = deque(maxlen=window)

    def add(self, client_time: float, server_time: float) -> None:
        self.samples.append(server_time - client_time)

    def to_server(self, client_time: float | None, received_at: float) -> float | None:
        """Seconds since the epoch on the server clock; None without a client time."""
        if client_time is None:
            return None
        self.add(client_time, received_at)
        return client_time + min(self.samples)
