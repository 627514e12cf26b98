"""``python manage.py import_responses PATH --format advscore|advscore-text|pyirt|cycles
[--dataset NAME] [--fit]``: load an external response set into the response store."""

from __future__ import annotations

from pathlib import Path

from django.core.management.base import BaseCommand, CommandError, CommandParser

from competition.management import progress
from irt import pipeline
from irt.importers import FORMATS, ResponseFormatError, read_responses


class Command(BaseCommand):
    help = (
        "Import responses (ADVSCORE CSV matrix, its raw text layout, py-irt jsonlines or "
        "qb-tournament-runner cycles.jsonl) into a dataset; re-importing a file replaces its rows."
    )

    def add_arguments(self, parser: CommandParser) -> None:
        parser.add_argument("path", type=Path)
        parser.add_argument("--format", required=True, choices=sorted(FORMATS))
        parser.add_argument("--dataset", help="dataset name (default: the file name without suffix)")
        parser.add_argument("--fit", action="store_true", help="fit the dataset afterwards")
        progress.add_progress_flag(parser)

    def handle(self, *args, path: Path, format: str, dataset: str | None, fit: bool, **options) -> None:
        if not path.is_file():
            raise CommandError(f"{path}: no such file")
        name = dataset or path.name.split(".")[0]
        try:
            rows = read_responses(path, format)
            count = pipeline.replace_imported(name, f"import:{path.name}", rows)
        except (ResponseFormatError, ValueError) as exc:
            raise CommandError(str(exc)) from exc
        subjects = {(r.kind, r.subject) for r in rows}
        humans = sum(kind == "human" for kind, _ in subjects)
        self.stdout.write(
            f"{name}: {count} responses from {path.name} "
            f"({humans} humans, {len(subjects) - humans} bots, {len({r.item for r in rows})} items)"
        )
        if fit:
            with progress.fraction_bar(options, f"fitting {name}") as advance:
                result = pipeline.fit_scope(name, progress=advance)
            adv = result.summary.get("advscore")
            self.stdout.write(
                f"fit #{result.id}: ADVSCORE_D = {adv if adv is None else round(adv, 4)} "
                f"in {result.duration_s or 0:.3f} s"
            )
