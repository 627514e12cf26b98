"""QANTA 2026 computer-side scoring: per-question points, normalisation and size deflation (pure).

Source: the competition's computer rules, https://qanta-org.github.io/competition/2026/rules/computer/
(qanta-org/qanta-org.github.io, ``competition/2026/rules/computer/index.md``, as of May 2026), also
summarised in ``../shared/reference/HYBRID.md``. The rules as written, and what this module chose
where they are silent (marked *choice*; docs/BOT_EVALUATION.md, "QANTA 2026 computer-side score"):

- A system outputs, at each **decision point** of a tossup, an answer and a commit flag. *Choice*: a
  decision point is a prefix at which the system is asked (``manage.py evaluate_bot``: every
  ``--every``-th token and the last; a recorded log: each recorded prefix); the **first** decision point
  is the earliest of them. *Choice*: the first commit ends the tossup for the system (a commit is a
  buzz: one per team per tossup, rules overview); later commits are ignored.
- A correct commit scores ``base`` (10) plus a quartile term: +3, +2, +1, +0 when made in the first,
  second, third, fourth quartile of the reveal; plus ``power`` (+2) when made at the first decision
  point. *Choice*: the reveal position is the share of tokens revealed, (token_index + 1) / token_count,
  and quartile q (1–4) is the smallest q with that share ≤ q/4 (so 5 of 20 tokens is still the first).
- *Choice*: a wrong commit scores ``wrong_commit`` = 0 and no commit scores 0. The computer rules give
  points only for a correct commit and call the normalised total "a number between 0 and 1", which a
  negative score would break (the human rules' −5 neg is for live play).
- Bonus ("uncalibrated") questions: each correct part scores ``bonus_part_value`` (3.33).
  *Choice*: bonuses are scored on their own, not conditional on the tossup (the conditional link is
  the human game's).
- Normalisation: the rules "divide by the total number of questions to create a number between 0 and
  1" while up-weighting the tossups. *Choice*: normalised = Σ points / Σ maxima, a tossup's maximum
  being base + the first quartile's term + power (15) and a bonus's its parts × 3.33 (9.99 for three),
  so tossups weigh 15 : 9.99 and a perfect system scores exactly 1.
- Size deflation: V' = V · (1 − S / C), S the registered system size and C the class's maximum size:
  500 MB (lightweight), 6 GB (middleweight). *Choice*: sizes are decimal (1 MB = 10⁶ bytes), a system
  must be strictly under its cap, and the open (heavyweight) track, which publishes no cap, is not
  deflated. The rules add 100 MB to Hugging Face-style submissions (:data:`HUGGING_FACE_OVERHEAD_BYTES`).
  Deflation is linear, so deflating the raw total and then normalising gives the deflated normalised
  score returned here.

The points constants live in the preset ``scoring/presets/computer/qanta26.json`` (shape:
``scoring/preset.schema.json``, ``$defs/computerScoring``); :data:`QANTA26` equals it.
"""

from __future__ import annotations

import json
import math
import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from enum import StrEnum
from typing import Any

from scoring.rules import PRESETS_DIR

COMPUTER_PRESETS_DIR = PRESETS_DIR / "computer"


class Track(StrEnum):
    """A QANTA 2026 computer track (size class), by its command-line value."""

    LIGHTWEIGHT = "500mb"
    MIDDLEWEIGHT = "6gb"
    OPEN = "open"


#: Maximum system size C per track, in bytes (decimal units); None: no published cap, not deflated.
TRACK_CAP_BYTES: dict[Track, int | None] = {
    Track.LIGHTWEIGHT: 500_000_000,
    Track.MIDDLEWEIGHT: 6_000_000_000,
    Track.OPEN: None,
}
#: Bytes the organisers add to a Hugging Face-style submission's size (computer rules, May 2026).
HUGGING_FACE_OVERHEAD_BYTES = 100_000_000

