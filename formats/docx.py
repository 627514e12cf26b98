"""Word packets (``.docx``) as writers send them, in the conventions of MODAQ's packet parser YAPP
(github.com/alopezlago/YetAnotherPacketParser, ``Lexer/LexerClassifier.cs``)::

    Tossups                                   (optional heading: "Tossups" / "Bonuses")
    1. This composer wrote … (*) … For 10 points, name this composer.
    ANSWER: Johann Sebastian BACH             (bold/underlined runs: the required part)
    <Music, Smith>                            (optional metadata line: the category)
    Bonuses
    1. Answer these questions about Bach. For 10 points each:
    [10e] Name this instrument …
    ANSWER: organ
    [10h] …

A question starts at a numbered paragraph (``1.``, ``TB.`` / ``Tiebreaker.`` for a tiebreaker); an
answer line at ``ANSWER:`` / ``ANS:`` / ``ANSWER.`` (any case); a bonus part at its value in brackets:
``[10]``, ``[10e]``/``[10m]``/``[10h]`` (a difficulty mark, dropped), ``[e]``/``[h]`` alone (the value is
then 10). A numbered question whose text is followed by a part is a bonus, so the heading is optional;
after a ``Bonuses`` heading every question is a bonus. Other paragraphs continue the text before them
(questions split over several paragraphs; a soft line break starts a new line within the paragraph).
Paragraphs before the first question (title, editors) are skipped. Tables are not read.

Formatting: an answer line keeps bold and underline as HTML (``<b><u>BACH</u></b>``, ``<b>…</b>``,
``<u>…</u>``: ``scoring.judge``'s required part); other text is kept plain (``&``, ``<``, ``>`` in an
answer line are HTML-escaped). Question text keeps the power mark ``(*)``. A picture in a run becomes an
image marker at its place (``formats.media``: ``[[image:sha256:…|ALT|mime=…]]``, ALT the picture's
description) with its bytes in ``ParsedFile.media``; text markers (``[[image:pics/x.png]]``) are read
from the file's folder as in every format, in tossups and bonus parts alike.

Records: set = the file's folder name, packet = the file name without ``.docx``; tossups and bonuses
numbered 1, 2, … in order; ``external_id`` ``"docx:<set>:<packet>:<tossup|bonus>:<number>"``; ``line``
= the 1-based paragraph number, which every error names (``"line 14: tossup 7 has no ANSWER: line"``).
"""

from __future__ import annotations

import hashlib
import html
import re
import zipfile
from dataclasses import dataclass, field
from functools import partial
from pathlib import Path
from typing import Any

from formats.collect import Collector, InvalidRecord
from formats.errors import FormatError
from formats.media import MAX_MEDIA_BYTES, Marker, MediaBlob
from formats.records import BONUS_PART_VALUE, BonusPart, BonusRecord, TossupRecord

NUMBER_RE = re.compile(r"^\s*(\d+|tb|tie(?:breaker)?)\s*\.\s*", re.I)
ANSWER_RE = re.compile(r"^\s*ANS(?:WER)?\s*[:.]\s*", re.I)
PART_RE = re.compile(r"^\s*\[\s*(?:(\d+)\s*[ehm]?|[ehm])\s*\]\s*")
METADATA_RE = re.compile(r"^\s*<([^<>]+)>\s*$")
HEADING_RE = re.compile(r"^\s*(tossups?|bonuses|bonus(?:es)?\s+questions?)\s*:?\s*$", re.I)
_NS = {
    "a": "http://schemas.openxmlformats.org/drawingml/2006/main",
    "r": "http://schemas.openxmlformats.org/officeDocument/2006/relationships",
    "wp": "http://schemas.openxmlformats.org/drawingml/2006/wordprocessingDrawing",
}


@dataclass(frozen=True)
class Segment:
    """A piece of one line: text with its formatting, or (``marker`` set) a picture's marker."""

    text: str
    bold: bool = False
    underline: bool = False
    marker: str = ""


