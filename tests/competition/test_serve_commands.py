"""`manage.py create_match` and `manage.py serve`'s pieces, in process: the match a script
gets, the environment serve gives its children, and the supervisor's restarts.
(The supervised server itself runs for real in tests/faults.)"""

from __future__ import annotations

import json
import socket
import sys
import time
from io import StringIO
from pathlib import Path

import pytest
from django.core.management import call_command
from django.core.management.base import CommandError

from competition.models import Match, QuestionSet
from tools import launcher
from tools.management.commands import serve


def create(*args: str) -> str:
    out = StringIO()
    call_command("create_match", *args, stdout=out)
    return out.getvalue()


@pytest.mark.django_db
def test_create_match_prints_what_a_script_needs_as_json():
    info = json.loads(
        create("--packet", "demo", "--teams", "Red, Blue", "--bot", "tfidf", "--bot", "replay",
               "--tossups", "3", "--wpm", "250", "--base-url", "http://10.0.0.5:8000/", "--json")
    )  # fmt: skip
    match = Match.objects.get(join_code=info["code"])
    assert QuestionSet.objects.filter(source="demo").count() == 1  # imported on first use
    assert len(match.tossup_ids) == info["tossups"] == 3
    assert match.config["wpm"] == 250 and match.status == "lobby"
    assert info["moderator_token"] == match.moderator_token
    assert (
        info["dashboard_url"]
        == f"http://10.0.0.5:8000/moderator/{match.join_code}/?token={match.moderator_token}"
    )
    assert [t["name"] for t in info["teams"]] == ["Red", "Blue", "tfidf", "replay"]
    bots = {b["name"]: b["token"] for b in info["bots"]}
    assert bots == dict(match.players.filter(kind="bot").values_list("name", "token"))
    # A second match reuses the imported packet.
    again = json.loads(create("--teams", "A,B", "--json"))
    assert again["code"] != info["code"] and QuestionSet.objects.filter(source="demo").count() == 1


@pytest.mark.django_db
def test_create_match_text_output_names_code_dashboard_and_tokens():
    text = create("--teams", "Red,Blue", "--bot", "tfidf", "--auto-rule")
    match = Match.objects.get()
    assert match.join_code in text and match.moderator_token in text
    assert match.players.get(kind="bot").token in text
    assert match.config["auto_rule"] is True


@pytest.mark.django_db
@pytest.mark.parametrize(
    ("args", "message"),
    [
        (["--packet", "No Such Set", "--teams", "A,B"], "no question set named"),
        (["--teams", "A,B", "--config", '{"wpm": -3}'], "bad match config"),
        (["--teams", "A,B", "--config", '{"colour": 1}'], "bad match config"),
        (["--teams", "A,B", "--config", "[1]"], "must be a JSON object"),
        (["--teams", "A,A"], "unique"),
        (["--teams", "A,B", "--preset", "nope"], "preset"),
        (["--teams", "A,B", "--tossups", "0"], "at least 1"),
    ],
)
def test_create_match_refuses_bad_input_and_creates_nothing(args, message):
    with pytest.raises(CommandError, match=message):
        create(*args)
    assert not Match.objects.exists()


@pytest.mark.django_db
def test_serve_on_the_lan_binds_everywhere_and_allows_only_this_machine(monkeypatch, redis_url, tmp_path):
    monkeypatch.setenv("REDIS_URL", redis_url)
    monkeypatch.delenv("ALLOWED_HOSTS", raising=False)
    pointed: list[str] = []
    monkeypatch.setattr(launcher, "point_django_at_redis", pointed.append)
    served = serve.build(port=launcher.free_port(), workers=3, lan=True, log_dir=tmp_path)
    names = [c.name for c in served.supervisor.children]
    assert names == ["server", "worker", "bots"]  # REDIS_URL answers: no Redis of its own
    assert pointed == [redis_url] and served.env["REDIS_URL"] == redis_url
    hosts = served.env["ALLOWED_HOSTS"].split(",")
    assert {"localhost", "127.0.0.1", launcher.lan_address()} <= set(hosts) and "*" not in hosts
    assert served.env.get("DEBUG") in (None, "", "0", "False", "false")
    server = served.supervisor.children[0].cmd
    assert server[server.index("--host") + 1] == "0.0.0.0"
    assert server[server.index("--workers") + 1] == "3"
    assert served.public_url.startswith(f"http://{launcher.lan_address()}:")


@pytest.mark.django_db
def test_serve_refuses_a_taken_port(tmp_path):
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        s.listen()
        with pytest.raises(CommandError, match="already in use"):
            serve.build(port=s.getsockname()[1], log_dir=tmp_path)


def _child(name: str, code: str, tmp_path: Path) -> launcher.Child:
    return launcher.Child(name, [sys.executable, "-c", code], launcher.child_env(), log_path=tmp_path / name)


def test_the_supervisor_restarts_a_dead_child_with_backoff_and_holds_on_request(tmp_path):
    sup = launcher.Supervisor(control_dir=tmp_path)
    crasher = sup.add(_child("crasher", "import sys; sys.exit(3)", tmp_path))
    steady = sup.add(_child("steady", "import time; time.sleep(60)", tmp_path))
    (tmp_path / "hold-crasher").touch()
    try:
        sup.start_all()
        assert crasher.proc is None and steady.proc is not None  # held: not started
        (tmp_path / "hold-crasher").unlink()
        end = time.monotonic() + 10
        while crasher.restarts < 3 and time.monotonic() < end:
            sup.poll()
            time.sleep(0.05)
        # Started, died, restarted after 1 s, died, restarted after 2 s: backoff doubles.
        assert crasher.restarts == 3 and crasher.failures >= 2
        assert 3.0 <= time.monotonic() - (end - 10) < 9.0
        assert json.loads((tmp_path / "children.json").read_text())["steady"] == steady.proc.pid
        assert steady.restarts == 0 and steady.proc.poll() is None
    finally:
        sup.stop_all()
    assert steady.proc.poll() is not None  # stopped with the supervisor
