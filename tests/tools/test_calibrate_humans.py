"""The rooms part of ``tools.calibrate_humans``: the first correct buzz's distribution (empirical and
Kaplan–Meier), per-room medians and percentiles, the room resolution, the gap lines, and the headline
room of ``simulate_match`` rebuilt without a server (hand-computed cases; real data where present)."""

from __future__ import annotations

import json
import math
import random
from pathlib import Path

import numpy as np
import pytest

from tools import calibrate_humans as ch
from tools.simulation import HUMANS, HumanModel, difficulty

INF = math.inf


def test_first_correct_quantiles_of_the_converted_and_never_share() -> None:
    dist = ch.first_correct([0.8, 0.2, INF, 0.6, 0.4, math.nan])
    # Converted 0.2 0.4 0.6 0.8: the q quantile is the ceil(4q)-th of them.
    assert dist.quantiles == (0.2, 0.2, 0.4, 0.6, 0.8)
    assert dist.never == pytest.approx(2 / 6)
    assert dist.tossups == 6
    # 20 converted: the 10 % quantile is the 2nd (not the 3rd, despite 0.1 · 20 in floating point).
    assert ch.first_correct(np.arange(1, 21) / 20, [0.1, 0.5]).quantiles == (0.1, 0.5)
    nothing = ch.first_correct([INF, INF])
    assert all(math.isnan(q) for q in nothing.quantiles) and nothing.never == 1.0
    with pytest.raises(ValueError):
        ch.first_correct([])


def test_km_first_correct_by_hand() -> None:
    # Events 0.2 and 0.5; censored at 0.3 and twice at the end. S: 4/5 after 0.2, then 4/5 · 2/3 after 0.5
    # (3 at risk, one censored at 0.3), so F(1) = 7/15.
    dist = ch.km_first_correct([0.2, 0.5], [0.3, 1.0, 1.0])
    assert dist.never == pytest.approx(8 / 15)
    assert dist.tossups == 5
    # F(0.2) = 0.2 is 3/7 of F(1): the 10 and 25 % quantiles are 0.2, the rest 0.5.
    assert dist.quantiles == pytest.approx((0.2, 0.2, 0.5, 0.5, 0.5))
    # Censored only at the end, Kaplan–Meier is the empirical distribution.
    km, empirical = ch.km_first_correct([0.4, 0.2], [1.0, 1.0]), ch.first_correct([0.2, 0.4, INF, INF])
    assert km.quantiles == pytest.approx(empirical.quantiles) == (0.2, 0.2, 0.2, 0.4, 0.4)
    assert (km.never, km.tossups) == (pytest.approx(empirical.never), empirical.tossups) == (0.5, 4)
    none = ch.km_first_correct([], [0.5, 1.0])
    assert none.never == 1.0 and none.tossups == 2 and all(math.isnan(q) for q in none.quantiles)


def test_room_medians_and_percentile() -> None:
    rooms = np.array([[0.3, INF, 0.1, 0.2], [INF, INF, INF, INF], [0.5, 0.4, INF, INF]])
    medians = ch.room_medians(rooms)
    assert medians[0] == 0.2 and math.isnan(medians[1]) and medians[2] == 0.4
    assert medians[0] == ch.first_correct(rooms[0]).quantiles[2]
    assert ch.percentile_of(0.5, [0.1, 0.5, 0.9, math.nan]) == pytest.approx(50.0)  # (1 + ½) / 3
    assert ch.percentile_of(1.0, [0.1, 0.5, 0.9]) == 100.0
    assert ch.percentile_of(0.0, [0.1, 0.5]) == 0.0
    with pytest.raises(ValueError):
        ch.percentile_of(0.5, [math.nan])
    assert ch.z_score(0.166, 0.170, 0.003, 0.004) == pytest.approx(-0.8)


def _room(plans: dict[int, tuple[float, bool]]) -> tuple[np.ndarray, np.ndarray]:
    when = np.full((1, 1, 8), INF)
    knows = np.zeros(when.shape, dtype=bool)
    for player, (at, right) in plans.items():
        when[0, 0, player], knows[0, 0, player] = at, right
    return when, knows


