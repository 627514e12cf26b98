"""The durable outbox: a match's end stores its fit request in the same transaction, so a
broker outage at commit time (or a publisher failing) loses nothing and raises nothing into
the caller; ``sweep_outbox`` sends it once the broker answers; the task marks it done."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import pytest
import redis
from kombu import pools

from competition import game, outbox, services, signals
from competition.live import store
from competition.models import Match, MatchEvent, Outbox, Player
from config.celery import app
from irt.models import Fit
from irt.tasks import fit_after_match
from tests.support.factories import make_match
from tools import launcher

pytestmark = pytest.mark.django_db

T0 = 1_700_000_000.0


@pytest.fixture
def broker(monkeypatch) -> Iterator[dict[str, Any]]:
    """A private Redis as the Celery broker, which the test may stop and start again."""
    port = launcher.free_port()
    url, proc = launcher.start_redis(port)
    holder: dict[str, Any] = {"url": url, "proc": proc, "port": port}

    def fresh_pools() -> None:  # the app caches producers bound to the old broker
        pools.reset()
        app._pool = None
        app.amqp._producer_pool = None

    monkeypatch.setattr(app.conf, "broker_url", url)
    fresh_pools()
    try:
        yield holder
    finally:
        launcher.stop(holder["proc"])
        monkeypatch.undo()
        fresh_pools()


def queued(url: str) -> int:
    from django.conf import settings

    return int(redis.Redis.from_url(url).llen(f"{settings.REDIS_PREFIX}irt"))  # this instance's queue


def play_and_end(match: Match, django_capture_on_commit_callbacks) -> store.Applied:
    alice = Player.objects.get(match=match, name="alice")
    run = store.apply_command
    run(match_id=match.id, command=game.Start(), actor="moderator", now=T0)
    services.buzz(
        match_id=match.id,
        player_id=alice.id,
        question_id=match.tossup_ids[0],
        token_index=3,
        client_time=None,
        corrected_press_at=None,
        now=T0 + 0.35,
    )
    run(match_id=match.id, command=game.Tick(), actor="driver", now=T0 + 0.6)
    services.answer(
        match_id=match.id, player_id=alice.id, question_id=match.tossup_ids[0], text="Moby-Dick", now=T0 + 1
    )
    with django_capture_on_commit_callbacks(execute=True):
        return run(match_id=match.id, command=game.End(), actor="moderator", now=T0 + 2)


def test_a_match_ended_while_the_broker_is_down_gets_its_fit_once_the_broker_is_back(
    broker, monkeypatch, django_capture_on_commit_callbacks
):
    published: list[int] = []

    def failing_publisher(match_id: int, events: list[dict[str, Any]], deadline: float | None) -> None:
        published.append(match_id)
        raise ConnectionError("Redis is down")

    def failing_receiver(sender: Any, *, match_id: int, events: Any, next_deadline: Any, **_: Any) -> None:
        failing_publisher(match_id, events, next_deadline)

    # the failing publisher alone receives committed events (signal receivers are restored after)
    monkeypatch.setattr(signals.events_committed, "receivers", [])
    signals.events_committed.connect(failing_receiver, weak=False)
    match = make_match()
    launcher.stop(broker["proc"])  # the broker goes down before the match ends

    ended = play_and_end(match, django_capture_on_commit_callbacks)  # raises nothing

    assert published == [match.id]
    assert MatchEvent.objects.filter(match=match, event="match_ended", seq=ended.seq).exists()
    (job,) = Outbox.objects.filter(match=match, topic="fit_after_match")
    assert (job.topic, job.dispatched_at, job.done_at, job.attempts) == ("fit_after_match", None, None, 1)
    assert outbox.sweep_outbox() == 0  # still down: kept for later
    assert Outbox.objects.get(pk=job.pk).attempts == 2

    _, broker["proc"] = launcher.start_redis(broker["port"])
    assert outbox.sweep_outbox() == 1
    job.refresh_from_db()
    assert job.dispatched_at is not None and job.done_at is None
    assert queued(broker["url"]) == 1
    assert outbox.sweep_outbox() == 0  # sent recently: not again
    assert outbox.sweep_outbox(redispatch_after=0) == 1  # long ago and not done: again (lost?)
    assert queued(broker["url"]) == 2

    # Both deliveries run (at least once): one fit per scope, the row done, nothing resent.
    first = fit_after_match.apply(args=[match.id]).get()
    second = fit_after_match.apply(args=[match.id]).get()
    assert first == second and Fit.objects.filter(dataset=f"match:{match.id}").count() == 1
    assert Outbox.objects.get(pk=job.pk).done_at is not None
    assert outbox.sweep_outbox(redispatch_after=0) == 0


def test_a_match_end_sends_its_fit_at_commit_when_the_broker_is_up(
    broker, django_capture_on_commit_callbacks
):
    match = make_match()
    play_and_end(match, django_capture_on_commit_callbacks)
    (job,) = Outbox.objects.filter(match=match, topic="fit_after_match")
    assert job.dispatched_at is not None and job.attempts == 1
    assert queued(broker["url"]) == 1
    assert outbox.sweep_outbox() == 0


def test_a_match_with_nothing_played_marks_its_fit_request_done(django_capture_on_commit_callbacks):
    match = make_match()
    store.apply_command(match_id=match.id, command=game.Start(), actor="moderator", now=T0)
    store.apply_command(match_id=match.id, command=game.End(), actor="moderator", now=T0 + 1)
    (job,) = Outbox.objects.filter(match=match, topic="fit_after_match")
    assert fit_after_match.apply(args=[match.id]).get() == {}
    assert Outbox.objects.get(pk=job.pk).done_at is not None
