"""The control desk's scoresheet review (issue 33 item 4): a logged-in organiser (the tournament
director; ``competition.roles``: a writer-only account is not one) corrects any earlier ruling of a match over HTTP, as the moderator does from the
dashboard's scoresheet over the websocket (``review_ruling``). Each correction is one
``ruling_reviewed`` event naming ``organiser:<username>`` and the reason
(``competition.services.review_ruling``). A buzz the moderator missed is added the same way
(``api_add_buzz``, one ``buzz_added``; ``competition.services.add_buzz``)."""

from __future__ import annotations

import json
from typing import Any

from django.http import HttpRequest, JsonResponse
from django.views.decorators.http import require_POST

from competition import game, services
from competition.errors import TossupError
from competition.models import Match
from competition.roles import is_organiser
from frontend.errors import api_error


def _json_object(request: HttpRequest) -> dict[str, Any] | None:
    try:
        body = json.loads(request.body or b"{}")
    except (ValueError, UnicodeDecodeError):
        return None
    return body if isinstance(body, dict) else None


def _int_or_none(value: Any) -> bool:
    return value is None or (isinstance(value, int) and not isinstance(value, bool))


def _desk_match(request: HttpRequest, code: str) -> Match | JsonResponse:
    """Match ``code`` for an organiser's review request, else the error to answer: 403 without an
    organiser login (a moderator token does not make a control desk, nor does a writer's account),
    404 for an unknown join code."""
    if not is_organiser(request.user):
        return api_error(TossupError("forbidden", "the control desk needs an organiser login"), status=403)
    match = Match.objects.filter(join_code=code.strip().upper()).first()
    if match is None:
        return api_error(TossupError("not_found", "no match with that join code"), status=404)
    return match


@require_POST
def api_review(request: HttpRequest, code: str) -> JsonResponse:
    """Correct the standing ruling at ``history_index`` of match ``code``'s scoresheet: body
    ``{"history_index", "reason", "ruling"?, "player_id"?}`` (``game.ReviewRuling``). Answers
    ``{"seq", "scores", "event"}`` (the ``ruling_reviewed`` or, for the newest ruling of the
    question being played, ``ruling_corrected``). A logged-in organiser only (403 ``forbidden``
    otherwise: a moderator token does not make a control desk) and CSRF; 404 unknown match; 400
    a malformed body or what the engine refuses (its code, nothing changed)."""
    match = _desk_match(request, code)
    if isinstance(match, JsonResponse):
        return match
    body = _json_object(request)
    if (
        body is None
        or not _int_or_none(body.get("history_index"))
        or body.get("history_index") is None
        or not isinstance(body.get("reason"), str)
        or not isinstance(body.get("ruling", ""), str)
        or not _int_or_none(body.get("player_id"))
    ):
        return api_error(
            TossupError(
                "malformed",
                'body must be a JSON object {"history_index": int, "reason": str, "ruling"?, "player_id"?}',
            )
        )
    try:
        applied = services.review_ruling(
            match_id=match.id,
            history_index=body["history_index"],
            reason=body["reason"],
            ruling=body.get("ruling", ""),
            player_id=body.get("player_id"),
            by=f"organiser:{request.user.get_username()}",
        )
    except game.RuleViolation as exc:
        return api_error(exc)
    changed = next(
        (
            e
            for e in applied.events
            if e["event"] in (game.EventName.RULING_REVIEWED, game.EventName.RULING_CORRECTED)
        ),
        None,
    )
    return JsonResponse(
        {
            "seq": applied.seq,
            "event": changed and changed["event"],
            "scores": changed and changed["data"]["scores"],
        }
    )


@require_POST
def api_add_buzz(request: HttpRequest, code: str) -> JsonResponse:
    """Add a buzz the moderator missed to match ``code``'s scoresheet: body ``{"tossup_index",
    "player_id", "ruling", "reason", "token_index"?}`` (``game.AddBuzz``; no ``token_index``: after
    the question ended). Answers ``{"seq", "scores", "event", "points"}`` (the ``buzz_added``).
    The same checks as :func:`api_review`: a logged-in organiser only (403), CSRF, 404 unknown
    match, 400 a malformed body or what the engine refuses (its code, nothing changed)."""
    match = _desk_match(request, code)
    if isinstance(match, JsonResponse):
        return match
    body = _json_object(request)
    if (
        body is None
        or any(body.get(k) is None or not _int_or_none(body.get(k)) for k in ("tossup_index", "player_id"))
        or not _int_or_none(body.get("token_index"))
        or not isinstance(body.get("ruling"), str)
        or not isinstance(body.get("reason"), str)
    ):
        return api_error(
            TossupError(
                "malformed",
                'body must be a JSON object {"tossup_index": int, "player_id": int, "ruling": str,'
                ' "reason": str, "token_index"?: int}',
            )
        )
    try:
        applied = services.add_buzz(
            match_id=match.id,
            tossup_index=body["tossup_index"],
            player_id=body["player_id"],
            ruling=body["ruling"],
            reason=body["reason"],
            token_index=body.get("token_index"),
            by=f"organiser:{request.user.get_username()}",
        )
    except game.RuleViolation as exc:
        return api_error(exc)
    (added,) = [e for e in applied.events if e["event"] == game.EventName.BUZZ_ADDED]
    return JsonResponse(
        {
            "seq": applied.seq,
            "event": added["event"],
            "scores": added["data"]["scores"],
            "points": added["data"]["points"],
        }
    )
