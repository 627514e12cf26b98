"""``simulate_match --extra-train``: the TF-IDF bot gets the extra files' records, and a model trained
with them is cached apart from one trained without."""

from __future__ import annotations

import gzip
import json
from pathlib import Path
from typing import Any

import pytest
from django.core.management.base import CommandError

from buzzer.bots.tfidf import TfidfGuesser, file_records
from competition.importers import DEMO_PACKET
from tools.management.commands.simulate_match import _cached_guesser


class _Trained:
    def __init__(self, extra: list[Any]) -> None:
        self.extra = extra

    def save(self, path: Path) -> None:
        path.write_text(json.dumps(len(self.extra)))


def test_extra_training_files_reach_the_tfidf_bot_and_its_cache_key(settings, tmp_path, monkeypatch) -> None:
    settings.BASE_DIR = tmp_path
    train = tmp_path / "packets.jsonl.gz"
    with gzip.open(train, "wt", encoding="utf-8") as out:
        out.write(json.dumps({"type": "tossup", "year": 2019, "question": "q", "answer": "a"}) + "\n")
    calls: list[dict[str, Any]] = []

    def from_packets(path: Path, max_year: int | None = None, **kwargs: Any) -> _Trained:
        calls.append({"path": path, "max_year": max_year, **kwargs})
        return _Trained(kwargs.get("extra", []))

    monkeypatch.setattr(TfidfGuesser, "from_packets", from_packets)
    monkeypatch.setattr(TfidfGuesser, "load", lambda path: json.loads(Path(path).read_text()))
    said: list[str] = []
    with_extra = _cached_guesser("tfidf", train, None, said.append, extra=[DEMO_PACKET])
    expected = file_records(DEMO_PACKET, max_year=None)
    assert expected and calls[0]["extra"] == expected and calls[0]["max_year"] is None
    assert with_extra.extra == expected
    without = _cached_guesser("tfidf", train, None, said.append)
    assert len(calls) == 2 and "extra" not in calls[1] and without.extra == []
    assert _cached_guesser("tfidf", train, None, said.append, extra=[DEMO_PACKET]) == len(expected)
    assert len(calls) == 2  # the second run with the same extra file loads the cached model
    with pytest.raises(CommandError, match="no such file"):
        _cached_guesser("tfidf", train, None, said.append, extra=[tmp_path / "missing.json"])
