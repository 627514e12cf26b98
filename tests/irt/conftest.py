"""Locate shared/data/advscore (never copied into the repo); skip when absent."""

import os
from pathlib import Path

import pytest


@pytest.fixture(scope="session")
def advscore_dir() -> Path:
    root = Path(
        os.environ.get("TOSSUP_SHARED_DATA", Path(__file__).resolve().parents[2] / ".." / "shared" / "data")
    )
    path = root / "advscore"
    if not path.is_dir():
        pytest.skip(f"…/shared/data absent: {path} not found (set TOSSUP_SHARED_DATA)")
    return path
