"""The adapter between the project's bots and the bot SDK (``sdk/``, package ``tossup_bot``): the SDK's
client is the only protocol client; this module turns the project's trained models into SDK guessers.

A :class:`Model` (the TF-IDF, Wikipedia and buzz-log replay bots) answers ``guess(text) -> (answer,
confidence)`` and ``bonus_guess(leadin, part_text) -> answer``; :class:`ModelGuesser` makes it a
:class:`tossup_bot.Guesser` that buzzes at confidence ≥ a threshold after ``min_tokens`` tokens, and
:func:`run_bot` seats such a model in a match (``runbot --bot``, ``simulate_match``).
"""

from __future__ import annotations

from typing import Any, Protocol, runtime_checkable

from tossup_bot import NO_GUESS, BonusPart, Guess, Guesser, TossupPrefix
from tossup_bot import run_bot as run_guesser


class Model(Protocol):
    """A trained model. Both methods may be slow; the SDK's client runs them in a worker thread."""

    def guess(self, text_so_far: str) -> tuple[str, float]:
        """Return ``(answer text, confidence in [0, 1])`` for the tossup words revealed so far."""
        ...

    def bonus_guess(self, leadin: str, part_text: str) -> str:
        """Return the answer to one bonus part."""
        ...


@runtime_checkable
class TossupAware(Protocol):
    """Optional: a model that wants the ``tossup_started`` data (e.g. a replay bot keyed by question id)."""

    def begin_tossup(self, data: dict[str, Any]) -> None:
        """Called with the ``tossup_started`` event data before any guess on that tossup."""
        ...


@runtime_checkable
class PrefixAware(Protocol):
    """Optional: a model whose confidence depends on more than the text (the reference bot's learned
    buzzer reads how much of the tossup is revealed and its category)."""

    def guess_prefix(
        self, text: str, seen: int, token_count: int | None, category: str = ""
    ) -> tuple[str, float]:
        """``(answer, confidence in [0, 1])`` after ``seen`` of ``token_count`` tokens (None: unknown)."""
        ...


class ModelGuesser(Guesser):
    """A :class:`Model` as an SDK guesser: buzz when the confidence ≥ ``threshold`` (in [0, 1]) and at
    least ``min_tokens`` tokens are revealed; the model is not asked before. Bonus answers carry
    confidence 0 (the models give none)."""

    def __init__(self, model: Model, threshold: float, min_tokens: int = 0) -> None:
        self.model, self.threshold, self.min_tokens = model, threshold, min_tokens

    def begin_tossup(self, info: dict[str, Any]) -> None:
        if isinstance(self.model, TossupAware):
            self.model.begin_tossup(info)

    def guess_tossup(self, prefix: TossupPrefix) -> Guess:
        if prefix.seen < self.min_tokens:
            return NO_GUESS
        if isinstance(self.model, PrefixAware):
            answer, confidence = self.model.guess_prefix(
                prefix.text, prefix.seen, prefix.token_count, prefix.category or ""
            )
        else:
            answer, confidence = self.model.guess(prefix.text)
        confidence = min(max(float(confidence), 0.0), 1.0)
        return Guess(answer, confidence, buzz=confidence >= self.threshold)

    def guess_bonus(self, part: BonusPart) -> Guess:
        return Guess(self.model.bonus_guess(part.leadin, part.text), 0.0)


async def run_bot(
    url: str, model: Model, *, threshold: float, min_tokens: int = 0, **options: Any
) -> dict[str, float]:
    """Play one match with ``model`` wrapped in a :class:`ModelGuesser`; ``options`` and the result are
    :func:`tossup_bot.run_bot`'s (``log``, ``ping_interval``, ``silent_after``, ``reconnects``)."""
    return await run_guesser(url, ModelGuesser(model, threshold, min_tokens), **options)
