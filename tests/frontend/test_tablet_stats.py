"""The player's own statistics on the tablet (frontend/static/frontend/mystats.js), in real
Chromium against a real server: after a ruled tossup the tablet shows its powers, tens, negs,
tossup points and mean buzz position, and a reload (the snapshot) shows the same figures."""

from __future__ import annotations

import re
from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.frontend.room import PHONE, Room, join, moderate, room_server
from tests.support.browser import chromium

pytestmark = pytest.mark.browser


@pytest.fixture(scope="module")
def room(tmp_path_factory: pytest.TempPathFactory, redis_url: str) -> Iterator[Room]:
    with room_server(Path(tmp_path_factory.mktemp("room")), redis_url) as r:
        yield r


def test_tablet_shows_the_players_own_stats_after_each_tossup(room: Room) -> None:
    from playwright.sync_api import expect

    match = room.create_match(tossups=2, wpm=150, answer_window=12, auto_rule=True)
    errors: list[str] = []
    with chromium() as browser:
        phone = browser.new_context(viewport=PHONE, has_touch=True, is_mobile=True).new_page()
        phone.on("pageerror", lambda exc: errors.append(str(exc)))
        desk = browser.new_page()
        join(phone, room.url, match["code"], "Ada", "Team A")
        expect(phone.locator("#my-powers")).to_have_text("0")  # from the snapshot: nothing yet
        desk.goto(room.url)
        moderate(desk, match, name="start")
        expect(phone.locator("#q-text .w").nth(3)).to_be_visible(timeout=15_000)
        phone.locator("#buzz").tap()
        expect(phone.locator("#answer-input")).to_be_focused(timeout=5_000)
        phone.fill("#answer-input", "Moby Dick")
        phone.press("#answer-input", "Enter")
        expect(phone.locator("#my-stats")).to_be_visible(timeout=10_000)
        expect(phone.locator("#my-points")).to_have_text(re.compile(r"^(10|15|20)$"), timeout=10_000)
        figures = {
            k: phone.locator(f"#my-{k}").inner_text()
            for k in ("powers", "tens", "negs", "points", "position")
        }
        assert int(figures["powers"]) + int(figures["tens"]) == 1 and figures["negs"] == "0"
        assert re.fullmatch(r"\d+\.\d", figures["position"]), figures
        phone.reload()
        expect(phone.locator("#my-points")).to_have_text(figures["points"], timeout=10_000)
        assert {k: phone.locator(f"#my-{k}").inner_text() for k in figures} == figures
    assert not errors, errors
