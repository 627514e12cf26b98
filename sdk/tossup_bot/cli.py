"""``tossup-bot``: seat a guesser in a Tossup match and play until the match ends.

    tossup-bot --url ws://HOST:PORT --code JOIN --token TOKEN --guesser mymodule:MyGuesser \\
        [--option KEY=VALUE …] [--reconnects 20] [--quiet]

Exit status: 0 when the match ended (or the server closed the seat), 2 for a bad command line or a
guesser that cannot be loaded, 1 when the first connection fails (server unreachable, token refused).
"""

from __future__ import annotations

import argparse
import asyncio
import logging
import sys

from websockets.exceptions import InvalidHandshake

from tossup_bot.client import play_url, run_bot
from tossup_bot.loader import GuesserLoadError, load_guesser, parse_options


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog="tossup-bot", description="Play a Tossup match with a guesser.")
    parser.add_argument("--url", required=True, help="the server, e.g. ws://127.0.0.1:8000")
    parser.add_argument("--code", required=True, help="the match's join code")
    parser.add_argument("--token", required=True, help="the bot seat's token")
    parser.add_argument(
        "--guesser", required=True, help="module:Name or path/to/file.py:Name (a Guesser subclass or factory)"
    )
    parser.add_argument(
        "-o",
        "--option",
        action="append",
        default=[],
        metavar="KEY=VALUE",
        help="keyword argument for the guesser's constructor, as a string (repeatable)",
    )
    parser.add_argument(
        "--reconnects", type=int, default=20, help="give up after this many failed reconnections in a row"
    )
    parser.add_argument("--quiet", action="store_true", help="print only the final counters")
    return parser


def main(argv: list[str] | None = None) -> int:
    args = build_parser().parse_args(argv)
    logging.basicConfig(level=logging.WARNING if args.quiet else logging.INFO, format="%(message)s")
    try:
        guesser = load_guesser(args.guesser, parse_options(args.option))
    except GuesserLoadError as exc:
        print(f"tossup-bot: {exc}", file=sys.stderr)
        return 2
    say = (lambda line: None) if args.quiet else (lambda line: print(line, flush=True))
    url = play_url(args.url, args.code, args.token)
    try:
        stats = asyncio.run(run_bot(url, guesser, log=say, reconnects=args.reconnects))
    except (OSError, TimeoutError, InvalidHandshake) as exc:
        print(f"tossup-bot: cannot connect to {args.url}: {exc}", file=sys.stderr)
        return 1
    except KeyboardInterrupt:
        return 130
    print(f"match over: {stats}", flush=True)
    return 0
