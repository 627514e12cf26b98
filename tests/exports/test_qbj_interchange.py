"""QBJ import (``manage.py import_qbj``) of the schema's example and of the 2014 HSNCT (schema 0.5),
then export → import → export: the two exports are equal, conform to the schema, and carry the
source's per-player answer counts and scores. Skips when ../shared/data is absent."""

from __future__ import annotations

import json
import time
from collections import Counter
from io import StringIO
from pathlib import Path

import pytest
from django.core.management import CommandError, call_command

from competition import exports, game, services
from competition.interchange import import_tournament
from competition.models import Competitor, Match, MatchEvent, Player, Team
from formats import qbj
from tests.conftest import SHARED_DATA
from tests.exports.qbj_schema import SCHEMA_DIR, problems
from tests.support.factories import make_match

FILES = {"test.qbj": (4, "Test Tournament"), "hsnct2014.qbj.gz": (1510, "HSNCT 2014")}


def shared(name: str) -> Path:
    path = SHARED_DATA / "qbj" / name
    if not path.is_file():
        pytest.skip(f"{path} absent: this test needs the QBJ files from ../shared/data")
    return path


def answer_totals(t: qbj.Tournament) -> Counter[tuple[str, str, int]]:
    """(team, player, value) → number answered, over every match."""
    out: Counter[tuple[str, str, int]] = Counter()
    for m in t.matches:
        for mt in m.match_teams:
            for mp in mt.match_players:
                for c in mp.answer_counts:
                    out[(mt.team, mp.player, c.value)] += c.number
    return out


@pytest.mark.parametrize("name", list(FILES))
def test_import_export_import_export_is_stable(name: str, db, tmp_path: Path) -> None:
    path = shared(name)
    n_matches, title = FILES[name]
    source = qbj.read_qbj(path)
    out = StringIO()
    started = time.perf_counter()
    call_command("import_qbj", str(path), stdout=out, stderr=StringIO())
    seconds = time.perf_counter() - started
    print(f"{name}: {out.getvalue().strip()} (command {seconds:.1f} s)")  # the figures for the report
    first = list(Match.objects.filter(status="ended").order_by("id"))
    assert len(first) == n_matches and all(m.name.startswith(title) for m in first)
    played = {(mt.team, mp.player) for m in source.matches for mt in m.match_teams for mp in mt.match_players}
    assert Player.objects.count() == sum(
        len({mp.player for mp in mt.match_players} | {p for lu in mt.lineups for p in lu.players})
        for m in source.matches
        for mt in m.match_teams
    )
    assert {(p.team.name, p.name) for p in Player.objects.select_related("team")} == played
    # the stored scores are the file's
    some = first[0]
    expected = {mt.team: mt.points for mt in source.matches[0].match_teams}
    assert {t.name: some.state["scores"][str(t.id)] for t in some.teams.all()} == expected

    doc1 = exports.qbj_document(first)
    if SCHEMA_DIR.is_dir():
        assert problems(doc1) == []
    exported = tmp_path / "export.qbj"
    exported.write_text(json.dumps(doc1))
    again = qbj.read_qbj(exported)
    assert answer_totals(again) == answer_totals(source)  # every player's answer counts survive

    def outline(t: qbj.Tournament) -> dict:
        """Per match key: its round, its teams' scores, forfeits and how many questions it logs."""
        return {
            m.key: (
                m.phase,
                m.round,
                [(mt.team, mt.points, mt.forfeit_loss) for mt in m.match_teams],
                len(m.match_questions),
            )
            for m in t.matches
        }

    assert outline(again) == outline(source)  # listed round by round: 0.5 files list them otherwise

    import_tournament(again, exported.name)
    second = list(Match.objects.filter(status="ended").order_by("id"))[n_matches:]
    assert len(second) == n_matches
    assert exports.qbj_document(second) == doc1  # ids are built from names and keys: equal too


