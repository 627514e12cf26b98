"""The JSON API of a match: its lobby (``api_match``), joining it (``api_join``) and, for its
moderator, its seats, its tossups and reclaim codes. The bots the server runs are in
``frontend.bot_views``, downloads in ``frontend.export_views``.

Writes go through ``competition.services`` (and ``competition.identities``); every error has the
one shape of ``frontend.errors.api_error``: ``{"code", "message", "extra"?}``."""

from __future__ import annotations

import json
import logging

from django.conf import settings
from django.http import HttpRequest, JsonResponse
from django.views.decorators.http import require_GET, require_POST
from django_ratelimit.core import is_ratelimited

from competition import game, identities, selectors, services
from competition.errors import TossupError
from competition.models import Match, Player, Team
from frontend.access import moderated_match
from frontend.errors import api_error

log = logging.getLogger(__name__)


@require_GET
def api_match(request: HttpRequest, code: str) -> JsonResponse:
    """``{name, status, teams: [{team_id, name, kind}]}`` with the human teams a player may join."""
    match = Match.objects.filter(join_code=code.strip().upper()).first()
    if match is None:
        return api_error(TossupError("not_found", "no match with that join code"), status=404)
    teams = [
        {"team_id": t.id, "name": t.name, "kind": t.kind} for t in match.teams.filter(kind=Team.Kind.HUMAN)
    ]
    return JsonResponse({"name": match.name, "status": match.status, "teams": teams})


def _join_rate_limited(request: HttpRequest) -> bool:
    """Count this /api/join attempt against the client IP's budget (``JOIN_RATE_LIMIT``).
    Every attempt counts, failed ones too: that is what bounds guessing reclaim codes. When
    the shared cache (Redis) is unreachable the join is let through, and logged."""
    try:
        return is_ratelimited(
            request, group="api_join", key="ip", rate=settings.JOIN_RATE_LIMIT, method="POST", increment=True
        )
    except Exception:  # the cache backend's connection errors vary by client library
        log.warning(
            "join rate limit unavailable (cache unreachable); letting the join through", exc_info=True
        )
        return False


@require_POST
def api_join(request: HttpRequest) -> JsonResponse:
    """``{code, name, team, secret?, handle?, identity_secret?}`` → ``{player_id, token, team_id,
    code, identity: {handle, secret?}}``.

    A new name is seated in the lobby. An existing name gets its seat back only with
    ``secret``: the seat's token (the tablet keeps it) or a reclaim code from the moderator
    (then the seat gets a new token). The seat plays as the identity ``handle`` names, claimed
    with ``identity_secret`` when it exists, created when it does not; without a handle, as a
    new identity named after ``name`` (``competition.identities.join``). ``identity.secret`` is
    the new identity's secret, sent once: the tablet keeps it (409 ``seat_taken`` with
    ``extra.field`` ``handle`` for a handle held by someone else). CSRF-protected (the play page sets the cookie and sends
    ``X-CSRFToken``). Errors ``{code, message}``: 400 ``malformed``/``invalid``/``not_found``/
    ``closed``, 409 ``seat_taken``, 429 ``rate_limited`` (per client IP), 403 ``csrf``."""
    if _join_rate_limited(request):
        response = api_error(
            TossupError("rate_limited", "too many join attempts from this address: wait a minute"), 429
        )
        response["Retry-After"] = "60"
        return response
    try:
        body = json.loads(request.body or b"")
    except (json.JSONDecodeError, UnicodeDecodeError):
        return api_error(TossupError("malformed", "body must be a JSON object"))
    if not isinstance(body, dict):
        return api_error(TossupError("malformed", "body must be a JSON object"))
    missing = [k for k in ("code", "name", "team") if not isinstance(body.get(k), str) or not body[k].strip()]
    if missing:
        return api_error(TossupError("invalid", f"missing or empty: {', '.join(missing)}"))
    fields: dict[str, str] = {k: body[k] for k in ("code", "name", "team")}
    secret = body.get("secret", "")
    if not isinstance(secret, str) or len(secret) > 200:
        return api_error(
            TossupError("invalid", "secret must be a string (the seat's token or a reclaim code)")
        )
    handle, identity_secret = body.get("handle", ""), body.get("identity_secret", "")
    if not isinstance(handle, str) or not isinstance(identity_secret, str) or len(identity_secret) > 200:
        return api_error(TossupError("invalid", "handle and identity_secret must be strings"))
    try:
        joined = identities.join(
            code=fields["code"],
            name=fields["name"],
            team=fields["team"],
            secret=secret.strip(),
            handle=handle,
            identity_secret=identity_secret.strip(),
        )
    except services.ServiceError as exc:
        return api_error(exc, status=409 if exc.code == "seat_taken" else 400)
    player = joined.player
    identity = {"handle": joined.competitor.handle}
    if joined.secret:
        identity["secret"] = joined.secret
    return JsonResponse(
        {
            "player_id": player.id,
            "token": player.token,
            "team_id": player.team_id,
            "code": player.match.join_code,
            "identity": identity,
        }
    )


