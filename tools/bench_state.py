"""Benchmark: what one word costs the service — bytes written to the match row and wall time.

Plays a match of the demo packet (24 tossups) and one of 100 tossups (the demo tossups
cycled) through ``competition.services`` (the reading driver's ``Tick`` through
``competition.live.ticks.tick``, as its fallback on a database thread runs it) on a scratch database (a fresh
PostgreSQL database on the server of ``DATABASE_URL`` when that is PostgreSQL, else a SQLite
file), two players, ``auto_rule`` on. The first two and the last two tossups are read word
by word with one wrong buzz each (so the ruling history grows as in play); the tossups in
between are fast-forwarded (a wrong buzz on the first word, then Skip).

For every ``Tick`` that revealed a word it records the bytes of the parameters of the
``UPDATE`` statements on the match row (what the database is asked to store per word:
JSON documents as their serialised text) and the call's wall time. Prints, per match:
words measured, bytes per word (p50 / max, early and late in the match), spec bytes (the
immutable part: ``Match.spec`` when the tree has it, else the spec fields inside
``Match.state``) and the per-word service cost (p50 / mean / p99 ms). Broadcasting is not
measured: the ``events_committed`` receivers are disconnected.

    python -m tools.bench_state [--tossups 24 100] [--json]
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import tempfile
import time
import uuid
from pathlib import Path
from typing import Any

from competition.game import EventName
from tools.databases import scratch_database

SPEC_KEYS = ("config", "teams", "players", "tossups", "bonuses")
WRONG = "zzzz not the answer"


def _param_bytes(p: Any) -> int:
    if p is None:
        return 0
    if isinstance(p, bytes | str):
        return len(p.encode() if isinstance(p, str) else p)
    obj = getattr(p, "obj", None)  # psycopg's Jsonb adapter
    if obj is not None:
        return len(json.dumps(obj))
    return len(str(p))


class MatchRowWrites:
    """``connection.execute_wrapper``: sums the parameter bytes of UPDATEs of the match row."""

    def __init__(self) -> None:
        self.bytes = 0

    def __call__(self, execute, sql, params, many, context):
        head = sql.lstrip().upper()
        if head.startswith('UPDATE "COMPETITION_MATCH"'):
            self.bytes += sum(_param_bytes(p) for p in params or ())
        elif head.startswith("WITH M AS (\n    UPDATE COMPETITION_MATCH"):
            # competition.live.ticks' one statement: its SET values (the rest selects the row and
            # carries the event rows, which are not the match row)
            from competition.live import ticks

            self.bytes += sum(_param_bytes(p) for p in params[: ticks.SET_PARAMS])
        return execute(sql, params, many, context)


def _tossup_ids(n: int) -> list[int]:
    from competition.importers import import_demo_packet
    from competition.models import Packet, QuestionSet, Tossup

    if not QuestionSet.objects.filter(source="demo").exists():
        import_demo_packet()
    demo = list(Tossup.objects.filter(packet__question_set__source="demo").order_by("packet_id", "number"))
    if n <= len(demo):
        return [t.id for t in demo[:n]]
    qs, _ = QuestionSet.objects.get_or_create(name=f"bench-{n}", defaults={"source": "bench"})
    packet, _ = Packet.objects.get_or_create(question_set=qs, name="cycled")
    rows = [
        Tossup(packet=packet, number=i + 1, question=demo[i % len(demo)].question,
               answer_line=demo[i % len(demo)].answer_line, category=demo[i % len(demo)].category)
        for i in range(n)
    ]  # fmt: skip
    return (
        [t.id for t in Tossup.objects.bulk_create(rows)]
        if not packet.tossups.exists()
        else [t.id for t in packet.tossups.order_by("number")]
    )


def _spec_bytes(match_id: int) -> int:
    from competition.models import Match

    match = Match.objects.get(pk=match_id)
    spec = getattr(match, "spec", None)
    if spec:
        return len(json.dumps(spec))
    return len(json.dumps({k: match.state[k] for k in SPEC_KEYS}))


def play(n_tossups: int) -> dict[str, Any]:
    """Play one match as described in the module docstring; the figures as a dict."""
    from django.db import connection

    from competition import game, services
    from competition.live import ticks

    tossup_ids = _tossup_ids(n_tossups)
    match = services.create_match(
        name=f"bench {n_tossups} {uuid.uuid4().hex[:4]}", tossup_ids=tossup_ids, teams=["Red", "Blue"],
        config={"auto_rule": True, "wpm": 240},
    )  # fmt: skip
    red = services.join_match(code=match.join_code, name="ada", team="Red")
    blue = services.join_match(code=match.join_code, name="bob", team="Blue")
    measured = {0, 1, n_tossups - 2, n_tossups - 1}
    writes = MatchRowWrites()
    now = time.time()
    applied = services.moderate(match_id=match.id, command=game.Start(), now=now)
    sizes: dict[str, list[int]] = {"early": [], "late": []}
    times: list[float] = []
    index, qid, revealed, buzzed = -1, 0, 0, False
    ended = False

    def note(events: list[dict[str, Any]]) -> None:
        nonlocal index, qid, revealed, buzzed, ended
        for e in events:
            if e["event"] == EventName.TOSSUP_STARTED:
                index, qid, revealed, buzzed = e["data"]["index"], e["data"]["question_id"], 0, False
            elif e["event"] == EventName.WORDS:
                revealed = e["data"]["start"] + len(e["data"]["words"])
            elif e["event"] == EventName.MATCH_ENDED:
                ended = True

    note(applied.events)
    deadline = applied.next_deadline
    for _ in range(100_000):
        if ended or deadline is None:
            break
        now = max(now, deadline)
        writes.bytes = 0
        t0 = time.perf_counter()
        with connection.execute_wrapper(writes):
            applied = ticks.tick(match.id, now)
        elapsed = time.perf_counter() - t0
        note(applied.events)
        if index in measured and any(e["event"] == EventName.WORDS for e in applied.events):
            sizes["early" if index < 2 else "late"].append(writes.bytes)
            times.append(elapsed)
        deadline = applied.next_deadline
        if revealed >= (8 if index in measured else 1) and not buzzed and index >= 0:
            buzzed = True
            player = red if index % 2 == 0 else blue
            try:
                services.buzz(match_id=match.id, player_id=player.id, question_id=qid, token_index=revealed - 1,
                              client_time=None, corrected_press_at=None, now=now)  # fmt: skip
                for _ in range(10):  # close the race: the buzz wins
                    applied = ticks.tick(match.id, max(now, deadline or now))
                    note(applied.events)
                    if any(e["event"] == EventName.BUZZ for e in applied.events):
                        break
                    deadline = applied.next_deadline
                    now = max(now, deadline or now)
                applied = services.answer(
                    match_id=match.id, player_id=player.id, question_id=qid, text=WRONG, now=now
                )
                note(applied.events)
                if index not in measured:
                    applied = services.moderate(match_id=match.id, command=game.Skip(), now=now)
                    note(applied.events)
            except game.RuleViolation:
                pass
            deadline = ticks.tick(match.id, now).next_deadline
    all_sizes = sizes["early"] + sizes["late"]
    times_ms = sorted(t * 1000 for t in times)
    return {
        "tossups": n_tossups,
        "words": len(all_sizes),
        "bytes_per_word_p50": statistics.median(all_sizes) if all_sizes else None,
        "bytes_per_word_max": max(all_sizes) if all_sizes else None,
        "bytes_per_word_early_p50": statistics.median(sizes["early"]) if sizes["early"] else None,
        "bytes_per_word_late_p50": statistics.median(sizes["late"]) if sizes["late"] else None,
        "spec_bytes": _spec_bytes(match.id),
        "ms_per_word_p50": round(statistics.median(times_ms), 3) if times_ms else None,
        "ms_per_word_mean": round(statistics.fmean(times_ms), 3) if times_ms else None,
        "ms_per_word_p99": round(times_ms[int(0.99 * (len(times_ms) - 1))], 3) if times_ms else None,
        "ended": ended,
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--tossups", type=int, nargs="+", default=[24, 100])
    parser.add_argument("--json", action="store_true", help="one JSON line per match")
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as tmp, scratch_database(Path(tmp)) as url:
        os.environ["DATABASE_URL"] = url
        os.environ.setdefault("DJANGO_SETTINGS_MODULE", "config.settings")
        import django

        django.setup()
        from django.core.management import call_command
        from django.db import connection

        from competition import signals

        call_command("migrate", verbosity=0)
        signals.events_committed.receivers = []
        signals.events_committed.sender_receivers_cache.clear()
        try:
            for n in args.tossups:
                result = play(n)
                result["database"] = connection.vendor
                if args.json:
                    print(json.dumps(result))
                else:
                    print(
                        f"{connection.vendor:10} {n:3} tossups: {result['words']} words measured; "
                        f"written per word p50 {result['bytes_per_word_p50']} B "
                        f"(early {result['bytes_per_word_early_p50']}, late {result['bytes_per_word_late_p50']}, "
                        f"max {result['bytes_per_word_max']}); spec {result['spec_bytes']} B; "
                        f"service cost per word p50 {result['ms_per_word_p50']} ms, "
                        f"mean {result['ms_per_word_mean']}, p99 {result['ms_per_word_p99']}"
                    )
        finally:
            connection.close()


if __name__ == "__main__":
    main()
