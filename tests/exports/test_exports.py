"""Match exports (QBJ, qb-tournament-runner files) of a small match played through the services with
explicit times: a power and a bonus, a neg that is protested, adjusted and then replayed, and the
replay answered. Every figure below follows from the script and the naqt preset. QBJ files are
validated against the schema in ../shared/reference/qbj-schema (skipped when absent)."""

from __future__ import annotations

import csv
import io
import json
import zipfile
from io import StringIO
from pathlib import Path

import pytest
from django.core.management import CommandError, call_command

from buzzer.bots.replay import RecordedBuzz, ReplayGuesser, load_buzz_file
from competition import exports, game
from competition.models import Bonus, Match, Tossup
from formats import runner
from formats.questions import detect_format, parse_file
from irt.importers import read_responses
from tests.exports.conftest import T0, answer, bonus, buzz, mod
from tests.exports.qbj_schema import SCHEMA_DIR, problems
from tests.support.factories import make_match


def conforms(doc: dict) -> None:
    if not SCHEMA_DIR.is_dir():
        pytest.skip(f"{SCHEMA_DIR} absent: the QBJ schema is read from ../shared/reference")
    assert problems(doc) == []


def test_cycles_play_log_keeps_every_cycle(played: Match) -> None:
    q0, q1 = played.tossup_ids
    rows = exports.play_log(played)
    assert [(r["cycle"], r["question_id"], r["replayed"], r["tossup"]["outcome"]) for r in rows] == [
        (0, q0, False, "answered"),
        (1, q1, True, "replayed"),
        (2, q1, False, "answered"),
    ]
    first = rows[0]["tossup"]["responses"]
    assert [(r["playerName"], r["position"], r["guess"], r["points"], r["isCorrect"]) for r in first] == [
        ("alice", 4, "Moby-Dick", 15, True)
    ]
    assert first[0]["received_at"] == T0 + 0.5 and first[0]["revealed_at"] == pytest.approx(T0 + 0.4)
    neg = rows[1]["tossup"]["responses"]
    assert [(r["playerName"], r["position"], r["points"], r["undone"]) for r in neg] == [("bob", 5, -5, True)]
    assert [a["points"] for a in rows[1]["adjustments"]] == [5]


def test_runner_cycles_have_the_runners_exact_shape(played: Match, tmp_path: Path) -> None:
    alice = played.players.get(name="alice")
    text = exports.render(played, "cycles")
    lines = [json.loads(line) for line in text.splitlines()]
    assert len(lines) == 3  # the replayed cycle too, as the runner logs a replayed tossup twice
    assert all(list(c) == ["tossupResponses", "bonusResponses"] for c in lines)
    q0 = str(played.tossup_ids[0])  # no external id: our id is the qid
    assert lines[0]["tossupResponses"] == [
        {
            "tossupIndex": 0,
            "qid": q0,
            "marker": {
                "player": {"id": f"human_{alice.id}", "isStarter": True, "name": "alice", "team": "Red"},
                "position": 5,  # the runner counts revealed tokens: token index 4 + 1
                "guess": "Moby-Dick",
                "points": 15,
                "isCorrect": True,
            },
        }
    ]
    marker = lines[0]["tossupResponses"][0]["marker"]
    assert list(marker) == ["player", "position", "guess", "points", "isCorrect"]
    assert lines[0]["bonusResponses"] == {
        "bonusIndex": 0,
        "correctParts": [0, 2],
        "receivingTeamName": "Red",
        "parts": [
            {
                "teamName": "Red",
                "points": 10,
                "responses": {"alice": "bonusanswer0"},
                "finalGuess": "bonusanswer0",
            },
            {"teamName": "Red", "points": 0, "responses": {"alice": "no idea"}, "finalGuess": "no idea"},
            {
                "teamName": "Red",
                "points": 10,
                "responses": {"alice": "bonusanswer2"},
                "finalGuess": "bonusanswer2",
            },
        ],
    }
    assert lines[1] == {"tossupResponses": [], "bonusResponses": None}  # bob's neg was undone by the replay
    assert [(r["marker"]["position"], r["tossupIndex"]) for r in lines[2]["tossupResponses"]] == [(4, 1)]
    assert [p["points"] for p in lines[2]["bonusResponses"]["parts"]] == [0, 0, 0]  # timed out
    path = tmp_path / "cycles.jsonl"
    path.write_text(text)
    assert runner.parse_cycles(path) == exports.runner_cycles(played)  # read back: the same records
    responses = {(r.kind, r.subject, r.item): (r.correct, r.position) for r in read_responses(path, "cycles")}
    assert responses == {
        ("human", "alice", q0): (True, 4),
        ("human", "alice", str(played.tossup_ids[1])): (True, 3),
    }


