"""A guesser backed by any OpenAI-compatible chat-completions endpoint (hosted APIs, vLLM, llama.cpp's
``llama-server``, Ollama's ``/v1``): one ``POST {url}/chat/completions`` per prefix asked.

Every option can come from the constructor (``tossup-bot -o KEY=VALUE``: strings are converted) or from
the environment as ``TOSSUP_LLM_<KEY>`` (``TOSSUP_LLM_URL``, ``TOSSUP_LLM_MODEL``, ``TOSSUP_LLM_API_KEY``
— else ``OPENAI_API_KEY`` —, ``TOSSUP_LLM_BUDGET`` …); the constructor wins.

The reply is read as JSON (``{"guess", "confidence", "explanation"}``, also inside a code fence or
surrounded by prose; ``answer`` for ``guess``, a percentage or ``"0.8"`` for the confidence) or, failing
that, as loose text (``Answer: X`` / ``Guess: X`` lines, ``Confidence: 70%``; else the first line as the
guess with confidence 0). A reply the guesser cannot use (HTTP error, no ``choices``, not JSON) is a
non-buzz empty guess, counted in :attr:`ChatGuesser.usage` ``failures``. Tokens and cost are recorded
from the reply's ``usage`` and the ``price_in`` / ``price_out`` options (USD per million tokens).
"""

from __future__ import annotations

import json
import logging
import math
import os
import re
import threading
import urllib.error
import urllib.request
from dataclasses import dataclass
from typing import Any

from tossup_bot.guesser import BonusPart, Guess, Guesser, TossupPrefix

logger = logging.getLogger(__name__)

GRACE = 1.0  # seconds past the budget before the HTTP request itself is abandoned (the client drops
# the reply at the budget; the grace lets it be the one that decides, and frees the thread soon after)
DEFAULT_SYSTEM = (
    "You play quizbowl. Questions are read word by word; answer as soon as you can. Reply with one JSON "
    'object only: {"guess": "<the answer>", "confidence": <probability in [0, 1] that the guess is '
    'right>, "explanation": "<one short sentence>"}.'
)
DEFAULT_TOSSUP = (
    "Tossup ({category}), {seen} of {token_count} words read so far:\n{text}\n\n"
    "What is the answer, and how sure are you?"
)
DEFAULT_BONUS = "Bonus ({category}). {leadin}\nPart {number}: {text}\n\nWhat is the answer?"


class ChatError(Exception):
    """The endpoint's reply could not be used (HTTP error, unreachable, not a chat completion)."""


@dataclass
class Usage:
    """What the guesser has spent so far (all calls, used or dropped). Tokens as the server counted them."""

    requests: int = 0
    failures: int = 0
    prompt_tokens: int = 0
    completion_tokens: int = 0
    cost: float = 0.0  # USD
    last_failure: str = ""  # why the latest failed call failed ("" when none has)


def _number(value: Any) -> float | None:
    """A confidence from ``0.8``, ``"0.8"``, ``"80%"`` or ``80`` (taken as percent), clipped to [0, 1]."""
    if isinstance(value, bool):
        return None
    if isinstance(value, str):
        match = re.search(r"-?\d+(?:\.\d+)?", value)
        if match is None:
            return None
        number = float(match.group())
        if "%" in value:
            number /= 100
    elif isinstance(value, int | float):
        number = float(value)
    else:
        return None
    if not math.isfinite(number):
        return None
    if number > 1:
        number /= 100
    return min(max(number, 0.0), 1.0)


def _json_object(content: str) -> dict[str, Any] | None:
    """The first JSON object in ``content`` (bare, fenced or amid prose), or None."""
    decoder = json.JSONDecoder()
    for match in re.finditer(r"\{", content):
        try:
            value, _ = decoder.raw_decode(content, match.start())
        except json.JSONDecodeError:
            continue
        if isinstance(value, dict):
            return value
    return None


def parse_reply(content: str) -> tuple[str, float, str]:
    """``(guess, confidence, explanation)`` read from a model's reply text (see the module docstring)."""
    data = _json_object(content)
    if data is not None:
        guess = data.get("guess", data.get("answer", ""))
        confidence = _number(data.get("confidence", data.get("probability")))
        explanation = data.get("explanation", data.get("reason", ""))
        if isinstance(guess, str) and guess.strip():
            return guess.strip(), confidence or 0.0, explanation if isinstance(explanation, str) else ""
    fields: dict[str, str] = {}
    for line in content.splitlines():
        key, sep, value = line.partition(":")
        key = key.strip(" *-#").lower()
        if sep and key in ("answer", "guess", "final answer", "confidence", "explanation", "reason"):
            fields.setdefault(key, value.strip(" *\"'"))
    guess = fields.get("answer") or fields.get("final answer") or fields.get("guess") or ""
    if not guess:
        lines = [line.strip() for line in content.splitlines() if line.strip()]
        guess = lines[0].strip(" *\"'.") if lines and data is None else ""
        return guess[:200], 0.0, ""
    confidence = _number(fields.get("confidence", "")) or 0.0
    return guess[:200], confidence, fields.get("explanation") or fields.get("reason") or ""


