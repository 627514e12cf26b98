from django.apps import AppConfig

# The outbox topic of the fit each match end requests (irt.tasks.fit_after_match).
FIT_AFTER_MATCH = "fit_after_match"


def send_fit_after_match(match_id: int) -> None:
    """Queue the fit once, without Celery's own retries: a broker outage raises at once and
    the outbox row stays for ``competition.outbox.sweep_outbox``."""
    from irt.tasks import fit_after_match  # numpy and scikit-learn load on first use, not at setup

    fit_after_match.apply_async(args=[match_id], retry=False)


class IrtConfig(AppConfig):
    name = "irt"

    def ready(self) -> None:
        # Every match that ends gets a durable fit request (competition's outbox); competition
        # itself imports nothing from irt.
        from competition import signals

        signals.on_match_ended(FIT_AFTER_MATCH, send_fit_after_match)
