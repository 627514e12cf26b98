"""The ``formats`` package: one error shape, shared decoding, and each format's readers agreeing with
one another where two callers (importer and bot, importer and IRT) read the same file."""

from __future__ import annotations

import gzip
import json
import subprocess
import sys
from pathlib import Path

import pytest

from formats import FormatError, advscore, expo, qbreader
from formats.buzzlogs import read_buzz_log
from formats.questions import parse_file
from formats.records import RecordedBuzz
from formats.textio import iter_json_lines, line_of, load_json_with_lines


def write(path: Path, text: str) -> Path:
    path.write_text(text, encoding="utf-8")
    return path


def test_format_error_names_file_and_line_and_is_a_value_error() -> None:
    at_line = FormatError(Path("a/b.csv"), 7, "bad cell")
    assert (str(at_line), at_line.path, at_line.line, at_line.message) == (
        "a/b.csv:7: bad cell",
        "a/b.csv",
        7,
        "bad cell",
    )
    assert str(FormatError("x.json", None, "cannot open (gone)")) == "x.json: cannot open (gone)"
    assert isinstance(at_line, ValueError)


def test_json_lines_are_gunzipped_by_magic_bytes_and_numbered(tmp_path: Path) -> None:
    path = tmp_path / "no-gz-suffix.jsonl"  # gzip without a .gz name is still read
    with gzip.open(path, "wt", encoding="utf-8") as fh:
        fh.write('{"a": 1}\n\n{"a": 2}\n[3]\n')
    rows = iter_json_lines(path)
    assert [next(rows), next(rows)] == [(1, {"a": 1}), (3, {"a": 2})]
    with pytest.raises(FormatError, match=r"no-gz-suffix\.jsonl:4: expected a JSON object, got list"):
        next(rows)


def test_pretty_printed_json_objects_carry_their_line(tmp_path: Path) -> None:
    path = write(tmp_path / "doc.json", '{\n  "items": [\n    {"x": 1},\n\n    {\n      "x": 2}\n  ]\n}\n')
    doc = load_json_with_lines(path)
    assert [line_of(doc), *(line_of(item) for item in doc["items"])] == [1, 3, 5]
    with pytest.raises(FormatError, match=r"doc\.missing\.json: cannot open \(No such file"):
        load_json_with_lines(tmp_path / "doc.missing.json")


QB_ROWS = [
    {"type": "tossup", "set": "2019-A", "year": 2019, "packet": 1, "number": 1,
     "question": "  This (*) gas is inert. ", "answer": "<b><u>argon</u></b>"},
    {"type": "bonus", "set": "2019-A", "year": 2019, "packet": 1, "number": 1,
     "leadin": "L", "parts": ["p1"], "answers": ["a1"]},
    {"type": "tossup", "set": "2021-B", "year": 2021, "packet": "2", "number": 4,
     "question": "Name this river.", "answer": "Nile"},
]  # fmt: skip


def test_qbreader_importer_and_training_stream_read_the_same_tossups(tmp_path: Path) -> None:
    path = tmp_path / "p.jsonl.gz"
    with gzip.open(path, "wt", encoding="utf-8") as fh:
        fh.writelines(json.dumps(row) + "\n" for row in QB_ROWS)
    strict = parse_file(path, max_year=2020)
    stream = list(qbreader.iter_tossups(path, max_year=2020))
    assert [(t.question, t.answer_line) for t in strict.tossups] == [(q.strip(), a) for q, a in stream]
    assert stream == [("  This (*) gas is inert. ", "<b><u>argon</u></b>")]
    assert [t.external_id for t in parse_file(path).tossups] == [
        "qbreader:2019-A:1:tossup:1",
        "qbreader:2021-B:2:tossup:4",
    ]


def test_qbreader_training_stream_tolerates_what_the_importer_rejects(tmp_path: Path) -> None:
    path = write(
        tmp_path / "partial.jsonl", '{"type": "tossup", "year": 2020, "question": "Q", "answer": "A"}\n'
    )
    assert list(qbreader.iter_tossups(path)) == [("Q", "A")]
    with pytest.raises(FormatError, match=r"partial\.jsonl:1: missing required field 'set'"):
        parse_file(path)