def test_runner_zip_holds_the_packet_as_the_runner_reads_it(played: Match) -> None:
    with zipfile.ZipFile(io.BytesIO(exports.runner_zip(played))) as z:
        names = sorted(z.namelist())
        code = played.join_code
        assert names == [
            f"{code}/bonuses.csv",
            f"{code}/cycles.jsonl",
            f"{code}/power.csv",
            f"{code}/tossups.csv",
        ]
        tossups = list(csv.DictReader(io.StringIO(z.read(f"{code}/tossups.csv").decode())))
        power = list(csv.DictReader(io.StringIO(z.read(f"{code}/power.csv").decode())))
        bonuses = list(csv.DictReader(io.StringIO(z.read(f"{code}/bonuses.csv").decode())))
    assert [t["question_id"] for t in tossups] == [str(i) for i in played.tossup_ids]
    words = tossups[0]["text"].split()
    assert len(words) == 20 and "(*)" not in words  # the display tokens: positions agree
    assert (tossups[0]["answer"], tossups[0]["answerline"]) == ("Moby-Dick", "<b><u>Moby-Dick</u></b>")
    assert power[0] == {"question": tossups[0]["question_id"], "word": words[8]}  # first word after (*)
    assert list(bonuses[0]) == list(runner.BONUSES_CSV)
    assert (bonuses[0]["part2"], bonuses[0]["answer2"]) == ("Part 1.", "bonusanswer1")


def test_a_bots_response_files_replay_its_buzzes(db) -> None:
    match = make_match(bots=True)
    q0, _ = match.tossup_ids
    b0 = match.bonus_ids[0]
    bot = match.players.get(name="bot")
    mod(match, game.Start(), 0.0)
    buzz(match, bot, q0, 6, 0.7)
    mod(match, game.Tick(), 1.2)  # held for the bot's reaction delay, then the collection window
    answer(match, bot, q0, "Moby-Dick", 1.3)  # correct after the power mark
    bonus(match, bot, b0, 0, "bonusanswer0", 1.5)
    with zipfile.ZipFile(io.BytesIO(exports.runner_zip(match))) as z:
        buzz_csv = z.read(f"{match.join_code}/responses/bot.buzz.csv").decode()
        bonus_csv = z.read(f"{match.join_code}/responses/bot.bonus.csv").decode()
    assert buzz_csv.splitlines() == [
        "question_id,token_position,guess,confidence,buzz,correct",
        f"{q0},6,Moby-Dick,1.0,1,1",
    ]
    assert bonus_csv.splitlines() == [
        "question_id,part_num,guess,confidence,explanation",
        f"{b0},1,bonusanswer0,1.0,",
    ]
    cycles = [json.loads(line) for line in exports.render(match, "cycles").splitlines()]
    assert cycles[0]["tossupResponses"][0]["marker"]["player"]["id"] == f"ai_{bot.id}"  # the runner's AI ids


def test_replay_bot_reads_the_exported_buzz_file(db, tmp_path: Path) -> None:
    match = make_match(bots=True)
    q0, _ = match.tossup_ids
    bot = match.players.get(name="bot")
    mod(match, game.Start(), 0.0)
    buzz(match, bot, q0, 6, 0.7)
    mod(match, game.Tick(), 1.2)  # held for the bot's reaction delay, then the collection window
    answer(match, bot, q0, "Moby-Dick", 1.3)
    path = tmp_path / "bot.buzz.csv"
    path.write_text(exports.runner_files(match)["responses/bot.buzz.csv"])
    recorded = load_buzz_file(path)
    assert recorded == {str(q0): RecordedBuzz(str(q0), 6, "Moby-Dick", 1.0)}
    guesser = ReplayGuesser(recorded)
    guesser.begin_tossup({"question_id": q0})
    text = " ".join(f"w{i}" for i in range(6))
    assert guesser.guess(text) == ("", 0.0)  # 6 tokens shown: token 6 not yet
    assert guesser.guess(text + " w6") == ("Moby-Dick", 1.0)


