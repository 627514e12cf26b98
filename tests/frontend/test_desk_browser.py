"""The control desk in a real browser (issue 33 items 5 and 6): an organiser creates a tournament
from the web form and lands on its control page at 1366×768 with its rooms listed; a tablet pairs
to Room 1 by typing its code and opens the room's game; its moderator calls the director (the
control page shows "needs help"), plays the game to its end, acknowledges the warning and submits;
the director accepts (the result becomes official, the standings count it) and clears the help
flag, while the tablet has moved on to the room's next game. Screenshots: ``tests.support.browser.shots_dir``."""

from __future__ import annotations

import re
from collections.abc import Iterator

import pytest

from tests.frontend.room import IPAD, LAPTOP, ORGANISER, moderate, room_server
from tests.support.browser import chromium, shots_dir

pytestmark = pytest.mark.browser


@pytest.fixture(scope="module")
def server(tmp_path_factory: pytest.TempPathFactory, redis_url: str) -> Iterator[str]:
    with room_server(tmp_path_factory.mktemp("desk"), redis_url) as room:
        yield room.url


def test_the_director_sees_rooms_a_help_call_and_accepts_a_submitted_result(server: str) -> None:
    from playwright.sync_api import expect

    with chromium() as browser:
        desk = browser.new_context(viewport=LAPTOP).new_page()
        desk.goto(f"{server}/accounts/login/?next=/tournament/new/")
        desk.fill("#id_username", ORGANISER[0])
        desk.fill("#id_password", ORGANISER[1])
        desk.click("#login-form button[type=submit]")
        expect(desk).to_have_url(f"{server}/tournament/new/")
        desk.fill("#id_name", "Saturday Open")
        desk.fill("#id_tossups_per_game", "1")
        desk.fill("#id_teams", "Owls: Ann, Abe\nFoxes: Bea, Bo\nHares: Cy\nElks: Di, tfidf (bot light)")
        desk.click("#tournament-form button[type=submit]")
        expect(desk).to_have_url(re.compile(r"/tournament/\d+/control/$"))
        control = desk.url
        rooms = desk.locator("#rooms tbody tr")
        expect(rooms).to_have_count(2)
        expect(desk.locator('#rooms tr[data-room="Room 1"]')).to_have_attribute("data-state", "waiting")
        code = desk.locator('#rooms tr[data-room="Room 1"] .pair-code').inner_text()

        # A tablet pairs to Room 1 by its short code and opens the room's game.
        tablet = browser.new_context(viewport=IPAD, has_touch=True).new_page()
        tablet.goto(f"{server}/room/")
        tablet.fill("#room-code", code.lower())
        tablet.screenshot(path=str(shots_dir() / "room-pairing-tablet.png"))
        tablet.click("#pair-form button[type=submit]")
        expect(tablet).to_have_url(re.compile(r"/moderator/[A-Z0-9]+/$"))
        first_url = tablet.url
        expect(tablet.locator("#desk-title")).to_have_text("Saturday Open · Room 1")
        tablet.click("#help-btn")
        expect(tablet.locator("#help-btn")).to_have_attribute("aria-pressed", "true")
        desk.goto(control)
        expect(desk.locator('#rooms tr[data-room="Room 1"]')).to_have_attribute("data-state", "needs_help")
        expect(desk.locator('#rooms tr[data-room="Room 2"]')).to_have_attribute("data-state", "waiting")

        # The game is played to its end (nothing ruled), the warning acknowledged and the result submitted.
        page = tablet.evaluate("JSON.parse(document.getElementById('page-data').textContent)")
        match = {"code": page["code"], "moderator_token": page["token"]}
        moderate(tablet, match, name="start")
        moderate(tablet, match, name="end")
        expect(tablet.locator("#result-box")).to_be_visible(timeout=10_000)
        warning = tablet.locator("#warning-list input[value='tossup-1-no-ruling']")
        tablet.click("#submit-result")  # not yet acknowledged: refused, with the reason
        expect(tablet.locator("#toast")).to_contain_text("acknowledge each warning")
        expect(tablet.locator("#review-state")).to_have_text("not submitted")
        warning.check()
        tablet.click("#submit-result")
        # submitted: the tablet goes on to the room's next game by itself
        expect(tablet).not_to_have_url(first_url, timeout=10_000)
        expect(tablet.locator("#desk-title")).to_have_text("Saturday Open · Room 1")

        desk.goto(control)
        row = desk.locator("#results tbody tr").first
        expect(row).to_have_attribute("data-review", "submitted")
        expect(row).to_contain_text("Tossup 1 was read but has no ruling.")
        desk.locator('#rooms tr[data-room="Room 1"] summary').click()  # its QR code, to scan
        expect(desk.locator('#rooms tr[data-room="Room 1"] .qr svg')).to_be_visible()
        desk.screenshot(path=str(shots_dir() / "control-desk.png"))
        row.locator("button.accept").click()
        expect(desk.locator("#results tbody tr").first).to_have_attribute("data-review", "official")
        desk.locator('#rooms tr[data-room="Room 1"] button.clear-help').click()
        expect(desk.locator('#rooms tr[data-room="Room 1"]')).to_have_attribute("data-state", "waiting")
        history = desk.locator("#desk-history li")
        expect(history).to_have_count(4)  # help raised, submitted, accepted, help cleared
        expect(history.first).to_contain_text("org: cleared the help call")
        standings = desk.request.get(
            control.replace("/tournament/", "/api/tournament/").replace("/control/", "/standings")
        )
        assert (
            sum(t["games"] for t in standings.json()["teams"]) == 2 and standings.json()["unofficial"] == []
        )
