"""Question importers: pure parsers on small hand-written files, then the DB write (all-or-nothing,
idempotent) with the bundled demo packet and slices of the real qbreader and QANTA files."""

from __future__ import annotations

import gzip
import json
import re
from io import StringIO
from pathlib import Path
from typing import Any

import pytest
from django.core.management import CommandError, call_command

from competition.importers import (
    DEMO_PACKET,
    QuestionFileError,
    detect_format,
    import_demo_packet,
    import_file,
    parse_file,
)

QBREADER = "packets/qbreader_packets_2012_2022.jsonl.gz"


def _tossup(**over: Any) -> dict[str, Any]:
    row = {
        "type": "tossup", "set": "2099-TEST", "year": 2099, "packet": "1", "number": 1,
        "question": "This gas (*) is inert. For 10 points, name this element.",
        "answer": "<b><u>argon</u></b> [or <b><u>Ar</u></b>]",
        "category": "Science", "subcategory": "Chemistry",
    }  # fmt: skip
    return {**row, **over}


def _bonus(**over: Any) -> dict[str, Any]:
    row = {
        "type": "bonus", "set": "2099-TEST", "year": 2099, "packet": "1", "number": 1,
        "leadin": "For 10 points each:", "parts": ["Part one.", "Part two.", "Part three."],
        "answers": ["one", "two [prompt on <u>2</u>]", "three"], "category": "History", "subcategory": None,
    }  # fmt: skip
    return {**row, **over}


def _jsonl(path: Path, rows: list[Any]) -> Path:
    path.write_text(
        "".join((r if isinstance(r, str) else json.dumps(r)) + "\n" for r in rows), encoding="utf-8"
    )
    return path


def _real(shared_data: Path, rel: str) -> Path:
    path = shared_data / rel
    if not path.is_file():
        pytest.skip(f"{path} absent: this test needs the real file from ../shared/data")
    return path


def _db_counts() -> tuple[int, int, int, int]:
    from competition.models import Bonus, Packet, QuestionSet, Tossup

    return QuestionSet.objects.count(), Packet.objects.count(), Tossup.objects.count(), Bonus.objects.count()


# ------------------------------------------------------------------ pure parsing


def test_demo_packet_parses_with_power_marks_and_answer_lines() -> None:
    parsed = parse_file(DEMO_PACKET)
    assert parsed.fmt == "demo"
    assert len(parsed.tossups) >= 24 and len(parsed.bonuses) >= 24
    assert not parsed.skipped
    categories = {t.category for t in parsed.tossups}
    for wanted in (
        "Literature",
        "History",
        "Science",
        "Fine Arts",
        "Geography",
        "Social Science",
        "Pop Culture",
    ):
        assert wanted in categories
    assert categories & {"Religion", "Mythology"}
    for t in parsed.tossups:
        words = t.question.split()
        assert words.count("(*)") == 1, t.external_id
        assert 60 <= len(words) - 1 <= 120, (t.external_id, len(words))
        assert 0.3 <= words.index("(*)") / len(words) <= 0.8, t.external_id
        assert re.search(r"For 10 points, name th(is|ese) ", t.question), t.external_id
        assert re.search(r"<b><u>[^<]+</u></b>", t.answer_line), t.answer_line
    for b in parsed.bonuses:
        assert len(b.parts) == 3 and all(p.value == 10 for p in b.parts)
        assert all("<b><u>" in p.answer_line for p in b.parts)
    numbers = [(t.packet, t.number) for t in parsed.tossups]
    assert len(set(numbers)) == len(numbers)


