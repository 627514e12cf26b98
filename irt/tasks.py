"""Celery tasks: thin wrappers that take ids, call the pipeline and report progress.

Delivery is at least once (acks late; the Redis broker redelivers a task whose worker died
after ``visibility_timeout``, config/settings.py), and the work is idempotent: fits are
keyed by their inputs and claimed by one runner (``irt.pipeline.fit_scope``)."""

from __future__ import annotations

from celery import shared_task
from django.db import OperationalError

from competition import outbox, selectors, tournaments
from irt import pipeline
from irt.apps import FIT_AFTER_MATCH

# Retries wait at most this long: a countdown longer than the broker's visibility timeout
# would be redelivered while it waits.
RETRY_BACKOFF_MAX = 30


@shared_task(
    bind=True,
    acks_late=True,
    autoretry_for=(OperationalError,),
    retry_backoff=True,
    retry_backoff_max=RETRY_BACKOFF_MAX,
    max_retries=5,
    time_limit=1800,
)
def fit_after_match(self, match_id: int) -> dict[str, int]:
    """On match end (sent through competition's outbox, topic :data:`FIT_AFTER_MATCH`): store the match's responses, then fit that match alone and all live
    matches together (across tournaments), and, when the match was the last game of a tournament
    to end, the tournament's games together (``tournament:<id>``); then mark the match's outbox
    row done. Safe to run twice (responses replaced, fits keyed by their inputs). Of two last
    games ending at once, the task that records its responses last sees both in its fit."""
    if not pipeline.record_match_responses(match_id):  # no tossup played: nothing to fit
        outbox.mark_outbox_done(topic=FIT_AFTER_MATCH, match_id=match_id)
        return {}

    def progress(scope: str, start: float):
        # the two fits share the task's 0–1 progress: the match fit the first half
        def report(fraction: float) -> None:
            if self.request.id:
                meta = {"fraction": start + fraction / 2, "scope": scope}
                self.update_state(state="PROGRESS", meta=meta)

        return report

    scope = f"match:{match_id}"
    match_fit = pipeline.fit_scope(scope, progress=progress(scope, 0.0))
    live_fit = pipeline.fit_scope("live", progress=progress("live", 0.5))
    fits = {"match_fit": match_fit.id, "live_fit": live_fit.id}
    tournament = selectors.tournament_of(match_id)
    if tournament is not None and tournaments.tournament_complete(tournament):
        fits["tournament_fit"] = pipeline.fit_scope(f"tournament:{tournament}").id
    outbox.mark_outbox_done(topic=FIT_AFTER_MATCH, match_id=match_id)
    return fits


@shared_task(
    bind=True,
    acks_late=True,
    autoretry_for=(OperationalError,),
    retry_backoff=True,
    retry_backoff_max=RETRY_BACKOFF_MAX,
    max_retries=5,
    time_limit=1800,
)
def refit(self, scope: str = "live", seed: int = 0) -> int:
    """Refit a scope on demand (the analysis page's "refit now"); returns the Fit id. Live
    scopes first record their matches' responses again (``pipeline.refresh_live_responses``), so
    merged or split identities and edited flags reach the fit. Reports ``{"fraction"}`` progress meta."""

    def progress(fraction: float) -> None:
        if self.request.id:
            self.update_state(state="PROGRESS", meta={"fraction": fraction, "scope": scope})

    pipeline.refresh_live_responses(scope)
    return pipeline.fit_scope(scope, seed=seed, progress=progress).id
