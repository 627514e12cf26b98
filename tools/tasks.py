"""Celery tasks of the tools app: offline bot evaluations (``tools.bot_evaluation``)."""

from __future__ import annotations

from celery import shared_task

from tools import bot_evaluation
from tools.bot_evaluation import EvaluationError


@shared_task(bind=True, acks_late=True, time_limit=3600)
def evaluate_bot(self, evaluation_id: int) -> dict[str, object]:
    """Run the stored ``irt.models.BotEvaluation`` ``evaluation_id``; its ``progress`` field (0–1)
    and the task state ``PROGRESS`` (``{"done", "total"}``) follow the tossups replayed. A bad spec
    (unknown source, no humans, a guesser that cannot load) marks it failed and is not retried.
    Returns ``{"evaluation", "status"}``."""

    def progress(done: int, total: int) -> None:
        if self.request.id:
            self.update_state(state="PROGRESS", meta={"done": done, "total": total})

    try:
        evaluation = bot_evaluation.run_stored(evaluation_id, progress=progress)
    except EvaluationError:  # stored as failed with its message; running it again would not help
        return {"evaluation": evaluation_id, "status": "failed"}
    return {"evaluation": evaluation.id, "status": evaluation.status}
