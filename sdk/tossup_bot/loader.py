"""Load a guesser named on a command line: ``module:Name`` (an importable module) or
``path/to/file.py:Name`` (a file), where ``Name`` is a :class:`~tossup_bot.Guesser` subclass or any
callable returning a guesser (called with the ``--option KEY=VALUE`` pairs as string keyword arguments),
or a ready guesser object (no options then). ``tossup-bot --guesser`` and Tossup's ``manage.py runbot
--guesser`` both use :func:`load_guesser`.
"""

from __future__ import annotations

import importlib
import importlib.util
import sys
from collections.abc import Iterable, Mapping
from pathlib import Path
from typing import Any

from tossup_bot.guesser import Guesser


class GuesserLoadError(ValueError):
    """The guesser spec or its options cannot give a guesser; the message says why."""


def parse_options(pairs: Iterable[str]) -> dict[str, str]:
    """``["threshold=0.8", "model=x"]`` → ``{"threshold": "0.8", "model": "x"}``; dashes in keys become
    underscores. Raises :class:`GuesserLoadError` for an item without ``=`` or with an empty key."""
    options: dict[str, str] = {}
    for pair in pairs:
        key, sep, value = pair.partition("=")
        key = key.strip().replace("-", "_")
        if not sep or not key:
            raise GuesserLoadError(f"option {pair!r} is not KEY=VALUE")
        options[key] = value
    return options


def _module(where: str) -> Any:
    if where.endswith(".py") or "/" in where or "\\" in where:
        path = Path(where).expanduser().resolve()
        if not path.is_file():
            raise GuesserLoadError(f"no such file: {path}")
        name = f"tossup_bot_guesser_{path.stem}"
        spec = importlib.util.spec_from_file_location(name, path)
        if spec is None or spec.loader is None:
            raise GuesserLoadError(f"cannot import {path}")
        module = importlib.util.module_from_spec(spec)
        sys.modules[name] = module  # dataclasses and pickling look their module up here
        try:
            spec.loader.exec_module(module)
        except Exception as exc:
            del sys.modules[name]
            raise GuesserLoadError(f"importing {path} failed: {exc!r}") from exc
        return module
    try:
        return importlib.import_module(where)
    except ImportError as exc:
        raise GuesserLoadError(f"cannot import module {where!r}: {exc}") from exc


def load_guesser(spec: str, options: Mapping[str, str] | None = None) -> Guesser:
    """The guesser ``spec`` names (``module:Name`` or ``file.py:Name``; ``Name`` may be dotted), built
    with ``options``. Raises :class:`GuesserLoadError` when the spec is malformed, the module or name is
    missing, the constructor refuses the options (its message is kept), or the result has no
    ``guess_tossup``."""
    where, sep, name = spec.rpartition(":")
    if not sep or not where or not name:
        raise GuesserLoadError(f"guesser {spec!r} is not module:Name or path/to/file.py:Name")
    target: Any = _module(where)
    for part in name.split("."):
        try:
            target = getattr(target, part)
        except AttributeError:
            raise GuesserLoadError(f"{where} has no {name!r}") from None
    options = dict(options or {})
    if isinstance(target, type) or (callable(target) and not hasattr(target, "guess_tossup")):
        try:
            guesser = target(**options)
        except (TypeError, ValueError, OSError) as exc:
            raise GuesserLoadError(f"{spec} with options {sorted(options)}: {exc}") from exc
    elif options:
        raise GuesserLoadError(f"{spec} is a guesser object: it takes no options")
    else:
        guesser = target
    if not callable(getattr(guesser, "guess_tossup", None)):
        raise GuesserLoadError(f"{spec} gave a {type(guesser).__name__}, which has no guess_tossup method")
    for attribute in ("begin_tossup", "guess_bonus", "time_budget"):
        if not hasattr(guesser, attribute):  # the client uses all of them
            raise GuesserLoadError(f"{spec}: {type(guesser).__name__} lacks {attribute}; subclass Guesser")
    return guesser  # type: ignore[no-any-return]
