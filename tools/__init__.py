"""Tools around the live server, not part of it: the process supervisor that starts an event's
processes (:mod:`tools.launcher`: Redis, the server, the worker, the bot supervisor; ``manage.py
demo``, ``serve`` and ``bot_supervisor``), the headless match simulator (``manage.py
simulate_match``, simulated players in :mod:`tools.simulation`) and the benchmarks (``python -m
tools.bench_fanout``, ``tools.bench_bots``, ``tools.bench_tfidf``).

This is the top layer: it may import every app; no app imports it (pyproject.toml's
import-linter contracts)."""
