"""YellowFruit-style statistics (scoring.stats): every figure checked against a hand computation,
shared places, unknown figures, bouncebacks, forfeits and fractional games played."""

from __future__ import annotations

from fractions import Fraction

import pytest

from scoring import stats
from scoring.stats import Game, PlayerGame, Rules, TeamGame


def _game(key, read, a, b):
    return Game(key, read, (a, b))


# Game 1: Alpha 215 – Beta 120, 20 tossups. Alpha's tossups: Ann 2×15 + 3×10 − 5 = 55, Abe (in for
# 10 tossups) 2×10 = 20: 75, so 140 bonus points on 7 bonuses heard (2 + 3 + 2 gets). Beta's: Bob
# 4×10 − 2×5 = 30, Bea 15 + 10 = 25: 55, so 65 on 6 heard.
# Game 2: Alpha 100 – Gamma 100 (a tie), 20 tossups. Ann 4×10 = 40 (bonus 60 on 4); Abe sat out;
# Gil 15 + 3×10 = 45 (bonus 55 on 4).
G1 = _game(
    "r1",
    20,
    TeamGame("Alpha", 215, (PlayerGame("Ann", 20, {15: 2, 10: 3, -5: 1}), PlayerGame("Abe", 10, {10: 2}))),
    TeamGame("Beta", 120, (PlayerGame("Bob", 20, {10: 4, -5: 2}), PlayerGame("Bea", 20, {15: 1, 10: 1}))),
)
G2 = _game(
    "r2",
    20,
    TeamGame("Alpha", 100, (PlayerGame("Ann", 20, {10: 4}), PlayerGame("Abe", 0, {}))),
    TeamGame("Gamma", 100, (PlayerGame("Gil", 20, {15: 1, 10: 3}),)),
)


def test_team_figures_are_yellowfruits_formulas_computed_by_hand():
    s = stats.compute([G1, G2], ["Alpha", "Beta", "Gamma", "Delta"])
    alpha = s.team("Alpha")
    assert (alpha.wins, alpha.losses, alpha.ties) == (1, 0, 1)
    assert alpha.win_pct == Fraction(3, 4)
    assert (alpha.points, alpha.tossups_heard) == (315, 40)
    assert alpha.pptuh == Fraction(315, 40) and alpha.p20tuh == Fraction(315 * 20, 40)  # 7.875, 157.5
    assert (alpha.bonus_points, alpha.bonuses_heard) == (200, 11)
    assert alpha.ppb == Fraction(200, 11)
    assert stats.split(alpha.answers, s.rules) == (2, 9, 1)
    beta = s.team("Beta")
    assert beta.ppb == Fraction(65, 6) and beta.win_pct == 0 and beta.pptuh == 6
    row = stats.team_row(alpha, s.rules)
    assert row["win_pct"] == 0.75 and row["ppb"] == 18.18 and row["pptuh"] == 7.88 and row["p20tuh"] == 157.5
    assert (row["powers"], row["tens"], row["negs"]) == (2, 9, 1)
    # ranked by win %, then PPTUH; Delta, without a game, last with every ratio unknown
    assert [t.team for t in s.teams] == ["Alpha", "Gamma", "Beta", "Delta"]
    assert [t.rank for t in s.teams] == ["1", "2", "3", "4"]


def test_player_figures_fractional_games_played_and_individual_ranks():
    s = stats.compute([G1, G2])
    ann, abe = s.player("Alpha", "Ann"), s.player("Alpha", "Abe")
    assert ann.games_played == 2 and ann.tossups_heard == 40 and ann.points == 95
    assert ann.pptuh == Fraction(95, 40) and ann.p20tuh == Fraction(95, 2)  # 2.375, 47.5
    # Abe heard 10 of game 1's 20 tossups and none of game 2's: half a game, not two
    assert abe.games_played == Fraction(1, 2) and abe.tossups_heard == 10 and abe.pptuh == 2
    assert stats.player_row(abe, s.rules)["games_played"] == 0.5
    order = [(p.player, p.rank) for p in s.players]
    assert order == [("Ann", "1"), ("Gil", "2"), ("Abe", "3"), ("Bob", "4"), ("Bea", "5")]
    assert stats.player_row(s.player("Beta", "Bea"), s.rules)["p20tuh"] == 25.0