def test_qbreader_filters_limit_and_html_kept(tmp_path: Path) -> None:
    rows = [
        _tossup(number=1),
        _bonus(number=1),
        _tossup(number=2, set="2001-OLD", year=2001),
        _tossup(number=2, answer='Louis XIII [or Louis the Just; prompt on "Louis"]'),
        _tossup(number=3),
    ]
    path = _jsonl(tmp_path / "p.jsonl", rows)
    everything = parse_file(path)
    assert everything.fmt == "qbreader"
    assert [t.set_name for t in everything.tossups] == ["2099-TEST", "2001-OLD", "2099-TEST", "2099-TEST"]
    assert everything.tossups[0].question == rows[0]["question"]
    assert everything.tossups[0].answer_line == rows[0]["answer"]
    assert everything.tossups[2].answer_line == 'Louis XIII [or Louis the Just; prompt on "Louis"]'
    assert everything.bonuses[0].parts[1].answer_line == "two [prompt on <u>2</u>]"
    assert everything.bonuses[0].subcategory == ""
    assert [t.line for t in everything.tossups] == [1, 3, 4, 5]

    assert [t.number for t in parse_file(path, sets=["2099-TEST"]).tossups] == [1, 2, 3]
    assert [t.set_name for t in parse_file(path, max_year=2050).tossups] == ["2001-OLD"]
    assert parse_file(path, min_year=2050, max_year=2100).tossups[0].set_name == "2099-TEST"
    limited = parse_file(path, sets=["2099-TEST"], limit=2)
    assert [t.number for t in limited.tossups] == [1, 2] and len(limited.bonuses) == 1


def test_gzip_detected_by_magic_bytes(tmp_path: Path) -> None:
    path = tmp_path / "packets.data"
    with gzip.open(path, "wt", encoding="utf-8") as fh:
        fh.write(json.dumps(_tossup()) + "\n")
    parsed = parse_file(path)
    assert parsed.fmt == "qbreader" and parsed.tossups[0].question == _tossup()["question"]


def test_bad_json_names_the_line(tmp_path: Path) -> None:
    path = _jsonl(tmp_path / "bad.jsonl", [_tossup(number=1), _tossup(number=2), '{"type": "tossup", oops'])
    with pytest.raises(QuestionFileError) as info:
        parse_file(path, fmt="qbreader")
    assert info.value.line == 3
    assert str(info.value).startswith(f"{path}:3: invalid JSON")


@pytest.mark.parametrize(
    ("row", "message"),
    [
        ({k: v for k, v in _tossup().items() if k != "answer"}, "missing required field 'answer'"),
        (_tossup(answer="   "), "empty answer line"),
        (_tossup(answer=None), "empty answer line"),
        (_tossup(question=""), "empty question"),
        (_tossup(number="7"), "field 'number' must be int, got str"),
        (_tossup(year=True), "field 'year' must be int, got bool"),
        (_tossup(type="quiz"), "field 'type' must be 'tossup' or 'bonus'"),
        (_bonus(parts=[]), "bonus has no parts"),
        (_bonus(answers=["a", "b"]), "bonus has 3 parts but 2 answers"),
        (_bonus(parts=["a", 3, "c"]), "field 'parts' must be a list of strings"),
        ([1, 2], "expected a JSON object, got list"),
    ],
)
def test_bad_record_names_file_and_line(tmp_path: Path, row: Any, message: str) -> None:
    path = _jsonl(tmp_path / "bad.jsonl", [_tossup(number=10), _bonus(number=10), row])
    with pytest.raises(QuestionFileError) as info:
        parse_file(path, fmt="qbreader")
    assert info.value.line == 3 and info.value.path == str(path)
    assert message in str(info.value)


def test_skip_invalid_skips_only_content_defects(tmp_path: Path) -> None:
    path = _jsonl(
        tmp_path / "p.jsonl", [_tossup(number=1), _tossup(number=2, answer=None), _bonus(parts=None)]
    )
    parsed = parse_file(path, skip_invalid=True)
    assert [t.number for t in parsed.tossups] == [1] and parsed.bonuses == []
    assert parsed.skipped == [f"{path}:2: empty answer line", f"{path}:3: bonus has no parts"]
    broken = _jsonl(tmp_path / "q.jsonl", [_tossup(), "not json"])
    with pytest.raises(QuestionFileError, match=":2: invalid JSON"):
        parse_file(broken, skip_invalid=True)


def test_filtered_out_records_still_checked_structurally(tmp_path: Path) -> None:
    path = _jsonl(
        tmp_path / "p.jsonl", [_tossup(), {k: v for k, v in _tossup(set="X").items() if k != "number"}]
    )
    with pytest.raises(QuestionFileError, match=r":2: missing required field 'number'"):
        parse_file(path, sets=["2099-TEST"])


