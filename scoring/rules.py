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

    Consulting the AI on bonuses (QANTA 2026, HYBRID.md): ``bonus_decisions`` True means the
    controlling team's captain chooses, on each bonus part, ``own`` answer, ``consult`` (the
    team's AI answers) or ``abstain`` (``abstain_points``). A correct consulted part scores its
    value minus the consult deflation, never below 0 (a wrong one scores 0, like any wrong
    part): ``consult_deflation_mode`` "dynamic" subtracts ``consult_deflation[weight_class]``
    of the consulted bot (missing class = 0), "static" subtracts ``consult_static_deflation``.
    The shape of a preset file is ``scoring/preset.schema.json``.

    The match's format (``competition.game.lineups`` / ``periods``; docs/OPERATIONS.md):
    ``players_per_team`` active players at most (None: no limit; a seat beyond it joins the
    bench); ``substitutions``: where a lineup may change once the match runs, any of
    ``SUBSTITUTION_POINTS`` (between_tossups: any break; halftime; before_overtime; timeout: a
    break in which a timeout was called); ``timeouts`` per team per ``timeouts_per`` (game|half)
    of ``timeout_seconds``; ``tossups_per_half`` (None: no halves, every tossup of the packet is
    read and there is no overtime); a tie after the regulation's ``2 × tossups_per_half`` goes to
    overtime on the packet's next tossups: ``overtime_tossups`` are read (0: straight to sudden
    death), then the match ends after the first tossup that leaves the lead untied;
    ``overtime_bonuses`` False: no bonus in overtime (negs count as usual).
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
    bonus_decisions: bool = False
    consult_deflation_mode: str = "dynamic"
    consult_deflation: dict[str, int] = field(default_factory=dict)
    consult_static_deflation: int = 0
    abstain_points: int = 0
    # -- lineups: match format (NAME: lineups) --
    players_per_team: int | None = None
    substitutions: tuple[str, ...] = ("between_tossups",)
    timeouts: int = 0
    timeouts_per: str = "game"
    timeout_seconds: float = 60.0
    tossups_per_half: int | None = None
    overtime_tossups: int = 0
    overtime_bonuses: bool = False

    def to_dict(self) -> dict[str, Any]:
        """JSON-ready dict of every field (``deflation`` copied)."""
        return {**asdict(self), "substitutions": list(self.substitutions)}

    @classmethod
    def from_dict(cls, d: dict[str, Any]) -> Preset:
        """Build from :meth:`to_dict` output (a preset file). Raises ValueError naming the field
        for: unknown keys, a missing name, a value of the wrong type, ``buzz_period`` < 1, a
        negative ``min_token_for_bots``/``bot_delay``/consult deflation, a deflation factor
        outside [0, 1], a ``consult_deflation_mode`` other than dynamic|static, or a weight class
        other than light|mid|heavy (the same rules as ``scoring/preset.schema.json``)."""
        if not isinstance(d, dict):
            raise ValueError(f"a preset is a JSON object, got {type(d).__name__}")
        known = {f.name for f in fields(cls)}
        unknown = set(d) - known
        if unknown:
            raise ValueError(f"unknown preset fields: {sorted(unknown)}")
        if "name" not in d:
            raise ValueError("preset needs a name")
        for name, kinds in _FIELD_TYPES.items():
            if name in d and not _is(d[name], kinds):
                raise ValueError(f"preset field {name!r} must be {kinds}, got {d[name]!r}")
        for name, low in (("deflation", 0.0), ("consult_deflation", 0)):
            for k, v in d.get(name, {}).items():
                if k not in WEIGHT_CLASSES:
                    raise ValueError(f"{name}: weight class must be one of {WEIGHT_CLASSES}, got {k!r}")
                if not _is(v, "number" if name == "deflation" else "integer") or v < low:
                    raise ValueError(f"{name}[{k!r}] must be a number >= {low}, got {v!r}")
                if name == "deflation" and v > 1:
                    raise ValueError(f"deflation[{k!r}] is a factor in [0, 1], got {v!r}")
        preset = cls(
            **{
                **d,
                "deflation": {str(k): float(v) for k, v in d.get("deflation", {}).items()},
                "consult_deflation": dict(d.get("consult_deflation", {})),
                "substitutions": tuple(d.get("substitutions", ("between_tossups",))),
            }
        )
        if preset.buzz_period < 1:
            raise ValueError("buzz_period must be >= 1")
        if preset.min_token_for_bots < 0 or (preset.bot_delay is not None and preset.bot_delay < 0):
            raise ValueError("bot handicaps must be non-negative")
        if preset.consult_deflation_mode not in CONSULT_DEFLATION_MODES:
            raise ValueError(f"consult_deflation_mode must be one of {CONSULT_DEFLATION_MODES}")
        if preset.consult_static_deflation < 0:
            raise ValueError("consult_static_deflation must be >= 0")
        _check_format(preset)
        return preset