@pytest.mark.parametrize(
    ("plans", "expected"),
    [
        ({0: (0.5, True), 4: (0.3, False)}, 0.5),  # team 2 negs first, team 1 then gets it
        ({1: (0.4, False), 2: (0.45, True)}, INF),  # team 1's earliest negs: its teammate is locked out
        ({7: (0.6, True), 0: (0.7, True)}, 0.6),  # the earlier team's correct buzz
        ({3: (0.2, False), 5: (0.3, False), 6: (0.35, True)}, INF),  # both teams' earliest wrong
        ({}, INF),
    ],
)
def test_resolve_first_correct_at(plans: dict[int, tuple[float, bool]], expected: float) -> None:
    when, knows = _room(plans)
    assert ch.resolve(when, knows, np.full((1, 1), 0.5)).first_correct_at[0, 0] == expected


def test_plans_follow_the_model() -> None:
    # Skill = difficulty (gap 0): knows with probability ½, then buzzes at e + (1 − e)/2 = 0.8.
    model = HumanModel(skill_mean=0.0, skill_sd=1.0, early=0.6, noise=0.0, neg_rate=0.1)
    shape = (1, 1, 8)
    draws = ch.Draws(
        skill=np.zeros((1, 1, 8)),
        difficulty=np.zeros((1, 1, 1)),
        know=np.array([0.4, 0.6, 0.6, 0.9, 0.4, 0.9, 0.9, 0.9]).reshape(shape),
        noise=np.zeros(shape),
        neg=np.array([0.5, 0.05, 0.5, 0.5, 0.5, 0.5, 0.5, 0.5]).reshape(shape),
        neg_at=np.full(shape, 0.75),
        power=np.array([[0.5]]),
    )
    when, knows = ch.plans(model, draws)
    assert when[0, 0, :3].tolist() == pytest.approx([0.8, 0.75, INF])
    assert knows[0, 0, :3].tolist() == [True, False, False]
    # Team 1's neg at 0.75 locks out its player who knew at 0.8; team 2's player 5 gets it at 0.8.
    assert ch.simulate(model, draws).first_correct_at[0, 0] == pytest.approx(0.8)
    draws.know[0, 0, 4] = 0.9
    assert ch.simulate(model, draws).first_correct_at[0, 0] == INF


class _Planned:
    """A stand-in player with fixed plans per question id."""

    def __init__(self, plans: dict[int, tuple[int, bool]]) -> None:
        self.plans = plans

    def plan(self, question_id: int, token_count: int) -> tuple[int, bool] | None:
        return self.plans.get(question_id)


def test_room_first_correct_in_token_fractions() -> None:
    tossups = [ch.HeadlineTossup(7, 11, 4), ch.HeadlineTossup(8, 21, None), ch.HeadlineTossup(9, 21, 10)]
    players = [_Planned({}) for _ in range(8)]
    players[0] = _Planned({7: (5, True), 9: (12, False)})
    players[4] = _Planned({7: (3, False), 9: (14, True)})
    at = ch.room_first_correct(players, tossups)  # type: ignore[arg-type]
    # 7: team 2 negs at token 3, team 1 right at 5 of 0…10; 8: silence; 9: team 2 right at 14 of 0…20.
    assert at.tolist() == [0.5, INF, 0.7]


def test_headline_players_are_simulate_matchs() -> None:
    players = ch.headline_players(1)
    rng = random.Random(1)
    skills = [HUMANS.skill(rng) for _ in range(8)]
    assert [p.name for p in players] == [f"t{t}p{p}" for t in (1, 2) for p in (1, 2, 3, 4)]
    assert [p.true_skill for p in players] == skills
    assert [p.team_skill for p in players] == [max(skills[:4])] * 4 + [max(skills[4:])] * 4
    assert [p.captain for p in players] == [True, False, False, False] * 2
    # The tossup draws are keyed by seed, seat and question id, as live.
    p = players[5]
    live = HUMANS.plan(random.Random("1:t2p2:tossup:5"), p.true_skill - difficulty(1, 5), 120)
    assert p.plan(5, 120) == live


