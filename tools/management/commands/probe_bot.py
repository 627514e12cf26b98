"""The distractor probe (AddSent-style; ``irt.probe``, ``tools.probe_evaluation``; docs/BOT_EVALUATION.md)::

    manage.py probe_bot --bot ensemble|tfidf|neural|wiki [--held-out 500] [--seed 1] \\
        [--positions start,middle,before_giveaway] [--every 2] [--players 8] [--resamples 2000] [--json out.json]
    manage.py probe_bot --guesser mymodule:MyGuesser [-o KEY=VALUE …] --tossups SOURCE [--limit N] …

Tossups: by default ``--held-out`` tossups of the 2021–22 sets of the shared dump, drawn with seed 0 —
the built-in bots' held-out years and the very tossups of ``tools.bench_bots`` (with
``--held-out 1200``), their donors every 2021–22 tossup; or ``--tossups`` (a question file any
importer reads, or an imported set's name), their donors the same tossups. Prints the table and
stores the report as the bot's latest (``irt.probe_results``, shown on ``/analysis/probe/``) unless
``--no-store``; ``--json`` writes it there too.
"""

from __future__ import annotations

import json
import time
from pathlib import Path
from typing import Any

from django.conf import settings
from django.core.management.base import BaseCommand, CommandError, CommandParser
from django.utils import timezone
from tossup_bot import Guesser, GuesserLoadError, load_guesser, parse_options

from buzzer.bots import builtin
from competition import botlaunch
from competition.management import progress
from formats.errors import FormatError
from irt import probe_results
from irt.probe import POSITIONS
from tools import bot_evaluation as be
from tools import probe_evaluation as pe

HELD_OUT_YEARS = (2021, 2022)


class Command(BaseCommand):
    help = "Probe a bot with distractor sentences (AddSent-style): original vs probed tossups, paired."

    def add_arguments(self, parser: CommandParser) -> None:
        who = parser.add_mutually_exclusive_group(required=True)
        who.add_argument("--bot", choices=builtin.BUILT_IN, help="a built-in bot (buzzer.bots.builtin)")
        who.add_argument("--guesser", help="an SDK guesser: module:Name or path/to/file.py:Name")
        parser.add_argument("--option", "-o", action="append", default=[], metavar="KEY=VALUE")
        parser.add_argument("--tossups", help="a question file or an imported set's name (default: held out)")
        parser.add_argument("--limit", type=int, help="--tossups: at most N tossups")
        parser.add_argument(
            "--held-out", type=int, default=500, help="tossups drawn from the 2021–22 sets (default 500)"
        )
        parser.add_argument("--seed", type=int, default=1, help="distractors, humans, bootstrap (default 1)")
        parser.add_argument(
            "--positions", default=",".join(POSITIONS), help=f"comma-separated, of {', '.join(POSITIONS)}"
        )
        parser.add_argument("--every", type=int, default=2, help="ask on every N-th word (default 2)")
        parser.add_argument("--players", type=int, default=8, help="simulated humans (default 8)")
        parser.add_argument("--resamples", type=int, default=2000, help="bootstrap resamples (default 2000)")
        parser.add_argument(
            "--name", help="the bot's name in the stored results (default: --bot or --guesser)"
        )
        parser.add_argument("--json", help="also write the report here")
        parser.add_argument("--no-store", action="store_true", help="do not store it for /analysis/probe/")
        progress.add_progress_flag(parser)

    def handle(self, *args: Any, **options: Any) -> None:
        positions = [p.strip() for p in options["positions"].split(",") if p.strip()]
        if not positions or any(p not in POSITIONS for p in positions):
            raise CommandError(f"--positions: some of {', '.join(POSITIONS)}, got {options['positions']!r}")
        for key in ("limit", "held_out", "every", "players", "resamples"):
            if options[key] is not None and options[key] < 1:
                raise CommandError(f"--{key.replace('_', '-')} must be ≥ 1")
        if options["option"] and not options["guesser"]:
            raise CommandError("--option is for --guesser")
        started = time.perf_counter()
        tossups, donors, source = self._tossups(options)
        guesser = self._guesser(options)
        name = options["name"] or options["bot"] or options["guesser"]
        with progress.bar(options, desc=f"probing {name}", unit="tossup") as bar:

            def advance(done: int, total: int) -> None:
                bar.total = total
                bar.update(done - bar.n)

            try:
                report = pe.run(
                    guesser,
                    tossups,
                    pool=pe.donor_pool(donors),
                    seed=options["seed"],
                    positions=positions,
                    every=options["every"],
                    players=options["players"],
                    resamples=options["resamples"],
                    progress=advance,
                )
            except ValueError as exc:
                raise CommandError(str(exc)) from exc
        report |= {
            "source": source,
            "seconds": round(time.perf_counter() - started, 1),
            "finished_at": timezone.now().isoformat(timespec="seconds"),
        }
        self.stdout.write(
            f"{name}: {report['tossups']} tossups probed ({report['skipped']} without a distractor; "
            f"{report['same_type']:.0%} of the distractors from a donor of the same answer type), {source}; "
            f"every {options['every']} words, {options['players']} simulated humans, seed {options['seed']}; "
            f"probed − original [95 % paired bootstrap CI, {options['resamples']} resamples]; "
            "fooled: buzzed / ended with the distractor's answer"
        )
        self.stdout.write(pe.table(report))
        if options["json"]:
            Path(options["json"]).write_text(json.dumps({**report, "bot": name}, indent=1), encoding="utf-8")
            self.stdout.write(f"wrote {options['json']}")
        if not options["no_store"]:
            self.stdout.write(f"stored {probe_results.store(name, report)}")

    def _tossups(self, options: dict[str, Any]) -> tuple[list[be.EvalTossup], list[be.EvalTossup], str]:
        """``(tossups to probe, donors, a label of the source)``."""
        try:
            if options["tossups"]:
                tossups = be.load_tossups(options["tossups"], options["limit"])
                return tossups, tossups, str(options["tossups"])
            dump = Path(settings.SHARED_DATA_DIR) / botlaunch.QBREADER
            if not dump.is_file():
                raise CommandError(f"no held-out tossups: {dump} is missing (or give --tossups)")
            low, high = HELD_OUT_YEARS
            donors = be.packet_tossups(dump, min_year=low, max_year=high)
            chosen = be.packet_tossups(dump, min_year=low, max_year=high, sample=options["held_out"], seed=0)
        except (be.EvaluationError, FormatError) as exc:
            raise CommandError(str(exc)) from exc
        return chosen, donors, f"{len(chosen)} held-out {low}–{high} tossups of {dump.name} (seed 0)"

    def _guesser(self, options: dict[str, Any]) -> Guesser:
        if options["guesser"]:
            try:
                return load_guesser(options["guesser"], parse_options(options["option"]))
            except GuesserLoadError as exc:
                raise CommandError(str(exc)) from exc
        bot = options["bot"]
        if bot == "tfidf" and not builtin.tfidf_path().is_file():  # minutes: as tools.bench_bots does
            from tools.bench_bot_eval import reference_model

            self.stdout.write(f"training the reference TF-IDF bot into {builtin.tfidf_path()}…")
            reference_model(botlaunch.TRAIN_MAX_YEAR, builtin.tfidf_path(), True)
        try:
            return builtin.load(bot)
        except builtin.NotTrained as exc:
            raise CommandError(str(exc)) from exc
