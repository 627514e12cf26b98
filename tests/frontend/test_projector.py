"""The projector page (/watch/<code>/) in real Chromium against a real server, at 1920×1080 and
1280×720: the buzz banner is its own readable box (not the player page's BUZZ button), the
longest tossup and the longest bonus of the shared qbreader dump fit the screen (a projector
cannot scroll), and the end of the match shows the result and the standings, with no "live"
badge and no leader pill. Every page names a favicon that loads: no request 404s.
Screenshots: tests/artifacts/screenshots/projector-*.png.
"""

from __future__ import annotations

import gzip
import json
import re
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from tests.frontend.room import PHONE, PROJECTOR, Room, join, moderate, room_server, shot
from tests.support.browser import chromium
from tests.support.live import manage

pytestmark = pytest.mark.browser

SMALL_PROJECTOR = {"width": 1280, "height": 720}
DUMP = Path("packets") / "qbreader_packets_2012_2022.jsonl.gz"
LONGEST_SET = "Longest questions"

# Every event of the match as the `watch` socket sees it, kept in window.__events of the page
# (the test waits on them instead of sleeping); resolves once the snapshot came.
LISTEN_JS = """(code) => new Promise((resolve, reject) => {
  window.__events = [];
  const ws = new WebSocket(`ws://${location.host}/ws/match/${code}/watch/`);
  ws.onmessage = (msg) => {
    const f = JSON.parse(msg.data);
    if (f.type === "snapshot") resolve(f.state);
    if (f.type === "event") window.__events.push({ event: f.event, data: f.data });
  };
  ws.onerror = () => reject(new Error("watch socket failed"));
})"""

# What is below the fold: the page's own scroll height, and every drawn element whose box ends
# below (or right of) the window.
OVERFLOW_JS = """() => {
  const below = [];
  for (const el of document.body.querySelectorAll("*")) {
    const r = el.getBoundingClientRect();
    if (!r.width || !r.height || getComputedStyle(el).visibility === "hidden") continue;
    if (r.bottom > innerHeight + 0.5 || r.right > innerWidth + 0.5) {
      below.push(`${el.tagName.toLowerCase()}#${el.id}.${el.className} bottom=${Math.round(r.bottom)}`);
    }
  }
  return { scrollHeight: document.documentElement.scrollHeight, innerHeight, below: below.slice(0, 8), count: below.length };
}"""

# The colours and box of an element as drawn (computed styles).
STYLE_JS = """(el) => {
  const cs = getComputedStyle(el);
  return { color: cs.color, background: cs.backgroundColor, radius: cs.borderTopLeftRadius, shadow: cs.boxShadow,
           height: el.getBoundingClientRect().height, fontSize: parseFloat(cs.fontSize) };
}"""


@pytest.fixture(scope="module")
def room(tmp_path_factory: pytest.TempPathFactory, redis_url: str) -> Iterator[Room]:
    with room_server(Path(tmp_path_factory.mktemp("projector")), redis_url) as r:
        yield r


def wait_event(page: Any, name: str, count: int = 1) -> dict[str, Any]:
    """The ``count``-th event ``name`` the listening page got (waits for it)."""
    js = "([name, count]) => window.__events.filter((e) => e.event === name).length >= count"
    page.wait_for_function(js, arg=[name, count], timeout=20_000)
    return dict(
        page.evaluate(
            "([name, n]) => window.__events.filter((e) => e.event === name)[n].data", [name, count - 1]
        )
    )


def rgb(css: str) -> tuple[float, ...]:
    """(r, g, b, alpha) of a computed ``rgb()``/``rgba()`` colour."""
    parts = [float(x) for x in re.findall(r"[\d.]+", css)]
    return tuple([*parts[:3], parts[3] if len(parts) > 3 else 1.0])


