"""ASGI entry point: HTTP through Django, websockets under /ws/ through Channels."""

import atexit
import gc
import logging
import os
import time

from django.core.asgi import get_asgi_application

os.environ.setdefault("DJANGO_SETTINGS_MODULE", "config.settings")
django_asgi_app = get_asgi_application()

from channels.routing import ProtocolTypeRouter, URLRouter  # noqa: E402
from channels.security.websocket import OriginValidator  # noqa: E402
from django.conf import settings  # noqa: E402
from django.core.signals import request_finished  # noqa: E402
from django.db import connections  # noqa: E402

from buzzer.routing import websocket_urlpatterns  # noqa: E402


class SameSiteOrNoOriginValidator(OriginValidator):
    """Channels' ``AllowedHostsOriginValidator``, except that a handshake with no ``Origin``
    header is let through.

    Why: the Origin check exists to stop a page on another site from opening a socket with
    the visitor's cookies (cross-site websocket hijacking). Browsers always send ``Origin`` on
    a websocket handshake, and a page cannot remove it, so a foreign page is still refused.
    Clients that send none are programs — bots over the player protocol (python
    ``websockets``), the simulator, load tests — which carry no victim's cookies and
    authenticate with their seat or moderator token like any other connection.

    The allowed hosts are read from ``settings.ALLOWED_HOSTS`` at each handshake (the ``--lan``
    launcher sets them through the environment)."""

    def __init__(self, application):
        super().__init__(application, allowed_origins=[])

    @property  # type: ignore[override]
    def allowed_origins(self) -> list[str]:
        hosts = list(settings.ALLOWED_HOSTS)
        if settings.DEBUG and not hosts:
            hosts = ["localhost", "127.0.0.1", "[::1]"]  # Django's own DEBUG default
        return hosts

    @allowed_origins.setter
    def allowed_origins(self, value: list[str]) -> None:
        pass  # always read from settings

    def valid_origin(self, parsed_origin) -> bool:
        if parsed_origin is None:
            return True
        return self.validate_origin(parsed_origin)


application = ProtocolTypeRouter(
    {
        "http": django_asgi_app,
        "websocket": SameSiteOrNoOriginValidator(URLRouter(websocket_urlpatterns)),
    }
)


def _close_request_connections(**kwargs) -> None:
    """Django runs each HTTP request's sync code on a thread of its own that dies with the
    request, so a persistent connection (``CONN_MAX_AGE``) opened there would be left open,
    never reused: close it. The websocket path's database threads are long-lived
    (buzzer/dbpools.py), so their connections persist and are reused."""
    connections.close_all()


# Only for requests served here (sender: the ASGI handler's class), never for the test
# client's, which run inside a test's transaction.
request_finished.connect(_close_request_connections, sender=type(django_asgi_app))


GC_THRESHOLDS = (700, 10, 1000)  # CPython's are (700, 10, 10)


def _tune_gc() -> None:
    """Move everything loaded at startup (Django, the app modules: ~80k objects) out of the
    cyclic collector's reach with ``gc.freeze()``, so no collection walks it again, and make
    full collections rarer: after :data:`GC_THRESHOLDS` ``[2]`` collections of the middle
    generation instead of CPython's 10.

    A full collection walks every open connection and stalls every socket of the process: with
    100 matches reading and 1,000 clients connecting (``tools.bench_live`` (a)) one or two of
    75–144 ms came in each run with CPython's thresholds, none with these. Words' p99 lateness
    over the same hours, on a 2-core VM whose speed varied: 46–65 ms over 6 runs (one under
    50 ms) against 26–203 ms over 15 (eight under 50; the others while the VM ran slow, when
    the matches alone read 17–72 ms). Connections leave no reference cycles, so the rarer
    collections pile up no garbage: 6,500 connections churning for 30 s
    (tests/faults/test_room_faults.py) grew the server by 10 MB, against 9 MB with CPython's
    thresholds.
    ``TOSSUP_GC_THRESHOLDS`` ("gen0,gen1,gen2") overrides them. Full collections over
    :data:`GC_PAUSE_LOGGED` are logged."""
    thresholds = os.environ.get("TOSSUP_GC_THRESHOLDS")
    gc.set_threshold(*(int(x) for x in thresholds.split(",")) if thresholds else GC_THRESHOLDS)
    gc.collect()
    gc.freeze()


_gc_started = 0.0
GC_PAUSE_LOGGED = 0.05  # seconds: a full collection longer than this is logged


def _log_long_collections(phase: str, info: dict) -> None:
    """Log each full collection that paused the process for more than GC_PAUSE_LOGGED."""
    global _gc_started
    if info.get("generation") != 2:
        return
    if phase == "start":
        _gc_started = time.perf_counter()
    elif (pause := time.perf_counter() - _gc_started) > GC_PAUSE_LOGGED:
        logging.getLogger("config.gc").warning("gc: full collection paused the process %.0f ms", pause * 1000)


_tune_gc()
gc.callbacks.append(_log_long_collections)
# The collections of interpreter shutdown come after logging's streams are closed.
atexit.register(gc.callbacks.remove, _log_long_collections)
