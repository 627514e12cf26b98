"""Multimodal tossups in real Chromium against a real server (issue 9, item 3): an image token
appears on a tablet and on the projector at its place among the words, loaded from Tossup by its
hash; the tablet's BUZZ waits out the image's reveal lockout; a delay shows a pause mark. A bonus
part's image appears as an image on the tablet, the projector and the dashboard once that part is
read, and not before. Screenshots: tests/artifacts/screenshots/tablet-image-token.png,
tablet-bonus-image.png."""

from __future__ import annotations

import hashlib
import json
import struct
import zlib
from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.frontend.room import IPAD, PROJECTOR, Room, join, moderate, room_server, shot
from tests.support.browser import chromium
from tests.support.live import manage

pytestmark = pytest.mark.browser


def png(width: int, height: int, rgb: tuple[int, int, int]) -> bytes:
    """A solid-colour RGB PNG."""

    def chunk(kind: bytes, data: bytes) -> bytes:
        return struct.pack(">I", len(data)) + kind + data + struct.pack(">I", zlib.crc32(kind + data))

    row = b"\x00" + bytes(rgb) * width
    ihdr = struct.pack(">IIBBBBB", width, height, 8, 2, 0, 0, 0)
    return (
        b"\x89PNG\r\n\x1a\n"
        + chunk(b"IHDR", ihdr)
        + chunk(b"IDAT", zlib.compress(row * height))
        + chunk(b"IEND", b"")
    )


RED = png(160, 100, (200, 30, 40))
BLUE = png(120, 80, (30, 60, 200))
QUESTION = (
    "Name this colour [[image:red.png|a red rectangle|lockout=3]] of danger [[delay:1]] "
    "and of stop signs, seen here in a flag."
)


@pytest.fixture(scope="module")
def room(tmp_path_factory: pytest.TempPathFactory, redis_url: str) -> Iterator[Room]:
    tmp = Path(tmp_path_factory.mktemp("media-room"))
    packet = tmp / "packet"
    packet.mkdir()
    (packet / "red.png").write_bytes(RED)
    (packet / "blue.png").write_bytes(BLUE)
    row = {
        "type": "tossup", "set": "2099-MEDIA", "year": 2099, "packet": "1", "number": 1,
        "question": QUESTION, "answer": "<b><u>red</u></b>", "category": "Fine Arts", "subcategory": "",
    }  # fmt: skip
    bonus = {
        "type": "bonus", "set": "2099-MEDIA", "year": 2099, "packet": "1", "number": 1,
        "leadin": "For 10 points each, name these colours.",
        "parts": ["The colour of a clear sky.", "This colour [[image:blue.png|a blue rectangle]] shown here.",
                  "The colour of grass."],
        "answers": ["<b><u>blue</u></b>", "<b><u>blue</u></b>", "<b><u>green</u></b>"],
        "category": "Fine Arts", "subcategory": "",
    }  # fmt: skip
    lines = [json.dumps(row), json.dumps(bonus)]
    (packet / "media.jsonl").write_text("\n".join(lines) + "\n", encoding="utf-8")
    with room_server(tmp, redis_url) as r:
        manage(r.env, "import_questions", str(packet / "media.jsonl"))
        yield r


def test_an_image_token_appears_on_the_tablet_at_its_place_after_its_lockout(room: Room) -> None:
    from playwright.sync_api import expect

    out = manage(
        room.env, "create_match", "--packet", "2099-MEDIA", "--teams", "Team A,Team B", "--tossups", "1",
        "--config", json.dumps({"wpm": 30}), "--json", "--base-url", room.url,
    )  # fmt: skip
    match = json.loads(out)
    errors: list[str] = []
    with chromium() as browser:
        tablet = browser.new_context(viewport=IPAD, has_touch=True).new_page()
        projector = browser.new_context(viewport=PROJECTOR).new_page()
        for page in (tablet, projector):
            page.on("pageerror", lambda exc: errors.append(str(exc)))
        join(tablet, room.url, match["code"], "Ada", "Team A")
        projector.goto(f"{room.url}/watch/{match['code']}/")
        sha = hashlib.sha256(RED).hexdigest()
        moderate(tablet, match, name="start")
        # 30 wpm: a token every 2 s, the image at 6 s. Once "this" shows, the image is 4 s away,
        # and nothing of it (not even its hash) has reached the tablet.
        expect(tablet.locator("#q-text .w").nth(1)).to_have_text("this", timeout=15_000)
        assert sha not in tablet.content() and tablet.locator("#q-text .token-image").count() == 0
        image = tablet.locator("#q-text .token-image img")
        expect(image).to_have_count(1, timeout=15_000)
        # Token 3 (after "Name this colour"): the image sits at its place among the words.
        assert image.evaluate("(img) => img.closest('.w').dataset.i") == "3"
        assert tablet.locator("#q-text .w").nth(2).inner_text() == "colour"
        assert image.get_attribute("alt") == "a red rectangle"
        assert image.get_attribute("src") == f"/media/{sha}"
        # Loaded from Tossup (the server serves it once revealed), at its real size.
        tablet.wait_for_function(
            "() => document.querySelector('#q-text .token-image img').naturalWidth === 160"
        )
        # The reveal lockout: BUZZ waits, then opens.
        buzz = tablet.locator("#buzz")
        expect(buzz).to_have_text("WAIT")
        expect(buzz).to_be_disabled()
        shot(tablet, "tablet-image-token")
        expect(buzz).to_have_text("BUZZ", timeout=6_000)
        expect(buzz).to_be_enabled()
        # The delay after "danger" is a visible pause mark, announced as a pause.
        delay = tablet.locator("#q-text .token-delay")
        expect(delay).to_have_count(1, timeout=12_000)
        assert delay.get_attribute("aria-label") == "pause, 1 seconds"
        # The projector shows the same image at the same place.
        proj_image = projector.locator("#q-text .token-image img")
        expect(proj_image).to_have_count(1)
        assert proj_image.evaluate("(img) => img.closest('.w').dataset.i") == "3"
    assert not errors, errors


