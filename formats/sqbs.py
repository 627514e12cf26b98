"""SQBS tournament files (``.sqbs``, Stuart Shapiro's SQBS; the layout YellowFruit 4 exports,
``src/renderer/DataModel/SqbsFileGeneration.ts`` in github ANadig/YellowFruit).

A file is one value a line: the teams (count; per team its line count, its name, its players),
the games (count; per game 17 lines and 8 × 2 player slots of 7 lines), then the settings
(bonus tracking, power/neg stats, tossups heard tracked, reports, the tournament's name, the web
file suffixes), divisions (none: every team "-1"), the 4 tossup point values, the packets and the
exhibition flags. A game's lines: its id, the two teams' 0-based indexes, their scores, tossups
heard, round, bonuses heard and bonus points of each side, overtime (flag, each side's overtime
tossups without bonus), forfeit, lightning points of each side; a player slot is its 0-based index
on the roster (−1 empty), games played (its tossups heard / the game's, 2 decimals), its number
of answers for each point value, its tossup points.

Written from :class:`formats.qbj.Tournament` records (``to_sqbs``) and read back into
:class:`SqbsFile` (``read_sqbs``). Not written: bouncebacks (SQBS packs them as 10000 × bounceback
+ bonus; Tossup's presets do not bounce), overtime, lightning rounds, forfeits, divisions.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from formats import qbj
from formats.errors import FormatError

#: SQBS's player slots per team and game, and its tossup point values.
SLOTS, VALUES = 8, 4
#: SQBS's web report file suffixes, as YellowFruit writes them.
SUFFIXES = (
    "_rounds.html",
    "_standings.html",
    "_individuals.html",
    "_games.html",
    "_teamdetail.html",
    "_playerdetail.html",
    "_statkey.html",
)


@dataclass(frozen=True)
class SqbsSide:
    """One side of a game: ``players`` with their tossups heard (GP × the game's tossups heard,
    rounded) and answer counts."""

    team: str
    score: int
    bonuses_heard: int
    bonus_points: int
    players: tuple[qbj.MatchPlayer, ...]


@dataclass(frozen=True)
class SqbsGame:
    id: int
    round: int
    tossups_heard: int
    sides: tuple[SqbsSide, SqbsSide]


@dataclass(frozen=True)
class SqbsFile:
    name: str
    teams: tuple[qbj.Team, ...]
    games: tuple[SqbsGame, ...]
    values: tuple[int, ...]
    packets: tuple[str, ...]


def total(mt: qbj.MatchTeam) -> int:
    """A side's score: ``points`` when given, else tossup + bonus + bounceback points."""
    if mt.points is not None:
        return mt.points
    tossups = sum(c.value * c.number for p in mt.match_players for c in p.answer_counts)
    return tossups + (mt.bonus_points or 0) + (mt.bonus_bounceback_points or 0)


def bonuses_heard(m: qbj.Match, mt: qbj.MatchTeam) -> int:
    """The bonuses ``mt`` heard: the questions whose bonus it controlled when the file has them
    (a question whose first scoring buzz is the team's and whose bonus has parts), else its
    correct tossups (YellowFruit's count)."""
    if m.match_questions:
        return sum(
            1
            for q in m.match_questions
            if q.bonus_parts is not None and next((b.team for b in q.buzzes if b.value > 0), None) == mt.team
        )
    return sum(c.number for p in mt.match_players for c in p.answer_counts if c.value > 0)


def round_number(name: str, fallback: int) -> int:
    """The number in a round's name ("Round 3" → 3), else ``fallback``."""
    found = re.search(r"\d+", name)
    return int(found.group()) if found else fallback


def to_sqbs(t: qbj.Tournament) -> str:
    """The SQBS file of ``t`` (lines joined by "\\n"). Raises ValueError for more than 4 non-zero
    tossup values, more than 8 players of a side hearing tossups, a match without two teams or
    naming a team or player not registered."""
    teams = [team for reg in t.registrations for team in reg.teams]
    index = {team.name: i for i, team in enumerate(teams)}
    values = sorted(
        {
            c.value
            for m in t.matches
            for mt in m.match_teams
            for p in mt.match_players
            for c in p.answer_counts
        }
        - {0},
        reverse=True,
    )
    if len(values) > VALUES:
        raise ValueError(f"SQBS keeps {VALUES} tossup values, these games have {values}")
    out: list[object] = [len(teams)]
    for team in teams:
        out += [len(team.players) + 1, team.name, *(p.name for p in team.players)]
    out.append(len(t.matches))
    rounds: dict[int, str] = {}
    for n, m in enumerate(t.matches):
        if len(m.match_teams) != 2:
            raise ValueError(f"match {m.key}: SQBS games have 2 teams, not {len(m.match_teams)}")
        for mt in m.match_teams:
            if mt.team not in index:
                raise ValueError(f"match {m.key}: team {mt.team!r} is not registered")
        rnd = round_number(m.round, 1)
        rounds.setdefault(rnd, m.round)
        read = m.tossups_read or len(m.match_questions)
        left, right = m.match_teams
        out += [n, index[left.team], index[right.team], total(left), total(right), read, rnd]
        for mt in (left, right):
            tossups = sum(c.value * c.number for p in mt.match_players for c in p.answer_counts)
            out += [bonuses_heard(m, mt), total(mt) - tossups - (mt.bonus_bounceback_points or 0)]
        out += [0, 0, 0, 0, 0, 0]  # overtime, its tossups per side, forfeit, lightning per side
        sides = [_slots(m, mt, teams[index[mt.team]], values, read) for mt in (left, right)]
        for i in range(SLOTS):
            out += sides[0][i] + sides[1][i]
    out += [1, 1, 3, 0, 1, 3, 254, 1, 1, 1, 1, 1, 1, 1, 0, 0, 1, t.name, "", "", "", "", 1, *SUFFIXES, ""]
    out += [0, len(teams), *([-1] * len(teams))]
    out += [*values, *([0] * (VALUES - len(values)))]
    out += [len(rounds), *(rounds[r] for r in sorted(rounds))]
    out += [len(teams), *([0] * len(teams))]
    return "\n".join(str(x) for x in out)


