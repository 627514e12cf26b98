"""Replay bot: buzzes where a recorded system buzzed (pure; no Django).

Two buzz-log formats are read:

* qb-tournament-runner ``*.buzz.csv``: ``question_id, token_position, guess, confidence, buzz, correct``, one
  row per (question, 0-based token position); the first row with ``buzz`` = 1 is the buzz.
* 2024 exhibition logs (``expo/2024_470/<team>/<category>.buzz.csv``): ``sentence, question, page, evidence,
  word, final, weight``. ``question`` is the external question id, ``sentence`` the 0-based sentence,
  ``word`` the number of words of that sentence the system had seen, ``page`` its guess, ``weight`` its
  confidence and ``final`` its buzz decision. The global token index is the word count of the earlier
  sentences (from ``<category>.csv``: ``id, answer, sent, text``, whitespace tokens) + ``word`` − 1,
  mapped to the server's display tokens exactly as ``competition.game.tokenize_tossup`` does (a bare
  ``(*)`` is not a token), so a recorded position is the token index the server reveals.
"""

from __future__ import annotations

import csv
import json
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from competition.game.specs import strip_marks

RUNNER_COLUMNS = {"question_id", "token_position", "guess", "confidence", "buzz"}
EXPO_COLUMNS = {"sentence", "question", "page", "word", "final", "weight"}
_TRUE = {"1", "true", "yes"}
_FALSE = {"0", "false", "no"}


class ReplayFileError(ValueError):
    """A buzz file (or its sentence file) is malformed; the message names the file and line."""


@dataclass(frozen=True)
class RecordedBuzz:
    """A recorded buzz: ``token_index`` is the 0-based index of the last token seen at the buzz."""

    external_id: str
    token_index: int
    guess: str
    confidence: float


def load_buzz_file(path: str | Path, sentences_csv: str | Path | None = None) -> dict[str, RecordedBuzz]:
    """Read a buzz log and return the first buzz per external question id.

    The format is detected from the header. For exhibition logs ``sentences_csv`` defaults to
    ``<team dir>/../<category>.csv``; questions missing from it are skipped (their position is unknown).
    Questions the system never buzzed on are absent. Raises ReplayFileError (file:line: reason) for a missing
    column, a bad number or boolean, a negative position or a missing sentence file.
    """
    path = Path(path)
    with _open(path) as handle:
        reader = csv.DictReader(handle)
        columns = {c.strip() for c in reader.fieldnames or []}
        if columns >= RUNNER_COLUMNS:
            return _read_runner(path, reader)
        if columns >= EXPO_COLUMNS:
            if sentences_csv is None:
                sentences_csv = path.parent.parent / (path.name.removesuffix(".buzz.csv") + ".csv")
            return _read_expo(path, reader, _sentence_offsets(Path(sentences_csv)))
    raise ReplayFileError(
        f"{path}:1: header {sorted(columns)} has neither the runner columns {sorted(RUNNER_COLUMNS)} "
        f"nor the exhibition columns {sorted(EXPO_COLUMNS)}"
    )


def _open(path: Path) -> Any:
    try:
        return path.open(newline="", encoding="utf-8")
    except OSError as exc:
        raise ReplayFileError(f"{path}: cannot open ({exc.strerror})") from exc


def _read_runner(path: Path, reader: csv.DictReader[str]) -> dict[str, RecordedBuzz]:
    first: dict[str, RecordedBuzz] = {}
    for row in reader:
        line = reader.line_num
        qid = _field(path, line, row, "question_id")
        position = _int(path, line, row, "token_position")
        if _bool(path, line, row, "buzz"):
            buzz = RecordedBuzz(qid, position, row.get("guess") or "", _float(path, line, row, "confidence"))
            if qid not in first or position < first[qid].token_index:
                first[qid] = buzz
    return first


def _read_expo(
    path: Path,
    reader: csv.DictReader[str],
    sentences: dict[str, tuple[dict[int, tuple[int, int]], list[int]]],
) -> dict[str, RecordedBuzz]:
    first: dict[str, RecordedBuzz] = {}
    for row in reader:
        line = reader.line_num
        qid = _field(path, line, row, "question")
        sentence, word = _int(path, line, row, "sentence"), _int(path, line, row, "word")
        if word < 1:
            raise ReplayFileError(f"{path}:{line}: 'word' is a count of words seen, got {word}")
        spans, token_of = sentences.get(qid, ({}, []))
        if not _bool(path, line, row, "final") or sentence not in spans:
            continue
        start, length = spans[sentence]
        position = token_of[start + min(word, length) - 1]
        if qid not in first or position < first[qid].token_index:
            guess = (row.get("page") or "").strip()
            first[qid] = RecordedBuzz(qid, position, guess, _float(path, line, row, "weight"))
    return first


