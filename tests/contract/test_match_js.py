"""The pages' reducer (``frontend/static/frontend/match.js`` ``applyEvent``) passes the recorded
streams: ``match_reducer.test.mjs`` under node's own test runner, started here so it counts in the
suite."""

from __future__ import annotations

import re
import shutil
import subprocess
from pathlib import Path

import pytest

from .streams import stream_viewers

NODE = shutil.which("node")
ROOT = Path(__file__).resolve().parents[2]
TEST = Path(__file__).with_name("match_reducer.test.mjs")


@pytest.mark.skipif(NODE is None, reason="node is not installed: match.js's applyEvent is not checked")
def test_match_js_apply_event_passes_every_stream_for_every_viewer():
    assert NODE is not None
    # match.js is an ES module with a .js name: Node 20.19+ detects that itself, earlier 20.x on this flag.
    proc = subprocess.run(
        [NODE, "--experimental-detect-module", "--test", str(TEST)],
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=120,
    )
    report = proc.stdout[-8000:] + proc.stderr[-2000:]
    assert proc.returncode == 0, report
    passed = re.search(r"^# pass (\d+)$", proc.stdout, re.M)
    assert passed and int(passed.group(1)) == len(stream_viewers()), report