def test_qbj_is_one_schema_conformant_tournament(played: Match) -> None:
    doc = exports.qbj_document([played])
    conforms(doc)
    types = [o["type"] for o in doc["objects"]]
    assert types == ["Registration", "Registration", "Match", "Tournament"]
    (m,) = [o for o in doc["objects"] if o["type"] == "Match"]
    assert m["tossups_read"] == 2 and m["serial"] == played.join_code
    by_id = {
        p["id"]: p["name"]
        for o in doc["objects"]
        if o["type"] == "Registration"
        for t in o["teams"]
        for p in t["players"]
    }
    buzzes = [
        [(by_id[b["player"]["$ref"]], b["buzz_position"], b["result"]) for b in q["buzzes"]]
        for q in m["match_questions"]
    ]
    assert buzzes == [
        [("alice", {"word_index": 4}, {"value": 15})],
        [("alice", {"word_index": 3}, {"value": 15})],  # bob's neg was replayed away
    ]
    assert [p["controlled_points"] for p in m["match_questions"][0]["bonus"]["parts"]] == [10, 0, 10]
    red, blue = m["match_teams"]
    assert (red["bonus_points"], blue["bonus_points"]) == (20, 0) and "points" not in red
    alice = next(p for p in red["match_players"] if by_id[p["player"]["$ref"]] == "alice")
    assert alice["answer_counts"] == [{"number": 2, "answer_type": {"value": 15}}]
    assert [by_id[p["$ref"]] for p in red["lineups"][0]["players"]] == ["alice", "amy"]
    assert "Blue +5 (protest upheld)" in m["notes"]
    (t,) = [o for o in doc["objects"] if o["type"] == "Tournament"]
    assert [a["value"] for a in t["scoring_rules"]["answer_types"]] == [15]


def test_export_command_writes_files_and_refuses_unknown_codes(played: Match, tmp_path: Path) -> None:
    out = tmp_path / "m.qbj"
    call_command(
        "export_match", played.join_code.lower(), "--format", "qbj", "--out", str(out), stderr=StringIO()
    )
    conforms(json.loads(out.read_text()))
    buf = StringIO()
    call_command("export_match", played.join_code, "--format", "cycles", stdout=buf)
    assert len(buf.getvalue().splitlines()) == 3
    zipped = tmp_path / "m.zip"
    call_command(
        "export_match", played.join_code, "--format", "runner", "--out", str(zipped), stderr=StringIO()
    )
    assert zipfile.is_zipfile(zipped)
    every = StringIO()
    call_command("export_match", "--all", stdout=every)
    assert [o["type"] for o in json.loads(every.getvalue())["objects"]].count("Match") == 1
    with pytest.raises(CommandError, match="no match with join code NOPE42"):
        call_command("export_match", "NOPE42", stdout=StringIO())
    with pytest.raises(CommandError, match="exports one match"):
        call_command(
            "export_match", played.join_code, played.join_code, "--format", "cycles", stdout=StringIO()
        )
    with pytest.raises(CommandError, match="give --out"):
        call_command("export_match", played.join_code, "--format", "runner", stdout=StringIO())
    with pytest.raises(ValueError, match="unknown export format"):
        exports.render(played, "csv")


def test_runner_packet_reads_back_as_the_same_questions(played: Match, tmp_path: Path) -> None:
    with zipfile.ZipFile(io.BytesIO(exports.runner_zip(played))) as z:
        z.extractall(tmp_path)
    folder = tmp_path / played.join_code
    assert detect_format(folder) == detect_format(folder / "tossups.csv") == "runner"
    parsed = parse_file(folder)
    originals = [Tossup.objects.get(pk=i) for i in played.tossup_ids]
    assert [(t.question, t.answer_line, t.external_id) for t in parsed.tossups] == [
        (t.question, t.answer_line, str(t.id)) for t in originals
    ]  # the power mark is back where it was
    bonuses = [Bonus.objects.get(pk=i) for i in played.bonus_ids]
    assert [(b.leadin, [(p.text, p.answer_line) for p in b.parts]) for b in parsed.bonuses] == [
        (b.leadin, [(p["text"], p["answer_line"]) for p in b.parts]) for b in bonuses
    ]
    (folder / "power.csv").unlink()  # without it the tossups read unmarked
    assert all("(*)" not in t.question for t in parse_file(folder).tossups)


