"""The reference TF-IDF bot on the years it never saw, and side by side with the three recorded 2024
exhibition bots on the exhibition's tossups, scored with the QANTA metrics against the same simulated
humans (issue 8, items 3 and 4)::

    .venv/bin/python -m tools.bench_bot_eval [--max-year 2020] [--model-cache var/cache/reference-2020.joblib]
        [--held-out 1200] [--test-years 2021-2022] [--every 2] [--no-qanta] [--players 8] [--seed 1]
        [--threshold T] [--min-tokens N] [--json out.json]

The reference bot (``TfidfGuesser.from_packets``: qbreader tossups and bonus parts up to ``--max-year``
plus the QANTA files, answer classes merged by the judge's normalisation, a learned buzzer fitted and
calibrated on held-out sets of the last training year) buzzes at the threshold its buzzer chose unless
``--threshold`` is given. It is replayed on ``--held-out`` tossups drawn (seed 0) from the qbreader sets
of ``--test-years``, asked on every ``--every``-th word as the offline evaluation does
(``tools.bot_evaluation``), and the figures are printed against the issue's targets (buzz precision
≥ 75 % at frequency ≥ 25 %, ECE ≤ 0.05, a positive expected score). The recorded bots are scored on their
recorded prefixes (``tools.bot_evaluation.recorded_runs``). Needs no database and no server. Prints a
message and exits 0 when ``../shared/data`` (or ``TOSSUP_SHARED_DATA``) is absent; asserts nothing.
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import time
from pathlib import Path
from typing import Any

from tqdm import tqdm

from buzzer.bots.adapter import ModelGuesser
from buzzer.bots.tfidf import TfidfGuesser, file_records
from tools import bot_evaluation as be

DATA = Path(os.environ.get("TOSSUP_SHARED_DATA", Path(__file__).resolve().parents[2] / "shared" / "data"))
EXPO = DATA / "expo" / "2024_470"
PACKETS = DATA / "packets" / "qbreader_packets_2012_2022.jsonl.gz"
QANTA = sorted((DATA / "qanta").glob("qanta.*.json.gz"))
TARGETS = {"buzz_precision": 0.75, "buzz_frequency": 0.25, "ece": 0.05, "expected_score": 0.0}


def reference_model(max_year: int, cache: Path | None, qanta: bool) -> TfidfGuesser:
    """The reference bot trained up to ``max_year`` (loaded from ``cache`` when it exists, else trained and
    saved there)."""
    if cache is not None and cache.exists():
        return TfidfGuesser.load(cache)
    extra = [r for path in (QANTA if qanta else []) for r in file_records(path, max_year=max_year)]
    model = TfidfGuesser.from_packets(
        PACKETS,
        max_year=max_year,
        extra=extra,
        progress=lambda items: tqdm(items, desc="counting words", unit="question", mininterval=5),
        replay_progress=lambda items: tqdm(items, desc="fitting the buzzer", unit="batch", mininterval=5),
    )
    if cache is not None:
        cache.parent.mkdir(parents=True, exist_ok=True)
        model.save(cache)
    return model


def verdicts(metrics: dict[str, Any]) -> str:
    """The figures against the issue's targets, one line."""
    parts = []
    for key, target in TARGETS.items():
        value = metrics[key]
        ok = value is not None and (
            value <= target
            if key == "ece"
            else value > target
            if key == "expected_score"
            else value >= target
        )
        parts.append(
            f"{key} {'—' if value is None else f'{value:.3f}'} ({'≤' if key == 'ece' else '>' if key == 'expected_score' else '≥'} {target}: {'met' if ok else 'MISSED'})"
        )
    return "; ".join(parts)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--max-year", type=int, default=2020)
    parser.add_argument("--model-cache", help="load the reference model from here, or train and save it here")
    parser.add_argument("--no-qanta", action="store_true", help="train on the qbreader packets only")
    parser.add_argument("--held-out", type=int, default=1200, help="tossups of the test years (0: skip)")
    parser.add_argument("--test-years", default="2021-2022", help="FIRST-LAST, after --max-year")
    parser.add_argument("--every", type=int, default=2, help="ask on every N-th word (and the last)")
    parser.add_argument("--players", type=int, default=8)
    parser.add_argument("--seed", type=int, default=1)
    parser.add_argument("--threshold", type=float, help="buzz threshold (default: the learned buzzer's)")
    parser.add_argument("--min-tokens", type=int, help="never buzz earlier (default: the model's)")
    parser.add_argument("--json", help="write every result here")
    args = parser.parse_args(argv)
    if not EXPO.is_dir() or not PACKETS.is_file():
        print(f"skipped: the exhibition folder {EXPO} or the packets {PACKETS} is absent")
        return 0
    first, last = (int(y) for y in args.test_years.split("-"))
    if first <= args.max_year:
        parser.error(f"--test-years {args.test_years} overlaps the training years (≤ {args.max_year})")

    started = time.perf_counter()
    model = reference_model(
        args.max_year, Path(args.model_cache) if args.model_cache else None, not args.no_qanta
    )
    print(
        f"reference TF-IDF ≤{args.max_year}: {len(model.answers)} answers, ready in {time.perf_counter() - started:.0f} s"
    )
    if model.buzzer is not None:
        print(f"  buzzer: {model.buzzer.describe()}")
    threshold = model.threshold if args.threshold is None else args.threshold
    min_tokens = model.min_tokens if args.min_tokens is None else args.min_tokens
    name = f"reference tfidf ≤{args.max_year} (threshold {threshold:.2f}, min {min_tokens} tokens)"
    results: dict[str, Any] = {}

    if args.held_out:
        tossups = be.packet_tossups(PACKETS, min_year=first, max_year=last, sample=args.held_out, seed=0)
        humans = be.simulated_humans(tossups, args.players, args.seed)
        bar = tqdm(total=len(tossups), desc=f"replaying {first}–{last}", unit="tossup", mininterval=5)
        started = time.perf_counter()
        held = be.evaluate_guesser(
            ModelGuesser(model, threshold, min_tokens),
            tossups,
            humans,
            every=args.every,
            progress=lambda done, total: bar.update(done - bar.n),
        )
        bar.close()
        print(
            f"\n{len(tossups)} tossups of {first}–{last} (never trained on), every {args.every} words, "
            f"{args.players} simulated humans (seed {args.seed}), {time.perf_counter() - started:.0f} s"
        )
        print(be.table({name: held}))
        print(verdicts(held["metrics"]))
        accuracy = ", ".join(
            f"{a['fraction']:.0%}: {a['accuracy']:.1%}" for a in held["accuracy_by_fraction"]
        )
        print(f"accuracy by fraction revealed: {accuracy}")
        results[f"held-out {first}–{last}"] = held

    tossups = be.load_tossups(str(EXPO))
    humans = be.simulated_humans(tossups, args.players, args.seed)
    expo = {name: be.evaluate_guesser(ModelGuesser(model, threshold, min_tokens), tossups, humans, every=1)}
    expo.update({f"{team} (recorded)": r for team, r in be.evaluate_recorded(EXPO, tossups, humans).items()})
    print(
        f"\nthe 2024 exhibition ({len(tossups)} tossups), {args.players} simulated humans (seed {args.seed})"
    )
    print(be.table(expo))
    results["expo 2024"] = expo
    if args.json:
        Path(args.json).write_text(json.dumps(results, indent=1), encoding="utf-8")
    return 0


if __name__ == "__main__":
    sys.exit(main())
