"""Pure readers of the ADVSCORE paper's released data and the Table-1 reproduction.

Formats (see shared/data/README.md): ``responses/responses_<ds>.csv`` (the ADVSCORE matrix, read by
``formats.advscore``: rows item_id q1..qN, one column per subject, human columns prefixed ``h_``, cells
1/0/empty), ``conformance/saved_authors_<ds>.csv`` (authors' saved slope-intercept item
parameters with back-solved representative skills and δ) and the full parameter-set fixtures ``<set>_<ds>_{items,subjects}.csv``
with the authors' code outputs ``<set>_<ds>_expected_items_authors_code.csv``. Files are read in
place; nothing is copied into the repository. No Django imports.
"""

from __future__ import annotations

import csv
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from formats.advscore import HUMAN_PREFIX, read_matrix
from irt.advscore import advscore, dataset_means, from_slope_intercept, item_scores
from irt.twopl import TwoPL

#: Table keys → file stems of the four datasets.
DATASETS = {"advqa": "advqa_combined", "trickme": "trickme", "fm2": "fm2", "bamboogle": "bamboogle"}
#: Datasets whose humans are manually identified experts (paper footnote 5; the authors used all
#: TrickMe humans as H(0) and H(1)).
EXPERT_DATASETS = frozenset({"trickme"})
#: Sung et al. 2025, Table 1.
PAPER_TABLE1 = {
    "advqa": {"mu": 0.17, "kappa": 0.93, "delta": 0.08, "advscore": 0.31},
    "fm2": {"mu": -0.05, "kappa": 0.22, "delta": 0.01, "advscore": -0.07},
    "bamboogle": {"mu": -0.12, "kappa": 0.93, "delta": 0.11, "advscore": -0.21},
    "trickme": {"mu": 0.09, "kappa": 0.56, "delta": 0.03, "advscore": 0.13},
}


def _read_rows(path: Path) -> list[dict[str, str]]:
    with path.open(newline="") as fh:
        return list(csv.DictReader(fh))


def _column(rows: list[dict[str, str]], name: str) -> np.ndarray:
    return np.array([float(row[name]) if row[name] != "" else np.nan for row in rows])


@dataclass(frozen=True)
class ResponseMatrix:
    """Long-format responses of one dataset.

    item_ids (n_items,), subject_ids (n_subjects,), is_human bool (n_subjects,);
    subjects, items int (n_responses,) indexes into those; correct int8 (n_responses,) 0/1.
    """

    item_ids: list[str]
    subject_ids: list[str]
    is_human: np.ndarray
    subjects: np.ndarray
    items: np.ndarray
    correct: np.ndarray

    def without_subject(self, index: int) -> ResponseMatrix:
        """The same matrix with subject ``index`` removed (indexes renumbered)."""
        keep = self.subjects != index
        subjects = self.subjects[keep]
        return ResponseMatrix(
            self.item_ids,
            self.subject_ids[:index] + self.subject_ids[index + 1 :],
            np.delete(self.is_human, index),
            np.where(subjects > index, subjects - 1, subjects),
            self.items[keep],
            self.correct[keep],
        )


def load_responses(path: Path) -> ResponseMatrix:
    """Read ``responses_<ds>.csv`` with the one ADVSCORE matrix reader (``formats.advscore.read_matrix``);
    ``subject_ids`` keep the ``h_`` prefix. Raises ``formats.FormatError`` (a ValueError naming file and
    line) on a malformed header or row or a cell that is not 0, 1 or empty."""
    matrix = read_matrix(path)
    grid = np.array(
        [[np.nan if cell is None else float(cell) for cell in row] for row in matrix.cells], dtype=float
    ).reshape(len(matrix.item_ids), len(matrix.columns))
    items, subjects = np.nonzero(~np.isnan(grid))
    return ResponseMatrix(
        item_ids=list(matrix.item_ids),
        subject_ids=list(matrix.columns),
        is_human=np.array([name.startswith(HUMAN_PREFIX) for name in matrix.columns]),
        subjects=subjects.astype(np.intp),
        items=items.astype(np.intp),
        correct=grid[items, subjects].astype(np.int8),
    )


@dataclass(frozen=True)
class SavedAuthors:
    """The authors' saved item parameters (paper parameterisation) with back-solved β*_H0, β*_M0
    and δ per item, and their saved per-item μ, κ, ADVSCORE. Arrays (n_items,)."""

    item_ids: list[str]
    difficulty: np.ndarray
    discriminability: np.ndarray
    skill_h0: float
    skill_m0: float
    delta: np.ndarray
    mu: np.ndarray
    kappa: np.ndarray
    advscore: np.ndarray