def contrast(fg: str, bg: str) -> float:
    """WCAG 2.1 contrast ratio of two opaque colours."""

    def luminance(c: tuple[float, ...]) -> float:
        lin = [(v / 255 / 12.92) if v / 255 <= 0.04045 else ((v / 255 + 0.055) / 1.055) ** 2.4 for v in c[:3]]
        return 0.2126 * lin[0] + 0.7152 * lin[1] + 0.0722 * lin[2]

    a, b = sorted((luminance(rgb(fg)), luminance(rgb(bg))), reverse=True)
    return (a + 0.05) / (b + 0.05)


def assert_fits(page: Any, what: str) -> None:
    """Nothing of the page is below the fold (or right of the window): a projector cannot scroll."""
    fact = page.evaluate(OVERFLOW_JS)
    size = page.viewport_size
    assert fact["scrollHeight"] <= fact["innerHeight"], (what, size, fact)
    assert fact["count"] == 0, (what, size, fact)


def test_contrast_ratio_is_the_wcag_one() -> None:
    assert contrast("rgb(0, 0, 0)", "rgb(255, 255, 255)") == pytest.approx(21)
    assert contrast("rgb(118, 118, 118)", "rgb(255, 255, 255)") == pytest.approx(4.54, abs=0.01)


def test_buzz_banner_is_readable_and_the_end_shows_the_result(room: Room) -> None:
    from playwright.sync_api import expect

    match = room.create_match(tossups=2, wpm=150, answer_window=30)  # the moderator rules
    errors: list[str] = []
    with chromium() as browser:
        projector = browser.new_context(viewport=PROJECTOR).new_page()
        phone = browser.new_context(viewport=PHONE, has_touch=True, is_mobile=True).new_page()
        desk = browser.new_page()
        for page in (projector, phone):
            page.on("pageerror", lambda exc: errors.append(str(exc)))
        join(phone, room.url, match["code"], "Ada", "Team A")
        projector.goto(f"{room.url}/watch/{match['code']}/")
        expect(projector.locator("#conn")).to_have_text("live")
        desk.goto(room.url)
        desk.evaluate(LISTEN_JS, match["code"])
        moderate(desk, match, name="start")
        expect(phone.locator("#q-text .w").nth(3)).to_be_visible(timeout=15_000)
        expect(phone.locator("#buzz")).to_be_enabled()
        button = phone.locator("#buzz").evaluate(STYLE_JS)  # the player page's BUZZ bar, as drawn
        phone.locator("#buzz").tap()

        banner = projector.locator("#banner")
        expect(banner).to_have_text("Ada (Team A) buzzed")
        shot(projector, "projector-buzz-1920x1080")
        drawn = banner.evaluate(STYLE_JS)
        ratio = contrast(drawn["color"], drawn["background"])
        assert rgb(drawn["background"])[3] == 1, drawn  # its own opaque background, measured as drawn
        assert ratio >= 4.5, (ratio, drawn)
        assert "buzz" not in (banner.get_attribute("class") or "").split(), banner.get_attribute("class")
        assert drawn["background"] != "rgb(192, 38, 45)" and drawn["shadow"] == "none", drawn
        assert drawn["radius"] != button["radius"] and drawn["background"] != button["background"], (
            drawn,
            button,
        )
        assert drawn["height"] < 2 * drawn["fontSize"] < button["height"], (
            drawn,
            button,
        )  # a line, not a bar
        assert drawn["fontSize"] >= 40, drawn  # read across the room

        # Accepted: the projector names the leader while the match runs …
        phone.fill("#answer-input", "Moby Dick")
        phone.press("#answer-input", "Enter")
        wait_event(desk, "awaiting_ruling")
        moderate(desk, match, name="rule", verdict="accept")
        expect(projector.locator("#scoreboard li.leader .badge")).to_have_text("leads")
        expect(projector.locator("#lead")).to_contain_text("Team A leads by")

        # … and once it is over, the result and the standings: no "live", no leader.
        moderate(desk, match, name="end")
        points = int(wait_event(desk, "match_ended")["scores"][str(match["teams"][0]["team_id"])])
        assert points > 0
        expect(projector.locator("#final-result")).to_have_text(f"Final result — Team A wins, {points} to 0")
        expect(projector.locator("#conn")).to_have_text("final")
        expect(projector.locator("#scoreboard .badge, #scoreboard li.leader")).to_have_count(0)
        expect(projector.locator("#lead")).to_have_text("")
        expect(projector.locator("#q-index")).to_have_text("Final")
        rows = projector.locator(".standings tbody tr")
        expect(rows).to_have_count(2)
        expect(rows.nth(0).locator("td")).to_have_text(["1", "Team A", str(points)])
        expect(rows.nth(1).locator("td")).to_have_text(["2", "Team B", "0"])
        assert "live" not in projector.locator("body").inner_text()
        assert_fits(projector, "final")
        shot(projector, "projector-final-1920x1080")

        # A reload (the snapshot of an ended match) shows the same end.
        projector.reload()
        expect(projector.locator("#final-result")).to_have_text(f"Final result — Team A wins, {points} to 0")
        expect(projector.locator("#conn")).to_have_text("final")
        expect(projector.locator("#scoreboard .badge")).to_have_count(0)

        # A tie is said as a tie.
        tie = room.create_match(tossups=1)
        projector.goto(f"{room.url}/watch/{tie['code']}/")
        expect(projector.locator("#conn")).to_have_text("live")
        moderate(desk, tie, name="start")
        moderate(desk, tie, name="end")
        expect(projector.locator("#final-result")).to_have_text("Final result — Tie at 0: Team A and Team B")
        expect(projector.locator(".standings tbody tr td:first-child")).to_have_text(["1=", "1="])
        expect(projector.locator("#conn")).to_have_text("final")
    assert not errors, errors


