"""The dashboard's "Bots the server runs" card in headless Chromium against a real server: it lists
the match's bot seat and the guessers this server knows, "Run" asks for a bot (the launch is stored;
the supervisor that starts it is tests/faults/test_server_bots.py), "Stop" takes it back.
Screenshot: /tmp/tossup-server-bots.png."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from tests.support.browser import chromium
from tests.support.live import live_server, manage

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
