"""One real-browser run of the analyst page: headless Chromium (Debian's /usr/bin/chromium via
playwright) against uvicorn over a scratch database holding a fit of a simulated response matrix
imported with ``import_responses --fit``. Asserts the plotly charts drew SVG traces, the
per-question table sorts on a header click, in natural order for item ids and names, and every
"—" has its reason as hover text. Screenshot: /tmp/tossup-analysis.png."""

from __future__ import annotations

import csv
import re
from pathlib import Path

import numpy as np
import pytest

from tests.support.browser import chromium
from tests.support.live import live_server, manage

pytestmark = pytest.mark.browser


def write_matrix(path: Path, seed: int = 0) -> None:
    """A 2PL-simulated ADVSCORE matrix: 25 humans, 4 bots, 40 items, ~10 % cells unasked."""
    rng = np.random.default_rng(seed)
    names = [f"h_p{k}" for k in range(25)] + ["tfidf", "bm25", "gpt", "llama"]
    skill = np.concatenate([rng.normal(0.5, 1.0, 25), [-1.0, -0.3, 0.8, 0.2]])
    theta, gamma = rng.normal(0, 1, 40), rng.gamma(4, 0.4, 40)
    p = 1 / (1 + np.exp(-gamma[None, :] * (skill[:, None] - theta[None, :])))
    outcome = (rng.random(p.shape) < p).astype(int)
    asked = rng.random(p.shape) > 0.1
    with path.open("w", newline="") as fh:
        writer = csv.writer(fh)
        writer.writerow(["item_id", *names])
        for j in range(40):
            writer.writerow([f"q{j + 1}", *(outcome[i, j] if asked[i, j] else "" for i in range(len(names)))])


@pytest.fixture
def server(tmp_path: Path, redis_url: str):
    """(base URL, fit id) of a uvicorn process over a migrated scratch DB with one imported fit."""
    fit: list[int] = []

    def import_fit(env: dict[str, str]) -> None:
        matrix = tmp_path / "sim.csv"
        write_matrix(matrix)
        out = manage(env, "import_responses", str(matrix), "--format", "advscore", "--fit")
        fit.append(int(re.search(r"fit #(\d+)", out).group(1)))

    with live_server(tmp_path, redis_url, import_fit) as (url, _):
        yield url, fit[0]


def test_analysis_page_plots_and_sorts_in_a_real_browser(server: tuple[str, int]) -> None:
    from playwright.sync_api import expect

    base, fit_id = server
    with chromium() as browser:
        page = browser.new_context(viewport={"width": 1280, "height": 1000}).new_page()
        errors: list[str] = []
        page.on("pageerror", lambda exc: errors.append(str(exc)))
        page.goto(f"{base}/analysis/fit/{fit_id}/")
        for plot in ("skills-plot", "density-plot", "response-plot", "iif-plot"):
            expect(page.locator(f"#{plot}.js-plotly-plot")).to_be_visible(timeout=15_000)
            assert page.locator(f"#{plot} .main-svg .trace").count() > 0, plot
        expect(page.locator("#sensitivity tbody tr")).to_have_count(4)

        def column(index: int) -> list[float]:
            cells = page.locator(f"#items tbody tr td:nth-child({index})").evaluate_all(
                "cells => cells.map(c => c.dataset.value)"
            )
            return [float(v) for v in cells if v]

        page.click("#items thead th:nth-child(6)")  # ADVSCORE, descending first
        expect(page.locator("#items thead th:nth-child(6)")).to_have_attribute("aria-sort", "descending")
        values = column(6)
        assert len(values) > 10 and values == sorted(values, reverse=True)
        page.click("#items thead th:nth-child(7)")  # θ
        thetas = column(7)
        assert len(set(thetas)) > 10 and thetas == sorted(thetas, reverse=True)
        # Natural order: the imported items q1…q40 sort as 1, 2, …, 10, not 1, 10, 2.
        page.click("#items thead th:nth-child(1)")  # descending first
        page.click("#items thead th:nth-child(1)")
        expect(page.locator("#items thead th:nth-child(1)")).to_have_attribute("aria-sort", "ascending")
        ids = page.locator("#items tbody tr td:nth-child(1)").all_inner_texts()
        assert ids[:11] == [f"q{k}" for k in range(1, 12)]
        page.click("#leaderboard thead th:nth-child(1)")
        page.click("#leaderboard thead th:nth-child(1)")
        names = page.locator("#leaderboard tbody tr td:nth-child(1)").all_inner_texts()
        humans = [n for n in names if n.startswith("p")]
        assert humans == [f"p{k}" for k in range(25)]
        # Every "—" on the page carries its reason as hover text.
        dashes = page.locator("abbr.missing")
        titles = dashes.evaluate_all("els => els.map(e => e.title)")
        assert all(titles) and page.locator("td:text-is('—'):not(:has(abbr))").count() == 0
        page.screenshot(path="/tmp/tossup-analysis.png", full_page=True)
        assert errors == []

        page.click("#leaderboard tbody tr:first-child a")
        expect(page.locator("#responses tbody tr").first).to_be_visible()
        assert page.locator("#responses tbody tr").count() > 20
        page.screenshot(path="/tmp/tossup-analysis-subject.png", full_page=True)
