"""External response sets for IRT, as ``irt`` names them (pure: no Django).
``python manage.py import_responses`` stores what ``read_responses`` returns.

The readers live in ``formats``, one module per format, each documenting its layout:

``advscore``
    ADVSCORE matrices (``formats.advscore.read_responses``): ``item_id`` then one column per subject,
    ``h_<name>`` = the human ``<name>``; cells 1/0/empty.
``advscore-text``
    The paper's raw ``*_text.csv`` layout (``formats.advscore.read_text_responses``).
``pyirt``
    py-irt jsonlines (``formats.pyirt``).
``cycles``
    qb-tournament-runner's ``cycles.jsonl`` (``formats.runner.read_cycles``).

Every error is a ``ResponseFormatError`` (``formats.FormatError``) naming the file and line (1-based,
the header is line 1).
"""

from __future__ import annotations

from formats.advscore import HUMAN_PREFIX, kind_from_name
from formats.errors import FormatError
from formats.records import ResponseRecord
from formats.responses import FORMATS, read_responses

#: A malformed response file; the message names the file and line.
ResponseFormatError = FormatError
#: One observed outcome (subject, kind, item, correct, position).
ImportedResponse = ResponseRecord

__all__ = [
    "FORMATS",
    "HUMAN_PREFIX",
    "ImportedResponse",
    "ResponseFormatError",
    "kind_from_name",
    "read_responses",
]
