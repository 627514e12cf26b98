"""The ADVSCORE paper's response matrices (Sung et al. 2025; ``advscore/responses/*.csv``) and their
raw ``*_text.csv`` layout (``advscore/text/``).

Matrix: column ``item_id`` first, then one column per subject; a column named ``h_<name>`` is the
human ``<name>``, any other column is a model (bot). Cells ``1``/``0`` (``1.0``/``0.0`` too); empty =
not asked. ``read_matrix`` returns the grid as read; ``read_responses`` its long-format responses.

Text layout: no item id (items are ``row<n>``, the 1-based data row); text columns (question, claim,
answer) are the ones holding anything but 0/1/empty and are skipped; a subject column named by digits,
a 24-hex-digit crowd-worker id or a single letter is a human, any other (``GPT4``, ``DPR``…) a model.
"""

from __future__ import annotations

import csv
import re
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

from formats.errors import FormatError
from formats.records import ResponseRecord, unique_responses
from formats.textio import open_text

HUMAN_PREFIX = "h_"
_TEXT_HUMAN = re.compile(r"^(\d+|[0-9a-f]{24}|[A-Za-z])$")


def kind_from_name(name: str) -> tuple[str, str]:
    """``h_<name>`` → (``human``, name); anything else → (``bot``, name)."""
    if name.startswith(HUMAN_PREFIX):
        return "human", name[len(HUMAN_PREFIX) :]
    return "bot", name


def binary_cell(cell: str) -> bool | None:
    """'' → None (not asked); '1', '1.0', '0', '0.0' → bool. Raises ValueError for anything else."""
    text = cell.strip()
    if text == "":
        return None
    value = float(text)
    if value not in (0.0, 1.0):
        raise ValueError(text)
    return value == 1.0


@dataclass(frozen=True)
class AdvscoreMatrix:
    """A response matrix as read. ``columns`` (n_subjects,): the subject column names as in the
    header (``h_`` kept); ``item_ids`` and ``lines`` (n_items,): each row's item id and 1-based line;
    ``cells`` (n_items × n_subjects): True/False, None = not asked."""

    columns: list[str]
    item_ids: list[str]
    lines: list[int]
    cells: list[list[bool | None]]


def _rows(path: Path) -> Iterator[tuple[int, list[str]]]:
    with open_text(path, newline="") as fh:
        try:
            yield from enumerate(csv.reader(fh), start=1)
        except (UnicodeDecodeError, csv.Error) as exc:
            raise FormatError(path, None, f"cannot read: {exc}") from None


def read_matrix(path: Path) -> AdvscoreMatrix:
    """Read a matrix CSV. Raises FormatError ``"path:LINE: message"`` when the first column is not
    ``item_id``, for a duplicate subject column, a row whose length differs from the header's, an
    empty item id or a cell that is not 0, 1 or empty. Blank lines are skipped."""
    rows = _rows(path)
    head = next(rows, (1, []))[1]
    if not head or head[0] != "item_id":
        raise FormatError(path, 1, "first column must be 'item_id'")
    columns = head[1:]
    subjects = [kind_from_name(name) for name in columns]
    if len(set(subjects)) != len(subjects):
        raise FormatError(path, 1, "duplicate subject column")
    matrix = AdvscoreMatrix(columns, [], [], [])
    for line, cells in rows:
        if not cells:
            continue
        if len(cells) != len(head):
            raise FormatError(path, line, f"{len(cells)} cells, header has {len(head)}")
        item = cells[0].strip()
        if not item:
            raise FormatError(path, line, "empty item_id")
        outcomes = []
        for (_, name), cell in zip(subjects, cells[1:], strict=True):
            try:
                outcomes.append(binary_cell(cell))
            except ValueError:
                raise FormatError(path, line, f"cell {cell!r} of {name!r} is not 0, 1 or empty") from None
        matrix.item_ids.append(item)
        matrix.lines.append(line)
        matrix.cells.append(outcomes)
    return matrix


def read_responses(path: Path) -> list[ResponseRecord]:
    """The observed responses of a matrix CSV, row by row (``h_`` stripped, kind from the prefix).
    Raises FormatError as ``read_matrix`` does, and at the line of a repeated item id."""
    matrix = read_matrix(path)
    subjects = [kind_from_name(name) for name in matrix.columns]

    def rows() -> Iterator[tuple[int, ResponseRecord]]:
        for line, item, outcomes in zip(matrix.lines, matrix.item_ids, matrix.cells, strict=True):
            for (kind, name), outcome in zip(subjects, outcomes, strict=True):
                if outcome is not None:
                    yield line, ResponseRecord(name, kind, item, outcome)

    return unique_responses(path, rows())


def read_text_responses(path: Path) -> list[ResponseRecord]:
    """Responses of the raw ``*_text.csv`` layout (see the module docstring). Raises FormatError
    when no column looks like a subject or a row has the wrong length."""
    rows = _rows(path)
    head = next(rows, (1, []))[1]
    body = list(rows)
    for line, cells in body:
        if cells and len(cells) != len(head):
            raise FormatError(path, line, f"{len(cells)} cells, header has {len(head)}")

    def is_subject(col: int) -> bool:
        try:
            for _, cells in body:
                if cells:
                    binary_cell(cells[col])
        except ValueError:
            return False
        return True

    columns = [c for c, name in enumerate(head) if name.strip() and is_subject(c)]
    if not columns:
        raise FormatError(path, 1, "no subject column (0/1/empty cells) found")
    out = []
    for line, cells in body:
        for c in columns:
            outcome = binary_cell(cells[c]) if cells else None
            if outcome is not None:
                name = head[c].strip()
                kind = "human" if _TEXT_HUMAN.match(name) else "bot"
                out.append(ResponseRecord(name, kind, f"row{line - 1}", outcome))
    return out
