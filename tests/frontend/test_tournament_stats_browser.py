"""The tournament page's statistics in real Chromium at 1366×768 on a real server: a tournament
with two games played, its public feed open. Screenshot: tournament-stats.png (``shots_dir``)."""

from __future__ import annotations

import contextlib
from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.frontend.room import LAPTOP, axe_violations, describe_violations
from tests.support.browser import chromium, shots_dir
from tests.support.live import live_server, manage

SETUP = "from tests.frontend.test_tournament_stats_browser import played; print(played())"


def played() -> int:
    """A 4-team tournament (run in the server's ``manage.py shell``) with round 1's two games
    played — one with a neg — and accepted, and its public feed open; returns its id."""
    from django.contrib.auth import get_user_model

    from competition import review, spectators
    from tests.competition.test_tournaments import _play, _tournament

    def capture(execute: bool = True) -> contextlib.AbstractContextManager[None]:
        return contextlib.nullcontext()  # outside a test the commit hooks run on their own

    t = _tournament(4)
    director = get_user_model().objects.create_superuser("director", password="x")
    for n, g in enumerate(t.games.select_related("home").filter(round=1)):
        _play(g.match, g.home.name, capture, neg=n == 0)
        g = t.games.select_related("match").get(pk=g.pk)  # the statistics count official results
        review.submit(g, acknowledged=[w.key for w in review.warnings(g.match)])
        review.accept(g, user=director)
    t.public_feed = dict.fromkeys(spectators.FEED_SETTINGS, True)
    t.save(update_fields=["public_feed"])
    return t.id


@pytest.fixture(scope="module")
def tournament_url(tmp_path_factory: pytest.TempPathFactory, redis_url: str) -> Iterator[str]:
    made: list[str] = []

    def setup(env: dict[str, str]) -> None:
        made.append(manage(env, "shell", "-c", SETUP).split()[-1])

    with live_server(Path(tmp_path_factory.mktemp("tstats")), redis_url, setup) as (url, _):
        yield f"{url}/tournament/{made[0]}/"


@pytest.mark.browser
def test_the_statistics_read_on_a_laptop(tournament_url: str) -> None:
    from playwright.sync_api import expect

    errors: list[str] = []
    with chromium() as browser:
        page = browser.new_context(viewport=LAPTOP).new_page()
        page.on("pageerror", lambda exc: errors.append(str(exc)))
        assert page.goto(tournament_url).status == 200
        teams = page.locator("#team-stats tbody tr")
        expect(teams).to_have_count(4)
        # the two winners share nothing; the two losers of a 1-game record may; unknowns are dashes
        expect(page.locator("#team-stats tbody tr").first.locator("td").first).to_have_text("1")
        expect(page.locator("#team-stats")).to_contain_text("—")
        expect(page.locator("#individual-stats tbody tr")).to_have_count(12)
        width = page.evaluate("[document.documentElement.scrollWidth, window.innerWidth]")
        assert width[0] <= width[1], width
        # the page's own 10 s reload while games are played (meta refresh) predates the statistics
        violations = [v for v in axe_violations(page) if v["id"] != "meta-refresh"]
        assert not violations, describe_violations(violations)
        page.evaluate("document.querySelector('#team-stats').previousElementSibling.scrollIntoView()")
        page.screenshot(path=str(shots_dir() / "tournament-stats.png"))
    assert not errors, errors