def _option(value: Any, key: str, default: Any = None) -> Any:
    if value is None:
        value = os.environ.get(f"TOSSUP_LLM_{key.upper()}")
    return default if value is None or value == "" else value


def _float(value: Any, key: str, default: float | None) -> float | None:
    value = _option(value, key, default)
    if value is None:
        return None
    try:
        number = float(value)
    except (TypeError, ValueError):
        raise ValueError(f"{key} must be a number, got {value!r}") from None
    if not math.isfinite(number) or number < 0:
        raise ValueError(f"{key} must be a finite number ≥ 0, got {value!r}")
    return number


class ChatGuesser(Guesser):
    """Asks a chat-completions endpoint on each prefix; buzzes when its confidence ≥ ``threshold`` after
    at least ``min_tokens`` words.

    url: the API base, e.g. ``http://127.0.0.1:8080/v1`` (``/chat/completions`` is appended unless
    present). model: the model name the server expects. api_key: sent as ``Authorization: Bearer``.
    budget: seconds per prefix (default 3): the client drops a later reply; the HTTP request is abandoned
    ``GRACE`` seconds after it.
    threshold (default 0.8), min_tokens (default 5): the buzz rule. every: ask only when at least this
    many new words arrived since the last question on this tossup (default 1).
    system, tossup_prompt, bonus_prompt: templates; tossup fields ``{text} {seen} {token_count}
    {category}``, bonus fields ``{leadin} {text} {number} {value} {category}``.
    max_tokens (default 128), temperature (default 0): sent with each request.
    price_in, price_out: USD per million prompt / completion tokens (default 0).
    Raises ``ValueError`` for a missing url or model, a bad number, or a template with an unknown field.
    """

    def __init__(
        self,
        *,
        url: str | None = None,
        model: str | None = None,
        api_key: str | None = None,
        budget: float | str | None = None,
        threshold: float | str | None = None,
        min_tokens: int | str | None = None,
        every: int | str | None = None,
        system: str | None = None,
        tossup_prompt: str | None = None,
        bonus_prompt: str | None = None,
        max_tokens: int | str | None = None,
        temperature: float | str | None = None,
        price_in: float | str | None = None,
        price_out: float | str | None = None,
    ) -> None:
        base = _option(url, "url")
        self.model = _option(model, "model")
        if not base or not self.model:
            raise ValueError(
                "ChatGuesser needs url and model (options, or TOSSUP_LLM_URL / TOSSUP_LLM_MODEL)"
            )
        base = str(base).rstrip("/")
        self.endpoint = base if base.endswith("/chat/completions") else f"{base}/chat/completions"
        self.api_key = _option(api_key, "api_key") or os.environ.get("OPENAI_API_KEY", "")
        self.time_budget = _float(budget, "budget", 3.0)
        self.threshold = _float(threshold, "threshold", 0.8) or 0.0
        self.min_tokens = int(_float(min_tokens, "min_tokens", 5) or 0)
        self.every = max(1, int(_float(every, "every", 1) or 1))
        self.max_tokens = int(_float(max_tokens, "max_tokens", 128) or 128)
        self.temperature = _float(temperature, "temperature", 0.0)
        self.price_in = _float(price_in, "price_in", 0.0) or 0.0
        self.price_out = _float(price_out, "price_out", 0.0) or 0.0
        self.system = str(_option(system, "system", DEFAULT_SYSTEM))
        self.tossup_prompt = str(_option(tossup_prompt, "tossup_prompt", DEFAULT_TOSSUP))
        self.bonus_prompt = str(_option(bonus_prompt, "bonus_prompt", DEFAULT_BONUS))
        try:
            self.tossup_prompt.format(text="", seen=0, token_count=0, category="")
            self.bonus_prompt.format(leadin="", text="", number=1, value=10, category="")
        except (KeyError, IndexError, ValueError) as exc:
            raise ValueError(f"prompt template has an unknown or malformed field: {exc}") from None
        self.usage = Usage()
        self._lock = threading.Lock()
        self._asked: dict[Any, int] = {}  # question_id → words seen when last asked
        self._category = ""

    def begin_tossup(self, info: dict[str, Any]) -> None:
        self._category = str(info.get("category") or "")

    def guess_tossup(self, prefix: TossupPrefix) -> Guess:
        if prefix.seen < self.min_tokens:
            return Guess("", 0.0)
        with self._lock:
            last = self._asked.get(prefix.question_id)
            if (
                last is not None
                and prefix.seen - last < self.every
                and prefix.seen < (prefix.token_count or 0)
            ):
                return Guess("", 0.0)
            self._asked[prefix.question_id] = prefix.seen
        guess, confidence, explanation, cost = self.ask(self.tossup_message(prefix))
        buzz = bool(guess) and confidence >= self.threshold
        return Guess(guess, confidence, buzz=buzz, explanation=explanation, cost=cost)

    def tossup_message(self, prefix: TossupPrefix) -> str:
        """The user message asked on ``prefix`` (the ``tossup_prompt`` template filled in)."""
        return self.tossup_prompt.format(
            text=prefix.text,
            seen=prefix.seen,
            token_count=prefix.token_count or "?",
            category=prefix.category or self._category or "any category",
        )

    def guess_bonus(self, part: BonusPart) -> Guess:
        prompt = self.bonus_prompt.format(
            leadin=part.leadin,
            text=part.text,
            number=part.part + 1,
            value=part.value if part.value is not None else "?",
            category=self._category or "any category",
        )
        guess, confidence, explanation, cost = self.ask(prompt)
        return Guess(guess, confidence, explanation=explanation, cost=cost)

    def ask(self, prompt: str) -> tuple[str, float, str, float]:
        """One chat completion: ``(guess, confidence, explanation, cost in USD)``; an unusable reply
        gives ``("", 0.0, "", cost)`` and counts as a failure."""
        try:
            reply = self._post(prompt)
        except ChatError as exc:
            with self._lock:
                self.usage.failures += 1
                self.usage.last_failure = str(exc)
            logger.warning("chat completion failed: %s", exc)
            return "", 0.0, "", 0.0
        usage = reply.get("usage")
        if not isinstance(usage, dict):
            usage = {}
        prompt_tokens = int(_number_or_zero(usage.get("prompt_tokens")))
        completion_tokens = int(_number_or_zero(usage.get("completion_tokens")))
        cost = (prompt_tokens * self.price_in + completion_tokens * self.price_out) / 1e6
        with self._lock:
            self.usage.prompt_tokens += prompt_tokens
            self.usage.completion_tokens += completion_tokens
            self.usage.cost += cost
        try:
            content = reply["choices"][0]["message"]["content"]
        except (KeyError, IndexError, TypeError):
            content = None
        if not isinstance(content, str):
            with self._lock:
                self.usage.failures += 1
                self.usage.last_failure = f"no choices[0].message.content from {self.endpoint}"
            logger.warning("chat completion without choices[0].message.content: %.200s", json.dumps(reply))
            return "", 0.0, "", cost
        guess, confidence, explanation = parse_reply(content)
        return guess, confidence, explanation, cost

    def _post(self, prompt: str) -> dict[str, Any]:
        body: dict[str, Any] = {
            "model": self.model,
            "messages": [{"role": "system", "content": self.system}, {"role": "user", "content": prompt}],
            "max_tokens": self.max_tokens,
        }
        if self.temperature is not None:
            body["temperature"] = self.temperature
        headers = {"Content-Type": "application/json"}
        if self.api_key:
            headers["Authorization"] = f"Bearer {self.api_key}"
        request = urllib.request.Request(self.endpoint, json.dumps(body).encode(), headers, method="POST")
        with self._lock:
            self.usage.requests += 1
        try:
            timeout = None if self.time_budget is None else self.time_budget + GRACE
            with urllib.request.urlopen(request, timeout=timeout) as response:
                raw = response.read()
        except urllib.error.HTTPError as exc:
            raise ChatError(f"HTTP {exc.code} from {self.endpoint}: {exc.read()[:200]!r}") from exc
        except (OSError, TimeoutError) as exc:  # URLError, refused, timed out
            raise ChatError(f"{self.endpoint}: {exc}") from exc
        try:
            reply = json.loads(raw)
        except ValueError as exc:
            raise ChatError(f"not JSON from {self.endpoint}: {raw[:200]!r}") from exc
        if not isinstance(reply, dict):
            raise ChatError(f"not a JSON object from {self.endpoint}: {raw[:200]!r}")
        return reply


def _number_or_zero(value: Any) -> float:
    return float(value) if isinstance(value, int | float) and math.isfinite(value) and value >= 0 else 0.0
