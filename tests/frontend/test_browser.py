"""One real-browser run of the live pages: headless Chromium (Debian's /usr/bin/chromium via
playwright) against uvicorn serving config.asgi, a private Redis and a scratch database.

The moderator creates a match on /moderator/, a player joins on /play/, the moderator
starts, words appear on the tablet, the player buzzes and answers, and both scoreboards
show the points. Screenshots go to /tmp/tossup-player.png and /tmp/tossup-dashboard.png.
"""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

from config import launcher
from tests.support.browser import chromium
from tests.support.databases import scratch_database

BASE_DIR = Path(__file__).resolve().parents[2]

pytestmark = pytest.mark.browser


def manage(env: dict[str, str], *args: str) -> None:
    subprocess.run(
        [sys.executable, "manage.py", *args],
        cwd=BASE_DIR,
        env=env,
        check=True,
        capture_output=True,
        timeout=300,
    )


@pytest.fixture
def server(tmp_path: Path, redis_url: str):
    """(base URL) of a uvicorn process over a migrated scratch DB with the demo packet."""
    with scratch_database(tmp_path) as db_url:
        env = launcher.child_env(DATABASE_URL=db_url, REDIS_URL=redis_url)
        manage(env, "migrate", "--noinput")
        manage(env, "import_questions", "--demo")
        port = launcher.free_port()
        proc = launcher.start_server(port, env, log=tmp_path / "server.log")
        try:
            yield f"http://127.0.0.1:{port}"
        finally:
            launcher.stop(proc)


def test_player_buzzes_and_scores_in_a_real_browser(server: str) -> None:
    from playwright.sync_api import expect

    with chromium() as browser:
        mod = browser.new_context(viewport={"width": 1280, "height": 1000}).new_page()
        mod.goto(f"{server}/moderator/")
        mod.fill("#id_name", "Browser match")
        mod.fill("#id_n_tossups", "1")
        mod.select_option("#id_preset", "naqt")
        mod.fill("#id_wpm", "150")
        mod.check("#id_auto_rule")
        mod.click("button[type=submit]")
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