# Names a bot may declare for its track: the track values, the rules' class names and the SDK's
# ``Guesser.weight_class`` (lightweight / midweight / heavyweight) with the match seats' short forms.
_TRACK_NAMES = {
    **{t.value: t for t in Track},
    "lightweight": Track.LIGHTWEIGHT,
    "light": Track.LIGHTWEIGHT,
    "middleweight": Track.MIDDLEWEIGHT,
    "midweight": Track.MIDDLEWEIGHT,
    "mid": Track.MIDDLEWEIGHT,
    "heavyweight": Track.OPEN,
    "heavy": Track.OPEN,
}


def track_of(declared: str) -> Track:
    """The track a bot declares: ``500mb`` | ``6gb`` | ``open``, or a weight class (``lightweight`` →
    500 MB, ``midweight``/``middleweight`` → 6 GB, ``heavyweight`` → open; also light/mid/heavy);
    case and spaces ignored. Raises ValueError for anything else."""
    key = str(declared).strip().lower().replace(" ", "")
    if key not in _TRACK_NAMES:
        raise ValueError(
            f"unknown QANTA 2026 track {declared!r}: use 500mb, 6gb or open "
            "(or a weight class: lightweight, midweight, heavyweight)"
        )
    return _TRACK_NAMES[key]


_SIZE = re.compile(r"^\s*(\d+(?:\.\d+)?)\s*([kmgt]?b?)?\s*$", re.IGNORECASE)
_UNITS = {"": 1, "b": 1, "k": 10**3, "kb": 10**3, "m": 10**6, "mb": 10**6, "g": 10**9, "gb": 10**9}
_UNITS |= {"t": 10**12, "tb": 10**12}


def parse_size(text: str) -> int:
    """A system size in bytes from ``"420MB"``, ``"5.5 GB"``, ``"1200k"`` or ``"123456"`` (decimal
    units: 1 MB = 10⁶ bytes). Raises ValueError for anything else or a size ≤ 0."""
    match = _SIZE.match(str(text))
    if not match:
        raise ValueError(f"size {text!r} is not a number of bytes, KB, MB, GB or TB (e.g. 420MB)")
    size = round(float(match.group(1)) * _UNITS[(match.group(2) or "").lower()])
    if size <= 0:
        raise ValueError(f"size {text!r} must be more than 0 bytes")
    return size


