"""The workshop's bots in this server (issue 32): which built-in bots the writing workshop asks, loaded
once per process in the background, and :func:`predict`, what the editor side keeps at submission.

The bots are the ones the server runs (``competition.botlaunch``), from the files they left:

- ``tfidf``: the reference TF-IDF bot's model cache (trained the first time a TF-IDF bot starts);
- ``ensemble`` and ``neural``: ``manage.py train_guesser``'s neural checkpoint with its fitted ensemble;
- ``wiki``: the Wikipedia bot (fitted in about 10 s from its installed package when not cached).

A bot whose files are missing is listed with how to get it; nothing is trained in a request.
``settings.WORKSHOP_BOTS`` (comma-separated ``TfidfGuesser`` files, each optionally
``PATH@THRESHOLD``: buzz at that confidence after 3 words) replaces them all (tests).

LLM endpoints (``TOSSUP_LLM_ENDPOINTS``, ``competition.botlaunch.read_endpoints``) are asked only when
the organiser enabled one for writing (``"workshop": true``), and then on at most its
``workshop_prefixes`` prefixes per analysis (``buzzer.bots.workshop.LlmBot``), not every word as the
built-in bots: :func:`llm_bots` builds them from the file on each request (an edit counts at once),
each with its key from the server's environment. The page asks them in a request of their own, after
the built-in bots' results (``buzzer.workshop_views``)."""

from __future__ import annotations

import os
import threading
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from django.conf import settings

from buzzer.bots import workshop

_lock = threading.Lock()
_state: dict[str, Any] = {"bots": None, "problems": [], "thread": None}


def _tfidf_cache() -> Path | None:
    from competition import botlaunch

    known = botlaunch.known_guessers().get("tfidf")
    if known is None:
        return None
    args = list(known.runbot_args)
    return Path(args[args.index("--model-cache") + 1])


def load_bots() -> tuple[list[workshop.WorkshopBot], list[str]]:
    """``(bots, problems)``: the adapters of the built-in bots this server has, and one line per bot
    it lacks saying why. Slow (model files of 40–200 MB): call it off the request path."""
    from buzzer.bots.tfidf import TfidfGuesser

    bots: list[workshop.WorkshopBot] = []
    problems: list[str] = []
    if settings.WORKSHOP_BOTS:
        for i, entry in enumerate(p.strip() for p in settings.WORKSHOP_BOTS.split(",") if p.strip()):
            path, _, threshold = entry.partition("@")
            bot = workshop.TfidfBot(TfidfGuesser.load(path))
            if threshold:
                bot.threshold, bot.min_tokens = float(threshold), 3
            if i:
                bot.name, bot.label = f"tfidf{i + 1}", f"TF-IDF bot {i + 1}"
            bots.append(bot)
        return bots, problems
    from competition import botlaunch

    try:
        paths = botlaunch.model_paths(None, None, botlaunch.TRAIN_MAX_YEAR)
    except FileNotFoundError as exc:
        paths = None
        problems.append(f"Ensemble and neural bots: {exc}")
    if paths is not None and paths.neural.is_file() and paths.ensemble.is_file():
        from buzzer.bots.ensemble import EnsembleGuesser
        from buzzer.bots.neural import NeuralGuesser

        try:
            neural = NeuralGuesser.load(paths.neural)
            bots.append(workshop.EnsembleBot(EnsembleGuesser.load(paths.ensemble, neural)))
            bots.append(workshop.NeuralBot(neural))
        except ValueError as exc:
            problems.append(f"Ensemble and neural bots: {exc}")
    elif paths is not None:
        problems.append(
            "Ensemble and neural bots: not trained on this server (`./run manage train_guesser`, then start "
            "the ensemble bot once on a match's bot seat to fit it)"
        )
    cache = _tfidf_cache()
    if cache is not None and cache.is_file():
        try:
            bots.append(workshop.TfidfBot(TfidfGuesser.load(cache)))
        except ValueError as exc:
            problems.append(f"TF-IDF bot: {exc}")
    else:
        problems.append(
            "TF-IDF bot: not trained yet (start the TF-IDF bot once on a match's bot seat: its first start trains it)"
        )
    try:
        from buzzer.bots import wiki

        bots.append(
            workshop.WikiBot(
                wiki.load_model(settings.BOT_CACHE_DIR),
                wiki.RECOMMENDED_THRESHOLD,
                wiki.RECOMMENDED_MIN_TOKENS,
            )
        )
    except ValueError as exc:  # FormatError: the package is not installed
        problems.append(f"Wikipedia bot: {exc}")
    return bots, problems


