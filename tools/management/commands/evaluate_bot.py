"""Evaluate a bot offline against human buzz points, as the QANTA 2025/2026 leaderboards do
(``tools.bot_evaluation``, metrics in ``irt.botmetrics``)::

    manage.py evaluate_bot --guesser mymodule:MyGuesser [-o KEY=VALUE …] --tossups SOURCE \\
        [--humans simulated|log] [--players 8] [--seed 1] [--every 1] [--limit N] [--json out.json]
    manage.py evaluate_bot --bot tfidf --train PACKETS.jsonl.gz --max-year 2020 --tossups SOURCE …
    manage.py evaluate_bot --tossups ../shared/data/expo/2024_470 --recorded ../shared/data/expo/2024_470 \\
        [--bot tfidf …]          # the recorded 2024 exhibition bots side by side (with the new bot)

SOURCE: a question file any importer reads (not imported) or an imported question set's name.
Every evaluated bot is stored (``irt.models.BotEvaluation``) for the bot leaderboard (/analysis/bots/);
``--queue`` hands the run to the Celery worker instead (``tools.tasks.evaluate_bot``) and prints its id.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from django.core.management.base import BaseCommand, CommandError, CommandParser
from django.utils import timezone
from kombu.exceptions import OperationalError as KombuOperationalError
from tossup_bot import parse_options

from competition.management import progress
from formats.errors import FormatError
from irt.models import BotEvaluation
from tools import bot_evaluation as be
from tools.tasks import evaluate_bot


class Command(BaseCommand):
    help = (
        "Replay a bot over tossups prefix by prefix and score it against human buzz points (QANTA metrics)."
    )

    def add_arguments(self, parser: CommandParser) -> None:
        who = parser.add_mutually_exclusive_group()
        who.add_argument("--guesser", help="an SDK guesser: module:Name or path/to/file.py:Name")
        who.add_argument("--bot", choices=["tfidf", "wiki"], help="a built-in bot (as runbot --bot)")
        parser.add_argument("--option", "-o", action="append", default=[], metavar="KEY=VALUE")
        parser.add_argument("--train", help="--bot: questions to train on (as runbot)")
        parser.add_argument(
            "--extra-train",
            action="append",
            metavar="FILE",
            help="--bot tfidf: also train on this file (as runbot)",
        )
        parser.add_argument("--max-year", type=int, help="--bot: train on tossups up to this year")
        parser.add_argument(
            "--model-cache", help="--bot: load the model from here, or train and save it here"
        )
        parser.add_argument("--threshold", type=float, help="--bot: buzz at confidence ≥ this")
        parser.add_argument("--min-tokens", type=int, help="--bot: never buzz before this many tokens")
        parser.add_argument("--tossups", required=True, help="a question file or an imported set's name")
        parser.add_argument("--humans", default="simulated", choices=be.HUMAN_SOURCES)
        parser.add_argument("--players", type=int, default=8, help="simulated humans (default 8)")
        parser.add_argument("--seed", type=int, default=1, help="simulated humans' seed (default 1)")
        parser.add_argument(
            "--every", type=int, default=1, help="ask on every N-th prefix (default 1: each word)"
        )
        parser.add_argument("--limit", type=int, help="at most N tossups")
        parser.add_argument(
            "--recorded", help="an exhibition folder: also score its recorded bots (team folders)"
        )
        parser.add_argument("--name", help="the bot's name on the leaderboard (default: guesser or bot)")
        parser.add_argument("--json", help="write the results here")
        parser.add_argument("--queue", action="store_true", help="run on the Celery worker; print the id")
        progress.add_progress_flag(parser)

    def handle(self, *args: Any, **options: Any) -> None:
        if not options["guesser"] and not options["bot"] and not options["recorded"]:
            raise CommandError("give --guesser, --bot or --recorded")
        if options["option"] and not options["guesser"]:
            raise CommandError("--option is for --guesser")
        if options["guesser"] and any(
            options[k] is not None for k in ("train", "extra_train", "threshold", "min_tokens")
        ):
            raise CommandError("--train, --threshold and --min-tokens are for --bot")
        if options["limit"] is not None and options["limit"] < 1:
            raise CommandError("--limit must be ≥ 1")
        try:
            spec = self._spec(options)
        except ValueError as exc:
            raise CommandError(str(exc)) from exc
        if options["queue"]:
            self._queue(spec, options)
            return
        results: dict[str, dict[str, Any]] = {}
        try:
            if options["guesser"] or options["bot"]:
                results[spec["name"]] = self._run(spec, options)
            if options["recorded"]:
                results.update(self._recorded(spec, options))
        except (be.EvaluationError, FormatError) as exc:
            raise CommandError(str(exc)) from exc
        self.stdout.write(be.table(results))
        if options["json"]:
            document = {"tossups": spec["tossups"], "humans": _humans_label(spec), "bots": results}
            Path(options["json"]).write_text(json.dumps(document, indent=1), encoding="utf-8")
            self.stdout.write(f"wrote {options['json']}")

    def _spec(self, options: dict[str, Any]) -> dict[str, Any]:
        keys = (
            "guesser",
            "bot",
            "train",
            "extra_train",
            "max_year",
            "model_cache",
            "threshold",
            "min_tokens",
        )
        keys = (*keys, "tossups")
        spec = {k: options[k] for k in keys} | {
            k: options[k] for k in ("humans", "players", "seed", "every", "limit")
        }
        spec["options"] = parse_options(options["option"])
        spec["name"] = options["name"] or options["guesser"] or options["bot"] or "recorded"
        return spec

    def _queue(self, spec: dict[str, Any], options: dict[str, Any]) -> None:
        if options["recorded"] or not (options["guesser"] or options["bot"]):
            raise CommandError("--queue runs one --guesser or --bot (recorded bots are scored inline)")
        evaluation = BotEvaluation.objects.create(name=spec["name"], spec=spec)
        try:
            evaluate_bot.delay(evaluation.id)
        except KombuOperationalError as exc:
            evaluation.delete()
            raise CommandError(f"the Celery broker is unreachable: {exc}") from exc
        self.stdout.write(f"queued evaluation {evaluation.id} ({spec['name']})")

    def _run(self, spec: dict[str, Any], options: dict[str, Any]) -> dict[str, Any]:
        evaluation = BotEvaluation.objects.create(name=spec["name"], spec=spec)
        with progress.bar(options, desc=spec["name"], unit="tossup") as bar:

            def advance(done: int, total: int) -> None:
                bar.total = total
                bar.update(done - bar.n)

            try:
                evaluation = be.run_stored(evaluation.id, self.stdout.write, advance)
            except be.EvaluationError:
                evaluation.delete()  # a spec that never ran is no leaderboard entry
                raise
        result: dict[str, Any] = evaluation.result or {}
        return result

    def _recorded(self, spec: dict[str, Any], options: dict[str, Any]) -> dict[str, dict[str, Any]]:
        tossups = be.load_tossups(spec["tossups"], spec["limit"])
        humans = be.human_buzz_points(spec["humans"], tossups, players=spec["players"], seed=spec["seed"])
        results = be.evaluate_recorded(options["recorded"], tossups, humans)
        now = timezone.now()
        for team, result in results.items():
            recorded = {k: spec[k] for k in ("tossups", "humans", "players", "seed", "limit")}
            BotEvaluation.objects.create(
                name=f"{team} (recorded)",
                spec={**recorded, "recorded": str(Path(options["recorded"]) / team)},
                status=BotEvaluation.Status.DONE,
                progress=1.0,
                result=result,
                finished_at=now,
            )
        return {f"{team} (recorded)": r for team, r in results.items()}


def _humans_label(spec: dict[str, Any]) -> str:
    if spec["humans"] == "simulated":
        return f"simulated ({spec['players']} players, seed {spec['seed']})"
    return "buzz log of finished matches"
