"""Progress bars for long management commands (imports, bot training, fits, simulations): tqdm on
stderr, shown only when stderr is a terminal and the command was not given ``--no-progress``, so
what a command prints on stdout (counts, ``--json``) is the same with or without them, and tests,
pipes and logs never see a bar."""

from __future__ import annotations

import sys
from collections.abc import Callable, Iterable, Iterator
from contextlib import contextmanager
from typing import Any, TypeVar

from django.core.management.base import CommandParser
from tqdm import tqdm

T = TypeVar("T")


def add_progress_flag(parser: CommandParser) -> None:
    """``--no-progress``: no bars even on a terminal."""
    parser.add_argument(
        "--no-progress", action="store_true", help="no progress bars on stderr (shown only on a terminal)"
    )


def enabled(options: dict[str, Any]) -> bool:
    """True if bars are shown: stderr is a terminal and ``--no-progress`` was not given."""
    return not options.get("no_progress") and sys.stderr.isatty()


def bar(options: dict[str, Any], **kwargs: Any) -> tqdm[Any]:
    """A tqdm bar on stderr (``kwargs`` as tqdm's: ``total``, ``desc``, ``unit``…), disabled (a no-op
    that still counts) unless ``enabled(options)``. Use as a context manager so it closes."""
    return tqdm(file=sys.stderr, disable=not enabled(options), dynamic_ncols=True, **kwargs)


def wrapper(options: dict[str, Any], **kwargs: Any) -> Callable[[Iterable[T]], Iterable[T]]:
    """For library hooks that take "something to wrap an iterable with" (the bots' training): each
    call wraps one loop in its own bar (``len()`` of the iterable is its total); the identity when
    bars are off."""
    if not enabled(options):
        return lambda items: items
    return lambda items: tqdm(items, file=sys.stderr, dynamic_ncols=True, **kwargs)


@contextmanager
def fraction_bar(options: dict[str, Any], desc: str) -> Iterator[Callable[[float], None]]:
    """A 0–100 % bar fed with fractions done (0–1), e.g. an IRT fit's ``progress`` callback."""
    with bar(options, total=100, desc=desc, bar_format="{desc}: {percentage:3.0f}%|{bar}| [{elapsed}]") as b:

        def update(fraction: float) -> None:
            b.update(max(0, round(100 * min(fraction, 1.0)) - b.n))

        yield update
