"""The editor's desk and the writer's results in a real browser (Chromium at 1366×768, and the results
on a tablet), against uvicorn over a scratch database holding a played, fitted workshop packet
(``tests.support.editorial.scene``) and the toy TF-IDF bot as the server's workshop bot: a writer
submits a draft, the editor reviews a submission with its versions and predictions, the packet page's
category balance follows the ticks (the pages pass axe-core's WCAG 2.1 AA rules), and the writer's results show the ADVSCORE of her question.
Screenshots: tests/artifacts/screenshots/editor-review.png, writer-results.png (copied to docs/images)."""

from __future__ import annotations

import json
import re
from collections.abc import Iterator
from typing import Any

import pytest

from tests.bots.workshop_fixture import fixture_model
from tests.frontend.room import IPAD, LAPTOP, axe_violations, describe_violations, shot
from tests.support.browser import chromium
from tests.support.editorial import EDITOR, WRITER_PASSWORD
from tests.support.live import live_server, manage

pytestmark = pytest.mark.browser


@pytest.fixture(scope="module")
def server(tmp_path_factory: pytest.TempPathFactory, redis_url: str) -> Iterator[tuple[str, dict[str, int]]]:
    tmp = tmp_path_factory.mktemp("editor")
    model = tmp / "toy-tfidf.pkl"
    fixture_model().save(model)
    ids: dict[str, int] = {}

    def build(env: dict[str, str]) -> None:
        code = "import json; from tests.support.editorial import scene; print(json.dumps(scene()))"
        ids.update(json.loads(manage(env, "shell", "-c", code).strip().splitlines()[-1]))

    with pytest.MonkeyPatch.context() as mp:
        mp.setenv("TOSSUP_WORKSHOP_BOTS", str(model))
        with live_server(tmp, redis_url, build) as (url, _):
            yield url, ids


def login(
    browser: Any, base: str, user: str, password: str, then: str, viewport: dict[str, int] = LAPTOP
) -> Any:
    from playwright.sync_api import expect

    page = browser.new_context(viewport=viewport).new_page()
    page.goto(f"{base}/accounts/login/?next={then}")
    page.fill("#id_username", user)
    page.fill("#id_password", password)
    page.click("#login-form button[type=submit]")
    expect(page).to_have_url(f"{base}{then}")
    return page


def test_a_writer_submits_the_editor_reviews_and_the_writer_sees_her_advscore(
    server: tuple[str, dict[str, int]],
) -> None:
    from playwright.sync_api import expect

    base, ids = server
    with chromium() as browser:
        alice = login(browser, base, "alice", WRITER_PASSWORD, "/workshop/submissions/")
        row = alice.locator(
            "tr", has=alice.locator(f'form[action="/workshop/draft/{ids["fresh_draft"]}/submit/"]')
        )
        row.get_by_role("button", name="Submit to the editor").click()
        # The first submit waits while the server loads its workshop bot (the toy TF-IDF model).
        expect(alice.locator(".banner.good")).to_contain_text("Submitted", timeout=60_000)
        paris = alice.locator("tr", has_text="Paris").first
        expect(paris).to_contain_text("Submitted")
        expect(paris).to_contain_text("v1: tfidf")  # the server's prediction, kept with the version

        ed = login(browser, base, *EDITOR, "/editor/")
        waiting = ed.locator("section", has=ed.get_by_role("heading", name=re.compile("Waiting for review")))
        expect(waiting.locator("tbody tr")).to_have_count(2)  # bob's Seine and alice's Paris, just submitted
        ed.goto(f"{base}/editor/submission/{ids['review']}/")
        expect(ed.locator("h1")).to_contain_text("Seine")
        expect(ed.locator("#rv-versions ~ .scroll tbody tr")).to_have_count(2)  # the edit and the original
        expect(ed.get_by_role("button", name="Accept version 2")).to_be_visible()
        expect(ed.locator("ol")).to_contain_text("Sequana accepted")
        shot(ed, "editor-review")
        assert not axe_violations(ed), describe_violations(axe_violations(ed))  # WCAG 2.1 AA

        ed.get_by_role("button", name="Accept version 2").click()
        ed.goto(f"{base}/editor/packets/")
        balance = ed.locator('#pk-balance tr[data-category="Geography"] .picked')
        expect(balance).to_have_text("0")
        ed.locator('input[name="pick"]').first.check()
        expect(balance).to_have_text("1")
        assert not axe_violations(ed), describe_violations(axe_violations(ed))

        alice.goto(f"{base}/workshop/results/")
        curie = alice.locator("tr", has_text="Curie")
        expect(curie.locator("td.advscore")).to_have_text(re.compile(r"^-?\d+\.\d{3}$"))
        expect(curie).to_contain_text("ann: token 23/")
        expect(curie).to_contain_text("tfidf: token 7/")  # the live bot's wrong buzz beside its prediction
        expect(alice.locator(".writer-results h2")).to_have_text(["alice"])  # only her own
        expect(alice.locator(".stat", has_text="Rank among writers")).to_contain_text(re.compile(r"\d of 2"))
        shot(alice, "writer-results")
        assert not axe_violations(alice), describe_violations(axe_violations(alice))

        tablet = login(browser, base, "alice", WRITER_PASSWORD, "/workshop/results/", viewport=IPAD)
        expect(tablet.locator("td.advscore").first).to_be_visible()
        assert tablet.evaluate("document.scrollingElement.scrollWidth <= innerWidth + 1"), (
            "the page scrolls sideways"
        )
