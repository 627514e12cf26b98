"""The pages of a match: home, the moderator's match list and upload, the moderator dashboard,
the player tablet and the spectator view.

Pages stay thin: writes go through ``competition.services``; the live game runs over the
websocket (docs/PROTOCOL.md). The analysis pages are in ``frontend.analysis_views``, the JSON API
in ``frontend.api``."""

from __future__ import annotations

from pathlib import Path

from django.conf import settings
from django.contrib.auth.views import redirect_to_login
from django.http import HttpRequest, HttpResponse, HttpResponseForbidden
from django.middleware.csrf import get_token
from django.shortcuts import get_object_or_404, redirect, render
from django.urls import reverse
from django.views.decorators.http import require_http_methods

from competition import botlaunch, services
from competition.models import Match, Player
from competition.roles import organiser_required
from competition.vocabulary import FlagProblem
from frontend import desk_views
from frontend.access import moderates, remember_token, token_matches
from frontend.forms import MatchCreateForm
from frontend.upload import PacketUploadForm

FLAG_PROBLEMS = [(p.value, p.label) for p in FlagProblem]


def home(request: HttpRequest) -> HttpResponse:
    return render(request, "frontend/home.html")


@organiser_required
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
            remember_token(request, match)
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


@organiser_required
@require_http_methods(["GET", "POST"])
def upload(request: HttpRequest) -> HttpResponse:
    """Upload a question file (``frontend.upload``); organisers only (login). A refused file is
    400 with the importer's line-numbered error; nothing is written."""
    form = PacketUploadForm(request.POST or None, request.FILES or None)
    counts = form.import_questions() if request.method == "POST" and form.is_valid() else None
    status = 400 if form.is_bound and counts is None else 200
    return render(request, "frontend/upload.html", {"form": form, "counts": counts}, status=status)


def dashboard(request: HttpRequest, code: str) -> HttpResponse:
    """The moderator dashboard: for organisers (login) or with the match's moderator token
    (``?token=``, remembered in the session, for sharing a dashboard without an account).
    A wrong token is 403; no token and no login goes to the login page; a writer-only account
    without the token is 403."""
    match = get_object_or_404(Match, join_code=code.upper())
    token = request.GET.get("token", "")
    if token and not token_matches(token, match):
        return HttpResponseForbidden("That is not this match's moderator token.")
    if not moderates(request, match, token):
        if request.user.is_authenticated:  # a writer-only account: the login page would send it back here
            return HttpResponseForbidden("This account is a writer's: it cannot moderate matches.")
        return redirect_to_login(request.get_full_path())
    remember_token(request, match)
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
            "desk": desk_views.dashboard_desk(match),  # review: a tournament game's desk panel
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
