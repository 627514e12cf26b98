"""Tournament standings from game results (PURE: no Django; ``competition.schedule`` and the
tournament service use it, and so does the recomputation from an exported QBJ file).

A game result is two :class:`TeamLine` s, each with its total ``points``, its ``bonus_points`` and
``bonuses_heard`` and one :class:`PlayerLine` per seat (``tossups_heard`` and every ruled buzz as
``(value, word_index)``, the 0-based token index, None when unknown).

Buzz values are classified by the points they scored: more than ``power_above`` (default 10, the
value of a plain correct answer) a **power**, from 1 to ``power_above`` a **ten** (a correct answer:
a bot's deflated power, e.g. 15 × 0.4 = 6 under the QANTA preset, counts as a ten), below 0 a
**neg**; a 0-point wrong answer counts only as a buzz (for the buzz positions).

Ranking (documented tie-breaks, applied in this order):

1. win percentage (a tie counts half a win);
2. head-to-head: win percentage in the games played among the teams still tied;
3. points per tossup heard (PPTH, all points: tossups and bonuses);
4. point margin per game ((points for − points against) / games);
5. the team's name (so the order is total and reproducible).

Teams that have not played yet come last, by name.

All ratios are exact fractions, so equal records are equal, never float-near.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from fractions import Fraction

#: Values above this are powers (NAQT/PACE 15, superpower 20).
POWER_ABOVE = 10


@dataclass(frozen=True)
class PlayerLine:
    """One seat in one game: ``buzzes`` its ruled buzzes as ``(points, word_index or None)``."""

    name: str
    tossups_heard: int
    buzzes: tuple[tuple[int, int | None], ...] = ()


@dataclass(frozen=True)
class TeamLine:
    """One side of a game: ``points`` the final score (tossups + bonuses, + adjustments)."""

    team: str
    points: int
    bonus_points: int = 0
    bonuses_heard: int = 0
    players: tuple[PlayerLine, ...] = ()


@dataclass(frozen=True)
class GameResult:
    """A finished game between two teams; ``key`` names it (e.g. ``prelim-r1-g2``)."""

    key: str
    tossups_read: int
    teams: tuple[TeamLine, TeamLine]

    def line(self, team: str) -> TeamLine:
        """The line of ``team``; KeyError when it did not play this game."""
        for t in self.teams:
            if t.team == team:
                return t
        raise KeyError(team)

    @property
    def winner(self) -> str | None:
        """The team with more points, None on a tie."""
        a, b = self.teams
        if a.points == b.points:
            return None
        return a.team if a.points > b.points else b.team


@dataclass
class Counts:
    """Buzz counts shared by team and player standings."""

    powers: int = 0
    tens: int = 0
    negs: int = 0
    tossup_points: int = 0
    positions: list[int] = field(default_factory=list)

    def add(self, value: int, word_index: int | None, power_above: int) -> None:
        if value > power_above:
            self.powers += 1
        elif value > 0:
            self.tens += 1
        elif value < 0:
            self.negs += 1
        self.tossup_points += value
        if word_index is not None:
            self.positions.append(word_index)

    @property
    def mean_buzz_position(self) -> float | None:
        """Mean 0-based token index of the ruled buzzes (None: no buzz with a known position)."""
        return sum(self.positions) / len(self.positions) if self.positions else None


@dataclass
class TeamStanding(Counts):
    team: str = ""
    games: int = 0
    wins: int = 0
    losses: int = 0
    ties: int = 0
    points_for: int = 0
    points_against: int = 0
    tossups_heard: int = 0
    bonus_points: int = 0
    bonuses_heard: int = 0
    rank: int = 0

    @property
    def win_pct(self) -> Fraction:
        return Fraction(2 * self.wins + self.ties, 2 * self.games) if self.games else Fraction(0)

    @property
    def ppb(self) -> Fraction | None:
        """Points per bonus heard."""
        return Fraction(self.bonus_points, self.bonuses_heard) if self.bonuses_heard else None

    @property
    def ppth(self) -> Fraction:
        """Points (all) per tossup heard."""
        return Fraction(self.points_for, self.tossups_heard) if self.tossups_heard else Fraction(0)

    @property
    def margin_per_game(self) -> Fraction:
        return Fraction(self.points_for - self.points_against, self.games) if self.games else Fraction(0)

    def row(self) -> dict[str, object]:
        """The figures as plain JSON-ready values (ratios rounded to 2 decimals)."""
        return {
            "rank": self.rank,
            "team": self.team,
            "games": self.games,
            "wins": self.wins,
            "losses": self.losses,
            "ties": self.ties,
            "points_for": self.points_for,
            "points_against": self.points_against,
            "tossups_heard": self.tossups_heard,
            "powers": self.powers,
            "tens": self.tens,
            "negs": self.negs,
            "bonus_points": self.bonus_points,
            "bonuses_heard": self.bonuses_heard,
            "ppb": _round(self.ppb),
            "ppth": _round(self.ppth),
        }


@dataclass
class PlayerStanding(Counts):
    player: str = ""
    team: str = ""
    games: int = 0
    tossups_heard: int = 0

    def row(self) -> dict[str, object]:
        mean = self.mean_buzz_position
        return {
            "player": self.player,
            "team": self.team,
            "games": self.games,
            "tossups_heard": self.tossups_heard,
            "powers": self.powers,
            "tens": self.tens,
            "negs": self.negs,
            "tossup_points": self.tossup_points,
            "buzzes": len(self.positions),
            "mean_buzz_position": None if mean is None else round(mean, 2),
        }


def _round(x: Fraction | None) -> float | None:
    return None if x is None else round(float(x), 2)


@dataclass(frozen=True)
class Standings:
    """Teams in rank order (1-based ``rank``) and players by team then name."""

    teams: tuple[TeamStanding, ...]
    players: tuple[PlayerStanding, ...]

    def team(self, name: str) -> TeamStanding:
        return next(t for t in self.teams if t.team == name)


def compute(
    results: Iterable[GameResult],
    teams: Sequence[str] = (),
    *,
    power_above: int = POWER_ABOVE,
) -> Standings:
    """Standings of ``results``; ``teams`` lists teams to rank even when they have not played yet
    (every team of a result is ranked too). Raises ValueError for a game whose two sides are the
    same team."""
    results = list(results)
    table: dict[str, TeamStanding] = {t: TeamStanding(team=t) for t in teams}
    people: dict[tuple[str, str], PlayerStanding] = {}
    for g in results:
        a, b = g.teams
        if a.team == b.team:
            raise ValueError(f"game {g.key}: a team cannot play itself ({a.team!r})")
        for me, them in ((a, b), (b, a)):
            s = table.setdefault(me.team, TeamStanding(team=me.team))
            s.games += 1
            s.wins += me.points > them.points
            s.losses += me.points < them.points
            s.ties += me.points == them.points
            s.points_for += me.points
            s.points_against += them.points
            s.tossups_heard += g.tossups_read
            s.bonus_points += me.bonus_points
            s.bonuses_heard += me.bonuses_heard
            for p in me.players:
                ps = people.setdefault((me.team, p.name), PlayerStanding(player=p.name, team=me.team))
                ps.games += 1
                ps.tossups_heard += p.tossups_heard
                for value, where in p.buzzes:
                    s.add(value, where, power_above)
                    ps.add(value, where, power_above)
    ranked = rank(list(table.values()), results)
    for i, s in enumerate(ranked, 1):
        s.rank = i
    players = tuple(sorted(people.values(), key=lambda p: (p.team, p.player)))
    return Standings(tuple(ranked), players)


def head_to_head(team: str, among: set[str], results: Sequence[GameResult]) -> Fraction:
    """``team``'s win percentage in its games against the teams of ``among`` (0 when none)."""
    played = won = 0
    for g in results:
        names = {t.team for t in g.teams}
        if team in names and names - {team} <= among and len(names) == 2:
            played += 2
            won += 2 if g.winner == team else (1 if g.winner is None else 0)
    return Fraction(won, played) if played else Fraction(0)


