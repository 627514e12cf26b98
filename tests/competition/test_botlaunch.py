"""Bots the server runs, in process: the registry of known guessers (reference bots by what this
machine has, the organiser's LLM endpoints file and its mistakes), the dashboard's JSON API (rights,
CSRF, bad input) and ``bot_supervisor``'s rounds (start, restart with backoff, replace, stop when
stopped, when the seat is deleted or the match ends) with a stand-in for ``runbot``.
The real thing — a bot added from the dashboard connecting to a real server and buzzing — is
tests/faults/test_server_bots.py."""

from __future__ import annotations

import json
import os
import signal
import stat
import time
from pathlib import Path

import pytest
from django.contrib.auth.models import User
from django.test import Client

from competition import botlaunch, game
from competition.live import store
from competition.models import BotLaunch, Match, MatchEvent, Player
from tests.support.factories import make_match
from tools import launcher
from tools.management.commands.bot_supervisor import GIVE_UP_AFTER, BotSupervisor

pytestmark = pytest.mark.django_db


@pytest.fixture
def no_data(settings, tmp_path: Path) -> Path:
    """A machine without ../shared/data or LLM endpoints."""
    settings.SHARED_DATA_DIR = tmp_path / "shared"
    settings.BOT_TFIDF_TRAIN = ""
    settings.BOT_CACHE_DIR = tmp_path / "cache"
    settings.BOT_LLM_ENDPOINTS = ""
    return tmp_path


def write_endpoints(settings, tmp_path: Path, entries: object) -> None:
    path = tmp_path / "llm.json"
    path.write_text(json.dumps(entries))
    settings.BOT_LLM_ENDPOINTS = str(path)


def test_reference_bots_are_offered_by_what_this_machine_has(no_data: Path, settings) -> None:
    registry = botlaunch.known_guessers()
    assert [g.key for g in registry.guessers] == ["wiki"]  # the installed package, nothing else
    assert any("TF-IDF" in p for p in registry.problems)
    dump = no_data / "shared" / botlaunch.QBREADER
    dump.parent.mkdir(parents=True)
    dump.write_bytes(b"")
    registry = botlaunch.known_guessers()
    assert [g.key for g in registry.guessers] == ["tfidf", "wiki"]
    tfidf = registry.get("tfidf")
    assert tfidf is not None and tfidf.weight_class == "light" and tfidf.cost == 0
    assert tfidf.runbot_args[:4] == ("--bot", "tfidf", "--train", str(dump))
    assert "--model-cache" in tfidf.runbot_args  # a restart loads instead of training again
    # The ensemble bot is offered once train_guesser has left its checkpoint; until then the card
    # says how to train it.
    assert any("Ensemble bot" in p and "train_guesser" in p for p in registry.problems)
    paths = botlaunch.model_paths(dump, None, botlaunch.TRAIN_MAX_YEAR)
    assert paths.neural.parent == no_data / "cache" and paths.extra == ()  # no QANTA files here
    paths.neural.parent.mkdir(parents=True)
    paths.neural.write_bytes(b"")
    registry = botlaunch.known_guessers()
    assert [g.key for g in registry.guessers] == ["ensemble", "tfidf", "wiki"]
    combined = registry.get("ensemble")
    assert combined is not None and combined.weight_class == "light"
    args = combined.runbot_args
    assert args[:4] == ("--bot", "ensemble", "--train", str(dump))
    assert args[args.index("--neural") + 1] == str(paths.neural)
    assert args[args.index("--model-cache") + 1] == str(paths.ensemble)


def test_model_paths_add_the_shared_qanta_files_to_the_shared_dump_only(no_data: Path) -> None:
    dump = no_data / "shared" / botlaunch.QBREADER
    dump.parent.mkdir(parents=True)
    dump.write_bytes(b"")
    qanta = no_data / "shared" / "qanta"
    qanta.mkdir()
    (qanta / "qanta.dev.json.gz").write_bytes(b"")
    shared = botlaunch.model_paths(None, None, 2020)
    assert shared.train == dump and shared.extra == (qanta / "qanta.dev.json.gz",)
    assert shared.neural.name == "neural-qbreader_packets_2012_2022-qanta-2020.pt"
    own = no_data / "mine.jsonl"
    own.write_bytes(b"")
    assert botlaunch.model_paths(own, None, 2018).extra == ()
    assert botlaunch.model_paths(own, None, 2018).ensemble.name == "ensemble-mine-2018.joblib"
    with pytest.raises(FileNotFoundError, match="no training file"):
        botlaunch.model_paths(no_data / "missing.jsonl", None, 2020)