def longest_questions(dump: Path) -> tuple[dict[str, Any], dict[str, Any]]:
    """The longest tossup (by the characters of its question) and the longest bonus (lead-in and
    parts) of the qbreader dump, among those that import (an answer line; as many answers as parts)."""
    tossup: dict[str, Any] = {}
    bonus: dict[str, Any] = {}

    def size(b: dict[str, Any]) -> int:
        return len(b.get("leadin") or "") + sum(len(p) for p in b["parts"])

    with gzip.open(dump, "rt", encoding="utf-8") as lines:
        for line in lines:
            item = json.loads(line)
            if item["type"] == "tossup" and item.get("question") and item.get("answer"):
                if len(item["question"]) > len(tossup.get("question", "")):
                    tossup = item
            elif item["type"] == "bonus":
                parts, answers = item.get("parts") or [], item.get("answers") or []
                whole = parts and len(parts) == len(answers) and all(parts) and all(answers)
                if whole and (not bonus or size(item) > size(bonus)):
                    bonus = item
    return tossup, bonus


def test_the_longest_tossup_and_bonus_fit_the_projector(
    room: Room, shared_data: Path, tmp_path: Path
) -> None:
    from playwright.sync_api import expect

    tossup, bonus = longest_questions(shared_data / DUMP)
    packet = tmp_path / "longest.jsonl"
    common = {"set": LONGEST_SET, "year": 2022, "packet": "1", "number": 1}
    packet.write_text(json.dumps({**tossup, **common}) + "\n" + json.dumps({**bonus, **common}) + "\n")
    manage(room.env, "import_questions", str(packet), "--set", LONGEST_SET)
    config = {
        "wpm": 2400,
        "dead_time": 60,
        "answer_window": 60,
        "bonus_part_window": 60,
        "auto_advance": False,
    }
    out = manage(
        room.env,
        "create_match",
        "--packet",
        LONGEST_SET,
        "--teams",
        "Team A,Team B",
        "--bot",
        "TF-IDF bot",  # three score cards, as in the room
        "--config",
        json.dumps(config),
        "--json",
        "--base-url",
        room.url,
    )
    match = json.loads(out)
    errors: list[str] = []
    with chromium() as browser:
        screens = {}
        for size in (PROJECTOR, SMALL_PROJECTOR):
            page = browser.new_context(viewport=size).new_page()
            page.on("pageerror", lambda exc: errors.append(str(exc)))
            page.goto(f"{room.url}/watch/{match['code']}/")
            expect(page.locator("#conn")).to_have_text("live")
            screens[f"{size['width']}x{size['height']}"] = page
        phone = browser.new_context(viewport=PHONE, has_touch=True, is_mobile=True).new_page()
        join(phone, room.url, match["code"], "Ada", "Team A")
        desk = browser.new_page()
        desk.goto(room.url)
        desk.evaluate(LISTEN_JS, match["code"])
        moderate(desk, match, name="start")
        words = wait_event(desk, "tossup_started")["token_count"]
        assert words > 200, words

        # The tossup read to its last word (dead time), then with the buzz banner under it.
        for name, page in screens.items():
            expect(page.locator("#q-text .w")).to_have_count(words, timeout=20_000)
            assert_fits(page, "tossup fully read")
            px = page.locator("#q-text").evaluate("el => parseFloat(getComputedStyle(el).fontSize)")
            assert px >= 18, (name, px)  # condensed, still readable
            shot(page, f"projector-longest-tossup-{name}")
        phone.locator("#buzz").tap()
        for name, page in screens.items():
            expect(page.locator("#banner")).to_have_text("Ada (Team A) buzzed")
            assert_fits(page, "buzz on the tossup")
            shot(page, f"projector-longest-buzz-{name}")

        # Accepted: the bonus; its first two parts missed, the last part read.
        phone.fill("#answer-input", "archives")
        phone.press("#answer-input", "Enter")
        wait_event(desk, "awaiting_ruling")
        moderate(desk, match, name="rule", verdict="accept")
        parts = len(bonus["parts"])
        for part in range(parts - 1):
            expect(phone.locator("#bonus-text")).to_contain_text(f"Part {part + 1}")
            phone.fill("#bonus-input", "pass")
            phone.press("#bonus-input", "Enter")
            wait_event(desk, "awaiting_ruling", 2 + part)
            moderate(desk, match, name="rule", verdict="reject")
        last = bonus["parts"][-1]
        for name, page in screens.items():
            expect(page.locator(".bonus-parts li").nth(parts - 1)).to_have_class("current")
            expect(page.locator(".bonus-text")).to_contain_text(last[:40])
            expect(page.locator("#reveal")).to_contain_text("archives")  # the tossup's answer stays
            assert_fits(page, "last bonus part")
            shot(page, f"projector-longest-bonus-{name}")

        moderate(desk, match, name="end")
        for page in screens.values():
            expect(page.locator("#final-result")).to_contain_text("Team A wins")
            assert_fits(page, "final")
    assert not errors, errors


def test_every_page_has_a_favicon_and_no_request_404s(room: Room) -> None:
    match = room.create_match(tossups=1)
    missing: list[str] = []
    with chromium() as browser:
        page = browser.new_context(viewport=PROJECTOR).new_page()
        page.on("response", lambda r: missing.append(r.url) if r.status == 404 else None)
        icons: list[str] = []
        page.on("request", lambda r: icons.append(r.url) if "favicon" in r.url else None)
        for path in ("/", f"/play/?code={match['code']}", f"/watch/{match['code']}/", "/moderator/"):
            page.goto(f"{room.url}{path}")
            page.wait_for_load_state("networkidle")
            href = page.locator("link[rel=icon]").get_attribute("href")
            assert href and href.endswith(".svg"), (path, href)
        icon = page.request.get(f"{room.url}{href}")
        assert icon.status == 200 and icon.headers["content-type"].startswith("image/svg+xml"), icon.headers
        assert "<svg" in icon.text()
        assert icons, "the browser never asked for the favicon"
        assert all("/favicon.ico" not in url for url in icons), icons  # it asks for ours, not the default
    assert not missing, missing
