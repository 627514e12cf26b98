"""One real-browser run of the live pages: headless Chromium (Debian's /usr/bin/chromium via
playwright) against uvicorn serving config.asgi, a private Redis and a scratch database.

The organiser logs in, creates a match on /moderator/, a player joins on /play/, the
moderator starts, words appear on the tablet, the player buzzes and answers, and both
scoreboards show the points. Then a second tablet cannot take the seat by name, and takes it
with a reclaim code the moderator issues from the dashboard's roster. Screenshots go to
/tmp/tossup-player.png and /tmp/tossup-dashboard.png.
"""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from tests.support.browser import chromium
from tests.support.live import live_server, manage

pytestmark = pytest.mark.browser


ORGANISER = ("org", "browser-test-password")


def _demo_with_organiser(env: dict[str, str]) -> None:
    manage(env, "import_questions", "--demo")
    manage(env, "create_organiser", ORGANISER[0], "--password-stdin", stdin=ORGANISER[1] + "\n")


@pytest.fixture
def server(tmp_path: Path, redis_url: str):
    """(base URL) of a uvicorn process over a migrated scratch DB with the demo packet."""
    with live_server(tmp_path, redis_url, _demo_with_organiser) as (url, _):
        yield url


def test_player_buzzes_and_scores_in_a_real_browser(server: str) -> None:
    from playwright.sync_api import expect

    with chromium() as browser:
        mod = browser.new_context(viewport={"width": 1280, "height": 1000}).new_page()
        mod.on("dialog", lambda dialog: dialog.accept())  # the reclaim confirmation below
        mod.goto(f"{server}/moderator/")
        expect(mod).to_have_url(f"{server}/accounts/login/?next=/moderator/")  # organisers only
        mod.fill("#id_username", ORGANISER[0])
        mod.fill("#id_password", ORGANISER[1])
        mod.click("#login-form button[type=submit]")
        expect(mod).to_have_url(f"{server}/moderator/")
        mod.fill("#id_name", "Browser match")
        mod.fill("#id_n_tossups", "1")
        mod.select_option("#id_preset", "naqt")
        mod.fill("#id_wpm", "150")
        mod.check("#id_auto_rule")
        mod.click("#create-form button[type=submit]")
        expect(mod.locator("#conn")).to_have_text("live")
        code = mod.locator("#join-code").inner_text().strip()
        assert len(code) == 6

        # A tablet-sized player page in its own context (its own localStorage).
        tablet = browser.new_context(viewport={"width": 820, "height": 1180}, has_touch=True)
        player = tablet.new_page()
        player.goto(f"{server}/play/?code={code}")
        expect(player.locator("#join-team option")).to_have_count(2)
        player.fill("#join-name", "Ada")
        player.select_option("#join-team", "Team B")
        player.click("#join-form button[type=submit]")
        expect(player.locator("#conn")).to_have_text("live")
        expect(player.locator("#buzz")).to_be_disabled()
        # The tablet keeps the new identity (handle and secret) for the next match it joins.
        identity = player.evaluate("JSON.parse(localStorage.getItem('tossup.identity'))")
        assert identity["handle"] == "Ada" and len(identity["secret"]) > 20

        mod.click("button[data-cmd=start]")
        expect(player.locator("#q-text .w").nth(4)).to_be_visible(timeout=15_000)
        assert player.locator("#reveal").is_hidden()  # no answer line before the reveal
        assert "Moby" not in player.locator("#q-text").inner_text()
        expect(player.locator("#buzz")).to_be_enabled()
        before = player.locator("#q-text .w").count()
        player.click("#buzz")
        expect(player.locator("#answer-form")).to_be_visible(timeout=5_000)
        expect(player.locator("#answer-input")).to_be_focused()
        after = player.locator("#q-text .w").count()
        player.screenshot(path="/tmp/tossup-player-answering.png")
        expect(mod.locator("#ruling")).to_be_visible()
        mod.screenshot(path="/tmp/tossup-dashboard-buzz.png", full_page=True)
        player.fill("#answer-input", "Moby Dick")
        player.press("#answer-input", "Enter")

        # Auto-ruled correct before the power mark: NAQT power, 15 points for Team B.
        team_b = player.locator("#scoreboard li.mine .score")
        expect(team_b).to_have_text("15", timeout=10_000)
        expect(player.locator("#reveal")).to_contain_text("Moby-Dick")
        expect(player.locator("#flags")).to_be_visible()
        expect(mod.locator("#scoreboard li", has_text="Team B").locator(".score")).to_have_text("15")
        expect(mod.locator("#log")).to_contain_text("correct 15")
        # the buzz carries the index of the last word the tablet showed when it was pressed
        buzz_at = int(mod.locator("#log li", has_text="BUZZ Ada").inner_text().rsplit("word ", 1)[1])
        assert before - 1 <= buzz_at <= after - 1

        # A reload rejoins from localStorage and the snapshot restores the scores.
        player.reload()
        expect(player.locator("#game")).to_be_visible()
        expect(player.locator("#scoreboard li.mine .score")).to_have_text("15")
        player.screenshot(path="/tmp/tossup-player.png", full_page=True)
        mod.screenshot(path="/tmp/tossup-dashboard.png", full_page=True)

        # Another tablet typing the same name does not get the seat …
        other = browser.new_context(viewport={"width": 820, "height": 1180}, has_touch=True).new_page()
        other.goto(f"{server}/play/?code={code}")
        expect(other.locator("#join-team option")).to_have_count(2)
        other.fill("#join-name", "Ada")
        other.click("#join-form button[type=submit]")
        expect(other.locator("#join-error")).to_contain_text("already seated")
        expect(other.locator("#join-reclaim")).to_be_visible()  # the reclaim field opens
        assert other.locator("#game").is_hidden()
        # … until the moderator issues a reclaim code from the roster and the player types it.
        row = mod.locator("#roster tr", has_text="Ada")
        row.locator("button[data-reclaim]").click()
        reclaim = row.locator(".reclaim-code")
        expect(reclaim).to_have_text(re.compile(r"^[A-Z2-9]{8}$"))
        other.fill("#join-reclaim", reclaim.inner_text().lower())
        other.click("#join-form button[type=submit]")
        expect(other.locator("#game")).to_be_visible()
        expect(other.locator("#conn")).to_have_text("live")
        expect(other.locator("#scoreboard li.mine .score")).to_have_text("15")  # the same seat
        # The old tablet's token is retired: on its next connection it is sent back to the join form.
        player.reload()
        expect(player.locator("#join-error")).to_contain_text("no longer valid", timeout=10_000)
