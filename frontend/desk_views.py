"""The tournament director's control desk (``competition.review``): the control page (rooms and
their state, results to review, the desk's history), the review and help APIs, device pairing
(``/room/``: a short code or the control page's QR code takes a device to its room's current game
dashboard) and the "new tournament" form.

API errors are ``{"code", "message", "extra"?}`` (``frontend.errors.api_error``); a review from
someone who is not the director (nor a superuser) is 403 and changes nothing."""

from __future__ import annotations

import json
from typing import Any

import segno
from django.http import HttpRequest, HttpResponse, JsonResponse
from django.middleware.csrf import get_token
from django.shortcuts import get_object_or_404, redirect, render
from django.urls import reverse
from django.views.decorators.http import require_GET, require_http_methods, require_POST

from competition import review, services, tournaments
from competition.errors import TossupError
from competition.models import DeskEntry, Match, Tournament, TournamentGame, TournamentRoom
from competition.roles import organiser_required
from frontend.access import moderated_match, remember_token
from frontend.errors import api_error
from frontend.tournament_forms import TournamentCreateForm

SESSION_ROOM = "paired_room"  # session key: the pairing code of the room this device is paired to
#: The control page reloads itself this often (seconds), unless a reason is being typed.
CONTROL_REFRESH_S = 10


def _refused(exc: review.ReviewError) -> JsonResponse:
    return api_error(exc, status=exc.status)


def _body(request: HttpRequest) -> dict[str, Any] | JsonResponse:
    try:
        data = json.loads(request.body or b"{}")
    except (json.JSONDecodeError, UnicodeDecodeError):
        return api_error(TossupError("invalid", "the body is not JSON"))
    if not isinstance(data, dict):
        return api_error(TossupError("invalid", "the body must be a JSON object"))
    return data


def _game_of(match: Match) -> TournamentGame | None:
    return TournamentGame.objects.select_related("tournament", "match").filter(match=match).first()


def qr_svg(url: str) -> str:
    """``url`` as an inline SVG QR code (segno), black on white, quiet zone included."""
    return segno.make(url, error="m").svg_inline(scale=4, dark="#000", light="#fff")


# --- the control page ------------------------------------------------------------------------


def _rooms(request: HttpRequest, t: Tournament) -> list[dict[str, Any]]:
    rooms = review.ensure_rooms(t)
    games = list(t.games.select_related("match", "home", "away").order_by("round", "slot"))
    states = review.review_states(games)
    out = []
    for room in rooms:
        here = [g for g in games if g.room == room.name]
        now = review.current_game(room, here)
        pair_url = request.build_absolute_uri(reverse("frontend:room_pair", args=[room.code]))
        out.append(
            {
                "id": room.id,
                "name": room.name,
                "code": room.code,
                "state": (state := review.room_state(room, here, states)).value,
                "state_label": state.value.replace("_", " "),
                "help_at": room.help_at,
                "help_note": room.help_note,
                "game": now and f"Round {now.round}: {now.home.name} vs {now.away.name}",
                "status": now and now.match.status,
                "review": now and states[now.id].value,
                "pair_url": pair_url,
                "qr": qr_svg(pair_url),
            }
        )
    return out


def _games_for_review(t: Tournament) -> list[dict[str, Any]]:
    games = list(t.games.select_related("match", "home", "away").order_by("round", "slot"))
    states = review.review_states(games)
    submitted = {
        e.game_id: e
        for e in DeskEntry.objects.filter(game__in=games, action=DeskEntry.Action.SUBMITTED).order_by("id")
    }
    out = []
    for g in games:
        if g.match.status != Match.Status.ENDED:
            continue
        scores = g.match.state.get("scores", {})
        teams = {tm.competitor_id: tm.id for tm in g.match.teams.all()}
        entry = submitted.get(g.id)
        out.append(
            {
                "id": g.id,
                "label": f"Round {g.round}, {g.room}: {g.home.name} vs {g.away.name}",
                "score": f"{scores.get(str(teams.get(g.home.competitor_id)), '')}–"
                f"{scores.get(str(teams.get(g.away.competitor_id)), '')}",
                "state": states[g.id].value,
                "warnings": entry.warnings if entry else [],
                "code": g.match.join_code,
            }
        )
    return out


