"""py-irt response jsonlines: one subject per line,
``{"subject_id": str, "responses": {item: 0|1}, "kind"?: "human"|"bot"}``.

Without ``kind`` the ADVSCORE prefix rule applies (``h_<name>`` is the human ``<name>``, anything else
a bot); with it the subject id is kept whole."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

from formats.advscore import kind_from_name
from formats.errors import FormatError
from formats.records import ResponseRecord, unique_responses
from formats.textio import iter_json_lines


def read_responses(path: Path) -> list[ResponseRecord]:
    """The responses of a py-irt file. Raises FormatError ``"path:LINE: message"`` for a line that is
    not a JSON object, a missing ``subject_id`` or ``responses`` object, a bad ``kind``, an outcome
    other than 0/1/true/false, or a subject given twice."""

    def rows() -> Iterator[tuple[int, ResponseRecord]]:
        for line, record in iter_json_lines(path):
            subject, responses = record.get("subject_id"), record.get("responses")
            if not isinstance(subject, str) or not subject:
                raise FormatError(path, line, "missing 'subject_id' string")
            if not isinstance(responses, dict):
                raise FormatError(path, line, "missing 'responses' object")
            kind, name = kind_from_name(subject)
            if "kind" in record:
                if record["kind"] not in ("human", "bot"):
                    raise FormatError(path, line, f"kind {record['kind']!r} is not human or bot")
                kind, name = record["kind"], subject
            for item, outcome in responses.items():
                if outcome not in (0, 1):  # True/False compare equal to 1/0
                    raise FormatError(path, line, f"outcome {outcome!r} of item {item!r} is not 0/1")
                yield line, ResponseRecord(name, kind, str(item), bool(outcome))

    return unique_responses(path, rows())