def test_llm_endpoints_declare_class_and_cost_and_keep_keys_in_the_environment(
    no_data: Path, settings, monkeypatch
) -> None:
    write_endpoints(
        settings,
        no_data,
        [
            {"name": "GPT", "url": "http://llm:8080/v1", "model": "m1", "key_env": "MY_KEY", "cost": 0.002,
             "threshold": 0.7, "price_in": 0.5},
            {"name": "Local", "url": "http://127.0.0.1:9/v1", "model": "m2", "weight_class": "light"},
        ],
    )  # fmt: skip
    monkeypatch.setenv("MY_KEY", "sk-secret")
    monkeypatch.setenv(botlaunch.API_KEY_ENV, "inherited-key")
    registry = botlaunch.known_guessers()
    gpt, local = registry.get("llm:GPT"), registry.get("llm:Local")
    assert gpt is not None and local is not None and not registry.problems[1:]
    assert (gpt.weight_class, gpt.cost, local.weight_class, local.cost) == ("heavy", 0.002, "light", 0.0)
    command = gpt.command("python", "ws://h:1", "CODE", "-tok")
    assert "--token=-tok" in command and "sk-secret" not in " ".join(command)
    assert command[command.index("threshold=0.7") - 1] == "-o"  # a ChatGuesser option
    assert gpt.environment({"A": "1"}) == {"A": "1", botlaunch.API_KEY_ENV: "sk-secret"}
    # An endpoint without a key never inherits another's.
    assert botlaunch.API_KEY_ENV not in local.environment({"A": "1", botlaunch.API_KEY_ENV: "x"})


def test_an_endpoint_is_enabled_for_writing_only_when_it_says_so(no_data: Path, settings) -> None:
    write_endpoints(
        settings,
        no_data,
        [
            {"name": "Few", "url": "http://llm/v1", "model": "m", "workshop": True, "workshop_prefixes": 3,
             "threshold": 0.7},
            {"name": "Default", "url": "http://llm/v1", "model": "m", "workshop": True},
            {"name": "Matches", "url": "http://llm/v1", "model": "m", "workshop_prefixes": 9},
        ],
    )  # fmt: skip
    registry = botlaunch.known_guessers()
    assert not [p for p in registry.problems if "LLM" in p]
    few, default, matches = (registry.get(f"llm:{n}") for n in ("Few", "Default", "Matches"))
    assert few is not None and default is not None and matches is not None
    assert (few.workshop_prefixes, default.workshop_prefixes, matches.workshop_prefixes) == (
        3,
        botlaunch.WORKSHOP_PREFIXES,
        0,  # a cap without "workshop": true enables nothing
    )
    assert dict(few.chat_options) == {"url": "http://llm/v1", "model": "m", "threshold": "0.7"}
    assert few.runbot_args == (
        "--guesser", "tossup_bot.llm:ChatGuesser", "-o", "url=http://llm/v1", "-o", "model=m", "-o", "threshold=0.7",
    )  # fmt: skip


