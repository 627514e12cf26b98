"""``python manage.py advscore_table --data ../shared/data/advscore [--json out.json] [--no-loo]``."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from django.core.management.base import BaseCommand, CommandError, CommandParser

from competition.management import progress
from irt.datasets import advscore_table


class Command(BaseCommand):
    help = (
        "Reproduce ADVSCORE paper Table 1 (μ_D, κ_D, δ_D, ADVSCORE_D) from the authors' saved "
        "parameters and from Tossup's own 2PL fit, with leave-one-human-out range."
    )

    def add_arguments(self, parser: CommandParser) -> None:
        parser.add_argument("--data", required=True, type=Path, help="shared/data/advscore directory")
        parser.add_argument("--json", type=Path, help="write the table as JSON here")
        parser.add_argument("--no-loo", action="store_true", help="skip leave-one-human-out refits")
        progress.add_progress_flag(parser)

    def handle(self, *args: Any, **options: Any) -> None:
        data: Path = options["data"]
        if not data.is_dir():
            raise CommandError(f"{data} is not a directory (expected shared/data/advscore)")
        table = advscore_table(
            data,
            leave_one_out=not options["no_loo"],
            progress=progress.wrapper(options, desc="fitting", unit="dataset"),
        )
        self.stdout.write(
            f"{'dataset':10} {'source':6} {'mu':>8} {'kappa':>8} {'delta':>8} {'advscore':>9}  loo"
        )
        for name, rows in table.items():
            for source, row in rows.items():
                loo = f"[{row['loo_min']:.4f}, {row['loo_max']:.4f}]" if "loo_min" in row else ""
                self.stdout.write(
                    f"{name:10} {source:6} {row['mu']:8.4f} {row['kappa']:8.4f} {row['delta']:8.4f} "
                    f"{row['advscore']:9.4f}  {loo}"
                )
        if options["json"]:
            options["json"].write_text(json.dumps(table, indent=2))
            self.stdout.write(f"wrote {options['json']}")