def _slots(
    m: qbj.Match, mt: qbj.MatchTeam, team: qbj.Team, values: list[int], read: int
) -> list[list[object]]:
    roster = [p.name for p in team.players]
    played = [p for p in mt.match_players if p.tossups_heard > 0]
    if len(played) > SLOTS:
        raise ValueError(
            f"match {m.key}: {len(played)} players of {mt.team!r} heard tossups, SQBS keeps {SLOTS}"
        )
    slots: list[list[object]] = []
    for p in played:
        if p.player not in roster:
            raise ValueError(f"match {m.key}: {p.player!r} is not on {mt.team!r}'s roster")
        counts = {c.value: c.number for c in p.answer_counts}
        gp = f"{p.tossups_heard / read:.2f}" if read else "0.00"
        slots.append(
            [
                roster.index(p.player),
                gp,
                *(counts.get(values[i], 0) if i < len(values) else 0 for i in range(VALUES)),
                sum(c.value * c.number for c in p.answer_counts),
            ]
        )
    return slots + [[-1, 0, 0, 0, 0, 0, 0]] * (SLOTS - len(slots))


class _Lines:
    def __init__(self, text: str, source: str) -> None:
        self.lines = text.splitlines()
        self.source = source
        self.at = 0

    def fail(self, message: str) -> FormatError:
        return FormatError(self.source, self.at, message)

    def text(self) -> str:
        if self.at >= len(self.lines):
            raise FormatError(self.source, self.at + 1, "the file ends early")
        self.at += 1
        return self.lines[self.at - 1].strip()

    def int(self) -> int:
        raw = self.text()
        try:
            return int(raw)
        except ValueError:
            raise self.fail(f"expected a whole number, got {raw!r}") from None

    def float(self) -> float:
        raw = self.text()
        try:
            return float(raw)
        except ValueError:
            raise self.fail(f"expected a number, got {raw!r}") from None


def read_sqbs(text: str, source: str = "file.sqbs") -> SqbsFile:
    """The teams, games and settings of an SQBS file's text. Raises FormatError ``"line N: …"``
    (``source`` the file's name) for a file that ends early or a value of the wrong kind or range. Bonus lines are read as
    written (a bounceback file's packed values are not unpacked)."""
    r = _Lines(text, source)
    teams = []
    for _ in range(r.int()):
        n = r.int()
        name = r.text()
        teams.append(qbj.Team(name, tuple(qbj.Player(r.text()) for _ in range(n - 1))))
    raw = []
    for _ in range(r.int()):
        head = [r.int() for _ in range(7)]  # id, team a, team b, score a, score b, tossups, round
        for i in head[1:3]:
            if not 0 <= i < len(teams):
                raise r.fail(f"team index {i} outside 0..{len(teams) - 1}")
        bonus = [(r.int(), r.int()), (r.int(), r.int())]
        for _ in range(6):
            r.int()
        slots: list[list[tuple[str, float, list[int]]]] = [[], []]
        for _ in range(SLOTS):
            for side, t in enumerate(head[1:3]):
                pid, gp = r.int(), r.float()
                counts = [r.int() for _ in range(VALUES)]
                r.int()  # tossup points: the counts give them
                if pid < 0:
                    continue
                if pid >= len(teams[t].players):
                    raise r.fail(f"player index {pid} not on {teams[t].name!r}")
                slots[side].append((teams[t].players[pid].name, gp, counts))
        raw.append((head, bonus, slots))
    for _ in range(17):
        r.text()
    name = r.text()
    for _ in range(5 + len(SUFFIXES) + 1):
        r.text()
    for _ in range(r.int()):
        r.text()
    for _ in range(r.int()):
        r.int()
    values = [r.int() for _ in range(VALUES)]
    packets = tuple(r.text() for _ in range(r.int()))
    games = []
    for head, bonus, slots in raw:
        gid, a, b, score_a, score_b, tuh, rnd = head
        sides = [
            SqbsSide(
                teams[t].name,
                score,
                *bonus[i],
                tuple(
                    qbj.MatchPlayer(
                        player,
                        round(gp * tuh),
                        tuple(qbj.AnswerCount(values[k], n) for k, n in enumerate(counts) if n and values[k]),
                    )
                    for player, gp, counts in slots[i]
                ),
            )
            for i, (t, score) in enumerate(((a, score_a), (b, score_b)))
        ]
        games.append(SqbsGame(gid, rnd, tuh, (sides[0], sides[1])))
    return SqbsFile(name, tuple(teams), tuple(games), tuple(v for v in values if v), packets)
