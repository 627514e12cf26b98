"""Lineups and timeouts in real Chromium (issue 33 items 1 and 2): under NAQT's format (four players a
team, substitutions at halftime, before overtime and during a timeout, one 30-second timeout a game)
the moderator at 1366×768 sees who plays and who sits on the bench, is refused a substitution
mid-tossup, calls a timeout between tossups and substitutes during it; the projector shows the
timeout with its countdown and the timeouts left (a two-tossup match has no halves); the moderator
undoes the timeout from the keyboard: it is Team A's again and the projector drops it; the same dashboard on a tablet. Screenshots: ``tests.support.browser.shots_dir``."""

from __future__ import annotations

import re
from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.frontend.room import IPAD, LAPTOP, PROJECTOR, Room, join, moderate, room_server
from tests.support.browser import chromium, shots_dir

pytestmark = pytest.mark.browser


# More seats for the tablet's team through the join API (the play page set the CSRF cookie).
JOIN_JS = """async ([code, names, team]) => {
  const csrf = (document.cookie.match(/csrftoken=([^;]+)/) || [])[1] || "";
  for (const name of names) {
    const res = await fetch("/api/join", {method: "POST", headers: {"Content-Type": "application/json", "X-CSRFToken": csrf},
      body: JSON.stringify({code, name, team})});
    if (!res.ok) throw new Error(name + ": " + res.status + " " + await res.text());
  }
}"""


ROSTER_JS = """([code, token]) => fetch(`/api/match/${code}/players`, {headers: {"X-Moderator-Token": token}})
  .then((r) => r.json()).then((b) => b.players)"""


@pytest.fixture(scope="module")
def room(tmp_path_factory: pytest.TempPathFactory, redis_url: str) -> Iterator[Room]:
    with room_server(Path(tmp_path_factory.mktemp("room")), redis_url) as r:
        yield r


def names(page, selector: str) -> list[str]:
    return page.locator(selector).all_inner_texts()


def test_a_substitution_and_a_timeout_from_the_dashboard_reach_the_projector(room: Room) -> None:
    from playwright.sync_api import expect

    match = room.create_match(tossups=2, wpm=600, auto_advance=False)
    errors: list[str] = []
    with chromium() as browser:
        tablet = browser.new_context(viewport=IPAD, has_touch=True).new_page()
        join(tablet, room.url, match["code"], "Ada", "Team A")
        tablet.evaluate(JOIN_JS, [match["code"], ["Bea", "Cy", "Dee", "Eve"], "Team A"])
        tablet.evaluate(JOIN_JS, [match["code"], ["Zed"], "Team B"])
        mod = browser.new_context(viewport=LAPTOP).new_page()
        proj = browser.new_context(viewport=PROJECTOR).new_page()
        for page in (mod, proj, tablet):
            page.on("pageerror", lambda exc, page=page: errors.append(f"{page.url}: {exc}"))
        mod.goto(match["dashboard_url"])
        proj.goto(match["scoreboard_url"])
        expect(mod.locator("#conn")).to_have_text("live", timeout=15_000)
        team_a = mod.locator("[data-lineup-team]", has_text="Team A")
        # Four play at once under NAQT: the fifth to join sits on the bench.
        expect(team_a.locator(".lineup-active li")).to_have_text(["Ada", "Bea", "Cy", "Dee"])
        expect(team_a.locator(".lineup-bench li")).to_have_text(["Eve"])
        expect(mod.locator("#lineup-limit")).to_contain_text("4 play at once")

        mod.click("button[data-cmd=start]")
        expect(mod.locator("#phase-label")).to_contain_text("Reading")
        expect(team_a.locator(".lineup-sub")).to_be_hidden()  # no substitution mid-tossup
        seats = mod.evaluate(ROSTER_JS, [match["code"], match["moderator_token"]])
        ids = {p["name"]: p["player_id"] for p in seats}
        team_id = int(team_a.get_attribute("data-lineup-team"))
        with pytest.raises(Exception, match="no_substitution"):
            moderate(
                mod, match, name="substitute", team_id=team_id, player_in=ids["Eve"], player_out=ids["Ada"]
            )
        expect(proj.locator("#periods")).to_be_empty()  # no halves in a two-tossup match, no timeout yet

        mod.click("button[data-cmd=skip]")
        expect(mod.locator("#phase-label")).to_contain_text("Between questions")
        team_a.locator("button[data-timeout]").click()
        expect(mod.locator("#lineup-periods .timeout-running")).to_contain_text(
            re.compile(r"Timeout: Team A · \d+ s")
        )
        expect(team_a.locator("button[data-timeout]")).to_have_text("Timeout (0 left)")
        expect(team_a.locator("button[data-timeout]")).to_be_disabled()
        team_a.locator("select[name=player_in]").select_option(label="Eve")
        team_a.locator("select[name=player_out]").select_option(label="Ada")
        team_a.locator("button[data-substitute]").click()
        expect(team_a.locator(".lineup-active li")).to_have_text(["Bea", "Cy", "Dee", "Eve"])  # in seat order
        expect(team_a.locator(".lineup-bench li")).to_have_text(["Ada"])
        expect(mod.locator("#log")).to_contain_text("Team A lineup (own timeout): Eve in, Ada out")
        expect(mod.locator("#log")).to_contain_text("timeout: Team A (30 s, 0 left)")

        # The projector: the half, the timeout counting down, the timeouts left.
        expect(proj.locator("#periods .timeout-running")).to_contain_text(
            re.compile(r"Timeout: Team A · \d+ s")
        )
        expect(proj.locator("#periods .timeout-running")).not_to_contain_text("· 30 s")  # it counts down
        expect(proj.locator("#periods .timeouts-left[data-team]").first).to_have_text("Team A 0")
        expect(proj.locator("#periods")).to_contain_text("Team B 1")
        mod.locator("#lineups").scroll_into_view_if_needed()
        mod.screenshot(path=str(shots_dir() / "tournament_lineups_1366.png"))
        proj.screenshot(path=str(shots_dir() / "tournament_timeout_projector.png"))

        # A mis-click taken back from the keyboard: Team A has its timeout again, on both screens.
        undo = mod.get_by_role("button", name="Undo timeout (Team A)")
        undo.focus()
        mod.keyboard.press("Enter")
        expect(undo).to_be_hidden()
        expect(mod.locator("#log")).to_contain_text("UNDONE timeout of Team A (1 left)")
        expect(mod.locator("#lineup-periods .timeouts-left[data-team]").first).to_have_text("Team A 1")
        expect(proj.locator("#periods")).to_be_empty()  # as before the timeout: none used, no halves

        # The same desk on a tablet.
        desk = browser.new_context(viewport=IPAD, has_touch=True).new_page()
        desk.on("pageerror", lambda exc: errors.append(f"tablet desk: {exc}"))
        desk.goto(match["dashboard_url"])
        expect(desk.locator("#conn")).to_have_text("live", timeout=15_000)
        expect(
            desk.locator("[data-lineup-team]", has_text="Team A").locator(".lineup-bench li")
        ).to_have_text(["Ada"])
        desk.locator("#lineups").scroll_into_view_if_needed()
        box = desk.locator("#lineups").bounding_box()
        assert box is not None and box["x"] >= 0 and box["x"] + box["width"] <= IPAD["width"] + 0.5, box
        desk.screenshot(path=str(shots_dir() / "tournament_lineups_tablet.png"))
    assert not errors, errors
