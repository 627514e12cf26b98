"""The engine and the scoring rules are pure: importing them loads no Django, clock or randomness."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]


def test_engine_imports_no_django_or_clock():
    code = (
        "import sys, competition.game, scoring.rules\n"
        "bad = [m for m in ('django', 'channels', 'random', 'time', 'datetime') "
        "if m in sys.modules and m not in PRELOADED]\n"
        "assert not bad, bad\n"
    )
    preload = "import sys; PRELOADED = set(sys.modules)\n"
    result = subprocess.run(
        [sys.executable, "-I", "-c", f"import sys; sys.path.insert(0, {str(ROOT)!r})\n{preload}{code}"],
        capture_output=True,
        text=True,
        check=False,
    )
    assert result.returncode == 0, result.stderr