def llm_bots() -> tuple[list[workshop.LlmBot], list[str]]:
    """``(bots, problems)``: an :class:`~buzzer.bots.workshop.LlmBot` per LLM endpoint enabled for
    writing, with its API key from the server environment variable its ``key_env`` names (none when
    it names none: never the server's ``OPENAI_API_KEY``), and the endpoints file's problems (one line
    each; a line when it enables none for writing). Cheap: reads the file, asks nothing."""
    if not settings.BOT_LLM_ENDPOINTS:
        return [], []
    from tossup_bot.llm import ChatGuesser

    from competition import botlaunch

    endpoints, problems = botlaunch.read_endpoints(settings.BOT_LLM_ENDPOINTS)
    bots = []
    for known in endpoints:
        if not known.workshop_prefixes:
            continue
        try:
            guesser = ChatGuesser(**dict(known.chat_options))
        except ValueError as exc:  # e.g. an option ChatGuesser refuses
            problems.append(f"LLM endpoint {known.label}: {exc}")
            continue
        guesser.api_key = os.environ.get(known.key_env, "") if known.key_env else ""
        bots.append(workshop.LlmBot(guesser, known.key, known.label, known.workshop_prefixes, known.cost))
    if endpoints and not bots:
        problems.append(
            'LLM endpoints: none is enabled for writing (the organiser adds "workshop": true to an endpoint '
            "in the TOSSUP_LLM_ENDPOINTS file)"
        )
    return bots, problems


def _load() -> None:
    try:
        bots, problems = load_bots()
    except Exception as exc:  # a broken model file must not leave the page waiting forever
        bots, problems = [], [f"the bots could not be loaded: {exc}"]
    with _lock:
        if _state["bots"] is None:  # bots set meanwhile (a test's, or a reload's) are kept
            _state["bots"], _state["problems"] = bots, problems


def bots_now(wait: bool = False) -> tuple[list[workshop.WorkshopBot], list[str]] | None:
    """The loaded ``(bots, problems)``, or None while they load (the first call starts loading them in
    a thread); ``wait``: load now and return them."""
    with _lock:
        if _state["bots"] is not None:
            return _state["bots"], _state["problems"]
        thread = _state["thread"]
        if thread is None:
            thread = _state["thread"] = threading.Thread(target=_load, name="workshop-bots", daemon=True)
            thread.start()
    if not wait:
        return None
    thread.join()
    return _state["bots"], _state["problems"]


def predict(
    text: str, answer_line: str, category: str = "", built_in: Sequence[workshop.WorkshopBot] | None = None
) -> dict[str, dict[str, Any]]:
    """Each of this server's bots' predicted buzz on a tossup, for a saved version and the editor side
    at submission: ``{bot name: {"buzz_index": int | None, "answer": str, "correct": bool}}``
    (``buzz_index``: the 0-based word at which it buzzes, None when it never does; ``answer``: its
    buzz answer, else its final top guess; ``correct``: the judge accepts it). The built-in bots and
    the LLM endpoints enabled for writing (:func:`llm_bots`, asked as in an analysis: a few prefixes,
    at their cost); an endpoint with a failed request is left out rather than recorded as not
    buzzing. ``built_in``: the loaded built-in bots (None: load them, slow the first time). Raises
    ``buzzer.bots.workshop.WorkshopError`` for an unusable answer line or an overlong text."""
    if built_in is None:
        loaded = bots_now(wait=True)
        assert loaded is not None
        built_in = loaded[0]
    out = workshop.predict(built_in, text, answer_line, category)
    llms = llm_bots()[0]
    if llms:
        asked = workshop.predict(llms, text, answer_line, category)
        out.update((bot.name, asked[bot.name]) for bot in llms if not bot.report()["failures"])
    return out
