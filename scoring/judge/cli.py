"""Command line: ``python -m scoring.judge "<answer line>" "<given>" [--token-index N --token-count M]``."""

from __future__ import annotations

import argparse

from scoring.judge.decision import judge


def main(argv: list[str] | None = None) -> int:
    """CLI: ``python -m scoring.judge "<answer line>" "<given>" [--token-index N --token-count M]``."""
    parser = argparse.ArgumentParser(prog="python -m scoring.judge", description=main.__doc__)
    parser.add_argument("answer_line")
    parser.add_argument("given")
    parser.add_argument("--token-index", type=int, default=None)
    parser.add_argument("--token-count", type=int, default=None)
    parser.add_argument("--question", default=None, help="tossup text, to locate timing clauses")
    args = parser.parse_args(argv)
    v = judge(
        args.answer_line,
        args.given,
        token_index=args.token_index,
        token_count=args.token_count,
        question=args.question,
    )
    print(f"verdict: {v.verdict}")
    print(f"directed prompt: {v.directed_prompt or '-'}")
    print(f"reason: {v.reason}")
    return 0
