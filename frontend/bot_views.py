"""The bot leaderboard (/analysis/bots/): every bot that played an ended live match, with its QANTA
buzz figures against the room's humans (the QANTA leaderboard's definitions, qanta-challenge/ai_workflows
``metrics/qb_metrics.py``; ``irt.botmetrics.evaluate_live`` over
``irt.selectors.live_bot_tossups``; calibration and accuracy by fraction revealed are unknown live,
shown as "—" with the reason), and every offline bot evaluation (``irt.models.BotEvaluation``, made
by ``manage.py evaluate_bot`` or its Celery task) ranked by QANTA expected score, with the
reliability diagrams and accuracy by fraction revealed of the finished ones (plotly).

And the bots the server runs on a match's bot seats (``competition.botlaunch``; the dashboard's "Bots
the server runs" card): their JSON API, with moderator rights (``frontend.access``)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from django.http import HttpRequest, HttpResponse, JsonResponse
from django.shortcuts import render
from django.views.decorators.http import require_GET, require_POST

from competition import botlaunch, services
from competition.errors import TossupError
from competition.models import Match, Player
from frontend.access import moderated_match
from frontend.errors import api_error
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


# --- bots the server runs (competition.botlaunch; the dashboard's "Bots the server runs" card) ----


def _server_bots(match: Match) -> dict[str, Any]:
    """What the card shows: the guessers this server knows (no API key, nor its variable's name),
    why configured ones are missing, and each bot seat with the bot the server runs there."""
    registry = botlaunch.known_guessers()
    launches = botlaunch.seat_launches(match)
    seats = []
    for p in match.players.filter(kind=Player.Kind.BOT):
        row = launches.get(p.id)
        launch = None
        if row is not None:
            launch = {
                "guesser": row.guesser,
                "weight_class": row.weight_class,
                "cost": row.cost,
                "wanted": row.wanted,
                "state": row.state,
                "restarts": row.restarts,
                "detail": row.detail,
            }
        seats.append({"player_id": p.id, "name": p.name, "weight_class": p.weight_class, "launch": launch})
    guessers = [
        {"key": g.key, "label": g.label, "weight_class": g.weight_class, "cost": g.cost, "note": g.note}
        for g in registry.guessers
    ]
    teams = [{"team_id": t.id, "name": t.name, "kind": t.kind} for t in match.teams.order_by("id")]
    return {
        "guessers": guessers,
        "problems": registry.problems,
        "seats": seats,
        "teams": teams,
        "weight_classes": botlaunch.WEIGHT_CLASSES,
        "status": match.status,
    }


@require_GET
def api_bots(request: HttpRequest, code: str) -> JsonResponse:
    """``{guessers: [{key, label, weight_class, cost, note}], problems: [str], seats: [{player_id,
    name, weight_class, launch: {guesser, weight_class, cost, wanted, state, restarts, detail} |
    null}], teams: [{team_id, name, kind}], weight_classes, status}``: moderator rights (as
    :func:`frontend.api.api_roster`), 403 otherwise."""
    match = moderated_match(request, code)
    if isinstance(match, JsonResponse):
        return match
    return JsonResponse(_server_bots(match))


def _json_object(request: HttpRequest) -> dict | None:
    """The request's JSON body if it is an object, else None (unparsable or another type)."""
    try:
        body = json.loads(request.body or b"")
    except (json.JSONDecodeError, UnicodeDecodeError):
        return None
    return body if isinstance(body, dict) else None


@require_POST
def api_bot_launch(request: HttpRequest, code: str, player_id: int) -> JsonResponse:
    """Run a known guesser on a bot seat: body ``{"guesser": key}``; the server's bot supervisor
    starts it (``manage.py bot_supervisor``). Moderator rights and CSRF; answers as :func:`api_bots`.
    404 unknown seat, 409 match ended, 400 unknown guesser or a bad body."""
    match = moderated_match(request, code)
    if isinstance(match, JsonResponse):
        return match
    body = _json_object(request)
    if body is None or not isinstance(body.get("guesser"), str):
        return api_error(TossupError("malformed", 'body must be a JSON object {"guesser": key}'))
    try:
        botlaunch.launch(match=match, player_id=player_id, guesser=body["guesser"])
    except services.ServiceError as exc:
        return api_error(exc, status={"not_found": 404, "closed": 409}.get(exc.code, 400))
    return JsonResponse(_server_bots(match))


@require_POST
def api_bot_add(request: HttpRequest, code: str) -> JsonResponse:
    """A new bot seat that the server runs, in the lobby or while the match runs: body ``{"name",
    "team_id", "guesser", "weight_class"?, "cost"?}`` (``team_id`` null: a new team of its own;
    class and cost default to the guesser's; ``botlaunch.add_bot``). Moderator rights and CSRF; answers as :func:`api_bots`. 404 unknown
    team, 409 match ended, 400 a bad body, name, guesser, class or cost."""
    match = moderated_match(request, code)
    if isinstance(match, JsonResponse):
        return match
    body = _json_object(request)
    shapes = {"name": str, "team_id": int | None, "guesser": str}
    if body is None or not all(isinstance(body.get(k), t) for k, t in shapes.items()):
        return api_error(
            TossupError("malformed", 'body must be a JSON object {"name", "team_id", "guesser", …}')
        )
    weight_class, cost = body.get("weight_class") or None, body.get("cost")
    if weight_class is not None and not isinstance(weight_class, str):
        return api_error(TossupError("malformed", "weight_class must be a string"))
    try:
        botlaunch.add_bot(
            match=match,
            name=body["name"],
            team_id=body["team_id"],
            guesser=body["guesser"],
            weight_class=weight_class,
            cost=cost,
        )
    except services.ServiceError as exc:
        return api_error(exc, status={"not_found": 404, "closed": 409}.get(exc.code, 400))
    return JsonResponse(_server_bots(match), status=201)


@require_POST
def api_bot_stop(request: HttpRequest, code: str, player_id: int) -> JsonResponse:
    """Stop the bot the server runs on a bot seat. Moderator rights and CSRF; answers as
    :func:`api_bots`; 404 when the server runs none there."""
    match = moderated_match(request, code)
    if isinstance(match, JsonResponse):
        return match
    try:
        botlaunch.stop(match=match, player_id=player_id)
    except services.ServiceError as exc:
        return api_error(exc, status=404)
    return JsonResponse(_server_bots(match))