@pytest.mark.parametrize(
    ("entries", "problem"),
    [
        ({"name": "x"}, "expected a JSON list"),
        ([{"name": "x", "url": "u"}], "name, url and model are required"),
        ([{"name": "x", "url": "u", "model": "m", "api_key": "sk-1"}], "put the API key in an environment"),
        ([{"name": "x", "url": "u", "model": "m", "key_env": "not a name"}], "key_env"),
        ([{"name": "x", "url": "u", "model": "m", "weight_class": "super"}], "weight_class"),
        ([{"name": "x", "url": "u", "model": "m", "cost": -1}], "cost must be a number"),
        ([{"name": "x", "url": "u", "model": "m", "colour": 1}], "unknown field"),
        ([{"name": "x", "url": "u", "model": "m", "workshop": "yes"}], "workshop must be true or false"),
        (
            [{"name": "x", "url": "u", "model": "m", "workshop_prefixes": 0}],
            "workshop_prefixes must be a whole",
        ),
        ([{"name": "x", "url": "u", "model": "m", "workshop_prefixes": 51}], "from 1 to 50"),
        (
            [{"name": "x", "url": "u", "model": "m", "workshop_prefixes": 2.5}],
            "workshop_prefixes must be a whole",
        ),
        ([{"name": "x", "url": "u", "model": "m"}, {"name": "x", "url": "v", "model": "n"}], "used twice"),
    ],
)
def test_a_bad_endpoints_file_is_reported_and_its_good_entries_kept(
    no_data: Path, settings, entries, problem
) -> None:
    write_endpoints(settings, no_data, entries)
    registry = botlaunch.known_guessers()
    assert any(problem in p for p in registry.problems), registry.problems
    assert "sk-1" not in " ".join(registry.problems)
    assert registry.get("wiki") is not None  # the rest of the registry still works


def test_an_unreadable_endpoints_file_is_a_problem_not_a_crash(no_data: Path, settings) -> None:
    settings.BOT_LLM_ENDPOINTS = str(no_data / "missing.json")
    assert any("missing.json" in p for p in botlaunch.known_guessers().problems)
    (no_data / "bad.json").write_text("{not json")
    settings.BOT_LLM_ENDPOINTS = str(no_data / "bad.json")
    assert any("bad.json" in p for p in botlaunch.known_guessers().problems)


# --- the dashboard's API ------------------------------------------------------------------------


@pytest.fixture
def match(no_data: Path) -> Match:
    return make_match()


def bot_seat(match: Match) -> Player:
    return match.players.get(kind=Player.Kind.BOT)


def test_the_api_needs_moderator_rights_and_csrf(match: Match) -> None:
    seat = bot_seat(match)
    url = f"/api/match/{match.join_code}/bots"
    anonymous = Client(enforce_csrf_checks=True)
    assert anonymous.get(url).status_code == 403
    assert (
        anonymous.post(f"{url}/{seat.id}/launch", {"guesser": "wiki"}, "application/json").status_code == 403
    )
    moderator = Client(enforce_csrf_checks=True)
    moderator.get(f"/moderator/{match.join_code}/?token={match.moderator_token}")
    no_csrf = moderator.post(f"{url}/{seat.id}/launch", {"guesser": "wiki"}, "application/json")
    assert no_csrf.status_code == 403 and no_csrf.json()["code"] == "csrf"
    assert not BotLaunch.objects.exists()
    csrf = moderator.cookies["csrftoken"].value
    done = moderator.post(
        f"{url}/{seat.id}/launch", {"guesser": "wiki"}, "application/json", headers={"X-CSRFToken": csrf}
    )
    assert done.status_code == 200
    assert done.json()["seats"] == [
        {"player_id": seat.id, "name": "bot", "weight_class": "light",
         "launch": {"guesser": "wiki", "weight_class": "light", "cost": 0.0, "wanted": True,
                    "state": "starting", "restarts": 0, "detail": ""}}
    ]  # fmt: skip


def test_bad_launches_are_refused_and_change_nothing(match: Match) -> None:
    client = Client()
    client.force_login(User.objects.create_user("org", password="x"))
    url = f"/api/match/{match.join_code}/bots"
    seat = bot_seat(match)
    human = match.players.get(name="alice")
    cases = [
        (f"{url}/{seat.id}/launch", b"not json", 400, "malformed"),
        (f"{url}/{seat.id}/launch", {"guesser": 3}, 400, "malformed"),
        (f"{url}/{seat.id}/launch", {"guesser": "llm:none"}, 400, "invalid"),
        (f"{url}/{human.id}/launch", {"guesser": "wiki"}, 404, "not_found"),
        (f"{url}/{seat.id}/stop", {}, 404, "not_found"),
    ]
    for path, body, status, code in cases:
        response = client.post(path, body, "application/json")
        assert (response.status_code, response.json()["code"]) == (status, code), path
    assert not BotLaunch.objects.exists()
    Match.objects.filter(pk=match.pk).update(status=Match.Status.ENDED)
    response = client.post(f"{url}/{seat.id}/launch", {"guesser": "wiki"}, "application/json")
    assert (response.status_code, response.json()["code"]) == (409, "closed")