@organiser_required
@require_GET
def control_page(request: HttpRequest, tournament_id: int) -> HttpResponse:
    """The director's control page: rooms (state, current game, pairing code and QR code, help
    flag), ended games with their review state (accept / send back for the director), the desk's
    history. Organisers (login) see it; only the director or a superuser acts on it."""
    t = get_object_or_404(Tournament.objects.select_related("director"), pk=tournament_id)
    return render(
        request,
        "frontend/tournament_control.html",
        {
            "tournament": t,
            "rooms": _rooms(request, t),
            "games": _games_for_review(t),
            "history": list(t.desk_entries.select_related("game", "room").order_by("-id")[:200]),
            "may_review": review.may_review(t, request.user),
            "refresh": CONTROL_REFRESH_S,
            "page": {"csrf": get_token(request), "tournament": t.id, "refresh": CONTROL_REFRESH_S},
        },
    )


def _director_step(request: HttpRequest, tournament_id: int, game_id: int, step: str) -> JsonResponse:
    game = get_object_or_404(TournamentGame, pk=game_id, tournament_id=tournament_id)
    data = _body(request)
    if isinstance(data, JsonResponse):
        return data
    try:
        if step == "accept":
            entry = review.accept(game, user=request.user)
        else:
            entry = review.send_back(game, user=request.user, reason=str(data.get("reason", "")))
    except review.ReviewError as exc:
        return _refused(exc)
    return JsonResponse(
        {"game": game.id, "review": review.review_state(game).value, "at": entry.at.isoformat()}
    )


@require_POST
def api_accept(request: HttpRequest, tournament_id: int, game_id: int) -> JsonResponse:
    """The director accepts a submitted result: ``{"game", "review": "official", "at"}``. 403
    ``forbidden`` for anyone but the director or a superuser; 409 ``bad_state`` unless submitted."""
    return _director_step(request, tournament_id, game_id, "accept")


@require_POST
def api_send_back(request: HttpRequest, tournament_id: int, game_id: int) -> JsonResponse:
    """The director sends a submitted result back: body ``{"reason"}`` (required, 400 ``invalid``
    without); answers ``{"game", "review": "sent_back", "at"}``; 403 / 409 as :func:`api_accept`."""
    return _director_step(request, tournament_id, game_id, "send_back")


@require_POST
def api_room_help_clear(request: HttpRequest, tournament_id: int, room_id: int) -> JsonResponse:
    """The director clears a room's help flag: ``{"room", "help": false}``. 403 for anyone but the
    director or a superuser; 409 ``bad_state`` when no help is asked."""
    room = get_object_or_404(
        TournamentRoom.objects.select_related("tournament"), pk=room_id, tournament_id=tournament_id
    )
    if not review.may_review(room.tournament, request.user):
        return _refused(
            review.ReviewError("forbidden", "only the tournament's director (or a superuser) clears help")
        )
    try:
        review.set_help(room, raised=False, user=request.user)
    except review.ReviewError as exc:
        return _refused(exc)
    return JsonResponse({"room": room.name, "help": False})


# --- the moderator's side: result, help, the paired room ---------------------------------------


def _desk_view(request: HttpRequest, game: TournamentGame) -> dict[str, Any]:
    """What the dashboard's desk panel shows (``GET /api/match/<code>/desk``)."""
    room = review.room_of(game)
    state = review.review_state(game)
    sent_back = (
        DeskEntry.objects.filter(game=game, action=DeskEntry.Action.SENT_BACK).order_by("-id").first()
        if state == review.ReviewState.SENT_BACK
        else None
    )
    ended = game.match.status == Match.Status.ENDED
    now = review.current_game(room)
    # Only a device paired to the room follows it, and only once this game is over.
    paired = request.session.get(SESSION_ROOM) == room.code
    follow = (
        paired and ended and now is not None and now.id != game.id and now.match.status != Match.Status.ENDED
    )
    return {
        "room": room.name,
        "help": room.help_at is not None,
        "ended": ended,
        "review": state.value,
        "reason": sent_back.reason if sent_back else "",
        "warnings": [w.to_dict() for w in review.warnings(game.match)] if ended else [],
        "next": (
            {
                "code": now.match.join_code,
                "label": f"Round {now.round}: {now.home.name} vs {now.away.name}",
                "url": reverse("frontend:room_pair", args=[room.code]),
            }
            if follow and now is not None
            else None
        ),
    }


def dashboard_desk(match: Match) -> dict[str, Any] | None:
    """The dashboard's desk panel context for ``match``: None unless it is a tournament game."""
    game = _game_of(match)
    if game is None:
        return None
    return {"room": game.room, "tournament": game.tournament.name}


