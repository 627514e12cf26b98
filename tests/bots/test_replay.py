"""Replay bot: buzz-log parsing (runner and 2024 exhibition formats), errors, and the replay guesser."""

from __future__ import annotations

import csv
from pathlib import Path

import pytest

from buzzer.bots.replay import (
    RecordedBuzz,
    ReplayFileError,
    ReplayGuesser,
    load_buzz_file,
    load_question_map,
)
from competition.game import tokenize_tossup
from competition.importers import parse_file

RUNNER = """question_id,token_position,guess,confidence,buzz,correct
q1,0,Paris,0.1,0,0
q1,1,Paris,0.4,0,0
q1,2,London,0.9,1,1
q1,3,London,0.95,1,1
q2,0,Rome,0.2,0,0
q2,1,Rome,0.3,0,0
q3,5,Oslo,0.7,1,0
"""


def write(path: Path, text: str) -> Path:
    path.write_text(text, encoding="utf-8")
    return path


def test_runner_file_first_buzz_per_question(tmp_path: Path) -> None:
    buzzes = load_buzz_file(write(tmp_path / "bot.buzz.csv", RUNNER))
    assert buzzes == {
        "q1": RecordedBuzz("q1", 2, "London", 0.9),
        "q3": RecordedBuzz("q3", 5, "Oslo", 0.7),
    }


@pytest.mark.parametrize(
    ("bad_row", "message"),
    [
        ("q1,two,Paris,0.1,0,0", "'token_position' must be an integer"),
        ("q1,-1,Paris,0.1,0,0", "'token_position' must be ≥ 0"),
        ("q1,2,Paris,0.1,maybe,0", "'buzz' must be 0/1"),
        ("q1,2,Paris,high,1,0", "'confidence' must be a number"),
        (",2,Paris,0.1,1,0", "missing value for 'question_id'"),
    ],
)
def test_broken_runner_file_names_file_and_line(tmp_path: Path, bad_row: str, message: str) -> None:
    lines = RUNNER.splitlines()
    lines.insert(3, bad_row)  # becomes line 4 of the file
    path = write(tmp_path / "broken.buzz.csv", "\n".join(lines) + "\n")
    with pytest.raises(ReplayFileError) as caught:
        load_buzz_file(path)
    assert f"{path}:4:" in str(caught.value)
    assert message in str(caught.value)


def test_unknown_header_is_rejected(tmp_path: Path) -> None:
    path = write(tmp_path / "x.buzz.csv", "qid,pos\n1,2\n")
    with pytest.raises(ReplayFileError, match=r"x\.buzz\.csv:1: header"):
        load_buzz_file(path)


def expo_fixture(tmp_path: Path) -> Path:
    """A two-question exhibition category with one team's log, in the real directory layout."""
    write(
        tmp_path / "art.csv",
        "id,answer,sent,text\n7,Marat,0,one two three four\n7,Marat,1,five six seven\n8,Serra,0,alpha beta\n",
    )
    (tmp_path / "team").mkdir()
    return write(
        tmp_path / "team" / "art.buzz.csv",
        "sentence,question,page,evidence,word,final,weight\n"
        '0,7,Album cover,"{}",2,False,-0.1\n'
        '1,7, The Death of Marat,"{}",2,True,-0.0\n'
        '1,7,The Death of Marat,"{}",3,True,-0.0\n'
        '0,8,Jeff Koons,"{}",2,False,-0.2\n'
        '0,99,Unknown,"{}",1,True,0.5\n',
    )


def test_expo_file_positions_count_earlier_sentences(tmp_path: Path) -> None:
    buzzes = load_buzz_file(expo_fixture(tmp_path))
    # sentence 1, 2 words seen → 4 words of sentence 0 + 2 − 1; 8 never buzzed; 99 has no sentences.
    assert buzzes == {"7": RecordedBuzz("7", 5, "The Death of Marat", -0.0)}


def test_expo_file_without_sentence_file_is_an_error(tmp_path: Path) -> None:
    buzz_file = expo_fixture(tmp_path)
    (tmp_path / "art.csv").unlink()
    with pytest.raises(ReplayFileError, match=r"art\.csv: cannot open"):
        load_buzz_file(buzz_file)


def test_expo_bad_final_names_the_line(tmp_path: Path) -> None:
    buzz_file = expo_fixture(tmp_path)
    rows = buzz_file.read_text().splitlines()
    rows[2] = rows[2].replace("True", "Yes please")
    write(buzz_file, "\n".join(rows) + "\n")
    with pytest.raises(ReplayFileError, match=r"art\.buzz\.csv:3: 'final' must be"):
        load_buzz_file(buzz_file)


