"""SQBS (.sqbs) and YellowFruit (.yft) files: written from QBJ records and read back with our own
readers (teams, players, games, scores, tossups heard, answer counts), the layouts compared by hand
with YellowFruit 4's writer and reader (SqbsFileGeneration.ts, FileParsing.ts), and bad files
refused with their line."""

from __future__ import annotations

import json

import pytest

from formats import qbj, sqbs, yft
from formats.errors import FormatError

P, T, MP, AC = qbj.Player, qbj.Team, qbj.MatchPlayer, qbj.AnswerCount
TOURNAMENT = qbj.Tournament(
    "Spring Open",
    (
        qbj.Registration("North High", (T("North A", (P("Ann"), P("Abe"), P("Amy"))), T("North B", (P("Ben"),)))),
        qbj.Registration("South High", (T("South", (P("Sam"), P("Sue"))),)),
    ),
    (
        qbj.Match(
            "m1",
            (
                # Ann 15 + 2×10 − 5 = 30 and Abe, in for 10 tossups, 10: 40 tossup points + 60 bonus
                qbj.MatchTeam("North A", bonus_points=60, match_players=(
                    MP("Ann", 20, (AC(15, 1), AC(10, 2), AC(-5, 1))), MP("Abe", 10, (AC(10, 1),)), MP("Amy", 0, ()))),
                qbj.MatchTeam("South", points=70, match_players=(MP("Sam", 20, (AC(10, 3),)), MP("Sue", 20, ()))),
            ),
            phase="Preliminary Rounds",
            round="Round 1",
            tossups_read=20,
        ),
        qbj.Match(
            "m2",
            (
                qbj.MatchTeam("North B", points=45, match_players=(MP("Ben", 18, (AC(15, 1), AC(0, 1))),)),
                qbj.MatchTeam("South", points=50, match_players=(MP("Sam", 18, (AC(10, 2),)), MP("Sue", 18, (AC(-5, 1),)))),
            ),
            phase="Preliminary Rounds",
            round="Round 2",
            tossups_read=18,
        ),
    ),
)  # fmt: skip


def test_sqbs_reads_back_teams_players_games_scores_and_answers():
    back = sqbs.read_sqbs(sqbs.to_sqbs(TOURNAMENT))
    assert back.name == "Spring Open" and back.values == (15, 10, -5)  # SQBS keeps no 0-point answer
    assert [(t.name, [p.name for p in t.players]) for t in back.teams] == [
        ("North A", ["Ann", "Abe", "Amy"]),
        ("North B", ["Ben"]),
        ("South", ["Sam", "Sue"]),
    ]
    g1, g2 = back.games
    assert (g1.round, g1.tossups_heard, g2.round, g2.tossups_heard) == (1, 20, 2, 18)
    north, south = g1.sides
    assert (north.team, north.score, north.bonuses_heard, north.bonus_points) == ("North A", 100, 4, 60)
    assert (south.team, south.score, south.bonuses_heard, south.bonus_points) == ("South", 70, 3, 40)
    # players who heard no tossup are not written; GP 10/20 = 0.50 reads back as 10 tossups
    assert north.players == (MP("Ann", 20, (AC(15, 1), AC(10, 2), AC(-5, 1))), MP("Abe", 10, (AC(10, 1),)))
    assert south.players == (MP("Sam", 20, (AC(10, 3),)), MP("Sue", 20, ()))
    assert g2.sides[0].players == (MP("Ben", 18, (AC(15, 1),)),) and g2.sides[0].score == 45


def test_sqbs_layout_matches_yellowfruits_writer():
    """Compared by hand with YellowFruit 4's SqbsFileGeneration.ts: the team block, then per game
    17 lines and 8 × 2 player slots of 7, the 17 settings lines, the name, 4 FTP lines, 1, 7
    suffixes, a blank, divisions (none: 0, the team count, −1 each), 4 tossup values, packets,
    exhibition flags."""
    lines = sqbs.to_sqbs(TOURNAMENT).split("\n")
    assert lines[:12] == [
        "3",
        "4",
        "North A",
        "Ann",
        "Abe",
        "Amy",
        "2",
        "North B",
        "Ben",
        "3",
        "South",
        "Sam",
    ]
    at = 13  # after "Sue": the game count
    assert lines[at - 1] == "Sue" and lines[at] == "2"
    game = lines[at + 1 : at + 1 + 17 + 8 * 2 * 7]
    # id, teams 0 and 2, scores, tossups, round, bonuses heard/points per side, overtime ×3, forfeit, lightning ×2
    assert game[:17] == [
        "0",
        "0",
        "2",
        "100",
        "70",
        "20",
        "1",
        "4",
        "60",
        "3",
        "40",
        "0",
        "0",
        "0",
        "0",
        "0",
        "0",
    ]
    # first slots: Ann (index 0, GP 1.00, one 15, two 10s, one −5, 30) then Sam for the other side
    assert game[17:31] == ["0", "1.00", "1", "2", "1", "0", "30", "0", "1.00", "0", "3", "0", "0", "30"]
    settings = at + 1 + 2 * (17 + 112)
    assert lines[settings : settings + 3] == ["1", "1", "3"] and lines[settings + 17] == "Spring Open"
    assert lines[settings + 23 : settings + 30] == list(sqbs.SUFFIXES)
    tail = lines[settings + 31 :]
    assert tail[:5] == ["0", "3", "-1", "-1", "-1"] and tail[5:9] == ["15", "10", "-5", "0"]
    assert tail[9:12] == ["2", "Round 1", "Round 2"] and tail[12:] == ["3", "0", "0", "0"]