def _moderated_game(request: HttpRequest, code: str) -> TournamentGame | JsonResponse:
    match = moderated_match(request, code)
    if isinstance(match, JsonResponse):
        return match
    game = _game_of(match)
    if game is None:
        return api_error(TossupError("not_found", "this match is not a tournament game"), status=404)
    return game


@require_GET
def api_desk(request: HttpRequest, code: str) -> JsonResponse:
    """The match's desk state for its moderator (login or moderator token): ``{"room", "help",
    "ended", "review", "reason", "warnings": [{"key", "text"}], "next": {"code", "label", "url"} |
    null}``; ``next``: on a device paired to the room (``/room/``), the room's next game once
    this one has ended and the next is the room's current game."""
    game = _moderated_game(request, code)
    if isinstance(game, JsonResponse):
        return game
    return JsonResponse(_desk_view(request, game))


@require_POST
def api_submit(request: HttpRequest, code: str) -> JsonResponse:
    """The moderator submits the game's result: body ``{"acknowledged": ["<warning key>", ...]}``.
    Answers the desk state (:func:`api_desk`); 400 ``unacknowledged`` (``extra.warnings``), 409
    ``not_ended`` / ``bad_state``."""
    game = _moderated_game(request, code)
    if isinstance(game, JsonResponse):
        return game
    data = _body(request)
    if isinstance(data, JsonResponse):
        return data
    acknowledged = data.get("acknowledged", [])
    if not isinstance(acknowledged, list) or not all(isinstance(k, str) for k in acknowledged):
        return api_error(TossupError("invalid", "acknowledged must be a list of warning keys"))
    try:
        review.submit(game, acknowledged=acknowledged, user=request.user)
    except review.ReviewError as exc:
        return _refused(exc)
    return JsonResponse(_desk_view(request, game))


@require_POST
def api_help(request: HttpRequest, code: str) -> JsonResponse:
    """The moderator raises (``{"raised": true, "note"?}``) or clears (``{"raised": false}``) the
    room's help flag. Answers the desk state; 409 ``bad_state`` when it already is so."""
    game = _moderated_game(request, code)
    if isinstance(game, JsonResponse):
        return game
    data = _body(request)
    if isinstance(data, JsonResponse):
        return data
    if not isinstance(data.get("raised"), bool):
        return api_error(TossupError("invalid", "raised must be true or false"))
    try:
        review.set_help(
            review.room_of(game), raised=data["raised"], user=request.user, note=str(data.get("note", ""))
        )
    except review.ReviewError as exc:
        return _refused(exc)
    return JsonResponse(_desk_view(request, game))


# --- pairing a device -------------------------------------------------------------------------


@require_GET
def pair_page(request: HttpRequest) -> HttpResponse:
    """The pairing page for a moderator's device: type the room's code (``?code=`` goes on)."""
    code = request.GET.get("code", "").strip()
    if code:
        return redirect("frontend:room_pair", code=code.upper())
    return render(request, "frontend/room_pair.html", {"paired": request.session.get(SESSION_ROOM, "")})


@require_GET
def room_pair(request: HttpRequest, code: str) -> HttpResponse:
    """Pair this device to the room of pairing code ``code`` and open the room's current game's
    dashboard (the device may moderate it: its token is remembered in the session). An unknown
    code shows the pairing page again with the error (404)."""
    try:
        room = review.room_by_code(code)
    except review.ReviewError as exc:
        return render(request, "frontend/room_pair.html", {"error": exc.message, "code": code}, status=404)
    game = review.current_game(room)
    if game is None:
        return render(
            request,
            "frontend/room_pair.html",
            {"error": f"{room.name} has no game yet.", "code": code},
            status=404,
        )
    request.session[SESSION_ROOM] = room.code
    remember_token(request, game.match)
    return redirect("frontend:dashboard", code=game.match.join_code)


# --- a new tournament from the web ------------------------------------------------------------


@organiser_required
@require_http_methods(["GET", "POST"])
def tournament_new(request: HttpRequest) -> HttpResponse:
    """The "new tournament" form (organisers: login); the creator becomes its director. A refused
    form is 400 with its errors, and nothing is created."""
    form = TournamentCreateForm(request.POST or None)
    if request.method == "POST" and form.is_valid():
        try:
            t = tournaments.create_tournament(**form.tournament_args(), director=request.user)
        except services.ServiceError as exc:
            form.add_error(None, exc.message)
        else:
            return redirect("frontend:tournament_control", tournament_id=t.id)
    status = 400 if form.is_bound else 200
    return render(request, "frontend/tournament_new.html", {"form": form}, status=status)
