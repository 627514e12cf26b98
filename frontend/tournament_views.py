"""The tournament pages: live standings (teams and players), the games of each round with their
rooms and, for organisers, a link to each game's moderator dashboard; the whole tournament as one
QBJ file (organisers only)."""

from __future__ import annotations

import json

from django.http import HttpRequest, HttpResponse, JsonResponse
from django.shortcuts import get_object_or_404, render
from django.urls import reverse
from django.views.decorators.http import require_GET

from competition import schedule, tournaments
from competition.errors import TossupError
from competition.models import Tournament
from competition.roles import is_organiser
from formats import qbj as qbjfmt
from frontend.errors import api_error
from irt.models import Fit

#: The page reloads itself this often (seconds) while games are being played.
REFRESH_S = 10


def _context(request: HttpRequest, t: Tournament) -> dict[str, object]:
    done = tournaments.results(t)
    table = tournaments.standings(t, done)
    kinds = {s.name: s.kind for team in t.teams.all() for s in team.seats.all()}
    rounds: dict[int, list[dict[str, object]]] = {}
    organiser = is_organiser(request.user)
    for g in t.games.select_related("home", "away", "match", "packet"):
        m = g.match
        scores = m.state.get("scores", {})
        teams = {tm.competitor_id: tm.id for tm in m.teams.all()}
        dashboard = reverse("frontend:dashboard", args=[m.join_code]) + f"?token={m.moderator_token}"
        rounds.setdefault(g.round, []).append(
            {
                "phase": tournaments.PHASE_NAMES[g.phase],
                "room": g.room,
                "packet": g.packet.name,
                "home": g.home.name,
                "away": g.away.name,
                "home_score": scores.get(str(teams.get(g.home.competitor_id))),
                "away_score": scores.get(str(teams.get(g.away.competitor_id))),
                "status": m.status,
                "code": m.join_code,
                "dashboard": dashboard if organiser else None,
                "watch": reverse("frontend:watch", args=[m.join_code]),
            }
        )
    players = [{**p.row(), "kind": kinds.get(p.player, "")} for p in table.players]
    return {
        "tournament": t,
        "format": schedule.Format.from_dict(t.format),
        "teams": [s.row() for s in table.teams],
        "players": players,
        "rounds": sorted(rounds.items()),
        "champion": tournaments.champion(t, done),
        "complete": tournaments.complete(t, done),
        "refresh": REFRESH_S,
        "fit": Fit.objects.filter(dataset=f"tournament:{t.id}", status=Fit.Status.DONE)
        .order_by("-id")
        .first(),
    }


@require_GET
def tournament_page(request: HttpRequest, tournament_id: int) -> HttpResponse:
    """Standings (reloaded every ``REFRESH_S`` s until the tournament is complete) and games."""
    t = get_object_or_404(Tournament, pk=tournament_id)
    return render(request, "frontend/tournament.html", _context(request, t))


@require_GET
def api_standings(request: HttpRequest, tournament_id: int) -> JsonResponse:
    """``{"teams": [...], "players": [...], "champion"}``: the live standings as JSON."""
    t = get_object_or_404(Tournament, pk=tournament_id)
    done = tournaments.results(t)
    table = tournaments.standings(t, done)
    return JsonResponse(
        {
            "teams": [s.row() for s in table.teams],
            "players": [p.row() for p in table.players],
            "champion": tournaments.champion(t, done),
        }
    )


@require_GET
def api_tournament_export(request: HttpRequest, tournament_id: int) -> HttpResponse:
    """The tournament's ended games as one QBJ file. Organisers only (login; 403 otherwise)."""
    if not is_organiser(request.user):
        return api_error(TossupError("forbidden", "needs an organiser login"), status=403)
    t = get_object_or_404(Tournament, pk=tournament_id)
    response = HttpResponse(
        json.dumps(tournaments.qbj_document(t), ensure_ascii=False), content_type=qbjfmt.MIME_TYPE
    )
    response["Content-Disposition"] = f'attachment; filename="tournament-{t.id}.qbj"'
    return response
