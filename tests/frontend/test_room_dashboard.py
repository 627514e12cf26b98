"""The room in a real browser (issue 11 items 1 and 3): the moderator dashboard at 1366×768 and
1280×720, a tablet, and the projector at 1920×1080, against uvicorn over a scratch database.

One match is played through: the create form explains every preset and ``auto_advance``; the
dashboard shows only the buttons the phase allows, previews the question (unread words greyed,
the power mark), lists the questions with their outcomes and the seats with their live
connection state; with five protests and a flag the question, the answer line, the buzz, the
judge's suggestion and the ruling buttons stay inside the window; replaying or undoing an
accepted tossup takes its points and its bonus away on the dashboard, the projector and the
tablet; the projector reads across a room and ends on a tie. Screenshots go to
tests/artifacts/screenshots/.
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from typing import Any

import pytest

from tests.frontend.room import LAPTOP, ORGANISER, PROJECTOR, room_server, shot
from tests.support.browser import chromium

pytestmark = pytest.mark.browser

SMALL_LAPTOP = {"width": 1280, "height": 720}


@pytest.fixture(scope="module")
def server(tmp_path_factory: pytest.TempPathFactory, redis_url: str) -> Iterator[str]:
    """(base URL) of a uvicorn process over a migrated scratch DB with the demo packet and an organiser."""
    with room_server(tmp_path_factory.mktemp("room"), redis_url) as room:
        yield room.url


def visible_buttons(mod: Any) -> set[str]:
    return set(mod.locator("#phase-buttons button:visible").evaluate_all("bs => bs.map(b => b.dataset.cmd)"))


def assert_inside_viewport(page: Any, *selectors: str) -> None:
    """Each element is displayed and its whole bounding box lies inside the window."""
    size = page.viewport_size
    for sel in selectors:
        box = page.locator(sel).first.bounding_box()
        assert box is not None, f"{sel} is not displayed"
        assert box["x"] >= 0 and box["y"] >= 0, (sel, box)
        assert box["x"] + box["width"] <= size["width"] + 0.5, (sel, box, size)
        assert box["y"] + box["height"] <= size["height"] + 0.5, (sel, box, size)
    assert page.evaluate("document.scrollingElement.scrollHeight <= innerHeight + 1"), (
        "the page itself scrolls"
    )


def create_match(browser: Any, server: str) -> tuple[Any, str]:
    from playwright.sync_api import expect

    mod = browser.new_context(viewport=LAPTOP).new_page()
    mod.on("dialog", lambda dialog: dialog.accept())
    mod.goto(f"{server}/accounts/login/?next=/moderator/")
    mod.fill("#id_username", ORGANISER[0])
    mod.fill("#id_password", ORGANISER[1])
    mod.click("#login-form button[type=submit]")
    expect(mod).to_have_url(f"{server}/moderator/")
    # Every preset is explained where it is chosen, the chosen one highlighted; auto_advance too.
    for name in ("acf", "naqt", "hvc"):
        expect(mod.locator(f"#preset-list [data-preset={name}] dd")).not_to_be_empty()
    mod.select_option("#id_preset", "naqt")
    expect(mod.locator("#preset-list .chosen")).to_have_attribute("data-preset", "naqt")
    expect(mod.locator("#preset-list .chosen dd")).to_contain_text("15 before the power mark")
    expect(mod.locator("#id_auto_advance")).to_be_checked()
    expect(mod.locator("label.check", has=mod.locator("#id_auto_advance"))).to_contain_text(
        "wait for your Next"
    )
    mod.fill("#id_name", "Room match")
    mod.fill("#id_n_tossups", "2")
    mod.fill("#id_wpm", "300")
    mod.uncheck("#id_auto_advance")  # the moderator presses Next
    mod.click("#create-form button[type=submit]")
    expect(mod.locator("#conn")).to_have_text("live", timeout=15_000)
    return mod, mod.locator("#join-code").inner_text().strip()


def test_the_moderator_runs_a_match_on_a_laptop_and_the_projector_follows(server: str) -> None:
    from playwright.sync_api import expect

    with chromium() as browser:
        mod, code = create_match(browser, server)
        expect(mod.locator("#phase-label")).to_contain_text("Lobby")
        assert visible_buttons(mod) == {"start", "end"}  # the lobby: Start, and End

        projector = browser.new_context(viewport=PROJECTOR).new_page()
        projector.goto(f"{server}/watch/{code}/")
        expect(projector.locator("#conn")).to_have_text("live", timeout=15_000)
        assert projector.locator(".topbar").is_hidden()  # no site menu on the projector

        tablet = browser.new_context(viewport={"width": 820, "height": 1180}, has_touch=True)
        player = tablet.new_page()
        player.goto(f"{server}/play/?code={code}")
        expect(player.locator("#join-team option")).to_have_count(2)
        player.fill("#join-name", "Ada")
        player.select_option("#join-team", "Team B")
        player.click("#join-form button[type=submit]")
        expect(player.locator("#conn")).to_have_text("live", timeout=15_000)

        # The seat appears with its live connection state (the roster refreshes on its own too).
        mod.click("#roster-refresh")
        ada = mod.locator("#roster tr", has_text="Ada").locator(".presence")
        expect(ada).to_have_attribute("data-state", "connected", timeout=10_000)
        bot = mod.locator("#roster tr", has_text="tfidf").locator(".presence")  # the form's default bot seat
        expect(bot).to_have_attribute("data-state", "never")
        expect(bot).to_have_text("never joined")
        expect(mod.locator("#roster-count")).to_have_text("1/2 connected")

        mod.click("button[data-cmd=start]")
        expect(mod.locator("#phase-label")).to_contain_text("Reading")
        assert visible_buttons(mod) == {"pause", "reveal", "skip", "replay", "end"}  # no Start, no Next
        mod.click("button[data-cmd=pause]")
        expect(mod.locator("#phase-label")).to_contain_text("paused")
        assert visible_buttons(mod) == {"resume", "end"}  # paused: what the engine accepts
        mod.click("button[data-cmd=resume]")
        expect(mod.locator("#phase-label")).not_to_contain_text("paused")
        # The moderator preview: the whole tossup, the words not read yet greyed, the power mark.
        expect(mod.locator("#q-text .w.unread").first).to_be_attached()
        expect(mod.locator("#q-text .powermark")).to_have_text("(*)")
        expect(mod.locator("#q-answer")).to_contain_text("Moby")
        expect(projector.locator("#q-text .w").nth(3)).to_be_visible(timeout=15_000)
        assert (
            projector.locator("#reveal").is_hidden() and "Moby" not in projector.locator("body").inner_text()
        )

        # Reveal ends tossup 1 unanswered: the answer on the projector, Next on the dashboard.
        mod.click("button[data-cmd=reveal]")
        expect(projector.locator("#reveal")).to_contain_text("Moby-Dick")
        expect(mod.locator("#phase-label")).to_contain_text("Between questions")
        assert visible_buttons(mod) == {"next", "pause", "replay", "end"}
        expect(mod.locator("#qnav li").first).to_have_class(re.compile(r"\bq-dead\b"))
        expect(mod.locator("#qnav li").first.locator(".qout")).to_have_text("dead")

        # A flag and five protests.
        mod.select_option("#flag-problem", index=1)
        mod.click("#flag-form button[type=submit]")
        expect(mod.locator("#log")).to_contain_text("flag from moderator")
        for k in range(5):
            mod.fill("#protest-reason", f"protest number {k + 1} about the reading of tossup one")
            mod.click("#protest-form button[type=submit]")
            expect(mod.locator("#protests li")).to_have_count(k + 1)

        mod.click("button[data-cmd=next]")
        expect(mod.locator("#phase-label")).to_contain_text("Reading")
        expect(player.locator("#buzz")).to_be_enabled(timeout=15_000)
        expect(player.locator("#q-text .w").nth(2)).to_be_visible()
        player.click("#buzz")
        expect(player.locator("#answer-input")).to_be_focused(timeout=5_000)
        player.fill("#answer-input", "a wild guess")
        player.press("#answer-input", "Enter")
        expect(mod.locator("#judge-line")).to_contain_text("judge suggests", timeout=10_000)
        expect(mod.locator("#buzz-line")).to_contain_text("Ada (Team B) buzzed")
        expect(mod.locator("#ruling button[data-rule=accept]")).to_be_enabled()
        assert visible_buttons(mod) == {"pause", "skip", "replay", "end"}

        # Everything needed to rule is on screen, at both laptop sizes, without scrolling.
        ruling_panel = (
            "#ruling",
            "#ruling button[data-rule=accept]",
            "#ruling button[data-rule=prompt]",
            "#judge-line",
        )
        question = (".dash .question", ".qhead", "#answer-line", "#q-text .buzzmark")
        for name, size in (("1366x768", LAPTOP), ("1280x720", SMALL_LAPTOP)):
            mod.set_viewport_size(size)
            assert_inside_viewport(mod, *ruling_panel, *question)
            shot(mod, f"dashboard-ruling-{name}")
        mod.set_viewport_size(LAPTOP)

        # Accepted: points and the bonus everywhere; the question list says who answered.
        mod.click("#ruling button[data-rule=accept]")
        team_b = mod.locator("#scoreboard li", has_text="Team B").locator(".score")
        expect(team_b).not_to_have_text("0")
        points = team_b.inner_text()
        expect(projector.locator("#scoreboard li", has_text="Team B").locator(".score")).to_have_text(points)
        expect(projector.locator("#lead")).to_have_text(f"Team B leads by {points}")
        expect(projector.locator("#scoreboard li.leader")).to_contain_text("Team B")
        expect(mod.locator("#bonus")).to_be_visible()
        expect(projector.locator("#bonus")).to_contain_text("Bonus for Team B")
        expect(mod.locator("#qnav li").nth(1)).to_contain_text(f"Ada +{points}")
        assert "undo" in visible_buttons(mod)
        shot(mod, "dashboard-bonus-1366x768")
        shot(projector, "projector-bonus-1920x1080")

        # Replay the tossup: its points and its bonus go on every screen, and it is read again …
        mod.click("button[data-cmd=replay]")
        expect(team_b).to_have_text("0")
        expect(mod.locator("#bonus")).to_be_hidden()
        expect(mod.locator("#phase-label")).to_contain_text("Reading")
        expect(mod.locator("#qnav li").nth(1).locator(".qout")).to_have_text("reading now")
        expect(projector.locator("#scoreboard li", has_text="Team B").locator(".score")).to_have_text("0")
        expect(projector.locator("#bonus")).to_be_hidden()
        expect(player.locator("#scoreboard li.mine .score")).to_have_text("0")
        # … and won again.
        expect(mod.locator("#q-progress")).not_to_contain_text("word 0/", timeout=15_000)
        expect(player.locator("#buzz")).to_be_enabled(timeout=15_000)
        player.click("#buzz")
        expect(player.locator("#answer-input")).to_be_focused(timeout=5_000)
        player.fill("#answer-input", "Magna Carta")
        player.press("#answer-input", "Enter")
        expect(mod.locator("#ruling button[data-rule=accept]")).to_be_enabled(timeout=10_000)
        mod.click("#ruling button[data-rule=accept]")
        expect(team_b).not_to_have_text("0")
        expect(projector.locator("#bonus")).to_contain_text("Bonus for Team B")
        expect(mod.locator("#qnav li").nth(1)).to_contain_text(f"Ada +{team_b.inner_text()}")

        # Undo the accepted tossup: its points and its bonus go, on every screen.
        mod.click("button[data-cmd=undo]")
        expect(team_b).to_have_text("0")
        expect(mod.locator("#bonus")).to_be_hidden()
        expect(mod.locator("#phase-label")).to_contain_text("Between questions")
        expect(mod.locator("#qnav li").nth(1).locator(".qout")).to_have_text("ruling undone")
        expect(mod.locator("#log")).to_contain_text("UNDONE Ada")
        expect(projector.locator("#scoreboard li", has_text="Team B").locator(".score")).to_have_text("0")
        expect(projector.locator("#bonus")).to_be_hidden()
        expect(projector.locator("#lead")).to_have_text("Tied at 0")
        expect(player.locator("#scoreboard li.mine .score")).to_have_text("0")
        shot(mod, "dashboard-after-undo-1366x768")

        # The tablet closes: its seat goes from connected to reconnecting.
        tablet.close()
        expect(ada).to_have_attribute("data-state", "reconnecting", timeout=10_000)
        expect(ada).to_have_text("reconnecting")
        expect(mod.locator("#roster-count")).to_have_text("0/2 connected")

        # After the last tossup, End (not Next): the projector shows the tie and the standings.
        assert visible_buttons(mod) == {"pause", "replay", "end"}
        expect(mod.locator("button[data-cmd=end]")).to_have_class(re.compile(r"\bprimary\b"))
        mod.click("button[data-cmd=end]")
        expect(mod.locator("#phase-label")).to_contain_text("Match over")
        assert visible_buttons(mod) == set()
        expect(projector.locator("#final-result")).to_have_text(
            "Final result — Tie at 0: Team A, Team B and tfidf"
        )
        expect(projector.locator(".standings tbody tr")).to_have_count(
            len(projector.locator("#scoreboard li").all())
        )
        expect(projector.locator(".standings tbody tr").first.locator("td").first).to_have_text("1=")
        assert projector.locator("#bonus").is_hidden() and projector.locator("#q-text").inner_text() == ""
        shot(projector, "projector-final-tie-1920x1080")


def test_the_projector_reads_across_a_room(server: str) -> None:
    """Large type at 1920×1080 while a tossup is read: the words, the scores and the leader."""
    from playwright.sync_api import expect

    with chromium() as browser:
        mod, code = create_match(browser, server)
        projector = browser.new_context(viewport=PROJECTOR).new_page()
        projector.goto(f"{server}/watch/{code}/")
        expect(projector.locator("#conn")).to_have_text("live", timeout=15_000)
        mod.click("button[data-cmd=start]")
        expect(projector.locator("#q-text .w").nth(5)).to_be_visible(timeout=15_000)
        px = projector.evaluate(
            """() => Object.fromEntries(['#q-text', '#scoreboard .score', '#scoreboard .name', '#q-index']
                 .map(s => [s, parseFloat(getComputedStyle(document.querySelector(s)).fontSize)]))"""
        )
        assert px["#q-text"] >= 40, px  # ≈ 1/24 of the screen height: readable from the back of a room
        assert px["#scoreboard .score"] >= 90, px
        assert px["#scoreboard .name"] >= 40 and px["#q-index"] >= 32, px
        width = projector.locator("#q-text").bounding_box()["width"]
        assert width >= 0.85 * PROJECTOR["width"], width  # the whole screen, not a narrow column
        assert projector.evaluate("document.scrollingElement.scrollWidth <= innerWidth")
        shot(projector, "projector-reading-1920x1080")