def test_duplicate_number_in_a_packet_is_an_error(tmp_path: Path) -> None:
    path = _jsonl(tmp_path / "p.jsonl", [_tossup(), _bonus(), _tossup()])
    with pytest.raises(QuestionFileError, match=r":3: duplicate tossup .* number 1 \(first at line 1\)"):
        parse_file(path)


def _qanta_question(qid: int, **over: Any) -> dict[str, Any]:
    q = {
        "text": f"Question {qid} text. For 10 points, name this thing.", "answer": f"thing {qid} [or stuff]",
        "page": "Thing", "category": "Science", "subcategory": "Science Physics", "tournament": "ACF Fall",
        "year": 2015, "qanta_id": qid, "fold": "buzzdev", "tokenizations": [[0, 20]],
    }  # fmt: skip
    return {**q, **over}


def test_qanta_sets_packets_numbers_and_deep_line_numbers(tmp_path: Path) -> None:
    qs = [_qanta_question(11), _qanta_question(12, tournament="NASAT"), _qanta_question(13)]
    path = tmp_path / "qanta.small.json"
    path.write_text(json.dumps(qs, indent=1), encoding="utf-8")
    assert detect_format(path) == "qanta"
    parsed = parse_file(path)
    assert [(t.set_name, t.packet, t.number, t.external_id) for t in parsed.tossups] == [
        ("QANTA 2015 ACF Fall", "buzzdev", 1, "11"),
        ("QANTA 2015 NASAT", "buzzdev", 1, "12"),
        ("QANTA 2015 ACF Fall", "buzzdev", 2, "13"),
    ]
    assert parsed.tossups[0].answer_line == "thing 11 [or stuff]"
    # Numbers are positions in the unfiltered file, so a filtered import keeps them.
    assert [t.number for t in parse_file(path, sets=["QANTA 2015 ACF Fall"], limit=5).tossups] == [1, 2]

    qs[2] = {k: v for k, v in qs[2].items() if k != "answer"}
    path.write_text(json.dumps({"questions": qs}, indent=1), encoding="utf-8")
    lines = [i + 1 for i, ln in enumerate(path.read_text().splitlines()) if ln == "  {"]
    with pytest.raises(QuestionFileError) as info:
        parse_file(path)
    assert info.value.line == lines[2] and "missing required field 'answer'" in str(info.value)


def test_demo_format_errors_point_into_the_document(tmp_path: Path) -> None:
    doc = json.loads(DEMO_PACKET.read_text(encoding="utf-8"))
    doc["packets"][0]["bonuses"][1]["parts"][2]["answer"] = ""
    path = tmp_path / "demo.json"
    text = json.dumps(doc, indent=2, ensure_ascii=False)
    path.write_text(text, encoding="utf-8")
    bad_line = next(i + 1 for i, ln in enumerate(text.splitlines()) if ln.strip() == '"answer": ""')
    with pytest.raises(QuestionFileError) as info:
        parse_file(path)
    # The part object opens on the line before its "text" key, two lines above "answer".
    assert info.value.line == bad_line - 2 and "empty answer line in bonus part 3" in str(info.value)

    path.write_text(text.replace('"year": 2025,', '"year": 2025', 1), encoding="utf-8")
    with pytest.raises(QuestionFileError, match=r"demo.json:4: invalid JSON"):
        parse_file(path, fmt="demo")


def test_unknown_format_and_bad_arguments(tmp_path: Path) -> None:
    path = tmp_path / "x.json"
    path.write_text('{"hello": 1}', encoding="utf-8")
    with pytest.raises(QuestionFileError, match="unknown question file format"):
        parse_file(path)
    with pytest.raises(ValueError, match="unknown format"):
        parse_file(path, fmt="csv")  # type: ignore[arg-type]
    with pytest.raises(QuestionFileError, match="cannot open"):
        parse_file(tmp_path / "missing.jsonl")