@require_GET
def api_roster(request: HttpRequest, code: str) -> JsonResponse:
    """The match's seats for the moderator: ``{players: [{player_id, name, team, team_id,
    kind, reclaim_pending}]}`` in seat order. 403 ``forbidden`` without moderator rights."""
    match = moderated_match(request, code)
    if isinstance(match, JsonResponse):
        return match
    players = [
        {
            "player_id": p.id,
            "name": p.name,
            "team": p.team.name,
            "team_id": p.team_id,
            "kind": p.kind,
            "reclaim_pending": bool(p.reclaim_code),
        }
        for p in match.players.select_related("team")
    ]
    return JsonResponse({"players": players})


@require_GET
def api_questions(request: HttpRequest, code: str) -> JsonResponse:
    """The match's tossups for the moderator's preview and question list: ``{tossups: [{index,
    question_id, category, tokens, power_index, superpower_index, answer_line, outcome}]}`` in
    reading order. ``tokens``: every word (marks removed); ``power_index``: words before the power
    mark (None: unmarked); ``outcome``: answered|dead|skipped as the tossup last ended (or as a
    corrected ruling left it), None while unread or replayed since. 403 ``forbidden`` without moderator rights."""
    match = moderated_match(request, code)
    if isinstance(match, JsonResponse):
        return match
    outcomes: dict[int, str | None] = {}
    kinds = (
        game.EventName.TOSSUP_STARTED,
        game.EventName.TOSSUP_REPLAYED,
        game.EventName.TOSSUP_ENDED,
        game.EventName.RULING_CORRECTED,
    )
    for event, payload in (
        match.events.filter(event__in=kinds).order_by("seq").values_list("event", "payload")
    ):
        if event == game.EventName.RULING_CORRECTED:  # a corrected ruling changes an ended tossup's outcome
            if payload["outcome"] is not None:
                outcomes[payload["question_id"]] = payload["outcome"]
        else:
            outcomes[payload["question_id"]] = (
                payload["outcome"] if event == game.EventName.TOSSUP_ENDED else None
            )
    tossups = [
        {
            "index": k,
            "question_id": t.question_id,
            "category": t.category,
            "tokens": game.tokens_json(t.tokens),
            "power_index": t.power_index,
            "superpower_index": t.superpower_index,
            "answer_line": t.answer_line,
            "outcome": outcomes.get(t.question_id),
        }
        for k, t in enumerate(selectors.load_state(match.id).tossups)
    ]
    return JsonResponse({"tossups": tossups})


@require_POST
def api_reclaim(request: HttpRequest, code: str, player_id: int) -> JsonResponse:
    """Issue a one-time reclaim code for a human seat: ``{player_id, name, reclaim_code}``.
    The moderator reads it to the player, who types it on the new tablet. Moderator rights
    (login, ``X-Moderator-Token`` or the session's token) and CSRF; 404 for an unknown seat."""
    match = moderated_match(request, code)
    if isinstance(match, JsonResponse):
        return match
    try:
        reclaim_code = services.issue_reclaim_code(match_id=match.id, player_id=player_id)
    except services.ServiceError as exc:
        return api_error(exc, status=404 if exc.code == "not_found" else 400)
    player = Player.objects.get(pk=player_id)
    return JsonResponse({"player_id": player.id, "name": player.name, "reclaim_code": reclaim_code})
