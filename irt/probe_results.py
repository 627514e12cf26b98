"""The stored results of ``manage.py probe_bot`` (the distractor probe, ``tools.probe_evaluation``):
one JSON file per bot, the latest run, under ``settings.VAR_DIR / "probe"`` — a few kilobytes each,
read by the analysis page ``/analysis/probe/``. A file, not a model: the reports are whole documents
that nothing queries, and a new run of a bot replaces its old one."""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any

from django.conf import settings

_UNSAFE = re.compile(r"[^A-Za-z0-9._-]+")


def results_dir() -> Path:
    """Where the reports are kept (``VAR_DIR/probe``)."""
    return Path(settings.VAR_DIR) / "probe"


def store(bot: str, report: dict[str, Any]) -> Path:
    """Write ``report`` as the latest probe of ``bot`` (its name made file-safe; ``bot`` is kept in
    the document) and return the file's path."""
    folder = results_dir()
    folder.mkdir(parents=True, exist_ok=True)
    path = folder / f"{_UNSAFE.sub('_', bot).strip('._') or 'bot'}.json"
    tmp = path.with_suffix(".json.tmp")
    tmp.write_text(json.dumps({**report, "bot": bot}, indent=1), encoding="utf-8")
    tmp.replace(path)  # a reader never sees half a file
    return path


def latest() -> list[dict[str, Any]]:
    """Every stored report, by bot name; unreadable files are skipped."""
    reports = []
    folder = results_dir()
    for path in sorted(folder.glob("*.json")) if folder.is_dir() else []:
        try:
            data = json.loads(path.read_text(encoding="utf-8"))
        except (OSError, ValueError):
            continue
        if isinstance(data, dict) and "original" in data and "probes" in data:
            reports.append(data)
    return sorted(reports, key=lambda r: str(r.get("bot", "")).lower())
