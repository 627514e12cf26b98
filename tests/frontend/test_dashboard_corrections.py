"""The moderator's desk at 1366×768 in real Chromium (issue 28 items 3, 4, 5 and 8): a rejected
right answer put right after the tossup went dead (scores, bonus, log and the tablet follow), the
pace between questions set from the dashboard, a prompt shown beside the answer after it, controls
that keep no focus, End kept away from Start, a neg on the questions rail, and the end of the match:
final standings, the winner and links to the recap, the analysis and the fit. On the scoresheet, a
buzz the moderator missed is added in an empty cell, then an earlier ruling corrected."""

from __future__ import annotations

import re
from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.frontend.room import (
    IPAD,
    LAPTOP,
    PHONE,
    Room,
    axe_violations,
    describe_violations,
    join,
    room_server,
    shot,
)
from tests.support.browser import chromium

pytestmark = pytest.mark.browser


@pytest.fixture(scope="module")
def room(tmp_path_factory: pytest.TempPathFactory, redis_url: str) -> Iterator[Room]:
    with room_server(Path(tmp_path_factory.mktemp("room")), redis_url) as r:
        yield r


def focused_tag(page) -> str:
    return page.evaluate("document.activeElement ? document.activeElement.tagName : ''")


def buzz_and_answer(phone, text: str) -> None:
    from playwright.sync_api import expect

    expect(phone.locator("#buzz")).to_be_enabled(timeout=10_000)
    phone.evaluate("document.getElementById('buzz').click()")
    expect(phone.locator("#answer-input")).to_be_focused(timeout=5_000)
    phone.fill("#answer-input", text)
    phone.press("#answer-input", "Enter")


