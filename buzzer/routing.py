"""Websocket routes, all under /ws/ so a proxy can route them."""

from django.urls import re_path

from . import consumers

websocket_urlpatterns = [
    re_path(
        r"^ws/match/(?P<code>[A-Za-z0-9]+)/(?P<role>play|moderate|watch)/$", consumers.MatchConsumer.as_asgi()
    ),
]
