from django.apps import AppConfig


class CompetitionConfig(AppConfig):
    name = "competition"

    def ready(self) -> None:
        # A tournament game that ends schedules what comes next (its tournament's next phase or
        # playoff round) in the process that stored the end, right after the commit.
        from competition import signals, tournaments

        signals.events_committed.connect(tournaments.on_events_committed, dispatch_uid="tournament_advance")
