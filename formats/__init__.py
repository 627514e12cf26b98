"""Readers of every file format Tossup takes in, as plain records (pure Python: no Django).

One module per format, each documenting its layout:

* ``qbreader`` — qbreader packet dumps (JSON Lines, ``.gz`` too): tossups and bonuses.
* ``qanta`` — QANTA question JSON.
* ``demo`` — Tossup's own demo packet JSON.
* ``expo`` — the 2024 exhibition: ``<category>.csv`` questions and ``<team>/<category>.buzz.csv`` logs.
* ``runner`` — qb-tournament-runner: ``cycles.jsonl`` per-cycle records, the models' ``*.buzz.csv`` /
  ``*.bonus.csv`` response files and the packet CSVs (read and written).
* ``qbj`` — QBJ tournament files (quizbowl/schema 1.x/2.x and 0.5; read and written).
* ``advscore`` — ADVSCORE response matrices (CSV) and their raw text layout.
* ``pyirt`` — py-irt response jsonlines.

Dispatch by format name: ``questions`` (``parse_file``, ``detect_format``), ``responses``
(``read_responses``), ``buzzlogs`` (``read_buzz_log``). Records: ``records``; shared decoding
(gzip, JSON with line numbers, CSV cells): ``textio``. Every reader raises ``FormatError`` (a
ValueError) whose text is ``"path:LINE: message"``; nothing is written anywhere.
"""

from formats.errors import FormatError

__all__ = ["FormatError"]
