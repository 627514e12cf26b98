"""Who may moderate a match: a logged-in organiser, the match's moderator token (a shared dashboard
link, or the ``X-Moderator-Token`` header), or a session that opened such a link before.

Roles: an *organiser* is any logged-in account except a writer-only one; a *writer* is a member of
the ``writers`` group (invited by an organiser, ``/workshop/writers/``) or an organiser. A writer-only
account (in ``writers``, not staff, not superuser) uses the workshop and nothing an organiser may."""

from __future__ import annotations

import secrets
from collections.abc import Callable
from functools import wraps
from typing import Any

from django.contrib.auth.views import redirect_to_login
from django.http import HttpRequest, HttpResponse, HttpResponseForbidden, JsonResponse

from competition.errors import TossupError
from competition.models import Match
from frontend.errors import api_error

SESSION_TOKENS = "moderator_tokens"  # session key: {join_code: moderator token}
WRITERS_GROUP = "writers"


def is_writer_only(user: Any) -> bool:
    """A writers-group account that is neither staff nor superuser: the workshop only."""
    return (
        user.is_authenticated
        and not (user.is_staff or user.is_superuser)
        and user.groups.filter(name=WRITERS_GROUP).exists()
    )


def is_organiser(user: Any) -> bool:
    """Logged in and not a writer-only account (see the module docstring)."""
    return bool(user.is_authenticated) and not is_writer_only(user)


def is_writer(user: Any) -> bool:
    """May use the workshop: a member of ``writers`` or an organiser (any logged-in account)."""
    return bool(user.is_authenticated)


def organiser_required(view: Callable[..., HttpResponse]) -> Callable[..., HttpResponse]:
    """``login_required`` for organisers: no login goes to the login page, a writer-only account
    gets 403."""

    @wraps(view)
    def wrapped(request: HttpRequest, *args: Any, **kwargs: Any) -> HttpResponse:
        if not request.user.is_authenticated:
            return redirect_to_login(request.get_full_path())
        if is_writer_only(request.user):
            return HttpResponseForbidden(
                "Writers use the workshop (/workshop/); this page is for organisers."
            )
        return view(request, *args, **kwargs)

    return wrapped


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
