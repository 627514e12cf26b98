from django.apps import AppConfig


class CompetitionConfig(AppConfig):
    name = "competition"

    def ready(self) -> None:
        # A tournament game that ends schedules what comes next (its tournament's next phase or
        # playoff round): a durable job of the match end, so a crash right after the commit
        # delays it only until the outbox sweeper runs it.
        from competition import signals, tournaments

        signals.on_match_ended(tournaments.ADVANCE_TOPIC, tournaments.advance_after_match)
