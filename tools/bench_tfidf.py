"""Benchmark the TF-IDF guesser on the real qbreader packets: training time and memory, accuracy, latency.

    .venv/bin/python -m tools.bench_tfidf [--max-year 2020] [--test 2000] [--no-calibrate]

Trains on every tossup up to --max-year, then answers the first --test tossups from later years at 25/50/75/100 %
of their words. Accuracy counts a guess right when its answer_key equals the main answer's key (stricter than
the answer judge). Prints figures; asserts nothing.
"""

from __future__ import annotations

import argparse
import os
import resource
import sys
import time
from pathlib import Path

from buzzer.bots.answers import answer_key, main_answer
from buzzer.bots.tfidf import TfidfGuesser, read_packet_tossups

DATA = Path(os.environ.get("TOSSUP_SHARED_DATA", Path(__file__).resolve().parents[3] / "shared" / "data"))


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--max-year", type=int, default=2020)
    parser.add_argument("--test", type=int, default=2000)
    parser.add_argument("--no-calibrate", action="store_true")
    args = parser.parse_args()
    packets = DATA / "packets" / "qbreader_packets_2012_2022.jsonl.gz"
    if not packets.exists():
        sys.exit(f"{packets} absent: the benchmark needs ../shared/data beside the project")

    started = time.perf_counter()
    guesser = TfidfGuesser.from_packets(packets, max_year=args.max_year, calibrate=not args.no_calibrate)
    train_s = time.perf_counter() - started
    peak_mb = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
    n_classes, n_features = guesser.matrix.shape
    print(
        f"train ≤{args.max_year}: {train_s:.1f} s, peak RSS {peak_mb:.0f} MB, {n_classes} answers, {n_features} terms"
    )

    test = [
        (q, answer_key(main_answer(a))) for q, a in read_packet_tossups(packets, min_year=args.max_year + 1)
    ]
    test = [(q, key) for q, key in test if q and key][: args.test]
    known = {answer_key(a) for a in guesser.answers}
    print(
        f"test: {len(test)} tossups after {args.max_year}; {sum(k in known for _, k in test) / len(test):.1%} "
        "have an answer seen in training (the accuracy ceiling)"
    )

    for fraction in (0.25, 0.5, 0.75, 1.0):
        correct = buzzed = buzzed_correct = 0
        started = time.perf_counter()
        for question, key in test:
            words = question.split()
            guess, confidence = guesser.guess(" ".join(words[: max(1, round(fraction * len(words)))]))
            right = answer_key(guess) == key
            correct += right
            if confidence >= 0.5:
                buzzed += 1
                buzzed_correct += right
        per_guess_ms = (time.perf_counter() - started) / len(test) * 1000
        precision = f"{buzzed_correct / buzzed:.1%}" if buzzed else "n/a"
        print(
            f"{fraction:>4.0%} of words: accuracy {correct / len(test):.1%}; confidence ≥ 0.5 on "
            f"{buzzed / len(test):.1%} with precision {precision}; {per_guess_ms:.2f} ms/guess"
        )


if __name__ == "__main__":
    main()
