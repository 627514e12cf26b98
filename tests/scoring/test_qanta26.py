"""QANTA 2026 rules (HYBRID.md): weight-class tossup factors, consult deflation (dynamic and
static), abstain; and the preset JSON Schema agreeing with ``Preset.from_dict``."""

from __future__ import annotations

import json
from dataclasses import fields

import jsonschema
import pytest

from scoring.rules import (
    PRESETS_DIR,
    SCHEMA_PATH,
    Preset,
    bonus_points,
    known_presets,
    load_preset,
    tossup_points,
)

QANTA = load_preset("qanta26")
STATIC = load_preset("qanta26_static")
SCHEMA = json.loads(SCHEMA_PATH.read_text(encoding="utf-8"))


@pytest.mark.parametrize("wc,ten,power", [("light", 10, 15), ("mid", 8, 12), ("heavy", 4, 6), (None, 10, 15)])
def test_qanta26_tossup_factors(wc, ten, power):
    assert tossup_points(QANTA, True, 12, 20, 8, None, False, False, weight_class=wc) == ten
    assert tossup_points(QANTA, True, 2, 20, 8, None, False, False, weight_class=wc) == power
    # A bot's neg is never deflated.
    assert tossup_points(QANTA, False, 2, 20, 8, None, False, False, weight_class=wc) == -5


@pytest.mark.parametrize(
    "preset,wc,correct,decision,expected",
    [
        (QANTA, "light", True, "consult", 9),
        (QANTA, "mid", True, "consult", 8),
        (QANTA, "heavy", True, "consult", 7),
        (QANTA, "heavy", False, "consult", 0),  # a wrong consulted part scores 0, no penalty
        (STATIC, "light", True, "consult", 8),
        (STATIC, "mid", True, "consult", 8),
        (STATIC, "heavy", True, "consult", 8),
        (STATIC, "heavy", False, "consult", 0),
        (QANTA, None, True, "abstain", 1),
        (QANTA, None, False, "abstain", 1),
        (STATIC, None, False, "abstain", 1),
        (QANTA, None, True, "own", 10),
        (QANTA, None, False, "own", 0),
        (QANTA, None, True, "", 10),
    ],
)
def test_qanta26_bonus_decisions(preset, wc, correct, decision, expected):
    assert bonus_points(preset, correct, 10, wc, decision) == expected


def test_consult_deflation_never_goes_below_zero():
    cheap = Preset.from_dict({**QANTA.to_dict(), "name": "cheap", "consult_deflation": {"heavy": 30}})
    assert bonus_points(cheap, True, 10, "heavy", "consult") == 0


def test_every_shipped_preset_matches_the_schema():
    jsonschema.Draft202012Validator.check_schema(SCHEMA)
    assert {"qanta26", "qanta26_static"} <= set(known_presets())
    for name in known_presets():
        jsonschema.validate(json.loads((PRESETS_DIR / f"{name}.json").read_text()), SCHEMA)


def test_schema_names_every_preset_field():
    assert set(SCHEMA["properties"]) == {f.name for f in fields(Preset)}


BAD = [
    {"name": "x", "colour": "red"},
    {"description": "no name"},
    {"name": "x", "ten": "10"},
    {"name": "x", "power": 1.5},
    {"name": "x", "bonus_decisions": "yes"},
    {"name": "x", "buzz_period": 0},
    {"name": "x", "min_token_for_bots": -1},
    {"name": "x", "bot_delay": -0.1},
    {"name": "x", "deflation": {"giant": 0.5}},
    {"name": "x", "deflation": {"mid": 1.5}},
    {"name": "x", "deflation": {"mid": "half"}},
    {"name": "x", "consult_deflation_mode": "sometimes"},
    {"name": "x", "consult_deflation": {"heavy": -3}},
    {"name": "x", "consult_deflation": {"heavy": 2.5}},
    {"name": "x", "consult_deflation": {"tiny": 1}},
    {"name": "x", "consult_static_deflation": -2},
    {"name": "x", "abstain_points": "1"},
]


@pytest.mark.parametrize("bad", BAD, ids=[json.dumps(b) for b in BAD])
def test_schema_and_from_dict_reject_the_same_bad_presets(bad):
    with pytest.raises(jsonschema.ValidationError):
        jsonschema.validate(bad, SCHEMA)
    with pytest.raises(ValueError) as err:
        Preset.from_dict(bad)
    assert str(err.value)  # a clear message, not an empty error


def test_a_bad_preset_error_names_the_field():
    with pytest.raises(ValueError, match="consult_deflation_mode"):
        Preset.from_dict({"name": "x", "consult_deflation_mode": "sometimes"})
    with pytest.raises(ValueError, match="abstain_points"):
        Preset.from_dict({"name": "x", "abstain_points": "one"})