def load_saved_authors(path: Path) -> SavedAuthors:
    """Read ``conformance/saved_authors_<ds>.csv``. Raises ValueError if the representative skills
    are not constant over items."""
    rows = _read_rows(path)
    difficulty, discriminability = from_slope_intercept(_column(rows, "disc_0"), _column(rows, "diff"))
    h0, m0 = _column(rows, "beta_H0"), _column(rows, "beta_M0")
    if np.ptp(h0) or np.ptp(m0):
        raise ValueError(f"{path}: representative skills vary across items")
    return SavedAuthors(
        item_ids=[row["item_id"] for row in rows],
        difficulty=difficulty,
        discriminability=discriminability,
        skill_h0=float(h0[0]),
        skill_m0=float(m0[0]),
        delta=_column(rows, "delta_recovered"),
        mu=_column(rows, "mu_saved"),
        kappa=_column(rows, "kappa_saved"),
        advscore=_column(rows, "advscore_saved"),
    )


@dataclass(frozen=True)
class ParameterSet:
    """A full fixture parameter set: items (n_items,) in the paper's parameterisation, subjects
    (n_subjects,), and the authors' code's per-item outputs (NaN where undefined)."""

    difficulty: np.ndarray
    discriminability: np.ndarray
    skill: np.ndarray
    is_human: np.ndarray
    expected: dict[str, np.ndarray]


def load_parameter_set(conformance_dir: Path, prefix: str) -> ParameterSet:
    """Read ``<prefix>_{items,subjects,expected_items_authors_code}.csv`` (prefix = set + dataset,
    e.g. ``auth_e30_seed0_trickme``). Raises ValueError if the item ids of items and expected differ."""
    items = _read_rows(conformance_dir / f"{prefix}_items.csv")
    subjects = _read_rows(conformance_dir / f"{prefix}_subjects.csv")
    expected = _read_rows(conformance_dir / f"{prefix}_expected_items_authors_code.csv")
    if [r["item_id"] for r in items] != [r["item_id"] for r in expected]:
        raise ValueError(f"{prefix}: item order differs between items and expected outputs")
    difficulty, discriminability = from_slope_intercept(_column(items, "disc_0"), _column(items, "diff"))
    return ParameterSet(
        difficulty=difficulty,
        discriminability=discriminability,
        skill=_column(subjects, "skill_0"),
        is_human=np.array([r["subject_type"] == "human" for r in subjects]),
        expected={k: _column(expected, k) for k in ("mu", "kappa", "delta", "advscore")},
    )


def saved_dataset_scores(saved: SavedAuthors) -> dict[str, float]:
    """Dataset means {mu, kappa, delta, advscore} recomputed from the authors' saved parameters."""
    mu, kappa, adv, _ = item_scores(
        saved.difficulty, saved.discriminability, saved.skill_h0, saved.skill_m0, saved.delta
    )
    return dataset_means(mu, kappa, saved.delta, adv)


def fitted_dataset_scores(
    matrix: ResponseMatrix, experts: bool, model: TwoPL | None = None
) -> dict[str, float]:
    """Fit a TwoPL (default priors unless ``model`` is given) to the matrix and return the dataset
    means {mu, kappa, delta, advscore}."""
    fitted = (model or TwoPL()).fit(
        matrix.subjects, matrix.items, matrix.correct, len(matrix.subject_ids), len(matrix.item_ids)
    )
    result = advscore(
        fitted.skill_, matrix.is_human, fitted.difficulty_, fitted.discriminability_, experts=experts
    )
    return result.dataset()


def advscore_table(
    data_dir: Path,
    leave_one_out: bool = True,
    progress: Callable[[Iterable[str]], Iterable[str]] | None = None,
) -> dict[str, dict[str, dict[str, float]]]:
    """Table 1 three ways for each dataset key: ``saved`` (authors' parameters), ``fit`` (Tossup's own
    TwoPL on ``responses/``, with ``loo_min``/``loo_max`` of ADVSCORE_D over leave-one-human-out
    refits when ``leave_one_out``) and ``paper``. ``data_dir`` is shared/data/advscore. ``progress``
    (optional) wraps the loop over dataset keys (e.g. a progress bar).
    Raises FileNotFoundError if a file is missing."""
    table: dict[str, dict[str, dict[str, float]]] = {}
    for key in (progress or iter)(list(DATASETS)):
        stem = DATASETS[key]
        experts = key in EXPERT_DATASETS
        matrix = load_responses(data_dir / "responses" / f"responses_{stem}.csv")
        fit = fitted_dataset_scores(matrix, experts)
        if leave_one_out:
            loo = [
                fitted_dataset_scores(matrix.without_subject(int(h)), experts)["advscore"]
                for h in np.flatnonzero(matrix.is_human)
            ]
            fit["loo_min"], fit["loo_max"] = float(np.nanmin(loo)), float(np.nanmax(loo))
        table[key] = {
            "saved": saved_dataset_scores(
                load_saved_authors(data_dir / "conformance" / f"saved_authors_{stem}.csv")
            ),
            "fit": fit,
            "paper": dict(PAPER_TABLE1[key]),
        }
    return table
