"""Fixtures for the page tests: a private cache per test (the join rate limit counts per
client IP, and every test client is 127.0.0.1) and a logged-in organiser."""

from __future__ import annotations

import uuid

import pytest
from django.contrib.auth import get_user_model
from django.test import Client


@pytest.fixture(autouse=True)
def private_cache(settings) -> None:
    settings.CACHES = {
        "default": {"BACKEND": "django.core.cache.backends.locmem.LocMemCache", "LOCATION": uuid.uuid4().hex}
    }


@pytest.fixture
def organiser(db) -> Client:
    """A client logged in as an organiser (may create matches and open every dashboard)."""
    user = get_user_model().objects.create_user("org", password="pw-for-tests-only")
    client = Client()
    client.force_login(user)
    return client