def test_a_moderator_adds_a_bot_seat_to_a_running_match_and_the_dashboard_sees_it(
    match: Match, tmp_path: Path, fake_python: str
) -> None:
    """The dashboard's "Add a bot seat": the API seats the bot through the service (a
    ``player_joined`` event with its seq, so the moderator's socket and the roster see it), stores
    the launch with the organiser's class and cost, and the supervisor starts it."""
    store.apply_command(match_id=match.id, command=game.Start(), actor="moderator")
    blue = match.teams.get(name="Blue")
    client = Client(enforce_csrf_checks=True)
    client.get(f"/moderator/{match.join_code}/?token={match.moderator_token}")
    csrf = {"X-CSRFToken": client.cookies["csrftoken"].value}
    url = f"/api/match/{match.join_code}/bots"
    listing = client.get(url).json()
    assert {"team_id": blue.id, "name": "Blue", "kind": "human"} in listing["teams"]
    assert listing["weight_classes"] == ["light", "mid", "heavy"] and listing["status"] == "running"
    seq = Match.objects.get(pk=match.pk).seq
    body = {"name": "Robo", "team_id": blue.id, "guesser": "wiki", "weight_class": "heavy", "cost": 0.004}
    done = client.post(f"{url}/add", body, "application/json", headers=csrf)
    assert done.status_code == 201, done.content
    robo = match.players.get(name="Robo")
    assert (robo.kind, robo.team_id, robo.weight_class) == ("bot", blue.id, "heavy")
    assert {"player_id": robo.id, "name": "Robo", "weight_class": "heavy",
            "launch": {"guesser": "wiki", "weight_class": "heavy", "cost": 0.004, "wanted": True,
                       "state": "starting", "restarts": 0, "detail": ""}} in done.json()["seats"]  # fmt: skip
    # Its own event and seq (the words that fell due meanwhile may be read first).
    [joined] = MatchEvent.objects.filter(match=match, seq__gt=seq, event="player_joined")
    assert joined.payload["player_id"] == robo.id and joined.seq == Match.objects.get(pk=match.pk).seq
    roster = client.get(f"/api/match/{match.join_code}/players").json()["players"]
    assert any(p["player_id"] == robo.id and p["team_id"] == blue.id for p in roster)
    # Class and cost default to the guesser's declaration.
    client.post(f"{url}/add", {"name": "Wiki", "team_id": blue.id, "guesser": "wiki"}, "application/json",
                headers=csrf)  # fmt: skip
    assert (launch_of(match.players.get(name="Wiki")).weight_class, launch_of(robo).cost) == ("light", 0.004)
    # team_id null: a new team of its own, named after the bot.
    solo = client.post(
        f"{url}/add", {"name": "Solo", "team_id": None, "guesser": "wiki"}, "application/json", headers=csrf
    )
    assert solo.status_code == 201, solo.content
    team = {"team_id": match.players.get(name="Solo").team_id, "name": "Solo", "kind": "bot"}
    assert team in solo.json()["teams"]
    bots = BotSupervisor("ws://127.0.0.1:1", launcher.child_env(), tmp_path, python=fake_python)
    try:
        rounds(bots, lambda: launch_of(robo).state == "running")
    finally:
        bots.stop_all()


