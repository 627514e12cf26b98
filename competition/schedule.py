"""Tournament formats and schedules (PURE: no Django; the tournament service stores what it plans).

A :class:`Format` is a preliminary round robin (single or double, in one group or several), an
optional qualifier round robin and optional single-elimination playoffs of 2, 4 or 8 teams.

:func:`plan` is stateless: given the teams in seed order and the results so far, it returns every
game that should exist now (the preliminary round robin from the start; the qualifier once the
preliminaries are complete; each playoff round once the one before it is complete). The service
creates the games it does not have yet, so a repeated or late call never duplicates a game.

- Round robins use the circle method: team 0 stays, the others rotate; an odd count gets a bye
  (the team paired with the bye sits the round out). Home and away alternate so a single round
  robin gives every team as many home as away games, give or take one; a double round robin repeats the rounds with home
  and away swapped.
- Groups are filled by snake seeding (seeds 1..k across, then k..1 back, …); a round's games are
  the same round of every group (groups of unequal size have a round or two of byes).
- The qualifier is one round robin of the top ``qualifier`` teams of every group, seeded by group
  rank first and the standings' tie-breaks second (``competition.standings``).
- Playoff seeds come from the last complete round-robin phase the same way; the bracket is
  1–8, 4–5, 2–7, 3–6 (1–4, 2–3; 1–2) and the winners of adjacent games meet. A tied playoff
  game goes to the better seed (the engine plays no tiebreaker tossups).

Rounds are numbered across the tournament (1-based): packets and rooms are assigned per round.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import asdict, dataclass
from typing import Any

from competition import standings as st

PRELIM, QUALIFIER, PLAYOFF = "prelim", "qualifier", "playoff"
PHASES = (PRELIM, QUALIFIER, PLAYOFF)
PLAYOFF_SIZES = (0, 2, 4, 8)


class ScheduleError(ValueError):
    """A format that cannot be played with these teams (the message says why)."""


@dataclass(frozen=True)
class Format:
    """``round_robin``: ``single`` or ``double``; ``groups`` ≥ 1; ``qualifier``: teams per group
    that go on to a qualifier round robin (0: none); ``playoff``: 0, 2, 4 or 8 teams."""

    round_robin: str = "single"
    groups: int = 1
    qualifier: int = 0
    playoff: int = 0

    def check(self, n_teams: int) -> None:
        """Raise ScheduleError unless ``n_teams`` teams can play this format."""
        if self.round_robin not in ("single", "double"):
            raise ScheduleError(f"round_robin must be single or double, not {self.round_robin!r}")
        if n_teams < 2:
            raise ScheduleError("a tournament needs at least 2 teams")
        if self.groups < 1 or n_teams < 2 * self.groups:
            raise ScheduleError(f"{n_teams} teams cannot fill {self.groups} groups of at least 2")
        smallest = n_teams // self.groups
        if self.qualifier < 0 or self.qualifier > smallest:
            raise ScheduleError(f"qualifier takes 0–{smallest} teams per group, not {self.qualifier}")
        if self.qualifier and self.qualifier * self.groups < 2:
            raise ScheduleError("a qualifier round robin needs at least 2 teams")
        if self.playoff not in PLAYOFF_SIZES:
            raise ScheduleError(f"playoffs are of 2, 4 or 8 teams (0: none), not {self.playoff}")
        pool = self.qualifier * self.groups if self.qualifier else n_teams
        if self.playoff > pool:
            raise ScheduleError(f"a playoff of {self.playoff} needs {self.playoff} teams; {pool} qualify")

    def to_dict(self) -> dict[str, Any]:
        return asdict(self)

    @classmethod
    def from_dict(cls, d: dict[str, Any]) -> Format:
        """Raises ScheduleError for unknown keys or wrong types."""
        unknown = set(d) - {"round_robin", "groups", "qualifier", "playoff"}
        if unknown:
            raise ScheduleError(f"unknown format fields: {sorted(unknown)}")
        try:
            return cls(
                round_robin=str(d.get("round_robin", "single")),
                groups=int(d.get("groups", 1)),
                qualifier=int(d.get("qualifier", 0)),
                playoff=int(d.get("playoff", 0)),
            )
        except (TypeError, ValueError) as exc:
            raise ScheduleError(f"bad format: {exc}") from exc


@dataclass(frozen=True)
class Pairing:
    """A game to play: ``phase``, global ``round`` (1-based), ``group`` (0-based; the qualifier and
    playoffs are group 0), ``slot`` (its place in the round, 0-based: a playoff game's bracket slot),
    ``home`` and ``away`` team names."""

    phase: str
    round: int
    group: int
    slot: int
    home: str
    away: str

    @property
    def key(self) -> tuple[str, int, int]:
        """What identifies a game across calls of :func:`plan`."""
        return (self.phase, self.round, self.slot)


def round_robin(teams: Sequence[str], *, double: bool = False) -> list[list[tuple[str, str]]]:
    """Rounds of ``(home, away)`` pairs in which every team meets every other once (twice, home
    and away swapped, when ``double``): n − 1 rounds for n even, n for n odd (one bye a round).
    Raises ScheduleError for duplicate names."""
    if len(set(teams)) != len(teams):
        raise ScheduleError("team names must be unique")
    ring: list[str | None] = list(teams)
    if len(ring) % 2:
        ring.append(None)
    n = len(ring)
    rounds: list[list[tuple[str, str]]] = []
    for r in range(n - 1):
        pairs = []
        for i in range(n // 2):
            a, b = ring[i], ring[n - 1 - i]
            if a is None or b is None:
                continue
            # the fixed team alternates home and away; the others' place on the ring decides
            pairs.append((b, a) if i == 0 and r % 2 else (a, b))
        rounds.append(pairs)
        ring = [ring[0], ring[-1], *ring[1:-1]]
    if double:
        rounds += [[(b, a) for a, b in rnd] for rnd in rounds]
    return rounds


def snake_groups(seeded: Sequence[str], groups: int) -> list[list[str]]:
    """``seeded`` (best first) dealt into ``groups`` groups by snake seeding."""
    out: list[list[str]] = [[] for _ in range(groups)]
    for i, team in enumerate(seeded):
        row, col = divmod(i, groups)
        out[col if row % 2 == 0 else groups - 1 - col].append(team)
    return out


def bracket_order(size: int) -> list[int]:
    """1-based seeds in bracket order: adjacent pairs play, winners of adjacent games meet."""
    order = [1]
    while len(order) < size:
        n = 2 * len(order)
        order = [s for seed in order for s in (seed, n + 1 - seed)]
    return order


def _round_robin_phase(phase: str, groups: list[list[str]], double: bool, first_round: int) -> list[Pairing]:
    out = []
    for g, members in enumerate(groups):
        for r, pairs in enumerate(round_robin(members, double=double)):
            for home, away in pairs:
                out.append(Pairing(phase, first_round + r, g, 0, home, away))
    # slots: the games of a round in group order
    by_round: dict[int, int] = {}
    numbered = []
    for p in sorted(out, key=lambda p: (p.round, p.group)):
        slot = by_round.get(p.round, 0)
        by_round[p.round] = slot + 1
        numbered.append(Pairing(p.phase, p.round, p.group, slot, p.home, p.away))
    return numbered


def _complete(games: Sequence[Pairing], results: dict[tuple[str, int, int], st.GameResult]) -> bool:
    return all(g.key in results for g in games)


def _seeds(groups: list[list[str]], phase_results: list[st.GameResult], take: int | None) -> list[str]:
    """Teams ranked by group rank first, the standings' tie-breaks second; ``take`` per group."""
    ranked_groups = []
    for members in groups:
        inside = [r for r in phase_results if {t.team for t in r.teams} <= set(members)]
        table = st.compute(inside, members)
        ranked_groups.append(list(table.teams)[: take or len(members)])
    overall = st.compute(phase_results, [t for g in groups for t in g])
    position = {s.team: i for i, s in enumerate(overall.teams)}
    tiers: list[str] = []
    depth = max(len(g) for g in ranked_groups)
    for k in range(depth):
        tier = [g[k].team for g in ranked_groups if k < len(g)]
        tiers += sorted(tier, key=position.__getitem__)
    return tiers


@dataclass(frozen=True)
class Plan:
    """What :func:`plan` finds: every game that should exist now (in round and slot order), the
    playoff seeds once known (best first) and the champion once the final is played."""

    games: tuple[Pairing, ...]
    playoff_seeds: tuple[str, ...] = ()
    champion: str | None = None


def plan(fmt: Format, teams: Sequence[str], results: Sequence[tuple[Pairing, st.GameResult]]) -> Plan:
    """The games that should exist given ``results`` (``(pairing, result)`` of finished games);
    ``teams`` in seed order. Raises ScheduleError for a format these teams cannot play."""
    fmt.check(len(teams))
    done = {p.key: r for p, r in results}
    groups = snake_groups(teams, fmt.groups)
    prelim = _round_robin_phase(PRELIM, groups, fmt.round_robin == "double", 1)
    games = list(prelim)
    if not _complete(prelim, done):
        return Plan(tuple(games))
    next_round = max(p.round for p in prelim) + 1
    last_groups, last_games = groups, prelim
    if fmt.qualifier:
        qualified = _seeds(groups, [done[p.key] for p in prelim], fmt.qualifier)
        qualifier = _round_robin_phase(QUALIFIER, [qualified], False, next_round)
        games += qualifier
        if not _complete(qualifier, done):
            return Plan(tuple(games))
        next_round = max(p.round for p in qualifier) + 1
        last_groups, last_games = [qualified], qualifier
    if not fmt.playoff:
        return Plan(tuple(games))
    seeds = _seeds(last_groups, [done[p.key] for p in last_games], None)[: fmt.playoff]
    seed_of = {team: i for i, team in enumerate(seeds)}
    alive = [seeds[s - 1] for s in bracket_order(fmt.playoff)]
    while len(alive) > 1:
        bracket = [
            Pairing(PLAYOFF, next_round, 0, i // 2, alive[i], alive[i + 1]) for i in range(0, len(alive), 2)
        ]
        games += bracket
        if not _complete(bracket, done):
            return Plan(tuple(games), tuple(seeds))
        alive = [_advances(p, done[p.key], seed_of) for p in bracket]
        next_round += 1
    return Plan(tuple(games), tuple(seeds), alive[0])


def _advances(p: Pairing, result: st.GameResult, seed_of: dict[str, int]) -> str:
    """The winner of a playoff game; on a tie the better (lower) seed."""
    return result.winner or min((p.home, p.away), key=seed_of.__getitem__)