@dataclass
class Line:
    """One line of the document: its paragraph's 1-based number and its segments."""

    number: int
    segments: list[Segment]

    @property
    def plain(self) -> str:
        return "".join(s.marker or s.text for s in self.segments)

    def after(self, n: int) -> Line:
        """This line without its first ``n`` characters of plain text (a number, a value, ANSWER:)."""
        out: list[Segment] = []
        for s in self.segments:
            size = len(s.marker or s.text)
            if n >= size:
                n -= size
                continue
            out.append(Segment(s.text[n:], s.bold, s.underline) if n else s)
            n = 0
        return Line(self.number, out)

    def html(self) -> str:
        """The line as answer-line HTML: bold → ``<b>``, underline → ``<u>``, text escaped."""
        out = []
        for s in self.segments:
            text = s.marker or html.escape(s.text, quote=False)
            if s.underline and text.strip():
                text = f"<u>{text}</u>"
            if s.bold and text.strip():
                text = f"<b>{text}</b>"
            out.append(text)
        # Adjacent runs with the same formatting are one HTML element (Word splits runs at will).
        joined = "".join(out)
        for _ in range(2):
            joined = joined.replace("</u></b><b><u>", "").replace("</b><b>", "").replace("</u><u>", "")
        return joined


@dataclass
class _Question:
    """A question being read: tossup text or bonus lead-in, and its parts (a bonus)."""

    line: int
    text: list[Line]
    answer: list[Line] | None = None
    category: str = ""
    parts: list[_Part] = field(default_factory=list)


@dataclass
class _Part:
    line: int
    value: int | None
    text: list[Line]
    answer: list[Line] | None = None


def _is_on(value: Any) -> bool:
    """A run property that is set: True, or an underline style other than WD_UNDERLINE.NONE (falsy)."""
    return bool(value)


def read_lines(path: Path, media: dict[str, MediaBlob]) -> list[Line]:
    """The document's lines (paragraphs, split at soft line breaks), pictures as stored image markers
    whose bytes land in ``media``. Raises FormatError for a file that is not a Word document."""
    import docx
    from docx.opc.exceptions import PackageNotFoundError

    try:
        document = docx.Document(str(path))
    except (PackageNotFoundError, zipfile.BadZipFile, KeyError, ValueError) as exc:
        raise FormatError(path, None, f"not a readable .docx (a Word file is a zip package): {exc}") from None
    lines: list[Line] = []
    for number, paragraph in enumerate(document.paragraphs, 1):
        current: list[Segment] = []
        for run in paragraph.runs:
            bold = _is_on(run.bold) or bool(run.style is not None and run.style.font.bold)
            underline = _is_on(run.underline)
            for piece in re.split(r"(\n)", run.text):
                if piece == "\n":
                    lines.append(Line(number, current))
                    current = []
                elif piece:
                    current.append(Segment(piece.replace("\t", " "), bold, underline))
            for marker in _pictures(run, document, media):
                current.append(Segment("", marker=f" {marker} "))
        lines.append(Line(number, current))
    return lines


def _pictures(run: Any, document: Any, media: dict[str, MediaBlob]) -> list[str]:
    """The stored image markers of the pictures in ``run`` (their bytes go to ``media``)."""
    out = []
    for drawing in run._r.findall(".//wp:inline", _NS) + run._r.findall(".//wp:anchor", _NS):
        blip = drawing.find(".//a:blip", _NS)
        rid = blip.get(f"{{{_NS['r']}}}embed") if blip is not None else None
        part = document.part.related_parts.get(rid) if rid else None
        if part is None:
            continue
        data, mime = part.blob, part.content_type
        if not mime.startswith("image/") or not 0 < len(data) <= MAX_MEDIA_BYTES:
            continue
        sha = hashlib.sha256(data).hexdigest()
        media.setdefault(sha, MediaBlob(sha, mime, data))
        doc_pr = drawing.find("wp:docPr", _NS)
        alt = (doc_pr.get("descr") or doc_pr.get("title") or "") if doc_pr is not None else ""
        alt = re.sub(r"\s+", " ", alt.replace("|", "/").replace("]]", "")).strip()
        out.append(Marker("image", f"sha256:{sha}", alt, mime=mime).text())
    return out


def _plain(lines: list[Line]) -> str:
    return " ".join(" ".join(ln.plain.split()) for ln in lines).strip()


def _answer(lines: list[Line]) -> str:
    return re.sub(r"\s+", " ", " ".join(ln.html() for ln in lines)).strip()


