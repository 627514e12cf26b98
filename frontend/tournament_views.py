"""The tournament pages: live standings (teams and players) and YellowFruit-style statistics over
the official results, the games of each round with their rooms and whether each result is
official and, for organisers, a link to each game's moderator dashboard and to the control desk
(``frontend.desk_views``); the whole tournament as one QBJ, YellowFruit (.yft) or SQBS file
(organisers only).
Visitors without a login are spectators: what they see follows the tournament's public feed
setting (``competition.spectators``)."""

from __future__ import annotations

import json

from django.http import HttpRequest, HttpResponse, JsonResponse
from django.shortcuts import get_object_or_404, render
from django.urls import reverse
from django.views.decorators.http import require_GET

from competition import review, schedule, spectators, tournament_stats, tournaments
from competition.errors import TossupError
from competition.models import Match, Tournament
from competition.roles import is_organiser
from formats import qbj as qbjfmt
from frontend.errors import api_error
from irt.models import Fit
from scoring import stats

#: The page reloads itself this often (seconds) while games are being played.
REFRESH_S = 10


def _viewer(request: HttpRequest, t: Tournament) -> tuple[spectators.FeedPolicy, dict[str, str]]:
    """An organiser (login) sees everything; anyone else the tournament's public feed."""
    if is_organiser(request.user):
        return spectators.OPEN, {}
    return spectators.tournament_policy(t)


def _tables(
    t: Tournament, done: tournaments.Done, policy: spectators.FeedPolicy, names: dict[str, str]
) -> dict[str, object]:
    """The standings and the statistics of the official results among ``done`` (the ended games)
    as this viewer may see them; ``unofficial``: the keys of the ended games not counted yet."""
    official = tournaments.official_results(t, done)
    counted = {r.key for _, r in official}
    table = tournaments.standings(t, official)
    kinds = {s.name: s.kind for team in t.teams.all() for s in team.seats.all()}
    figures = tournament_stats.tournament_stats(t, [r for _, r in official])
    teams, players = spectators.stats_rows(
        [s.row() for s in table.teams],
        [{**p.row(), "kind": kinds.get(p.player, "")} for p in table.players],
        policy,
        names,
    )
    stat_teams, stat_players = spectators.stats_rows(
        [stats.team_row(s, figures.rules) for s in figures.teams],
        [stats.player_row(p, figures.rules) for p in figures.players],
        policy,
        names,
    )
    return {
        "teams": teams,
        "players": players,
        "stat_teams": stat_teams,
        "stat_players": stat_players,
        "champion": tournaments.champion(t, done),
        "unofficial": [r.key for _, r in done if r.key not in counted],
    }


def _context(request: HttpRequest, t: Tournament) -> dict[str, object]:
    done = tournaments.results(t)
    policy, names = _viewer(request, t)
    rounds: dict[int, list[dict[str, object]]] = {}
    organiser = is_organiser(request.user)
    games = list(t.games.select_related("home", "away", "match", "packet"))
    states = review.review_states(games)
    for g in games:
        m = g.match
        scores = m.state.get("scores", {}) if policy.live_scores or m.status == Match.Status.ENDED else {}
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
                "official": states[g.id] == review.ReviewState.OFFICIAL,
                "code": m.join_code,
                "dashboard": dashboard if organiser else None,
                "watch": reverse("frontend:watch", args=[m.join_code]),
            }
        )
    return {
        "tournament": t,
        "format": schedule.Format.from_dict(t.format),
        **_tables(t, done, policy, names),
        "feed": spectators.setting(t.public_feed),
        "individual": policy.individual_stats,
        "rounds": sorted(rounds.items()),
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
    """``{"teams": [...], "players": [...], "stats": {"teams", "players"}, "champion",
    "unofficial": [game key, ...]}``: the live standings and the YellowFruit-style statistics
    (``scoring.stats`` rows; unknown figures null) over the official results as JSON; player rows
    and names as the public feed allows visitors without a login; ``unofficial``: the ended games
    whose result is not official yet (not counted), e.g. ``prelim-r2-g1``."""
    t = get_object_or_404(Tournament, pk=tournament_id)
    policy, names = _viewer(request, t)
    tables = _tables(t, tournaments.results(t), policy, names)
    return JsonResponse(
        {
            "teams": tables["teams"],
            "players": tables["players"],
            "stats": {"teams": tables["stat_teams"], "players": tables["stat_players"]},
            "champion": tables["champion"],
            "unofficial": tables["unofficial"],
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


def _organiser_download(request: HttpRequest, tournament_id: int) -> Tournament | HttpResponse:
    if not is_organiser(request.user):
        return api_error(TossupError("forbidden", "needs an organiser login"), status=403)
    return get_object_or_404(Tournament, pk=tournament_id)


@require_GET
def api_tournament_yft(request: HttpRequest, tournament_id: int) -> HttpResponse:
    """The tournament's ended games as a YellowFruit 4 file (``formats.yft``). Organisers only."""
    t = _organiser_download(request, tournament_id)
    if isinstance(t, HttpResponse):
        return t
    response = HttpResponse(
        json.dumps(tournament_stats.yft_document(t), ensure_ascii=False), content_type="application/json"
    )
    response["Content-Disposition"] = f'attachment; filename="tournament-{t.id}.yft"'
    return response


@require_GET
def api_tournament_sqbs(request: HttpRequest, tournament_id: int) -> HttpResponse:
    """The tournament's ended games as an SQBS file (``formats.sqbs``). Organisers only."""
    t = _organiser_download(request, tournament_id)
    if isinstance(t, HttpResponse):
        return t
    response = HttpResponse(tournament_stats.sqbs_text(t), content_type="text/plain; charset=utf-8")
    response["Content-Disposition"] = f'attachment; filename="tournament-{t.id}.sqbs"'
    return response
