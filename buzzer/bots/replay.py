"""Replay bot: buzzes where a recorded system buzzed (pure; no Django).

The buzz logs are read by ``formats.buzzlogs.read_buzz_log``: qb-tournament-runner ``*.buzz.csv``
(``formats.runner``) and the 2024 exhibition logs ``expo/2024_470/<team>/<category>.buzz.csv``
(``formats.expo``). For the exhibition the recorded word (a whitespace word of the category file's
sentences) is mapped to the server's display tokens exactly as ``competition.game.tokenize_tossup``
does (a bare ``(*)`` is not a token), so a recorded position is the token index the server reveals.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from competition.game.specs import strip_marks
from formats.buzzlogs import read_buzz_log
from formats.errors import FormatError
from formats.records import RecordedBuzz

#: A buzz file (or its questions file, or a question map) that cannot be read: ``formats``' one error.
ReplayFileError = FormatError

__all__ = ["RecordedBuzz", "ReplayFileError", "ReplayGuesser", "load_buzz_file", "load_question_map"]


def _display_tokens(words: list[str]) -> list[int]:
    """For each whitespace word, the index of the server's display token that shows it."""
    return strip_marks(words)[2]


def load_buzz_file(path: str | Path, sentences_csv: str | Path | None = None) -> dict[str, RecordedBuzz]:
    """Read a buzz log and return the first buzz per external question id, at server token indexes.

    The format is detected from the header. For exhibition logs ``sentences_csv`` (the category's
    ``id, answer, sent, text`` file) defaults to ``<team dir>/../<category>.csv``; questions missing from
    it are skipped (their position is unknown). Questions the system never buzzed on are absent. Raises
    ReplayFileError (file:line: reason) for a missing column, a bad number or boolean, a negative
    position or a missing sentence file.
    """
    return read_buzz_log(path, sentences_csv, _display_tokens)


def load_question_map(path: str | Path) -> dict[str, str]:
    """Read ``{"<DB question id>": "<external id>", …}``. Raises ReplayFileError unless a JSON object."""
    try:
        data = json.loads(Path(path).read_text(encoding="utf-8"))
    except (OSError, json.JSONDecodeError) as exc:
        raise ReplayFileError(path, None, f"not a readable JSON object ({exc})") from exc
    if not isinstance(data, dict):
        raise ReplayFileError(path, None, "expected a JSON object mapping DB question ids to external ids")
    return {str(k): str(v) for k, v in data.items()}


class ReplayGuesser:
    """Guesser that replays recorded buzzes; satisfies ``client.Model`` and ``client.TossupAware``.

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
