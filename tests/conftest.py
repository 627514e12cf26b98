"""Suite-wide fixtures: a private Redis for the whole session (the suite never depends on
a Redis being installed as a service), and where the shared data lives."""

from __future__ import annotations

import os
import shutil
import tempfile
from collections.abc import Iterator
from pathlib import Path

import pytest
from hypothesis import settings as hypothesis_settings

from tools import launcher

# Property tests explore the same examples on every run (CI must not pass or fail by luck);
# set HYPOTHESIS_PROFILE=explore for fresh random examples locally.
hypothesis_settings.register_profile("ci", derandomize=True, print_blob=True)
hypothesis_settings.register_profile("explore", print_blob=True)
hypothesis_settings.load_profile(os.environ.get("HYPOTHESIS_PROFILE", "ci"))

SHARED_DATA = Path(
    os.environ.get("TOSSUP_SHARED_DATA", Path(__file__).resolve().parents[2] / "shared" / "data")
)
_redis: dict[str, object] = {}


def pytest_configure(config: pytest.Config) -> None:
    url, proc = launcher.start_redis()
    _redis.update(url=url, proc=proc)
    os.environ["REDIS_URL"] = url  # for server/worker subprocesses started by tests
    from django.conf import settings

    from config.settings import channel_layers

    settings.REDIS_URL = url
    settings.CHANNEL_LAYERS = channel_layers(url, settings.REDIS_PREFIX)
    settings.CELERY_BROKER_URL = settings.CELERY_RESULT_BACKEND = url
    # Media files of imported tossups go to a private folder, for this process and its servers.
    media = tempfile.mkdtemp(prefix="tossup-test-media-")
    _redis["media"] = media
    os.environ["MEDIA_ROOT"] = settings.MEDIA_ROOT = media
    from config.celery import app

    app.conf.broker_url = app.conf.result_backend = url


def pytest_unconfigure(config: pytest.Config) -> None:
    launcher.stop(_redis.get("proc"))  # type: ignore[arg-type]
    shutil.rmtree(str(_redis.get("media", "")), ignore_errors=True)


@pytest.fixture(scope="session", autouse=True)
def _close_pool_connections(django_db_setup: None) -> Iterator[None]:
    """The consumers' database threads (buzzer.dbpools pools, and asgiref's one thread for
    thread-sensitive calls made outside ``async_to_sync``) keep their connections; close them
    before the test database is dropped."""
    yield
    from asgiref.sync import SyncToAsync
    from django.db import connections

    from buzzer.dbpools import close_pool_connections

    close_pool_connections()
    SyncToAsync.single_thread_executor.submit(connections.close_all).result(timeout=10)


@pytest.fixture(scope="session")
def redis_url() -> str:
    return str(_redis["url"])


@pytest.fixture(scope="session")
def shared_data() -> Path:
    """../shared/data, or skip: the data sets are never copied into the repository."""
    if not SHARED_DATA.is_dir():
        pytest.skip(f"{SHARED_DATA} absent: real-data tests need ../shared/data beside the project")
    return SHARED_DATA
