"""The Celery app: Redis broker, tasks discovered in the Django apps."""

import os

from celery import Celery

os.environ.setdefault("DJANGO_SETTINGS_MODULE", "config.settings")

app = Celery("tossup")
app.config_from_object("django.conf:settings", namespace="CELERY")
app.autodiscover_tasks()
