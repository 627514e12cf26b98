"""The bot leaderboard in a real browser: headless Chromium (Debian's /usr/bin/chromium via
playwright) against uvicorn over a scratch database where ``evaluate_bot`` stored two evaluations.
Asserts both bots are ranked by expected score and the plotly reliability diagram and accuracy-by-
fraction plot drew a trace per bot. Screenshot: /tmp/tossup-bots.png."""

from __future__ import annotations

from pathlib import Path

import pytest

from competition.importers import DEMO_PACKET
from tests.support.browser import chromium
from tests.support.live import live_server, manage

pytestmark = pytest.mark.browser


@pytest.fixture
def server(tmp_path: Path, redis_url: str):
    """Base URL of a uvicorn process over a migrated scratch DB with two stored bot evaluations."""

    def evaluate(env: dict[str, str]) -> None:
        oracle = "tests.bots.test_evaluation:OracleGuesser"
        for name, at in (("early-oracle", "3"), ("late-oracle", "60")):
            manage(env, "evaluate_bot", "--guesser", oracle, "-o", f"at={at}", "--tossups", str(DEMO_PACKET),
                   "--limit", "8", "--name", name)  # fmt: skip

    with live_server(tmp_path, redis_url, evaluate) as (url, _):
        yield url


def test_bot_leaderboard_plots_in_a_real_browser(server: str) -> None:
    from playwright.sync_api import expect

    with chromium() as browser:
        page = browser.new_context(viewport={"width": 1280, "height": 1000}).new_page()
        errors: list[str] = []
        page.on("pageerror", lambda exc: errors.append(str(exc)))
        page.goto(f"{server}/analysis/")
        page.click("#bots-link")
        expect(page.locator("#bot-leaderboard tbody tr")).to_have_count(2)
        names = page.locator("#bot-leaderboard tbody tr td:nth-child(2)").all_inner_texts()
        assert names == ["early-oracle", "late-oracle"]  # buzzing early beats the simulated humans
        for plot in ("reliability-plot", "fraction-plot"):
            expect(page.locator(f"#{plot}.js-plotly-plot")).to_be_visible(timeout=15_000)
            assert page.locator(f"#{plot} .main-svg .scatterlayer .trace").count() >= 2, plot
        page.screenshot(path="/tmp/tossup-bots.png", full_page=True)
        assert errors == []