def test_the_examples_buzzes_lineups_and_bonuses_survive(db) -> None:
    source = qbj.read_qbj(shared("test.qbj"))
    import_tournament(source, "test.qbj")
    match = Match.objects.order_by("id").first()
    assert match is not None
    record, regs = exports.qbj_match(match)
    assert record == source.matches[0]
    assert record.match_questions[0].buzzes[0] == qbj.Buzz("Lake Worth A", "Keira Anderson", 10)
    assert [lu.reason for lu in record.match_teams[0].lineups] == ["initial", "halftime", "own_timeout"]
    assert {r.name for r in regs} == {"Lake Worth", "Lomax"}
    event = MatchEvent.objects.get(match=match)
    assert (event.event, event.payload["tournament"], event.payload["source"]) == (
        game.EventName.MATCH_IMPORTED,
        "Test Tournament",
        "test.qbj",
    )


def test_a_bad_file_is_refused_and_stores_nothing(db, tmp_path: Path) -> None:
    dry = StringIO()
    call_command("import_qbj", str(shared("test.qbj")), "--dry-run", stdout=dry)
    assert dry.getvalue().strip() == "Test Tournament: 4 matches, 23 registered players (dry run)"
    assert Match.objects.count() == 0
    bad = tmp_path / "bad.qbj"
    doc = json.loads(shared("test.qbj").read_text())
    doc["objects"][2]["match_teams"][0]["team"] = {"$ref": "team_nowhere"}
    bad.write_text(json.dumps(doc))
    with pytest.raises(CommandError, match=r"bad\.qbj: objects\[6\]\.phases\[0\]\.rounds\[0\]\.matches\[0\]"):
        call_command("import_qbj", str(bad), stdout=StringIO(), stderr=StringIO())
    assert (Match.objects.count(), Team.objects.count(), Player.objects.count()) == (0, 0, 0)
    with pytest.raises(CommandError, match="unresolved reference 'team_nowhere'"):
        call_command("import_qbj", str(bad), stdout=StringIO(), stderr=StringIO())


def test_event_export_filters_by_tournament(db) -> None:
    import_tournament(qbj.read_qbj(shared("test.qbj")), "test.qbj")
    buf = StringIO()
    call_command("export_match", "--all", "--tournament", "Test Tournament", stdout=buf)
    doc = json.loads(buf.getvalue())
    assert [o["type"] for o in doc["objects"]].count("Match") == 4
    assert doc["objects"][-1]["name"] == "Test Tournament"
    with pytest.raises(CommandError, match="no ended match to export from 'Other'"):
        call_command("export_match", "--all", "--tournament", "Other", stdout=StringIO())


def test_a_files_teams_and_players_are_identities_across_its_matches(db) -> None:
    import_tournament(qbj.read_qbj(shared("test.qbj")), "test.qbj")
    keira = Player.objects.filter(name="Keira Anderson")
    assert keira.count() == 2 and len({p.competitor_id for p in keira}) == 1  # she played two matches
    lomax = Team.objects.filter(name="Lomax B")
    assert lomax.count() == 2 and len({t.competitor_id for t in lomax}) == 1
    assert (
        Competitor.objects.filter(kind="team").count() == 4
        and Competitor.objects.filter(kind="human").count() == 23
    )
    import_tournament(qbj.read_qbj(shared("test.qbj")), "test.qbj")  # the same file again: new people
    assert sorted(
        Competitor.objects.filter(handle__startswith="Keira Anderson").values_list("handle", flat=True)
    ) == [
        "Keira Anderson",
        "Keira Anderson 2",
    ]


def test_an_event_export_keys_matches_played_here_on_identities(db) -> None:
    first = make_match(bots=False)
    second = services.create_match(name="Again", tossup_ids=first.tossup_ids, teams=["Red", "Blue"])
    for name, team in (("alice", "Red"), ("amy", "Red"), ("bob", "Blue")):
        services.join_match(code=second.join_code, name=name, team=team)
    doc = exports.qbj_document([first, second])
    teams = [t["name"] for o in doc["objects"] if o["type"] == "Registration" for t in o["teams"]]
    assert teams == ["Red", "Blue", "Red 2", "Blue 2"]  # two matches' "Red" are two teams, not one
    players = [
        p["name"]
        for o in doc["objects"]
        if o["type"] == "Registration"
        for t in o["teams"]
        for p in t["players"]
    ]
    assert players == ["alice", "amy", "bob", "alice 2", "amy 2", "bob 2"]
