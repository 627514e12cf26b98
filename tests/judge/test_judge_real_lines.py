"""The judge on answer lines it was not written against: 3,000 real qbreader tossups and
the QANTA dev set (read from ../shared/data; skipped when absent)."""

from __future__ import annotations

import gzip
import json
import random
from collections import Counter

from buzzer.bots.answers import main_answer
from scoring.judge import judge


def _sample_lines(shared_data, n=3000):
    path = shared_data / "packets" / "qbreader_packets_2012_2022.jsonl.gz"
    with gzip.open(path, "rt", encoding="utf-8") as f:
        lines = [r["answer"] for r in map(json.loads, f) if r["type"] == "tossup" and r.get("answer")]
    random.Random(0).shuffle(lines)
    return lines[:n]


def test_each_lines_own_main_answer_is_accepted_and_another_questions_is_not(shared_data):
    lines = _sample_lines(shared_data)
    own = Counter(judge(line, main_answer(line)).verdict for line in lines)
    other = Counter(judge(line, main_answer(lines[i - 1])).verdict for i, line in enumerate(lines))
    print("own main answer:", dict(own), "another question's:", dict(other))
    # Measured 2026-11-22: 2,977 / 3,000 accepted (most misses carry PDF debris such as "Cinderella Bonuses:");
    # 2 / 3,000 wrong answers accepted.
    assert own["accept"] >= 0.98 * len(lines)
    assert other["accept"] <= 0.002 * len(lines)


def test_qanta_wikipedia_titles_are_accepted_against_their_answer_lines(shared_data):
    with gzip.open(shared_data / "qanta" / "qanta.buzzdev.json.gz", "rt", encoding="utf-8") as f:
        data = json.load(f)
    questions = [q for q in (data["questions"] if isinstance(data, dict) else data) if q.get("page")]
    verdicts = Counter(judge(q["answer"], q["page"].replace("_", " ")).verdict for q in questions)
    print("QANTA page titles:", dict(verdicts), len(questions))
    # Measured 2026-11-22: 1,053 / 1,130 accepted.
    assert verdicts["accept"] >= 0.9 * len(questions)


def test_html_escaped_editor_notes_are_notes_not_answer_text():
    line = "Alfred Dreyfus (dray-FUCE) &lt;Bentley, History - European&gt;"
    assert judge(line, "Dreyfus").verdict == "accept"
    assert judge("Franz Joseph Haydn &lt;Arts Music - Smith&gt;", "Franz Joseph Haydn").verdict == "accept"
