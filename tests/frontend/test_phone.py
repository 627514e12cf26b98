"""The player page where issue 28 found it failing, in real Chromium against a real server: the
phone (390×844) answering and being prompted, the tablets (820×1180, 1180×820) at the end of a
match and between questions at the match's pace.

What is asserted, with ``document.elementFromPoint``: every control of the phone's answer form
(field, Submit, timer) is the topmost element at its centre, so nothing (BUZZ bar, sticky
tossup line) covers it; a prompt empties the field; the tossup line stays on screen however far
the column is scrolled; the player's own figures come after the answer area; the status line
"Answer sent — waiting for the ruling…" lasts only until the ruling. At the end of the match the
tablets show the final standings instead of the BUZZ bar, the bonus, the flags and the answer
form, also after a reload; between questions they count down to the next tossup.
Screenshots: tests/artifacts/screenshots/phone-*-390x844.png, tablet-final-*.png,
tablet-next-tossup-820x1180.png.
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from tests.frontend.room import (
    IPAD,
    IPAD_LANDSCAPE,
    PHONE,
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

WAITING = "Answer sent — waiting for the ruling…"

# Whether `selector`'s element is what is drawn at the centre of its box, and its box against
# the window: {hit (bool), what (the element found there), box {top, bottom, left, right}, vh, vw}.
TOPMOST_JS = """(selector) => {
  const el = document.querySelector(selector);
  const r = el.getBoundingClientRect();
  const hit = document.elementFromPoint((r.left + r.right) / 2, (r.top + r.bottom) / 2);
  const what = hit ? hit.tagName + (hit.id ? "#" + hit.id : "") + (hit.className ? "." + hit.className : "") : null;
  return {
    hit: !!hit && (hit === el || el.contains(hit)), what,
    box: { top: r.top, bottom: r.bottom, left: r.left, right: r.right },
    vh: innerHeight, vw: innerWidth,
  };
}"""

ANSWER_CONTROLS = ("#answer-input", "#answer-form button[type=submit]", "#answer-timer")


@pytest.fixture(scope="module")
def room(tmp_path_factory: pytest.TempPathFactory, redis_url: str) -> Iterator[Room]:
    with room_server(Path(tmp_path_factory.mktemp("phone")), redis_url) as r:
        yield r


def watch_errors(page: Any, errors: list[str]) -> None:
    page.on("pageerror", lambda exc: errors.append(f"{page.url}: {exc}"))


def assert_topmost(page: Any, selector: str) -> None:
    """The element is wholly inside the window and nothing is drawn over its centre."""
    fact = page.evaluate(TOPMOST_JS, selector)
    box = fact["box"]
    assert box["bottom"] > box["top"], (selector, fact)
    assert box["top"] >= 0 and box["bottom"] <= fact["vh"] + 0.5, (selector, fact)
    assert box["left"] >= 0 and box["right"] <= fact["vw"] + 0.5, (selector, fact)
    assert fact["hit"], (selector, fact)


def assert_answer_form_clear(page: Any, *, timer: bool = True) -> None:
    for selector in ANSWER_CONTROLS if timer else ANSWER_CONTROLS[:2]:
        assert_topmost(page, selector)


def rule(desk: Any, match: dict[str, Any], verdict: str, **extra: Any) -> None:
    moderate(desk, match, name="rule", verdict=verdict, **extra)


def test_phone_answer_prompt_and_status_line(room: Room) -> None:
    from playwright.sync_api import expect

    # Long windows: the checks below run while the clock is going, never against a timeout.
    match = room.create_match(
        tossups=2, wpm=150, answer_window=60, prompt_window=60, bonus_part_window=60, between_questions=30
    )
    errors: list[str] = []
    with chromium() as browser:
        phone = browser.new_context(viewport=PHONE, has_touch=True, is_mobile=True).new_page()
        watch_errors(phone, errors)
        join(phone, room.url, match["code"], "Ada Lovelace-Byron", "Team A")
        desk = browser.new_page()
        desk.goto(room.url)

        # The seat line is one row: the name gives way, the tools stay beside it.
        seat = phone.evaluate(
            """() => [document.getElementById("you"), ...document.querySelectorAll(".seat-tools > *")]
                 .map((el) => { const r = el.getBoundingClientRect(); return (r.top + r.bottom) / 2; })"""
        )
        assert max(seat) - min(seat) < 2, seat
        assert phone.locator(".seat").bounding_box()["height"] <= 50

        moderate(desk, match, name="start")
        expect(phone.locator("#q-text .w").nth(3)).to_be_visible(timeout=15_000)
        phone.bring_to_front()
        phone.locator("#buzz").tap()
        expect(phone.locator("#answer-input")).to_be_focused(timeout=5_000)
        expect(phone.locator("#answer-timer")).to_be_visible()
        assert_answer_form_clear(phone)
        assert_topmost(phone, "#qhead")
        # The player's own figures come after the answer area, in the page and on screen.
        assert phone.evaluate(
            """() => {
              const form = document.getElementById("answer-form"), stats = document.getElementById("my-stats");
              return !stats.hidden && !!(form.compareDocumentPosition(stats) & Node.DOCUMENT_POSITION_FOLLOWING)
                && stats.getBoundingClientRect().top >= form.getBoundingClientRect().bottom;
            }"""
        )
        shot(phone, "phone-answer-390x844")

        # Sent: the field and its Submit stay in view (disabled) until the ruling.
        phone.fill("#answer-input", "the whale book")
        phone.press("#answer-input", "Enter")
        expect(phone.locator("#banner")).to_have_text(WAITING)
        expect(phone.locator("#answer-input")).to_be_disabled()
        assert_answer_form_clear(phone, timer=False)

        # A prompt: a new question to answer, in an empty field, all of the form in view.
        rule(desk, match, "prompt", directed_prompt="Which novel, exactly?")
        expect(phone.locator("#prompt-text")).to_have_text("Which novel, exactly?")
        expect(phone.locator("#answer-input")).to_be_enabled()
        expect(phone.locator("#answer-input")).to_have_value("")
        expect(phone.locator("#answer-input")).to_be_focused()
        expect(phone.locator("#answer-timer")).to_be_visible()
        expect(phone.locator("#banner")).not_to_have_text(WAITING)
        assert_topmost(phone, "#prompt-text")
        assert_answer_form_clear(phone)
        shot(phone, "phone-prompt-390x844")

        # The tossup line sticks to the top of the column, however far it is scrolled (the
        # largest text makes the column taller than the screen).
        for _ in range(6):
            if phone.locator("#font-larger").is_enabled():
                phone.locator("#font-larger").click()
        scrolled = phone.evaluate(
            """() => {
              const s = document.getElementById("game-scroll");
              s.scrollTop = s.scrollHeight;
              return { scrollTop: s.scrollTop, top: s.getBoundingClientRect().top,
                       above: document.getElementById("scoreboard").getBoundingClientRect().bottom };
            }"""
        )
        # What comes before the tossup line in the column has scrolled out of sight; the line has not.
        assert scrolled["scrollTop"] > 0 and scrolled["above"] <= scrolled["top"], scrolled
        assert_topmost(phone, "#qhead")
        expect(phone.locator("#q-index")).to_have_text("Tossup 1 of 2")
        for _ in range(6):
            if phone.locator("#font-smaller").is_enabled():
                phone.locator("#font-smaller").click()
        phone.locator("#font-larger").click()  # back to the default step (1)

        # Answered again and ruled: the waiting line gives way to the ruling.
        phone.locator("#answer-input").focus()
        phone.fill("#answer-input", "Moby-Dick")
        phone.press("#answer-input", "Enter")
        expect(phone.locator("#banner")).to_have_text(WAITING)
        rule(desk, match, "accept")
        expect(phone.locator("#banner")).to_have_text(re.compile(r"correct \(\+1[05]\)"))
        expect(phone.locator("#answer-form")).to_be_hidden()

        # The bonus: waiting while a part is ruled, cleared by the ruling, by a prompt (with an
        # empty field in view) and by the bonus's end.
        def send_bonus(text: str) -> None:
            expect(phone.locator("#bonus-input")).to_be_focused(timeout=5_000)
            phone.fill("#bonus-input", text)
            phone.press("#bonus-input", "Enter")
            expect(phone.locator("#banner")).to_have_text(WAITING)

        send_bonus("Hamlet")
        rule(desk, match, "accept")
        expect(phone.locator("#bonus-text")).to_contain_text("Part 2")
        expect(phone.locator("#banner")).not_to_have_text(WAITING)
        send_bonus("the Moor")
        rule(desk, match, "prompt", directed_prompt="His name?")
        expect(phone.locator("#bonus-prompt")).to_have_text("His name?")
        expect(phone.locator("#banner")).not_to_have_text(WAITING)
        expect(phone.locator("#bonus-input")).to_have_value("")
        for selector in ("#bonus-prompt", "#bonus-input", "#bonus-form button[type=submit]", "#bonus-timer"):
            assert_topmost(phone, selector)
        send_bonus("Othello")
        rule(desk, match, "accept")
        send_bonus("no idea")
        rule(desk, match, "reject")
        expect(phone.locator("#bonus-result")).to_have_text("Bonus: 20 points")
        expect(phone.locator("#banner")).not_to_have_text(WAITING)
        assert_topmost(phone, "#qhead")
    assert not errors, errors


FINAL_JS = """() => ({
  rows: [...document.querySelectorAll("#final-standings tr")].map((tr) => ({
    cells: [...tr.cells].map((c) => c.textContent.trim()), mine: tr.classList.contains("mine"),
  })),
  hidden: Object.fromEntries(["buzz", "bonus", "flags", "answer-form"].map((id) => [id, document.getElementById(id).hidden
    && document.getElementById(id).getBoundingClientRect().height === 0])),
})"""


def assert_final(page: Any, code: str, team: str, result: str, rows: list[list[str]]) -> None:
    """The end of the match as ``page`` (a seat of ``team``) shows it."""
    from playwright.sync_api import expect

    expect(page.locator("#final")).to_be_visible(timeout=10_000)
    expect(page.locator("#final-result")).to_have_text(result)
    expect(page.locator("#q-index")).to_have_text("Match over")
    expect(page.locator("#banner")).to_have_text("Match over — thanks for playing!")
    href = page.locator("#recap-link").get_attribute("href")
    assert href == f"/match/{code}/recap/", href
    fact = page.evaluate(FINAL_JS)
    assert [r["cells"] for r in fact["rows"]] == [
        [place, f"{name} (your team)" if name == team else name, pts] for place, name, pts in rows
    ], fact
    assert [r["mine"] for r in fact["rows"]] == [name == team for _, name, _ in rows], fact
    assert all(fact["hidden"].values()), fact
    assert_topmost(page, "#final-result")
    assert_topmost(page, "#recap-link")


def test_tablets_end_of_match_standings_and_reload(room: Room) -> None:
    from playwright.sync_api import expect

    match = room.create_match(tossups=3, wpm=150, auto_rule=True, bonus_part_window=60)
    errors: list[str] = []
    with chromium() as browser:
        portrait = browser.new_context(viewport=IPAD, has_touch=True).new_page()
        landscape = browser.new_context(viewport=IPAD_LANDSCAPE, has_touch=True).new_page()
        for page in (portrait, landscape):
            watch_errors(page, errors)
        join(portrait, room.url, match["code"], "Bea", "Team A")
        join(landscape, room.url, match["code"], "Cy", "Team B")
        desk = browser.new_page()
        desk.goto(room.url)
        moderate(desk, match, name="start")
        expect(portrait.locator("#q-text .w").nth(3)).to_be_visible(timeout=15_000)
        portrait.bring_to_front()
        portrait.locator("#buzz").tap()
        expect(portrait.locator("#answer-input")).to_be_focused(timeout=5_000)
        portrait.fill("#answer-input", "Moby Dick")
        portrait.press("#answer-input", "Enter")
        # The match ends in the middle of Team A's bonus, with the flags up on both tablets.
        expect(portrait.locator("#bonus-form")).to_be_visible(timeout=10_000)
        expect(landscape.locator("#flags")).to_be_visible()
        won = portrait.locator("#scoreboard li.mine .score").inner_text()  # 10, or 15 for a power
        assert won in ("10", "15"), won
        moderate(desk, match, name="end")

        rows = [["1", "Team A", won], ["2", "Team B", "0"]]
        result = f"Team A wins, {won} to 0"
        for page, team in ((portrait, "Team A"), (landscape, "Team B")):
            assert_final(page, match["code"], team, result, rows)
        for page, name in ((portrait, "tablet-final-820x1180"), (landscape, "tablet-final-1180x820")):
            page.bring_to_front()
            shot(page, name)
        violations = axe_violations(portrait)
        assert not violations, describe_violations(violations)
        # A reload (the snapshot of an ended match) shows the same.
        for page, team in ((portrait, "Team A"), (landscape, "Team B")):
            page.reload()
            expect(page.locator("#conn")).to_have_text("live")
            assert_final(page, match["code"], team, result, rows)

        # A tie shares the first place.
        tie = room.create_match(tossups=2, teams="Red,Blue")
        join(landscape, room.url, tie["code"], "Cy", "Blue")
        moderate(desk, tie, name="start")
        moderate(desk, tie, name="end")
        assert_final(
            landscape,
            tie["code"],
            "Blue",
            "Tie at 0: Red and Blue",
            [["1=", "Red", "0"], ["1=", "Blue", "0"]],
        )
    assert not errors, errors


def test_tablet_counts_down_to_the_next_tossup(room: Room) -> None:
    from playwright.sync_api import expect

    match = room.create_match(tossups=3, wpm=150, between_questions=8)
    errors: list[str] = []
    with chromium() as browser:
        ipad = browser.new_context(viewport=IPAD, has_touch=True).new_page()
        watch_errors(ipad, errors)
        join(ipad, room.url, match["code"], "Dee", "Team A")
        desk = browser.new_page()
        desk.goto(room.url)
        moderate(desk, match, name="start")
        expect(ipad.locator("#q-text .w").nth(2)).to_be_visible(timeout=15_000)
        expect(ipad.locator("#next-tossup")).to_be_hidden()  # nothing while a tossup is read
        ipad.bring_to_front()
        moderate(desk, match, name="reveal")  # dead tossup: no bonus, straight to between questions

        line = ipad.locator("#next-tossup")
        expect(line).to_have_text(re.compile(r"Next tossup in [5-8] s"), timeout=5_000)
        first = int(re.findall(r"\d+", line.inner_text())[0])
        assert_topmost(ipad, "#next-tossup")
        shot(ipad, "tablet-next-tossup-820x1180")
        expect(line).to_have_text(f"Next tossup in {first - 2} s", timeout=4_000)  # counts down
        violations = axe_violations(ipad)
        assert not violations, describe_violations(violations)
        # The next tossup starts by itself when the count runs out, and the line goes.
        expect(ipad.locator("#q-index")).to_have_text("Tossup 2 of 3", timeout=first * 1000 + 5_000)
        expect(line).to_be_hidden()

        # The moderator takes the pace back (Next by hand): between questions, no countdown.
        moderate(desk, match, name="pace")
        expect(ipad.locator("#q-text .w").nth(2)).to_be_visible(timeout=15_000)
        moderate(desk, match, name="reveal")
        expect(ipad.locator("#reveal")).to_be_visible(timeout=5_000)
        ipad.wait_for_timeout(1_000)
        expect(line).to_be_hidden()
        moderate(desk, match, name="next")
        expect(ipad.locator("#q-index")).to_have_text("Tossup 3 of 3", timeout=5_000)
    assert not errors, errors
