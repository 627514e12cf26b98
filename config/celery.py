"""The Celery app: Redis broker, tasks discovered in the Django apps.

A worker that becomes ready sends the outbox rows nobody could send (e.g. a match that
ended while Redis or every worker was down): ``competition.outbox.sweep_outbox``."""

import logging
import os

from celery import Celery
from celery.signals import worker_ready

os.environ.setdefault("DJANGO_SETTINGS_MODULE", "config.settings")

app = Celery("tossup")
app.config_from_object("django.conf:settings", namespace="CELERY")
app.autodiscover_tasks()


@worker_ready.connect
def sweep_outbox_on_ready(**_: object) -> None:
    from competition import outbox

    try:
        sent = outbox.sweep_outbox()
    except Exception:  # the worker must start anyway; the serve supervisor sweeps again
        logging.getLogger(__name__).exception("outbox sweep at worker start failed")
        return
    if sent:
        logging.getLogger(__name__).warning("worker ready: sent %s pending outbox task(s)", sent)
