"""Presets and point functions of scoring/rules.py."""

from __future__ import annotations

import json
from dataclasses import replace

import pytest

from scoring.rules import (
    PRESETS_DIR,
    Preset,
    bonus_points,
    deflate,
    known_presets,
    load_preset,
    tossup_points,
)


def test_shipped_presets_load_and_round_trip():
    assert {"acf", "naqt", "hvc"} <= set(known_presets())
    for name in known_presets():
        preset = load_preset(name)
        assert preset.name == name
        assert Preset.from_dict(json.loads(json.dumps(preset.to_dict()))) == preset
        # The file on disk is exactly the preset (no silently dropped fields).
        assert json.loads((PRESETS_DIR / f"{name}.json").read_text()) == preset.to_dict()


def test_preset_values_follow_quizbowl_md():
    acf, naqt, hvc = load_preset("acf"), load_preset("naqt"), load_preset("hvc")
    assert (acf.power, acf.superpower, acf.ten, acf.neg) == (None, None, 10, -5)
    assert (naqt.superpower, naqt.power, naqt.ten, naqt.neg) == (20, 15, 10, -5)
    assert (hvc.power, hvc.ten, hvc.neg) == (naqt.power, naqt.ten, naqt.neg)
    assert hvc.bot_delay == 0.3 and hvc.min_token_for_bots == 0
    assert hvc.deflation == {"light": 1.0, "mid": 0.9, "heavy": 0.8}


@pytest.mark.parametrize("name", ["nope", "../naqt", "", "NAQT "])
def test_unknown_preset_names_the_known_ones(name):
    with pytest.raises(ValueError) as err:
        load_preset(name)
    for known in known_presets():
        assert known in str(err.value)


@pytest.mark.parametrize(
    "bad",
    [
        {"name": "x", "bogus": 1},
        {"power": 15},
        {"name": "x", "buzz_period": 0},
        {"name": "x", "bot_delay": -1},
    ],
)
def test_from_dict_rejects_bad_presets(bad):
    with pytest.raises(ValueError):
        Preset.from_dict(bad)


NAQT = load_preset("naqt")
ACF = load_preset("acf")
HVC = load_preset("hvc")
NEG_AFTER_NEG = replace(NAQT, name="negneg", neg_after_neg=True)


# preset, correct, token_index, token_count, power_index, superpower_index, fully_read, prior_neg,
# weight class, expected points
@pytest.mark.parametrize(
    "preset,correct,ti,n,pw,sp,full,prior,wc,expected",
    [
        (NAQT, True, 1, 20, 8, 3, False, False, None, 20),  # before (+)
        (NAQT, True, 3, 20, 8, 3, False, False, None, 15),  # at the (+) word boundary: power
        (NAQT, True, 7, 20, 8, None, False, False, None, 15),  # last word before (*)
        (NAQT, True, 8, 20, 8, None, False, False, None, 10),  # first word after (*)
        (NAQT, True, 2, 20, None, None, False, False, None, 10),  # unmarked question
        (ACF, True, 1, 20, 8, 3, False, False, None, 10),  # ACF has no powers
        (NAQT, False, 5, 20, 8, None, False, False, None, -5),  # interrupt
        (NAQT, False, 19, 20, 8, None, False, False, None, 0),  # buzzed on the last word
        (NAQT, False, 5, 20, 8, None, True, False, None, 0),  # all words already read
        (NAQT, False, 5, 20, 8, None, False, True, None, 0),  # second neg scores 0
        (NEG_AFTER_NEG, False, 5, 20, 8, None, False, True, None, -5),
        (HVC, True, 2, 20, 8, None, False, False, "light", 15),
        (HVC, True, 2, 20, 8, None, False, False, "mid", 14),  # 13.5 rounds half up
        (HVC, True, 2, 20, 8, None, False, False, "heavy", 12),
        (HVC, True, 12, 20, 8, None, False, False, "mid", 9),
        (HVC, False, 2, 20, 8, None, False, False, "heavy", -5),  # penalties never deflated
        (HVC, True, 2, 20, 8, None, False, False, "unknown", 15),
    ],
)
def test_tossup_points(preset, correct, ti, n, pw, sp, full, prior, wc, expected):
    assert tossup_points(preset, correct, ti, n, pw, sp, full, prior, weight_class=wc) == expected


def test_bonus_points_and_deflation():
    assert bonus_points(NAQT, True) == NAQT.bonus_part_value
    assert bonus_points(NAQT, False) == 0
    assert bonus_points(NAQT, True, part_value=15) == 15
    assert bonus_points(HVC, True, weight_class="heavy") == 8
    assert deflate(HVC, 10, None) == 10
    assert deflate(HVC, -5, "heavy") == -5
    assert deflate(replace(HVC, deflation={"mid": 0.25}), 10, "mid") == 3  # 2.5 → 3