def test_bad_bot_seats_are_refused_and_store_nothing(match: Match) -> None:
    client = Client()
    client.force_login(User.objects.create_user("org", password="x"))
    url = f"/api/match/{match.join_code}/bots/add"
    red = match.teams.get(name="Red").id
    cases = [
        (b"not json", 400, "malformed"),
        ({"name": "Robo", "team_id": "red", "guesser": "wiki"}, 400, "malformed"),
        ({"name": "Robo", "team_id": red, "guesser": "wiki", "weight_class": 3}, 400, "malformed"),
        ({"name": "Robo", "team_id": red, "guesser": "llm:none"}, 400, "invalid"),
        ({"name": "Robo", "team_id": red, "guesser": "wiki", "weight_class": "huge"}, 400, "invalid"),
        ({"name": "Robo", "team_id": red, "guesser": "wiki", "cost": -1}, 400, "invalid"),
        ({"name": "Robo", "team_id": red, "guesser": "wiki", "cost": "free"}, 400, "invalid"),
        ({"name": "alice", "team_id": red, "guesser": "wiki"}, 400, "invalid"),
        ({"name": "Robo", "team_id": -1, "guesser": "wiki"}, 404, "not_found"),
    ]
    seq = Match.objects.get(pk=match.pk).seq
    for body, status, code in cases:
        response = client.post(url, body, "application/json")
        assert (response.status_code, response.json()["code"]) == (status, code), body
    assert Match.objects.get(pk=match.pk).seq == seq
    assert not BotLaunch.objects.exists() and not match.players.filter(name="Robo").exists()
    store.apply_command(match_id=match.id, command=game.End(), actor="moderator")
    response = client.post(url, {"name": "Robo", "team_id": red, "guesser": "wiki"}, "application/json")
    assert (response.status_code, response.json()["code"]) == (409, "closed")
    assert Client().post(url, {}, "application/json").status_code == 403


def test_the_dashboard_shows_the_card_and_no_key(match: Match, settings, no_data: Path, monkeypatch) -> None:
    write_endpoints(
        settings, no_data, [{"name": "GPT", "url": "http://llm/v1", "model": "m", "key_env": "K"}]
    )
    monkeypatch.setenv("K", "sk-never-shown")
    client = Client()
    page = client.get(f"/moderator/{match.join_code}/?token={match.moderator_token}").content.decode()
    assert "Bots the server runs" in page and "dashbots.js" in page
    listing = client.get(f"/api/match/{match.join_code}/bots").content.decode()
    assert "llm:GPT" in listing
    for text in (page, listing):
        assert "sk-never-shown" not in text and '"K"' not in text


# --- the supervisor's rounds ----------------------------------------------------------------------


@pytest.fixture
def fake_python(tmp_path: Path) -> str:
    """Stands in for ``python manage.py runbot …``: writes its arguments, says a line (to its log)
    and sleeps."""
    script = tmp_path / "fake-python"
    script.write_text(f'#!/bin/sh\necho "$@" > {tmp_path}/args-$$\necho "stand-in up"\nexec sleep 60\n')
    script.chmod(script.stat().st_mode | stat.S_IXUSR)
    return str(script)


def rounds(bots: BotSupervisor, until, timeout: float = 10.0) -> None:
    end = time.monotonic() + timeout
    while time.monotonic() < end:
        bots.step()
        if until():
            return
        time.sleep(0.05)
    raise AssertionError("not reached")


def launch_of(seat: Player) -> BotLaunch:
    return BotLaunch.objects.get(player=seat)


