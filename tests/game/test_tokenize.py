"""tokenize_tossup: whitespace tokens with the (*) / (+) marks removed and their positions kept."""

from __future__ import annotations

import gzip
import itertools
import json
import os
from pathlib import Path

import pytest

from competition.game import tokenize_tossup


def shared_data() -> Path:
    env = os.environ.get("TOSSUP_SHARED_DATA")
    return Path(env) if env else Path(__file__).resolve().parents[2] / ".." / "shared" / "data"


@pytest.mark.parametrize(
    "text,tokens,power,superpower",
    [
        ("a b (*) c d", ["a", "b", "c", "d"], 2, None),
        ("a b(*) c d", ["a", "b", "c", "d"], 2, None),
        ("a b (*)c d", ["a", "b", "c", "d"], 2, None),
        ("(+) a (*) b", ["a", "b"], 1, 0),
        ("a (+) b c (*) d", ["a", "b", "c", "d"], 3, 1),
        ("a\tb\n c", ["a", "b", "c"], None, None),
        ("a (*) b (*) c", ["a", "b", "c"], 1, None),  # only the first mark counts
        ("a b c (*)", ["a", "b", "c"], 3, None),
        ("x Mon(*)-Khmer y", ["x", "Mon-Khmer", "y"], 1, None),  # mid-word: the word is after the mark
    ],
)
def test_marks(text, tokens, power, superpower):
    spec = tokenize_tossup(7, text, "ans", "History")
    assert (spec.tokens, spec.power_index, spec.superpower_index) == (tokens, power, superpower)
    assert (spec.question_id, spec.answer_line, spec.category) == (7, "ans", "History")


def test_real_packet_tossups():
    path = shared_data() / "packets" / "qbreader_packets_2012_2022.jsonl.gz"
    if not path.is_file():
        pytest.skip(f"{path}: ../shared/data absent: real qbreader packets not available")
    with gzip.open(path, "rt", encoding="utf-8") as f:
        rows = [json.loads(line) for line in itertools.islice(f, 3000)]
    tossups = [r for r in rows if r.get("type") == "tossup"]
    assert len(tossups) > 500
    checked = 0
    for row in tossups:
        text = row["question"]
        spec = tokenize_tossup(1, text, row["answer"], row.get("category", ""))
        assert spec.tokens and all(t.strip() and "(*)" not in t for t in spec.tokens)
        assert " ".join(spec.tokens) == " ".join(text.replace("(*)", "").replace("(+)", "").split())
        if " (*) " in text:
            before = text.split(" (*) ", 1)[0]
            if "(+)" not in before:
                assert spec.power_index == len(before.split())
                checked += 1
        if row.get("has_power"):
            assert spec.power_index is not None
    assert checked > 300
