"""The TF-IDF bot side by side with the three recorded 2024 exhibition bots on the exhibition's
tossups, scored with the QANTA metrics against the same simulated humans (issue 8, item 4)::

    .venv/bin/python -m tools.bench_bot_eval [--max-year 2020] [--model-cache /tmp/tfidf-2020.joblib]
        [--players 8] [--seed 1] [--every 1] [--threshold 0.8] [--min-tokens 10] [--json out.json]

The TF-IDF bot trains on the qbreader packets up to ``--max-year`` (the exhibition is 2024: no
overlap) and buzzes at its recommended threshold and minimum tokens (``buzzer.bots.tfidf``); it is
asked on every ``--every``-th word. The recorded bots are scored on their recorded prefixes
(``tools.bot_evaluation.recorded_runs``). Needs no database and no server. Prints a message and exits
0 when ``../shared/data`` (or ``TOSSUP_SHARED_DATA``) is absent; asserts nothing.
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import time
from pathlib import Path

from buzzer.bots.client import ModelGuesser
from buzzer.bots.tfidf import RECOMMENDED_MIN_TOKENS, RECOMMENDED_THRESHOLD, TfidfGuesser
from tools import bot_evaluation as be

DATA = Path(os.environ.get("TOSSUP_SHARED_DATA", Path(__file__).resolve().parents[2] / "shared" / "data"))
EXPO = DATA / "expo" / "2024_470"
PACKETS = DATA / "packets" / "qbreader_packets_2012_2022.jsonl.gz"


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--max-year", type=int, default=2020)
    parser.add_argument("--model-cache", help="load the TF-IDF model from here, or train and save it here")
    parser.add_argument("--players", type=int, default=8)
    parser.add_argument("--seed", type=int, default=1)
    parser.add_argument("--every", type=int, default=1)
    parser.add_argument("--threshold", type=float, default=RECOMMENDED_THRESHOLD)
    parser.add_argument("--min-tokens", type=int, default=RECOMMENDED_MIN_TOKENS)
    parser.add_argument("--json", help="write every bot's result here")
    args = parser.parse_args(argv)
    if not EXPO.is_dir() or not PACKETS.is_file():
        print(f"skipped: the exhibition folder {EXPO} or the packets {PACKETS} is absent")
        return 0

    started = time.perf_counter()
    cache = Path(args.model_cache) if args.model_cache else None
    if cache is not None and cache.exists():
        model = TfidfGuesser.load(cache)
    else:
        model = TfidfGuesser.from_packets(PACKETS, max_year=args.max_year)
        if cache is not None:
            model.save(cache)
    print(
        f"TF-IDF ≤{args.max_year}: {len(model.answers)} answers, ready in {time.perf_counter() - started:.0f} s"
    )

    tossups = be.load_tossups(str(EXPO))
    humans = be.simulated_humans(tossups, args.players, args.seed)
    started = time.perf_counter()
    guesser = ModelGuesser(model, args.threshold, args.min_tokens)
    name = f"tfidf ≤{args.max_year} (threshold {args.threshold}, min {args.min_tokens} tokens)"
    results = {name: be.evaluate_guesser(guesser, tossups, humans, every=args.every)}
    print(f"replayed {len(tossups)} tossups in {time.perf_counter() - started:.0f} s")
    results.update(
        {f"{team} (recorded)": r for team, r in be.evaluate_recorded(EXPO, tossups, humans).items()}
    )
    print(f"humans: {args.players} simulated players (seed {args.seed}) per tossup\n")
    print(be.table(results))
    if args.json:
        Path(args.json).write_text(json.dumps(results, indent=1), encoding="utf-8")
    return 0


if __name__ == "__main__":
    sys.exit(main())
