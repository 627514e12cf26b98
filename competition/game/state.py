"""The match state: plain data, JSON round-trippable, copied (never mutated) by ``apply``.

``TossupRun``, ``BonusRun`` and ``MatchState`` are the mutable parts of a copy; the records in
them (``records``) and the specs (``specs``) are frozen and shared between copies."""

from __future__ import annotations

from dataclasses import dataclass, field, fields, is_dataclass, replace
from typing import Any

from competition.vocabulary import MatchStatus, Phase

from .clock import deadlines
from .records import (
    Adjustment,
    Candidate,
    PartResult,
    PendingAnswer,
    Proposal,
    ProtestNote,
    RulingRecord,
    Suggestion,
    WinningBuzz,
    ruling_from_dict,
)
from .specs import KINDS, BonusPartSpec, BonusSpec, MatchConfig, PlayerSpec, TeamSpec, TossupSpec, check_seat
from .tokens import MediaToken, token_from_json

SPEC_FIELDS = ("teams", "players", "tossups", "bonuses")
# The ruling record: grows with the match, changes only when a ruling, adjustment or protest
# happens (never on a word), so it is stored apart from the per-command live state.
RECORD_FIELDS = ("history", "adjustments", "protests")


@dataclass
class TossupRun:
    """The live part of the current tossup.

    ``revealed``: number of tokens shown; ``revealed_at``: when tokens ``revealed_from`` …
    ``revealed − 1`` were shown — only the tail a buzz can still be placed in (see
    :meth:`trim_reveals`), so the live state stays small however long the tossup;
    ``locked_teams``: teams whose buzz won a race on this tossup (one buzz per team);
    ``candidates``: buzzes in the open collection window (closes at ``race_deadline``);
    ``held``: bot buzzes waiting for their ``release_at`` (reaction delay); ``buzz``: the
    winning buzz being answered or ruled; ``outcome``: answered|dead|skipped once ended;
    ``lockout_until``: no buzz is accepted before this time (an image/audio token's reveal lockout).
    ``proposals``: semi-autonomous bots' buzzes waiting for confirmation; ``muted``: muted bot
    seats whose would-be buzz on this tossup was logged (one each).
    """

    index: int
    question_id: int
    revealed: int = 0
    revealed_at: list[float] = field(default_factory=list)
    revealed_from: int = 0
    next_word_at: float | None = None
    dead_deadline: float | None = None
    locked_teams: list[int] = field(default_factory=list)
    candidates: list[Candidate] = field(default_factory=list)
    race_deadline: float | None = None
    held: list[Candidate] = field(default_factory=list)
    buzz: WinningBuzz | None = None
    neg_given: bool = False
    outcome: str | None = None
    lockout_until: float | None = None
    proposals: list[Proposal] = field(default_factory=list)
    muted: list[int] = field(default_factory=list)

    def copy(self) -> TossupRun:
        """A copy with its own lists (the records in them are frozen and shared)."""
        return replace(
            self,
            revealed_at=list(self.revealed_at),
            locked_teams=list(self.locked_teams),
            candidates=list(self.candidates),
            held=list(self.held),
            proposals=list(self.proposals),
            muted=list(self.muted),
        )

    def reveal_time(self, token_index: int) -> float:
        """When token ``token_index`` was shown. IndexError for a token not revealed yet or
        trimmed (older than any buzz can be placed at)."""
        i = token_index - self.revealed_from
        if not 0 <= i < len(self.revealed_at):
            raise IndexError(f"reveal time of token {token_index} is not kept")
        return self.revealed_at[i]

    def trim_reveals(self, window: float) -> None:
        """Forget reveal times nothing reads any more. ``window``: how far back (seconds) from
        the last reveal a buzz can be placed and still be waiting for its race; a token is kept
        if shown within ``window`` of the last reveal, or if it is the last one shown before
        that (it can be a buzz's floor: the last token shown at or before ``now − delay_bound``)."""
        latest = self.revealed_at[-1] if self.revealed_at else 0.0
        drop = 0
        while drop + 1 < len(self.revealed_at) and self.revealed_at[drop + 1] <= latest - window:
            drop += 1
        if drop:
            del self.revealed_at[:drop]
            self.revealed_from += drop

    def to_dict(self) -> dict[str, Any]:
        """JSON-ready dict, keys in field order."""
        d = {f.name: getattr(self, f.name) for f in fields(self)}
        d.update(
            revealed_at=list(self.revealed_at),
            locked_teams=list(self.locked_teams),
            candidates=[c.to_dict() for c in self.candidates],
            held=[h.to_dict() for h in self.held],
            buzz=self.buzz and self.buzz.to_dict(),
            proposals=[p.to_dict() for p in self.proposals],
            muted=list(self.muted),
        )
        return d

    @classmethod
    def from_dict(cls, d: dict[str, Any]) -> TossupRun:
        """Inverse of :meth:`to_dict`."""
        return cls(
            **{
                **d,
                "revealed_at": list(d["revealed_at"]),
                "locked_teams": list(d["locked_teams"]),
                "candidates": [Candidate.from_dict(c) for c in d["candidates"]],
                "held": [Candidate.from_dict(h) for h in d["held"]],
                "buzz": d["buzz"] and WinningBuzz.from_dict(d["buzz"]),
                # States stored before hybrid teams have neither list.
                "proposals": [Proposal.from_dict(p) for p in d.get("proposals", [])],
                "muted": list(d.get("muted", [])),
            }
        )