def test_real_qbreader_slice_streams(shared_data: Path) -> None:
    path = _real(shared_data, QBREADER)
    parsed = parse_file(path, sets=["2021-PACE"], limit=20)
    assert len(parsed.tossups) == 20 and len(parsed.bonuses) == 20
    assert {t.set_name for t in parsed.tossups} == {"2021-PACE"}
    assert sum("(*)" in t.question for t in parsed.tossups) >= 10
    assert any("[" in t.answer_line for t in parsed.tossups)
    assert all(len(b.parts) >= 1 for b in parsed.bonuses)
    # Whole-file strict parse fails on the first real defect, naming its line.
    with pytest.raises(QuestionFileError, match=r"qbreader_packets_2012_2022\.jsonl\.gz:\d+: "):
        parse_file(path, max_year=2014)


# ------------------------------------------------------------------ database


@pytest.mark.django_db
def test_import_demo_packet_into_db() -> None:
    from competition.models import Bonus, QuestionSet, Tossup

    parsed = parse_file(DEMO_PACKET)
    counts = import_demo_packet()
    assert counts["format"] == "demo"
    assert counts["tossups"] == len(parsed.tossups) and counts["bonuses"] == len(parsed.bonuses)
    assert counts["created"] == len(parsed.tossups) + len(parsed.bonuses)
    assert counts["sets"] == {"Tossup Demo": {"tossups": len(parsed.tossups), "bonuses": len(parsed.bonuses)}}
    qs = QuestionSet.objects.get(name="Tossup Demo")
    assert (qs.year, qs.source) == (2025, "demo")
    assert sorted(qs.packets.values_list("name", flat=True)) == ["1", "2"]
    first = parsed.tossups[0]
    row = Tossup.objects.get(packet__question_set=qs, packet__name=first.packet, number=first.number)
    assert row.question == first.question and "(*)" in row.question
    assert row.answer_line == first.answer_line and row.category == first.category
    assert Tossup.objects.filter(question__contains="(*)").count() == len(parsed.tossups)
    bonus = Bonus.objects.get(packet__question_set=qs, packet__name="1", number=1)
    assert bonus.parts == [
        {"text": p.text, "answer_line": p.answer_line, "value": 10} for p in parsed.bonuses[0].parts
    ]


@pytest.mark.django_db
def test_reimport_is_idempotent_and_updates_in_place(tmp_path: Path) -> None:
    from competition.models import Tossup

    first = import_demo_packet()
    before = _db_counts()
    ids = sorted(Tossup.objects.values_list("id", flat=True))
    again = import_demo_packet()
    assert _db_counts() == before
    assert (again["created"], again["updated"], again["unchanged"]) == (0, 0, first["created"])

    doc = json.loads(DEMO_PACKET.read_text(encoding="utf-8"))
    doc["packets"][0]["tossups"][0]["answer"] = "<b><u>changed</u></b>"
    path = tmp_path / "demo.json"
    path.write_text(json.dumps(doc), encoding="utf-8")
    changed = import_file(path)
    assert (changed["created"], changed["updated"]) == (0, 1)
    assert _db_counts() == before
    assert sorted(Tossup.objects.values_list("id", flat=True)) == ids
    assert Tossup.objects.get(packet__name="1", number=1).answer_line == "<b><u>changed</u></b>"


@pytest.mark.django_db
def test_failed_import_writes_nothing(tmp_path: Path) -> None:
    good = _jsonl(tmp_path / "good.jsonl", [_tossup(), _bonus()])
    bad = _jsonl(tmp_path / "bad.jsonl", [_tossup(set="OTHER"), _tossup(set="OTHER", number=2, answer="")])
    before = _db_counts()
    with pytest.raises(QuestionFileError, match=":2: empty answer line"):
        import_file(bad)
    assert _db_counts() == before
    # The command parses every file before writing any: a bad second file leaves the first unwritten.
    with pytest.raises(CommandError, match=r"nothing imported: .*bad\.jsonl:2: empty answer line"):
        call_command("import_questions", str(good), str(bad), stdout=StringIO())
    assert _db_counts() == before