def _sentence_offsets(path: Path) -> dict[str, tuple[dict[int, tuple[int, int]], list[int]]]:
    """question id → ({sentence: (first raw word, raw word count)}, raw word → server token index)."""
    by_question: dict[str, dict[int, list[str]]] = {}
    with _open(path) as handle:
        reader = csv.DictReader(handle)
        for row in reader:
            line = reader.line_num
            qid = _field(path, line, row, "id")
            sentence = _int(path, line, row, "sent")
            by_question.setdefault(qid, {})[sentence] = _field(path, line, row, "text").split()
    out = {}
    for qid, by_sentence in by_question.items():
        spans: dict[int, tuple[int, int]] = {}
        words: list[str] = []
        for sentence in sorted(by_sentence):
            spans[sentence] = (len(words), len(by_sentence[sentence]))
            words += by_sentence[sentence]
        out[qid] = (spans, strip_marks(words)[2])
    return out


def _field(path: Path, line: int, row: dict[str, str | None], name: str) -> str:
    value = row.get(name)
    if value is None or not value.strip():
        raise ReplayFileError(f"{path}:{line}: missing value for '{name}'")
    return value.strip()


def _int(path: Path, line: int, row: dict[str, str | None], name: str) -> int:
    text = _field(path, line, row, name)
    try:
        value = int(text)
    except ValueError:
        raise ReplayFileError(f"{path}:{line}: '{name}' must be an integer, got {text!r}") from None
    if value < 0:
        raise ReplayFileError(f"{path}:{line}: '{name}' must be ≥ 0, got {value}")
    return value


def _float(path: Path, line: int, row: dict[str, str | None], name: str) -> float:
    text = _field(path, line, row, name)
    try:
        return float(text)
    except ValueError:
        raise ReplayFileError(f"{path}:{line}: '{name}' must be a number, got {text!r}") from None


def _bool(path: Path, line: int, row: dict[str, str | None], name: str) -> bool:
    text = _field(path, line, row, name).lower()
    if text in _TRUE:
        return True
    if text in _FALSE:
        return False
    raise ReplayFileError(f"{path}:{line}: '{name}' must be 0/1 or true/false, got {text!r}")


def load_question_map(path: str | Path) -> dict[str, str]:
    """Read ``{"<DB question id>": "<external id>", …}``. Raises ReplayFileError unless a JSON object."""
    try:
        data = json.loads(Path(path).read_text(encoding="utf-8"))
    except (OSError, json.JSONDecodeError) as exc:
        raise ReplayFileError(f"{path}: not a readable JSON object ({exc})") from exc
    if not isinstance(data, dict):
        raise ReplayFileError(f"{path}: expected a JSON object mapping DB question ids to external ids")
    return {str(k): str(v) for k, v in data.items()}


class ReplayGuesser:
    """Guesser that replays recorded buzzes; satisfies ``client.Guesser`` and ``client.TossupAware``.

    buzzes: external id → RecordedBuzz (from :func:`load_buzz_file`). question_map: DB question id (as
    string) → external id, given by whoever launches the bot from the database (``simulate_match``,
    ``runbot --question-map``): the server never tells players or bots a question's source id. Without
    an entry the log's question ids are taken to be the server's. On a known tossup ``guess`` returns
    ``(recorded guess, 1.0)`` once at least ``token_index + 1`` tokens are revealed and ``("", 0.0)``
    before; unknown tossups never reach the threshold. Bonuses are passed.
    """

    def __init__(self, buzzes: Mapping[str, RecordedBuzz], question_map: Mapping[str, str] | None = None):
        self.buzzes = buzzes
        self.question_map = dict(question_map or {})
        self.current: RecordedBuzz | None = None

    def begin_tossup(self, data: dict[str, Any]) -> None:
        """Select the recording for the tossup announced by ``tossup_started`` (None if unknown)."""
        question_id = str(data.get("question_id"))
        self.current = self.buzzes.get(self.question_map.get(question_id, question_id))

    def guess(self, text_so_far: str) -> tuple[str, float]:
        """``(recorded guess, 1.0)`` at or after the recorded token, else ``("", 0.0)``."""
        current = self.current
        if current is None or len(text_so_far.split()) <= current.token_index:
            return "", 0.0
        return current.guess, 1.0

    def bonus_guess(self, leadin: str, part_text: str) -> str:
        """Recordings hold tossups only: an empty answer."""
        return ""
