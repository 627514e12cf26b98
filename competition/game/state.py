"""The match state: plain data, JSON round-trippable, copied (never mutated) by ``apply``."""

from __future__ import annotations

import copy
from dataclasses import asdict, dataclass, field, fields, is_dataclass, replace
from typing import Any

from .specs import KINDS, BonusPartSpec, BonusSpec, MatchConfig, PlayerSpec, TeamSpec, TossupSpec

# Phases: lobby → (reading ⇄ dead_time ⇄ answering/ruling) → bonus/bonus_ruling → between … → ended.
LIVE_PHASES = ("reading", "dead_time")
TOSSUP_PHASES = ("reading", "dead_time", "answering", "ruling")
BONUS_PHASES = ("bonus", "bonus_ruling")
SPEC_FIELDS = ("teams", "players", "tossups", "bonuses")


@dataclass
class TossupRun:
    """The live part of the current tossup.

    ``revealed``: number of tokens shown; ``revealed_at[i]``: time token i was shown;
    ``locked_teams``: teams whose buzz won a race on this tossup (one buzz per team);
    ``candidates``: buzzes in the open collection window (closes at ``race_deadline``);
    ``held``: bot buzzes waiting for their ``release_at`` (reaction delay); ``buzz``: the
    winning buzz being answered or ruled; ``outcome``: answered|dead|skipped once ended.
    """

    index: int
    question_id: int
    revealed: int = 0
    revealed_at: list[float] = field(default_factory=list)
    next_word_at: float | None = None
    dead_deadline: float | None = None
    locked_teams: list[int] = field(default_factory=list)
    candidates: list[dict[str, Any]] = field(default_factory=list)
    race_deadline: float | None = None
    held: list[dict[str, Any]] = field(default_factory=list)
    buzz: dict[str, Any] | None = None
    neg_given: bool = False
    outcome: str | None = None


@dataclass
class BonusRun:
    """The bonus being played by ``team_id``: current ``part`` (0-based), its ``deadline``
    (None while waiting for the moderator), the ``pending`` answer, ``prompts`` given on this
    part and per-part ``results``."""

    bonus_id: int
    team_id: int
    part: int = 0
    deadline: float | None = None
    pending: dict[str, Any] | None = None
    points: int = 0
    results: list[dict[str, Any]] = field(default_factory=list)
    prompts: int = 0


@dataclass
class MatchState:
    """Everything the engine knows about a match. ``scores``: ``{str(team_id): points}``;
    ``history``: rulings (tossup buzzes and bonus parts, with ``undone`` flags);
    ``adjustments``: moderator point adjustments; ``protests``: ``{protest_id, team_id,
    question_id, reason, at, status: open|resolved, resolution}``; times in seconds since the epoch."""

    config: MatchConfig
    teams: list[TeamSpec]
    players: list[PlayerSpec]
    tossups: list[TossupSpec]
    bonuses: list[BonusSpec]
    scores: dict[str, int]
    status: str = "lobby"
    phase: str = "lobby"
    wpm: float = 200
    paused: bool = False
    paused_at: float | None = None
    tossup_index: int = -1
    tossup: TossupRun | None = None
    bonus_index: int = 0
    bonus: BonusRun | None = None
    between_deadline: float | None = None
    history: list[dict[str, Any]] = field(default_factory=list)
    adjustments: list[dict[str, Any]] = field(default_factory=list)
    protests: list[dict[str, Any]] = field(default_factory=list)

    @property
    def next_deadline(self) -> float | None:
        """Earliest time the driver must apply ``Tick`` (None: nothing scheduled, or paused)."""
        pending = deadlines(self)
        return min(pending)[0] if pending else None

    def player(self, player_id: int) -> PlayerSpec | None:
        """The seat with this id, or None."""
        return next((p for p in self.players if p.player_id == player_id), None)

    def team(self, team_id: int) -> TeamSpec | None:
        """The team with this id, or None."""
        return next((t for t in self.teams if t.team_id == team_id), None)

    def copy(self) -> MatchState:
        """A copy whose mutable run-time parts are independent; the frozen specs are shared."""
        runtime = ("scores", "tossup", "bonus", "history", "adjustments", "protests")
        return replace(self, **{name: copy.deepcopy(getattr(self, name)) for name in runtime})

    def to_dict(self) -> dict[str, Any]:
        """JSON-ready dict; ``MatchState.from_dict(s.to_dict()) == s``."""
        d = {f.name: copy.deepcopy(getattr(self, f.name)) for f in fields(self) if f.name not in SPEC_FIELDS}
        d["config"] = self.config.to_dict()
        for name in SPEC_FIELDS:
            d[name] = [_plain(v) for v in getattr(self, name)]
        d["tossup"] = self.tossup and asdict(self.tossup)
        d["bonus"] = self.bonus and asdict(self.bonus)
        return d

    @classmethod
    def from_dict(cls, d: dict[str, Any]) -> MatchState:
        """Inverse of :meth:`to_dict` (accepts its JSON round trip)."""
        d = copy.deepcopy(d)
        d["config"] = MatchConfig.from_dict(d["config"])
        d["teams"] = [TeamSpec(**t) for t in d["teams"]]
        d["players"] = [PlayerSpec(**p) for p in d["players"]]
        d["tossups"] = [TossupSpec(**t) for t in d["tossups"]]
        d["bonuses"] = [
            BonusSpec(**{**b, "parts": [BonusPartSpec(**p) for p in b["parts"]]}) for b in d["bonuses"]
        ]
        d["tossup"] = d["tossup"] and TossupRun(**d["tossup"])
        d["bonus"] = d["bonus"] and BonusRun(**d["bonus"])
        return cls(**d)