@dataclass
class BonusRun:
    """The bonus being played by ``team_id``: current ``part`` (0-based), its ``deadline``
    (None while waiting for the moderator), the ``pending`` answer, ``prompts`` given on this
    part and per-part ``results``. Presets with bonus decisions: the open part's ``decision``
    (own|consult|abstain, "" until the captain decides), ``consulted`` (the bot seat whose
    suggestion is the answer) and the team's AI ``suggestions``."""

    bonus_id: int
    team_id: int
    part: int = 0
    deadline: float | None = None
    pending: PendingAnswer | None = None
    points: int = 0
    results: list[PartResult] = field(default_factory=list)
    prompts: int = 0
    decision: str = ""
    consulted: int | None = None
    suggestions: list[Suggestion] = field(default_factory=list)

    def to_dict(self) -> dict[str, Any]:
        """JSON-ready dict, keys in field order."""
        d = {f.name: getattr(self, f.name) for f in fields(self)}
        d.update(
            pending=self.pending and self.pending.to_dict(),
            results=[r.to_dict() for r in self.results],
            suggestions=[s.to_dict() for s in self.suggestions],
        )
        return d

    @classmethod
    def from_dict(cls, d: dict[str, Any]) -> BonusRun:
        """Inverse of :meth:`to_dict`."""
        pending = d["pending"] and PendingAnswer.from_dict(d["pending"])
        results = [PartResult.from_dict(r) for r in d["results"]]
        suggestions = [Suggestion.from_dict(s) for s in d.get("suggestions", [])]
        return cls(**{**d, "pending": pending, "results": results, "suggestions": suggestions})


