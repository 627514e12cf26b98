"""This process's cache of match rows, written through by the live path's writers.

Two kinds of entry, both per match:

- the parsed immutable parts of a row, ``Match.spec`` and ``Match.records`` (a few KB to ~100 KB
  each), under their part keys (``Match.spec_key``/``records_key``, replaced by every write of
  the part: :func:`new_part_key`), so a reader parses them once per process;
- the row as this process last wrote or read it (:class:`Known`: seq, live state, part keys),
  which the words' fast path (``competition.live.ticks``) builds its next write on.

Writers (``competition.live.store``, ``.ticks``, ``competition.interchange``) put entries here;
readers (``competition.selectors``) only look them up (:func:`spec`, :func:`records`,
:func:`cached_parts`). Thread-safe: a process's database threads share it.
"""

from __future__ import annotations

import secrets
import threading
from collections import OrderedDict
from collections.abc import Callable
from dataclasses import dataclass
from typing import TypeVar

from django.db import connection

from competition import game

# Matches whose parsed parts and row a process keeps; the least recently used beyond it are dropped.
CACHE_SIZE = 512
_T = TypeVar("_T")
_specs: OrderedDict[tuple[int, str], game.MatchSpec] = OrderedDict()
_records: OrderedDict[tuple[int, str], game.Records] = OrderedDict()
_lock = threading.Lock()


def _peek(cache: OrderedDict[tuple[int, str], _T], key: tuple[int, str]) -> _T | None:
    """The cached value under ``key`` (now the most recently used), or None: no database read."""
    with _lock:
        hit = cache.get(key)
        if hit is not None:
            cache.move_to_end(key)
        return hit


def _put(cache: OrderedDict[tuple[int, str], _T], key: tuple[int, str], value: _T) -> None:
    """Put a parsed part just written (or read) in its cache, dropping the least recently used."""
    with _lock:
        cache[key] = value
        cache.move_to_end(key)
        while len(cache) > CACHE_SIZE:
            cache.popitem(last=False)


def _cached(cache: OrderedDict[tuple[int, str], _T], key: tuple[int, str], load: Callable[[], _T]) -> _T:
    hit = _peek(cache, key)
    if hit is not None:
        return hit
    value = load()  # outside the lock: a database read
    _put(cache, key, value)
    return value


def spec(match_id: int, spec_key: str, load: Callable[[], game.MatchSpec]) -> game.MatchSpec:
    """The spec of match ``match_id`` stored under ``spec_key``: cached, else ``load()`` (a
    database read of the row's spec), kept for the next reader."""
    return _cached(_specs, (match_id, spec_key), load)


def records(match_id: int, records_key: str, load: Callable[[], game.Records]) -> game.Records:
    """The ruling record of match ``match_id`` stored under ``records_key`` (as :func:`spec`)."""
    return _cached(_records, (match_id, records_key), load)


def cached_parts(
    match_id: int, spec_key: str, records_key: str
) -> tuple[game.MatchSpec, game.Records] | None:
    """The spec and ruling record this process has cached under these keys, or None when either
    is not (no database read)."""
    found_spec, found_records = _peek(_specs, (match_id, spec_key)), _peek(_records, (match_id, records_key))
    return None if found_spec is None or found_records is None else (found_spec, found_records)


def remember_spec(match_id: int, spec_key: str, value: game.MatchSpec) -> None:
    """Cache a spec just written (or read) under ``spec_key`` (the writer's process needs no read back)."""
    _put(_specs, (match_id, spec_key), value)


def remember_records(match_id: int, records_key: str, value: game.Records) -> None:
    """Cache a ruling record just written (or read) under ``records_key``."""
    _put(_records, (match_id, records_key), value)


def new_part_key() -> str:
    """A fresh ``Match.spec_key`` / ``Match.records_key``: random, so a recycled match id (a
    test database flushed, a row deleted) never meets a stale cache entry."""
    return secrets.token_hex(8)


# --- the row each match was last written or read as (the words' fast path) --------------------


@dataclass(frozen=True)
class Known:
    """What this process last stored or read of one match row."""

    seq: int
    live: str  # Match.state as stored, serialised
    state: game.MatchState
    spec_key: str
    records_key: str


_known: OrderedDict[int, Known] = OrderedDict()  # least recently written first


def usable() -> bool:
    """Whether this process's database takes the words' one-statement write (PostgreSQL), so
    that rows are worth remembering."""
    return connection.vendor == "postgresql"


def remember(match_id: int, known: Known) -> None:
    """Record ``known`` unless a newer seq of the match is recorded already; at most
    :data:`CACHE_SIZE` matches are kept (the least recently written is dropped)."""
    with _lock:
        old = _known.get(match_id)
        if old is None or old.seq <= known.seq:
            _known[match_id] = known
            _known.move_to_end(match_id)
            while len(_known) > CACHE_SIZE:
                _known.popitem(last=False)


def recall(match_id: int) -> Known | None:
    """The row of ``match_id`` this process last wrote or read, or None."""
    return _known.get(match_id)


def forget(match_id: int, known: Known) -> None:
    """Drop ``known`` (the row moved, or a write's outcome is unknown) unless a newer one replaced it."""
    with _lock:
        if _known.get(match_id) is known:
            del _known[match_id]
