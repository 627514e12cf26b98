"""What competition tells the apps above it, and the only way it tells them.

competition imports nothing from buzzer or irt: those apps subscribe here from their
``AppConfig.ready`` (so every process that runs ``django.setup()`` — server, worker, a
management command — is wired the same way, whatever it happens to import).

- :data:`events_committed` (a Django signal) is sent after the transaction that stored a
  command's events commits, with ``match_id`` (int), ``events`` (the stored events as
  broadcast: ``[{"seq", "event", "data", "audience", "actor"}]``), ``next_deadline``
  (epoch s or None) and ``frames`` (the events' websocket frames as text, one per event, when
  the writer serialised them already: ``competition.live.store.event_frame``; else None).
  Best effort: a receiver's failure is logged, never raised into the
  caller (the events are stored; clients catch up by resync). buzzer broadcasts them.
- Durable work on match end (the outbox): an app registers a *topic* and the function that
  sends its job (``send(match_id)``, e.g. a Celery ``apply_async``) with
  :func:`on_match_ended`. When a match ends, competition stores one ``Outbox`` row per topic
  in the same transaction, sends it on commit, and re-sends it until the job calls
  ``outbox.mark_outbox_done`` (at least once). irt registers ``fit_after_match``;
  competition itself ``tournament_advance`` (``competition.tournaments``).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from django.dispatch import Signal

# kwargs: match_id: int, events: list[dict[str, Any]], next_deadline: float | None,
# frames: list[str] | None
events_committed = Signal()

_match_ended: dict[str, Callable[[int], Any]] = {}


def on_match_ended(topic: str, send: Callable[[int], Any]) -> None:
    """Store a durable ``topic`` job (an outbox row) for every match that ends from now on,
    sent by ``send(match_id)``; ``send`` raises when the job could not be handed over (the
    row stays for the sweeper). Registering a topic again replaces its sender.
    Raises ValueError for an empty or over-long topic (the column holds 50 characters)."""
    if not topic or len(topic) > 50:
        raise ValueError(f"outbox topic must be 1–50 characters, got {topic!r}")
    _match_ended[topic] = send


def match_ended_topics() -> list[str]:
    """The topics registered with :func:`on_match_ended`, in registration order."""
    return list(_match_ended)


def outbox_sender(topic: str) -> Callable[[int], Any] | None:
    """The function that sends ``topic``'s job, or None when no app registered it."""
    return _match_ended.get(topic)
