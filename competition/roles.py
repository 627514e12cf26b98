"""Who is an organiser and who a writer (issue 32; docs/OPERATIONS.md "Writers").

An *organiser* is any logged-in account except a writer-only one; a *writer* is a member of the
``writers`` group (invited by an organiser at ``/workshop/writers/``) or an organiser. A writer-only
account (in ``writers``, neither staff nor superuser) uses the writing workshop and nothing an
organiser may."""

from __future__ import annotations

from collections.abc import Callable
from functools import wraps
from typing import Any

from django.contrib.auth.views import redirect_to_login
from django.http import HttpRequest, HttpResponse, HttpResponseForbidden

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