def test_unknown_figures_are_none_and_shown_as_a_dash_never_zero():
    shutout = _game(
        "r1",
        20,
        TeamGame("Alpha", 0, (PlayerGame("Ann", 20, {}),)),
        TeamGame("Beta", 0, (PlayerGame("Bob", 20),)),
    )
    s = stats.compute([shutout], ["Alpha", "Beta", "Idle"])
    alpha, idle = s.team("Alpha"), s.team("Idle")
    assert alpha.bonuses_heard == 0 and alpha.ppb is None  # no bonus heard: PPB unknown, not 0
    assert alpha.pptuh == 0  # 0 points on 20 tossups is a real 0
    assert idle.win_pct is None and idle.pptuh is None and idle.ppb is None and idle.p20tuh is None
    row = stats.team_row(idle, s.rules)
    assert row["win_pct"] is None and row["ppb"] is None and row["pptuh"] is None
    assert row["bounceback_pct"] is None  # bonuses do not bounce under these rules
    assert stats.fmt(alpha.ppb, 2) == "—" and stats.fmt(alpha.pptuh, 2) == "0.00"
    # a player who heard no tossup is no line at all (YellowFruit leaves such games out)
    none = _game("r2", 20, TeamGame("A", 10, (PlayerGame("x", 0, {}),)), TeamGame("B", 0))
    assert stats.compute([none]).players == ()


def test_tied_places_share_the_rank_marked_with_an_equals_sign():
    assert stats.tied_ranks([5, 4, 4, 3, 3, 3, 1]) == ["1", "2=", "2=", "4=", "4=", "4=", "7"]
    assert stats.tied_ranks([]) == [] and stats.tied_ranks([None, None]) == ["1=", "1="]
    twin = [
        _game("a", 20, TeamGame("A", 100, (PlayerGame("a1", 20, {10: 5}),)), TeamGame("B", 50, (PlayerGame("b1", 20, {10: 2}),))),
        _game("c", 20, TeamGame("C", 100, (PlayerGame("c1", 20, {10: 5}),)), TeamGame("D", 50, (PlayerGame("d1", 20, {10: 2}),))),
    ]  # fmt: skip
    s = stats.compute(twin)
    assert [(t.team, t.rank) for t in s.teams] == [("A", "1="), ("C", "1="), ("B", "3="), ("D", "3=")]
    assert [p.rank for p in s.players] == ["1=", "1=", "3=", "3="]


def test_bounceback_conversion_under_bouncing_bonuses():
    # Alpha got 2 bonuses for 40 (of 60): 2 parts went begging, Beta bounced 1 of them (10 points).
    # Beta got 1 bonus for 10 (of 30): 2 parts begging, Alpha bounced none.
    game = _game(
        "r1",
        20,
        TeamGame("Alpha", 60, (PlayerGame("Ann", 20, {10: 2}),)),
        TeamGame("Beta", 30, (PlayerGame("Bob", 20, {10: 1}),), bounceback_points=10),
    )
    rules = Rules(bouncebacks=True)
    s = stats.compute([game], rules=rules)
    beta, alpha = s.team("Beta"), s.team("Alpha")
    assert beta.bonus_points == 10 and beta.bounceback_parts_heard == 2 and beta.bounceback_pct(rules) == 50
    assert alpha.bounceback_parts_heard == 2 and alpha.bounceback_pct(rules) == 0
    assert stats.compute([game]).team("Beta").bounceback_pct(Rules()) is None  # not tracked: unknown
    assert (
        stats.round_half_up(Fraction(25, 2)) == 13 and stats.round_half_up(Fraction(-1, 2)) == 0
    )  # JS Math.round


def test_a_forfeit_counts_in_the_record_not_in_the_figures():
    forfeit = _game("r1", 0, TeamGame("A", 0), TeamGame("B", 0, forfeit_loss=True))
    s = stats.compute([forfeit, G1])
    a, b = s.team("A"), s.team("B")
    assert (a.wins, a.losses, b.wins, b.losses) == (1, 0, 0, 1)
    assert a.tossups_heard == 0 and a.pptuh is None and a.games_with_stats == 0


def test_caller_given_bonuses_heard_and_bonus_points_win_over_the_derivation():
    # a bonus cut short by the end is not heard, and a moderator's +5 adjustment is no bonus
    side = TeamGame("A", 45, (PlayerGame("a", 20, {10: 2}),), bonuses_heard=1, known_bonus_points=20)
    s = stats.compute([_game("r1", 20, side, TeamGame("B", 0))])
    assert s.team("A").bonuses_heard == 1 and s.team("A").ppb == 20


@pytest.mark.parametrize(
    "games, message",
    [
        ([_game("x", 20, TeamGame("A", 0), TeamGame("A", 0))], "cannot play itself"),
        ([_game("x", 10, TeamGame("A", 0, (PlayerGame("a", 11),)), TeamGame("B", 0))], "heard 11 of 10"),
    ],
)
def test_impossible_games_are_refused(games, message):
    with pytest.raises(ValueError, match=message):
        stats.compute(games)
