"""Recorded buzz logs of either kind, told apart by their header: qb-tournament-runner
(``formats.runner``) or the 2024 exhibition (``formats.expo``)."""

from __future__ import annotations

from pathlib import Path

from formats import expo, runner
from formats.errors import FormatError
from formats.records import RecordedBuzz
from formats.textio import csv_rows, header


def read_buzz_log(
    path: str | Path,
    questions_csv: str | Path | None = None,
    token_map: expo.TokenMap | None = None,
) -> dict[str, RecordedBuzz]:
    """The first buzz per external question id of a buzz log; questions never buzzed on are absent.

    For exhibition logs ``questions_csv`` (the category's ``id, answer, sent, text`` file) defaults to
    ``<team dir>/../<category>.csv`` and ``token_map`` maps the tossup's whitespace words to display
    token indexes (see ``expo.read_buzz_log``). Raises FormatError ``"path:LINE: message"`` for an
    unknown header, a missing column value, a bad number or boolean, a negative position or a missing
    questions file."""
    path = Path(path)
    with csv_rows(path) as reader:
        columns = header(reader)
        if columns >= runner.BUZZ_COLUMNS:
            return runner.read_buzz_log(path, reader)
        if columns >= expo.BUZZ_COLUMNS:
            questions = expo.read_questions(questions_csv or expo.default_questions_file(path))
            return expo.read_buzz_log(path, reader, questions, token_map)
    raise FormatError(
        path,
        1,
        f"header {sorted(columns)} has neither the runner columns {sorted(runner.BUZZ_COLUMNS)} "
        f"nor the exhibition columns {sorted(expo.BUZZ_COLUMNS)}",
    )
