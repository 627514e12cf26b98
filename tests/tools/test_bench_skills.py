"""tools.bench_skills on a few fixed simulated rooms (seconds): the default response policy
recovers the simulated humans' skills better than the 0-for-unbuzzed policy, and its intervals
cover the truth near their nominal rate."""

import numpy as np
import pytest

from irt.pipeline import DEFAULT_SETTINGS
from tools import bench_skills

SEEDS = (1, 2, 3)


@pytest.fixture(scope="module")
def scores() -> dict[str, list[dict[str, float]]]:
    rooms = [bench_skills.scenario("room8", seed) for seed in SEEDS]
    out: dict[str, list[dict[str, float]]] = {}
    for policy in ("wrong", DEFAULT_SETTINGS["unbuzzed"]):
        out[policy] = []
        for room in rooms:
            got, subjects, items = bench_skills.fit(room, policy)
            out[policy].append(bench_skills.score(room, got, subjects, items, "room8"))
    return out


def test_the_default_recovers_skills_better_than_zero_for_unbuzzed(scores) -> None:
    default = DEFAULT_SETTINGS["unbuzzed"]
    assert default == "censored"
    # The room (seed 2): the ranking improves; on every room the error halves.
    assert scores[default][1]["rho"] > scores["wrong"][1]["rho"] + 0.03
    for new, old in zip(scores[default], scores["wrong"], strict=True):
        assert new["rmse"] < 0.6 * old["rmse"]
        assert new["item_rho"] > old["item_rho"]


def test_the_defaults_95_percent_intervals_cover_the_truth(scores) -> None:
    # 24 simulated players over three rooms.
    cover = np.mean([s["cover95"] for s in scores[DEFAULT_SETTINGS["unbuzzed"]]])
    assert 0.85 <= cover <= 1.0
    assert np.mean([s["cover95"] for s in scores["wrong"]]) < 0.25  # today's: confidently wrong


def test_rooms_follow_the_engine_rules() -> None:
    room = bench_skills.scenario("room8", 1)
    by_race: dict[int, list[tuple[str, bool, float]]] = {}
    for subject, _, race, ok, read in room.rows:
        if race >= 0 and room.kinds[subject] == "human":
            by_race.setdefault(race, []).append((subject, ok, read))
    assert len(by_race) == 60 and all(len(r) == 8 for r in by_race.values())
    for seats in by_race.values():
        correct = [read for _, ok, read in seats if ok]
        buzzes = [(subject, read) for subject, _, read in seats if np.isfinite(read)]
        assert len(correct) <= 1 and len(buzzes) <= 2  # one correct buzz ends it; one buzz a team
        teams = {room.team_of[s] for s, _ in buzzes}
        assert len(teams) == len(buzzes)
        if correct:
            assert all(read <= correct[0] for _, read in buzzes)  # nobody buzzes after it