def test_expo_positions_skip_bare_power_marks_like_the_server(tmp_path: Path) -> None:
    write(tmp_path / "sci.csv", "id,answer,sent,text\n5,X,0,a b (*) c\n5,X,1,d e(*) f\n")
    (tmp_path / "team").mkdir()
    log = "sentence,question,page,evidence,word,final,weight\n"
    for sentence, word in ((0, 3), (0, 4), (1, 2)):
        write(tmp_path / "team" / "sci.buzz.csv", log + f'{sentence},5,X,"{{}}",{word},True,1\n')
        spec = tokenize_tossup(1, "a b (*) c d e(*) f", "X")
        position = load_buzz_file(tmp_path / "team" / "sci.buzz.csv")["5"].token_index
        # the bare mark shows nothing new: a buzz on it is a buzz on "b"
        assert spec.tokens[position] == {(0, 3): "b", (0, 4): "c", (1, 2): "e"}[sentence, word]


def test_real_exhibition_logs_index_the_imported_tossups(shared_data: Path) -> None:
    root = shared_data / "expo" / "2024_470"
    files = sorted(root.glob("*/*.buzz.csv"))
    if not files:
        pytest.skip(f"{root} has no buzz logs")
    # The server's tokens: the expo importer's text through the engine's tokenizer.
    tokens = {
        t.external_id: tokenize_tossup(0, t.question, t.answer_line).tokens for t in parse_file(root).tossups
    }
    raw: dict[str, list[str]] = {}
    for category in root.glob("*.csv"):
        with category.open(newline="", encoding="utf-8") as handle:
            for row in sorted(csv.DictReader(handle), key=lambda r: int(r["sent"])):
                raw.setdefault(row["id"], []).extend(row["text"].split())
    total = 0
    for path in files:
        for qid, buzz in load_buzz_file(path).items():
            assert 0 <= buzz.token_index < len(tokens[qid]), (path, qid)
            if "(*)" not in raw[qid]:
                assert tokens[qid] == raw[qid]
            total += 1
    assert total > 100
    # gpr_aim first buzzes on question 160 in sentence 0 after 12 words ("… two different aptly-titled").
    art = load_buzz_file(root / "gpr_aim" / "art.buzz.csv")["160"]
    assert tokens["160"][art.token_index] == "aptly-titled"
    assert art.guess == "Ode on a Grecian Urn"


def test_replay_guesser_buzzes_at_the_recorded_token(tmp_path: Path) -> None:
    buzzes = load_buzz_file(write(tmp_path / "bot.buzz.csv", RUNNER))
    guesser = ReplayGuesser(buzzes, {"41": "q1", "42": "q3", "43": "q2"})
    guesser.begin_tossup({"question_id": 41, "token_count": 10})
    assert guesser.guess("w0 w1") == ("", 0.0)
    assert guesser.guess("w0 w1 w2") == ("London", 1.0)
    guesser.begin_tossup({"question_id": 42, "token_count": 10})
    assert guesser.guess("a b c d e") == ("", 0.0)
    assert guesser.guess("a b c d e f") == ("Oslo", 1.0)
    guesser.begin_tossup({"question_id": 43, "token_count": 60})  # recorded, never buzzed
    assert guesser.guess(" ".join(["w"] * 50)) == ("", 0.0)
    assert guesser.bonus_guess("leadin", "part") == ""


def test_replay_guesser_ignores_a_source_id_in_the_payload(tmp_path: Path) -> None:
    """The map comes from the trusted launcher; an ``external_id`` in an event (which the server
    no longer sends) selects nothing, and without a map entry the log's ids are the server's."""
    buzzes = load_buzz_file(write(tmp_path / "bot.buzz.csv", RUNNER.replace("q3,", "7,")))
    guesser = ReplayGuesser(buzzes, {"41": "q1"})
    guesser.begin_tossup({"question_id": 42, "external_id": "q1", "token_count": 10})
    assert guesser.current is None and guesser.guess("a b c d e f") == ("", 0.0)
    guesser.begin_tossup({"question_id": 7, "token_count": 10})
    assert guesser.guess("a b c d e f") == ("Oslo", 1.0)


def test_question_map_file(tmp_path: Path) -> None:
    assert load_question_map(write(tmp_path / "m.json", '{"41": "q1", "42": 7}')) == {"41": "q1", "42": "7"}
    with pytest.raises(ReplayFileError, match="JSON object"):
        load_question_map(write(tmp_path / "bad.json", "[1, 2]"))