def test_sqbs_refuses_what_it_cannot_hold_and_bad_files_with_their_line():
    five = qbj.Match("x", (qbj.MatchTeam("South", points=0, match_players=(MP("Sam", 1, tuple(AC(v, 1) for v in (20, 15, 10, -5, -10))),)), qbj.MatchTeam("North B", points=0)))  # fmt: skip
    with pytest.raises(ValueError, match="4 tossup values"):
        sqbs.to_sqbs(qbj.Tournament("t", TOURNAMENT.registrations, (five,)))
    text = sqbs.to_sqbs(TOURNAMENT).split("\n")
    with pytest.raises(FormatError, match=r"x\.sqbs:30: the file ends early"):
        sqbs.read_sqbs("\n".join(text[:29]), "x.sqbs")
    bad = [*text]
    bad[15] = "lots"  # the first game's first team index
    with pytest.raises(FormatError, match="16: expected a whole number, got 'lots'"):
        sqbs.read_sqbs("\n".join(bad))
    bad[15] = "7"
    with pytest.raises(FormatError, match=r"team index 7 outside 0\.\.2"):
        sqbs.read_sqbs("\n".join(bad))


def test_yft_reads_back_every_team_player_game_and_score():
    doc = yft.to_yft(TOURNAMENT)
    back = yft.read_yft(json.dumps(doc))
    assert back.name == "Spring Open"
    assert back.registrations == TOURNAMENT.registrations
    assert len(back.matches) == 2
    for mine, theirs in zip(back.matches, TOURNAMENT.matches, strict=True):
        assert (mine.phase, mine.round, mine.tossups_read) == (
            theirs.phase,
            theirs.round,
            theirs.tossups_read,
        )
        for a, b in zip(mine.match_teams, theirs.match_teams, strict=True):
            assert a.team == b.team and a.points == sqbs.total(b)
            assert a.match_players == b.match_players
    assert [sqbs.total(mt) for m in back.matches for mt in m.match_teams] == [100, 70, 45, 50]


def test_yft_has_what_yellowfruit_4_requires_to_open_it():
    """Compared by hand with YellowFruit 4's FileParsing.ts: a QBJ 2.1.1 file of one Tournament
    with YfData.YfVersion; scoring rules with answer types; a phase's YfData phaseType and code; a
    round's YfData number; a pool's YfData size; references by $ref to objects with ids."""
    doc = yft.to_yft(TOURNAMENT)
    assert doc["version"] == "2.1.1" and len(doc["objects"]) == 1
    t = doc["objects"][0]
    assert t["type"] == "Tournament" and t["YfData"]["YfVersion"] == yft.YF_VERSION
    assert [a["value"] for a in t["scoring_rules"]["answer_types"]] == [15, 10, 0, -5]
    assert t["scoring_rules"]["maximum_players_per_team"] == 3
    (phase,) = t["phases"]
    assert phase["YfData"]["phaseType"] == yft.PRELIM and phase["pools"][0]["YfData"]["size"] == 3
    assert [r["YfData"]["number"] for r in phase["rounds"]] == [1, 2]
    ids = {o["id"] for reg in t["registrations"] for team in reg["teams"] for o in [team, *team["players"]]}
    ids |= {a["id"] for a in t["scoring_rules"]["answer_types"]}
    refs = [v["$ref"] for v in _walk(t) if isinstance(v, dict) and "$ref" in v]
    assert refs and set(refs) <= ids
    assert t["YfData"]["seeds"] == [
        {"$ref": team["id"]} for reg in t["registrations"] for team in reg["teams"]
    ]


def _walk(value):
    yield value
    if isinstance(value, dict):
        for v in value.values():
            yield from _walk(v)
    elif isinstance(value, list):
        for v in value:
            yield from _walk(v)


def test_yft_reader_refuses_a_file_yellowfruit_would_refuse():
    plain = qbj.to_document(TOURNAMENT)  # a QBJ file: no YellowFruit version
    with pytest.raises(FormatError, match="not a YellowFruit file"):
        yft.read_yft(json.dumps(plain))
    with pytest.raises(FormatError, match="invalid JSON"):
        yft.read_yft("{")
    broken = yft.to_yft(TOURNAMENT)
    broken["objects"][0]["phases"][0]["rounds"][0]["matches"][0]["match_teams"][0]["team"] = {
        "$ref": "Team_99"
    }
    with pytest.raises(FormatError, match="unresolved reference 'Team_99'"):
        yft.read_yft(json.dumps(broken))
    with pytest.raises(ValueError, match="not registered"):
        yft.to_yft(qbj.Tournament("t", (), TOURNAMENT.matches))
