"""Multimodal tossups in real Chromium against a real server (issue 9, item 3): an image token
appears on a tablet and on the projector at its place among the words, loaded from Tossup by its
hash; the tablet's BUZZ waits out the image's reveal lockout; a delay shows a pause mark.
Screenshot: tests/artifacts/screenshots/tablet-image-token.png."""

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
    row = {
        "type": "tossup", "set": "2099-MEDIA", "year": 2099, "packet": "1", "number": 1,
        "question": QUESTION, "answer": "<b><u>red</u></b>", "category": "Fine Arts", "subcategory": "",
    }  # fmt: skip
    (packet / "media.jsonl").write_text(json.dumps(row) + "\n", encoding="utf-8")
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
