"""Word packets as writers send them (issue 33, item 8): YAPP's conventions read from .docx files the
tests build with python-docx, answer lines with their required parts, line-numbered errors, nothing
written from a bad file (command and upload page), pictures and media markers in bonuses."""

from __future__ import annotations

import io
import struct
import zlib
from pathlib import Path

import docx
import pytest
from django.contrib.auth import get_user_model
from django.core.files.uploadedfile import SimpleUploadedFile
from django.core.management import call_command
from django.core.management.base import CommandError
from django.test import Client

from competition.importers import QuestionFileError, import_file, parse_file
from competition.models import Bonus, MediaFile, Packet, QuestionSet, Tossup
from scoring.judge import judge


def _png(size: int = 2) -> bytes:
    """A red square PNG whose header python-docx's picture reader accepts."""

    def chunk(kind: bytes, data: bytes) -> bytes:
        return struct.pack(">I", len(data)) + kind + data + struct.pack(">I", zlib.crc32(kind + data))

    rows = (b"\x00" + b"\xff\x00\x00" * size) * size
    header = struct.pack(">IIBBBBB", size, size, 8, 2, 0, 0, 0)
    return (
        b"\x89PNG\r\n\x1a\n"
        + chunk(b"IHDR", header)
        + chunk(b"IDAT", zlib.compress(rows))
        + chunk(b"IEND", b"")
    )


PNG = _png()

# A paragraph: a string, or runs of (text, "bu" = bold and underlined, "b", "u" or "").
Para = str | list[tuple[str, str]]

GOOD: list[Para] = [
    "ACF Club Open 2026 — Packet 3",  # title: skipped
    "Tossups",
    "1. This composer of the Goldberg Variations (*) wrote the Mass in B minor. For 10 points, name "
    "this Baroque composer.",
    [("ANSWER: ", "b"), ("Johann Sebastian ", ""), ("Bach", "bu"), (" [accept J. S. Bach]", "")],
    "<Music, Ana Writer>",
    "2. This island's sultan lost the shortest war in history. For 10 points, name this island",
    "off Tanzania.",  # a question split over two paragraphs
    [("ANS: ", ""), ("Zanzibar", "bu")],
    "Bonuses",
    "1. Answer these questions about cell biology, for 10 points each.",
    [("[10e] ", "b"), ("Name this organelle, the powerhouse of the cell.", "")],
    [("ANSWER: ", "b"), ("mitochondria", "bu"), (" [or ", ""), ("mitochondrion", "bu"), ("]", "")],
    "[10m] This process makes ATP across a membrane [[image:pics/atp.png|a membrane]].",
    [("ANSWER: ", "b"), ("chemiosmosis", "u")],
    "[h] Name the enzyme that makes ATP.",
    [("ANSWER: ", "b"), ("ATP synthase", "bu"), (" [prompt on ", ""), ("synthase", "u"), ("]", "")],
    "<Science, Biology>",
]


def write_docx(path: Path, paragraphs: list[Para], picture_in: str | None = None) -> Path:
    """A .docx of ``paragraphs``; with ``picture_in``, the paragraph starting so gets an inline picture."""
    document = docx.Document()
    for para in paragraphs:
        p = document.add_paragraph()
        for text, fmt in [(para, "")] if isinstance(para, str) else para:
            run = p.add_run(text)
            run.bold = "b" in fmt or None
            run.underline = "u" in fmt or None
        if picture_in and isinstance(para, str) and para.startswith(picture_in):
            p.add_run().add_picture(io.BytesIO(_png(3)))
    path.parent.mkdir(parents=True, exist_ok=True)
    document.save(str(path))
    return path


@pytest.fixture
def folder(tmp_path: Path) -> Path:
    club = tmp_path / "Club Open"
    (club / "pics").mkdir(parents=True)
    (club / "pics" / "atp.png").write_bytes(PNG)
    return club


def counts() -> tuple[int, int, int, int, int]:
    return (
        QuestionSet.objects.count(),
        Packet.objects.count(),
        Tossup.objects.count(),
        Bonus.objects.count(),
        MediaFile.objects.count(),
    )


def test_a_writers_packet_parses_to_the_records_the_other_importers_give(folder: Path) -> None:
    parsed = parse_file(write_docx(folder / "Round 3.docx", GOOD))
    assert parsed.fmt == "docx"
    t1, t2 = parsed.tossups
    assert (t1.set_name, t1.packet, t1.number, t1.line) == ("Club Open", "Round 3", 1, 3)
    assert t1.question.startswith("This composer of the Goldberg Variations (*) wrote")
    assert t1.answer_line == "Johann Sebastian <b><u>Bach</u></b> [accept J. S. Bach]"
    assert t1.category == "Music, Ana Writer"
    assert t1.external_id == "docx:Club Open:Round 3:tossup:1"
    assert t2.question.endswith("name this island off Tanzania.")
    assert t2.answer_line == "<b><u>Zanzibar</u></b>"
    (b1,) = parsed.bonuses
    assert b1.leadin == "Answer these questions about cell biology, for 10 points each."
    assert [p.value for p in b1.parts] == [10, 10, 10]
    assert [p.answer_line for p in b1.parts] == [
        "<b><u>mitochondria</u></b> [or <b><u>mitochondrion</u></b>]",
        "<u>chemiosmosis</u>",
        "<b><u>ATP synthase</u></b> [prompt on <u>synthase</u>]",
    ]
    assert b1.category == "Science, Biology"
    # The media marker of a bonus part is read from the packet's folder and stored, as a tossup's.
    (sha,) = parsed.media
    assert f"[[image:sha256:{sha}|a membrane|mime=image/png]]" in b1.parts[1].text
    # The required parts reach the judge as the writer marked them.
    assert judge(t1.answer_line, "Bach").verdict == "accept"
    assert judge(t1.answer_line, "Johann Sebastian").verdict == "reject"
    assert judge(b1.parts[2].answer_line, "synthase").verdict == "prompt"


