"""A connected client's view never drifts from a fresh snapshot: for random command sequences,
every audience's view before a command with that command's visible events applied
(``apply_event``) equals the view after it (``view``)."""

from __future__ import annotations

import json

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from competition.game import (
    AddTeam,
    Adjust,
    Answer,
    BonusAnswer,
    BonusSuggestion,
    Buzz,
    ConfirmBuzz,
    CorrectRuling,
    DecideBonus,
    Delegate,
    End,
    MatchState,
    Next,
    Pause,
    Protest,
    Rename,
    ReplayTossup,
    Resume,
    Reveal,
    Rule,
    RuleViolation,
    SeatPlayer,
    SetPace,
    SetSpeed,
    Skip,
    Start,
    Tick,
    Undo,
    apply,
    apply_event,
    event_audiences,
    view,
)
from competition.game.corrections import correctable
from competition.vocabulary import JUDGE_VERDICTS, MODERATOR_VERDICTS, BonusDecision

from .support import BOT, HUMAN_A, HUMAN_B, T0, TEAM_A, TEAM_B, make_state

ACTIONS = (
    "seat",
    "rename",
    "start",
    "tick",
    "buzz",
    "answer",
    "rule",
    "bonus_answer",
    "undo",
    "skip",
    "next",
    "pause",
    "resume",
    "speed",
    "pace",
    "correct",
    "replay",
    "reveal",
    "adjust",
    "protest",
    "confirm",
    "delegate",
    "suggest",
    "decide",
    "end",
)


def audiences(state: MatchState) -> list[tuple[str, int | None]]:
    """Every connection that can exist before a command: moderator, spectator, each seat."""
    seats = [(f"player:{p.player_id}", p.team_id) for p in state.players]
    return [("moderator", None), ("all", None), *seats]


def check_views_agree(old: MatchState, new: MatchState, events: list) -> None:
    for audience, team_id in audiences(old):
        receives = event_audiences(audience, team_id)
        folded = view(old, audience)
        for event in events:
            if event.audience in receives:
                folded = apply_event(folded, event)
        fresh = view(new, audience)
        differ = {
            k: (folded.get(k), fresh.get(k)) for k in {*folded, *fresh} if folded.get(k) != fresh.get(k)
        }
        assert folded == fresh, (audience, [e.event for e in events], differ)
        json.dumps(fresh)  # what goes on the wire


def likely_actions(state: MatchState) -> list[str]:
    """Every action, weighted towards what moves the current phase on; rarely the end."""
    focus = {
        "lobby": ["seat", "start"],
        "reading": ["tick", "buzz", "buzz", "confirm", "correct"],
        "dead_time": ["tick", "buzz", "confirm", "correct"],
        "answering": ["answer", "answer", "rule", "tick", "delegate"],
        "ruling": ["rule", "rule", "undo", "correct"],
        "bonus": ["bonus_answer", "bonus_answer", "tick", "suggest", "decide", "decide", "correct"],
        "bonus_ruling": ["rule", "rule", "correct"],
        "between": ["tick", "next", "correct", "pace"],
    }.get(state.phase, [])
    return [*ACTIONS[:-1], *focus * 4, "end"]


