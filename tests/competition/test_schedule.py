"""The pure tournament core: round robins, groups, qualifier, playoffs (competition.schedule) and
standings with their tie-breaks (competition.standings)."""

from __future__ import annotations

import itertools
import random
from collections import Counter
from fractions import Fraction

import pytest
from hypothesis import given, settings
from hypothesis import strategies as hs

from competition import schedule as sc
from competition import standings as st

NAMES = [f"T{i:02d}" for i in range(1, 21)]


def _result(p: sc.Pairing, home_pts: int, away_pts: int, heard: int = 20) -> st.GameResult:
    return st.GameResult(
        f"{p.phase}-{p.round}-{p.slot}",
        heard,
        (st.TeamLine(p.home, home_pts), st.TeamLine(p.away, away_pts)),
    )


def _play_all(
    fmt: sc.Format, teams: list[str], score
) -> tuple[sc.Plan, list[tuple[sc.Pairing, st.GameResult]]]:
    """Play the tournament to its end: ``score(pairing) -> (home points, away points)``."""
    played: list[tuple[sc.Pairing, st.GameResult]] = []
    for _ in range(100):
        p = sc.plan(fmt, teams, played)
        todo = [g for g in p.games if g.key not in {q.key for q, _ in played}]
        if not todo:
            return p, played
        for g in todo:
            played.append((g, _result(g, *score(g))))
    raise AssertionError("the plan never completed")


@settings(max_examples=60, deadline=None)
@given(n=hs.integers(2, 20), double=hs.booleans())
def test_round_robin_every_pair_meets_once_per_leg_and_once_per_round(n, double):
    teams = NAMES[:n]
    rounds = sc.round_robin(teams, double=double)
    legs = 2 if double else 1
    assert len(rounds) == legs * (n - 1 if n % 2 == 0 else n)
    meetings = Counter(frozenset(pair) for rnd in rounds for pair in rnd)
    assert set(meetings) == {frozenset(c) for c in itertools.combinations(teams, 2)}
    assert set(meetings.values()) == {legs}
    for rnd in rounds:
        playing = [t for pair in rnd for t in pair]
        assert len(playing) == len(set(playing))  # nobody plays twice in a round
        assert len(rnd) == n // 2  # an odd count leaves exactly one team on a bye
    home = Counter(a for rnd in rounds for a, _ in rnd)
    away = Counter(b for rnd in rounds for _, b in rnd)
    for t in teams:
        if double:
            assert home[t] == away[t]
        else:
            assert abs(home[t] - away[t]) <= 1
    if double:  # the second leg is the first with home and away swapped
        half = len(rounds) // 2
        assert rounds[half:] == [[(b, a) for a, b in rnd] for rnd in rounds[:half]]


def test_round_robin_rejects_duplicate_names():
    with pytest.raises(sc.ScheduleError, match="unique"):
        sc.round_robin(["A", "B", "A"])


@given(n=hs.integers(2, 30), k=hs.integers(1, 6))
def test_snake_groups_deal_seeds_back_and_forth(n, k):
    seeded = NAMES[:n] if n <= 20 else [f"S{i}" for i in range(n)]
    groups = sc.snake_groups(seeded, k)
    assert sorted(t for g in groups for t in g) == sorted(seeded)
    sizes = [len(g) for g in groups]
    assert max(sizes) - min(sizes) <= 1
    for g in groups:  # each group's members keep seed order
        assert g == sorted(g, key=seeded.index)
    assert sc.snake_groups(["1", "2", "3", "4", "5", "6"], 2) == [["1", "4", "5"], ["2", "3", "6"]]


def test_bracket_order_meets_the_standard_seeding():
    assert sc.bracket_order(2) == [1, 2]
    assert sc.bracket_order(4) == [1, 4, 2, 3]
    assert sc.bracket_order(8) == [1, 8, 4, 5, 2, 7, 3, 6]