@dataclass
class MatchState:
    """Everything the engine knows about a match. ``scores``: ``{str(team_id): points}``;
    ``history``: rulings (tossup buzzes and bonus parts, with ``undone`` flags);
    ``adjustments``: moderator point adjustments; ``protests``: open and resolved protests
    (see ``records``); ``replaced``: questions thrown out for spares; ``between_questions``: seconds from the end of a question (its bonus
    included) to the next tossup, None when the moderator advances (``SetPace``; starts as the
    config's); times in seconds since the epoch."""

    config: MatchConfig
    teams: list[TeamSpec]
    players: list[PlayerSpec]
    tossups: list[TossupSpec]
    bonuses: list[BonusSpec]
    scores: dict[str, int]
    status: str = MatchStatus.LOBBY  # a MatchStatus (a plain string when read back from JSON)
    phase: str = Phase.LOBBY  # a Phase (likewise)
    wpm: float = 200
    paused: bool = False
    paused_at: float | None = None
    tossup_index: int = -1
    tossup: TossupRun | None = None
    bonus_index: int = 0
    bonus: BonusRun | None = None
    between_deadline: float | None = None
    between_questions: float | None = None
    history: list[RulingRecord] = field(default_factory=list)
    adjustments: list[Adjustment] = field(default_factory=list)
    protests: list[ProtestNote] = field(default_factory=list)
    # lineups: the lineup log (``lineups``) and the halves/overtime/timeouts (``periods``), plain
    # JSON, replaced (never mutated) by those modules so copies may share them.
    lineups: list[dict[str, Any]] = field(default_factory=list)
    periods: dict[str, Any] = field(default_factory=dict)
    # spares: the questions thrown out and replaced (``spares.replace_question``), oldest first,
    # each ``{"kind", "tossup_index", "question_id", "bonus_id", "spare_id", "reason"}``;
    # replaced whole, never changed in place (copies share it).
    replaced: list[dict[str, Any]] = field(default_factory=list)

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
        """A copy whose mutable run-time parts are independent; specs and records are shared (frozen)."""
        return replace(
            self,
            scores=dict(self.scores),
            tossup=self.tossup and self.tossup.copy(),
            bonus=self.bonus
            and replace(
                self.bonus, results=list(self.bonus.results), suggestions=list(self.bonus.suggestions)
            ),
            history=list(self.history),
            adjustments=list(self.adjustments),
            protests=list(self.protests),
        )

    def to_dict(self) -> dict[str, Any]:
        """JSON-ready dict; ``MatchState.from_dict(s.to_dict()) == s``. Key order: the run-time
        fields in field order, then the specs (``SPEC_FIELDS``)."""
        d = {f.name: getattr(self, f.name) for f in fields(self) if f.name not in SPEC_FIELDS}
        d.update(
            config=self.config.to_dict(),
            scores=dict(self.scores),
            tossup=self.tossup and self.tossup.to_dict(),
            bonus=self.bonus and self.bonus.to_dict(),
            history=[h.to_dict() for h in self.history],
            adjustments=[a.to_dict() for a in self.adjustments],
            protests=[p.to_dict() for p in self.protests],
        )
        for name in SPEC_FIELDS:
            d[name] = [_plain(v) for v in getattr(self, name)]
        return d

    @classmethod
    def from_dict(cls, d: dict[str, Any]) -> MatchState:
        """Inverse of :meth:`to_dict` (accepts its JSON round trip; ``d`` is not changed)."""
        return cls.from_parts(d, MatchSpec.from_dict(d), records_from_dict(d))

    # --- the stored split: an immutable spec, a small live state, the ruling record ---------

    def spec(self) -> MatchSpec:
        """The immutable inputs (config, teams, seats, questions), sharing this state's objects."""
        return MatchSpec(self.config, self.teams, self.players, self.tossups, self.bonuses)

    def live_dict(self) -> dict[str, Any]:
        """JSON-ready run-time fields without the spec and the ruling record (see
        :meth:`records_dict`): status, phase, clock, indexes, scores, the current runs."""
        skip = ("config", *SPEC_FIELDS, *RECORD_FIELDS)
        d = {f.name: getattr(self, f.name) for f in fields(self) if f.name not in skip}
        d.update(
            scores=dict(self.scores),
            tossup=self.tossup and self.tossup.to_dict(),
            bonus=self.bonus and self.bonus.to_dict(),
        )
        return d

    def records(self) -> Records:
        """``(history, adjustments, protests)``: the lists themselves (compare with ``is``)."""
        return (self.history, self.adjustments, self.protests)

    def records_dict(self) -> dict[str, Any]:
        """JSON-ready ruling record: ``{"history", "adjustments", "protests"}``."""
        return records_to_dict(self.records())

    @classmethod
    def from_parts(cls, live: dict[str, Any], spec: MatchSpec, records: Records) -> MatchState:
        """A state from its stored parts: ``live`` as :meth:`live_dict` gives it (extra keys of
        the full :meth:`to_dict` form are ignored), a (cached, shared) ``spec`` and the parsed
        ``records`` (their lists are copied)."""
        run = {f.name: live[f.name] for f in fields(cls) if f.name in live and f.name not in _NOT_LIVE}
        if "between_questions" not in live:  # stored before the pace was a live setting
            run["between_questions"] = config_pace(spec.config)
        return cls(
            **{
                **run,
                "config": spec.config,
                "teams": spec.teams,
                "players": spec.players,
                "tossups": spec.tossups,
                "bonuses": spec.bonuses,
                "scores": dict(live["scores"]),
                "tossup": live["tossup"] and TossupRun.from_dict(live["tossup"]),
                "bonus": live["bonus"] and BonusRun.from_dict(live["bonus"]),
                "history": list(records[0]),
                "adjustments": list(records[1]),
                "protests": list(records[2]),
            }
        )


