"""The outbox: work for Celery stored in the transaction that caused it, sent after commit.

A match's end stores one row per subscriber topic (``competition.signals.match_ended_topics``:
irt's fit, the tournament's advance) with the events (:func:`enqueue_match_ended`); each is sent
when the transaction commits, and :func:`sweep_outbox` resends what the broker never got (Redis
down at that moment, worker gone). The subscriber's task calls :func:`mark_outbox_done` once its
work is stored: delivery is at least once, and the work is idempotent.
"""

from __future__ import annotations

import logging
from datetime import timedelta

from django.db import transaction
from django.db.models import F, Q
from django.utils import timezone

from competition import signals
from competition.models import Match, Outbox

log = logging.getLogger(__name__)

# A row dispatched this long ago and still not done is sent again (its message may have been
# lost with a Redis restart; the fit is idempotent, so a duplicate only costs a lookup).
REDISPATCH_AFTER = 300.0


def enqueue_match_ended(match: Match) -> None:
    """Store one job per subscriber of a match's end, each sent after the caller's transaction
    commits. Call inside that transaction (``competition.live.store``)."""
    for topic in signals.match_ended_topics():
        job = Outbox.objects.create(topic=topic, match=match, payload={"match_id": match.id})
        transaction.on_commit(lambda pk=job.pk: dispatch(pk))


def dispatch(outbox_id: int) -> bool:
    """Send one outbox row's task and mark it dispatched; False (logged) if the broker is
    unreachable: the row stays for :func:`sweep_outbox`."""
    job = Outbox.objects.filter(pk=outbox_id, done_at=None).first()
    if job is None:
        return False
    Outbox.objects.filter(pk=job.pk).update(attempts=F("attempts") + 1)
    send = signals.outbox_sender(job.topic)
    if send is None:
        log.error("outbox row %s has a topic no app registered: %r", job.pk, job.topic)
        return False
    try:
        send(job.match_id)
    except Exception:
        log.warning(
            "could not send outbox row %s (%s); the sweeper retries", job.pk, job.topic, exc_info=True
        )
        return False
    Outbox.objects.filter(pk=job.pk).update(dispatched_at=timezone.now())
    return True


def sweep_outbox(*, redispatch_after: float = REDISPATCH_AFTER) -> int:
    """Send every outbox row not yet done that was never dispatched, or dispatched more than
    ``redispatch_after`` seconds ago. Safe to call from several processes at once (the work
    is idempotent). Returns how many rows were sent. Never raises for a broker outage."""
    stale = timezone.now() - timedelta(seconds=redispatch_after)
    due = Outbox.objects.filter(done_at=None).filter(Q(dispatched_at=None) | Q(dispatched_at__lt=stale))
    return sum(dispatch(pk) for pk in due.values_list("pk", flat=True))


def mark_outbox_done(*, topic: str, match_id: int) -> int:
    """Called by the task when its work is stored: the rows of ``topic`` for this match are
    done and never sent again. Returns how many rows."""
    return Outbox.objects.filter(topic=topic, match_id=match_id, done_at=None).update(done_at=timezone.now())
