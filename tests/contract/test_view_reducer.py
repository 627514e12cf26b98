"""The engine's own client reducer (``competition.game.apply_event``) passes the recorded streams: a
viewer folding the events it receives from its first snapshot holds, at every checkpoint, the
snapshot ``view`` gave there."""

from __future__ import annotations

import pytest

from competition.game import Event, apply_event

from .streams import differences, stream_viewers, walk


@pytest.mark.parametrize(("stream", "audience"), stream_viewers())
def test_the_views_reducer_rebuilds_every_checkpoint(stream, audience):
    folded, steps = walk(stream, audience)
    checked = 0
    for step in steps:
        for e in step.events:
            folded = apply_event(folded, Event(e["event"], e["data"], e["audience"]))
        assert folded == step.snapshot, (step.label, step.names(), differences(folded, step.snapshot))
        checked += 1
    assert checked, "the viewer has no checkpoint after its first snapshot"
