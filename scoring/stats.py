"""Tournament statistics as YellowFruit computes them (PURE: no Django).

The formulas are YellowFruit 4's (github ANadig/YellowFruit, ``src/renderer/DataModel/
StatSummaries.ts`` ``PoolTeamStats``/``PlayerStats``, ``MatchTeam.ts``, ``Match.ts``,
``HTMLReports.ts``), for two-team games:

- **bonus points** of a team in a game = its points − its tossup points − its bounceback points;
- **bonuses heard** = the team's correct tossups (powers + tens), unless the caller knows better
  (``TeamGame.bonuses_heard``: Tossup records a bonus cut short by the end of a game as unheard,
  and ``known_bonus_points``: its scores include moderator adjustments, which are no bonus);
- **PPB** = bonus points / bonuses heard;
- **PPTUH** = points / tossups heard (a team hears every tossup read in its games; a player the
  tossups it was on the buzzer for); **P/20TUH** = 20 × PPTUH (YellowFruit's "PP20TUH", regulation
  count 20);
- **bounceback %** = round(100 × parts converted / parts heard), parts converted = bounceback
  points / points per part, parts heard = (opponent's bonuses heard × the most a bonus scores −
  opponent's bonus points) / points per part; only under bouncing bonuses;
- **GP** (fractional games played) of a player = Σ over games of its tossups heard / tossups read;
  a game with no tossup heard is not a game played;
- **win %** = (wins + ties / 2) / games; a forfeit counts in the record, not in the figures.

A figure that cannot be computed is **unknown**, ``None`` (shown "—"), never 0: PPB without a bonus
heard, PPTUH without a tossup heard, win % without a game, bounceback % without bouncing bonuses or
without a part to bounce. Ratios are exact fractions; ``row()`` rounds them for display.

Ranks (:func:`tied_ranks`) follow YellowFruit: entries equal on the ranking key share the rank of
the first of them and are shown with "=" after it ("3=": the third place, shared). Teams are ranked
by win %, then PPTUH (SQBS's and YellowFruit's "record, then PPG"), players by PPTUH, unknown last.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from fractions import Fraction

#: YellowFruit's regulation tossup count, the "20" of P/20TUH.
PER_TOSSUPS = 20


@dataclass(frozen=True)
class Rules:
    """What the figures need to know of the format: ``power_above`` a correct tossup's plain value
    (more is a power), ``bonus_part`` the points of one bonus part and ``bonus_max`` the most a
    bonus scores (for bounceback parts), ``bouncebacks`` whether bonuses bounce back."""

    power_above: int = 10
    bonus_part: int = 10
    bonus_max: int = 30
    bouncebacks: bool = False


@dataclass(frozen=True)
class PlayerGame:
    """A player's line in one game: ``tossups_heard`` (the game's tossups read when the player
    played it all) and ``answers`` ``{tossup value: count}`` (e.g. ``{15: 1, 10: 2, -5: 1}``)."""

    name: str
    tossups_heard: int
    answers: Mapping[int, int] = field(default_factory=dict)

    @property
    def points(self) -> int:
        return sum(v * n for v, n in self.answers.items())


@dataclass(frozen=True)
class TeamGame:
    """One side of a game: ``points`` its final score; ``bounceback_points`` points it took on the
    other team's bonuses; ``bonuses_heard`` and ``known_bonus_points`` None to derive them as
    YellowFruit does (from the correct tossups; from the score), or what the caller recorded."""

    team: str
    points: int
    players: tuple[PlayerGame, ...] = ()
    bounceback_points: int = 0
    bonuses_heard: int | None = None
    known_bonus_points: int | None = None
    forfeit_loss: bool = False

    @property
    def tossup_points(self) -> int:
        return sum(p.points for p in self.players)

    @property
    def bonus_points(self) -> int:
        if self.known_bonus_points is not None:
            return self.known_bonus_points
        return self.points - self.tossup_points - self.bounceback_points

    def heard(self) -> int:
        """Bonuses heard: given, or the correct tossups."""
        if self.bonuses_heard is not None:
            return self.bonuses_heard
        return sum(n for p in self.players for v, n in p.answers.items() if v > 0)


@dataclass(frozen=True)
class Game:
    """A two-team game; ``tossups_read`` the tossups read in it (the team's tossups heard)."""

    key: str
    tossups_read: int
    teams: tuple[TeamGame, TeamGame]

    @property
    def forfeit(self) -> bool:
        return any(t.forfeit_loss for t in self.teams)


def _ratio(num: int | Fraction, den: int | Fraction) -> Fraction | None:
    return Fraction(num) / Fraction(den) if den else None


@dataclass
class TeamStats:
    """A team's figures over its games (see the module for each formula)."""

    team: str
    wins: int = 0
    losses: int = 0
    ties: int = 0
    games_with_stats: int = 0
    tossups_heard: int = 0
    points: int = 0
    points_against: int = 0
    answers: dict[int, int] = field(default_factory=dict)
    bonus_points: int = 0
    bonuses_heard: int = 0
    bounceback_points: int = 0
    bounceback_parts_heard: Fraction = Fraction(0)
    bouncebacks: bool = False
    rank: str = ""

    @property
    def games(self) -> int:
        return self.wins + self.losses + self.ties

    @property
    def win_pct(self) -> Fraction | None:
        return _ratio(2 * self.wins + self.ties, 2 * self.games)

    @property
    def ppb(self) -> Fraction | None:
        return _ratio(self.bonus_points, self.bonuses_heard)

    @property
    def pptuh(self) -> Fraction | None:
        return _ratio(self.points, self.tossups_heard)

    @property
    def p20tuh(self) -> Fraction | None:
        x = self.pptuh
        return None if x is None else x * PER_TOSSUPS

    def bounceback_pct(self, rules: Rules) -> int | None:
        if not self.bouncebacks or not self.bounceback_parts_heard:
            return None
        converted = Fraction(self.bounceback_points, rules.bonus_part)
        return round_half_up(100 * converted / self.bounceback_parts_heard)


@dataclass
class PlayerStats:
    """A player's figures over the games it heard a tossup in."""

    player: str
    team: str
    games_played: Fraction = Fraction(0)
    tossups_heard: int = 0
    answers: dict[int, int] = field(default_factory=dict)
    rank: str = ""

    @property
    def points(self) -> int:
        return sum(v * n for v, n in self.answers.items())

    @property
    def pptuh(self) -> Fraction | None:
        return _ratio(self.points, self.tossups_heard)

    @property
    def p20tuh(self) -> Fraction | None:
        x = self.pptuh
        return None if x is None else x * PER_TOSSUPS


def round_half_up(x: Fraction) -> int:
    """JavaScript's ``Math.round`` (halves up), as YellowFruit rounds percentages."""
    return int((x + Fraction(1, 2)).__floor__())


def split(answers: Mapping[int, int], rules: Rules) -> tuple[int, int, int]:
    """``(powers, tens, negs)`` of answer counts: more than ``power_above`` a power, a positive value
    up to it a ten, a negative one a neg (0-point answers are neither)."""
    powers = sum(n for v, n in answers.items() if v > rules.power_above)
    tens = sum(n for v, n in answers.items() if 0 < v <= rules.power_above)
    negs = sum(n for v, n in answers.items() if v < 0)
    return powers, tens, negs


@dataclass(frozen=True)
class Stats:
    """Teams and players in rank order, with their display ranks."""

    teams: tuple[TeamStats, ...]
    players: tuple[PlayerStats, ...]
    rules: Rules

    def team(self, name: str) -> TeamStats:
        return next(t for t in self.teams if t.team == name)

    def player(self, team: str, name: str) -> PlayerStats:
        return next(p for p in self.players if p.team == team and p.player == name)


def compute(games: Iterable[Game], teams: Sequence[str] = (), rules: Rules = Rules()) -> Stats:
    """The statistics of ``games`` (the caller picks them, e.g. only official results); ``teams``
    lists teams to show even without a game. Raises ValueError for a team playing itself or a
    player hearing more tossups than were read."""
    table: dict[str, TeamStats] = {t: TeamStats(t, bouncebacks=rules.bouncebacks) for t in teams}
    people: dict[tuple[str, str], PlayerStats] = {}
    for g in games:
        a, b = g.teams
        if a.team == b.team:
            raise ValueError(f"game {g.key}: a team cannot play itself ({a.team!r})")
        for me, them in ((a, b), (b, a)):
            s = table.setdefault(me.team, TeamStats(me.team, bouncebacks=rules.bouncebacks))
            if g.forfeit:
                s.wins += them.forfeit_loss and not me.forfeit_loss
                s.losses += me.forfeit_loss
                continue
            s.wins += me.points > them.points
            s.losses += me.points < them.points
            s.ties += me.points == them.points
            s.games_with_stats += 1
            s.tossups_heard += g.tossups_read
            s.points += me.points
            s.points_against += them.points
            s.bonus_points += me.bonus_points
            s.bonuses_heard += me.heard()
            if rules.bouncebacks:
                s.bounceback_points += me.bounceback_points
                s.bounceback_parts_heard += Fraction(
                    them.heard() * rules.bonus_max - them.bonus_points, rules.bonus_part
                )
            for p in me.players:
                if p.tossups_heard > g.tossups_read:
                    raise ValueError(
                        f"game {g.key}: {p.name!r} heard {p.tossups_heard} of {g.tossups_read} tossups"
                    )
                for v, n in p.answers.items():
                    s.answers[v] = s.answers.get(v, 0) + n
                if p.tossups_heard <= 0:
                    continue
                ps = people.setdefault((me.team, p.name), PlayerStats(p.name, me.team))
                ps.games_played += Fraction(p.tossups_heard, g.tossups_read)
                ps.tossups_heard += p.tossups_heard
                for v, n in p.answers.items():
                    ps.answers[v] = ps.answers.get(v, 0) + n
    ranked = sorted(table.values(), key=lambda t: (_desc(t.win_pct), _desc(t.pptuh), t.team))
    for t, r in zip(ranked, tied_ranks([(t.win_pct, t.pptuh) for t in ranked]), strict=True):
        t.rank = r
    players = sorted(people.values(), key=lambda p: (_desc(p.pptuh), -p.tossups_heard, p.team, p.player))
    for ps, r in zip(players, tied_ranks([ps.pptuh for ps in players]), strict=True):
        ps.rank = r
    return Stats(tuple(ranked), tuple(players), rules)


def _desc(x: Fraction | None) -> tuple[int, Fraction]:
    """Sort key: larger first, unknown last."""
    return (1, Fraction(0)) if x is None else (0, -x)


def tied_ranks(keys: Sequence[object]) -> list[str]:
    """Display ranks of entries already in rank order: ``"1"``, ``"2="``, ``"2="``, ``"4"`` —
    equal neighbouring keys share the first one's place, marked "=" (YellowFruit's ``3=``)."""
    out: list[str] = []
    for i, k in enumerate(keys):
        tied_prev = i > 0 and keys[i - 1] == k
        tied_next = i + 1 < len(keys) and keys[i + 1] == k
        place = out[i - 1].rstrip("=") if tied_prev else str(i + 1)
        out.append(place + ("=" if tied_prev or tied_next else ""))
    return out


def fmt(x: Fraction | int | None, places: int) -> str:
    """A figure for display: unknown is "—"."""
    return "—" if x is None else f"{float(x):.{places}f}"


def team_row(t: TeamStats, rules: Rules) -> dict[str, object]:
    """A team's line as JSON-ready values: ratios as floats rounded as YellowFruit shows them (win %
    3 places, PPB 2, PPTUH 2, P/20TUH 2), unknown None."""
    powers, tens, negs = split(t.answers, rules)
    return {
        "rank": t.rank,
        "team": t.team,
        "wins": t.wins,
        "losses": t.losses,
        "ties": t.ties,
        "win_pct": _round(t.win_pct, 3),
        "points": t.points,
        "points_against": t.points_against,
        "tossups_heard": t.tossups_heard,
        "powers": powers,
        "tens": tens,
        "negs": negs,
        "bonuses_heard": t.bonuses_heard,
        "bonus_points": t.bonus_points,
        "ppb": _round(t.ppb, 2),
        "pptuh": _round(t.pptuh, 2),
        "p20tuh": _round(t.p20tuh, 2),
        "bounceback_pct": t.bounceback_pct(rules),
    }


def player_row(p: PlayerStats, rules: Rules) -> dict[str, object]:
    """A player's line as JSON-ready values (GP 2 places, as SQBS writes it)."""
    powers, tens, negs = split(p.answers, rules)
    return {
        "rank": p.rank,
        "player": p.player,
        "team": p.team,
        "games_played": _round(p.games_played, 2),
        "tossups_heard": p.tossups_heard,
        "powers": powers,
        "tens": tens,
        "negs": negs,
        "points": p.points,
        "pptuh": _round(p.pptuh, 2),
        "p20tuh": _round(p.p20tuh, 2),
    }


def _round(x: Fraction | None, places: int) -> float | None:
    return None if x is None else round(float(x), places)
