"""Buzzer-race response policies and the censored 2PL (irt.races) on hand-built races."""

import math

import numpy as np
import pytest

from irt.races import POLICIES, RaceTwoPL, decided_at, race_responses
from irt.twopl import TwoPL

NAN = math.nan

# One race (tossup 0 of a match): a teammate's early correct buzz, an opponent's earlier neg; a
# dead race; an imported response (no race).
#                 A (team 1)  B (team 1)  C (team 2)  D (team 2)  A    B    C    D   imported
RACES = np.array([0, 0, 0, 0, 1, 1, 1, 1, -1])
CORRECT = np.array([1, 0, 0, 0, 0, 0, 0, 0, 0])
READ = np.array([0.3, NAN, 0.2, NAN, NAN, NAN, NAN, NAN, NAN])


def test_the_decided_point_is_the_earliest_correct_buzz_of_the_race() -> None:
    decided = decided_at(RACES, CORRECT, READ)
    assert decided[:4].tolist() == [0.3] * 4
    assert np.isnan(decided[4:]).all()  # a dead race and an imported response: never decided


def test_a_teammates_early_correct_buzz_censors_and_a_neg_is_observed() -> None:
    r = race_responses(RACES, CORRECT, READ, "censored")
    assert r.keep.all() and r.correct.tolist() == CORRECT.tolist()
    # A's correct buzz carries its point; B (teammate) and D (opponent) are censored at 0.3.
    assert r.at[[0, 1, 3]].tolist() == [0.3, 0.3, 0.3]
    assert np.isnan(r.at[2])  # C's neg: an observed 0, however early
    assert np.isnan(r.at[4:]).all()  # heard a dead tossup to its end, or imported: observed 0
    assert r.censored


def test_wrong_keeps_every_zero_and_missing_drops_the_censored() -> None:
    wrong = race_responses(RACES, CORRECT, READ, "wrong")
    assert wrong.keep.all() and not wrong.censored
    missing = race_responses(RACES, CORRECT, READ, "missing")
    assert missing.keep.tolist() == [True, False, True, False, True, True, True, True, True]
    assert not missing.censored
    with pytest.raises(ValueError, match="unbuzzed policy"):
        race_responses(RACES, CORRECT, READ, "zero")
    assert set(POLICIES) == {"wrong", "missing", "censored"}


def _room() -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
    """Four players on 40 races: on the even ones A (0) answers first at 5 % of the tossup, earlier
    than any other correct buzz, with B (1), A's teammate, beside it; B sits out the odd ones, where
    C (2) and D (3) answer some tossups later (A silent). Returns subjects, items, correct, read,
    races."""
    rng = np.random.default_rng(0)
    s, i, y, at, races = [], [], [], [], []
    for j in range(40):
        a_takes = j % 2 == 0
        for p in range(4):
            if p == 1 and not a_takes:
                continue
            s.append(p)
            i.append(j)
            races.append(j)
            if a_takes:
                y.append(int(p == 0))
                at.append(0.05 if p == 0 else NAN)
            elif p in (2, 3) and rng.random() < 0.5 + 0.2 * (p == 2):
                first = p == 2 or y[-1] == 0
                y.append(int(first))
                at.append(0.6 + 0.01 * j if first else NAN)
            else:
                y.append(0)
                at.append(NAN)
    return np.array(s), np.array(i), np.array(y), np.array(at), np.array(races)  # type: ignore[return-value]


def test_a_player_who_never_had_a_chance_is_uncertain_not_the_worst() -> None:
    s, i, y, at, races = _room()
    resp = race_responses(races, y, at, "censored")
    censored = RaceTwoPL().fit(s, i, resp.columns(), n_subjects=4, n_items=40)
    wrong = TwoPL().fit(s, i, y, n_subjects=4, n_items=40)
    # Under "wrong" B is confidently low; censored at 5 % (before any other correct buzz), B's
    # responses carry no information: B sits at the prior (mean 0, sd 1), the widest interval.
    assert wrong.skill_[1] < -1.0 and wrong.skill_se_[1] < 0.7
    assert censored.skill_[1] == pytest.approx(0.0, abs=1e-4)
    assert censored.skill_se_[1] == pytest.approx(1.0, abs=1e-3)
    assert censored.skill_se_[1] > 1.5 * censored.skill_se_[[0, 2, 3]].max()
    assert censored.max_abs_gradient_ < censored.tol


def test_without_race_points_the_fit_is_twopls() -> None:
    rng = np.random.default_rng(1)
    s = np.repeat(np.arange(12), 30)
    i = np.tile(np.arange(30), 12)
    y = (rng.random(s.size) < 0.5).astype(np.int8)
    plain = TwoPL().fit(s, i, y)
    for correct in (y, np.column_stack([y, np.full(y.size, NAN)])):
        race = RaceTwoPL().fit(s, i, correct)
        assert np.array_equal(race.skill_, plain.skill_)
        assert np.array_equal(race.difficulty_, plain.difficulty_)


def test_bad_race_points_are_refused() -> None:
    with pytest.raises(ValueError, match=r"race points must lie in \(0, 1\]"):
        RaceTwoPL().fit([0, 1], [0, 0], np.array([[1, 0.5], [0, 1.5]]))
    with pytest.raises(ValueError, match="binary"):
        RaceTwoPL().fit([0, 1], [0, 0], np.array([[0.5, 0.5], [0, 0.5]]))