def test_the_supervisor_runs_restarts_replaces_and_stops_bots(
    match: Match, fake_python: str, tmp_path
) -> None:
    seat = bot_seat(match)
    bots = BotSupervisor("ws://127.0.0.1:1", launcher.child_env(), tmp_path, python=fake_python)
    try:
        botlaunch.launch(match=match, player_id=seat.id, guesser="wiki")
        rounds(bots, lambda: launch_of(seat).state == "running")
        # Each round leaves its heartbeat (compose's health check of bot-supervisor).
        assert time.time() - (tmp_path / "bot_supervisor.alive").stat().st_mtime < 5
        first = launch_of(seat).pid
        rounds(bots, lambda: any(tmp_path.glob("args-*")))  # the stand-in has written them
        args = next(tmp_path.glob("args-*")).read_text()
        assert f"--code {match.join_code} --token={seat.token}" in args and "--bot wiki" in args

        os.kill(first, signal.SIGKILL)  # dies: restarted after the backoff
        rounds(bots, lambda: launch_of(seat).state == "restarting")
        assert launch_of(seat).detail == "exited with -9: stand-in up"  # the log's last line
        rounds(bots, lambda: launch_of(seat).state == "running" and launch_of(seat).pid != first)
        assert launch_of(seat).restarts == 1

        second = launch_of(seat).pid
        botlaunch.launch(match=match, player_id=seat.id, guesser="wiki")  # again: a new process
        rounds(bots, lambda: launch_of(seat).pid not in (None, second) and launch_of(seat).state == "running")
        assert not launcher_alive(second)

        third = launch_of(seat).pid
        botlaunch.stop(match=match, player_id=seat.id)
        rounds(bots, lambda: launch_of(seat).state == "stopped")
        assert not launcher_alive(third) and launch_of(seat).pid is None

        botlaunch.launch(match=match, player_id=seat.id, guesser="wiki")
        rounds(bots, lambda: launch_of(seat).state == "running")
        fourth = launch_of(seat).pid
        Match.objects.filter(pk=match.pk).update(status=Match.Status.ENDED)
        rounds(bots, lambda: launch_of(seat).state == "stopped")
        assert not launcher_alive(fourth)
    finally:
        bots.stop_all()


def test_a_deleted_seat_stops_its_bot_and_an_unknown_guesser_fails(
    match: Match, fake_python: str, tmp_path, settings
) -> None:
    seat = bot_seat(match)
    bots = BotSupervisor("ws://127.0.0.1:1", launcher.child_env(), tmp_path, python=fake_python)
    try:
        botlaunch.launch(match=match, player_id=seat.id, guesser="wiki")
        rounds(bots, lambda: launch_of(seat).state == "running")
        pid = launch_of(seat).pid
        seat.delete()
        rounds(bots, lambda: not bots.children)
        assert not launcher_alive(pid)

        other = match.players.create(
            team=match.teams.create(name="Robo 2", kind="bot"), name="Robo 2", kind=Player.Kind.BOT
        )
        BotLaunch.objects.create(player=other, guesser="llm:gone")  # the endpoint was removed since
        rounds(bots, lambda: launch_of(other).state == "failed")
        assert "no longer knows 'llm:gone'" in launch_of(other).detail and not bots.children
    finally:
        bots.stop_all()


def stand_in(tmp_path: Path, name: str, body: str) -> str:
    """A stand-in for ``python manage.py runbot …`` that runs the shell ``body``; counts its starts."""
    script = tmp_path / name
    script.write_text(f"#!/bin/sh\necho start >> {tmp_path}/{name}.starts\n{body}\n")
    script.chmod(script.stat().st_mode | stat.S_IXUSR)
    return str(script)


def starts(tmp_path: Path, name: str) -> int:
    path = tmp_path / f"{name}.starts"
    return len(path.read_text().splitlines()) if path.exists() else 0


def test_a_bot_that_ends_with_its_match_is_not_started_again(match: Match, tmp_path: Path) -> None:
    """runbot exits 0 after "match over" — before the supervisor's next round may have seen the match
    end. It is done: stopped, with its last line, and never restarted (it reloaded a 43 MB model
    every few seconds before)."""
    seat = bot_seat(match)
    python = stand_in(tmp_path, "over", "echo \"match over: {'buzzes': 3}\"; exit 0")
    bots = BotSupervisor("ws://127.0.0.1:1", launcher.child_env(), tmp_path, python=python)
    try:
        botlaunch.launch(match=match, player_id=seat.id, guesser="wiki")
        rounds(bots, lambda: launch_of(seat).state == "stopped")
        assert launch_of(seat).detail == "match over: {'buzzes': 3}" and launch_of(seat).restarts == 0
        for _ in range(40):  # 4 s: past the supervisor's first backoffs (1, 2 s)
            bots.step()
            time.sleep(0.1)
        assert starts(tmp_path, "over") == 1 and not bots.children
        assert launch_of(seat).state == "stopped"
        botlaunch.launch(match=match, player_id=seat.id, guesser="wiki")  # Run again: a new generation
        rounds(bots, lambda: starts(tmp_path, "over") == 2)
    finally:
        bots.stop_all()


