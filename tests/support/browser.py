"""Debian's headless Chromium driven by Playwright (``playwright install`` cannot download
browsers here), or a skip with the reason when it is not installed."""

from __future__ import annotations

import contextlib
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

CHROMIUM = Path("/usr/bin/chromium")


@contextlib.contextmanager
def chromium() -> Iterator[Any]:
    """A launched Playwright ``Browser``; closed on exit."""
    if not CHROMIUM.exists():
        pytest.skip("/usr/bin/chromium absent: apt-get install -y chromium to run the browser tests")
    from playwright.sync_api import sync_playwright

    with sync_playwright() as pw:
        browser = pw.chromium.launch(
            executable_path=str(CHROMIUM),
            args=["--no-sandbox", "--disable-gpu", "--disable-background-networking"],
        )
        try:
            yield browser
        finally:
            browser.close()
