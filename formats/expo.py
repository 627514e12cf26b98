"""The 2024 human-vs-computer exhibition files (``expo/2024_470/``).

Questions, ``<category>.csv``: columns ``id, answer, sent, text``, one row per sentence. Each ``id`` is
one tossup whose text is its sentences joined with a space in ``sent`` order, so the whitespace words
of the tossup are those of its sentences, in order. Read by ``read_questions`` (one file) and ``parse``
(a folder or one file, for the importer): one set per folder, named ``"<year> exhibition (<n>)"`` for a
folder ``<year>_<n>`` (else ``"exhibition <folder>"``); one packet per file, named after the file stem,
which is also the category; tossups numbered 1, 2, … in first-appearance order; ``external_id`` = the
expo ``id``. In a folder every top-level ``*.csv`` but ``*.buzz.csv``/``*.final.csv`` is a category;
team sub-folders are ignored.

Buzz logs, ``<team>/<category>.buzz.csv``: ``sentence, question, page, evidence, word, final,
weight``. ``question`` is the expo id, ``sentence`` the 0-based sentence, ``word`` the number of words
of that sentence the system had seen (≥ 1), ``page`` its guess, ``weight`` its confidence and ``final``
its buzz decision. Read by ``read_buzz_log`` against the category's questions file.
"""

from __future__ import annotations

import csv
import re
from collections.abc import Callable
from dataclasses import dataclass, field
from functools import partial
from pathlib import Path

from formats.collect import Collector, build_tossup
from formats.errors import FormatError
from formats.records import RecordedBuzz
from formats.textio import cell_bool, cell_float, cell_int, cell_text, csv_rows

QUESTION_COLUMNS = ("id", "answer", "sent", "text")
BUZZ_COLUMNS = frozenset({"sentence", "question", "page", "word", "final", "weight"})

#: Maps a tossup's whitespace words to, for each word, the index of the token a reader shows for it.
TokenMap = Callable[[list[str]], list[int]]


@dataclass
class ExpoQuestion:
    """One exhibition tossup: ``line`` of its first row, ``answer`` (of that row) and its sentences
    ``{sent number: text}`` (stripped)."""

    line: int
    answer: str
    sentences: dict[int, str] = field(default_factory=dict)

    def text(self) -> str:
        """The tossup text: its non-empty sentences in order, joined with a space."""
        return " ".join(self.sentences[k] for k in sorted(self.sentences) if self.sentences[k])

    def sentence_spans(self) -> tuple[dict[int, tuple[int, int]], list[str]]:
        """``({sent: (index of its first word, its word count)}, every word in order)``."""
        spans: dict[int, tuple[int, int]] = {}
        words: list[str] = []
        for sentence in sorted(self.sentences):
            own = self.sentences[sentence].split()
            spans[sentence] = (len(words), len(own))
            words += own
        return spans, words


def set_name(folder: Path) -> tuple[str, int | None]:
    """``(set name, year)`` of an exhibition folder: ``2024_470`` → ``("2024 exhibition (470)", 2024)``."""
    m = re.fullmatch(r"(\d{4})_(\w+)", folder.name)
    if m:
        return f"{m[1]} exhibition ({m[2]})", int(m[1])
    return f"exhibition {folder.name}", None


def question_files(path: Path) -> list[Path]:
    """The category files of a folder (sorted), or ``[path]`` for a file. Raises FormatError for a
    folder without any."""
    if path.is_file():
        return [path]
    files = [
        f
        for f in sorted(path.glob("*.csv"))
        if not f.name.endswith((".buzz.csv", ".final.csv")) and f.is_file()
    ]
    if not files:
        raise FormatError(path, None, "no exhibition <category>.csv files in this folder")
    return files