@pytest.mark.parametrize(
    ("fmt", "n", "message"),
    [
        (sc.Format(round_robin="triple"), 4, "single or double"),
        (sc.Format(), 1, "at least 2 teams"),
        (sc.Format(groups=3), 5, "cannot fill 3 groups"),
        (sc.Format(playoff=3), 8, "2, 4 or 8"),
        (sc.Format(playoff=8), 6, "needs 8 teams"),
        (sc.Format(groups=2, qualifier=4), 6, "0–3 teams per group"),
        (sc.Format(groups=2, qualifier=1, playoff=4), 8, "needs 4 teams; 2 qualify"),
    ],
)
def test_formats_that_cannot_be_played_are_refused_with_a_reason(fmt, n, message):
    with pytest.raises(sc.ScheduleError, match=message):
        sc.plan(fmt, NAMES[:n], [])


def test_format_from_dict_refuses_unknown_fields_and_bad_types():
    assert sc.Format.from_dict({"groups": "2", "playoff": 4}) == sc.Format(groups=2, playoff=4)
    with pytest.raises(sc.ScheduleError, match="unknown"):
        sc.Format.from_dict({"group": 2})
    with pytest.raises(sc.ScheduleError, match="bad format"):
        sc.Format.from_dict({"groups": "two"})


def test_strongest_team_wins_a_six_team_round_robin_and_four_team_playoff():
    teams = NAMES[:6]
    strength = {t: 100 - 10 * i for i, t in enumerate(teams)}  # T01 best
    final, played = _play_all(sc.Format(playoff=4), teams, lambda g: (strength[g.home], strength[g.away]))
    prelim = [g for g in final.games if g.phase == sc.PRELIM]
    assert len(prelim) == 15 and max(g.round for g in prelim) == 5
    playoff = [g for g in final.games if g.phase == sc.PLAYOFF]
    assert [(g.round, g.slot, g.home, g.away) for g in playoff] == [
        (6, 0, "T01", "T04"),
        (6, 1, "T02", "T03"),
        (7, 0, "T01", "T02"),
    ]
    assert final.playoff_seeds == ("T01", "T02", "T03", "T04")
    assert final.champion == "T01"
    assert len(played) == 18


def test_playoff_waits_for_the_whole_round_robin_then_for_each_round():
    teams = NAMES[:4]
    fmt = sc.Format(playoff=2)
    first = sc.plan(fmt, teams, [])
    assert {g.phase for g in first.games} == {sc.PRELIM} and first.champion is None
    done = [(g, _result(g, 10, 0)) for g in first.games[:-1]]
    assert sc.plan(fmt, teams, done).games == first.games  # one game left: no playoff yet
    done.append((first.games[-1], _result(first.games[-1], 10, 0)))
    with_final = sc.plan(fmt, teams, done)
    assert [g.phase for g in with_final.games].count(sc.PLAYOFF) == 1


def test_tied_playoff_game_goes_to_the_better_seed():
    teams = ["A", "B"]
    fmt = sc.Format(playoff=2)
    rr = sc.plan(fmt, teams, []).games
    done = [(rr[0], _result(rr[0], 200 if rr[0].home == "B" else 0, 0 if rr[0].home == "B" else 200))]
    final = next(g for g in sc.plan(fmt, teams, done).games if g.phase == sc.PLAYOFF)
    assert final.home == "B"  # B won the round robin: seed 1
    done.append((final, _result(final, 50, 50)))
    assert sc.plan(fmt, teams, done).champion == "B"


