"""WCAG 2.1 level A and AA on every page, checked by axe-core (the copy the pinned
``axe-playwright-python`` ships: nothing is fetched) in real Chromium against a real server:
the home page, the organiser's match page, the analysis page and the moderator dashboard on a
laptop (1366×768), the projector view (1920×1080), and the player page on a phone (390×844)
while joining, answering against the timer and after the tossup. Screenshots of each state
go to tests/artifacts/screenshots/a11y-*.png.
"""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.frontend.room import (
    LAPTOP,
    ORGANISER,
    PHONE,
    PROJECTOR,
    Room,
    axe_violations,
    describe_violations,
    join,
    moderate,
    room_server,
    shot,
)
from tests.support.browser import chromium

pytestmark = pytest.mark.browser


@pytest.fixture(scope="module")
def room(tmp_path_factory: pytest.TempPathFactory, redis_url: str) -> Iterator[Room]:
    with room_server(Path(tmp_path_factory.mktemp("a11y")), redis_url) as r:
        yield r


def check(page, name: str, found: dict[str, str]) -> None:
    """Run axe on the page as it is now; keep a screenshot; record what it found."""
    shot(page, f"a11y-{name}", full_page=True)
    violations = axe_violations(page)
    if violations:
        found[name] = describe_violations(violations)


def test_every_page_has_no_wcag_aa_violation(room: Room) -> None:
    from playwright.sync_api import expect

    match = room.create_match(wpm=150, answer_window=30)  # the moderator rules by hand
    found: dict[str, str] = {}
    with chromium() as browser:
        laptop = browser.new_context(viewport=LAPTOP).new_page()
        laptop.goto(room.url)
        check(laptop, "home", found)
        laptop.goto(f"{room.url}/moderator/")
        laptop.fill("#id_username", ORGANISER[0])
        laptop.fill("#id_password", ORGANISER[1])
        laptop.click("#login-form button[type=submit]")
        expect(laptop).to_have_url(f"{room.url}/moderator/")
        check(laptop, "moderator", found)
        laptop.goto(f"{room.url}/analysis/")
        check(laptop, "analysis", found)

        phone = browser.new_context(viewport=PHONE, has_touch=True, is_mobile=True).new_page()
        phone.goto(f"{room.url}/play/?code={match['code']}")
        expect(phone.locator("#join-team option")).to_have_count(2)
        check(phone, "play-join", found)
        join(phone, room.url, match["code"], "Ada", "Team A")
        # The events that matter are announced: buzzes and rulings (banner), the timer, errors.
        assert phone.locator("#banner").get_attribute("aria-live") == "assertive"
        assert phone.locator("#timer-say").get_attribute("aria-live") == "assertive"
        assert phone.locator("#toast").get_attribute("aria-live") == "polite"

        # Words fade in over 0.15 s, and axe measures a word caught mid-fade as low contrast (a CI
        # run did): the projector asks for reduced motion, which the page honours, so axe sees words
        # as they stay.
        projector = browser.new_context(viewport=PROJECTOR, reduced_motion="reduce").new_page()
        projector.goto(f"{room.url}/watch/{match['code']}/")
        laptop.goto(match["dashboard_url"])
        expect(laptop.locator("#conn")).to_have_text("live")
        check(laptop, "dashboard-lobby", found)

        moderate(laptop, match, name="start")
        expect(phone.locator("#q-text .w").nth(3)).to_be_visible(timeout=15_000)
        assert projector.evaluate("document.getAnimations().length") == 0
        check(projector, "watch-reading", found)
        phone.locator("#buzz").tap()
        expect(phone.locator("#answer-input")).to_be_focused(timeout=5_000)
        check(phone, "play-answering", found)
        phone.fill("#answer-input", "Moby Dick")
        phone.press("#answer-input", "Enter")
        expect(phone.locator("#banner")).to_have_text("Answer sent — waiting for the ruling…")
        expect(laptop.locator("#ruling")).to_be_visible(timeout=5_000)
        check(laptop, "dashboard-ruling", found)

        moderate(laptop, match, name="rule", verdict="accept")
        expect(phone.locator("#recap")).to_be_visible(timeout=5_000)
        check(phone, "play-recap", found)
        check(projector, "watch-answered", found)
    assert not found, "\n\n".join(f"{page}:\n{text}" for page, text in found.items())
