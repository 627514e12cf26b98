"""Random matches with spares thrown in and the scoresheet reviewed at random: every audience's
view still follows the events (``check_views_agree``), the scores always equal the rulings that
stand plus the adjustments, and a refused replacement or review changes nothing."""

from __future__ import annotations

from hypothesis import HealthCheck, event, given, settings
from hypothesis import strategies as st

from competition.game import (
    BonusPartSpec,
    BonusSpec,
    MatchState,
    ReplaceQuestion,
    ReviewRuling,
    RuleViolation,
    Tick,
    apply,
    tokenize_tossup,
)

from .support import T0, make_state
from .test_view_property import check_views_agree, command_for, likely_actions


def spare(kind: str, n: int):
    if kind == "tossup":
        return tokenize_tossup(900 + n, f"s{n}a s{n}b (*) s{n}c s{n}d", f"SPARE-{n}")
    return BonusSpec(990 + n, "spare", [BonusPartSpec(f"p{k}", f"SB-{n}-{k}") for k in range(3)])


def standing_total(state: MatchState) -> dict[str, int]:
    totals = {str(t.team_id): 0 for t in state.teams}
    for h in state.history:
        if not h.undone:
            totals[str(h.team_id)] += h.points
    for a in state.adjustments:
        totals[str(a.team_id)] += a.points
    return totals


@settings(max_examples=120, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(data=st.data(), preset=st.sampled_from(["naqt", "qanta26"]), auto_advance=st.booleans())
def test_views_and_scores_follow_replacements_and_reviews(data, preset, auto_advance):
    state = make_state(preset=preset, tossups=3, bonuses=2, words=6, auto_advance=auto_advance)
    now, next_seat, spares = T0, [100], 0
    for _ in range(data.draw(st.integers(10, 60), label="steps")):
        now += data.draw(st.sampled_from([0.0, 0.2, 0.7, 1.5, 4.0]), label="dt")
        action = data.draw(
            st.sampled_from([*likely_actions(state), "replace", "review", "review"]), label="action"
        )
        if action == "replace":
            kind = data.draw(st.sampled_from(["tossup", "bonus"]))
            spares += 1
            cmd = ReplaceQuestion(kind, "misread", data.draw(st.sampled_from([spare(kind, spares), None])))
        elif action == "review":
            players = [p.player_id for p in state.players]
            cmd = ReviewRuling(
                data.draw(st.integers(-1, len(state.history))),
                data.draw(st.sampled_from(["on review", ""])),
                data.draw(st.sampled_from(["", "correct", "wrong", "no_penalty"])),
                data.draw(st.sampled_from([None, *players])),
                "moderator",
            )
        else:
            cmd = command_for(action, state, data.draw, next_seat)
        try:
            new, events = apply(state, cmd, now)
        except RuleViolation:
            continue
        check_views_agree(state, new, events)
        event(type(cmd).__name__)  # --hypothesis-show-statistics: how often each applied
        assert new.scores == standing_total(new), (cmd, [e.event for e in events])
        state = new
    new, events = apply(state, Tick(), now + 60)
    check_views_agree(state, new, events)
