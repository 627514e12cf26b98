"""A bot's live figures: ``irt.botmetrics.evaluate_live`` by hand-computed QANTA buzz metrics
(pure), and ``irt.selectors.live_bot_tossups`` over a match played through the service layer
(``competition.services``: buzzes, answers judged against the answer line, a reveal, the end)."""

from __future__ import annotations

from typing import Any

import pytest
from django.utils import timezone

from competition import game, selectors, services
from competition.live import store
from competition.models import Buzz, Match, Player
from competition.vocabulary import BuzzMode
from irt import pipeline
from irt.botmetrics import LIVE_UNKNOWN, LiveBotMetrics, LiveTossup, evaluate_live
from irt.selectors import live_bot_tossups
from tests.support.factories import make_match

T0 = 1_700_000_000.0
WORD = 0.1  # 600 wpm, the factory's reading speed


def live(buzz: tuple[int, bool] | None, *humans: int | None, match: str = "M1", n: int = 20) -> LiveTossup:
    return LiveTossup(tossup="t", match=match, token_count=n, bot_buzz=buzz, humans=tuple(humans))


# -- evaluate_live: the definitions by hand ------------------------------------------------------


def test_expected_score_precision_and_win_rates_by_hand() -> None:
    metrics = evaluate_live(
        [
            live((3, True), None, 9),  # the one human buzz (right on 9) is later: h = 0 → 1; wins 1
            live((5, True), 4, None),  # the one human buzz is right before it: h = 1 → 0; wins 0
            live((2, False), None, None),  # no human buzzed: h = 0 → −0.5; no win rate
            live(None, 6, None, match="M2"),  # no buzz: 0; wins 0
            # a human neg on 4, a right human tie on 8 (the bot's): h = 0 → 1; strict 1/2, soft 1
            live((8, True), (4, False), (8, True)),
        ]
    )
    assert metrics == LiveBotMetrics(
        tossups=5,
        buzzes=4,
        correct_buzzes=3,
        raw_score=pytest.approx((1 + 1 - 0.5 + 0 + 1) / 5),
        expected_score=pytest.approx((1 + 0 - 0.5 + 0 + 1) / 5),
        buzz_frequency=pytest.approx(4 / 5),
        buzz_accuracy=pytest.approx(3 / 5),
        buzz_precision=pytest.approx(3 / 4),
        mean_buzz_position=pytest.approx((4 + 6 + 3 + 9) / 4),  # 1-based: tokens read at the buzz
        mean_buzz_fraction=pytest.approx((4 + 6 + 3 + 9) / 4 / 20),
        tossups_with_human_buzzes=4,
        human_win_rate=pytest.approx((1 + 0 + 0 + 1) / 4),
        human_win_rate_strict=pytest.approx((1 + 0 + 0 + 0.5) / 4),
        matches=2,
        tossups_with_humans=5,
    )


def test_a_tie_goes_to_the_bot() -> None:
    tie = evaluate_live([live((7, True), 7)])
    assert (tie.expected_score, tie.human_win_rate_strict) == (1.0, 1.0)
    just_after = evaluate_live([live((8, True), 7)])
    assert (just_after.expected_score, just_after.human_win_rate_strict) == (0.0, 0.0)
    wrong_tie = evaluate_live([live((7, False), 7)])
    assert wrong_tie.expected_score == -0.5  # the bot was first: its neg counts
    last = evaluate_live([live((19, False), 3)])  # wrong on the last token, after a right human
    assert (last.raw_score, last.expected_score) == (0.0, 0.0)


def test_tossups_without_a_human_count_for_frequency_not_for_the_score() -> None:
    metrics = evaluate_live([live((1, False)), live((2, True), None)])
    assert (metrics.tossups, metrics.tossups_with_humans, metrics.tossups_with_human_buzzes) == (2, 1, 0)
    assert metrics.buzz_frequency == 1.0 and metrics.buzz_precision == 0.5
    assert metrics.expected_score == 1.0 and metrics.raw_score == 1.0  # the one tossup with a human
    assert (metrics.human_win_rate, metrics.human_win_rate_strict) == (None, None)  # who never buzzed

    alone = evaluate_live([live(None), live(None)])  # a room of bots, never a buzz
    assert (
        alone.expected_score,
        alone.human_win_rate,
        alone.buzz_precision,
        alone.mean_buzz_position,
    ) == (None, None, None, None)
    assert alone.buzz_frequency == 0.0 and alone.buzz_accuracy == 0.0
    assert set(LIVE_UNKNOWN) == {"ece", "accuracy_by_fraction"} and all(LIVE_UNKNOWN.values())


@pytest.mark.parametrize(
    "kwargs, message",
    [
        ({"token_count": 0, "bot_buzz": None, "humans": ()}, "token_count"),
        ({"token_count": 5, "bot_buzz": (5, True), "humans": ()}, "outside"),
        ({"token_count": 5, "bot_buzz": (-1, True), "humans": ()}, "outside"),
        ({"token_count": 5, "bot_buzz": None, "humans": (None, 9)}, "outside"),
    ],
)
def test_bad_tossups_are_refused(kwargs: dict[str, Any], message: str) -> None:
    with pytest.raises(ValueError, match=message):
        LiveTossup(tossup="t", match="M", **kwargs)


def test_no_tossup_is_refused() -> None:
    with pytest.raises(ValueError, match="no tossups"):
        evaluate_live([])