def _plain(value: Any) -> Any:
    """``asdict`` for the frozen specs without its per-string deepcopy (they hold no dicts)."""
    if isinstance(value, list):
        return [v if isinstance(v, str) else _plain(v) for v in value]
    if is_dataclass(value):
        return {f.name: _plain(getattr(value, f.name)) for f in fields(value)}
    return value


def deadlines(st: MatchState) -> list[tuple[float, int, str]]:
    """Pending deadlines as ``(time, priority, kind)``; at equal times a held bot buzz is
    released before the race closes, and the race closes before the next word is read."""
    if st.paused or st.status != "running":
        return []
    out: list[tuple[float, int, str]] = []
    t = st.tossup
    if t is not None and t.outcome is None:
        out += [(h["release_at"], 0, "release") for h in t.held]
        if t.race_deadline is not None:
            out.append((t.race_deadline, 1, "race"))
        if st.phase == "reading" and t.next_word_at is not None:
            out.append((t.next_word_at, 2, "word"))
        if st.phase == "answering" and t.buzz is not None and t.buzz["answer_deadline"] is not None:
            out.append((t.buzz["answer_deadline"], 3, "answer"))
        # A buzz in the collection window was in time: dead time waits for the race.
        if st.phase == "dead_time" and t.dead_deadline is not None and not t.candidates:
            out.append((t.dead_deadline, 4, "dead"))
    if st.phase == "bonus" and st.bonus is not None and st.bonus.deadline is not None:
        out.append((st.bonus.deadline, 5, "bonus"))
    if st.phase == "between" and st.between_deadline is not None:
        out.append((st.between_deadline, 6, "between"))
    return out


def new_match(
    config: MatchConfig,
    teams: list[TeamSpec],
    players: list[PlayerSpec],
    tossups: list[TossupSpec],
    bonuses: list[BonusSpec],
) -> MatchState:
    """A match in the lobby with all scores 0.

    Raises ValueError for duplicate team/player/question ids, a player of an unknown team,
    a kind other than human|bot, or a tossup without tokens.
    """
    for label, ids in (
        ("team", [t.team_id for t in teams]),
        ("player", [p.player_id for p in players]),
        ("tossup", [q.question_id for q in tossups]),
        ("bonus", [b.bonus_id for b in bonuses]),
    ):
        if len(set(ids)) != len(ids):
            raise ValueError(f"duplicate {label} ids: {ids}")
    team_ids = {t.team_id for t in teams}
    for p in players:
        if p.team_id not in team_ids:
            raise ValueError(f"player {p.player_id} is on unknown team {p.team_id}")
    for kind in [t.kind for t in teams] + [p.kind for p in players]:
        if kind not in KINDS:
            raise ValueError(f"kind must be one of {KINDS}, got {kind!r}")
    for q in tossups:
        if not q.tokens:
            raise ValueError(f"tossup {q.question_id} has no words")
    return MatchState(
        config=config,
        teams=list(teams),
        players=list(players),
        tossups=list(tossups),
        bonuses=list(bonuses),
        scores={str(t.team_id): 0 for t in teams},
        wpm=config.wpm,
    )
