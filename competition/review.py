"""The tournament's control desk: result review, rooms, paired devices and help flags.

A tournament game's result becomes **official** only in two steps: its moderator submits it (the
match ended; each warning the match record raises acknowledged), then the tournament's director
(``Tournament.director``, or a superuser) accepts it, or sends it back with a reason, which
reopens it for the moderator to correct and submit again. The standings count official results
only (``competition.tournaments.standings``).

Every step is a :class:`DeskEntry` row, written once (who, when, why): a game's review state is
its newest review entry, so the history is the state's source, never a copy of it.

Rooms (:class:`TournamentRoom`) are where the games are played (``TournamentGame.room`` names
one); each has a pairing ``code`` that takes a moderator's device to the room's current game, and a
help flag its moderator raises from the dashboard. A room's state is derived, never stored:
:func:`room_state`.
"""

from __future__ import annotations

from collections.abc import Collection, Iterable
from dataclasses import dataclass
from enum import StrEnum
from typing import Any

from django.db import transaction
from django.utils import timezone

from competition import selectors
from competition.errors import TossupError
from competition.game import BonusRuling, TossupRuling
from competition.game.events import EventName
from competition.models import DeskEntry, Match, Tournament, TournamentGame, TournamentRoom
from competition.vocabulary import MatchStatus, Ruling

#: The desk's refusals (``ReviewError.code``); the HTTP edge answers them with the status given.
REVIEW_CODES: dict[str, tuple[int, str]] = {
    "forbidden": (403, "only the tournament's director (or a superuser) reviews its results"),
    "not_ended": (409, "the game has not ended: there is no result to submit"),
    "bad_state": (409, "the step does not fit the result's review state"),
    "unacknowledged": (400, "the result has warnings to acknowledge before it is submitted"),
    "invalid": (400, "a value missing or out of range"),
    "not_found": (404, "no such room, game or pairing code"),
}


class ReviewError(TossupError):
    """A desk step refused (``code`` one of :data:`REVIEW_CODES`); nothing changed."""

    @property
    def status(self) -> int:
        """The HTTP status of this refusal."""
        return REVIEW_CODES[self.code][0]


class ReviewState(StrEnum):
    """Where a game's result is in its review: OPEN (nothing submitted yet, or the game not
    ended), SUBMITTED (awaiting the director), OFFICIAL (accepted), SENT_BACK (to correct)."""

    OPEN = "open"
    SUBMITTED = "submitted"
    OFFICIAL = "official"
    SENT_BACK = "sent_back"


_STATE_OF = {
    DeskEntry.Action.SUBMITTED: ReviewState.SUBMITTED,
    DeskEntry.Action.ACCEPTED: ReviewState.OFFICIAL,
    DeskEntry.Action.SENT_BACK: ReviewState.SENT_BACK,
}
REVIEW_ACTIONS = tuple(_STATE_OF)


class RoomState(StrEnum):
    """A room as the control page shows it (:func:`room_state`)."""

    WAITING = "waiting"
    READING = "reading"
    NEEDS_HELP = "needs_help"
    AWAITING_REVIEW = "awaiting_review"


@dataclass(frozen=True)
class ResultWarning:
    """Something in a match record to check before its result is submitted. ``key``: stable
    (what an acknowledgement names), e.g. ``tossup-3-no-ruling``; ``text``: for people."""

    key: str
    text: str

    def to_dict(self) -> dict[str, str]:
        return {"key": self.key, "text": self.text}


# --- warnings ------------------------------------------------------------------------------


def warnings(match: Match) -> list[ResultWarning]:
    """The warnings of ``match``'s record, in question order: a tossup read with no ruling (it
    never ended: the match ended during it, or with a buzz waiting for its ruling); a correct
    tossup whose bonus has fewer ruled parts than it should (none at all while bonuses remained);
    an open protest. Tossups are numbered from 1 as read."""
    state = selectors.match_state(match)
    out: list[ResultWarning] = []
    open_tossups: dict[int, int] = {}  # question id -> 1-based number, started and not ended
    number = 0
    for name, payload in match.events.filter(
        event__in=[EventName.TOSSUP_STARTED, EventName.TOSSUP_ENDED]
    ).values_list("event", "payload"):
        if name == EventName.TOSSUP_STARTED:
            number = payload["index"] + 1
            open_tossups[payload["question_id"]] = number
        else:
            open_tossups.pop(payload["question_id"], None)
    for n in sorted(open_tossups.values()):
        out.append(ResultWarning(f"tossup-{n}-no-ruling", f"Tossup {n} was read but has no ruling."))
    kept = [h for h in state.history if not h.undone]
    parts_of = {b.bonus_id: len(b.parts) for b in state.bonuses}
    per_bonus = state.config.preset.bonus_parts
    bonuses_used = {h.bonus_id for h in kept if isinstance(h, BonusRuling)}
    for h in kept:
        if not (isinstance(h, TossupRuling) and h.ruling == Ruling.CORRECT) or per_bonus == 0:
            continue
        parts = [b for b in kept if isinstance(b, BonusRuling) and b.tossup_index == h.tossup_index]
        n = h.tossup_index + 1
        if not parts:
            if len(bonuses_used) < len(state.bonuses):
                out.append(ResultWarning(f"bonus-{n}-missing", f"Tossup {n}'s bonus has no ruled part."))
            continue
        expected = min(per_bonus, parts_of.get(parts[0].bonus_id, per_bonus))
        ruled = len({b.part for b in parts})
        if ruled < expected:
            out.append(
                ResultWarning(
                    f"bonus-{n}-missing",
                    f"Tossup {n}'s bonus has {ruled} of its {expected} parts ruled.",
                )
            )
    for p in state.protests:
        if p.status == "open":
            out.append(
                ResultWarning(f"protest-{p.protest_id}-open", f"Protest {p.protest_id} is open: {p.reason}")
            )
    return out


