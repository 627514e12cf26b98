"""ASGI entry point: HTTP through Django, websockets under /ws/ through Channels."""

import os

from django.core.asgi import get_asgi_application

os.environ.setdefault("DJANGO_SETTINGS_MODULE", "config.settings")
django_asgi_app = get_asgi_application()

from channels.routing import ProtocolTypeRouter, URLRouter  # noqa: E402
from channels.security.websocket import OriginValidator  # noqa: E402
from django.conf import settings  # noqa: E402

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