def parse(path: Path, collect: Collector) -> None:
    """Read the packet ``path`` into ``collect`` (see the module docstring). Raises FormatError
    ``"path:LINE: message"``: no question, text before an ANSWER: line missing, a part without a
    value, a part outside a bonus, a tossup or part with no ANSWER: line."""
    set_name, packet = path.parent.name or "docx", path.stem
    if not collect.filters.keeps(set_name, None):
        return
    tossups: list[_Question] = []
    bonuses: list[_Question] = []
    in_bonuses = False
    q: _Question | None = None
    target: list[Line] | None = None  # the lines the next plain paragraph continues

    for ln in read_lines(path, collect.parsed.media):
        text = ln.plain
        if not text.strip():
            continue
        if HEADING_RE.match(text):
            in_bonuses = text.strip().lower().startswith("bonus")
            q, target = None, None
            continue
        if m := NUMBER_RE.match(text):
            q = _Question(ln.number, [ln.after(m.end())])
            (bonuses if in_bonuses else tossups).append(q)
            target = q.text
        elif m := PART_RE.match(text):
            if q is None:
                raise FormatError(path, ln.number, "bonus part before any numbered bonus")
            if not q.parts:
                if q.answer is not None:
                    raise FormatError(
                        path,
                        ln.number,
                        "bonus part after its question's ANSWER: line (a missing [10] above?)",
                    )
                if q in tossups:  # a lead-in followed by a part: this question is a bonus
                    tossups.remove(q)
                    bonuses.append(q)
                    in_bonuses = True
            value = int(m.group(1)) if m.group(1) else BONUS_PART_VALUE
            q.parts.append(_Part(ln.number, value, [ln.after(m.end())]))
            target = q.parts[-1].text
        elif m := ANSWER_RE.match(text):
            holder: _Question | _Part | None = q.parts[-1] if q is not None and q.parts else q
            if holder is None:
                raise FormatError(path, ln.number, "ANSWER: line before any numbered question")
            if holder.answer is not None:
                what = "bonus part" if isinstance(holder, _Part) else "question"
                raise FormatError(
                    path,
                    ln.number,
                    f"second ANSWER: line for one {what} (a missing number or [10] above?)",
                )
            holder.answer = [ln.after(m.end())]
            target = holder.answer
        elif (meta := METADATA_RE.match(text)) and q is not None:
            q.category = meta.group(1).strip()
            target = None
        elif target is not None:
            target.append(ln)
        elif q is not None:
            if q.parts:
                raise FormatError(
                    path, ln.number, "text after a bonus part's answer: a part without a [10] value?"
                )
            raise FormatError(path, ln.number, "text after a question's metadata line")
    if not tossups and not bonuses:
        raise FormatError(path, None, 'no numbered questions ("1. …" paragraphs) found')
    for number, q in enumerate(tossups, 1):
        collect.add("tossup", q.line, partial(_tossup, path, set_name, packet, number, q))
    for number, q in enumerate(bonuses, 1):
        collect.add("bonus", q.line, partial(_bonus, path, set_name, packet, number, q))


def _tossup(path: Path, set_name: str, packet: str, number: int, q: _Question) -> TossupRecord:
    if q.answer is None:
        raise FormatError(path, q.line, f"tossup {number} has no ANSWER: line")
    question, answer = _plain(q.text), _answer(q.answer)
    if not question:
        raise InvalidRecord(f"tossup {number} has no text")
    if not answer:
        raise InvalidRecord(f"tossup {number} has an empty ANSWER: line")
    return TossupRecord(
        set_name, None, packet, number, question, answer, q.category, "",
        f"docx:{set_name}:{packet}:tossup:{number}", q.line,
    )  # fmt: skip


def _bonus(path: Path, set_name: str, packet: str, number: int, q: _Question) -> BonusRecord:
    if not q.parts:
        raise FormatError(path, q.line, f'bonus {number} has no parts ("[10] …" paragraphs)')
    parts = []
    for i, part in enumerate(q.parts, 1):
        if part.answer is None:
            raise FormatError(path, part.line, f"bonus {number} part {i} has no ANSWER: line")
        text, answer = _plain(part.text), _answer(part.answer)
        if not text or not answer:
            what = "text" if not text else "answer line"
            raise InvalidRecord(f"bonus {number} part {i} has no {what}", part.line)
        parts.append(BonusPart(text, answer, part.value or BONUS_PART_VALUE))
    return BonusRecord(
        set_name, None, packet, number, _plain(q.text), tuple(parts), q.category, "",
        f"docx:{set_name}:{packet}:bonus:{number}", q.line,
    )  # fmt: skip