def test_headline_tossups_in_simulate_match_order(tmp_path: Path) -> None:
    def tossup(set_name: str, packet: str | int, number: int, question: str) -> str:
        return json.dumps(
            {
                "type": "tossup",
                "set": set_name,
                "year": 2021,
                "packet": packet,
                "number": number,
                "question": question,
                "answer": "x",
            }
        )

    lines = [
        tossup("S", "10", 1, "a b c"),
        tossup("other", "1", 1, "z z"),
        tossup("S", 2, 2, "a b (*) c d"),
        tossup("S", "2", 1, "a b c d e f"),
        tossup("S", "Finals", 1, "one two"),
    ]
    path = tmp_path / "dump.jsonl"
    path.write_text("\n".join(lines) + "\n")
    got = ch.headline_tossups(path, "S", count=3)
    # Ids by the set's file order (10/1, 2/2, 2/1, Finals/1 → 1…4); played by packet number, then number.
    assert got == [ch.HeadlineTossup(3, 6, None), ch.HeadlineTossup(2, 4, 2), ch.HeadlineTossup(1, 3, None)]
    assert [t.question_id for t in ch.headline_tossups(path, "S", count=9, first_id=11)] == [13, 12, 11, 14]
    with pytest.raises(ValueError):
        ch.headline_tossups(path, "absent")


def test_hsnct_gap_line() -> None:
    target = ch.Moments(0.17, 0.843, 0.194, 0.103)
    errors = ch.Moments(0.003, 0.003, 0.002, 0.001)
    room = ch.Moments(0.16, 0.84, 0.2, 0.1)
    line = ch.hsnct_gap(room, 10_000, target, errors, 0.58, 0.56)
    # power: −0.01 / √(0.003² + 0.16 · 0.84 / 10⁴) = −2.11 se; conversion −0.003 / the same = −0.63 se.
    assert "off on power by -2.1 se" in line
    assert "(84.3%, -0.6 se)" in line
    assert "19.0% of its conversions" in line and "20.2% quantile, 0.58, is +0.02" in line
    assert "within 2 se of both" in ch.hsnct_gap(target, 10_000, target, errors, 0.56, 0.56)


def test_gameplay_gap_line() -> None:
    play = ch.Gameplay(buzzes=((0.2, True), (0.4, False), (0.6, False)), censored=(0.3, 1.0))
    exhibition = ch.km_first_correct([0.2], [0.3, 1.0, 1.0, 1.0])
    team = ch.FirstCorrect((0.55, 0.6, 0.7, 0.8, 0.9), 0.3, 100)
    room = ch.FirstCorrect((0.5, 0.6, 0.7, 0.8, 0.9), 0.16, 100)
    line = ch.gameplay_gap(exhibition, team, room, play, 0.19, 4.0)
    assert "never converted 80% of 5 tossups" in line
    assert "30% for one simulated team of 4 and 16% for the room" in line
    assert "2 of their 3 first buzzes were wrong (67%; the room's 19%)" in line
    assert "cut 1 tossups short at a median 0.30, before the team's 10% quantile 0.55" in line
    assert "their 1 right buzzes' median 0.20 is the room's 4th percentile" in line


def test_headline_room_on_the_real_set(shared_data: Path) -> None:
    tossups = ch.headline_tossups(shared_data / "packets" / "qbreader_packets_2012_2022.jsonl.gz")
    assert [t.question_id for t in tossups] == list(range(1, 21))
    # The token counts the live headline run logged (docs/BOT_EVALUATION.md): tossups 11, 17, 19, 20.
    assert [tossups[i].token_count for i in (10, 16, 18, 19)] == [129, 129, 115, 119]
    at = ch.room_first_correct(ch.headline_players(1), tossups)
    assert int(np.isfinite(at).sum()) == 16
    # The live run's bot took 17, 19 and 20; the humans' other correct buzzes had a median of 72 %.
    at[[16, 18, 19]] = INF
    assert round(float(np.median(at[np.isfinite(at)])), 2) == 0.72