def command_for(action: str, state: MatchState, draw, next_seat: list[int]):
    """A plausible command for ``action`` on ``state`` (it may still be refused)."""
    t = state.tossup
    qid = t.question_id if t is not None else 100
    players = [p.player_id for p in state.players]
    if action == "seat":
        next_seat[0] += 1
        return SeatPlayer(next_seat[0], draw(st.sampled_from([TEAM_A, TEAM_B])), f"seat{next_seat[0]}")
    if action == "rename":
        if draw(st.booleans()):
            return Rename(
                draw(st.sampled_from(["Owls", " "])), team_id=draw(st.sampled_from([TEAM_A, TEAM_B, 9]))
            )
        return Rename(draw(st.sampled_from(["Zed", ""])), player_id=draw(st.sampled_from([*players, 999])))
    if action == "start":
        return Start()
    if action == "tick":
        return Tick()
    if action == "buzz":
        revealed = t.revealed if t is not None else 0
        return Buzz(
            draw(st.sampled_from(players)),
            qid,
            draw(st.integers(0, max(revealed - 1, 0))),
            delay_bound=draw(st.sampled_from([0.0, 0.1, 0.3])),
        )
    bots = [p.player_id for p in state.players if p.kind == "bot"] or players
    if action == "confirm":
        pending = [p.player_id for p in t.proposals] if t is not None else []
        return ConfirmBuzz(
            draw(st.sampled_from(pending or bots)),
            draw(st.booleans()),
            draw(st.sampled_from([None, *players])),
        )
    if action == "delegate":
        return Delegate(draw(st.sampled_from([None, *bots])))
    if action in ("suggest", "decide"):
        b = state.bonus
        bonus_id, part = (b.bonus_id, b.part) if b is not None else (500, 0)
        if action == "suggest":
            confidence = draw(st.sampled_from([0.3, 0.9, 1.5]))
            mates = [p.player_id for p in state.players if b is not None and p.team_id == b.team_id]
            suggester = draw(st.sampled_from([x for x in mates if x in bots] or bots))
            return BonusSuggestion(suggester, bonus_id, part, "AI guess", confidence, "because")
        decision = draw(st.sampled_from([*BonusDecision, "maybe"]))
        verdict = draw(st.sampled_from(JUDGE_VERDICTS))
        by = draw(st.sampled_from([None, *players]))
        return DecideBonus(bonus_id, part, decision, by, None, verdict, "r", "Be specific")
    if action == "answer":
        delegate = t is not None and t.buzz is not None and t.buzz.answerer_id
        buzzer = t.buzz.player_id if t is not None and t.buzz is not None else draw(st.sampled_from(players))
        buzzer = delegate or buzzer
        verdict = draw(st.sampled_from(JUDGE_VERDICTS))
        return Answer(buzzer, qid, draw(st.sampled_from(["Curie", "no idea"])), verdict, "why", "Which one?")
    if action == "rule":
        return Rule(
            draw(st.sampled_from(MODERATOR_VERDICTS)), draw(st.sampled_from([None, "More specific?"]))
        )
    if action == "bonus_answer":
        b = state.bonus
        if b is None:
            return BonusAnswer(HUMAN_A, 500, 0, "x", "accept")
        team = [p.player_id for p in state.players if p.team_id == b.team_id] or players
        verdict = draw(st.sampled_from(JUDGE_VERDICTS))
        return BonusAnswer(
            draw(st.sampled_from(team)), b.bonus_id, b.part, "guess", verdict, "r", "Be specific"
        )
    if action == "next":  # a Next the match has gone past is a no-op
        return Next(draw(st.sampled_from([None, state.tossup_index, state.tossup_index - 1])))
    if action == "pace":
        return SetPace(draw(st.sampled_from([None, 0.0, 4.0, -1.0])))
    if action == "correct":  # mostly a ruling that may be corrected, sometimes one that may not
        positions = correctable(state) or [len(state.history) - 1]
        position = draw(st.sampled_from([*positions * 3, positions[0] - 1]))
        ruling = draw(st.sampled_from(["correct", "correct", "wrong", "no_penalty", "timeout"]))
        return CorrectRuling(position, ruling, draw(st.sampled_from(["misheard", "misheard", ""])))
    simple = {"undo": Undo, "skip": Skip, "pause": Pause, "resume": Resume}
    simple |= {"replay": ReplayTossup, "reveal": Reveal, "end": End}
    if action in simple:
        return simple[action]()
    if action == "speed":
        return SetSpeed(draw(st.sampled_from([30.0, 60.0, 240.0])))
    if action == "adjust":
        open_protests = [p.protest_id for p in state.protests if p.status == "open"]
        protest = draw(st.sampled_from([None, *open_protests]))
        return Adjust(draw(st.sampled_from([TEAM_A, TEAM_B])), draw(st.integers(-10, 10)), "fix", protest)
    if action == "protest":
        return Protest("unfair", draw(st.sampled_from([None, TEAM_A, TEAM_B])))
    raise AssertionError(action)


