"""The bot leaderboard (/analysis/bots/): every bot that played an ended live match, with its QANTA
buzz figures against the room's humans (the QANTA leaderboard's definitions, qanta-challenge/ai_workflows
``metrics/qb_metrics.py``; ``irt.botmetrics.evaluate_live`` over
``irt.selectors.live_bot_tossups``; calibration and accuracy by fraction revealed are unknown live,
shown as "—" with the reason), and every offline bot evaluation (``irt.models.BotEvaluation``, made
by ``manage.py evaluate_bot`` or its Celery task) ranked by QANTA expected score, with the
reliability diagrams and accuracy by fraction revealed of the finished ones (plotly)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from django.http import HttpRequest, HttpResponse
from django.shortcuts import render

from irt import selectors
from irt.botmetrics import LIVE_UNKNOWN, OUTCOME_CLASSES, evaluate_live
from irt.models import BotEvaluation

#: Finished evaluations drawn on the plots (the best by expected score).
PLOTTED = 12


def _row(evaluation: BotEvaluation) -> dict[str, Any]:
    metrics = (evaluation.result or {}).get("metrics", {})
    spec = evaluation.spec or {}
    humans = spec.get("humans", "")
    if humans == "simulated":
        humans = f"simulated ({spec.get('players')} players, seed {spec.get('seed')})"
    tossups = str(spec.get("tossups", ""))
    classes = metrics.get("outcome_classes") or {}
    return {
        "evaluation": evaluation,
        "metrics": metrics,
        "tossups": tossups,
        "tossups_short": Path(tossups).name if "/" in tossups else tossups,  # a file: its name
        "humans": humans,
        # tossups per outcome class in OUTCOME_CLASSES order (empty for an evaluation stored before them)
        "outcome_classes": [classes.get(k, 0) for k in OUTCOME_CLASSES] if classes else [],
    }


def live_rows() -> list[dict[str, Any]]:
    """One row per bot that played an ended live match, best expected score first (a bot that
    never faced a human last; ties: higher human win rate, then name): ``{subject, name (its current
    handle), metrics (LiveBotMetrics), matches [(id, name, join code)]}``."""
    bots = selectors.live_bot_tossups()
    labels = selectors.subject_labels(b.subject for b in bots)
    rows = [
        {
            "subject": b.subject,
            "name": labels[b.subject],
            "metrics": evaluate_live(b.tossups),
            "matches": b.matches,
        }
        for b in bots
    ]
    rows.sort(
        key=lambda r: (
            r["metrics"].expected_score is None,
            -(r["metrics"].expected_score or 0.0),
            -(r["metrics"].human_win_rate or 0.0),
            r["name"].lower(),
        )
    )
    return rows


def bots_page(request: HttpRequest) -> HttpResponse:
    """The live leaderboard (:func:`live_rows`), then the leaderboard of finished evaluations (best expected score first; ties: higher human win rate), the
    running or queued ones with their progress, the failed ones with their error, and the plots of
    the best :data:`PLOTTED` finished ones."""
    evaluations = list(BotEvaluation.objects.all())
    done = [_row(e) for e in evaluations if e.status == BotEvaluation.Status.DONE and e.result]
    done.sort(
        key=lambda r: (
            -(r["metrics"].get("expected_score") or 0.0),
            -(r["metrics"].get("human_win_rate") or 0.0),
        )
    )
    plots = [
        {
            "name": f"#{r['evaluation'].id} {r['evaluation'].name}",
            "reliability": r["evaluation"].result.get("reliability", []),
            "accuracy_by_fraction": r["evaluation"].result.get("accuracy_by_fraction", []),
        }
        for r in done[:PLOTTED]
    ]
    context = {
        "live": live_rows(),
        "unknown": LIVE_UNKNOWN,
        "done": done,
        "pending": [
            e for e in evaluations if e.status in (BotEvaluation.Status.QUEUED, BotEvaluation.Status.RUNNING)
        ],
        "failed": [e for e in evaluations if e.status == BotEvaluation.Status.FAILED][:10],
        "plots": plots,
    }
    return render(request, "frontend/bots.html", context)
