"""The match state is stored in parts (immutable spec, live state, ruling record); each
process caches the parsed spec and record by match id and key. A lobby seat or a ruling
gives its part a new key, so no process can play on with a stale cached copy."""

from __future__ import annotations

import pytest

from competition import game, selectors, services
from competition.live import rowcache, store
from competition.models import Match
from tests.support.factories import make_match

pytestmark = pytest.mark.django_db


def forget_cached_parts() -> None:
    """What another server process sees: nothing cached yet."""
    rowcache._specs.clear()
    rowcache._records.clear()


def test_a_lobby_seat_gives_the_spec_a_new_key_that_every_process_reads():
    match = make_match(bots=False)
    key = Match.objects.get(pk=match.pk).spec_key
    seated = [p.name for p in selectors.load_state(match.id).players]
    services.join_match(code=match.join_code, name="cleo", team="Blue")
    row = Match.objects.get(pk=match.pk)
    assert row.spec_key != key
    # This process (it wrote the seat) and a process with an empty cache agree.
    assert [p.name for p in selectors.load_state(match.id).players] == [*seated, "cleo"]
    forget_cached_parts()
    assert [p.name for p in selectors.load_state(match.id).players] == [*seated, "cleo"]


def test_playing_never_alters_the_cached_spec_or_record():
    match = make_match(bots=False)
    before = selectors.load_state(match.id)
    spec = before.spec().to_dict()
    now = 1_700_000_000.0
    store.apply_command(match_id=match.id, command=game.Start(), actor="moderator", now=now)
    store.apply_command(match_id=match.id, command=game.Skip(), actor="moderator", now=now + 1)
    after = selectors.load_state(match.id)
    assert after.spec().to_dict() == spec
    # The skipped tossup is in the ruling record; a fresh process reads the same record.
    record = after.records_dict()
    forget_cached_parts()
    assert selectors.load_state(match.id).records_dict() == record
    assert selectors.load_state(match.id).live_dict() == after.live_dict()