@settings(max_examples=200, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(
    data=st.data(),
    auto_rule=st.booleans(),
    auto_advance=st.booleans(),
    preset=st.sampled_from(["naqt", "hvc", "qanta26", "qanta26_static"]),
    collection_window=st.sampled_from([0.0, 0.15]),
    multimodal=st.booleans(),
    hybrid=st.booleans(),
)
def test_applying_each_event_to_the_view_gives_the_fresh_view(
    data, auto_rule, auto_advance, preset, collection_window, multimodal, hybrid
):
    # Multimodal: an image with a reveal lockout and a delay among the words (tests/game/test_media.py).
    texts = [
        f"t{i}w0 [[image:sha256:{'c' * 64}|a map|lockout=1]] t{i}w2 (*) [[delay:2]] t{i}w4" for i in range(3)
    ]
    state = make_state(
        preset=preset,
        hybrid=hybrid,
        tossups=3,
        bonuses=2,
        words=6,
        texts=texts if multimodal else None,
        auto_rule=auto_rule,
        auto_advance=auto_advance,
        collection_window=collection_window,
    )
    now, next_seat = T0, [100]
    for _ in range(data.draw(st.integers(10, 60), label="steps")):
        now += data.draw(st.sampled_from([0.0, 0.05, 0.2, 0.7, 1.5, 4.0]), label="dt")
        action = data.draw(st.sampled_from(likely_actions(state)), label="action")
        cmd = command_for(action, state, data.draw, next_seat)
        try:
            new, events = apply(state, cmd, now)
        except RuleViolation:
            continue
        check_views_agree(state, new, events)
        state = new
    # A driver's last Tick, well after everything scheduled (a Tick is never refused).
    new, events = apply(state, Tick(), now + 60)
    check_views_agree(state, new, events)


def test_a_seat_reaches_every_view_through_player_joined():
    state = make_state(with_bot=False)
    new, events = apply(state, SeatPlayer(77, TEAM_B, "cy"), T0)
    assert [(e.event, e.audience) for e in events] == [("player_joined", "all")]
    assert events[0].data == {
        "player_id": 77,
        "team_id": TEAM_B,
        "name": "cy",
        "kind": "human",
        "weight_class": "",
        "buzz_mode": "autonomous",
        "min_token": 0,
    }
    check_views_agree(state, new, events)
    assert view(new, "player:77")["you"] == {
        "player_id": 77,
        "team_id": TEAM_B,
        "name": "cy",
        "kind": "human",
    }
    assert new.player(77) is not None and state.player(77) is None


@pytest.mark.parametrize(
    ("cmd", "reason"),
    [
        (SeatPlayer(HUMAN_B, TEAM_B, "again"), "bad_value"),
        (SeatPlayer(78, 99, "nowhere"), "unknown_team"),
        (SeatPlayer(78, TEAM_B, "odd", kind="alien"), "bad_value"),
    ],
)
def test_bad_seats_are_refused(cmd, reason):
    with pytest.raises(RuleViolation) as err:
        apply(make_state(), cmd, T0)
    assert err.value.code == reason


def test_no_human_seat_after_the_start_and_no_seat_after_the_end():
    started, _ = apply(make_state(), Start(), T0)
    with pytest.raises(RuleViolation) as err:
        apply(started, SeatPlayer(78, TEAM_A, "late"), T0 + 1)
    assert err.value.code == "bad_phase"
    # An organiser's bot joins a running match, on a human team, and every view follows.
    new, events = apply(started, SeatPlayer(79, TEAM_A, "robo", "bot", "mid"), T0 + 1)
    assert [e.event for e in events][-1] == "player_joined"
    check_views_agree(started, new, events)
    # Or on a team of its own, added first with score 0.
    added, events = apply(new, AddTeam(90, "Late robots"), T0 + 1.5)
    assert [e.event for e in events][-1] == "team_added" and added.scores["90"] == 0
    check_views_agree(new, added, events)
    seated, events = apply(added, SeatPlayer(81, 90, "robo 2", "bot", "heavy"), T0 + 1.6)
    check_views_agree(added, seated, events)
    for cmd in (AddTeam(90, "again"), AddTeam(91, "Late robots"), AddTeam(92, " ")):
        with pytest.raises(RuleViolation) as err:
            apply(seated, cmd, T0 + 1.7)
        assert err.value.code == "bad_value"
    ended, _ = apply(seated, End(), T0 + 2)
    for cmd in (SeatPlayer(80, TEAM_A, "late bot", "bot", "light"), AddTeam(93, "Late")):
        with pytest.raises(RuleViolation) as err:
            apply(ended, cmd, T0 + 3)
        assert err.value.code == "bad_phase"


def test_bot_buzz_in_its_reaction_delay_is_in_the_moderators_race_only():
    state, _ = apply(make_state(preset="hvc"), Start(), T0)
    state, _ = apply(state, Tick(), T0 + 5.01)
    new, events = apply(state, Buzz(BOT, 100, 5), T0 + 5.01)
    check_views_agree(state, new, events)
    assert [c["player_id"] for c in view(new, "moderator")["tossup"]["racing"]] == [BOT]
    assert "racing" not in view(new, "all")["tossup"]
    released, events = apply(new, Tick(), T0 + 5.31)  # released into the race: nothing to tell anyone
    assert events == [] and view(released, "moderator") == view(new, "moderator")
