"""Evaluate a bot offline against human buzz points, as the QANTA 2025/2026 leaderboards do
(``tools.bot_evaluation``, metrics in ``irt.botmetrics``)::

    manage.py evaluate_bot --guesser mymodule:MyGuesser [-o KEY=VALUE …] --tossups SOURCE \\
        [--humans simulated|log] [--players 8] [--seed 1] [--every 1] [--limit N] [--json out.json]
    manage.py evaluate_bot --bot tfidf --train PACKETS.jsonl.gz --max-year 2020 --tossups SOURCE …
    manage.py evaluate_bot --tossups ../shared/data/expo/2024_470 --recorded ../shared/data/expo/2024_470 \\
        [--bot tfidf …]          # the recorded 2024 exhibition bots side by side (with the new bot)
    manage.py evaluate_bot … --scoring qanta26 [--track 500mb|6gb|open] [--size 420MB]
        # also the QANTA 2026 computer-side score (irt.qanta26; docs/BOT_EVALUATION.md)

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
from irt import qanta26
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
        who.add_argument(
            "--bot", choices=["ensemble", "tfidf", "wiki"], help="a built-in bot (as runbot --bot)"
        )
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
        parser.add_argument(
            "--scoring",
            choices=qanta26.known_computer_scorings(),
            help="also score by these computer-side rules (qanta26: QANTA 2026 points, normalised, deflated)",
        )
        parser.add_argument(
            "--track",
            help="--scoring: 500mb | 6gb | open (default: the guesser's declared weight_class, else open)",
        )
        parser.add_argument("--size", help="--scoring: the system's registered size, e.g. 420MB or 5.5GB")
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
        computer = self._computer_scoring(spec, options)
        if options["queue"]:
            self._queue(spec, options)
            return
        results: dict[str, dict[str, Any]] = {}
        try:
            if options["guesser"] or options["bot"]:
                results[spec["name"]] = self._run(spec, options)
            if options["recorded"]:
                results.update(self._recorded(spec, options))
            if computer is not None and (options["guesser"] or options["bot"]):
                score = be.qanta26_score(result=results[spec["name"]], every=spec["every"], **computer)
                results[spec["name"]]["computer_score"] = {**score, "track_source": options["track_source"]}
        except (be.EvaluationError, FormatError) as exc:
            raise CommandError(str(exc)) from exc
        self.stdout.write(be.table(results))
        if computer is not None:
            self.stdout.write(_computer_table(results, computer["scoring"]))
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

    def _computer_scoring(self, spec: dict[str, Any], options: dict[str, Any]) -> dict[str, Any] | None:
        """``--scoring``'s arguments of :func:`tools.bot_evaluation.qanta26_score` (None without it),
        checked before anything runs: the track is ``--track``, else the guesser's declared
        ``weight_class`` (the guesser is built once more to read it), else open."""
        options["track_source"] = ""
        if not options["scoring"]:
            if options["track"] or options["size"]:
                raise CommandError("--track and --size are for --scoring")
            return None
        if options["queue"]:
            raise CommandError("--scoring is computed inline: not with --queue")
        track, options["track_source"] = options["track"], "--track"
        if track is None and options["guesser"]:
            try:
                declared = getattr(be.build_guesser(spec), "weight_class", None)
            except be.EvaluationError as exc:
                raise CommandError(str(exc)) from exc
            if declared:
                track, options["track_source"] = str(declared), "declared"
        if track is None:
            track, options["track_source"] = "open", "not declared"
        try:
            size = qanta26.parse_size(options["size"]) if options["size"] else None
            chosen = qanta26.track_of(track)
            qanta26.deflation_factor(chosen, size, qanta26.load_computer_scoring(options["scoring"]))
        except ValueError as exc:
            raise CommandError(str(exc)) from exc
        return {"track": chosen.value, "size_bytes": size, "scoring": options["scoring"]}

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
        if options["scoring"]:
            for team in be.recorded_teams(options["recorded"]):
                # Another system than --guesser/--bot: its size is unknown, its track only --track's.
                track = options["track"] or "open"
                runs = be.recorded_runs(team, tossups, humans)
                score = be.qanta26_score(runs, track=track, size_bytes=None, scoring=options["scoring"])
                source = "--track" if options["track"] else "not declared"
                results[team.name]["computer_score"] = {**score, "track_source": source}
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


def _computer_table(results: dict[str, dict[str, Any]], scoring: str) -> str:
    """The ``--scoring`` table: per bot its track (and where it came from), commits, correct commits by
    quartile of the reveal, powers, points out of the maximum, normalised (0–1), size, deflation and
    the deflated score (— when unknown: no size on a capped track)."""
    head = ["bot", "track", "tossups", "commits", "correct", "Q1", "Q2", "Q3", "Q4", "powers", "points"]
    head += ["max", "normalised", "size MB", "deflation", "deflated"]
    body = []
    for name, r in results.items():
        c = r.get("computer_score")
        if c is None:
            continue
        row = [name, f"{c['track']} ({c['track_source']})", str(c["tossups"]), str(c["commits"])]
        row += [str(c["correct_commits"]), *(str(q) for q in c["by_quartile"]), str(c["powers"])]
        row += [f"{c['points']:.2f}", f"{c['max_points']:.2f}"]
        row += ["—" if c["normalised"] is None else f"{c['normalised']:.4f}"]
        row += ["—" if c["size_bytes"] is None else f"{c['size_bytes'] / 1e6:,.1f}"]
        row += ["—" if c[k] is None else f"{c[k]:.4f}" for k in ("deflation", "deflated")]
        body.append(row)
    widths = [max(len(row[i]) for row in [head, *body]) for i in range(len(head))]
    lines = [
        "  ".join(
            c.ljust(w) if i <= 1 else c.rjust(w) for i, (c, w) in enumerate(zip(row, widths, strict=True))
        )
        for row in [head, *body]
    ]
    lines.insert(1, "-" * len(lines[0]))
    title = (
        f"\n{scoring} computer-side score (tossups; docs/BOT_EVALUATION.md, QANTA 2026 computer-side score)"
    )
    return "\n".join([title, *lines])