Records = tuple[list[RulingRecord], list[Adjustment], list[ProtestNote]]
_NOT_LIVE = ("config", *SPEC_FIELDS, *RECORD_FIELDS)


def records_to_dict(records: Records) -> dict[str, Any]:
    """JSON-ready ``{"history", "adjustments", "protests"}`` of :meth:`MatchState.records`."""
    history, adjustments, protests = records
    return {
        "history": [h.to_dict() for h in history],
        "adjustments": [a.to_dict() for a in adjustments],
        "protests": [p.to_dict() for p in protests],
    }


def records_from_dict(d: dict[str, Any]) -> Records:
    """Inverse of :func:`records_to_dict` (also reads those keys of a full state dict)."""
    return (
        [ruling_from_dict(h) for h in d["history"]],
        [Adjustment.from_dict(a) for a in d["adjustments"]],
        [ProtestNote.from_dict(p) for p in d["protests"]],
    )


@dataclass(frozen=True)
class MatchSpec:
    """The immutable inputs of a match, stored once (seats appended in the lobby) and shared
    by every state built from it: its lists are never mutated (a seat makes a new list)."""

    config: MatchConfig
    teams: list[TeamSpec]
    players: list[PlayerSpec]
    tossups: list[TossupSpec]
    bonuses: list[BonusSpec]

    def to_dict(self) -> dict[str, Any]:
        """JSON-ready ``{"config", "teams", "players", "tossups", "bonuses"}``."""
        d: dict[str, Any] = {"config": self.config.to_dict()}
        for name in SPEC_FIELDS:
            d[name] = [_plain(v) for v in getattr(self, name)]
        return d

    @classmethod
    def from_dict(cls, d: dict[str, Any]) -> MatchSpec:
        """Inverse of :meth:`to_dict` (also reads those keys of a full state dict)."""
        return cls(
            config=MatchConfig.from_dict(d["config"]),
            teams=[TeamSpec(**t) for t in d["teams"]],
            players=[PlayerSpec(**p) for p in d["players"]],
            tossups=[
                TossupSpec(**{**t, "tokens": [token_from_json(x) for x in t["tokens"]]}) for t in d["tossups"]
            ],
            bonuses=[
                BonusSpec(**{**b, "parts": [BonusPartSpec(**p) for p in b["parts"]]}) for b in d["bonuses"]
            ],
        )


def _plain(value: Any) -> Any:
    """``asdict`` for the frozen specs without its per-string deepcopy (they hold no dicts)."""
    if isinstance(value, list):
        return [v if isinstance(v, str) else _plain(v) for v in value]
    if isinstance(value, MediaToken):
        return value.to_dict()
    if is_dataclass(value):
        return {f.name: _plain(getattr(value, f.name)) for f in fields(value)}
    return value


def new_match(
    config: MatchConfig,
    teams: list[TeamSpec],
    players: list[PlayerSpec],
    tossups: list[TossupSpec],
    bonuses: list[BonusSpec],
) -> MatchState:
    """A match in the lobby with all scores 0.

    Raises ValueError for duplicate team/player/question ids, a player of an unknown team,
    a kind other than human|bot, a seat's invalid buzz settings (``specs.check_seat``), or a
    tossup without tokens.
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
            raise ValueError(f"kind must be one of {', '.join(KINDS)}, got {kind!r}")
    for p in players:
        if problem := check_seat(p.kind, p.buzz_mode, p.min_token):
            raise ValueError(f"player {p.player_id}: {problem}")
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
        between_questions=config_pace(config),
    )


def config_pace(config: MatchConfig) -> float | None:
    """The pace a match starts with: ``between_questions`` seconds, or None (the moderator
    advances) when the config turns ``auto_advance`` off."""
    return config.between_questions if config.auto_advance else None