def test_import_command_stores_the_packet_and_a_picture_in_a_bonus(db: None, folder: Path) -> None:
    path = write_docx(folder / "Round 3.docx", GOOD, picture_in="[h]")
    out = io.StringIO()
    call_command("import_questions", str(path), stdout=out)
    assert "Club Open: 2 tossups, 1 bonuses" in out.getvalue()
    assert counts() == (1, 1, 2, 1, 2)  # the marker's file and the inline picture
    bonus = Bonus.objects.get()
    assert bonus.parts[2]["value"] == 10
    assert bonus.parts[2]["answer_line"].startswith("<b><u>ATP synthase</u></b>")
    # The embedded picture is a stored image marker at its place in the part's text.
    assert "[[image:sha256:" in bonus.parts[2]["text"]
    assert Tossup.objects.get(number=1).answer_line.startswith("Johann Sebastian <b><u>Bach</u></b>")
    # Re-importing changes nothing.
    call_command("import_questions", str(path), stdout=io.StringIO())
    assert counts() == (1, 1, 2, 1, 2)


BAD: list[tuple[str, list[Para], int | None, str]] = [
    (
        "missing answer",
        ["1. First clue.", "ANSWER: one", "2. Second clue.", "3. Third clue.", "ANSWER: three"],
        3,
        "tossup 2 has no ANSWER: line",
    ),
    ("last tossup without answer", ["1. First clue.", "ANSWER: one", "2. Second clue."], 3, "tossup 2 has no ANSWER: line"),
    (
        "part without value",
        ["Bonuses", "1. Leadin.", "[10] Part one.", "ANSWER: one", "Part two.", "ANSWER: two"],
        6,
        "second ANSWER: line for one bonus part",
    ),
    (
        "bonus without parts",
        ["Bonuses", "1. Leadin.", "ANSWER: one", "[10] Part.", "ANSWER: two"],
        4,
        "bonus part after its question's ANSWER: line",
    ),
    ("answer before question", ["ANSWER: one", "1. Clue.", "ANSWER: two"], 1, "ANSWER: line before any numbered"),
    ("part without answer", ["Bonuses", "1. Leadin.", "[10] Part one."], 3, "bonus 1 part 1 has no ANSWER: line"),
    ("empty answer", ["1. Clue.", "ANSWER:   "], 1, "tossup 1 has an empty ANSWER: line"),
    ("no questions", ["Just a title", "and a note"], None, "no numbered questions"),
]  # fmt: skip


@pytest.mark.parametrize(("case", "paragraphs", "line", "message"), BAD, ids=[b[0] for b in BAD])
def test_malformed_packets_name_the_line_and_store_nothing(
    db: None, folder: Path, case: str, paragraphs: list[Para], line: int | None, message: str
) -> None:
    write_docx(folder / "Round 1.docx", GOOD)  # a good packet earlier in the same command: not stored either
    path = write_docx(folder / "Round 2.docx", paragraphs)
    with pytest.raises(QuestionFileError) as info:
        parse_file(path)
    assert info.value.line == line and message in str(info.value)
    assert str(info.value).startswith(f"{path}:{line}: " if line else f"{path}: ")
    with pytest.raises(CommandError, match="nothing imported"):
        call_command("import_questions", str(folder / "Round 1.docx"), str(path), stdout=io.StringIO())
    assert counts() == (0, 0, 0, 0, 0)


def test_a_broken_zip_and_a_missing_media_file_store_nothing(db: None, folder: Path) -> None:
    broken = folder / "broken.docx"
    broken.write_bytes(b"PK\x03\x04 this is no Word file")
    with pytest.raises(QuestionFileError, match=r"not a readable \.docx"):
        import_file(broken)
    path = write_docx(
        folder / "Round 4.docx", [*GOOD[:8], "1. Leadin.", "[10] See [[image:pics/nope.png]].", "ANSWER: x"]
    )
    with pytest.raises(QuestionFileError, match=r"Round 4.docx:9: image file 'pics/nope.png' not found"):
        import_file(path)
    assert counts() == (0, 0, 0, 0, 0)


@pytest.fixture
def organiser(db: None) -> Client:
    client = Client()
    client.force_login(get_user_model().objects.create_user("org", password="pw-for-tests-only"))
    return client


def test_the_upload_page_imports_a_docx_under_the_named_set_and_refuses_a_bad_one(
    organiser: Client, tmp_path: Path
) -> None:
    good = write_docx(tmp_path / "Round 5.docx", GOOD[:8])  # the tossups
    bad = write_docx(tmp_path / "Round 6.docx", ["1. Clue one.", "ANSWER: one", "2. Clue two."])

    def post(path: Path, set_name: str):
        upload = SimpleUploadedFile(path.name, path.read_bytes())
        return organiser.post("/moderator/upload/", {"file": upload, "fmt": "auto", "set_name": set_name})

    page = post(good, "").content.decode()
    assert "a docx file is named by its folder: give a set name" in page
    response = post(bad, "Spring Open")
    assert response.status_code == 400
    assert "nothing imported: Round 6.docx:3: tossup 2 has no ANSWER: line" in response.content.decode()
    assert counts() == (0, 0, 0, 0, 0)
    assert post(good, "Spring Open").status_code in (200, 302)
    assert QuestionSet.objects.get().name == "Spring Open"
    assert Packet.objects.get().name == "Round 5"
    assert (Tossup.objects.count(), Bonus.objects.count()) == (2, 0)