def read_questions(path: str | Path) -> dict[str, ExpoQuestion]:
    """The questions of one ``<category>.csv``, by expo id in first-appearance order.

    Raises FormatError ``"path:LINE: message"`` for a missing column, an empty id, a ``sent`` that is
    not a number ≥ 0 or a sentence given twice."""
    questions: dict[str, ExpoQuestion] = {}
    with csv_rows(path) as reader:
        missing = [c for c in QUESTION_COLUMNS if c not in (reader.fieldnames or [])]
        if missing:
            raise FormatError(path, 1, f"missing column(s) {missing}; expected {list(QUESTION_COLUMNS)}")
        for row in reader:
            line = reader.line_num
            qid, sent = (row.get("id") or "").strip(), (row.get("sent") or "").strip()
            if not qid:
                raise FormatError(path, line, "empty 'id'")
            if not sent.isdigit():
                raise FormatError(path, line, f"'sent' must be a sentence number ≥ 0, got {sent!r}")
            question = questions.setdefault(qid, ExpoQuestion(line, (row.get("answer") or "").strip()))
            if int(sent) in question.sentences:
                raise FormatError(path, line, f"duplicate sentence {sent} of question {qid}")
            question.sentences[int(sent)] = (row.get("text") or "").strip()
    return questions


def has_question_columns(path: Path) -> bool:
    """True if the CSV header of ``path`` holds the questions columns (format detection)."""
    with csv_rows(path) as reader:
        return set(QUESTION_COLUMNS) <= {c.strip() for c in reader.fieldnames or []}


def parse(path: Path, collect: Collector) -> None:
    """Read a folder's (or one file's) questions into ``collect`` (see the module docstring).
    Raises FormatError."""
    name, year = set_name(path if path.is_dir() else path.parent)
    if not collect.filters.keeps(name, year):
        return
    for file in question_files(path):
        p, category = str(file), file.stem
        for number, (qid, q) in enumerate(read_questions(file).items(), 1):
            d = {"question": q.text(), "answer": q.answer, "category": category}
            meta = (name, year, category, number)
            collect.add("tossup", q.line, partial(build_tossup, p, q.line, d, "question", meta, qid))


def default_questions_file(buzz_log: Path) -> Path:
    """``<team dir>/../<category>.csv`` for ``<team dir>/<category>.buzz.csv``."""
    return buzz_log.parent.parent / (buzz_log.name.removesuffix(".buzz.csv") + ".csv")


def read_buzz_log(
    path: Path,
    reader: csv.DictReader[str],
    questions: dict[str, ExpoQuestion],
    token_map: TokenMap | None = None,
) -> dict[str, RecordedBuzz]:
    """The first final buzz per question of an open buzz log (``reader`` over ``path``).

    The position is the word index (in the whole tossup: the words of the earlier sentences +
    ``word`` − 1, capped at the sentence's last word) mapped through ``token_map`` (default: the word
    index itself). Questions absent from ``questions`` are skipped (their position is unknown).
    Raises FormatError ``"path:LINE: message"`` for a missing value, a bad number or boolean, a
    negative position or ``word`` < 1."""
    layouts: dict[str, tuple[dict[int, tuple[int, int]], list[int]]] = {}
    first: dict[str, RecordedBuzz] = {}
    for row in reader:
        line = reader.line_num
        qid = cell_text(path, line, row, "question")
        sentence, word = cell_int(path, line, row, "sentence"), cell_int(path, line, row, "word")
        if word < 1:
            raise FormatError(path, line, f"'word' is a count of words seen, got {word}")
        if qid not in layouts and qid in questions:
            spans, words = questions[qid].sentence_spans()
            layouts[qid] = (spans, token_map(words) if token_map else list(range(len(words))))
        spans, token_of = layouts.get(qid, ({}, []))
        if not cell_bool(path, line, row, "final") or sentence not in spans:
            continue
        start, length = spans[sentence]
        if length == 0:  # an empty sentence shows no word to buzz on
            continue
        position = token_of[start + min(word, length) - 1]
        if qid not in first or position < first[qid].token_index:
            guess = (row.get("page") or "").strip()
            first[qid] = RecordedBuzz(qid, position, guess, cell_float(path, line, row, "weight"))
    return first