def expo_category(root: Path) -> Path:
    """Question 7 has an empty middle sentence; its text is that of sentences 0 and 2."""
    return write(
        root / "art.csv",
        "id,answer,sent,text\n7,Marat,0,one two three\n7,Marat,1,\n7,Marat,2,four five(*) six\n8,Serra,0,alpha\n",
    )


def test_exhibition_questions_feed_both_the_importer_and_the_buzz_positions(tmp_path: Path) -> None:
    expo_category(tmp_path)
    (tmp_path / "team").mkdir()
    log = write(
        tmp_path / "team" / "art.buzz.csv",
        "sentence,question,page,evidence,word,final,weight\n"
        '1,7,Empty,"{}",1,True,0.9\n'  # the empty sentence shows no word: not a position
        '2,7,The Death of Marat,"{}",2,True,0.5\n'
        '0,8,Serra,"{}",1,False,0.1\n',
    )
    (tossup_7, tossup_8) = parse_file(tmp_path).tossups
    assert (tossup_7.question, tossup_7.external_id, tossup_7.packet) == (
        "one two three four five(*) six",
        "7",
        "art",
    )
    buzzes = read_buzz_log(log)
    # sentence 2, 2 words seen → 3 words before it + 2 − 1 = word 4 of the imported text
    assert buzzes == {"7": RecordedBuzz("7", 4, "The Death of Marat", 0.5)}
    assert tossup_7.question.split()[buzzes["7"].token_index] == "five(*)"
    # A token map turns word indexes into display token indexes (here: every word shifted by 10).
    shifted = read_buzz_log(log, token_map=lambda words: [i + 10 for i in range(len(words))])
    assert shifted["7"].token_index == 14 and tossup_8.question == "alpha"


def test_exhibition_question_file_defects_name_the_line(tmp_path: Path) -> None:
    path = write(tmp_path / "sci.csv", "id,answer,sent,text\n5,X,0,a b\n5,X,0,c d\n")
    with pytest.raises(FormatError, match=r"sci\.csv:3: duplicate sentence 0 of question 5"):
        expo.read_questions(path)
    write(path, "id,answer,sent,text\n5,X,first,a b\n")
    with pytest.raises(FormatError, match=r"sci\.csv:2: 'sent' must be a sentence number"):
        expo.read_questions(path)
    assert expo.set_name(Path("expo/2024_470")) == ("2024 exhibition (470)", 2024)


def test_buzz_log_with_an_unknown_header_is_rejected_at_line_1(tmp_path: Path) -> None:
    path = write(tmp_path / "x.buzz.csv", "qid,pos\n1,2\n")
    with pytest.raises(FormatError, match=r"x\.buzz\.csv:1: header \['pos', 'qid'\]"):
        read_buzz_log(path)


def test_advscore_matrix_as_read_and_as_responses_agree(tmp_path: Path) -> None:
    path = write(tmp_path / "m.csv", "item_id,h_ann,GPT-4\nq1,1.0,\n\nq2,0,1\n")
    matrix = advscore.read_matrix(path)
    assert (matrix.columns, matrix.item_ids, matrix.lines) == (["h_ann", "GPT-4"], ["q1", "q2"], [2, 4])
    assert matrix.cells == [[True, None], [False, True]]
    responses = advscore.read_responses(path)
    assert [(r.kind, r.subject, r.item, r.correct) for r in responses] == [
        ("human", "ann", "q1", True),
        ("human", "ann", "q2", False),
        ("bot", "GPT-4", "q2", True),
    ]
    write(path, "item_id,h_ann\nq1,1\nq2,yes\n")
    with pytest.raises(FormatError, match=r"m\.csv:3: cell 'yes' of 'ann' is not 0, 1 or empty"):
        advscore.read_matrix(path)


def test_formats_imports_no_django_and_no_tossup_app() -> None:
    # Only the error family's pure module (FormatError is a member; it imports nothing) is allowed.
    code = (
        "import sys, formats.questions, formats.responses, formats.buzzlogs;"
        "bad = sorted(m for m in sys.modules if m.split('.')[0] in "
        "{'django', 'competition', 'buzzer', 'irt', 'scoring', 'config'} "
        "and m not in ('competition', 'competition.errors'));"
        "print(bad); sys.exit(1 if bad else 0)"
    )
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=60)
    assert done.returncode == 0, done.stdout + done.stderr
