"""The dashboard's "Bots the server runs" card in headless Chromium against a real server: it lists
the match's bot seat and the guessers this server knows, "Run" asks for a bot (the launch is stored;
the supervisor that starts it is tests/faults/test_server_bots.py), "Stop" takes it back.
Screenshot: /tmp/tossup-server-bots.png."""

from __future__ import annotations

import gzip
import json
import subprocess
import sys
from pathlib import Path

import pytest

from tests.frontend.room import shot
from tests.support.browser import chromium
from tests.support.live import BASE_DIR, live_server, manage
from tools import launcher

pytestmark = pytest.mark.browser


def test_the_card_runs_and_stops_a_known_guesser(tmp_path: Path, redis_url: str) -> None:
    from playwright.sync_api import expect

    made: dict = {}

    def setup(env: dict[str, str]) -> None:
        made.update(json.loads(manage(env, "create_match", "--teams", "Red,Blue", "--bot", "Robo", "--json")))

    with live_server(tmp_path, redis_url, setup) as (url, _), chromium() as browser:
        page = browser.new_context(viewport={"width": 1280, "height": 1100}).new_page()
        page.goto(f"{url}/moderator/{made['code']}/?token={made['moderator_token']}")
        seat = page.locator("#server-bots li[data-seat]")
        expect(seat).to_have_count(1)
        expect(seat).to_contain_text("Robo")
        expect(seat).to_contain_text("no bot from the server")
        options = seat.locator("select option")
        assert "Wikipedia bot (light)" in options.all_inner_texts()
        seat.locator("select").select_option("wiki")
        seat.locator("button[data-launch]").click()
        expect(seat.locator(".bot-state")).to_have_text("wiki: starting")
        expect(seat.locator("button[data-launch]")).to_have_text("Restart with")
        page.locator("#server-bots").scroll_into_view_if_needed()
        page.screenshot(path="/tmp/tossup-server-bots.png")
        seat.locator("button[data-stop]").click()
        expect(seat.locator(".bot-state")).to_have_text("wiki: stopped")
        expect(seat.locator("button[data-stop]")).to_have_count(0)


def test_a_bot_seat_added_to_a_running_match_reaches_the_seats_and_the_card(
    tmp_path: Path, redis_url: str
) -> None:
    """The dashboard's "Add a bot seat" after the start: the seat arrives as a ``player_joined`` event
    (the Seats card reloads on it, no refresh), on the chosen team or on a new team of its own
    (``team_added``: the scoreboard shows it), and the card runs the guesser on it with the
    organiser's class and cost. Screenshot: /tmp/tossup-server-bots-add.png."""
    from playwright.sync_api import expect

    made: dict = {}

    def setup(env: dict[str, str]) -> None:
        made.update(json.loads(manage(env, "create_match", "--teams", "Red,Blue", "--json")))

    with live_server(tmp_path, redis_url, setup) as (url, _), chromium() as browser:
        page = browser.new_context(viewport={"width": 1280, "height": 1100}).new_page()
        page.goto(f"{url}/moderator/{made['code']}/?token={made['moderator_token']}")
        expect(page.locator("#server-bots")).to_contain_text("This match has no bot seats.")
        page.locator("button[data-cmd='start']").click()
        expect(page.locator("button[data-cmd='start']")).to_be_hidden()
        form = page.locator("#server-bots-add")
        expect(form).to_be_visible()
        form.locator("input[name='name']").fill("Robo")
        form.locator("select[name='team_id']").select_option(label="Blue (human)")
        form.locator("select[name='guesser']").select_option("wiki")
        expect(form.locator("select[name='weight_class']")).to_have_value("light")  # the guesser's
        form.locator("select[name='weight_class']").select_option("heavy")
        form.locator("input[name='cost']").fill("0.002")
        form.locator("button[type='submit']").click()
        seat = page.locator("#server-bots li[data-seat]")
        expect(seat).to_have_count(1)
        expect(seat).to_contain_text("Robo")
        expect(seat).to_contain_text("(heavy)")
        expect(seat.locator(".bot-state")).to_have_text("wiki: starting")
        blue = page.locator("#roster table[data-team]", has_text="Blue")
        expect(blue).to_contain_text("Robo")
        expect(page.locator("#log")).to_contain_text("Robo took a seat (Blue)")
        # A bot on a team of its own: the team reaches the scoreboard (team_added), then its seat.
        form.locator("input[name='name']").fill("Solo")
        form.locator("select[name='team_id']").select_option(label="a team of its own")
        form.locator("button[type='submit']").click()
        expect(seat).to_have_count(2)
        expect(page.locator("#scoreboard")).to_contain_text("Solo")
        expect(page.locator("#roster table[data-team]", has_text="Solo")).to_contain_text("bot")
        expect(page.locator("#log")).to_contain_text("Solo took a seat (Solo)")
        page.locator("#server-bots").scroll_into_view_if_needed()
        page.screenshot(path="/tmp/tossup-server-bots-add.png")


def test_a_bot_that_cannot_start_shows_why_on_the_dashboard(
    tmp_path: Path, redis_url: str, monkeypatch
) -> None:
    """The TF-IDF bot on a training file it cannot learn from (one year of tossups: none to hold
    out) crashes at each start; after three the supervisor gives it up and the card says why, at
    the moderator's 1366×768, with "Run" to try again. Screenshot: bot-failed-1366x768.png."""
    from playwright.sync_api import expect

    one_year = tmp_path / "one-year.jsonl.gz"
    with gzip.open(one_year, "wt") as out:
        for n in range(3):
            tossup = {"type": "tossup", "set": "2019-X", "year": 2019, "packet": "1", "number": n + 1}
            out.write(json.dumps({**tossup, "question": f"Clue {n}.", "answer": f"Answer {n}"}) + "\n")
    monkeypatch.setenv("TOSSUP_BOT_TFIDF_TRAIN", str(one_year))  # the server's and the supervisor's
    monkeypatch.setenv("TOSSUP_BOT_CACHE_DIR", str(tmp_path / "cache"))
    made: dict = {}

    def setup(env: dict[str, str]) -> None:
        made.update(json.loads(manage(env, "create_match", "--teams", "Red,Blue", "--bot", "Robo", "--json")))

    with live_server(tmp_path, redis_url, setup) as (url, env), chromium() as browser:
        cmd = [sys.executable, "manage.py", "bot_supervisor", "--url", url.replace("http", "ws", 1),
               "--log-dir", str(tmp_path), "--every", "0.5"]  # fmt: skip
        supervisor = subprocess.Popen(
            cmd, cwd=BASE_DIR, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.STDOUT
        )
        try:
            page = browser.new_context(viewport={"width": 1366, "height": 768}).new_page()
            page.goto(f"{url}/moderator/{made['code']}/?token={made['moderator_token']}")
            seat = page.locator("#server-bots li[data-seat]")
            seat.locator("select").select_option("tfidf")
            seat.locator("button[data-launch]").click()
            expect(seat.locator(".bot-state")).to_have_text("tfidf: failed", timeout=90_000)
            expect(seat).to_contain_text("failed 3 times in a row: CommandError: cannot train on")
            expect(seat).to_contain_text("needs tossups of at least two years")
            expect(seat.locator("button[data-launch]")).to_have_text("Run")  # not "Restart with"
            expect(seat.locator("button[data-stop]")).to_have_count(0)
            seat.scroll_into_view_if_needed()
            shot(page, "bot-failed-1366x768")
        finally:
            launcher.stop(supervisor)