# --- review --------------------------------------------------------------------------------


def review_states(games: Iterable[TournamentGame]) -> dict[int, ReviewState]:
    """``{game id: ReviewState}`` of ``games`` (one query)."""
    ids = [g.id for g in games]
    out = dict.fromkeys(ids, ReviewState.OPEN)
    for game_id, action in (
        DeskEntry.objects.filter(game_id__in=ids, action__in=REVIEW_ACTIONS)
        .order_by("id")
        .values_list("game_id", "action")
    ):
        out[game_id] = _STATE_OF[DeskEntry.Action(action)]
    return out


def review_state(game: TournamentGame) -> ReviewState:
    """``game``'s review state."""
    return review_states([game])[game.id]


def official_game_ids(tournament: Tournament) -> set[int]:
    """The ids of ``tournament``'s games whose result is official."""
    states = review_states(tournament.games.all())
    return {gid for gid, s in states.items() if s == ReviewState.OFFICIAL}


def may_review(tournament: Tournament, user: Any) -> bool:
    """Is ``user`` (a Django user, maybe anonymous) the tournament's director or a superuser?"""
    if not getattr(user, "is_authenticated", False):
        return False
    return bool(user.is_superuser) or (
        tournament.director_id is not None and tournament.director_id == user.id
    )


def _locked(game: TournamentGame) -> TournamentGame:
    """The game again, its row locked: two desk steps on one game run one after the other."""
    return TournamentGame.objects.select_for_update().select_related("match", "tournament").get(pk=game.pk)


def _label(user: Any, fallback: str) -> str:
    return user.get_username() if getattr(user, "is_authenticated", False) else fallback


def submit(game: TournamentGame, *, acknowledged: Collection[str] = (), user: Any = None) -> DeskEntry:
    """The moderator submits ``game``'s result (``user``: a logged-in organiser, else the
    moderator by the match's token). ``acknowledged``: the keys of the warnings the moderator has
    checked (:func:`warnings`). Raises ReviewError ``not_ended``; ``bad_state`` when it is already
    submitted or official; ``unacknowledged`` (``extra["warnings"]``) when a warning is not."""
    with transaction.atomic():
        g = _locked(game)
        if g.match.status != MatchStatus.ENDED:
            raise ReviewError("not_ended", "the game has not ended: end it before submitting its result")
        state = review_state(g)
        if state not in (ReviewState.OPEN, ReviewState.SENT_BACK):
            raise ReviewError("bad_state", f"the result is already {state.value.replace('_', ' ')}")
        found = warnings(g.match)
        checked = set(acknowledged)
        missing = [w for w in found if w.key not in checked]
        if missing:
            raise ReviewError(
                "unacknowledged",
                "acknowledge each warning before submitting: " + "; ".join(w.text for w in missing),
                {"warnings": [w.to_dict() for w in missing]},
            )
        return DeskEntry.objects.create(
            tournament=g.tournament,
            game=g,
            action=DeskEntry.Action.SUBMITTED,
            actor=user if getattr(user, "is_authenticated", False) else None,
            actor_label=_label(user, "moderator"),
            warnings=[w.to_dict() for w in found],
        )


def _director_step(game: TournamentGame, user: Any, action: str, reason: str) -> DeskEntry:
    with transaction.atomic():
        g = _locked(game)
        if not may_review(g.tournament, user):
            raise ReviewError("forbidden", "only the tournament's director (or a superuser) reviews results")
        state = review_state(g)
        if state != ReviewState.SUBMITTED:
            raise ReviewError(
                "bad_state",
                f"only a submitted result is reviewed; this one is {state.value.replace('_', ' ')}",
            )
        return DeskEntry.objects.create(
            tournament=g.tournament,
            game=g,
            action=action,
            actor=user,
            actor_label=_label(user, ""),
            reason=reason,
        )


