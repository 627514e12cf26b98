"""Pages (home, moderator, player tablet, spectator, analyst) and the small JSON API they use.

Views stay thin: writes go through ``competition.services``; the live game runs over the
websocket (docs/PROTOCOL.md). Every ``/api/`` error has one shape, built by :func:`api_error`
from the error family (``competition.errors``): ``{"code", "message", "extra"?}``.
"""

from __future__ import annotations

import json
import logging
import secrets
from pathlib import Path
from typing import Any

import plotly
from django.conf import settings
from django.contrib.auth.decorators import login_required
from django.contrib.auth.views import redirect_to_login
from django.http import (
    FileResponse,
    Http404,
    HttpRequest,
    HttpResponse,
    HttpResponseForbidden,
    JsonResponse,
)
from django.middleware.csrf import get_token
from django.shortcuts import get_object_or_404, redirect, render
from django.urls import reverse
from django.views.csrf import csrf_failure as django_csrf_failure
from django.views.decorators.http import require_GET, require_http_methods, require_POST
from django_ratelimit.core import is_ratelimited
from kombu.exceptions import OperationalError as KombuOperationalError

from competition import botlaunch, game, identities, selectors, services
from competition import exports as match_exports
from competition.errors import TossupError
from competition.models import Match, MatchEvent, MediaFile, Player, Team
from competition.vocabulary import FlagProblem
from formats import qbj as qbjfmt
from frontend import analysis
from frontend.forms import MatchCreateForm
from frontend.upload import PacketUploadForm
from irt import exports, tasks
from irt.models import Fit
from irt.selectors import same_response_fits

log = logging.getLogger(__name__)

PLOTLY_JS = Path(plotly.__file__).resolve().parent / "package_data" / "plotly.min.js"
SESSION_TOKENS = "moderator_tokens"  # session key: {join_code: moderator token}
FLAG_PROBLEMS = [(p.value, p.label) for p in FlagProblem]


def api_error(error: TossupError, status: int = 400) -> JsonResponse:
    """The HTTP edge's one translation of the error family: ``error.to_dict()`` —
    ``{"code", "message", "extra"?}`` — with HTTP ``status``."""
    return JsonResponse(error.to_dict(), status=status)


def csrf_failure(request: HttpRequest, reason: str = "") -> HttpResponse:
    """``CSRF_FAILURE_VIEW``: the API's JSON error shape under /api/, Django's page elsewhere."""
    if request.path.startswith("/api/"):
        return api_error(
            TossupError("csrf", f"CSRF check failed ({reason}): reload the page and try again"), 403
        )
    return django_csrf_failure(request, reason)


def home(request: HttpRequest) -> HttpResponse:
    return render(request, "frontend/home.html")


@login_required
@require_http_methods(["GET", "POST"])
def moderator(request: HttpRequest) -> HttpResponse:
    """The "new match" form (CSRF-protected: the moderator token lands in the session) and
    the list of matches; organisers only (login)."""
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
                config={
                    "wpm": form.cleaned_data["wpm"],
                    "auto_rule": form.cleaned_data["auto_rule"],
                    "auto_advance": form.cleaned_data["auto_advance"],
                },
            )
        except services.ServiceError as exc:
            form.add_error(None, exc.message)
        else:
            # Bots the server runs: each chosen guesser on its seat (the bot supervisor starts it).
            for bot in form.bots:
                if bot.get("guesser"):
                    seat = match.players.get(name=bot["name"], kind=Player.Kind.BOT)
                    botlaunch.launch(match=match, player_id=seat.id, guesser=bot["guesser"])
            _remember_token(request, match)
            return redirect("frontend:dashboard", code=match.join_code)
    matches = Match.objects.order_by("-created_at")[:50]
    return render(
        request,
        "frontend/moderator.html",
        {
            "form": form,
            "matches": matches,
            "weight_classes": ("light", "mid", "heavy"),
            "guesser_choices": form.guesser_choices,
        },
        status=400 if form.is_bound else 200,
    )


@login_required
@require_http_methods(["GET", "POST"])
def upload(request: HttpRequest) -> HttpResponse:
    """Upload a question file (``frontend.upload``); organisers only (login). A refused file is
    400 with the importer's line-numbered error; nothing is written."""
    form = PacketUploadForm(request.POST or None, request.FILES or None)
    counts = form.import_questions() if request.method == "POST" and form.is_valid() else None
    status = 400 if form.is_bound and counts is None else 200
    return render(request, "frontend/upload.html", {"form": form, "counts": counts}, status=status)


