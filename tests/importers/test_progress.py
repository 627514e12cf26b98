"""Progress bars of the long commands: on stderr only when it is a terminal and ``--no-progress`` is
not given; what the commands print on stdout is the same either way."""

from __future__ import annotations

import io
import json
import sys
from pathlib import Path

import pytest
from django.core.management import call_command

from buzzer.bots.tfidf import TfidfGuesser
from competition.models import Bonus, QuestionSet, Tossup
from irt.models import Response


class Terminal(io.StringIO):
    """A stderr that says it is a terminal (what tqdm and the commands check)."""

    def isatty(self) -> bool:
        return True


def run(monkeypatch: pytest.MonkeyPatch, *args: str, tty: bool) -> tuple[str, str]:
    """``(stdout, what reached the process's stderr)`` of ``manage.py *args``."""
    err = Terminal() if tty else io.StringIO()
    monkeypatch.setattr(sys, "stderr", err)
    out = io.StringIO()
    call_command(*args, stdout=out)
    return out.getvalue(), err.getvalue()


def questions_file(tmp_path: Path) -> Path:
    rows = [
        {
            "type": "tossup",
            "set": "2024 Club Open",
            "year": 2024,
            "packet": "Round 1",
            "number": n,
            "question": f"Clue {n}. For 10 points, name this island.",
            "answer": f"<b><u>Island{n}</u></b>",
        }
        for n in range(1, 1201)  # more than one write batch
    ]
    path = tmp_path / "club.jsonl"
    path.write_text("".join(json.dumps(r) + "\n" for r in rows))
    return path


@pytest.mark.django_db
def test_import_questions_prints_the_same_with_or_without_bars(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    path = str(questions_file(tmp_path))
    shown_out, bars = run(monkeypatch, "import_questions", path, tty=True)
    assert "writing: 100%" in bars and "1200/1200" in bars, bars
    assert Tossup.objects.count() == 1200

    Tossup.objects.all().delete()
    QuestionSet.objects.all().delete()
    quiet_out, quiet_err = run(monkeypatch, "import_questions", path, "--no-progress", tty=True)
    assert quiet_err == ""
    assert quiet_out == shown_out
    assert shown_out.splitlines()[-1].startswith("1200 tossups and 0 bonuses in 1 set: 1200 created")

    Tossup.objects.all().delete()
    QuestionSet.objects.all().delete()
    piped_out, piped_err = run(monkeypatch, "import_questions", path, tty=False)
    assert piped_err == "" and piped_out == shown_out
    assert (Tossup.objects.count(), Bonus.objects.count()) == (1200, 0)


@pytest.mark.django_db
def test_import_responses_fit_bar_and_unchanged_output(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    path = tmp_path / "set.csv"
    path.write_text("item_id,h_ann,h_bo,bert\nq1,1,0,1\nq2,0,1,1\nq3,1,1,0\nq4,0,0,1\n")
    args = ("import_responses", str(path), "--format", "advscore", "--dataset", "club", "--fit")
    shown_out, bars = run(monkeypatch, *args, tty=True)
    assert "fitting club: 100%" in bars, bars
    quiet_out, quiet_err = run(monkeypatch, *args, "--no-progress", tty=True)
    assert quiet_err == ""
    # The fit line carries its id and time; everything else is the same.
    assert shown_out.splitlines()[0] == quiet_out.splitlines()[0]
    assert shown_out.splitlines()[0] == "club: 12 responses from set.csv (2 humans, 1 bots, 4 items)"
    assert quiet_out.splitlines()[1].startswith("fit #")
    assert Response.objects.filter(dataset="club").count() == 12


def test_advscore_table_bar_and_unchanged_table(
    shared_data: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    data = str(shared_data / "advscore")
    shown_out, bars = run(monkeypatch, "advscore_table", "--data", data, "--no-loo", tty=True)
    assert "fitting: 100%" in bars, bars
    piped_out, piped_err = run(monkeypatch, "advscore_table", "--data", data, "--no-loo", tty=False)
    assert piped_err == "" and piped_out == shown_out
    assert shown_out.splitlines()[0].split() == [
        "dataset",
        "source",
        "mu",
        "kappa",
        "delta",
        "advscore",
        "loo",
    ]


def test_tfidf_training_reports_every_question_and_trains_the_same_model() -> None:
    records = [(f"clue {i % 30} about thing {i}", f"<b>Answer{i % 30}</b>") for i in range(300)]
    seen: list[str] = []

    def count(texts):
        for text in texts:
            seen.append(text)
            yield text

    with_bar = TfidfGuesser.train(records, progress=count)
    plain = TfidfGuesser.train(records)
    assert len(seen) == 300
    assert (with_bar.matrix != plain.matrix).nnz == 0 and with_bar.answers == plain.answers
    assert with_bar.guess("clue 7 about") == plain.guess("clue 7 about")
