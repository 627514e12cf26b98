"""The built-in bots by name, loaded from the files their training left (never trained here), as
``tossup_bot`` guessers: for the distractor probe (``manage.py probe_bot``, ``POST /workshop/api/probe``)
and anything else that asks for "every built-in bot".

| name | model | files (``competition.botlaunch.model_paths``, under ``BOT_CACHE_DIR``) | buzz |
|---|---|---|---|
| ``ensemble`` | ``buzzer.bots.ensemble`` | ``neural-<data>.pt`` and ``ensemble-<data>.joblib`` (``manage.py train_guesser``) | its learned threshold |
| ``tfidf`` | the reference ``TfidfGuesser`` | ``tfidf-<data>.joblib`` (the dashboard's; ``runbot``/``tools.bench_bots`` train it) | its learned threshold |
| ``neural`` | ``NeuralGuesser`` alone | ``neural-<data>.pt`` | softmax ≥ 0.8 after 5 words (as ``tools.bench_bots``) |
| ``wiki`` | ``buzzer.bots.wiki`` | its package (the model, about 10 s to fit, cached) | its calibrated threshold |

The web process reaches this module through the SDK's loader (``tossup_bot.load_guesser(
"buzzer.bots.builtin:cached", {"bot": name})``), as ``runbot --guesser`` does, so ``frontend`` keeps
to its side of the layers.
"""

from __future__ import annotations

import threading
from pathlib import Path

from django.conf import settings
from tossup_bot import Guesser

from buzzer.bots.adapter import ModelGuesser
from competition import botlaunch

BUILT_IN = ("ensemble", "tfidf", "neural", "wiki")
NEURAL_THRESHOLD, NEURAL_MIN_TOKENS = 0.8, 5  # the neural guesser alone has no learned buzzer


class NotTrained(LookupError):
    """A built-in bot whose trained files are not there (the message says how to make them), or an
    unknown name."""


def tfidf_path() -> Path:
    """The reference TF-IDF bot's cached model, named as the dashboard's (``botlaunch``)."""
    neural = botlaunch.model_paths(None, None, botlaunch.TRAIN_MAX_YEAR).neural
    return neural.parent / f"tfidf-{neural.stem.removeprefix('neural-')}.joblib"


def missing(bot: str) -> str:
    """Why ``bot`` cannot be loaded now ("" when it can)."""
    if bot not in BUILT_IN:
        return f"unknown bot {bot!r}: one of {', '.join(BUILT_IN)}"
    if bot == "wiki":
        return ""
    try:
        paths = botlaunch.model_paths(None, None, botlaunch.TRAIN_MAX_YEAR)
    except FileNotFoundError as exc:
        return str(exc)
    if bot == "tfidf":
        path = tfidf_path()
        return (
            ""
            if path.is_file()
            else f"no trained TF-IDF model at {path} (python -m tools.bench_bots trains it)"
        )
    if not paths.neural.is_file():
        return (
            f"no neural checkpoint at {paths.neural} (manage.py train_guesser, about 16 min on 2 idle cores)"
        )
    if bot == "ensemble" and not paths.ensemble.is_file():
        return f"no fitted ensemble at {paths.ensemble} (manage.py train_guesser fits it)"
    return ""


def load(bot: str) -> Guesser:
    """A fresh guesser for ``bot`` (:data:`BUILT_IN`). Raises NotTrained (see :func:`missing`)."""
    reason = missing(bot)
    if reason:
        raise NotTrained(reason)
    if bot == "wiki":
        from buzzer.bots.wiki import WikiGuesser

        return WikiGuesser(cache_dir=settings.BOT_CACHE_DIR)
    if bot == "tfidf":
        from buzzer.bots.tfidf import TfidfGuesser

        model = TfidfGuesser.load(tfidf_path())
        return ModelGuesser(model, model.threshold, model.min_tokens)
    from buzzer.bots.neural import NeuralGuesser  # torch: only for the two bots that need it

    paths = botlaunch.model_paths(None, None, botlaunch.TRAIN_MAX_YEAR)
    neural = NeuralGuesser.load(paths.neural)
    if bot == "neural":
        return ModelGuesser(neural, NEURAL_THRESHOLD, NEURAL_MIN_TOKENS)
    from buzzer.bots.ensemble import EnsembleGuesser

    combined = EnsembleGuesser.load(paths.ensemble, neural)
    return ModelGuesser(combined, combined.threshold, combined.min_tokens)


_loaded: dict[str, Guesser] = {}
_lock = threading.Lock()


def cached(bot: str = "tfidf") -> Guesser:
    """:func:`load` once per process (the models are read-only once loaded). Raises NotTrained."""
    with _lock:
        if bot not in _loaded:
            _loaded[bot] = load(bot)
        return _loaded[bot]