def _remember_token(request: HttpRequest, match: Match) -> None:
    tokens = dict(request.session.get(SESSION_TOKENS, {}))
    tokens[match.join_code] = match.moderator_token
    request.session[SESSION_TOKENS] = tokens


def _token_matches(token: str, match: Match) -> bool:
    return bool(token) and secrets.compare_digest(token.encode(), match.moderator_token.encode())


def moderates(request: HttpRequest, match: Match, token: str = "") -> bool:
    """May this request moderate ``match``? A logged-in organiser, the match's moderator
    ``token`` (a shared dashboard link), or a session that opened such a link before."""
    if request.user.is_authenticated:
        return True
    remembered = request.session.get(SESSION_TOKENS, {}).get(match.join_code, "")
    return _token_matches(token, match) or _token_matches(remembered, match)


def dashboard(request: HttpRequest, code: str) -> HttpResponse:
    """The moderator dashboard: for organisers (login) or with the match's moderator token
    (``?token=``, remembered in the session, for sharing a dashboard without an account).
    A wrong token is 403; no token and no login goes to the login page."""
    match = get_object_or_404(Match, join_code=code.upper())
    token = request.GET.get("token", "")
    if token and not _token_matches(token, match):
        return HttpResponseForbidden("That is not this match's moderator token.")
    if not moderates(request, match, token):
        return redirect_to_login(request.get_full_path())
    _remember_token(request, match)
    host = request.get_host()
    train = Path(settings.SHARED_DATA_DIR) / "packets" / "qbreader_packets_2012_2022.jsonl.gz"
    bots = [
        {
            "name": p.name,
            "weight_class": p.weight_class,
            "token": p.token,
            "command": (
                f"python manage.py runbot --url ws://{host} --code {match.join_code} --token={p.token}"
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
            "share_url": request.build_absolute_uri(
                f"/moderator/{match.join_code}/?token={match.moderator_token}"
            ),
            "page": {
                "code": match.join_code,
                "token": match.moderator_token,
                "csrf": get_token(request),
                # The fit this match's end queues (irt.tasks.fit_after_match): its progress at the end.
                "fit_dataset": f"match:{match.id}",
                "fit_progress_url": reverse("frontend:fit_progress"),
                "fit_url": reverse("frontend:analysis_fit", args=[0]),
            },
            "flag_problems": FLAG_PROBLEMS,
        },
    )


def play(request: HttpRequest) -> HttpResponse:
    """The player tablet. Carries no question data: everything arrives over the socket. Sets
    the CSRF cookie that /api/join needs (its token travels in the page data)."""
    return render(
        request,
        "frontend/play.html",
        {
            "page": {"code": request.GET.get("code", "").upper(), "csrf": get_token(request)},
            "flag_problems": FLAG_PROBLEMS,
        },
    )


def watch(request: HttpRequest, code: str) -> HttpResponse:
    match = get_object_or_404(Match, join_code=code.upper())
    return render(request, "frontend/watch.html", {"match": match, "page": {"code": match.join_code}})


def analysis_page(request: HttpRequest, fit_id: int | None = None) -> HttpResponse:
    """Leaderboards, ADVSCORE_D with its adversary sensitivity, the Figure-2 plots and the
    per-question table of a fit (default: the latest finished fit of the live event); an empty
    state when there is none. ``?flagged=1`` includes flagged tossups in the aggregates. Answer
    lines of tossups in matches not yet ended are shown to logged-in users only. Fits running now
    show their progress (polled, ``api_fit_progress``); logged-in users get "Refit now"
    (``analysis_refit``; ``?refit=queued`` after it). ``twins``: the other finished fits of the
    very same responses as this one (``irt.selectors.same_response_fits``)."""
    fit = analysis.latest_live_fit() if fit_id is None else get_object_or_404(Fit, pk=fit_id)
    include_flagged = request.GET.get("flagged") == "1"
    reveal = request.user.is_authenticated
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
    context = analysis.subject_context(fit, subject, reveal_answers=request.user.is_authenticated)
    if context is None:
        raise Http404(f"no subject {subject!r} in fit {fit_id}")
    return render(request, "frontend/analysis_subject.html", context)


@login_required
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


# --- JSON API ----------------------------------------------------------------------------


@require_GET
def api_match(request: HttpRequest, code: str) -> JsonResponse:
    """``{name, status, teams: [{id, name, kind}]}`` with the human teams a player may join."""
    match = Match.objects.filter(join_code=code.strip().upper()).first()
    if match is None:
        return api_error(TossupError("not_found", "no match with that join code"), status=404)
    teams = [{"id": t.id, "name": t.name, "kind": t.kind} for t in match.teams.filter(kind=Team.Kind.HUMAN)]
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


def _moderated_match(request: HttpRequest, code: str) -> Match | JsonResponse:
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


@require_GET
def api_roster(request: HttpRequest, code: str) -> JsonResponse:
    """The match's seats for the moderator: ``{players: [{player_id, name, team, team_id,
    kind, reclaim_pending}]}`` in seat order. 403 ``forbidden`` without moderator rights."""
    match = _moderated_match(request, code)
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
    match = _moderated_match(request, code)
    if isinstance(match, JsonResponse):
        return match
    outcomes: dict[int, str | None] = {}
    kinds = ("tossup_started", "tossup_replayed", "tossup_ended", "ruling_corrected")
    for event, payload in (
        match.events.filter(event__in=kinds).order_by("seq").values_list("event", "payload")
    ):
        if event == "ruling_corrected":  # a corrected ruling changes an ended tossup's outcome
            if payload["outcome"] is not None:
                outcomes[payload["question_id"]] = payload["outcome"]
        else:
            outcomes[payload["question_id"]] = payload["outcome"] if event == "tossup_ended" else None
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
    match = _moderated_match(request, code)
    if isinstance(match, JsonResponse):
        return match
    try:
        reclaim_code = services.issue_reclaim_code(match_id=match.id, player_id=player_id)
    except services.ServiceError as exc:
        return api_error(exc, status=404 if exc.code == "not_found" else 400)
    player = Player.objects.get(pk=player_id)
    return JsonResponse({"player_id": player.id, "name": player.name, "reclaim_code": reclaim_code})


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
    :func:`api_roster`), 403 otherwise."""
    match = _moderated_match(request, code)
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
    match = _moderated_match(request, code)
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
    match = _moderated_match(request, code)
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
    match = _moderated_match(request, code)
    if isinstance(match, JsonResponse):
        return match
    try:
        botlaunch.stop(match=match, player_id=player_id)
    except services.ServiceError as exc:
        return api_error(exc, status=404)
    return JsonResponse(_server_bots(match))


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
    match = _moderated_match(request, code)
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
    if not request.user.is_authenticated:
        return api_error(TossupError("forbidden", "needs an organiser login"), status=403)
    matches = Match.objects.filter(status=Match.Status.ENDED).order_by("id")
    tournament = request.GET.get("tournament", "")
    if tournament:
        imported = MatchEvent.objects.filter(event=match_exports.IMPORTED, payload__tournament=tournament)
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


def plotly_js(request: HttpRequest) -> FileResponse:
    """plotly.js from the installed ``plotly`` package (no CDN: the pages work offline)."""
    response = FileResponse(PLOTLY_JS.open("rb"), content_type="text/javascript")
    response["Cache-Control"] = "public, max-age=86400"
    return response


@require_GET
def media_file(request: HttpRequest, sha256: str) -> FileResponse:
    """A multimodal tossup's image or audio (``competition.models.MediaFile``) by its content hash,
    at ``competition.game.MEDIA_URL + sha256``. 404 for an unknown hash, and for a file no match
    has revealed yet unless the user is a logged-in organiser (the moderator's preview). Served
    with its stored type, ``nosniff`` and a sandboxing CSP (an SVG image cannot run script here)."""
    media = MediaFile.objects.filter(sha256=sha256).first()
    if media is None or not (media.revealed or request.user.is_authenticated):
        raise Http404("no such media file")
    response = FileResponse(media.file.open("rb"), content_type=media.mime)
    response["X-Content-Type-Options"] = "nosniff"
    response["Content-Security-Policy"] = "default-src 'none'; style-src 'unsafe-inline'; sandbox"
    # The content never changes (the URL is its hash); private: the reveal gate is per user.
    response["Cache-Control"] = "private, max-age=31536000, immutable"
    return response


@require_GET
def healthz(request: HttpRequest) -> JsonResponse:
    """For load balancers and ``docker compose`` health checks: ``{"database": "ok", "redis": "ok"}``
    with 200 when both answer (within about a second), else 503 with the failing one's error class."""
    import redis
    from django.db import connection

    checks: dict[str, str] = {}
    try:
        with connection.cursor() as cursor:
            cursor.execute("SELECT 1")
        checks["database"] = "ok"
    except Exception as exc:
        checks["database"] = f"error: {type(exc).__name__}"
    try:
        client = redis.Redis.from_url(settings.REDIS_URL, socket_connect_timeout=1, socket_timeout=1)
        with client:
            client.ping()
        checks["redis"] = "ok"
    except Exception as exc:
        checks["redis"] = f"error: {type(exc).__name__}"
    healthy = all(value == "ok" for value in checks.values())
    return JsonResponse(checks, status=200 if healthy else 503)
