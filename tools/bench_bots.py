"""Benchmark the TF-IDF and MiniLM embedding guessers side by side on the real qbreader packets.

    .venv/bin/python -m tools.bench_bots [--max-year 2020] [--max-train 3000] [--test 500] [--seed 0]

Both guessers train on the same most recent --max-train tossups up to --max-year (a fair comparison); the
TF-IDF guesser trained on every tossup up to --max-year is the reference. Each then answers a seeded sample of
--test later tossups at 25/50/75/100 % of their words, one guess at a time as in live play. A guess is right
when its answer_key equals the main answer's key (stricter than the answer judge). Prints training time and
memory, ms per guess, accuracy, and buzz rate and precision at each guesser's recommended threshold (marked *) and a few others; asserts
nothing. ``tools.bench_tfidf`` remains the TF-IDF-only benchmark.
"""

from __future__ import annotations

import argparse
import os
import random
import resource
import sys
import time
from collections.abc import Callable
from pathlib import Path
from typing import Protocol, TypeVar

import torch

from buzzer.bots import embedding, tfidf
from buzzer.bots.answers import answer_key, main_answer
from buzzer.bots.client import Model as Guesser
from buzzer.bots.embedding import EmbeddingGuesser
from buzzer.bots.tfidf import TfidfGuesser, read_packet_tossups

DATA = Path(os.environ.get("TOSSUP_SHARED_DATA", Path(__file__).resolve().parents[3] / "shared" / "data"))
FRACTIONS = (0.25, 0.5, 0.75, 1.0)
SWEEP = (0.2, 0.3, 0.4, 0.5, 0.8)


def _rss_mb() -> float:
    """Current resident set size of this process in MB (Linux /proc)."""
    for line in Path("/proc/self/status").read_text().splitlines():
        if line.startswith("VmRSS:"):
            return int(line.split()[1]) / 1024
    return float("nan")


def _peak_mb() -> float:
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024


class _Trained(Guesser, Protocol):
    answers: list[str]


T = TypeVar("T", bound=_Trained)


def _timed_train(name: str, build: Callable[[], T]) -> T:
    rss, started = _rss_mb(), time.perf_counter()
    guesser = build()
    print(
        f"{name}: trained in {time.perf_counter() - started:.1f} s on {len(guesser.answers)} answers; "
        f"RSS +{_rss_mb() - rss:.0f} MB (process peak {_peak_mb():.0f} MB)"
    )
    return guesser


def _evaluate(name: str, guesser: Guesser, test: list[tuple[str, str]], threshold: float) -> None:
    """Print accuracy, ms/guess and buzz rate / precision at ``threshold`` (and a sweep) per share of words."""
    for fraction in FRACTIONS:
        outcomes = []
        started = time.perf_counter()
        for question, key in test:
            words = question.split()
            guess, confidence = guesser.guess(" ".join(words[: max(1, round(fraction * len(words)))]))
            outcomes.append((answer_key(guess) == key, confidence))
        per_guess_ms = (time.perf_counter() - started) / len(test) * 1000
        accuracy = sum(right for right, _ in outcomes) / len(test)
        sweep = []
        for cut in sorted({threshold, *SWEEP}):
            buzzes = [right for right, confidence in outcomes if confidence >= cut]
            precision = f"{sum(buzzes) / len(buzzes):.0%}" if buzzes else "n/a"
            sweep.append(
                f"{'*' if cut == threshold else ''}≥{cut}: {len(buzzes) / len(test):.0%} @ {precision}"
            )
        print(
            f"  {name:<15} {fraction:>4.0%} words: accuracy {accuracy:6.1%}, {per_guess_ms:6.1f} ms/guess; "
            f"buzz rate @ precision {'; '.join(sweep)}"
        )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--max-year", type=int, default=2020)
    parser.add_argument("--max-train", type=int, default=embedding.DEFAULT_MAX_TRAIN)
    parser.add_argument("--test", type=int, default=500)
    parser.add_argument("--seed", type=int, default=0)
    args = parser.parse_args()
    packets = DATA / "packets" / "qbreader_packets_2012_2022.jsonl.gz"
    if not packets.exists():
        sys.exit(f"{packets} absent: the benchmark needs ../shared/data beside the project")

    records = list(read_packet_tossups(packets, max_year=args.max_year))
    subset = [(q, a) for q, a in records if q and answer_key(main_answer(a))][-args.max_train :]
    later = [
        (q, answer_key(main_answer(a))) for q, a in read_packet_tossups(packets, min_year=args.max_year + 1)
    ]
    later = [(q, key) for q, key in later if q and key]
    test = random.Random(args.seed).sample(later, min(args.test, len(later)))
    print(
        f"training: {len(subset)} most recent tossups ≤{args.max_year} (of {len(records)}); "
        f"test: {len(test)} of {len(later)} tossups after {args.max_year}; torch threads "
        f"{torch.get_num_threads()}"
    )

    emb = _timed_train(f"embedding ({len(subset)})", lambda: EmbeddingGuesser.train(subset, max_train=None))
    same = _timed_train(f"tfidf ({len(subset)})", lambda: TfidfGuesser.train(subset))
    full = _timed_train(f"tfidf (all ≤{args.max_year})", lambda: TfidfGuesser.train(records))
    for name, guesser in (("subset", same), ("all", full)):
        known = {answer_key(a) for a in guesser.answers}
        print(
            f"test answers seen in training ({name}): {sum(k in known for _, k in test) / len(test):.1%} (ceiling)"
        )

    _evaluate("embedding", emb, test, embedding.RECOMMENDED_THRESHOLD)
    _evaluate("tfidf same data", same, test, tfidf.RECOMMENDED_THRESHOLD)
    _evaluate("tfidf all", full, test, tfidf.RECOMMENDED_THRESHOLD)


if __name__ == "__main__":
    main()
