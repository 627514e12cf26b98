"""competition's hooks upward (competition/signals.py): wired by the apps' ``ready``, not by
imports, so any process that stores events publishes them and requests the fit."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from competition import game, outbox, signals
from competition.live import store
from competition.models import Outbox
from tests.support.factories import make_match
from tools import launcher

ROOT = Path(__file__).resolve().parents[2]
T0 = 1_700_000_000.0

WIRING = """
import sys, django
django.setup()
from competition import signals
# the broadcaster is connected, and is the only receiver
wired = signals.events_committed.disconnect(dispatch_uid="buzzer.broadcast")
others = signals.events_committed.has_listeners()
print(wired, others, signals.match_ended_topics(), "buzzer.rooms" in sys.modules, "irt.tasks" in sys.modules)
"""


def test_setup_alone_wires_the_broadcast_the_advance_and_the_fit_request_without_importing_rooms_or_tasks():
    env = launcher.child_env()
    done = subprocess.run(
        [sys.executable, "-c", WIRING], cwd=ROOT, env=env, capture_output=True, text=True, timeout=120
    )
    assert done.returncode == 0, done.stderr[-2000:]
    assert done.stdout.split("\n")[-2] == "True False ['tournament_advance', 'fit_after_match'] False False"


@pytest.mark.django_db
def test_a_match_end_stores_and_sends_one_outbox_row_per_registered_topic(
    monkeypatch, django_capture_on_commit_callbacks
):
    sent: list[tuple[str, int]] = []
    monkeypatch.setattr(signals, "_match_ended", {})
    signals.on_match_ended("fit_after_match", lambda match_id: sent.append(("fit", match_id)))
    signals.on_match_ended("archive", lambda match_id: sent.append(("archive", match_id)))
    match = make_match()
    store.apply_command(match_id=match.id, command=game.Start(), actor="moderator", now=T0)
    with django_capture_on_commit_callbacks(execute=True):
        store.apply_command(match_id=match.id, command=game.End(), actor="moderator", now=T0 + 1)

    assert sent == [("fit", match.id), ("archive", match.id)]
    rows = Outbox.objects.filter(match=match).order_by("topic")
    assert [(r.topic, r.attempts, r.dispatched_at is not None) for r in rows] == [
        ("archive", 1, True),
        ("fit_after_match", 1, True),
    ]


@pytest.mark.django_db
def test_an_outbox_row_whose_topic_nobody_registered_is_kept_not_sent(caplog):
    match = make_match()
    job = Outbox.objects.create(topic="gone", match=match, payload={"match_id": match.id})
    assert outbox.sweep_outbox() == 0
    job.refresh_from_db()
    assert (job.attempts, job.dispatched_at, job.done_at) == (1, None, None)
    assert "no app registered: 'gone'" in caplog.text


@pytest.mark.django_db
def test_a_failing_receiver_neither_raises_nor_stops_the_others(
    monkeypatch, django_capture_on_commit_callbacks
):
    got: list[list[int]] = []

    def broken(sender: Any, **_: Any) -> None:
        raise ConnectionError("Redis is down")

    def working(sender: Any, *, match_id: int, events: list[dict[str, Any]], **_: Any) -> None:
        got.append([e["seq"] for e in events])

    monkeypatch.setattr(signals.events_committed, "receivers", [])
    signals.events_committed.connect(broken, weak=False)
    signals.events_committed.connect(working, weak=False)
    match = make_match()
    with django_capture_on_commit_callbacks(execute=True):
        applied = store.apply_command(match_id=match.id, command=game.Start(), actor="moderator", now=T0)
    assert got == [[e["seq"] for e in applied.events]] and got[0][-1] == applied.seq


def test_an_outbox_topic_must_fit_its_column():
    with pytest.raises(ValueError, match="1–50 characters"):
        signals.on_match_ended("", lambda match_id: None)
    with pytest.raises(ValueError, match="1–50 characters"):
        signals.on_match_ended("x" * 51, lambda match_id: None)