@dataclass(frozen=True)
class ComputerScoring:
    """The computer-side points of a rule set (a file of ``scoring/presets/computer/``).

    Points per tossup: ``base`` for a correct commit, plus ``quartile_points[q - 1]`` for a commit in
    quartile q (1–4) of the reveal, plus ``power`` at the first decision point; ``wrong_commit`` for a
    wrong commit (0 or less). Per bonus part: ``bonus_part_value``. ``track_caps``: track → maximum
    size in bytes (None: not deflated). ``hugging_face_overhead_bytes``: added to the size of a
    Hugging Face-style submission. ``source``: where the rules are published."""

    name: str
    description: str = ""
    source: str = ""
    base: float = 10.0
    quartile_points: tuple[float, float, float, float] = (3.0, 2.0, 1.0, 0.0)
    power: float = 2.0
    wrong_commit: float = 0.0
    bonus_part_value: float = 3.33
    track_caps: Mapping[Track, int | None] = field(default_factory=lambda: dict(TRACK_CAP_BYTES))
    hugging_face_overhead_bytes: int = HUGGING_FACE_OVERHEAD_BYTES

    @property
    def max_tossup_points(self) -> float:
        """The most a tossup can score: base + the best quartile term + power (15 in QANTA 2026)."""
        return self.base + max(self.quartile_points) + self.power

    @classmethod
    def from_dict(cls, d: Mapping[str, Any]) -> ComputerScoring:
        """Build from a preset file's object. Raises ValueError naming the field for: unknown keys, a
        missing name, a non-number point value, a negative base/power/quartile term/part value, a
        positive ``wrong_commit``, ``quartile_points`` not four numbers, or ``tracks`` not mapping each
        of 500mb, 6gb, open to a positive integer or null (the rules of ``$defs/computerScoring``)."""
        if not isinstance(d, Mapping):
            raise ValueError(f"a computer scoring preset is a JSON object, got {type(d).__name__}")
        known = {
            "name",
            "description",
            "source",
            "base",
            "quartile_points",
            "power",
            "wrong_commit",
            "bonus_part_value",
            "tracks",
            "hugging_face_overhead_bytes",
        }
        unknown = set(d) - known
        if unknown:
            raise ValueError(f"unknown computer scoring fields: {sorted(unknown)}")
        if not isinstance(d.get("name"), str):
            raise ValueError("computer scoring preset needs a name (a string)")
        for key in ("description", "source"):
            if not isinstance(d.get(key, ""), str):
                raise ValueError(f"{key!r} must be a string")
        for key in ("base", "power", "bonus_part_value", "wrong_commit"):
            value = d.get(key, getattr(cls, key))
            if not _number(value):
                raise ValueError(f"{key!r} must be a number, got {value!r}")
            if key == "wrong_commit" and value > 0:
                raise ValueError(f"'wrong_commit' is 0 or a penalty (≤ 0), got {value!r}")
            if key != "wrong_commit" and value < 0:
                raise ValueError(f"{key!r} must be ≥ 0, got {value!r}")
        quartiles = d.get("quartile_points", [3, 2, 1, 0])
        if (
            not isinstance(quartiles, list | tuple)
            or len(quartiles) != 4
            or not all(_number(q) and q >= 0 for q in quartiles)
        ):
            raise ValueError(f"'quartile_points' must be four numbers ≥ 0, got {quartiles!r}")
        tracks = d.get("tracks", {t.value: c for t, c in TRACK_CAP_BYTES.items()})
        if not isinstance(tracks, Mapping) or set(tracks) != {t.value for t in Track}:
            raise ValueError(f"'tracks' must map each of 500mb, 6gb, open to a size, got {tracks!r}")
        for name, cap in tracks.items():
            if cap is not None and (not _integer(cap) or cap <= 0):
                raise ValueError(f"tracks[{name!r}] must be a size in bytes > 0 or null, got {cap!r}")
        overhead = d.get("hugging_face_overhead_bytes", HUGGING_FACE_OVERHEAD_BYTES)
        if not _integer(overhead) or overhead < 0:
            raise ValueError(f"'hugging_face_overhead_bytes' must be an integer ≥ 0, got {overhead!r}")
        q1, q2, q3, q4 = (float(q) for q in quartiles)
        return cls(
            name=d["name"],
            description=d.get("description", ""),
            source=d.get("source", ""),
            base=float(d.get("base", cls.base)),
            quartile_points=(q1, q2, q3, q4),
            power=float(d.get("power", cls.power)),
            wrong_commit=float(d.get("wrong_commit", cls.wrong_commit)),
            bonus_part_value=float(d.get("bonus_part_value", cls.bonus_part_value)),
            track_caps={Track(k): None if v is None else int(v) for k, v in tracks.items()},
            hugging_face_overhead_bytes=int(overhead),
        )


def _number(value: Any) -> bool:
    return isinstance(value, int | float) and not isinstance(value, bool) and math.isfinite(value)


def _integer(value: Any) -> bool:
    """A JSON Schema integer: an int, or a float without a fractional part (5e8)."""
    return _number(value) and float(value).is_integer()


#: The QANTA 2026 computer rules (equal to ``scoring/presets/computer/qanta26.json``).
QANTA26 = ComputerScoring(
    name="qanta26",
    source="https://qanta-org.github.io/competition/2026/rules/computer/",
)


def known_computer_scorings() -> list[str]:
    """Names of the presets in ``scoring/presets/computer/`` (sorted)."""
    return sorted(p.stem for p in COMPUTER_PRESETS_DIR.glob("*.json"))


def load_computer_scoring(name: str) -> ComputerScoring:
    """Load ``scoring/presets/computer/<name>.json``. Raises ValueError naming the known presets when
    it is absent, or the field when the file is malformed."""
    path = COMPUTER_PRESETS_DIR / f"{name}.json"
    if not name.isidentifier() or not path.is_file():
        known = ", ".join(known_computer_scorings())
        raise ValueError(f"unknown computer scoring {name!r}; known: {known}")
    return ComputerScoring.from_dict(json.loads(path.read_text(encoding="utf-8")))


