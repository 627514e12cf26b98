"""The editor's desk (``buzzer.editor_views``), under ``/editor/`` (config/urls.py)."""

from django.urls import path

from buzzer import editor_views

app_name = "editor"

urlpatterns = [
    path("", editor_views.editor_home, name="home"),
    path("submission/<int:pk>/", editor_views.editor_review, name="review"),
    path("packets/", editor_views.editor_packets, name="packets"),
]
