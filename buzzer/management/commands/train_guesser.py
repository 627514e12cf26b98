"""``manage.py train_guesser``: train the neural guesser, then fit the ensemble bot on it::

    manage.py train_guesser [--train PACKETS.jsonl.gz] [--extra-train QANTA.json.gz …] [--max-year 2020]
        [--out var/cache/neural-….pt] [--resume] [--config default|tiny] [--epochs N] [--limit N]
        [--no-ensemble]

Defaults: the qbreader dump and the QANTA files of the shared data, up to 2020 (the bots never train on
2021–22, the benchmark's years), checkpoints under ``BOT_CACHE_DIR`` named by the data, the year and the
(``neural-<dump>-qanta-2020.pt`` and ``ensemble-<dump>-qanta-2020.joblib``, ``botlaunch.model_paths``:
where ``runbot --bot ensemble``, ``simulate_match``, the demo and the dashboard look for them; each file
carries its model version). The neural guesser is trained without the two
held-out years (``buzzer.bots.tfidf.held_out_years``) on which the ensemble's buzzer is fitted next.
``--resume`` continues an interrupted run from its partial checkpoint (``<out>.partial``, written
after every epoch). ``--limit N`` trains on N records drawn evenly over the data (a quick check, as CI
does with ``--config tiny``). Prints the time, the peak memory and the files' sizes.
"""

from __future__ import annotations

import resource
import time
import uuid
from pathlib import Path
from typing import Any

import numpy as np
from django.core.management.base import BaseCommand, CommandError, CommandParser
from tqdm import tqdm

from buzzer.bots import ensemble, neural
from buzzer.bots.tfidf import held_out_years, reference_classes
from competition import botlaunch
from formats import FormatError

VALIDATION_TOSSUPS = 1000


class Command(BaseCommand):
    help = "Train the neural guesser (torch) on quizbowl prefixes and fit the ensemble bot on it."

    def add_arguments(self, parser: CommandParser) -> None:
        parser.add_argument("--train", help="qbreader JSONL(.gz) dump (default: the shared data's)")
        parser.add_argument(
            "--extra-train",
            action="append",
            default=None,
            help="more question files (QANTA JSON, …; default with the default dump: the shared QANTA files)",
        )
        parser.add_argument("--max-year", type=int, default=botlaunch.TRAIN_MAX_YEAR)
        parser.add_argument("--out", help="the neural checkpoint (default: under BOT_CACHE_DIR)")
        parser.add_argument("--ensemble-out", help="the ensemble model (default: beside --out)")
        parser.add_argument("--resume", action="store_true", help="continue from <out>.partial")
        parser.add_argument("--config", choices=("default", "tiny"), default="default")
        parser.add_argument("--epochs", type=int, help="override the configuration's epochs")
        parser.add_argument("--limit", type=int, help="train on this many records drawn evenly")
        parser.add_argument("--no-ensemble", action="store_true", help="train the neural guesser only")

    def handle(self, *args: Any, **opts: Any) -> None:
        say = self.stdout.write
        try:
            paths = botlaunch.model_paths(opts["train"], opts["extra_train"], opts["max_year"])
        except FileNotFoundError as exc:
            raise CommandError(str(exc)) from exc
        out = Path(opts["out"] or paths.neural)
        ensemble_out = Path(
            opts["ensemble_out"] or (out.with_name(paths.ensemble.name) if opts["out"] else paths.ensemble)
        )
        config = neural.TINY if opts["config"] == "tiny" else neural.DanConfig()
        if opts["epochs"]:
            config = neural.DanConfig(**{**config.__dict__, "epochs": opts["epochs"]})
        started = time.monotonic()
        try:
            records = ensemble.training_records(paths.train, paths.extra, opts["max_year"])
        except FormatError as exc:
            raise CommandError(str(exc)) from exc
        if opts["limit"]:
            records = [records[i] for i in np.linspace(0, len(records) - 1, opts["limit"]).astype(int)]
        try:
            usable, questions, answers, classes = reference_classes(records)
            held = held_out_years(usable)
        except ValueError as exc:
            raise CommandError(str(exc)) from exc
        keep = np.array([r.group not in held for r in usable])
        trained = np.flatnonzero(keep)
        validate = [i for i in np.flatnonzero(~keep) if usable[i].tossup]
        validate = sorted(np.random.default_rng(0).permutation(validate)[:VALIDATION_TOSSUPS].tolist())
        half = [" ".join(questions[i].split()[: max(1, len(questions[i].split()) // 2)]) for i in validate]
        say(
            f"{len(trained):,} training texts ({sum(usable[i].tossup for i in trained):,} tossups) of "
            f"{len(answers):,} answers up to {opts['max_year']}, the held-out years' {len(validate):,} "
            "tossups at half their words to validate on"
        )
        article_texts, article_labels = neural.article_documents(answers)
        say(f"{len(article_texts):,} Wikipedia summaries name one of these answers: answer-side text too")
        meta = {
            "id": uuid.uuid4().hex,
            "train": paths.train.name,
            "extra": [p.name for p in paths.extra],
            "max_year": opts["max_year"],
            "records": len(trained),
            "limit": opts["limit"],
            "articles": len(article_texts),
        }
        model, state = neural.train(
            [questions[i] for i in trained] + article_texts,
            classes[trained].tolist() + article_labels,
            answers,
            config=config,
            validation=(half, classes[validate].tolist()),
            partial=out.with_name(out.name + ".partial"),
            resume=opts["resume"],
            meta=meta,
            progress=lambda steps, total, desc: tqdm(
                steps, total=total, desc=desc, unit="batch", mininterval=5
            ),
            say=say,
        )
        say(f"indexing every training year's {len(questions):,} documents and the summaries for play…")
        model = model.with_index(questions + article_texts, classes.tolist() + article_labels)
        model.save(out)
        out.with_name(out.name + ".partial").unlink(missing_ok=True)
        say(
            f"neural checkpoint {out} ({out.stat().st_size / 1e6:.0f} MB), {state.seconds / 60:.1f} min of training"
        )
        if not opts["no_ensemble"]:
            fitted = ensemble.EnsembleGuesser.train(
                records,
                model,
                progress=lambda items: tqdm(items, desc="counting words", unit="question", mininterval=5),
                say=say,
            )
            fitted.save(ensemble_out)
            say(f"ensemble {ensemble_out} ({ensemble_out.stat().st_size / 1e6:.0f} MB)")
        peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
        say(f"done in {(time.monotonic() - started) / 60:.1f} min, peak memory {peak:,.0f} MB")
