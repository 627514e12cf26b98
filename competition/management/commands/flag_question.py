"""Flag an ill-posed tossup as an editor (ADVSCORE.md §6); flagged tossups are left out of
ADVSCORE aggregates by default from the next fit on."""

from django.core.management.base import BaseCommand

from competition import services
from competition.management.errors import command_error
from competition.vocabulary import FlagProblem


class Command(BaseCommand):
    help = "Flag a tossup as ill-posed: " + " | ".join(FlagProblem)

    def add_arguments(self, parser):
        parser.add_argument("tossup_id", type=int)
        parser.add_argument("--problem", required=True, choices=list(FlagProblem))
        parser.add_argument("--comment", default="")
        parser.add_argument("--reporter", default="editor")

    def handle(self, *args, **opts):
        try:
            flag = services.flag_question_as_editor(
                question_id=opts["tossup_id"],
                problem=opts["problem"],
                comment=opts["comment"],
                reporter=opts["reporter"],
            )
        except services.ServiceError as exc:
            raise command_error(exc) from exc
        self.stdout.write(
            f"flagged tossup {flag.tossup_id} as {flag.problem} ({FlagProblem(flag.problem).label})"
        )