def test_groups_then_qualifier_then_playoff():
    teams = NAMES[:8]
    strength = {t: 200 - 10 * i for i, t in enumerate(teams)}
    fmt = sc.Format(groups=2, qualifier=2, playoff=2)
    final, _ = _play_all(fmt, teams, lambda g: (strength[g.home], strength[g.away]))
    prelim = [g for g in final.games if g.phase == sc.PRELIM]
    groups = {g.group: set() for g in prelim}
    for g in prelim:
        groups[g.group] |= {g.home, g.away}
    assert groups == {0: {"T01", "T04", "T05", "T08"}, 1: {"T02", "T03", "T06", "T07"}}
    qualifier = [g for g in final.games if g.phase == sc.QUALIFIER]
    assert {t for g in qualifier for t in (g.home, g.away)} == {"T01", "T04", "T02", "T03"}
    assert min(g.round for g in qualifier) == 4 and len(qualifier) == 6
    assert final.playoff_seeds == ("T01", "T02") and final.champion == "T01"


@settings(max_examples=40, deadline=None)
@given(
    n=hs.integers(2, 12),
    double=hs.booleans(),
    groups=hs.integers(1, 3),
    playoff=hs.sampled_from(sc.PLAYOFF_SIZES),
    qualifier=hs.integers(0, 3),
    seed=hs.integers(0, 10**6),
)
def test_any_playable_format_completes_with_one_champion_and_no_duplicate_games(
    n, double, groups, playoff, qualifier, seed
):
    fmt = sc.Format("double" if double else "single", groups, qualifier, playoff)
    teams = NAMES[:n]
    try:
        fmt.check(n)
    except sc.ScheduleError:
        return
    rng = random.Random(seed)
    final, _played = _play_all(fmt, teams, lambda g: (rng.randrange(0, 400, 5), rng.randrange(0, 400, 5)))
    keys = [g.key for g in final.games]
    assert len(keys) == len(set(keys))
    for rnd in {g.round for g in final.games}:
        playing = [t for g in final.games if g.round == rnd for t in (g.home, g.away)]
        assert len(playing) == len(set(playing))
    if playoff:
        assert final.champion in final.playoff_seeds and len(final.playoff_seeds) == playoff
        playoff_games = [g for g in final.games if g.phase == sc.PLAYOFF]
        assert len(playoff_games) == playoff - 1
    else:
        assert final.champion is None


# --- standings -------------------------------------------------------------------------------


def _game(key, a, pa, b, pb, heard=20, **lines):
    return st.GameResult(
        key, heard, (st.TeamLine(a, pa, **lines.get(a, {})), st.TeamLine(b, pb, **lines.get(b, {})))
    )


def test_team_and_player_figures():
    alice = st.PlayerLine("alice", 20, ((15, 3), (10, 40), (-5, 12), (0, 60)))
    bot = st.PlayerLine("bot", 20, ((6, 30),))  # a deflated bot power is a ten
    bob = st.PlayerLine("bob", 20, ((20, 1),))
    g = st.GameResult(
        "g1",
        20,
        (
            st.TeamLine("A", 56, bonus_points=30, bonuses_heard=3, players=(alice, bot)),
            st.TeamLine("B", 40, bonus_points=20, bonuses_heard=1, players=(bob,)),
        ),
    )
    table = st.compute([g])
    a, b = table.team("A"), table.team("B")
    assert (a.rank, a.wins, a.losses, a.points_for, a.points_against) == (1, 1, 0, 56, 40)
    assert (a.powers, a.tens, a.negs, a.tossup_points) == (1, 2, 1, 26)
    assert a.ppb == 10 and b.ppb == 20 and a.ppth == Fraction(56, 20)
    assert (b.powers, b.tens, b.negs) == (1, 0, 0)
    players = {p.player: p for p in table.players}
    assert players["alice"].mean_buzz_position == (3 + 40 + 12 + 60) / 4
    assert (players["alice"].powers, players["alice"].tens, players["alice"].negs) == (1, 1, 1)
    assert (players["bot"].tens, players["bot"].mean_buzz_position) == (1, 30)
    assert a.row()["ppb"] == 10.0 and players["bob"].row()["mean_buzz_position"] == 1


