"""Pages (home, moderator, player tablet, spectator, analyst) and the small JSON API they use.

Views stay thin: writes go through ``competition.services``; the live game runs over the
websocket (docs/PROTOCOL.md). Every ``/api/`` error has one shape: ``{"code", "message"}``.
"""

from __future__ import annotations

import json
import secrets
from pathlib import Path

import plotly
from django.conf import settings
from django.http import (
    FileResponse,
    Http404,
    HttpRequest,
    HttpResponse,
    HttpResponseForbidden,
    JsonResponse,
)
from django.shortcuts import get_object_or_404, redirect, render
from django.views.decorators.csrf import csrf_exempt
from django.views.decorators.http import require_GET, require_http_methods, require_POST

from competition import services
from competition.models import Match, Player, Team
from frontend import analysis
from frontend.forms import MatchCreateForm
from irt import exports
from irt.models import Fit

PLOTLY_JS = Path(plotly.__file__).resolve().parent / "package_data" / "plotly.min.js"
SESSION_TOKENS = "moderator_tokens"  # session key: {join_code: moderator token}
FLAG_PROBLEMS = [
    ("lacks_factuality", "Lacks factuality"),
    ("lacks_specificity", "Lacks specificity / false presupposition"),
    ("subjectivity", "Subjectivity"),
    ("ambiguity", "Ambiguity / multiple answers"),
]


def api_error(code: str, message: str, status: int = 400) -> JsonResponse:
    return JsonResponse({"code": code, "message": message}, status=status)


def home(request: HttpRequest) -> HttpResponse:
    return render(request, "frontend/home.html")


@require_http_methods(["GET", "POST"])
def moderator(request: HttpRequest) -> HttpResponse:
    """The "new match" form (CSRF-protected: the moderator token lands in the session) and
    the list of matches."""
    form = MatchCreateForm(request.POST if request.method == "POST" else None)
    if request.method == "POST" and form.is_valid():
        tossup_ids, bonus_ids = form.question_ids()
        try:
            match = services.create_match(
                name=form.cleaned_data["name"],
                tossup_ids=tossup_ids,
                bonus_ids=bonus_ids,
                preset=form.cleaned_data["preset"],
                teams=form.teams,
                bots=form.bots,
                config={"wpm": form.cleaned_data["wpm"], "auto_rule": form.cleaned_data["auto_rule"]},
            )
        except services.ServiceError as exc:
            form.add_error(None, exc.message)
        else:
            _remember_token(request, match)
            return redirect("frontend:dashboard", code=match.join_code)
    matches = Match.objects.order_by("-created_at")[:50]
    return render(
        request,
        "frontend/moderator.html",
        {"form": form, "matches": matches, "weight_classes": ("light", "mid", "heavy")},
        status=400 if form.is_bound else 200,
    )


def _remember_token(request: HttpRequest, match: Match) -> None:
    tokens = dict(request.session.get(SESSION_TOKENS, {}))
    tokens[match.join_code] = match.moderator_token
    request.session[SESSION_TOKENS] = tokens


def dashboard(request: HttpRequest, code: str) -> HttpResponse:
    """The moderator dashboard; needs the match's moderator token (session or ``?token=``)."""
    match = get_object_or_404(Match, join_code=code.upper())
    token = request.GET.get("token") or request.session.get(SESSION_TOKENS, {}).get(match.join_code, "")
    if not token or not secrets.compare_digest(token, match.moderator_token):
        return HttpResponseForbidden("This dashboard needs the match's moderator token.")
    _remember_token(request, match)
    host = request.get_host()
    train = Path(settings.SHARED_DATA_DIR) / "packets" / "qbreader_packets_2012_2022.jsonl.gz"
    bots = [
        {
            "name": p.name,
            "weight_class": p.weight_class,
            "token": p.token,
            "command": (
                f"python manage.py runbot --url ws://{host} --code {match.join_code} --token {p.token}"
                f" --bot tfidf --train {train}"
            ),
        }
        for p in match.players.filter(kind=Player.Kind.BOT)
    ]
    player_url = request.build_absolute_uri(f"/play/?code={match.join_code}")
    return render(
        request,
        "frontend/dashboard.html",
        {
            "match": match,
            "bots": bots,
            "player_url": player_url,
            "watch_url": request.build_absolute_uri(f"/watch/{match.join_code}/"),
            "page": {"code": match.join_code, "token": match.moderator_token, "role": "moderate"},
            "flag_problems": FLAG_PROBLEMS,
        },
    )


def play(request: HttpRequest) -> HttpResponse:
    """The player tablet. Carries no question data: everything arrives over the socket."""
    return render(
        request,
        "frontend/play.html",
        {
            "page": {"code": request.GET.get("code", "").upper(), "role": "play"},
            "flag_problems": FLAG_PROBLEMS,
        },
    )


