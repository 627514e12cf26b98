"""The player page on the room's tablets and phones, in real Chromium (touch emulated): a phone
at 390×844 and an iPad at 820×1180 / 1180×820 against a real server.

What a player must be told and must be able to reach: who won a close race and by how much,
a large answer timer that turns amber then red, says so to screen readers and stands still while
the match is paused, the whole tossup with a mark where each buzz came and what was answered, a
BUZZ bar that never covers the question or a control (also with the on-screen keyboard open: a smaller viewport), a
leave that asks first, no staff links, and a text size that survives a reload.
Screenshots: tests/artifacts/screenshots/tablet-*.png and phone-*.png.
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.frontend.room import (
    IPAD,
    IPAD_LANDSCAPE,
    PHONE,
    Room,
    assert_buzz_clear_of,
    join,
    moderate,
    room_server,
    shot,
)
from tests.support.browser import chromium

pytestmark = pytest.mark.browser

KEYBOARD = {"width": 390, "height": 508}  # the phone with a 336-px on-screen keyboard open


@pytest.fixture(scope="module")
def room(tmp_path_factory: pytest.TempPathFactory, redis_url: str) -> Iterator[Room]:
    with room_server(Path(tmp_path_factory.mktemp("room")), redis_url) as r:
        yield r


def watch_errors(page, errors: list[str]) -> None:
    page.on("pageerror", lambda exc: errors.append(f"{page.url}: {exc}"))


def test_phone_and_tablet_race_timer_keyboard_and_recap(room: Room) -> None:
    from playwright.sync_api import expect

    match = room.create_match(tossups=2, wpm=150, answer_window=12, auto_rule=True, between_questions=2)
    errors: list[str] = []
    with chromium() as browser:
        phone = browser.new_context(viewport=PHONE, has_touch=True, is_mobile=True).new_page()
        ipad = browser.new_context(viewport=IPAD, has_touch=True).new_page()
        desk = browser.new_page()  # sends the moderator's commands
        for page in (phone, ipad):
            watch_errors(page, errors)
        join(phone, room.url, match["code"], "Ada", "Team A")
        join(ipad, room.url, match["code"], "Bea", "Team B")

        # No staff links on a player's page: no site menu at all.
        for page in (phone, ipad):
            assert page.locator(".topbar nav").count() == 0
            assert page.locator("a[href*='/moderator'], a[href*='/analysis']").count() == 0

        desk.goto(room.url)
        moderate(desk, match, name="start")
        for page in (phone, ipad):
            expect(page.locator("#q-text .w").nth(3)).to_be_visible(timeout=15_000)

        # A close race: the phone presses first, the tablet 30 ms later, both within the 150-ms
        # window; the margin the tablet shows is the server's.
        phone.evaluate("document.getElementById('buzz').click()")
        ipad.wait_for_timeout(30)
        ipad.evaluate("document.getElementById('buzz').click()")
        expect(ipad.locator("#banner")).to_have_text(
            re.compile(r"You lost the race to Ada \(Team A\)( by \d+ ms|: they buzzed on an earlier word)\.")
        )
        shot(ipad, "tablet-lost-race")

        # The winner answers against a large timer that starts calm and is announced.
        expect(phone.locator("#answer-input")).to_be_focused()
        timer = phone.locator("#answer-timer")
        expect(timer).to_have_attribute("data-level", "calm")
        expect(phone.locator("#timer-say")).to_have_text(re.compile(r"\d seconds to answer"))
        big = phone.locator("#answer-timer .timer-num").evaluate(
            "el => parseFloat(getComputedStyle(el).fontSize)"
        )
        assert big >= 32, big
        assert_buzz_clear_of(phone, "#q-text")
        assert_buzz_clear_of(phone, "#answer-input")
        shot(phone, "phone-answering")

        # The on-screen keyboard: a smaller viewport; the BUZZ bar shrinks and still covers nothing.
        phone.set_viewport_size(KEYBOARD)
        phone.wait_for_function(
            "document.getElementById('buzz').getBoundingClientRect().bottom <= innerHeight"
        )
        expect(phone.locator("body")).to_have_class(re.compile(r"\bkeyboard\b"))
        assert phone.locator("#buzz").bounding_box()["height"] <= 60
        assert_buzz_clear_of(phone, "#answer-input")
        assert_buzz_clear_of(phone, "#q-text")
        shot(phone, "phone-keyboard")
        phone.set_viewport_size(PHONE)
        # iOS opens its keyboard over the page: only the visual viewport shrinks. A page scale
        # of 844/508 gives the same visual viewport; the page follows it, not the window.
        cdp = phone.context.new_cdp_session(phone)
        cdp.send("Emulation.setPageScaleFactor", {"pageScaleFactor": PHONE["height"] / KEYBOARD["height"]})
        fits = "Math.abs(document.body.getBoundingClientRect().height - visualViewport.height) < 1"
        phone.wait_for_function(f"visualViewport.height < innerHeight - 300 && {fits}")
        assert phone.evaluate(
            "document.getElementById('buzz').getBoundingClientRect().bottom <= visualViewport.height"
        )
        cdp.send("Emulation.setPageScaleFactor", {"pageScaleFactor": 1})
        phone.wait_for_function(f"visualViewport.height === innerHeight && {fits}")

        # amber at 5 s left, red at 2 s: colour and words change together
        expect(timer).to_have_attribute("data-level", "warning", timeout=10_000)
        expect(phone.locator("#timer-say")).to_have_text("5 seconds left")
        shot(phone, "phone-timer-warning")
        # A pause holds the countdown (the server moves the deadline by the pause); resume goes on.
        moderate(desk, match, name="pause")
        expect(timer).to_have_class(re.compile(r"\bpaused\b"))
        held = phone.locator("#answer-timer .timer-num").inner_text()
        assert held.endswith("paused"), held
        phone.wait_for_timeout(1500)
        assert phone.locator("#answer-timer .timer-num").inner_text() == held
        expect(phone.locator("#timer-say")).to_have_text("Paused: the time to answer stands still")
        moderate(desk, match, name="resume")
        expect(timer).not_to_have_class(re.compile(r"\bpaused\b"))
        expect(timer).to_have_attribute("data-level", "urgent", timeout=6_000)
        expect(phone.locator("#timer-say")).to_have_text("2 seconds left")
        red = phone.locator("#answer-timer .timer-num").evaluate("el => getComputedStyle(el).color")
        assert red == "rgb(192, 38, 45)", red  # --bad
        shot(phone, "phone-timer-urgent")

        # No answer in time; the tablet's team may buzz again, and answers.
        expect(phone.locator("#banner")).to_contain_text("timeout", timeout=10_000)
        expect(phone.locator("#answer-form")).to_be_hidden()
        expect(ipad.locator("#buzz")).to_be_enabled(timeout=10_000)
        ipad.locator("#buzz").tap()
        expect(ipad.locator("#answer-input")).to_be_focused(timeout=5_000)
        ipad.fill("#answer-input", "Moby Dick")
        ipad.press("#answer-input", "Enter")
        expect(ipad.locator("#banner")).not_to_have_text("You buzzed — answer now!")

        # After the tossup: the whole question, a mark where each buzz came, what was said.
        for page in (phone, ipad):
            expect(page.locator("#recap")).to_be_visible(timeout=10_000)
            expect(page.locator("#q-text")).to_be_hidden()
            marks = page.locator("#recap-text .buzzmark[data-player]")
            expect(marks).to_have_count(2)
            expect(marks.nth(0)).to_contain_text("Ada")
            expect(marks.nth(1)).to_contain_text("Bea")
            expect(page.locator("#recap-buzzes li").nth(0)).to_contain_text("timeout")
            expect(page.locator("#recap-buzzes li").nth(1)).to_contain_text("“Moby Dick”")
            expect(page.locator("#recap-buzzes li").nth(1)).to_contain_text("correct")
            expect(page.locator("#reveal")).to_contain_text("Moby-Dick")
            # The words nobody heard (the reading stopped at the buzz) are there too, set apart.
            assert page.locator("#recap-text .w.unread").count() > 0
            assert page.locator("#recap-text .w").count() > page.locator("#q-text .w").count()
        expect(phone.locator("#bonus-result")).to_have_text("")  # no stale total from before
        expect(phone.locator("#flags")).to_be_visible()
        assert_buzz_clear_of(phone, "#recap-text")
        assert_buzz_clear_of(phone, "#flags .flag:last-of-type")
        assert_buzz_clear_of(phone, "#flags .flag:first-of-type")
        shot(phone, "phone-recap")
        shot(ipad, "tablet-recap")

        # The tablet's team plays its bonus (wrong on every part); everyone sees its total …
        for part in range(3):
            expect(ipad.locator("#bonus-text")).to_contain_text(f"Part {part + 1}")
            expect(ipad.locator("#bonus-input")).to_be_focused(timeout=5_000)
            ipad.fill("#bonus-input", "no idea")
            ipad.press("#bonus-input", "Enter")
        expect(phone.locator("#bonus-result")).to_have_text("Bonus: 0 points", timeout=10_000)
        # … and the next bonus starts clean: no total, no part result from the one before.
        expect(phone.locator("#q-text .w").nth(3)).to_be_visible(timeout=15_000)
        phone.locator("#buzz").tap()
        expect(phone.locator("#answer-input")).to_be_focused(timeout=5_000)
        phone.fill("#answer-input", "Magna Carta")
        phone.press("#answer-input", "Enter")
        expect(phone.locator("#bonus-form")).to_be_visible(timeout=10_000)
        expect(phone.locator("#bonus-result")).to_have_text("")
        expect(ipad.locator("#bonus-result")).to_have_text("")
        shot(phone, "phone-second-bonus")
    assert not errors, errors


def test_tablet_orientations_preferences_and_confirmed_leave(room: Room) -> None:
    from playwright.sync_api import expect

    match = room.create_match(wpm=150, auto_rule=True)
    errors: list[str] = []
    with chromium() as browser:
        context = browser.new_context(viewport=IPAD_LANDSCAPE, has_touch=True)
        ipad = context.new_page()
        watch_errors(ipad, errors)
        join(ipad, room.url, match["code"], "Cy", "Team A")
        desk = browser.new_page()
        desk.goto(room.url)
        moderate(desk, match, name="start")
        expect(ipad.locator("#q-text .w").nth(2)).to_be_visible(timeout=15_000)
        for size, name in ((IPAD_LANDSCAPE, "tablet-landscape"), (IPAD, "tablet-portrait")):
            ipad.set_viewport_size(size)
            assert_buzz_clear_of(ipad, "#q-text")
            assert_buzz_clear_of(ipad, "#scoreboard")
            assert_buzz_clear_of(ipad, "#leave")
            shot(ipad, name)

        # Text size: larger twice, kept across a reload; the buzz sound/vibration choice too.
        ipad.click("#font-larger")
        ipad.click("#font-larger")
        root_px = "parseFloat(getComputedStyle(document.documentElement).fontSize)"
        assert ipad.evaluate(root_px) == pytest.approx(17 * 1.3)
        ipad.check("#buzz-feedback")
        ipad.reload()
        expect(ipad.locator("#conn")).to_have_text("live")
        assert ipad.evaluate(root_px) == pytest.approx(17 * 1.3)
        expect(ipad.locator("#buzz-feedback")).to_be_checked()
        assert_buzz_clear_of(ipad, "#q-text")  # large text still leaves the bar clear
        ipad.locator("#buzz").tap()  # with the beep and vibration on: no script error
        expect(ipad.locator("#answer-form")).to_be_visible(timeout=5_000)
        shot(ipad, "tablet-large-text")

        # Leaving asks first; "Stay" keeps the seat, "Leave the match" drops it from this tablet.
        ipad.click("#leave")
        dialog = ipad.get_by_role("dialog", name="Leave this match?")
        expect(dialog).to_be_visible()
        shot(ipad, "tablet-leave-dialog")
        dialog.get_by_role("button", name="Stay").click()
        expect(dialog).to_be_hidden()
        expect(ipad.locator("#game")).to_be_visible()
        assert ipad.evaluate("localStorage.getItem('tossup.seat')") is not None
        ipad.click("#leave")
        dialog.get_by_role("button", name="Leave the match").click()
        expect(ipad.locator("#join")).to_be_visible()
        assert ipad.evaluate("localStorage.getItem('tossup.seat')") is None
    assert not errors, errors
