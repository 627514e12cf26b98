"""The analysis pages as a newcomer finds them after one match (issue 28 item 7), in real Chromium
at 1366×768 over a live server: one ended match with a bot, played through the service layer
(``tests.irt.test_live_botmetrics.play_live_match``), its responses fitted in-process twice, as
``match:<id>`` and as ``live`` (the very same responses).

The bot leaderboard lists the bot with its live figures and "—" (with the reason) for what live
play cannot measure; the fit page labels its downloads as downloads, explains the scope and the
twin fit, warns of the small sample, says why the skill density is not drawn, splits players and
teams, spaces the heading's link and keeps the flagged-questions checkbox beside its label.
Screenshots: tests/artifacts/screenshots/analysis-newcomer-*.png."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest

from tests.frontend.room import LAPTOP, shot
from tests.support.browser import chromium
from tests.support.live import live_server, manage

pytestmark = pytest.mark.browser

SETUP = """
import json
from irt import pipeline
from tests.irt.test_live_botmetrics import play_live_match
match = play_live_match("Friday scrimmage")
pipeline.record_match_responses(match.id)
one = pipeline.fit_scope(f"match:{match.id}")
live = pipeline.fit_scope("live")
print(json.dumps({"match": match.id, "code": match.join_code, "one": one.id, "live": live.id}))
"""


@pytest.fixture
def server(tmp_path: Path, redis_url: str):
    """(base URL, {match, code, one, live}) of a server whose database holds the played match
    and its two fits."""
    made: dict[str, dict] = {}

    def play_and_fit(env: dict[str, str]) -> None:
        made["ids"] = json.loads(manage(env, "shell", "-c", SETUP).strip().splitlines()[-1])

    with live_server(tmp_path, redis_url, play_and_fit) as (url, _):
        yield url, made["ids"]


def test_a_newcomer_reads_the_analysis_pages_after_one_match(server: tuple[str, dict]) -> None:
    from playwright.sync_api import expect

    base, ids = server
    with chromium() as browser:
        page = browser.new_context(viewport=LAPTOP).new_page()
        errors: list[str] = []
        page.on("pageerror", lambda exc: errors.append(str(exc)))

        # The bot leaderboard: the bot that played, with its live figures.
        page.goto(f"{base}/analysis/bots/")
        page.bring_to_front()
        row = page.locator("#live-leaderboard tbody tr")
        expect(row).to_have_count(1)
        cells = row.locator("td").all_inner_texts()
        # Rank, bot, matches, tossups heard, expected and raw score (1 + 0 − 0.5) / 3 (no human buzzed
        # before the bot), buzz accuracy 1/3, precision 1/2, frequency 2/3, mean buzz position (4 + 5) / 2
        # tokens read (share read (4 + 5) / 2 / 20 tokens); human win rates over the two tossups a
        # human buzzed on: on tossup 2 alice was right and the bot silent (no win), on tossup 3 bob
        # negged before the bot's wrong buzz (a win, not a strict one): 50 % and 0 %.
        assert cells[:12] == [
            "1",
            "bot",
            "1",
            "3",
            "0.167",
            "0.167",
            "33 %",
            "50 % (1/2)",
            "67 %",
            "4.5 (22 % read)",
            "50 %",
            "0 %",
        ]
        for unknown in row.locator("td.unknown-live abbr.missing").all():
            assert unknown.inner_text() == "—" and "unknown live" in (unknown.get_attribute("title") or "")
        assert row.locator("td.unknown-live abbr.missing").count() == 2
        assert "Friday scrimmage" in cells[-1]
        expect(page.locator("#live-unknown")).to_contain_text("evaluate_bot")
        assert "No bot evaluated yet" not in page.inner_text("body")
        shot(page, "analysis-newcomer-bots", full_page=True)

        # The live fit's page.
        page.goto(f"{base}/analysis/")
        page.bring_to_front()
        expect(page.locator("h1")).to_contain_text(f"fit #{ids['live']}")
        links = page.locator("#downloads a")
        assert links.count() >= 5
        for link in links.all():
            assert link.get_attribute("download") is not None
            assert re.fullmatch(r"Download .+ \((CSV|JSON|QBJ)\)", link.inner_text()), link.inner_text()
        expect(page.locator("#downloads")).to_contain_text("Download ADVSCORE table (CSV)")

        scope = page.locator("#scope")
        expect(scope).to_contain_text("live = every live match with recorded responses: 1 match")
        expect(scope).to_contain_text(f"“Friday scrimmage” ({ids['code']})")
        expect(page.locator("#twins")).to_contain_text(
            f"Same responses as fit #{ids['one']} (match:{ids['match']})"
        )
        expect(page.locator("#small-sample")).to_be_visible()
        expect(page.locator("#small-sample")).to_contain_text("3 tossups")
        expect(page.locator("#small-sample")).to_contain_text("a small sample, skills have wide intervals")

        # Players and teams apart.
        kinds = set(page.locator("#leaderboard tbody tr td:nth-child(2)").all_inner_texts())
        assert kinds == {"human", "bot"}
        teams = page.locator("#team-leaderboard tbody tr td:first-child").all_inner_texts()
        assert sorted(teams) == ["Blue", "Red"]

        # The heading's link has room; the checkbox sits beside its label, on one line.
        gap = page.evaluate(
            """() => {
              const h = document.querySelector(".page-head h1").getBoundingClientRect();
              const a = document.getElementById("bots-link").getBoundingClientRect();
              return a.top >= h.bottom ? Infinity : a.left - h.right;
            }"""
        )
        assert gap >= 16, gap
        line = page.evaluate(
            """() => {
              const box = document.getElementById("flagged").getBoundingClientRect();
              const label = document.querySelector("label[for=flagged]");
              const range = document.createRange();
              range.selectNodeContents(label.lastChild);
              const text = range.getBoundingClientRect();
              return { box: [box.left, box.right, box.top, box.bottom], text: [text.left, text.right, text.top, text.bottom] };
            }"""
        )
        box, text = line["box"], line["text"]
        assert text[0] > box[1], line  # the words follow the box…
        assert abs((box[2] + box[3]) / 2 - (text[2] + text[3]) / 2) < 4, line  # …on its line
        page.locator("#flag-switch").scroll_into_view_if_needed()
        shot(page, "analysis-newcomer-top")

        # The skill density of one bot: said in words, not an empty axis.
        density = page.locator("#density-plot")
        density.scroll_into_view_if_needed()
        expect(page.locator(".js-plotly-plot").first).to_be_visible(timeout=15_000)
        # One bot and one skilled human: neither group has a density curve.
        expect(density).to_have_class(re.compile(r"\bplot-empty\b"))
        expect(density).to_contain_text("Not drawn: only one skilled human in this fit")
        expect(density).to_contain_text("only one skilled model in this fit")
        assert density.locator(".main-svg").count() == 0  # no empty axis drawn
        expect(page.locator("#response-plot .main-svg .trace").first).to_be_attached()
        shot(page, "analysis-newcomer-plots")
        shot(page, "analysis-newcomer-full", full_page=True)
        assert errors == []
