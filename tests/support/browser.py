"""Debian's headless Chromium driven by Playwright (``playwright install`` cannot download
browsers here), or a skip with the reason when it is not installed."""

from __future__ import annotations

import contextlib
import os
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

CHROMIUM = Path("/usr/bin/chromium")
_ROOT = Path(__file__).resolve().parents[2]


def shots_dir() -> Path:
    """Where a browser test leaves the screenshots the docs show: ``tests/artifacts/screenshots``
    (ignored by git), or ``docs/images`` itself with ``TOSSUP_DOC_SHOTS=1`` (to refresh the docs)."""
    d = (
        _ROOT / "docs" / "images"
        if os.environ.get("TOSSUP_DOC_SHOTS") == "1"
        else _ROOT / "tests" / "artifacts" / "screenshots"
    )
    d.mkdir(parents=True, exist_ok=True)
    return d


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
