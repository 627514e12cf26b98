"""A tournament's YellowFruit-style statistics (``scoring.stats``) and its YellowFruit and SQBS
exports (``formats.yft``, ``formats.sqbs``).

The statistics are built from the game results the caller passes (``tournaments.results``, or the
official ones once results are reviewed): each player's ``tossups_heard`` is taken from its line
(today every seat of a game hears all its tossups; with lineups, the tossups it was in for).
Bounceback points are not split from a game's live result, so bounceback % shows unknown.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterable
from typing import Any

from competition import standings as st
from competition import tournaments
from competition.models import Tournament
from formats import sqbs, yft
from scoring import stats
from scoring.rules import load_preset


def games(results: Iterable[st.GameResult]) -> list[stats.Game]:
    """``results`` as the statistics' games: answers counted by value from each player's ruled
    buzzes; bonus points and bonuses heard as recorded (not derived)."""
    out = []
    for r in results:
        sides = tuple(
            stats.TeamGame(
                team=line.team,
                points=line.points,
                players=tuple(
                    stats.PlayerGame(p.name, p.tossups_heard, dict(Counter(v for v, _ in p.buzzes)))
                    for p in line.players
                ),
                bonuses_heard=line.bonuses_heard,
                known_bonus_points=line.bonus_points,
            )
            for line in r.teams
        )
        out.append(stats.Game(r.key, r.tossups_read, (sides[0], sides[1])))
    return out


def rules(tournament: Tournament) -> stats.Rules:
    """The statistics' rules of the tournament's preset (bouncebacks off: see the module)."""
    preset = load_preset(tournament.preset)
    return stats.Rules(
        power_above=preset.ten,
        bonus_part=preset.bonus_part_value,
        bonus_max=preset.bonus_part_value * preset.bonus_parts,
    )


def tournament_stats(tournament: Tournament, results: Iterable[st.GameResult] | None = None) -> stats.Stats:
    """The statistics of ``results`` (default: the official results, as the standings count them,
    ``tournaments.official_results``), every team of the tournament listed."""
    if results is None:
        results = [r for _, r in tournaments.official_results(tournament)]
    return stats.compute(games(results), [t.name for t in tournament.teams.all()], rules(tournament))


def sqbs_text(tournament: Tournament) -> str:
    """The tournament's ended games as an SQBS file (``formats.sqbs``)."""
    return sqbs.to_sqbs(tournaments.qbj_tournament(tournament))


def yft_document(tournament: Tournament) -> dict[str, Any]:
    """The tournament's ended games as a YellowFruit 4 ``.yft`` document (``formats.yft``)."""
    return yft.to_yft(tournaments.qbj_tournament(tournament), power_above=rules(tournament).power_above)
