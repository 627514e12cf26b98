"""The workshop in real Chromium against a real server whose only bot is the test's small TF-IDF bot
(``TOSSUP_WORKSHOP_BOTS``) and an LLM endpoint enabled for writing (a stand-in of
``tests.support.fake_llm``): an organiser invites a writer; the writer, keyboard only, types an answer
line (a parse error first) and a tossup, sees the guesses and the buzz marker appear, then the LLM's
card with its cost and its marker, moves the giveaway clue later and sees the marker move later, saves
versions and reads the buzz shift; the LLM's key is nowhere in the page; no WCAG AA violation on a
laptop (1366×768) and a tablet (820×1180). Screenshots: workshop-*.png (``tests.support.browser.shots_dir``)."""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.bots.workshop_fixture import ANSWER_LINE, GIVEAWAY, THRESHOLD, VAGUE, curie_llm, fixture_model
from tests.frontend.room import IPAD, LAPTOP, ORGANISER, axe_violations, describe_violations
from tests.support.browser import chromium, shots_dir
from tests.support.fake_llm import fake_llm
from tests.support.live import live_server, manage

KEY = "sk-browser-0123456789-never-in-a-page"

pytestmark = pytest.mark.browser


@pytest.fixture(scope="module")
def server(tmp_path_factory: pytest.TempPathFactory, redis_url: str) -> Iterator[str]:
    tmp = Path(tmp_path_factory.mktemp("workshop"))
    model = tmp / "fixture-tfidf.joblib"
    fixture_model().save(model)

    endpoints = tmp / "llm.json"

    def setup(env: dict[str, str]) -> None:
        env["TOSSUP_WORKSHOP_BOTS"] = f"{model}@{THRESHOLD}"
        env["TOSSUP_LLM_ENDPOINTS"], env["FAKE_LLM_KEY"] = str(endpoints), KEY
        manage(env, "create_organiser", ORGANISER[0], "--password-stdin", stdin=ORGANISER[1] + "\n")

    with fake_llm(curie_llm) as llm:
        endpoints.write_text(
            json.dumps(
                [{"name": "Fake LLM", "url": llm.url, "model": "curie", "key_env": "FAKE_LLM_KEY", "workshop": True,
                  "workshop_prefixes": 3, "min_tokens": 1, "price_in": 2, "price_out": 10}]
            )
        )  # fmt: skip
        with live_server(tmp, redis_url, setup) as (url, _env):
            yield url


def login(page, url: str, username: str, password: str, then: str) -> None:
    page.goto(f"{url}/accounts/login/?next={then}")
    page.fill("#id_username", username)
    page.fill("#id_password", password)
    page.click("#login-form button[type=submit]")
    page.wait_for_url(f"{url}{then}")


def no_violations(page) -> None:
    violations = axe_violations(page)
    assert not violations, describe_violations(violations)


def test_a_writer_sees_the_bots_buzz_move_when_the_giveaway_moves_later(server: str) -> None:
    from playwright.sync_api import expect

    with chromium() as browser:
        laptop = browser.new_context(viewport=LAPTOP)
        page = laptop.new_page()
        login(page, server, *ORGANISER, "/workshop/writers/")
        page.fill("#writer-username", "writer1")
        page.click("button:has-text('Invite writer')")
        password = page.locator(".ws-created code").inner_text()
        laptop.clear_cookies()
        login(page, server, "writer1", password, "/workshop/")
        no_violations(page)
        page.fill("#new-title", "Curie")
        page.keyboard.press("Tab")
        page.keyboard.press("Enter")  # "New draft", from the keyboard
        page.wait_for_url("**/workshop/draft/*/")

        page.focus("#ws-answer")
        page.keyboard.type("Curie [accept Marie")
        expect(page.locator("#ws-answer-error")).to_contain_text("unclosed '[' opened at character 7")
        page.fill("#ws-answer", "")
        page.keyboard.type(ANSWER_LINE)
        expect(page.locator("#ws-answer-error")).to_have_text("")
        page.keyboard.press("Tab")
        page.keyboard.press("ArrowDown")  # the category, by keyboard
        page.focus("#ws-text")
        page.keyboard.type(GIVEAWAY + VAGUE)

        marker = page.locator(".ws-buzz[data-bot=tfidf]")
        expect(marker).to_be_visible(timeout=10_000)
        expect(page.locator(".ws-bot[data-bot=tfidf] .ws-guesses li").first).to_contain_text("Marie Curie")
        expect(page.locator("#ws-target")).to_contain_text("first lines")
        early = int(marker.get_attribute("data-index"))
        assert early < len(GIVEAWAY.split())
        llm_card = page.locator('.ws-bot[data-bot="llm:Fake LLM"]')
        expect(llm_card.locator(".ws-cost")).to_contain_text("3 prefixes", timeout=15_000)
        expect(llm_card.locator(".ws-cost")).to_contain_text("this analysis")
        expect(llm_card).to_contain_text("not available for an LLM")
        llm_marker = page.locator('.ws-buzz[data-bot="llm:Fake LLM"]')
        assert int(llm_marker.get_attribute("data-index")) == len(GIVEAWAY.split()) - 1
        expect(page.locator("#ws-save-state")).to_have_text("Saved", timeout=10_000)
        page.click("#ws-save-version")
        expect(page.locator("#ws-history > li")).to_have_count(1)

        page.focus("#ws-text")
        page.keyboard.press("Control+a")
        page.keyboard.type(VAGUE + GIVEAWAY)  # the giveaway moved to the end
        page.wait_for_function(
            "(early) => { const m = document.querySelector('.ws-buzz[data-bot=tfidf]');"
            " return m && Number(m.dataset.index) >= early; }",
            arg=len(VAGUE.split()),  # not before the giveaway, now after the vague clues
            timeout=10_000,
        )
        expect(page.locator("#ws-target")).to_contain_text("stump every bot")
        expect(page.locator("mark.ws-driver", has_text="polonium")).to_have_count(1)
        expect(page.locator("#ws-save-state")).to_have_text("Saved", timeout=10_000)
        page.click("#ws-save-version")
        expect(page.locator("#ws-history > li").first).to_contain_text("words later than the last version")
        expect(page.locator("#ws-history > li").first).to_contain_text("Fake LLM: word")
        assert KEY not in page.content()
        page.screenshot(path=str(shots_dir() / "workshop-laptop.png"))
        no_violations(page)

        probe = page.request.post(f"{server}/workshop/api/probe", data={})
        if probe.status != 404:  # the distractor probe exists on this server: the button shows its list
            page.click("#ws-probe")
            expect(page.locator("#ws-probe-result table, #ws-probe-result p:not(.muted)")).to_be_visible(
                timeout=20_000
            )

        draft_url = page.url
        tablet = browser.new_context(viewport=IPAD, has_touch=True, storage_state=laptop.storage_state())
        tab = tablet.new_page()
        tab.goto(draft_url)
        expect(tab.locator(".ws-buzz[data-bot=tfidf]")).to_be_visible(timeout=10_000)
        expect(tab.locator("#ws-history > li")).to_have_count(2)
        tab.screenshot(path=str(shots_dir() / "workshop-tablet.png"))
        no_violations(tab)
