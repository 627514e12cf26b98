"""Conformance with the ADVSCORE authors' code and saved parameters (ADVSCORE.md §4)."""

import io
import json

import numpy as np
import pytest

from irt.advscore import advscore, dataset_means, item_scores
from irt.datasets import (
    DATASETS,
    EXPERT_DATASETS,
    advscore_table,
    fitted_dataset_scores,
    load_parameter_set,
    load_responses,
    load_saved_authors,
)

SETS = ["auth_e30_seed0", "auth_e300_seed0", "paper_g2s1_6000_seed0", "paper_si_g2s1_seed0", "recon_seed0"]
SAVED_MEANS = {"advqa": 0.3130, "fm2": -0.0675, "bamboogle": -0.2092, "trickme": 0.2243}


@pytest.mark.parametrize("key", list(DATASETS))
def test_saved_authors_parameters_reproduce_per_item_and_dataset_scores(advscore_dir, key):
    saved = load_saved_authors(advscore_dir / "conformance" / f"saved_authors_{DATASETS[key]}.csv")
    mu, kappa, adv, _ = item_scores(
        saved.difficulty, saved.discriminability, saved.skill_h0, saved.skill_m0, saved.delta
    )
    np.testing.assert_allclose(mu, saved.mu, atol=1e-6, rtol=0)
    np.testing.assert_allclose(kappa, saved.kappa, atol=1e-6, rtol=0)
    np.testing.assert_allclose(adv, saved.advscore, atol=1e-6, rtol=0)
    assert dataset_means(mu, kappa, saved.delta, adv)["advscore"] == pytest.approx(SAVED_MEANS[key], abs=1e-4)


@pytest.mark.parametrize("param_set", SETS)
@pytest.mark.parametrize("key", list(DATASETS))
def test_full_parameter_sets_match_authors_code(advscore_dir, param_set, key):
    ps = load_parameter_set(advscore_dir / "conformance", f"{param_set}_{DATASETS[key]}")
    res = advscore(ps.skill, ps.is_human, ps.difficulty, ps.discriminability, experts=key in EXPERT_DATASETS)
    for name in ("mu", "kappa", "delta", "advscore"):
        expected, got = ps.expected[name], getattr(res, name)
        np.testing.assert_array_equal(np.isnan(got), np.isnan(expected), err_msg=name)
        np.testing.assert_allclose(got, expected, atol=1e-6, rtol=0, equal_nan=True, err_msg=name)


def test_empty_h1_fixture_is_reported(advscore_dir):
    ps = load_parameter_set(advscore_dir / "conformance", "recon_seed0_bamboogle")
    res = advscore(ps.skill, ps.is_human, ps.difficulty, ps.discriminability)
    assert not res.h1.any() and res.delta_reason is not None


def test_own_fit_matches_the_g2s1_fixture_fit(advscore_dir):
    """The paper_g2s1 fixture is a MAP fit with Gamma(2, 1) priors: ours should land on it."""
    for key in ("trickme", "fm2"):
        ps = load_parameter_set(advscore_dir / "conformance", f"paper_g2s1_6000_seed0_{DATASETS[key]}")
        res = advscore(
            ps.skill, ps.is_human, ps.difficulty, ps.discriminability, experts=key in EXPERT_DATASETS
        )
        matrix = load_responses(advscore_dir / "responses" / f"responses_{DATASETS[key]}.csv")
        ours = fitted_dataset_scores(matrix, key in EXPERT_DATASETS)
        assert ours["advscore"] == pytest.approx(res.dataset()["advscore"], abs=1e-3)


def test_own_fit_gives_the_papers_qualitative_picture(advscore_dir):
    table = advscore_table(advscore_dir, leave_one_out=False)
    adv = {k: v["fit"]["advscore"] for k, v in table.items()}
    kappa = {k: v["fit"]["kappa"] for k, v in table.items()}
    assert adv["advqa"] > 0 and adv["trickme"] > 0 and adv["bamboogle"] < 0
    assert abs(adv["fm2"]) < 0.05
    assert min(adv["advqa"], adv["trickme"]) > max(adv["fm2"], adv["bamboogle"])
    assert min(kappa, key=kappa.get) == "fm2"
    for key, row in table.items():
        assert row["saved"]["advscore"] == pytest.approx(SAVED_MEANS[key], abs=1e-4)


def test_without_subject_drops_exactly_that_subjects_responses(advscore_dir):
    matrix = load_responses(advscore_dir / "responses" / "responses_trickme.csv")
    assert matrix.is_human.sum() == 4 and len(matrix.item_ids) == 97
    h = int(np.flatnonzero(matrix.is_human)[0])
    smaller = matrix.without_subject(h)
    assert len(smaller.correct) == len(matrix.correct) - np.sum(matrix.subjects == h)
    assert smaller.is_human.sum() == 3 and matrix.subject_ids[h] not in smaller.subject_ids
    last = len(matrix.subject_ids) - 1
    assert np.array_equal(
        smaller.correct[smaller.subjects == last - 1], matrix.correct[matrix.subjects == last]
    )


def test_management_command_writes_the_table(advscore_dir, tmp_path):
    from django.core.management import call_command

    out = tmp_path / "table.json"
    call_command("advscore_table", "--data", str(advscore_dir), "--json", str(out), stdout=io.StringIO())
    table = json.loads(out.read_text())
    assert set(table) == {"advqa", "trickme", "fm2", "bamboogle"}
    for row in table.values():
        assert set(row) == {"saved", "fit", "paper"}
        assert set(row["fit"]) == {"mu", "kappa", "delta", "advscore", "loo_min", "loo_max"}
        assert row["fit"]["loo_min"] <= row["fit"]["loo_max"]
    assert table["bamboogle"]["paper"]["advscore"] == -0.21