def test_a_team_that_has_not_played_is_ranked_last_with_empty_figures():
    table = st.compute([_game("g", "A", 10, "B", 0)], ["A", "B", "C"])
    assert [t.team for t in table.teams] == ["A", "B", "C"]
    c = table.team("C")
    assert (c.games, c.win_pct, c.ppb, c.ppth) == (0, 0, None, 0)


def test_a_team_cannot_play_itself():
    with pytest.raises(ValueError, match="cannot play itself"):
        st.compute([_game("g", "A", 10, "A", 0)])


def test_ties_count_half_a_win():
    table = st.compute([_game("g1", "A", 100, "B", 100), _game("g2", "C", 0, "A", 10)])
    assert table.team("A").win_pct == Fraction(3, 4)
    assert table.team("B").win_pct == Fraction(1, 2) and table.team("B").ties == 1


def test_head_to_head_breaks_a_tie_before_points():
    # A and B are 1–1; B beat A, although A scored far more overall.
    games = [
        _game("g1", "A", 500, "C", 0),
        _game("g2", "B", 110, "A", 100),
        _game("g3", "C", 50, "B", 40),
    ]
    order = [t.team for t in st.compute(games).teams]
    # A, B, C all 1–1: head-to-head among the three is 1–1 each, so PPTH decides: A, B?, C
    assert order[0] == "A"
    two_way = [
        *games,
        _game("g4", "C", 0, "D", 10),
        _game("g5", "D", 0, "A", 10),
        _game("g6", "D", 0, "B", 10),
    ]
    table = st.compute(two_way)
    a, b = table.team("A"), table.team("B")
    assert a.win_pct == b.win_pct == Fraction(2, 3)
    assert a.ppth > b.ppth
    assert [t.team for t in table.teams][:2] == ["B", "A"]  # head-to-head first


def test_points_per_tossup_heard_then_margin_then_name_break_remaining_ties():
    games = [_game("g1", "A", 300, "X", 0), _game("g2", "B", 200, "Y", 0), _game("g3", "X", 0, "Y", 10)]
    order = [t.team for t in st.compute(games).teams]
    assert order[:2] == ["A", "B"]
    same = [_game("g1", "A", 100, "X", 50), _game("g2", "B", 100, "Y", 0)]
    assert [t.team for t in st.compute(same).teams][:2] == ["B", "A"]  # margin
    equal = [_game("g1", "B", 100, "X", 0), _game("g2", "A", 100, "Y", 0)]
    assert [t.team for t in st.compute(equal).teams][:2] == ["A", "B"]  # name


@settings(max_examples=50, deadline=None)
@given(seed=hs.integers(0, 10**6), n=hs.integers(2, 8))
def test_rank_is_a_total_order_consistent_with_win_percentage(seed, n):
    rng = random.Random(seed)
    teams = NAMES[:n]
    games = [
        _game(f"g{i}", a, rng.randrange(0, 300, 5), b, rng.randrange(0, 300, 5))
        for i, (a, b) in enumerate(itertools.combinations(teams, 2))
    ]
    table = st.compute(games)
    assert sorted(t.team for t in table.teams) == sorted(teams)
    assert [t.rank for t in table.teams] == list(range(1, n + 1))
    pcts = [t.win_pct for t in table.teams]
    assert pcts == sorted(pcts, reverse=True)
    assert sum(t.wins for t in table.teams) == sum(t.losses for t in table.teams)
    assert sum(t.points_for for t in table.teams) == sum(t.points_against for t in table.teams)
    # the order does not depend on the order the results come in
    shuffled = games[:]
    rng.shuffle(shuffled)
    assert [t.team for t in st.compute(shuffled).teams] == [t.team for t in table.teams]


def test_table_text_lists_every_team_and_player():
    g = st.GameResult(
        "g", 20, (st.TeamLine("A", 30, players=(st.PlayerLine("al", 20, ((15, 2),)),)), st.TeamLine("B", 0))
    )
    text = st.table_text(st.compute([g]))
    assert " 1 A " in text and " 2 B " in text and "al" in text
