"""What a bot author writes: a :class:`Guesser` that turns a prefix of a tossup (or a bonus part) into a
:class:`Guess`, the way the QANTA 2025/2026 human–AI competitions define a tossup agent: per prefix a
guess, a confidence in [0, 1], a buzz decision, and optionally an explanation and a cost in USD.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Any


@dataclass(frozen=True)
class Guess:
    """One answer of a guesser.

    guess: the answer text (sent to the server as it is when the bot answers).
    confidence: the guesser's probability that ``guess`` is right, in [0, 1].
    buzz: tossups only: buzz now with this guess (ignored on bonus parts).
    explanation: optional, for people (bonus parts: the reason shown in the bot's log).
    cost: optional, what producing this guess cost in USD (e.g. an LLM call's tokens × price).
    Raises ``ValueError`` for a confidence outside [0, 1] or a negative or non-finite cost.
    """

    guess: str
    confidence: float
    buzz: bool = False
    explanation: str = ""
    cost: float = 0.0

    def __post_init__(self) -> None:
        if not (isinstance(self.confidence, int | float) and 0.0 <= self.confidence <= 1.0):
            raise ValueError(f"confidence must be a number in [0, 1], got {self.confidence!r}")
        if not (isinstance(self.cost, int | float) and math.isfinite(self.cost) and self.cost >= 0):
            raise ValueError(f"cost must be a finite number of USD ≥ 0, got {self.cost!r}")


NO_GUESS = Guess("", 0.0)


@dataclass(frozen=True)
class TossupPrefix:
    """The part of a tossup revealed so far.

    question_id: the server's id of the tossup. index: its 0-based place in the match.
    tokens: the revealed tokens, in order (``seen`` of them): a word is a ``str``; an image, audio or
    delay token a dict, ``{"kind": "image"|"audio", "url", "sha256", "mime", "alt", "lockout"}``
    (``url`` absolute: the file, served once revealed; ``sha256`` its content hash) or
    ``{"kind": "delay", "duration"}``. Every kind counts for positions. token_count: the tossup's
    length in tokens (None when the server did not say). category: e.g. ``Literature`` ("" when
    unknown).
    """

    question_id: Any
    index: int | None
    tokens: tuple[str | dict[str, Any], ...]
    token_count: int | None = None
    category: str = ""

    @property
    def text(self) -> str:
        """The revealed words joined by spaces (media and delay tokens left out: what a text-only
        guesser reads)."""
        return " ".join(t for t in self.tokens if isinstance(t, str))

    @property
    def media(self) -> tuple[dict[str, Any], ...]:
        """The revealed image and audio tokens, in order."""
        return tuple(t for t in self.tokens if isinstance(t, dict) and t.get("kind") in ("image", "audio"))

    @property
    def seen(self) -> int:
        """How many tokens are revealed; a buzz on this prefix claims token index ``seen - 1``."""
        return len(self.tokens)

    @property
    def fraction(self) -> float | None:
        """Share of the tossup revealed, in [0, 1] (None when the length is unknown)."""
        return self.seen / self.token_count if self.token_count else None


@dataclass(frozen=True)
class BonusPart:
    """One part of a bonus the bot's team controls. ``part`` is 0-based; ``value`` in points (None
    when unknown)."""

    bonus_id: Any
    part: int
    leadin: str
    text: str
    value: int | None = None


class Guesser:
    """Base class of a bot's brain: override :meth:`guess_tossup`, and :meth:`guess_bonus` to answer
    bonus parts. Both run in a worker thread, never on the websocket loop, so they may be slow; with a
    ``time_budget`` a reply later than the budget is dropped (and a call may still be running when the
    next prefix is asked: keep the methods thread-safe then).

    time_budget: seconds one call may take before its reply is dropped (None: no limit).
    weight_class: what the bot declares (``lightweight`` / ``midweight`` / ``heavyweight``; QANTA 2026).
    """

    time_budget: float | None = None
    weight_class: str | None = None

    def begin_tossup(self, info: dict[str, Any]) -> None:
        """Called with the server's ``tossup_started`` data (``index``, ``question_id``,
        ``token_count``, ``category``) before the first prefix of that tossup. Default: nothing."""

    def guess_tossup(self, prefix: TossupPrefix) -> Guess:
        """Return the guess for this prefix; ``Guess.buzz`` says whether to buzz now."""
        raise NotImplementedError(f"{type(self).__name__} must implement guess_tossup")

    def guess_bonus(self, part: BonusPart) -> Guess:
        """Return the answer to one bonus part (default: no answer)."""
        return NO_GUESS