def test_a_wrong_ruling_is_put_right_and_the_match_ends_on_every_screen(room: Room) -> None:
    from playwright.sync_api import expect

    # The moderator rules; a long pace so that nothing starts by itself while the desk works.
    match = room.create_match(tossups=2, wpm=600, answer_window=20, auto_rule=False, between_questions=60)
    errors: list[str] = []
    with chromium() as browser:
        mod = browser.new_context(viewport=LAPTOP).new_page()
        mod.on("dialog", lambda dialog: dialog.accept())
        phone = browser.new_context(viewport=PHONE, has_touch=True, is_mobile=True).new_page()
        for page in (mod, phone):
            page.on("pageerror", lambda exc, page=page: errors.append(f"{page.url}: {exc}"))
        mod.goto(match["dashboard_url"])
        expect(mod.locator("#conn")).to_have_text("live", timeout=15_000)
        join(phone, room.url, match["code"], "Ada", "Team A")

        # End match is not beside Start (a slip there ends the match).
        start = mod.locator("button[data-cmd=start]").bounding_box()
        end = mod.locator("button[data-cmd=end]").bounding_box()
        assert end["x"] - (start["x"] + start["width"]) >= 200, (start, end)

        mod.click("button[data-cmd=start]")
        buzz_and_answer(phone, "Moby Dick")
        expect(mod.locator("#judge-line")).to_contain_text("Moby Dick", timeout=10_000)
        mod.click("button[data-rule=reject]")
        assert focused_tag(mod) != "BUTTON"
        # The tossup reads out and its dead time passes; the neg stays on the questions rail.
        expect(mod.locator("#phase-label")).to_contain_text("Between questions", timeout=20_000)
        expect(mod.locator("#qnav li").first.locator(".qout")).to_have_text("dead · Ada −5")
        expect(mod.locator("#countdown")).to_have_text(re.compile(r"next tossup in \d+ s"))

        # Correct it: first without a reason (refused on the page), then with one.
        row = mod.locator("#correct-list li", has_text="Tossup 1: Ada (Team A): wrong −5")
        expect(row).to_be_visible()
        row.locator("button[data-ruling=correct]").click()
        expect(mod.locator("#correct-reason")).to_be_focused()
        mod.fill("#correct-reason", "Moby Dick is the answer: I misheard")
        mod.bring_to_front()
        shot(mod, "dashboard_correct_ruling_1366")
        row.locator("button[data-ruling=correct]").click()
        score_a = mod.locator("#scoreboard li", has_text="Team A").locator(".score")
        expect(score_a).to_have_text(re.compile(r"^1[05]$"))
        expect(mod.locator("#bonus")).to_contain_text("Bonus for Team A")
        expect(mod.locator("#log")).to_contain_text("CORRECTED Ada: wrong −5 → correct")
        expect(mod.locator("#qnav li").first.locator(".qout")).to_have_text(re.compile(r"^Ada \+1[05]$"))
        # The tablet follows: its score and the bonus it now plays.
        expect(phone.locator("#bonus")).to_contain_text("Part 1", timeout=10_000)
        shot(mod, "dashboard_corrected_bonus_1366")

        # The pace: the moderator advances from now on; nothing starts by itself.
        mod.click("#btn-skip")  # skip the bonus
        assert focused_tag(mod) != "BUTTON"
        mod.select_option("#pace", "")
        expect(mod.locator("#countdown")).to_have_text("· press Next tossup when the room is ready")
        mod.wait_for_timeout(1500)
        expect(mod.locator("#phase-label")).to_contain_text("Between questions")
        mod.click("button[data-cmd=next]")
        assert focused_tag(mod) != "BUTTON"
        expect(mod.locator("#q-index")).to_have_text("Tossup 2 of 2")

        # A prompt: the panel shows what was prompted beside the new answer; the directed prompt
        # the moderator typed is not left in the field for the next ruling.
        buzz_and_answer(phone, "charter")
        expect(mod.locator("#judge-line")).to_contain_text("charter", timeout=10_000)
        mod.fill("#directed-prompt", "which charter?")
        mod.click("button[data-rule=prompt]")
        expect(phone.locator("#answer-input")).to_be_visible(timeout=5_000)
        phone.fill("#answer-input", "Magna Carta")
        phone.press("#answer-input", "Enter")
        expect(mod.locator("#judge-line")).to_contain_text("Prompted on “charter” (“which charter?”)")
        expect(mod.locator("#judge-line")).to_contain_text("Now: “Magna Carta”")
        assert mod.input_value("#directed-prompt") == ""
        mod.click("button[data-rule=accept]")
        expect(mod.locator("#bonus")).to_contain_text("Bonus for Team A")
        mod.click("#btn-skip")  # the last bonus: the match ends after the last tossup

        # The end on the desk: the result, the standings, the recap, the analysis, the fit.
        expect(mod.locator("#match-over")).to_be_visible(timeout=10_000)
        expect(mod.locator("#phase-label")).to_have_text("Match over")
        expect(mod.locator("#final-result")).to_have_text(re.compile(r"^Team A wins, \d+ to 0$"))
        expect(mod.locator("#final-standings li").first).to_contain_text("Team A")
        expect(mod.locator("#recap-link")).to_have_attribute("href", f"/match/{match['code']}/recap/")
        expect(mod.locator(".match-over-links a", has_text="Analysis")).to_have_attribute(
            "href", "/analysis/"
        )
        expect(mod.locator("#fit-status")).to_contain_text("the fit of this match")  # no worker in this room
        expect(mod.locator("#pace-form")).to_be_hidden()
        expect(mod.locator(".rule-buttons")).to_be_hidden()
        mod.bring_to_front()  # a page behind another has its timers held back (its toast stays up)
        shot(mod, "dashboard_match_over_1366")
        violations = axe_violations(mod)
        assert not violations, describe_violations(violations)
    assert errors == []


# -- the full scoresheet (issue 33 item 4): an earlier tossup corrected after the match went on --