# --- per question ------------------------------------------------------------------------------


@dataclass(frozen=True)
class Decision:
    """One decision point of a tossup: after token ``token_index`` (0-based: the last token revealed),
    the system did or did not ``commit`` to its answer, which the judge found ``correct`` or not."""

    token_index: int
    commit: bool
    correct: bool


@dataclass(frozen=True)
class TossupScore:
    """The points of one tossup and why: ``commit_token`` (None: never committed), ``correct``
    (None: no commit), ``quartile`` 1–4 of the reveal at the commit (None: no commit), ``power``
    (a correct commit at the first decision point), ``points``."""

    points: float
    commit_token: int | None = None
    correct: bool | None = None
    quartile: int | None = None
    power: bool = False


def reveal_quartile(token_index: int, token_count: int) -> int:
    """The quartile (1–4) of the reveal after token ``token_index`` (0-based) of ``token_count``: the
    smallest q with (token_index + 1) / token_count ≤ q / 4, computed exactly in integers. Raises
    ValueError for token_count < 1 or an index outside [0, token_count)."""
    if token_count < 1 or not 0 <= token_index < token_count:
        raise ValueError(f"token {token_index} is not within a tossup of {token_count} tokens")
    return -(-4 * (token_index + 1) // token_count)  # ⌈4 (i + 1) / n⌉


def commit_points(
    token_count: int,
    commit_token: int,
    correct: bool,
    first_decision_token: int,
    scoring: ComputerScoring = QANTA26,
) -> TossupScore:
    """The points of a commit after token ``commit_token`` (0-based) of a ``token_count``-token tossup
    whose first decision point is after ``first_decision_token``: a correct one scores base +
    quartile term + power (when ``commit_token == first_decision_token``), a wrong one
    ``scoring.wrong_commit``. Points are QANTA 2026 points (0–15). Raises ValueError for a token
    outside the tossup or a commit before the first decision point."""
    quartile = reveal_quartile(commit_token, token_count)
    reveal_quartile(first_decision_token, token_count)
    if commit_token < first_decision_token:
        raise ValueError(
            f"commit at token {commit_token} before the first decision point {first_decision_token}"
        )
    if not correct:
        return TossupScore(scoring.wrong_commit, commit_token, False, quartile, False)
    power = commit_token == first_decision_token
    points = scoring.base + scoring.quartile_points[quartile - 1] + (scoring.power if power else 0.0)
    return TossupScore(points, commit_token, True, quartile, power)


def tossup_points(
    decisions: Sequence[Decision], token_count: int, scoring: ComputerScoring = QANTA26
) -> TossupScore:
    """The points of one tossup from its decision points (in increasing ``token_index``; the first one
    is the first decision point): the first commit is scored by :func:`commit_points`, later ones are
    ignored; no commit (or no decision point at all) scores 0. Raises ValueError for indexes that do
    not increase strictly within [0, token_count)."""
    last = -1
    for d in decisions:
        if not last < d.token_index < token_count:
            raise ValueError(
                f"decision points must increase within [0, {token_count}), got {d.token_index} after {last}"
            )
        last = d.token_index
    commit = next((d for d in decisions if d.commit), None)
    if commit is None:
        return TossupScore(0.0)
    return commit_points(token_count, commit.token_index, commit.correct, decisions[0].token_index, scoring)


def bonus_points(parts_correct: Sequence[bool], scoring: ComputerScoring = QANTA26) -> float:
    """The points of one bonus: ``scoring.bonus_part_value`` (3.33) per correct part, 0 per wrong
    one; its maximum is ``len(parts_correct)`` × the part value."""
    return scoring.bonus_part_value * sum(1 for ok in parts_correct if ok)


# --- totals ------------------------------------------------------------------------------------


def registered_size(
    size_bytes: int, *, hugging_face: bool = False, scoring: ComputerScoring = QANTA26
) -> int:
    """The size S the deflation uses: the system's size in bytes, plus the Hugging Face overhead
    (100 MB) for a Hugging Face-style submission."""
    return size_bytes + (scoring.hugging_face_overhead_bytes if hugging_face else 0)


def deflation_factor(
    track: Track, size_bytes: int | None, scoring: ComputerScoring = QANTA26
) -> float | None:
    """1 − S / C for a system of registered size S = ``size_bytes`` on a track of cap C; 1.0 on a track
    without a cap (open); None when the track has a cap and the size is unknown. Raises ValueError
    for a size ≤ 0 or not strictly under the track's cap (the system does not qualify for it)."""
    cap = scoring.track_caps[track]
    if size_bytes is not None and size_bytes <= 0:
        raise ValueError(f"a system size must be more than 0 bytes, got {size_bytes}")
    if cap is None:
        return 1.0
    if size_bytes is None:
        return None
    if size_bytes >= cap:
        raise ValueError(
            f"a system of {size_bytes:,} bytes is not under the {track.value} track's cap of {cap:,} bytes"
        )
    return 1.0 - size_bytes / cap


@dataclass(frozen=True)
class Qanta26Score:
    """A system's QANTA 2026 computer-side score over a set of questions.

    ``points`` = ``tossup_points`` + ``bonus_points`` (QANTA 2026 points) out of ``max_points``;
    ``normalised`` = points / max_points in [0, 1] (None without questions); ``deflation`` the size
    factor 1 − S/C (1.0 on the open track, None when the size is unknown); ``deflated`` = normalised ×
    deflation (None when either is). Counts: ``commits``, ``correct_commits``, ``powers`` and
    ``by_quartile`` (correct commits per quartile 1–4)."""

    scoring: str
    track: str
    size_bytes: int | None
    tossups: int
    bonuses: int
    commits: int
    correct_commits: int
    powers: int
    by_quartile: tuple[int, int, int, int]
    tossup_points: float
    bonus_points: float
    points: float
    max_points: float
    normalised: float | None
    deflation: float | None
    deflated: float | None

    def to_dict(self) -> dict[str, Any]:
        """JSON-ready: every field (``by_quartile`` as a list)."""
        data = {k: getattr(self, k) for k in self.__dataclass_fields__}
        data["by_quartile"] = list(self.by_quartile)
        return data


def total(
    tossups: Sequence[TossupScore],
    bonuses: Sequence[Sequence[bool]] = (),
    *,
    track: Track = Track.OPEN,
    size_bytes: int | None = None,
    scoring: ComputerScoring = QANTA26,
) -> Qanta26Score:
    """The normalised and deflated total of scored ``tossups`` and ``bonuses`` (each a bonus's parts,
    correct or not), see :class:`Qanta26Score`: normalised = Σ points / (tossups × max tossup points +
    Σ parts × part value). Raises ValueError as :func:`deflation_factor`."""
    deflation = deflation_factor(track, size_bytes, scoring)
    tossup_sum = sum(t.points for t in tossups)
    bonus_sum = sum(bonus_points(b, scoring) for b in bonuses)
    max_points = (
        len(tossups) * scoring.max_tossup_points + sum(len(b) for b in bonuses) * scoring.bonus_part_value
    )
    normalised = (tossup_sum + bonus_sum) / max_points if max_points > 0 else None
    quartiles = [sum(1 for t in tossups if t.correct and t.quartile == q) for q in (1, 2, 3, 4)]
    return Qanta26Score(
        scoring=scoring.name,
        track=track.value,
        size_bytes=size_bytes,
        tossups=len(tossups),
        bonuses=len(bonuses),
        commits=sum(1 for t in tossups if t.commit_token is not None),
        correct_commits=sum(1 for t in tossups if t.correct),
        powers=sum(1 for t in tossups if t.power),
        by_quartile=(quartiles[0], quartiles[1], quartiles[2], quartiles[3]),
        tossup_points=tossup_sum,
        bonus_points=bonus_sum,
        points=tossup_sum + bonus_sum,
        max_points=max_points,
        normalised=normalised,
        deflation=deflation,
        deflated=None if normalised is None or deflation is None else normalised * deflation,
    )