def accept(game: TournamentGame, *, user: Any) -> DeskEntry:
    """The director accepts ``game``'s submitted result: it becomes official. Raises ReviewError
    ``forbidden`` (not the director nor a superuser), ``bad_state`` (not submitted)."""
    return _director_step(game, user, DeskEntry.Action.ACCEPTED, "")


def send_back(game: TournamentGame, *, user: Any, reason: str) -> DeskEntry:
    """The director sends ``game``'s submitted result back to its moderator, saying why; the
    moderator corrects it and submits again. Raises ReviewError ``invalid`` (no reason),
    ``forbidden``, ``bad_state`` as :func:`accept`."""
    reason = (reason or "").strip()
    if not reason:
        raise ReviewError("invalid", "say why the result goes back (a reason is required)")
    return _director_step(game, user, DeskEntry.Action.SENT_BACK, reason)


# --- rooms ---------------------------------------------------------------------------------


def ensure_room(tournament: Tournament, name: str) -> TournamentRoom:
    """The tournament's room named ``name``, created with a fresh pairing code if new."""
    room, _ = TournamentRoom.objects.get_or_create(tournament=tournament, name=name)
    return room


def ensure_rooms(tournament: Tournament) -> list[TournamentRoom]:
    """The tournament's rooms, one per room its games are played in (created as needed: a
    tournament may predate rooms)."""
    names = set(tournament.games.values_list("room", flat=True))
    for name in sorted(names - {r.name for r in tournament.rooms.all()}):
        ensure_room(tournament, name)
    return list(tournament.rooms.all())


def room_games(room: TournamentRoom) -> list[TournamentGame]:
    """The games played in ``room``, in round order."""
    return list(
        room.tournament.games.filter(room=room.name).select_related("match", "home", "away").order_by("round")
    )


def current_game(room: TournamentRoom, games: list[TournamentGame] | None = None) -> TournamentGame | None:
    """The room's game now: the first in round order not ended, else the last (its result may
    await review); None when no game is scheduled there."""
    games = room_games(room) if games is None else games
    return next((g for g in games if g.match.status != MatchStatus.ENDED), games[-1] if games else None)


def room_state(
    room: TournamentRoom, games: list[TournamentGame], states: dict[int, ReviewState]
) -> RoomState:
    """The state of ``room`` whose games are ``games`` (``states``: their review states):
    NEEDS_HELP while the help flag is up; else READING while one of its games runs;
    AWAITING_REVIEW while one has ended with a result not official yet; else WAITING (its next
    game not started, or every result official)."""
    if room.help_at is not None:
        return RoomState.NEEDS_HELP
    if any(g.match.status == MatchStatus.RUNNING for g in games):
        return RoomState.READING
    if any(g.match.status == MatchStatus.ENDED and states.get(g.id) != ReviewState.OFFICIAL for g in games):
        return RoomState.AWAITING_REVIEW
    return RoomState.WAITING


def room_by_code(code: str) -> TournamentRoom:
    """The room paired by ``code`` (case and spaces ignored). Raises ReviewError ``not_found``."""
    room = TournamentRoom.objects.select_related("tournament").filter(code=code.strip().upper()).first()
    if room is None:
        raise ReviewError("not_found", "no room has that code: check it on the control page")
    return room


def set_help(room: TournamentRoom, *, raised: bool, user: Any = None, note: str = "") -> DeskEntry:
    """Raise (``raised``) or clear the room's help flag, recorded with who and ``note``. Raising a
    raised flag or clearing a clear one changes nothing but is recorded neither; raises
    ReviewError ``bad_state`` then."""
    with transaction.atomic():
        r = TournamentRoom.objects.select_for_update().get(pk=room.pk)
        if (r.help_at is not None) == raised:
            raise ReviewError("bad_state", "help is already asked" if raised else "no help is asked")
        r.help_at = timezone.now() if raised else None
        r.help_note = note.strip()[:200] if raised else ""
        r.save(update_fields=["help_at", "help_note"])
        room.help_at, room.help_note = r.help_at, r.help_note
        return DeskEntry.objects.create(
            tournament_id=r.tournament_id,
            room=r,
            action=DeskEntry.Action.HELP_RAISED if raised else DeskEntry.Action.HELP_CLEARED,
            actor=user if getattr(user, "is_authenticated", False) else None,
            actor_label=_label(user, "moderator"),
            reason=note.strip(),
        )


def room_of(game: TournamentGame) -> TournamentRoom:
    """The room ``game`` is played in (created if the tournament predates rooms)."""
    return ensure_room(game.tournament, game.room)