def rank(table: list[TeamStanding], results: Sequence[GameResult]) -> list[TeamStanding]:
    """``table`` in rank order by the module's tie-breaks."""
    by_pct: dict[Fraction, list[TeamStanding]] = {}
    for s in table:
        if s.games:
            by_pct.setdefault(s.win_pct, []).append(s)
    out: list[TeamStanding] = []
    for pct in sorted(by_pct, reverse=True):
        tied = by_pct[pct]
        names = {s.team for s in tied}
        h2h = {s.team: head_to_head(s.team, names - {s.team}, results) for s in tied}
        out += sorted(tied, key=lambda s: (-h2h[s.team], -s.ppth, -s.margin_per_game, s.team))
    return out + sorted((s for s in table if not s.games), key=lambda s: s.team)


def table_text(standings: Standings) -> str:
    """The standings as a fixed-width text table (teams, then players), for command output."""
    head = f"{'#':>2} {'team':<24} {'W':>2} {'L':>2} {'T':>2} {'PF':>5} {'PA':>5} {'TUH':>4} "
    head += f"{'15':>3} {'10':>3} {'-5':>3} {'PPB':>6} {'PPTH':>6}"
    lines = [head]
    for t in standings.teams:
        ppb = "-" if t.ppb is None else f"{float(t.ppb):.2f}"
        lines.append(
            f"{t.rank:>2} {t.team[:24]:<24} {t.wins:>2} {t.losses:>2} {t.ties:>2} {t.points_for:>5} "
            f"{t.points_against:>5} {t.tossups_heard:>4} {t.powers:>3} {t.tens:>3} {t.negs:>3} "
            f"{ppb:>6} {float(t.ppth):>6.2f}"
        )
    lines.append("")
    lines.append(f"{'player':<28} {'team':<20} {'GP':>2} {'TUH':>4} {'15':>3} {'10':>3} {'-5':>3} {'pos':>6}")
    for p in standings.players:
        mean = p.mean_buzz_position
        pos = "-" if mean is None else f"{mean:.1f}"
        lines.append(
            f"{p.player[:28]:<28} {p.team[:20]:<20} {p.games:>2} {p.tossups_heard:>4} {p.powers:>3} "
            f"{p.tens:>3} {p.negs:>3} {pos:>6}"
        )
    return "\n".join(lines)