def test_a_bonus_withdrawn_by_undo_leaves_the_exports(db) -> None:
    match = make_match(bots=False)
    q0, _ = match.tossup_ids
    b0 = match.bonus_ids[0]
    alice = match.players.get(name="alice")
    mod(match, game.Start(), 0.0)
    buzz(match, alice, q0, 4, 0.5)
    answer(match, alice, q0, "Moby-Dick", 0.8)  # power: +15, bonus 0 starts
    bonus(match, alice, b0, 0, "bonusanswer0", 1.0)  # +10
    mod(match, game.Undo(), 1.1)  # the bonus part
    mod(match, game.Undo(), 1.2)  # the tossup: its bonus is withdrawn
    (row,) = exports.play_log(match)
    assert row["bonus"] is None
    assert [(r["points"], r["undone"]) for r in row["tossup"]["responses"]] == [(15, True)]
    (cycle,) = [json.loads(line) for line in exports.render(match, "cycles").splitlines()]
    assert cycle["bonusResponses"] is None


def test_runner_cycles_carry_the_captains_bonus_decisions(db) -> None:
    """A qanta26 match: alice's team consults its AI on part 1, abstains on part 2 (the moderator
    for the captain) and answers part 3 itself after its AI suggested an answer; the runner's
    ``decision`` names each choice and ``aiRevealed`` tells the parts where the team had seen
    its AI's suggestion."""
    from competition import services
    from tests.support.factories import make_packet

    tossups, bonuses = make_packet(n_tossups=1, n_bonuses=1)
    match = services.create_match(
        name="hybrid",
        tossup_ids=[t.id for t in tossups],
        bonus_ids=[b.id for b in bonuses],
        preset="qanta26",
        teams=["Red", "Blue"],
        bots=[{"name": "ai", "weight_class": "heavy", "team": "Red", "buzz_mode": "muted"}],
        config={"wpm": 600, "auto_rule": True},
    )
    alice = services.join_match(code=match.join_code, name="alice", team="Red")
    ai = match.players.get(name="ai")
    q0, b0 = match.tossup_ids[0], match.bonus_ids[0]
    mod(match, game.Start(), 0.0)
    buzz(match, alice, q0, 4, 0.5)
    answer(match, alice, q0, "Moby-Dick", 0.8)

    def suggest(part: int, guess: str, confidence: float, at: float) -> None:
        services.bonus_suggestion(
            match_id=match.id, player_id=ai.id, bonus_id=b0, part=part, guess=guess,
            confidence=confidence, now=T0 + at,
        )  # fmt: skip

    suggest(0, "bonusanswer0", 0.7, 1.0)
    services.decide_bonus(
        match_id=match.id, bonus_id=b0, part=0, decision="consult", player_id=alice.id, now=T0 + 1.1
    )
    services.decide_bonus(
        match_id=match.id, bonus_id=b0, part=1, decision="abstain", player_id=None, now=T0 + 1.2
    )
    suggest(2, "not it", 0.2, 1.25)
    bonus(match, alice, b0, 2, "bonusanswer2", 1.3)
    [cycle] = [
        json.loads(line) for line in exports.render(Match.objects.get(pk=match.pk), "cycles").splitlines()
    ]
    parts = cycle["bonusResponses"]["parts"]
    assert [(p["points"], p.get("decision"), p["responses"]) for p in parts] == [
        (7, "consult_ai", {"ai": "bonusanswer0"}),  # 10 − 3 for a heavy AI
        (1, "abstain", {}),
        (10, "own", {"alice": "bonusanswer2"}),
    ]
    assert [p["aiRevealed"] for p in parts] == [True, False, True]
