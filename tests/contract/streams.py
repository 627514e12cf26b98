"""The reducer contract's fixture (``reducer_streams.json``, written by ``python -m tools.reducer_fixtures``)
as each viewer lives it: its first snapshot, then the events it receives up to each later checkpoint."""

from __future__ import annotations

import copy
import json
from collections.abc import Iterator
from dataclasses import dataclass
from functools import cache
from itertools import pairwise
from pathlib import Path
from typing import Any

FIXTURE = Path(__file__).with_name("reducer_streams.json")


@cache
def _streams() -> list[dict[str, Any]]:
    return json.loads(FIXTURE.read_text(encoding="utf-8"))["streams"]


def streams() -> list[dict[str, Any]]:
    """The recorded streams (a deep copy: a reducer may mutate what it is given)."""
    return copy.deepcopy(_streams())


def stream_viewers() -> list[tuple[str, str]]:
    """``(stream name, viewer audience)`` of every viewer of every stream, for parametrising."""
    return [(s["name"], v["audience"]) for s in _streams() for v in s["viewers"]]


@dataclass
class Step:
    """From one checkpoint to the next, for one viewer: the ``events`` it receives in between
    and the ``snapshot`` it must then hold (``label``: the checkpoint's)."""

    label: str
    events: list[dict[str, Any]]
    snapshot: dict[str, Any]

    def names(self) -> list[str]:
        return [e["event"] for e in self.events]


def walk(stream_name: str, audience: str) -> tuple[dict[str, Any], Iterator[Step]]:
    """The viewer's first snapshot (the first checkpoint it is connected at) and its steps on."""
    stream = next(s for s in streams() if s["name"] == stream_name)
    viewer = next(v for v in stream["viewers"] if v["audience"] == audience)
    receives = set(viewer["receives"])
    points = [c for c in stream["checkpoints"] if audience in c["snapshots"]]

    def steps() -> Iterator[Step]:
        for before, after in pairwise(points):
            events = [
                e
                for e in stream["events"]
                if before["after_seq"] < e["seq"] <= after["after_seq"] and e["audience"] in receives
            ]
            yield Step(after["label"], events, after["snapshots"][audience])

    return points[0]["snapshots"][audience], steps()


def differences(got: Any, want: Any, path: str = "") -> list[str]:
    """Where two JSON values differ, as ``path: got != want`` lines (at most the first 20)."""
    out: list[str] = []
    if isinstance(got, dict) and isinstance(want, dict):
        for k in [*want, *(k for k in got if k not in want)]:
            if k not in got or k not in want:
                out.append(f"{path}.{k}: {'missing' if k not in got else 'extra'}")
            else:
                out += differences(got[k], want[k], f"{path}.{k}")
    elif isinstance(got, list) and isinstance(want, list) and len(got) == len(want):
        for i, (g, w) in enumerate(zip(got, want, strict=True)):
            out += differences(g, w, f"{path}[{i}]")
    elif got != want:
        out.append(f"{path or '.'}: {got!r} != {want!r}")
    return out[:20]
