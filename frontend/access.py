"""Who may moderate a match: a logged-in organiser, the match's moderator token (a shared dashboard
link, or the ``X-Moderator-Token`` header), or a session that opened such a link before.

Who is an organiser (a writer-only account is not): ``competition.roles``."""

from __future__ import annotations

import secrets

from django.http import HttpRequest, JsonResponse

from competition.errors import TossupError
from competition.models import Match
from competition.roles import is_organiser
from frontend.errors import api_error

SESSION_TOKENS = "moderator_tokens"  # session key: {join_code: moderator token}


def remember_token(request: HttpRequest, match: Match) -> None:
    """Keep ``match``'s moderator token in the session: later requests moderate it without one."""
    tokens = dict(request.session.get(SESSION_TOKENS, {}))
    tokens[match.join_code] = match.moderator_token
    request.session[SESSION_TOKENS] = tokens


def token_matches(token: str, match: Match) -> bool:
    """Is ``token`` ``match``'s moderator token (compared in constant time; empty never is)?"""
    return bool(token) and secrets.compare_digest(token.encode(), match.moderator_token.encode())


def moderates(request: HttpRequest, match: Match, token: str = "") -> bool:
    """May this request moderate ``match``? A logged-in organiser, the match's moderator
    ``token`` (a shared dashboard link), or a session that opened such a link before."""
    if is_organiser(request.user):
        return True
    remembered = request.session.get(SESSION_TOKENS, {}).get(match.join_code, "")
    return token_matches(token, match) or token_matches(remembered, match)


def moderated_match(request: HttpRequest, code: str) -> Match | JsonResponse:
    """The match if this request may moderate it (login, ``X-Moderator-Token`` header or the
    session's remembered token), else the API error to return."""
    match = Match.objects.filter(join_code=code.strip().upper()).first()
    if match is None:
        return api_error(TossupError("not_found", "no match with that join code"), status=404)
    if not moderates(request, match, request.headers.get("X-Moderator-Token", "")):
        return api_error(
            TossupError("forbidden", "needs an organiser login or the match's moderator token"), status=403
        )
    return match
