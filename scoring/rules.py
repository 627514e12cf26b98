"""Scoring rules as data: presets (``scoring/presets/<name>.json``) and the point functions.

Pure module (no Django). The match engine takes every point value from here, so a preset is
the single source of truth for tossup and bonus points and for the bot handicaps
(QUIZBOWL.md, "Points" and "Fairness between humans and bots").
"""

from __future__ import annotations

import json
import math
from dataclasses import asdict, dataclass, field, fields
from pathlib import Path
from typing import Any

PRESETS_DIR = Path(__file__).resolve().parent / "presets"


@dataclass(frozen=True)
class Preset:
    """A rule preset.

    Points: ``superpower``/``power`` (None = the preset has no such tier), ``ten`` for a plain
    correct tossup, ``neg`` (negative int) for a wrong interrupt; ``neg_after_neg`` False means a
    second team's wrong interrupt after a neg scores 0. Bonuses: ``bonus_parts`` parts of
    ``bonus_part_value``. ``bouncebacks`` is stored but not played yet (the engine ignores it).
    Bot handicaps: ``bot_delay`` seconds after a word's reveal before a bot's buzz on it counts
    (None = the match config decides), ``min_token_for_bots`` (a bot may not buzz before this
    0-based token), ``buzz_period`` (a bot may buzz only on tokens that are multiples of it;
    1 = every token), ``deflation`` weight class (light|mid|heavy) → factor on a bot's positive
    points (qb-tournament-runner's scoring deflation; missing class = 1.0).
    """

    name: str
    description: str = ""
    power: int | None = None
    superpower: int | None = None
    ten: int = 10
    neg: int = -5
    neg_after_neg: bool = False
    bonus_part_value: int = 10
    bonus_parts: int = 3
    bouncebacks: bool = False
    bot_delay: float | None = None
    min_token_for_bots: int = 0
    buzz_period: int = 1
    deflation: dict[str, float] = field(default_factory=dict)

    def to_dict(self) -> dict[str, Any]:
        """JSON-ready dict of every field (``deflation`` copied)."""
        return asdict(self)

    @classmethod
    def from_dict(cls, d: dict[str, Any]) -> Preset:
        """Build from :meth:`to_dict` output; raises ValueError on unknown keys, a missing name,
        ``buzz_period`` < 1 or a negative ``min_token_for_bots``/``bot_delay``."""
        known = {f.name for f in fields(cls)}
        unknown = set(d) - known
        if unknown:
            raise ValueError(f"unknown preset fields: {sorted(unknown)}")
        if "name" not in d:
            raise ValueError("preset needs a name")
        preset = cls(**{**d, "deflation": {str(k): float(v) for k, v in d.get("deflation", {}).items()}})
        if preset.buzz_period < 1:
            raise ValueError("buzz_period must be >= 1")
        if preset.min_token_for_bots < 0 or (preset.bot_delay is not None and preset.bot_delay < 0):
            raise ValueError("bot handicaps must be non-negative")
        return preset


def known_presets() -> list[str]:
    """Names of the presets shipped in ``scoring/presets/`` (sorted)."""
    return sorted(p.stem for p in PRESETS_DIR.glob("*.json"))


def load_preset(name: str) -> Preset:
    """Load ``scoring/presets/<name>.json``; raises ValueError naming the known presets if absent."""
    path = PRESETS_DIR / f"{name}.json"
    if not name.isidentifier() or not path.is_file():
        raise ValueError(f"unknown preset {name!r}; known presets: {', '.join(known_presets())}")
    return Preset.from_dict(json.loads(path.read_text(encoding="utf-8")))


def deflate(preset: Preset, points: int, weight_class: str | None) -> int:
    """Apply the bot deflation factor of ``weight_class`` to positive ``points``.

    ``weight_class`` None means a human (no change). Negative points are never deflated: a
    handicap must not soften a bot's penalty. Rounds half away from zero (13.5 → 14).
    """
    if weight_class is None or points <= 0:
        return points
    factor = preset.deflation.get(weight_class, 1.0)
    return math.floor(points * factor + 0.5)


def tossup_points(
    preset: Preset,
    correct: bool,
    token_index: int,
    token_count: int,
    power_index: int | None,
    superpower_index: int | None,
    fully_read: bool,
    prior_neg: bool,
    weight_class: str | None = None,
) -> int:
    """Points for one ruled tossup buzz.

    ``token_index``: 0-based last token the buzzer had seen; ``power_index``/``superpower_index``:
    number of words before the ``(*)``/``(+)`` mark (None = unmarked), so ``token_index <
    power_index`` is a power. Correct: superpower, else power, else ten (tiers the preset lacks
    are skipped). Wrong: ``neg`` only for an interrupt (``not fully_read`` and ``token_index <
    token_count - 1``) and, when ``prior_neg`` (another team already negged this tossup), only if
    ``preset.neg_after_neg``; otherwise 0. ``weight_class``: the bot's class for
    :func:`deflate` (None = human). QUIZBOWL.md "Points".
    """
    if correct:
        if preset.superpower is not None and superpower_index is not None and token_index < superpower_index:
            points = preset.superpower
        elif preset.power is not None and power_index is not None and token_index < power_index:
            points = preset.power
        else:
            points = preset.ten
        return deflate(preset, points, weight_class)
    interrupt = not fully_read and token_index < token_count - 1
    if not interrupt or (prior_neg and not preset.neg_after_neg):
        return 0
    return preset.neg


def bonus_points(
    preset: Preset, correct: bool, part_value: int | None = None, weight_class: str | None = None
) -> int:
    """Points for one bonus part: ``part_value`` (the set's value; None = the preset's
    ``bonus_part_value``) if correct, else 0; deflated for a bot answerer (``weight_class``)."""
    if not correct:
        return 0
    value = preset.bonus_part_value if part_value is None else part_value
    return deflate(preset, value, weight_class)