# -- live_bot_tossups: a match played through the services ---------------------------------------


def _tossup_start(match: Match) -> float:
    """When token 0 of the tossup being read was shown."""
    t = selectors.load_state(match.id).tossup
    return t.revealed_at[0] - t.revealed_from * WORD


def _buzz(match: Match, player: Player, token: int, text: str) -> float:
    """``player`` buzzes on ``token`` of the current tossup and answers ``text``; the time after."""
    qid = selectors.load_state(match.id).tossup.question_id
    at = _tossup_start(match) + token * WORD + 0.05
    services.buzz(
        match_id=match.id,
        player_id=player.id,
        question_id=qid,
        token_index=token,
        client_time=None,
        corrected_press_at=None,
        now=at,
    )
    store.apply_command(match_id=match.id, command=game.Tick(), actor="driver", now=at + 1.0)
    services.answer(match_id=match.id, player_id=player.id, question_id=qid, text=text, now=at + 1.2)
    return at + 1.5


def play_live_match(name: str = "Test match") -> Match:
    """An ended match on three tossups (no bonuses): Red (alice, amy), Blue (bob), the bot on its
    own team. Tossup 1: the bot right on token 3, nobody else buzzed; tossup 2: alice right on
    token 2, the bot silent; tossup 3: bob negs on token 2, the bot wrong on token 4, then the moderator reveals it
    (dead), which ends the match. Every seat connected, so amy, who never buzzed, is a human opponent too."""
    match = make_match(n_tossups=3, n_bonuses=0)
    Match.objects.filter(pk=match.pk).update(name=name)
    Player.objects.filter(match=match).update(first_connected_at=timezone.now())
    seat = {p.name: p for p in Player.objects.filter(match=match)}
    run = store.apply_command
    run(match_id=match.id, command=game.Start(), actor="moderator", now=T0)
    now = _buzz(match, seat["bot"], 3, "Moby-Dick")
    run(match_id=match.id, command=game.Next(after_index=0), actor="moderator", now=now)
    now = _buzz(match, seat["alice"], 2, "Magna Carta")
    run(match_id=match.id, command=game.Next(after_index=1), actor="moderator", now=now)
    _buzz(match, seat["bob"], 2, "Everest")
    now = _buzz(match, seat["bot"], 4, "Kilimanjaro")
    run(match_id=match.id, command=game.Reveal(), actor="moderator", now=now + 1.0)  # the last: it ends
    match.refresh_from_db()
    return match


@pytest.mark.django_db
def test_live_bot_tossups_reads_the_played_match() -> None:
    assert live_bot_tossups() == []  # no ended match yet
    match = play_live_match()
    assert match.status == Match.Status.ENDED
    rows = {(b.player.name, b.tossup_id): (b.token_index, b.ruling) for b in Buzz.objects.filter(match=match)}
    t1, t2, t3 = match.tossup_ids
    assert rows == {
        ("bot", t1): (3, "correct"),
        ("alice", t2): (2, "correct"),
        ("bob", t3): (2, "wrong"),
        ("bot", t3): (4, "wrong"),
    }

    (bot,) = live_bot_tossups()
    seat = Player.objects.get(match=match, name="bot")
    assert bot.subject == pipeline.identity_key("bot", seat.competitor_id, seat.id)
    assert bot.matches == [(match.id, match.name, match.join_code)]
    n = len(match.spec["tossups"][0]["tokens"])
    # The humans, in seat order: alice, amy (Red), bob (Blue); the bot's team has no human.
    assert bot.tossups == [
        LiveTossup(str(t1), match.join_code, n, (3, True), (None, None, None)),
        LiveTossup(str(t2), match.join_code, n, None, ((2, True), None, None)),
        LiveTossup(str(t3), match.join_code, n, (4, False), (None, None, (2, False))),
    ]
    metrics = evaluate_live(bot.tossups)
    # Tossup 3: bob's neg is a human buzz but not a correct one before the bot's, so h = 0.
    assert metrics.expected_score == pytest.approx((1 + 0 - 0.5) / 3)
    # Tossup 2: alice right, the bot silent (no win); tossup 3: bob negged before the bot (a soft
    # win for the bot, not a strict one: it was wrong).
    assert metrics.tossups_with_human_buzzes == 2
    assert (metrics.human_win_rate, metrics.human_win_rate_strict) == (0.5, 0.0)
    assert (metrics.buzz_precision, metrics.buzz_frequency) == (0.5, pytest.approx(2 / 3))
    assert metrics.mean_buzz_position == 4.5  # tokens 3 and 4: 4 and 5 tokens read


@pytest.mark.django_db
def test_an_undone_buzz_is_no_buzz_and_a_running_match_is_not_read() -> None:
    match = play_live_match()
    Buzz.objects.filter(match=match, player__name="bot", token_index=4).update(ruling="undone")
    (bot,) = live_bot_tossups()
    assert bot.tossups[2].bot_buzz is None

    Match.objects.filter(pk=match.pk).update(status=Match.Status.RUNNING)
    assert live_bot_tossups() == []


@pytest.mark.django_db
def test_a_muted_bot_seat_is_left_out() -> None:
    """A muted seat's would-be buzzes are never ruled: read as a bot that never buzzed, it would
    score 0 on every tossup, so it has no live row at all."""
    match = play_live_match()
    Player.objects.filter(match=match, name="bot").update(buzz_mode=BuzzMode.MUTED)
    assert live_bot_tossups() == []
