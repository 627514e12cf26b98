"""The API's one error shape: every ``/api/`` error is built by :func:`api_error` from the error
family (``competition.errors``): ``{"code", "message", "extra"?}``, a failed CSRF check too."""

from __future__ import annotations

from django.http import HttpRequest, HttpResponse, JsonResponse
from django.views.csrf import csrf_failure as django_csrf_failure

from competition.errors import TossupError


def api_error(error: TossupError, status: int = 400) -> JsonResponse:
    """The HTTP edge's one translation of the error family: ``error.to_dict()`` —
    ``{"code", "message", "extra"?}`` — with HTTP ``status``."""
    return JsonResponse(error.to_dict(), status=status)


def csrf_failure(request: HttpRequest, reason: str = "") -> HttpResponse:
    """``CSRF_FAILURE_VIEW``: the API's JSON error shape under /api/, Django's page elsewhere."""
    if request.path.startswith(("/api/", "/workshop/api/")):
        return api_error(
            TossupError("csrf", f"CSRF check failed ({reason}): reload the page and try again"), 403
        )
    return django_csrf_failure(request, reason)
