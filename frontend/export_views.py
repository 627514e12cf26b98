"""Downloads: a match's exports (QBJ, the runner's cycles and zip), every ended match as one QBJ
file, and a fit's responses and tables (JSON, CSV)."""

from __future__ import annotations

import json

from django.http import HttpRequest, HttpResponse, JsonResponse
from django.views.decorators.http import require_GET

from competition import exports as match_exports
from competition.errors import TossupError
from competition.game import EventName
from competition.models import Match, MatchEvent
from formats import qbj as qbjfmt
from frontend.access import is_organiser, moderated_match
from frontend.errors import api_error
from irt import exports
from irt.models import Fit

FIT_TABLES = {
    "subjects": exports.subjects_csv,
    "items": exports.items_csv,
    "matrix": exports.response_matrix_csv,
}


def _download(response: HttpResponse, name: str) -> HttpResponse:
    response["Content-Disposition"] = f'attachment; filename="{name.replace(":", "-")}"'
    return response


#: Match exports (``competition.exports``): content type and file name suffix per format.
MATCH_EXPORTS = {
    "qbj": (qbjfmt.MIME_TYPE, ".qbj"),
    "cycles": ("application/x-ndjson", "-cycles.jsonl"),
    "runner": ("application/zip", "-runner.zip"),
}


@require_GET
def api_match_export(request: HttpRequest, code: str, fmt: str) -> HttpResponse:
    """A match as a download: ``qbj`` (a QBJ tournament file), ``cycles`` (qb-tournament-runner's
    ``cycles.jsonl``) or ``runner`` (a zip of every runner file). The files carry guesses and, for
    ``runner``, answer lines: organisers (login) or the match's moderator token only (the
    ``X-Moderator-Token`` header or the session of a dashboard opened with it), 403 otherwise;
    404 for an unknown code or format."""
    if fmt not in MATCH_EXPORTS:
        return api_error(TossupError("not_found", f"no export format {fmt!r}"), status=404)
    match = moderated_match(request, code)
    if isinstance(match, JsonResponse):
        return match
    content_type, suffix = MATCH_EXPORTS[fmt]
    if fmt == "runner":
        body: str | bytes = match_exports.runner_zip(match)
    elif fmt == "cycles":
        body = match_exports.render(match, fmt)
    else:
        body = json.dumps(match_exports.qbj_document([match]), ensure_ascii=False)
    return _download(HttpResponse(body, content_type=content_type), f"{match.join_code}{suffix}")


@require_GET
def api_event_export(request: HttpRequest) -> HttpResponse:
    """Every ended match as one QBJ tournament file; ``?tournament=NAME`` keeps the matches
    imported from that tournament. Organisers only (login; 403 otherwise)."""
    if not is_organiser(request.user):
        return api_error(TossupError("forbidden", "needs an organiser login"), status=403)
    matches = Match.objects.filter(status=Match.Status.ENDED).order_by("id")
    tournament = request.GET.get("tournament", "")
    if tournament:
        imported = MatchEvent.objects.filter(event=EventName.MATCH_IMPORTED, payload__tournament=tournament)
        matches = matches.filter(id__in=imported.values("match_id"))
    body = json.dumps(match_exports.qbj_document(list(matches), tournament or None), ensure_ascii=False)
    return _download(HttpResponse(body, content_type=qbjfmt.MIME_TYPE), "event.qbj")


@require_GET
def api_fit_export(request: HttpRequest, fit_id: int, fmt: str) -> HttpResponse:
    """A fit's responses and fitted parameters as JSON or CSV (see ``irt.exports``)."""
    fit = Fit.objects.filter(pk=fit_id).first()
    if fit is None:
        return api_error(TossupError("not_found", f"no fit {fit_id}"), status=404)
    name = f"fit-{fit.id}-{fit.dataset}"
    if fmt == "csv":
        return _download(HttpResponse(exports.export_csv(fit), content_type="text/csv"), f"{name}.csv")
    return _download(JsonResponse(exports.export_json(fit)), f"{name}.json")


@require_GET
def api_fit_table(request: HttpRequest, fit_id: int, table: str) -> HttpResponse:
    """One CSV table of a fit: ``subjects`` (skills), ``items`` (the ADVSCORE table) or ``matrix``
    (responses in the ADVSCORE paper's layout, readable by ``import_responses --format advscore``)."""
    fit = Fit.objects.filter(pk=fit_id).first()
    if fit is None:
        return api_error(TossupError("not_found", f"no fit {fit_id}"), status=404)
    body = FIT_TABLES[table](fit)
    return _download(HttpResponse(body, content_type="text/csv"), f"fit-{fit.id}-{fit.dataset}-{table}.csv")
