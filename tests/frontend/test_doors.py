"""The doors around a match: the install's SECRET_KEY, DEBUG and ALLOWED_HOSTS defaults, the
websocket Origin check and the organiser command."""

from __future__ import annotations

import io
import json
import os
import stat
import subprocess
import sys
import threading
from pathlib import Path

import pytest
from channels.db import database_sync_to_async
from channels.testing import WebsocketCommunicator
from django.contrib.auth import authenticate, get_user_model
from django.core.management import CommandError, call_command

from config.asgi import application
from config.settings import load_or_create_secret_key
from tests.support.factories import make_match

BASE_DIR = Path(__file__).resolve().parents[2]


def test_the_secret_key_is_generated_once_private_and_stable(tmp_path: Path) -> None:
    path = tmp_path / "var" / "secret_key"
    keys: list[str] = []
    start = threading.Barrier(8)

    def first_start() -> None:  # several server processes starting at once on a fresh install
        start.wait()
        keys.append(load_or_create_secret_key(path))

    threads = [threading.Thread(target=first_start) for _ in range(8)]
    for t in threads:
        t.start()
    for t in threads:
        t.join(timeout=10)
    assert len(keys) == 8 and len(set(keys)) == 1 and len(keys[0]) >= 50
    assert stat.S_IMODE(path.stat().st_mode) == 0o600
    assert load_or_create_secret_key(path) == keys[0] == path.read_text().strip()
    assert sorted(p.name for p in path.parent.iterdir()) == ["secret_key"]  # no temporary files left
    other = load_or_create_secret_key(tmp_path / "elsewhere" / "secret_key")
    assert other != keys[0]  # random per install, not a constant


def settings_in_a_fresh_process(**env: str) -> dict:
    """DEBUG, ALLOWED_HOSTS and SECRET_KEY as a server process started with ``env`` sees them."""
    base = {k: v for k, v in os.environ.items() if k not in {"DEBUG", "ALLOWED_HOSTS", "SECRET_KEY"}}
    code = (
        "import json, django; from django.conf import settings; django.setup(); "
        "print(json.dumps([settings.DEBUG, settings.ALLOWED_HOSTS, settings.SECRET_KEY]))"
    )
    out = subprocess.run(
        [sys.executable, "-c", code],
        cwd=BASE_DIR,
        env={**base, "DJANGO_SETTINGS_MODULE": "config.settings", **env},
        capture_output=True,
        text=True,
        timeout=120,
        check=True,
    )
    debug, hosts, key = json.loads(out.stdout.strip().splitlines()[-1])
    return {"DEBUG": debug, "ALLOWED_HOSTS": hosts, "SECRET_KEY": key}


def test_debug_is_off_and_hosts_are_local_unless_the_environment_says_otherwise() -> None:
    default = settings_in_a_fresh_process()
    assert default["DEBUG"] is False
    assert default["ALLOWED_HOSTS"] == ["localhost", "127.0.0.1", "[::1]"]
    installed = (BASE_DIR / "var" / "secret_key").read_text().strip()
    assert default["SECRET_KEY"] == installed and "insecure" not in installed
    assert settings_in_a_fresh_process()["SECRET_KEY"] == installed  # reused, not regenerated
    asked = settings_in_a_fresh_process(
        DEBUG="1", ALLOWED_HOSTS="192.168.1.20,quiz.local", SECRET_KEY="k" * 50
    )
    assert asked == {"DEBUG": True, "ALLOWED_HOSTS": ["192.168.1.20", "quiz.local"], "SECRET_KEY": "k" * 50}


async def handshake(path: str, origin: bytes | None) -> bool:
    headers = [(b"host", b"127.0.0.1:8000")] + ([(b"origin", origin)] if origin is not None else [])
    comm = WebsocketCommunicator(application, path, headers=headers)
    connected, _ = await comm.connect(timeout=5)
    if connected:
        frame = json.loads(await comm.receive_from(timeout=5))
        assert frame["type"] == "snapshot"  # a real session, not just an accepted socket
    await comm.disconnect()
    return connected


@pytest.mark.django_db(transaction=True)
@pytest.mark.parametrize(
    ("origin", "accepted"),
    [
        (None, True),  # bots and scripts (python websockets) send no Origin
        (b"http://127.0.0.1:8000", True),
        (b"http://localhost:8000", True),
        (b"http://[::1]:8000", True),
        (b"https://evil.example", False),  # a page on another site
        (b"http://127.0.0.1.evil.example", False),
        (b"null", False),  # sandboxed frames and file:// pages
    ],
)
async def test_websocket_origin_check(origin: bytes | None, accepted: bool) -> None:
    match = await database_sync_to_async(make_match)()
    assert await handshake(f"/ws/match/{match.join_code}/watch/", origin) is accepted


@pytest.mark.django_db(transaction=True)
async def test_websocket_origin_follows_allowed_hosts(settings) -> None:
    match = await database_sync_to_async(make_match)()
    path = f"/ws/match/{match.join_code}/watch/"
    settings.ALLOWED_HOSTS = ["192.168.1.20"]  # what `serve --lan` sets
    assert await handshake(path, b"http://192.168.1.20:8000") is True
    assert await handshake(path, b"http://127.0.0.1:8000") is False


@pytest.mark.django_db
def test_create_organiser_prints_a_generated_password_or_reads_stdin(monkeypatch) -> None:
    out = io.StringIO()
    call_command("create_organiser", "ann", stdout=out)
    printed = out.getvalue().strip()
    assert printed.startswith("organiser ann created; password: ")
    password = printed.rsplit(" ", 1)[1]
    assert len(password) >= 16 and authenticate(username="ann", password=password) is not None

    monkeypatch.setattr(sys, "stdin", io.StringIO("chosen-password-42\n"))
    out = io.StringIO()
    call_command("create_organiser", "bea", "--password-stdin", stdout=out)
    assert "chosen-password-42" not in out.getvalue()
    assert authenticate(username="bea", password="chosen-password-42") is not None

    with pytest.raises(CommandError, match="already exists"):
        call_command("create_organiser", "ann")
    monkeypatch.setattr(sys, "stdin", io.StringIO(""))
    with pytest.raises(CommandError, match="no password"):
        call_command("create_organiser", "cy", "--password-stdin")
    assert sorted(get_user_model().objects.values_list("username", flat=True)) == ["ann", "bea"]