def watch(request: HttpRequest, code: str) -> HttpResponse:
    match = get_object_or_404(Match, join_code=code.upper())
    return render(
        request, "frontend/watch.html", {"match": match, "page": {"code": match.join_code, "role": "watch"}}
    )


def analysis_page(request: HttpRequest, fit_id: int | None = None) -> HttpResponse:
    """Leaderboards, ADVSCORE_D with its adversary sensitivity, the Figure-2 plots and the
    per-question table of a fit (default: the latest finished fit of the live event); an empty
    state when there is none. ``?flagged=1`` includes flagged tossups in the aggregates."""
    fit = analysis.latest_live_fit() if fit_id is None else get_object_or_404(Fit, pk=fit_id)
    include_flagged = request.GET.get("flagged") == "1"
    context = analysis.fit_context(fit, include_flagged) if fit is not None else {"fit": None}
    context["fits"] = Fit.objects.order_by("-created_at")[:20]
    return render(request, "frontend/analysis.html", context)


def analysis_subject(request: HttpRequest, fit_id: int, subject: str) -> HttpResponse:
    """One subject of a fit (``human:<name>``, ``team:<name>``, ``bot:<name>``): skill ± 95 %
    interval, rank, and its responses with buzz positions. 404 for an unknown fit or subject."""
    fit = get_object_or_404(Fit, pk=fit_id)
    context = analysis.subject_context(fit, subject)
    if context is None:
        raise Http404(f"no subject {subject!r} in fit {fit_id}")
    return render(request, "frontend/analysis_subject.html", context)


# --- JSON API ----------------------------------------------------------------------------


@require_GET
def api_match(request: HttpRequest, code: str) -> JsonResponse:
    """``{name, status, teams: [{id, name, kind}]}`` with the human teams a player may join."""
    match = Match.objects.filter(join_code=code.strip().upper()).first()
    if match is None:
        return api_error("not_found", "no match with that join code", status=404)
    teams = [{"id": t.id, "name": t.name, "kind": t.kind} for t in match.teams.filter(kind=Team.Kind.HUMAN)]
    return JsonResponse({"name": match.name, "status": match.status, "teams": teams})


# Exempt from CSRF: tablets on a LAN post JSON without a session; the call grants nothing a
# cookie could be abused for (it seats a named player in a lobby and returns that seat's token).
@csrf_exempt
@require_POST
def api_join(request: HttpRequest) -> JsonResponse:
    """``{code, name, team}`` → ``{player_id, token, team_id, code}``; errors 400 ``{code, message}``."""
    try:
        body = json.loads(request.body or b"")
    except (json.JSONDecodeError, UnicodeDecodeError):
        return api_error("malformed", "body must be a JSON object")
    if not isinstance(body, dict):
        return api_error("malformed", "body must be a JSON object")
    fields = {k: body.get(k) for k in ("code", "name", "team")}
    missing = [k for k, v in fields.items() if not isinstance(v, str) or not v.strip()]
    if missing:
        return api_error("invalid", f"missing or empty: {', '.join(missing)}")
    try:
        player = services.join_match(code=fields["code"], name=fields["name"], team=fields["team"])
    except services.ServiceError as exc:
        return api_error(exc.code, exc.message)
    return JsonResponse(
        {
            "player_id": player.id,
            "token": player.token,
            "team_id": player.team_id,
            "code": player.match.join_code,
        }
    )


FIT_TABLES = {
    "subjects": exports.subjects_csv,
    "items": exports.items_csv,
    "matrix": exports.response_matrix_csv,
}


def _download(response: HttpResponse, name: str) -> HttpResponse:
    response["Content-Disposition"] = f'attachment; filename="{name.replace(":", "-")}"'
    return response


@require_GET
def api_fit_export(request: HttpRequest, fit_id: int, fmt: str) -> HttpResponse:
    """A fit's responses and fitted parameters as JSON or CSV (see ``irt.exports``)."""
    fit = Fit.objects.filter(pk=fit_id).first()
    if fit is None:
        return api_error("not_found", f"no fit {fit_id}", status=404)
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
        return api_error("not_found", f"no fit {fit_id}", status=404)
    body = FIT_TABLES[table](fit)
    return _download(HttpResponse(body, content_type="text/csv"), f"fit-{fit.id}-{fit.dataset}-{table}.csv")


def plotly_js(request: HttpRequest) -> FileResponse:
    """plotly.js from the installed ``plotly`` package (no CDN: the pages work offline)."""
    response = FileResponse(PLOTLY_JS.open("rb"), content_type="text/javascript")
    response["Cache-Control"] = "public, max-age=86400"
    return response
