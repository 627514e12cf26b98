"""The reducer contract's fixture is the engine's: regenerating it gives the committed file byte for
byte, and its streams reach a viewer with every event the engine emits."""

from __future__ import annotations

import re
from pathlib import Path

import competition.game
from competition.game.events import EventName, Payload
from tools.reducer_fixtures import FIXTURE, fixture

from .streams import streams


def emitted_events() -> set[str]:
    """Every event name the engine can emit: the typed payloads' ``EVENT`` and the events built
    from records in place (``Event(EventName.RULING_UNDONE, …)``)."""
    payloads, todo = set(), [Payload]
    while todo:
        cls = todo.pop()
        todo += cls.__subclasses__()
        if "EVENT" in vars(cls):
            payloads.add(str(cls.EVENT))
    engine = Path(competition.game.__file__).parent
    built = {
        str(EventName[member])
        for f in engine.glob("*.py")
        for member in re.findall(r"Event\(\s*EventName\.(\w+)", f.read_text())
    }
    return payloads | built


def test_the_fixture_is_fresh():
    assert FIXTURE.read_text(encoding="utf-8") == fixture(), (
        "tests/contract/reducer_streams.json is not what the engine gives now: run "
        "`python -m tools.reducer_fixtures`, then make each reducer pass tests/contract/"
    )


def test_every_event_the_engine_emits_reaches_a_viewer():
    names = emitted_events()
    assert {"words", "buzz", "ruling_undone", "protest_marked", "protest_resolved"} <= names
    delivered = {
        e["event"]
        for s in streams()
        for e in s["events"]
        if any(e["audience"] in v["receives"] for v in s["viewers"])
    }
    assert sorted(names - delivered) == []
    assert sorted(delivered - names) == []  # nothing recorded that the engine does not emit


def test_every_audience_kind_watches_and_every_stream_ends_the_match():
    for s in streams():
        audiences = [v["audience"] for v in s["viewers"]]
        assert audiences[:2] == ["moderator", "all"] and any(a.startswith("player:") for a in audiences)
        assert s["events"][-1]["event"] == "match_ended", s["name"]
        assert len(s["checkpoints"]) >= 3 and s["checkpoints"][-1]["after_seq"] == len(s["events"])
