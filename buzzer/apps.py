from typing import Any

from django.apps import AppConfig

# The receiver's dispatch uid on competition.signals.events_committed (tests swap it out).
BROADCAST_UID = "buzzer.broadcast"


def broadcast(
    sender: Any,
    *,
    match_id: int,
    events: list[dict[str, Any]],
    next_deadline: Any,
    frames: list[str] | None = None,
    **_: Any,
) -> None:
    """Relay committed events to every server process's room (``buzzer.rooms.publish``)."""
    from buzzer.rooms import publish  # channels and the driver load on first use, not at setup

    publish(match_id, events, next_deadline, frames)


class BuzzerConfig(AppConfig):
    name = "buzzer"

    def ready(self) -> None:
        # Wired here, not as a side effect of importing rooms: a process that stores events
        # (the worker, a management command) broadcasts them even if it never imports rooms.
        from competition import signals

        signals.events_committed.connect(broadcast, dispatch_uid=BROADCAST_UID)