@pytest.mark.django_db
def test_write_is_one_transaction(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    from competition.models import Bonus

    path = _jsonl(tmp_path / "p.jsonl", [_tossup(), _bonus()])
    before = _db_counts()

    def boom(*args: Any, **kwargs: Any) -> None:
        raise RuntimeError("disk full")

    # Tossups are written before bonuses; failing on bonuses must roll the tossups back too.
    monkeypatch.setattr(Bonus.objects, "bulk_create", boom)
    with pytest.raises(RuntimeError, match="disk full"):
        import_file(path)
    assert _db_counts() == before


@pytest.mark.django_db
def test_command_demo_and_filters(tmp_path: Path) -> None:
    out = StringIO()
    call_command("import_questions", "--demo", stdout=out)
    assert "Tossup Demo: 24 tossups, 24 bonuses" in out.getvalue()
    path = _jsonl(tmp_path / "p.jsonl", [_tossup(), _tossup(number=2, set="2001-OLD", year=2001), _bonus()])
    out = StringIO()
    call_command("import_questions", str(path), "--format", "qbreader", "--min-year", "2050", stdout=out)
    assert "2099-TEST: 1 tossups, 1 bonuses" in out.getvalue() and "2001-OLD" not in out.getvalue()
    with pytest.raises(CommandError, match="give at least one PATH"):
        call_command("import_questions", stdout=StringIO())


@pytest.mark.django_db
def test_import_real_qbreader_slice(shared_data: Path) -> None:
    from competition.models import QuestionSet, Tossup

    path = _real(shared_data, QBREADER)
    out = StringIO()
    call_command("import_questions", str(path), "--set", "2021-PACE", "--limit", "20", stdout=out)
    assert "2021-PACE: 20 tossups, 20 bonuses" in out.getvalue()
    qs = QuestionSet.objects.get(name="2021-PACE")
    assert (qs.year, qs.source) == (2021, "qbreader")
    parsed = parse_file(path, sets=["2021-PACE"], limit=20)
    stored = {(t.packet.name, t.number): t for t in Tossup.objects.filter(packet__question_set=qs)}
    for rec in parsed.tossups:
        row = stored[rec.packet, rec.number]
        assert (row.question, row.answer_line, row.category, row.subcategory) == (
            rec.question, rec.answer_line, rec.category, rec.subcategory
        )  # fmt: skip


@pytest.mark.django_db
def test_import_real_qanta(shared_data: Path) -> None:
    from competition.models import Tossup

    path = _real(shared_data, "qanta/qanta.buzzdev.json.gz")
    with gzip.open(path, "rt", encoding="utf-8") as fh:
        raw = json.load(fh)
    counts = import_file(path)
    assert counts["format"] == "qanta" and counts["tossups"] == len(raw) and counts["bonuses"] == 0
    assert sum(c["tossups"] for c in counts["sets"].values()) == len(raw)
    assert set(counts["sets"]) == {f"QANTA {q['year']} {q['tournament']}" for q in raw}
    q = raw[0]
    row = Tossup.objects.get(external_id=str(q["qanta_id"]))
    assert (row.question, row.answer_line, row.packet.name) == (
        q["text"].strip(),
        q["answer"].strip(),
        "buzzdev",
    )
    assert row.packet.question_set.source == "qanta"
    assert import_file(path)["unchanged"] == len(raw)


# ------------------------------------------------------------------ exhibition (expo) CSVs

EXPO_ART = (
    "id,answer,sent,text\n"
    '160,The Death of Marat,1,"In the center, a green tablecloth."\n'
    "160,The Death of Marat,0,This piece was used as album artwork.\n"
    "161,Guernica,0,  This mural shows a bull.  \n"
)


def _expo_folder(tmp_path: Path) -> Path:
    root = tmp_path / "2024_470"
    (root / "team").mkdir(parents=True)
    (root / "art.csv").write_text(EXPO_ART, encoding="utf-8")
    (root / "sci.csv").write_text("id,answer,sent,text\n110,Argon,0,This gas is inert.\n", encoding="utf-8")
    # Team logs and answer files beside and below the sentences are not questions.
    (root / "team" / "art.csv").write_text(EXPO_ART, encoding="utf-8")
    (root / "art.final.csv").write_text("id,answer,sent,text\n9,x,0,y\n", encoding="utf-8")
    return root


def test_expo_folder_joins_sentences_in_order(tmp_path: Path) -> None:
    root = _expo_folder(tmp_path)
    assert detect_format(root) == "expo" and detect_format(root / "art.csv") == "expo"
    parsed = parse_file(root)
    got = [(t.set_name, t.year, t.packet, t.number, t.category, t.external_id) for t in parsed.tossups]
    assert got == [
        ("2024 exhibition (470)", 2024, "art", 1, "art", "160"),
        ("2024 exhibition (470)", 2024, "art", 2, "art", "161"),
        ("2024 exhibition (470)", 2024, "sci", 1, "sci", "110"),
    ]
    marat = parsed.tossups[0]
    assert marat.question == "This piece was used as album artwork. In the center, a green tablecloth."
    assert marat.answer_line == "The Death of Marat" and marat.line == 2
    assert parsed.tossups[1].question == "This mural shows a bull."
    assert [t.external_id for t in parse_file(root / "art.csv", fmt="expo").tossups] == ["160", "161"]


@pytest.mark.parametrize(
    ("text", "line", "message"),
    [
        ("id,answer,text\n1,a,b\n", 1, "missing column(s) ['sent']"),
        ("id,answer,sent,text\n1,a,0,b\n1,a,x,c\n", 3, "'sent' must be a sentence number"),
        ("id,answer,sent,text\n1,a,0,b\n1,a,0,c\n", 3, "duplicate sentence 0 of question 1"),
        ("id,answer,sent,text\n,a,0,b\n", 2, "empty 'id'"),
    ],
)
def test_expo_errors_name_file_and_line(tmp_path: Path, text: str, line: int, message: str) -> None:
    path = tmp_path / "geo.csv"
    path.write_text(text, encoding="utf-8")
    with pytest.raises(QuestionFileError) as caught:
        parse_file(path, fmt="expo")
    assert caught.value.line == line and message in caught.value.message


def test_expo_empty_answer_is_an_invalid_record(tmp_path: Path) -> None:
    path = tmp_path / "geo.csv"
    path.write_text("id,answer,sent,text\n1,,0,b\n2,Peru,0,c\n", encoding="utf-8")
    with pytest.raises(QuestionFileError, match="empty answer line"):
        parse_file(path)
    parsed = parse_file(path, skip_invalid=True)
    assert [t.external_id for t in parsed.tossups] == ["2"] and len(parsed.skipped) == 1


def test_csv_without_expo_columns_and_empty_folder_are_errors(tmp_path: Path) -> None:
    other = tmp_path / "x.csv"
    other.write_text("question_id,token_position\n", encoding="utf-8")
    with pytest.raises(QuestionFileError, match="exhibition columns"):
        detect_format(other)
    (tmp_path / "empty").mkdir()
    with pytest.raises(QuestionFileError, match="no exhibition"):
        parse_file(tmp_path / "empty")


@pytest.mark.django_db
def test_import_real_exhibition_folder(shared_data: Path) -> None:
    from competition.models import QuestionSet, Tossup

    root = shared_data / "expo" / "2024_470"
    if not root.is_dir():
        pytest.skip(f"{root} absent: this test needs the 2024 exhibition from ../shared/data")
    categories = sorted(p.stem for p in root.glob("*.csv"))
    counts = import_file(root)
    assert counts["format"] == "expo" and not counts["skipped"]
    qset = QuestionSet.objects.get(name="2024 exhibition (470)")
    assert qset.source == "expo" and qset.year == 2024
    tossups = Tossup.objects.filter(packet__question_set=qset)
    # 74 tossups in 15 topical categories + 5 in start.csv.
    assert tossups.count() == counts["tossups"] == 79
    assert sorted(qset.packets.values_list("name", flat=True)) == categories
    marat = tossups.get(external_id="160")
    assert marat.category == "art" and marat.answer_line == "The Death of Marat"
    assert marat.question.startswith("This piece was used as the album artwork on two different")
    assert "In the center of the painting, a green tablecloth" in marat.question
    assert import_file(root)["unchanged"] == 79
