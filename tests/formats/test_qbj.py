"""``formats.qbj``: reading QBJ files of both schema generations into records, writing records back
as one Tournament file, and the errors of a bad file (pure: no database)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from formats import FormatError, qbj, runner
from tests.conftest import SHARED_DATA

TINY = {
    "version": "2.1",
    "objects": [
        {"type": "Registration", "id": "r", "name": "Ames", "teams": [
            {"id": "t1", "name": "Ames A", "players": [{"id": "p1", "name": "Ann", "year": 11}]}]},
        {"type": "Registration", "id": "r2", "name": "Bly", "teams": [
            {"id": "t2", "name": "Bly", "players": [{"id": "p2", "name": "Bo"}]}]},
        {"type": "Match", "id": "m1", "tossups_read": 2, "match_teams": [
            {"team": {"$ref": "t1"}, "bonus_points": 20, "match_players": [
                {"player": {"$ref": "p1"}, "tossups_heard": 2,
                 "answer_counts": [{"number": 1, "answer_type": {"value": 15}}]}],
             "lineups": [{"first_question": 1, "players": [{"$ref": "p1"}], "reason": "initial"}]},
            {"team": {"$ref": "t2"}, "bonus_points": 0, "match_players": [
                {"player": {"$ref": "p2"}, "tossups_heard": 2,
                 "answer_counts": [{"number": 1, "answer_type": {"value": -5}}]}]}],
         "match_questions": [
            {"question_number": 1, "buzzes": [
                {"team": {"$ref": "t2"}, "player": {"$ref": "p2"}, "buzz_position": {"word_index": 3}, "result": {"value": -5}},
                {"team": {"$ref": "t1"}, "player": {"$ref": "p1"}, "buzz_position": {"word_index": 9}, "result": {"value": 15}}],
             "bonus": {"parts": [{"controlled_points": 10}, {"controlled_points": 0}, {"controlled_points": 10}]}},
            {"question_number": 2, "buzzes": []}]},
        {"type": "Tournament", "name": "Tiny Open", "registrations": [{"$ref": "r"}, {"$ref": "r2"}],
         "phases": [{"name": "Prelims", "rounds": [{"name": "Round 1", "matches": [{"$ref": "m1"}]}]}]},
    ],
}  # fmt: skip


def write(path: Path, doc: object) -> Path:
    path.write_text(json.dumps(doc), encoding="utf-8")
    return path


def test_a_file_reads_into_records_with_names_for_references(tmp_path: Path) -> None:
    t = qbj.read_qbj(write(tmp_path / "tiny.qbj", TINY))
    assert t.name == "Tiny Open" and t.version == "2.1"
    assert t.registrations[0] == qbj.Registration("Ames", (qbj.Team("Ames A", (qbj.Player("Ann", 11),)),))
    (m,) = t.matches
    assert (m.key, m.phase, m.round, m.tossups_read) == ("m1", "Prelims", "Round 1", 2)
    assert m.match_questions[0].buzzes == (qbj.Buzz("Bly", "Bo", -5, 3), qbj.Buzz("Ames A", "Ann", 15, 9))
    assert m.match_questions[0].bonus_parts == (10, 0, 10)
    assert m.match_teams[0].match_players[0] == qbj.MatchPlayer("Ann", 2, (qbj.AnswerCount(15, 1),))
    assert m.match_teams[0].lineups == (qbj.Lineup(1, ("Ann",), "initial"),)
    # written back and read again: the same records (only the version is ours)
    again = qbj.read_qbj(write(tmp_path / "again.qbj", qbj.to_document(t)))
    assert again.matches == t.matches and again.registrations == t.registrations


@pytest.mark.parametrize(
    ("edit", "message"),
    [
        (lambda d: d["objects"].pop(), r"objects: expected exactly one Tournament object, found 0"),
        (lambda d: d["objects"][2]["match_teams"][0].update(team={"$ref": "t9"}),
         r"objects\[3\]\.phases\[0\]\.rounds\[0\]\.matches\[0\]\.match_teams\[0\]\.team: unresolved reference 't9'"),
        (lambda d: d["objects"][2]["match_teams"][0]["match_players"][0].update(tossups_heard="many"),
         r"match_players\[0\]\.tossups_heard: 'tossups_heard' must be an integer, got 'many'"),
        (lambda d: d["objects"][1]["teams"][0].update(name="Ames A"),
         r"objects\[3\]\.registrations\[1\]\.teams\[0\]: a second team named 'Ames A'"),
        (lambda d: d["objects"][2]["match_teams"][0]["lineups"][0].update(reason="lunch"),
         r"lineups\[0\]: 'reason' must be one of initial"),
        (lambda d: d["objects"][2]["match_questions"][0]["buzzes"][0].update(team={"$ref": "t0"}),
         r"buzzes\[0\]\.team: unresolved reference 't0'"),
    ],
)  # fmt: skip
def test_a_bad_file_names_where(tmp_path: Path, edit, message: str) -> None:
    doc = json.loads(json.dumps(TINY))
    edit(doc)
    with pytest.raises(FormatError, match=message):
        qbj.read_qbj(write(tmp_path / "bad.qbj", doc))
    (tmp_path / "broken.qbj").write_text("{\n  nope")
    with pytest.raises(FormatError, match=r"broken\.qbj:2: invalid JSON"):
        qbj.read_qbj(tmp_path / "broken.qbj")


def test_writing_a_match_of_an_unregistered_team_is_refused() -> None:
    t = qbj.Tournament("X", (), (qbj.Match("m", (qbj.MatchTeam("Ghosts"),)),))
    with pytest.raises(ValueError, match="team 'Ghosts' plays a match but is in no registration"):
        qbj.to_document(t)


def test_the_2014_hsnct_in_schema_0_5(tmp_path: Path) -> None:
    path = SHARED_DATA / "qbj" / "hsnct2014.qbj.gz"
    if not path.is_file():
        pytest.skip(f"{path} absent: this test needs the QBJ files from ../shared/data")
    t = qbj.read_qbj(path)
    assert (t.name, t.version, len(t.matches)) == ("HSNCT 2014", "0.5", 1510)
    phases = {m.phase for m in t.matches}
    assert phases == {qbj.PRELIMS, qbj.PLAYOFFS}  # split at the file's firstPlayoffRound (17)
    assert sum(m.phase == qbj.PLAYOFFS for m in t.matches) == 1510 - 16 * 85
    forfeits = [m for m in t.matches if any(mt.forfeit_loss for mt in m.match_teams)]
    assert len(forfeits) == 4 and all(m.tossups_read is None for m in forfeits)  # QBJ: absent in forfeits
    # every player who played is on the team's roster: the file's 16 lines of unregistered players
    # (5 people) are added to their teams
    rosters = {team.name: {p.name for p in team.players} for reg in t.registrations for team in reg.teams}
    assert all(
        mp.player in rosters[mt.team] for m in t.matches for mt in m.match_teams for mp in mt.match_players
    )
    assert sum(len(names) for names in rosters.values()) == 1342 + 5


def test_runner_bonus_responses_accept_the_loaders_column_name(tmp_path: Path) -> None:
    ours = tmp_path / "a.bonus.csv"
    ours.write_text(runner.write_csv(runner.BONUS_CSV, [("b1", 2, "Ravel", 0.8, "a composer")]))
    theirs = tmp_path / "b.bonus.csv"
    theirs.write_text("question_id,part_number,guess,confidence,explanation\nb1,2,Ravel,0.8,a composer\n")
    expected = [runner.BonusGuess("b1", 2, "Ravel", 0.8, "a composer")]
    assert runner.read_bonus_responses(ours) == runner.read_bonus_responses(theirs) == expected
    theirs.write_text("question_id,part_number,guess,confidence,explanation\nb1,two,Ravel,0.8,\n")
    with pytest.raises(FormatError, match=r"b\.bonus\.csv:2: 'part_number' must be an integer"):
        runner.read_bonus_responses(theirs)