def test_a_bonus_parts_image_appears_when_that_part_is_read_and_not_before(room: Room) -> None:
    from playwright.sync_api import expect

    out = manage(
        room.env, "create_match", "--packet", "2099-MEDIA", "--teams", "Team A,Team B", "--tossups", "1",
        "--config", json.dumps({"wpm": 240, "auto_rule": True}), "--json", "--base-url", room.url,
    )  # fmt: skip
    match = json.loads(out)
    blue = hashlib.sha256(BLUE).hexdigest()
    errors: list[str] = []
    with chromium() as browser:
        tablet = browser.new_context(viewport=IPAD, has_touch=True).new_page()
        projector = browser.new_context(viewport=PROJECTOR).new_page()
        dashboard = browser.new_context(viewport=PROJECTOR).new_page()
        for page in (tablet, projector, dashboard):
            page.on("pageerror", lambda exc: errors.append(str(exc)))
        join(tablet, room.url, match["code"], "Ada", "Team A")
        projector.goto(f"{room.url}/watch/{match['code']}/")
        dashboard.goto(match["dashboard_url"])
        moderate(tablet, match, name="start")
        # Buzz once the tossup's image lockout is over, and earn the bonus.
        buzz = tablet.locator("#buzz")
        expect(tablet.locator("#q-text .token-image img")).to_have_count(1, timeout=15_000)
        expect(buzz).to_have_text("BUZZ", timeout=6_000)
        # One CI run's buzz got no answer form (unexplained; the tablet frees BUZZ after 3 s without a
        # reply, as after a lost frame). A player taps again: so does the test, keeping what it was told.
        told = []
        for _ in range(3):
            buzz.click()
            try:
                expect(tablet.locator("#answer-input")).to_be_visible(timeout=4_000)
                break
            except AssertionError:
                told.append(tablet.locator("#toast").inner_text())
        else:
            raise AssertionError(f"three buzzes got no answer form; the tablet said {told}")
        tablet.fill("#answer-input", "red")
        tablet.press("#answer-input", "Enter")
        # Part 1 is read: words only, and nothing of part 2's image (not even its hash) on the
        # tablet or the projector.
        text = tablet.locator("#bonus-text")
        expect(text).to_contain_text("clear sky", timeout=10_000)
        expect(projector.locator("#bonus")).to_contain_text("clear sky")
        assert text.locator("img").count() == 0
        assert blue not in tablet.content() and blue not in projector.content()
        expect(tablet.locator("#bonus-input")).to_be_visible()
        tablet.fill("#bonus-input", "blue")
        tablet.press("#bonus-input", "Enter")
        # Part 2 is read: its image at its place among the words, loaded from Tossup at its size.
        image = text.locator(".token-image img")
        expect(image).to_have_count(1, timeout=10_000)
        assert image.get_attribute("alt") == "a blue rectangle"
        assert image.get_attribute("src") == f"/media/{blue}"
        expect(text).to_contain_text("This colour")
        tablet.wait_for_function(
            "() => document.querySelector('#bonus-text .token-image img').naturalWidth === 120"
        )
        shot(tablet, "tablet-bonus-image")
        # The projector and the moderator's dashboard show it as an image too.
        for page, selector in ((projector, "#bonus .bonus-text"), (dashboard, "#bonus li.current")):
            expect(page.locator(f"{selector} .token-image img")).to_have_count(1, timeout=10_000)
            page.wait_for_function(
                f"() => document.querySelector('{selector} .token-image img')?.naturalWidth === 120"
            )
    assert not errors, errors