def test_a_bot_that_cannot_start_is_given_up_with_its_reason(match: Match, tmp_path: Path) -> None:
    """Three crashes in a row, each soon after its start: failed, with the last line of its log as
    the reason the dashboard shows; no fourth start until the moderator runs it again."""
    seat = bot_seat(match)
    python = stand_in(
        tmp_path, "broken", 'echo "CommandError: cannot train on x.jsonl.gz: no tossups"; exit 1'
    )
    bots = BotSupervisor("ws://127.0.0.1:1", launcher.child_env(), tmp_path, python=python)
    try:
        botlaunch.launch(match=match, player_id=seat.id, guesser="wiki")
        rounds(bots, lambda: launch_of(seat).state == "failed", timeout=30)
        assert launch_of(seat).detail == (
            f"failed {GIVE_UP_AFTER} times in a row: CommandError: cannot train on x.jsonl.gz: no tossups"
        )
        assert starts(tmp_path, "broken") == GIVE_UP_AFTER and launch_of(seat).restarts == GIVE_UP_AFTER - 1
        for _ in range(40):
            bots.step()
            time.sleep(0.1)
        assert starts(tmp_path, "broken") == GIVE_UP_AFTER and launch_of(seat).state == "failed"
        botlaunch.launch(match=match, player_id=seat.id, guesser="wiki")
        rounds(bots, lambda: starts(tmp_path, "broken") == GIVE_UP_AFTER + 1)
    finally:
        bots.stop_all()


def launcher_alive(pid: int | None) -> bool:
    """Is ``pid`` a live process (not a zombie)?"""
    if pid is None:
        return False
    try:
        state = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0]
    except OSError:
        return False
    return state != "Z"


# --- the new-match form offers them per bot row ----------------------------------------------------


@pytest.fixture
def packet_id(no_data: Path) -> str:
    from tests.support.factories import make_packet

    tossups, _ = make_packet(n_tossups=2)
    return str(tossups[0].packet_id)


def new_match_post(packet_id: str, **bots: list[str]) -> dict:
    return {"name": "With bots", "packet": packet_id, "preset": "naqt", "wpm": "250", "team": ["Red"], **bots}


def test_the_new_match_form_runs_a_chosen_guesser_with_its_declared_class(packet_id: str) -> None:
    client = Client()
    client.force_login(User.objects.create_user("org", password="x"))
    form = client.get("/moderator/").content.decode()
    assert '<option value="wiki">server runs: Wikipedia bot (light)</option>' in form
    post = new_match_post(
        packet_id, bot_name=["Wiki", "Mine"], bot_class=["heavy", "mid"], bot_guesser=["wiki", ""]
    )
    assert client.post("/moderator/", post).status_code == 302
    match = Match.objects.get(name="With bots")
    wiki, mine = match.players.get(name="Wiki"), match.players.get(name="Mine")
    assert (wiki.weight_class, mine.weight_class) == ("light", "mid")  # the guesser's class wins
    assert launch_of(wiki).guesser == "wiki" and not BotLaunch.objects.filter(player=mine).exists()
    # Rows posted without the guesser list (an older page) are bots run elsewhere.
    assert (
        client.post(
            "/moderator/", new_match_post(packet_id, bot_name=["Other"], bot_class=["mid"])
        ).status_code
        == 302
    )


def test_the_new_match_form_refuses_an_unknown_guesser_and_creates_nothing(packet_id: str) -> None:
    client = Client()
    client.force_login(User.objects.create_user("org", password="x"))
    post = new_match_post(packet_id, bot_name=["X"], bot_class=["mid"], bot_guesser=["llm:gone"])
    response = client.post("/moderator/", post)
    assert response.status_code == 400 and "knows no guesser" in response.content.decode()
    assert not Match.objects.exists() and not BotLaunch.objects.exists()
