"""``manage.py runbot``: seat a bot in a match over the player websocket protocol.

    manage.py runbot --url ws://127.0.0.1:8000 --code JOIN --token TOKEN --bot tfidf --train PACKETS.gz \
        [--max-year 2020] [--model-cache model.joblib] [--threshold 0.8]
    manage.py runbot --url ws://127.0.0.1:8000 --code JOIN --token TOKEN --bot embedding --train PACKETS.gz \
        [--max-year 2020] [--max-train 3000] [--model-cache model.npz]
    manage.py runbot --url ws://127.0.0.1:8000 --code JOIN --token TOKEN --bot replay --buzz-file X.buzz.csv \
        [--sentences CATEGORY.csv] [--question-map map.json]
"""

from __future__ import annotations

import asyncio
import time
from pathlib import Path
from typing import Any
from urllib.parse import quote

from django.core.management.base import BaseCommand, CommandError, CommandParser

from buzzer.bots import embedding
from buzzer.bots.client import Guesser, run_bot
from buzzer.bots.embedding import DEFAULT_MAX_TRAIN, EmbeddingGuesser, EncoderUnavailable
from buzzer.bots.replay import ReplayFileError, ReplayGuesser, load_buzz_file, load_question_map
from buzzer.bots.tfidf import RECOMMENDED_MIN_TOKENS, RECOMMENDED_THRESHOLD, TfidfGuesser
from competition.importers import detect_format, parse_file


class Command(BaseCommand):
    help = "Connect a bot (TF-IDF, MiniLM embedding or buzz-log replay) to a match and play until it ends."

    def add_arguments(self, parser: CommandParser) -> None:
        parser.add_argument("--url", required=True, help="server base URL, e.g. ws://127.0.0.1:8000")
        parser.add_argument("--code", required=True, help="the match's join code")
        parser.add_argument("--token", required=True, help="the bot seat's token")
        parser.add_argument("--bot", choices=["tfidf", "embedding", "replay"], default="tfidf")
        parser.add_argument(
            "--threshold",
            type=float,
            default=None,
            help=f"buzz at confidence ≥ this (0–1; tfidf, replay: {RECOMMENDED_THRESHOLD}, "
            f"embedding: {embedding.RECOMMENDED_THRESHOLD})",
        )
        parser.add_argument(
            "--min-tokens",
            type=int,
            default=None,
            help="never buzz before this many tokens (tfidf, embedding: 10; replay: 0)",
        )
        parser.add_argument(
            "--train",
            help="tfidf, embedding: questions to train on (qbreader JSONL[.gz], QANTA or demo JSON)",
        )
        parser.add_argument(
            "--max-year", type=int, help="tfidf, embedding: train on tossups up to this year (inclusive)"
        )
        parser.add_argument(
            "--model-cache", help="tfidf, embedding: load the model from here, or train and save it here"
        )
        parser.add_argument(
            "--max-train",
            type=int,
            default=DEFAULT_MAX_TRAIN,
            help=f"embedding: train on the most recent N tossups (default {DEFAULT_MAX_TRAIN}; encoding is slow)",
        )
        parser.add_argument("--buzz-file", help="replay: a *.buzz.csv log")
        parser.add_argument("--sentences", help="replay (exhibition logs): the <category>.csv sentence file")
        parser.add_argument("--question-map", help="replay: JSON object {DB question id: external id}")

    def handle(self, *args: Any, **options: Any) -> None:
        if options["bot"] == "replay":
            guesser = self._replay(options)
        elif options["bot"] == "embedding":
            guesser = self._embedding(options)
        else:
            guesser = self._tfidf(options)
        min_tokens = 0 if options["bot"] == "replay" else RECOMMENDED_MIN_TOKENS
        threshold = options["threshold"]
        if threshold is None:
            threshold = (
                embedding.RECOMMENDED_THRESHOLD if options["bot"] == "embedding" else RECOMMENDED_THRESHOLD
            )
        base, code, token = options["url"].rstrip("/"), quote(options["code"]), quote(options["token"])
        url = f"{base}/ws/match/{code}/play/?token={token}"
        stats = asyncio.run(
            run_bot(
                url,
                guesser,
                threshold=threshold,
                min_tokens=options["min_tokens"] if options["min_tokens"] is not None else min_tokens,
                log=lambda line: self.stdout.write(line),
            )
        )
        self.stdout.write(self.style.SUCCESS(f"match over: {stats}"))

    def _tfidf(self, options: dict[str, Any]) -> Guesser:
        cache = Path(options["model_cache"]) if options["model_cache"] else None
        if cache is not None and cache.exists():
            self.stdout.write(f"loading model from {cache}")
            return TfidfGuesser.load(cache)
        if not options["train"]:
            raise CommandError("--bot tfidf needs --train PACKETS.jsonl.gz (or an existing --model-cache)")
        started = time.perf_counter()
        try:
            if detect_format(options["train"]) == "qbreader":
                guesser = TfidfGuesser.from_packets(options["train"], max_year=options["max_year"])
            else:  # QANTA or the demo packet: the importer's parser reads them
                parsed = parse_file(options["train"], max_year=options["max_year"])
                guesser = TfidfGuesser.train([(t.question, t.answer_line) for t in parsed.tossups])
        except (OSError, ValueError) as exc:
            raise CommandError(f"cannot train on {options['train']}: {exc}") from exc
        self.stdout.write(
            f"trained on {len(guesser.answers)} answers in {time.perf_counter() - started:.1f} s"
        )
        if cache is not None:
            guesser.save(cache)
        return guesser

    def _embedding(self, options: dict[str, Any]) -> Guesser:
        cache = Path(options["model_cache"]) if options["model_cache"] else None
        try:
            if cache is not None and cache.exists():
                self.stdout.write(f"loading model from {cache}")
                return EmbeddingGuesser.load(cache)
            if not options["train"]:
                raise CommandError(
                    "--bot embedding needs --train PACKETS.jsonl.gz (or an existing --model-cache)"
                )
            started = time.perf_counter()
            try:
                if detect_format(options["train"]) == "qbreader":
                    guesser = EmbeddingGuesser.from_packets(
                        options["train"], max_year=options["max_year"], max_train=options["max_train"]
                    )
                else:  # QANTA or the demo packet: the importer's parser reads them
                    parsed = parse_file(options["train"], max_year=options["max_year"])
                    guesser = EmbeddingGuesser.train(
                        [(t.question, t.answer_line) for t in parsed.tossups], max_train=options["max_train"]
                    )
            except (OSError, ValueError) as exc:
                raise CommandError(f"cannot train on {options['train']}: {exc}") from exc
        except EncoderUnavailable as exc:
            raise CommandError(str(exc)) from exc
        self.stdout.write(
            f"trained on {len(guesser.answers)} answers in {time.perf_counter() - started:.1f} s"
        )
        if cache is not None:
            guesser.save(cache)
        return guesser

    def _replay(self, options: dict[str, Any]) -> Guesser:
        if not options["buzz_file"]:
            raise CommandError("--bot replay needs --buzz-file")
        try:
            buzzes = load_buzz_file(options["buzz_file"], options["sentences"])
            mapping = load_question_map(options["question_map"]) if options["question_map"] else None
        except ReplayFileError as exc:
            raise CommandError(str(exc)) from exc
        self.stdout.write(f"replaying {len(buzzes)} recorded buzzes from {options['buzz_file']}")
        return ReplayGuesser(buzzes, mapping)
