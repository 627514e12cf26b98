"""The analysis pages: a fit's leaderboards, ADVSCORE and plots (``frontend.analysis`` builds
them), one subject of a fit, "Refit now" and the progress of running fits."""

from __future__ import annotations

import logging
from typing import Any

from django.http import Http404, HttpRequest, HttpResponse, JsonResponse
from django.shortcuts import get_object_or_404, redirect, render
from django.urls import reverse
from django.views.decorators.http import require_GET, require_POST
from kombu.exceptions import OperationalError as KombuOperationalError

from competition.roles import is_organiser, organiser_required
from frontend import analysis
from irt import tasks
from irt.models import Fit
from irt.selectors import latest_live_fit, same_response_fits

log = logging.getLogger(__name__)


def analysis_page(request: HttpRequest, fit_id: int | None = None) -> HttpResponse:
    """Leaderboards, ADVSCORE_D with its adversary sensitivity, the Figure-2 plots and the
    per-question table of a fit (default: the latest finished fit of the live event); an empty
    state when there is none. ``?flagged=1`` includes flagged tossups in the aggregates. Answer
    lines of tossups in matches not yet ended are shown to logged-in users only. Fits running now
    show their progress (polled, ``api_fit_progress``); logged-in users get "Refit now"
    (``analysis_refit``; ``?refit=queued`` after it). ``twins``: the other finished fits of the
    very same responses as this one (``irt.selectors.same_response_fits``)."""
    fit = latest_live_fit() if fit_id is None else get_object_or_404(Fit, pk=fit_id)
    include_flagged = request.GET.get("flagged") == "1"
    reveal = is_organiser(request.user)
    context: dict[str, Any] = (
        analysis.fit_context(fit, include_flagged, reveal_answers=reveal)
        if fit is not None
        else {"fit": None}
    )
    fits = list(Fit.objects.order_by("-created_at")[:20])
    # Fits of the very same responses (e.g. match:1 and live after one match) say so.
    twins = same_response_fits([*fits, fit] if fit is not None else fits)
    context["fits"] = [{"fit": f, "twins": twins[f.id]} for f in fits]
    context["twins"] = twins[fit.id] if fit is not None else []
    context["running"] = analysis.running_fits()
    context["latest_id"] = analysis.fit_progress(fit.dataset if fit else analysis.LIVE_DATASET)["latest"]
    context["refit_queued"] = request.GET.get("refit") == "queued"
    return render(request, "frontend/analysis.html", context)


def analysis_subject(request: HttpRequest, fit_id: int, subject: str) -> HttpResponse:
    """One subject of a fit (a live identity ``human:#<id>``, ``team:#<id>``, ``bot:#<id>``, or an
    imported ``<kind>:<name>``): skill ± 95 %
    interval, rank, and its responses with buzz positions (answer lines of tossups in unended
    matches for logged-in users only). 404 for an unknown fit or subject."""
    fit = get_object_or_404(Fit, pk=fit_id)
    context = analysis.subject_context(fit, subject, reveal_answers=is_organiser(request.user))
    if context is None:
        raise Http404(f"no subject {subject!r} in fit {fit_id}")
    return render(request, "frontend/analysis_subject.html", context)


@organiser_required
@require_POST
def analysis_refit(request: HttpRequest) -> HttpResponse:
    """ "Refit now" (organisers and analysts: login, CSRF): queue ``irt.tasks.refit`` of the
    ``scope`` field (a fit's dataset), which records the live responses again (identities,
    flags as they are now) and fits; back to the page of fit ``fit`` (if given) with
    ``?refit=queued``, where the fit's progress shows. 400 for a scope without responses, 503
    when the broker is unreachable (nothing queued)."""
    scope = request.POST.get("scope", "").strip()
    if not scope or len(scope) > 100 or not analysis.has_responses(scope):
        return HttpResponse(f"no responses to fit in scope {scope!r}", status=400, content_type="text/plain")
    try:
        tasks.refit.delay(scope)
    except KombuOperationalError:
        log.warning("refit of %s not queued: broker unreachable", scope, exc_info=True)
        return HttpResponse(
            "the task queue (Redis) is unreachable: nothing was queued; try again shortly",
            status=503,
            content_type="text/plain",
        )
    fit_id = request.POST.get("fit", "")
    page = (
        reverse("frontend:analysis_fit", args=[int(fit_id)])
        if fit_id.isdigit()
        else reverse("frontend:analysis")
    )
    return redirect(f"{page}?refit=queued")


@require_GET
def api_fit_progress(request: HttpRequest) -> JsonResponse:
    """Fits running now and the latest finished one of ``?dataset=`` (the analysis page polls
    it): ``{"running": [{id, dataset, progress (0–1), stale}], "latest": id | null}``."""
    return JsonResponse(analysis.fit_progress(request.GET.get("dataset", "")))