def _check_format(preset: Preset) -> None:
    """The match-format fields' ranges (as in ``scoring/preset.schema.json``)."""
    if any(p not in SUBSTITUTION_POINTS for p in preset.substitutions):
        raise ValueError(
            f"substitutions: each one of {SUBSTITUTION_POINTS}, got {list(preset.substitutions)}"
        )
    if preset.timeouts_per not in TIMEOUT_PERIODS:
        raise ValueError(f"timeouts_per must be one of {TIMEOUT_PERIODS}")
    for name in ("players_per_team", "tossups_per_half"):
        value = getattr(preset, name)
        if value is not None and value < 1:
            raise ValueError(f"{name} must be >= 1 or null")
    if preset.timeouts < 0 or preset.overtime_tossups < 0 or preset.timeout_seconds <= 0:
        raise ValueError("timeouts and overtime_tossups must be >= 0, timeout_seconds > 0")


WEIGHT_CLASSES = ("light", "mid", "heavy")
SUBSTITUTION_POINTS = ("between_tossups", "halftime", "before_overtime", "timeout")
TIMEOUT_PERIODS = ("game", "half")
CONSULT_DEFLATION_MODES = ("dynamic", "static")
SCHEMA_PATH = Path(__file__).resolve().parent / "preset.schema.json"
# JSON types of the scalar fields (as in preset.schema.json); "integer?" / "number?" allow null.
_FIELD_TYPES = {
    "name": "string",
    "description": "string",
    "power": "integer?",
    "superpower": "integer?",
    "ten": "integer",
    "neg": "integer",
    "neg_after_neg": "boolean",
    "bonus_part_value": "integer",
    "bonus_parts": "integer",
    "bouncebacks": "boolean",
    "bot_delay": "number?",
    "min_token_for_bots": "integer",
    "buzz_period": "integer",
    "deflation": "object",
    "bonus_decisions": "boolean",
    "consult_deflation_mode": "string",
    "consult_deflation": "object",
    "consult_static_deflation": "integer",
    "abstain_points": "integer",
    "players_per_team": "integer?",
    "substitutions": "array",
    "timeouts": "integer",
    "timeouts_per": "string",
    "timeout_seconds": "number",
    "tossups_per_half": "integer?",
    "overtime_tossups": "integer",
    "overtime_bonuses": "boolean",
}


def _is(value: Any, kind: str) -> bool:
    """Whether ``value`` (parsed JSON) has the JSON type ``kind`` (a trailing "?" allows null)."""
    if kind.endswith("?"):
        return value is None or _is(value, kind[:-1])
    if isinstance(value, bool):
        return kind == "boolean"
    return {
        "string": isinstance(value, str),
        "integer": isinstance(value, int),
        "number": isinstance(value, int | float) and math.isfinite(value),
        "object": isinstance(value, dict),
        "array": isinstance(value, list | tuple) and all(isinstance(v, str) for v in value),
    }.get(kind, False)


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


BONUS_DECISIONS = ("own", "consult", "abstain")


def bonus_points(
    preset: Preset,
    correct: bool,
    part_value: int | None = None,
    weight_class: str | None = None,
    decision: str = "",
) -> int:
    """Points for one bonus part: ``part_value`` (the set's value; None = the preset's
    ``bonus_part_value``) if correct, else 0; deflated for a bot answerer (``weight_class``).

    ``decision`` (presets with ``bonus_decisions``; "" = none taken, as "own"): "abstain" scores
    ``preset.abstain_points`` whatever ``correct``; "consult" (``weight_class``: the consulted
    bot's) scores a correct part's value minus :func:`consult_deflation`, never below 0."""
    if decision == "abstain":
        return preset.abstain_points
    if not correct:
        return 0
    value = preset.bonus_part_value if part_value is None else part_value
    if decision == "consult":
        return max(value - consult_deflation(preset, weight_class), 0)
    return deflate(preset, value, weight_class)


def consult_deflation(preset: Preset, weight_class: str | None) -> int:
    """Points a correct consulted bonus part loses: the preset's fixed
    ``consult_static_deflation`` ("static"), else ``consult_deflation[weight_class]`` (0 for a
    class the preset does not list)."""
    if preset.consult_deflation_mode == "static":
        return preset.consult_static_deflation
    return preset.consult_deflation.get(weight_class or "", 0)
