"""Typed records of the live state: buzzes in the race, the buzz being answered, bonus answers,
the ruling history, point adjustments and protests.

All are frozen: the engine replaces a record (``dataclasses.replace``) instead of changing it, so
copying a state copies lists, never records. ``to_dict()`` gives the JSON stored in
``Match.state`` and published in events (the field order is the key order); ``from_dict`` is its
inverse. Times are seconds since the epoch; ``token_index`` is 0-based.
"""

from __future__ import annotations

from dataclasses import dataclass, field, fields
from typing import Any, Literal, Self

_NAMES: dict[type, tuple[str, ...]] = {}


def _names(cls: type) -> tuple[str, ...]:
    """The field names of a record class, computed once per class."""
    names = _NAMES.get(cls)
    if names is None:
        names = _NAMES[cls] = tuple(f.name for f in fields(cls))
    return names


class Record:
    """``to_dict``/``from_dict`` for a flat frozen dataclass (scalar fields, or nested Records)."""

    __slots__ = ()

    def to_dict(self) -> dict[str, Any]:
        """The JSON-ready dict, keys in field order."""
        out = {}
        for name in _names(type(self)):
            value = getattr(self, name)
            out[name] = value.to_dict() if isinstance(value, Record) else value
        return out

    @classmethod
    def from_dict(cls, d: dict[str, Any]) -> Self:
        """Inverse of :meth:`to_dict`. Raises TypeError for a missing or unknown key."""
        return cls(**d)


@dataclass(frozen=True, slots=True)
class Candidate(Record):
    """A buzz in the open collection window (``TossupRun.candidates``), or a bot's buzz held
    until ``release_at``, the end of its reaction delay (``TossupRun.held``).

    ``token_index``/``corrected_press_at``: what the engine decided from the client's claims
    (``claimed_token_index``/``claimed_press_at``; ``floor_token_index``: the least it could be
    given ``delay_bound``, seconds); ``received_at``: arrival; ``accepted_at``: when it joined the
    race (None while held); ``client_time``: the client's own clock, logged only; ``cost``: the
    declared USD cost of the guess behind it (None: not declared)."""

    player_id: int
    team_id: int
    kind: str
    weight_class: str
    token_index: int
    claimed_token_index: int
    floor_token_index: int
    delay_bound: float
    received_at: float
    client_time: float | None
    corrected_press_at: float | None
    claimed_press_at: float | None
    accepted_at: float | None = None
    release_at: float | None = None
    cost: float | None = None


@dataclass(frozen=True, slots=True, kw_only=True)
class WinningBuzz(Candidate):
    """The buzz that won the race, being answered or ruled (``TossupRun.buzz``).

    ``token_count``: words in the tossup; ``revealed_at``: when its token was shown;
    ``fully_read``: the whole tossup had been read when it arrived (no neg);
    ``answer_deadline``: None while the moderator rules; ``prompts`` given so far; ``guess``,
    ``verdict`` (the judge's suggestion), ``reason`` and ``directed_prompt`` of the last answer;
    ``answerer_id``: the bot seat the moderator delegated the answer to (None: the buzzer)."""

    token_count: int
    revealed_at: float
    fully_read: bool
    answer_deadline: float | None
    prompts: int = 0
    answerer_id: int | None = None
    guess: str = ""
    verdict: str = ""
    reason: str = ""
    directed_prompt: str | None = None


@dataclass(frozen=True, slots=True)
class PendingAnswer(Record):
    """An answer to the open bonus part waiting to be ruled (``BonusRun.pending``)."""

    player_id: int
    guess: str
    verdict: str
    reason: str
    directed_prompt: str | None


@dataclass(frozen=True, slots=True)
class Proposal(Record):
    """A semi-autonomous bot's buzz waiting for confirmation (``TossupRun.proposals``) until
    ``deadline``; ``token_index``: the token it had seen when it proposed; ``cost``: the USD
    cost it declared (None: not declared), which its buzz keeps in the race once confirmed."""

    player_id: int
    team_id: int
    token_index: int
    proposed_at: float
    deadline: float
    cost: float | None = None


