"""Importers of external response sets (pure readers) and ``manage.py import_responses`` into the
shared response store, including a pipeline fit of the real ADVSCORE matrices."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest
from django.core.management import CommandError, call_command

from irt.advscore import advscore
from irt.datasets import load_responses
from irt.importers import ResponseFormatError, read_responses
from irt.models import ItemScore, Response
from irt.pipeline import fit_scope
from irt.twopl import TwoPL


def write(tmp_path: Path, name: str, text: str) -> Path:
    path = tmp_path / name
    path.write_text(text)
    return path


def test_advscore_matrix_kinds_from_prefix_and_empty_cells(tmp_path: Path) -> None:
    path = write(tmp_path, "m.csv", "item_id,h_ann,h_bo,GPT-4\nq1,1.0,,0\nq2,0,1,1.0\n")
    rows = {(r.kind, r.subject, r.item): r.correct for r in read_responses(path, "advscore")}
    assert rows == {
        ("human", "ann", "q1"): True,
        ("bot", "GPT-4", "q1"): False,
        ("human", "ann", "q2"): False,
        ("human", "bo", "q2"): True,
        ("bot", "GPT-4", "q2"): True,
    }


@pytest.mark.parametrize(
    ("text", "where", "message"),
    [
        ("id,h_a\nq1,1\n", ":1:", "item_id"),
        ("item_id,h_a,b\nq1,1,0\nq2,0.5,1\n", ":3:", "'0.5' of 'a'"),
        ("item_id,h_a\nq1,1\nq1,0\n", ":3:", "first on line 2"),
        ("item_id,h_a,b\nq1,1\n", ":2:", "2 cells"),
        ("item_id,h_a\n", ":1:", "no responses"),
    ],
)
def test_advscore_matrix_errors_name_file_and_line(
    tmp_path: Path, text: str, where: str, message: str
) -> None:
    path = write(tmp_path, "bad.csv", text)
    with pytest.raises(ResponseFormatError) as info:
        read_responses(path, "advscore")
    assert f"{path}{where}" in str(info.value) and message in str(info.value)


def test_pyirt_jsonlines(tmp_path: Path) -> None:
    lines = [
        {"subject_id": "h_ann", "responses": {"q1": 1, "q2": 0}},
        {"subject_id": "bert", "responses": {"q1": True}},
        {"subject_id": "h_weird_bot", "kind": "bot", "responses": {"q2": 1}},
    ]
    path = write(tmp_path, "p.jsonl", "\n".join(json.dumps(x) for x in lines) + "\n\n")
    rows = {(r.kind, r.subject, r.item): r.correct for r in read_responses(path, "pyirt")}
    assert rows == {
        ("human", "ann", "q1"): True,
        ("human", "ann", "q2"): False,
        ("bot", "bert", "q1"): True,
        ("bot", "h_weird_bot", "q2"): True,
    }
    bad = write(
        tmp_path, "bad.jsonl", json.dumps(lines[0]) + '\n{"subject_id": "x", "responses": {"q": 2}}\n'
    )
    with pytest.raises(ResponseFormatError, match=r"bad\.jsonl:2: outcome 2 of item 'q'"):
        read_responses(bad, "pyirt")
    broken = write(tmp_path, "broken.jsonl", "{nope\n")
    with pytest.raises(ResponseFormatError, match=r"broken\.jsonl:1: invalid JSON"):
        read_responses(broken, "pyirt")


def runner_cycle(*markers: tuple[str, str, str, int, bool], qid: str = "t1", index: int = 0) -> dict:
    """A qb-tournament-runner cycle record (shared/types.ts CycleRecord) of ``(id, name, team,
    position, isCorrect)`` buzzes."""
    return {
        "tossupResponses": [
            {
                "tossupIndex": index,
                "qid": qid,
                "marker": {
                    "player": {"id": pid, "isStarter": True, "name": name, "team": team},
                    "position": position,
                    "guess": "x",
                    "points": 10 if correct else -5,
                    "isCorrect": correct,
                },
            }
            for pid, name, team, position, correct in markers
        ],
        "bonusResponses": None,
    }


def test_cycles_mapping(tmp_path: Path) -> None:
    cycles = [
        runner_cycle(("p1", "ann", "A", 13, True), ("ai_1", "gpt", "B", 31, False)),
        runner_cycle(("ai_2", "llama", "B", 1, True), qid="t2", index=1),
        # t1 replayed: the model answers correctly earlier this time
        runner_cycle(("ai_1", "gpt", "B", 21, True)),
    ]
    path = write(tmp_path, "cycles.jsonl", "\n".join(json.dumps(c) for c in cycles))
    rows = {(r.kind, r.subject, r.item): (r.correct, r.position) for r in read_responses(path, "cycles")}
    assert rows == {
        ("human", "ann", "t1"): (True, 12),  # the runner's position counts revealed tokens
        ("bot", "gpt", "t1"): (True, 20),
        ("bot", "llama", "t2"): (True, 0),
    }  # ann has no record on t2: unobserved, not wrong
    broken = runner_cycle(("p9", "x", "A", 3, True))
    del broken["tossupResponses"][0]["marker"]["isCorrect"]
    bad = write(tmp_path, "c.jsonl", json.dumps(cycles[0]) + "\n" + json.dumps(broken) + "\n")
    with pytest.raises(
        ResponseFormatError, match=r"c\.jsonl:2: tossupResponses\[0\]\.marker\.isCorrect missing"
    ):
        read_responses(bad, "cycles")
    legacy = write(tmp_path, "old.jsonl", '{"qid": "t3", "responses": []}\n')
    with pytest.raises(ResponseFormatError, match=r"old\.jsonl:1: cycle\.tossupResponses missing"):
        read_responses(legacy, "cycles")


def test_advscore_text_layout(shared_data: Path) -> None:
    rows = read_responses(shared_data / "advscore" / "text" / "Advqa_text.csv", "advscore-text")
    subjects = {(r.kind, r.subject) for r in rows}
    humans = {name for kind, name in subjects if kind == "human"}
    assert humans == set("abcABCDE")  # the 8 human teams; question/answer columns skipped
    assert ("bot", "GPT4") in subjects and len(subjects) == 18


@pytest.mark.django_db
def test_import_command_is_atomic_and_idempotent(tmp_path: Path) -> None:
    path = write(tmp_path, "set.csv", "item_id,h_ann,bert\nq1,1,0\nq2,0,1\n")
    call_command("import_responses", str(path), "--format", "advscore", "--dataset", "demo")
    call_command("import_responses", str(path), "--format", "advscore", "--dataset", "demo")
    other = write(tmp_path, "more.csv", "item_id,h_cy\nq1,1\n")
    call_command("import_responses", str(other), "--format", "advscore", "--dataset", "demo")
    stored = set(
        Response.objects.filter(dataset="demo").values_list("source", "subject", "subject_kind", "item")
    )
    assert stored == {
        ("import:set.csv", "human:ann", "human", "q1"),
        ("import:set.csv", "bot:bert", "bot", "q1"),
        ("import:set.csv", "human:ann", "human", "q2"),
        ("import:set.csv", "bot:bert", "bot", "q2"),
        ("import:more.csv", "human:cy", "human", "q1"),
    }
    # a broken re-import of set.csv leaves its rows as they were
    path.write_text("item_id,h_ann,bert\nq1,1,0\nq2,0,7\n")
    with pytest.raises(CommandError, match=r"set\.csv:3:"):
        call_command("import_responses", str(path), "--format", "advscore", "--dataset", "demo")
    assert Response.objects.filter(dataset="demo").count() == 5
    with pytest.raises(CommandError, match="reserved"):
        call_command("import_responses", str(other), "--format", "advscore", "--dataset", "live")


@pytest.mark.django_db
@pytest.mark.parametrize("stem", ["advqa_combined", "fm2"])
def test_imported_matrix_fits_like_the_pure_path(shared_data: Path, stem: str) -> None:
    path = shared_data / "advscore" / "responses" / f"responses_{stem}.csv"
    call_command("import_responses", str(path), "--format", "advscore", "--dataset", stem)
    matrix = load_responses(path)
    kinds = dict(Response.objects.filter(dataset=stem).values_list("subject", "subject_kind").distinct())
    assert sorted(kinds) == sorted(
        f"human:{s[2:]}" if s.startswith("h_") else f"bot:{s}" for s in matrix.subject_ids
    )
    assert all(kinds[s] == s.split(":")[0] for s in kinds)

    fit = fit_scope(stem)
    model = TwoPL().fit(
        matrix.subjects, matrix.items, matrix.correct, len(matrix.subject_ids), len(matrix.item_ids)
    )
    pure = advscore(model.skill_, matrix.is_human, model.difficulty_, model.discriminability_)
    stored = {i.item: i for i in ItemScore.objects.filter(fit=fit)}
    assert len(stored) == len(matrix.item_ids)
    got = np.array([stored[item].advscore for item in matrix.item_ids], dtype=float)
    np.testing.assert_allclose(got, pure.advscore, atol=1e-6)
    np.testing.assert_allclose(
        [stored[item].difficulty for item in matrix.item_ids], model.difficulty_, atol=1e-6
    )
    assert fit.summary["advscore"] == pytest.approx(float(np.nanmean(pure.advscore)), abs=1e-6)


def test_pure_matrix_loader_and_importer_share_one_reader(tmp_path: Path) -> None:
    """``irt.datasets.load_responses`` reads through the importer's ADVSCORE reader: same observations,
    same errors with file and line."""
    path = write(tmp_path, "m.csv", "item_id,h_ann,bert\nq1,1,\nq2,0,1\n")
    matrix = load_responses(path)
    assert matrix.subject_ids == ["h_ann", "bert"] and matrix.is_human.tolist() == [True, False]
    pure = {
        (matrix.subject_ids[s], matrix.item_ids[i], bool(c))
        for s, i, c in zip(matrix.subjects, matrix.items, matrix.correct, strict=True)
    }
    imported = {
        ("h_ann" if r.kind == "human" else r.subject, r.item, r.correct)
        for r in read_responses(path, "advscore")
    }
    assert pure == imported == {("h_ann", "q1", True), ("h_ann", "q2", False), ("bert", "q2", True)}
    write(tmp_path, "m.csv", "item_id,h_ann,bert\nq1,1,0\nq2,0.5,1\n")
    with pytest.raises(ResponseFormatError, match=r"m\.csv:3: cell '0\.5' of 'ann'"):
        load_responses(path)