def test_an_earlier_tossup_is_corrected_on_the_scoresheet_and_the_score_follows(room: Room) -> None:
    from playwright.sync_api import expect

    match = room.create_match(tossups=3, wpm=600, answer_window=20, auto_rule=False, between_questions=60)
    errors: list[str] = []
    with chromium() as browser:
        mod = browser.new_context(viewport=LAPTOP).new_page()
        mod.on("dialog", lambda dialog: dialog.accept())
        phone = browser.new_context(viewport=PHONE, has_touch=True, is_mobile=True).new_page()
        for page in (mod, phone):
            page.on("pageerror", lambda exc, page=page: errors.append(f"{page.url}: {exc}"))
        mod.goto(match["dashboard_url"])
        expect(mod.locator("#conn")).to_have_text("live", timeout=15_000)
        join(phone, room.url, match["code"], "Ada", "Team A")
        join(browser.new_context(viewport=PHONE).new_page(), room.url, match["code"], "Bo", "Team B")
        mod.click("button[data-cmd=start]")
        # Tossup 1: Ada's answer is rejected (−5) and the tossup ended; tossup 2: she gets it.
        buzz_and_answer(phone, "Moby Dick")
        expect(mod.locator("#judge-line")).to_contain_text("Moby Dick", timeout=10_000)
        mod.click("button[data-rule=reject]")
        expect(mod.locator("#phase-label")).to_contain_text("Between questions", timeout=25_000)  # read out
        mod.click("button[data-cmd=next]")
        expect(mod.locator("#q-index")).to_have_text("Tossup 2 of 3")
        buzz_and_answer(phone, "Magna Carta")
        expect(mod.locator("#judge-line")).to_contain_text("Magna Carta", timeout=10_000)
        mod.click("button[data-rule=accept]")
        expect(mod.locator("#bonus")).to_contain_text("Bonus for Team A")
        mod.click("#btn-skip")
        expect(mod.locator("#phase-label")).to_contain_text("Between questions", timeout=10_000)
        score_a = mod.locator("#scoreboard li", has_text="Team A").locator(".score")
        before = int(score_a.inner_text())

        # The scoresheet: tossup 1's neg is a button; keyboard opens its correction.
        mod.click("#scoresheet-open")
        sheet = mod.locator("#scoresheet")
        expect(sheet).to_be_visible()
        row = sheet.locator("tbody tr").nth(0)
        expect(sheet.locator("tbody tr")).to_have_count(2)
        # Team B's empty cell of tossup 1: a buzz the moderator missed (Bo, after the end, wrong).
        row.locator("button[data-add-tossup]").click()
        expect(mod.locator("#add-player")).to_be_focused()
        mod.select_option("#add-ruling", "wrong")
        mod.fill("#add-reason", "Bo buzzed after the end; the moderator missed it")
        mod.click("#add-form button[type=submit]")
        expect(row.locator("button[data-review]", has_text="Bo: wrong 0")).to_be_visible(timeout=10_000)
        expect(mod.locator("#log")).to_contain_text(
            "BUZZ ADDED by moderator tossup 1 Bo after the end: wrong 0"
        )
        cell = row.locator("button[data-review]", has_text="Ada: wrong −5")
        cell.focus()
        mod.keyboard.press("Enter")
        expect(mod.locator("#review-ruling")).to_be_focused()
        expect(mod.locator("#review-what")).to_contain_text("Tossup 1: Ada (Team A), wrong −5")
        mod.select_option("#review-ruling", "correct")
        # Without a reason nothing is sent.
        mod.click("#review-form button[type=submit]")
        expect(mod.locator("#scoresheet-status")).to_contain_text("Say why")
        expect(mod.locator("#review-reason")).to_be_focused()
        mod.fill("#review-reason", "Moby Dick was on the answer line")
        box = sheet.bounding_box()
        assert box["x"] >= 0 and box["x"] + box["width"] <= LAPTOP["width"], box  # fits the laptop
        shot(mod, "scoresheet_review_1366")
        mod.keyboard.press("Enter")  # submits the form from the reason field
        expect(
            row.locator("button[data-review]", has_text=re.compile(r"Ada: correct \+1[05]"))
        ).to_be_visible(timeout=10_000)
        after = int(score_a.inner_text())
        assert after - before in (15, 20), (before, after)  # a neg made a ten or a power
        expect(mod.locator("#log")).to_contain_text("REVIEWED by moderator tossup 1 Ada: wrong −5 → correct")
        violations = axe_violations(mod)
        assert not violations, describe_violations(violations)

        # On a tablet the same sheet fits the width and is still operated by touch-sized buttons.
        mod.set_viewport_size(IPAD)
        box = sheet.bounding_box()
        assert box["x"] >= 0 and box["x"] + box["width"] <= IPAD["width"], box
        button = row.locator("button[data-review]").first.bounding_box()
        assert button["height"] >= 36, button
        shot(mod, "scoresheet_tablet")
        mod.keyboard.press("Escape")
        expect(sheet).to_be_hidden()
    assert errors == []