@dataclass(frozen=True, slots=True)
class Suggestion(Record):
    """A bot seat's suggested answer to the open bonus part (``BonusRun.suggestions``)."""

    player_id: int
    part: int
    guess: str
    confidence: float
    explanation: str


@dataclass(frozen=True, slots=True)
class PartResult(Record):
    """A ruled bonus part (``BonusRun.results``); ``player_id`` None: nobody answered;
    ``decision``: the captain's own|consult|abstain ("" if none was taken)."""

    part: int
    player_id: int | None
    guess: str
    ruling: str
    points: int
    decision: str = ""


@dataclass(frozen=True, slots=True)
class TossupRuling(Record):
    """A ruled tossup buzz in ``MatchState.history``. ``ruling``: correct|wrong|no_penalty|timeout;
    ``undone``: reversed by Undo or ReplayTossup (its points no longer count); ``answerer_id``:
    the bot seat that answered for the buzzer (a moderator's delegation), else None;
    ``fully_read``: the whole tossup had been read when the buzz arrived (a wrong answer then is
    no neg), kept so that a corrected ruling is scored as the original would have been."""

    kind: Literal["tossup"] = field(default="tossup", init=False)
    tossup_index: int
    question_id: int
    player_id: int
    team_id: int
    guess: str
    verdict: str
    ruling: str
    points: int
    token_index: int
    token_count: int
    at: float
    undone: bool = False
    answerer_id: int | None = None
    fully_read: bool = False

    @classmethod
    def from_dict(cls, d: dict[str, Any]) -> Self:
        return cls(**{k: v for k, v in d.items() if k != "kind"})


@dataclass(frozen=True, slots=True)
class BonusRuling(Record):
    """A ruled bonus part in ``MatchState.history`` (``tossup_index``: the tossup that earned the
    bonus; ``player_id`` None: nobody answered; ``decision``: own|consult|abstain, "" if none)."""

    kind: Literal["bonus"] = field(default="bonus", init=False)
    tossup_index: int
    bonus_id: int
    team_id: int
    part: int
    player_id: int | None
    guess: str
    ruling: str
    verdict: str
    points: int
    at: float
    undone: bool = False
    decision: str = ""

    @classmethod
    def from_dict(cls, d: dict[str, Any]) -> Self:
        return cls(**{k: v for k, v in d.items() if k != "kind"})


RulingRecord = TossupRuling | BonusRuling


def ruling_from_dict(d: dict[str, Any]) -> RulingRecord:
    """A history entry from its dict, by its ``kind`` (tossup|bonus). Raises ValueError for another kind."""
    if d["kind"] == "tossup":
        return TossupRuling.from_dict(d)
    if d["kind"] == "bonus":
        return BonusRuling.from_dict(d)
    raise ValueError(f"unknown history kind {d['kind']!r}")


@dataclass(frozen=True, slots=True)
class Adjustment(Record):
    """A moderator's point adjustment (``MatchState.adjustments``); ``protest_id``: the protest it resolved."""

    team_id: int
    points: int
    reason: str
    at: float
    protest_id: int | None


@dataclass(frozen=True, slots=True)
class Resolution(Record):
    """How a protest was resolved: ``points`` given to ``team_id`` at ``at``."""

    team_id: int
    points: int
    at: float


@dataclass(frozen=True, slots=True)
class ProtestNote(Record):
    """A protest (``MatchState.protests``): ``team_id`` None is the moderator's own note;
    ``question_id`` the tossup protested (None: none had started); ``status``: open|resolved."""

    protest_id: int
    team_id: int | None
    question_id: int | None
    reason: str
    at: float
    status: str = "open"
    resolution: Resolution | None = None

    @classmethod
    def from_dict(cls, d: dict[str, Any]) -> Self:
        resolution = d.get("resolution")
        return cls(**{**d, "resolution": resolution and Resolution.from_dict(resolution)})
