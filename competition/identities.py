"""Identities across matches (:class:`competition.models.Competitor`): claimed at join with a
handle and the secret the tablet keeps, merged and split by organisers (``identity_admin``).

Database logic only: a seat's identity is not part of the match state, so nothing here goes
through the engine; the seat itself is still created by ``services.join_match`` (the one door).
IRT fits key on identities (``irt.pipeline.subject_key``); a merge or split reaches the fits at
the next refit, which re-reads the responses (``irt.tasks.refit``)."""

from __future__ import annotations

import secrets
from collections import defaultdict
from collections.abc import Iterable
from dataclasses import dataclass

from django.db import transaction

from competition import services
from competition.models import Competitor, Match, Player, Team, hash_secret, new_token
from competition.services import ServiceError

HANDLE_MAX = 100


@dataclass(frozen=True)
class Joined:
    """A seat after :func:`join`: ``secret`` is the new identity's secret for the tablet to keep
    ("" when the identity existed: the tablet holds it already)."""

    player: Player
    competitor: Competitor
    secret: str


def _check_secret(competitor: Competitor, secret: str) -> bool:
    if not competitor.secret_hash or not secret:
        return False
    return secrets.compare_digest(competitor.secret_hash, hash_secret(secret))


def claim(handle: str, secret: str) -> tuple[Competitor, str]:
    """The human identity ``handle`` names, created with a new secret when nobody holds it;
    ``(competitor, new secret or "")``.

    Raises ServiceError ``invalid`` (a handle longer than 100 characters or empty) and
    ``seat_taken`` (``extra {"field": "handle"}``: the handle is another identity's and
    ``secret`` is not its secret, or it is a team's or bot's)."""
    handle = handle.strip()
    if not handle or len(handle) > HANDLE_MAX:
        raise ServiceError("invalid", f"handle must be 1–{HANDLE_MAX} characters")
    existing = Competitor.objects.filter(handle__iexact=handle).first()
    if existing is None:
        new_secret = new_token()
        return Competitor.objects.create(
            handle=handle, kind=Competitor.Kind.HUMAN, secret_hash=hash_secret(new_secret)
        ), new_secret
    if existing.kind == Competitor.Kind.HUMAN and _check_secret(existing, secret):
        return existing, ""
    raise ServiceError(
        "seat_taken",
        f"the handle {existing.handle!r} belongs to someone else: pick another, or join from the "
        "tablet that holds it (an organiser can reset its secret)",
        {"field": "handle"},
    )


def join(
    *, code: str, name: str, team: str, secret: str = "", handle: str = "", identity_secret: str = ""
) -> Joined:
    """Seat a human player (``services.join_match``) as an identity, all or nothing.

    ``handle`` (with ``identity_secret`` when the tablet holds one) claims the identity
    (:func:`claim`); without a handle the seat gets a fresh identity named after ``name`` (never
    an existing one: two players called "Alex" stay two subjects). A seat given back to its
    owner (``secret``) keeps the identity it had. Raises ServiceError as ``claim`` and
    ``services.join_match`` do, and ``invalid`` when the identity already holds another seat
    of the match."""
    with transaction.atomic():
        if handle.strip():
            competitor, new_secret = claim(handle, identity_secret)
        else:
            new_secret = new_token()
            competitor = Competitor.create_fresh(name, Competitor.Kind.HUMAN, new_secret)
        other = (
            Player.objects.filter(match__join_code=code.strip().upper(), competitor=competitor)
            .exclude(name=name.strip())
            .first()
        )
        if other is not None:
            raise ServiceError(
                "invalid", f"{competitor.handle!r} already plays in this match as {other.name!r}"
            )
        player = services.join_match(code=code, name=name, team=team, secret=secret, competitor=competitor)
        if player.competitor_id != competitor.pk:  # an existing seat given back: its identity stays
            if new_secret:
                competitor.delete()
            return Joined(player, player.competitor, "")
        return Joined(player, competitor, new_secret)


def reset_secret(competitor: Competitor) -> str:
    """A new secret for ``competitor`` (the old one stops working); returned once, stored hashed.
    For an owner who lost the tablet that kept it."""
    secret = new_token()
    competitor.secret_hash = hash_secret(secret)
    competitor.save(update_fields=["secret_hash"])
    return secret


def _clashes(competitors: Iterable[Competitor]) -> list[str]:
    """Matches in which two of ``competitors`` hold a seat (or a team) each: one identity cannot
    sit twice in a match (it would answer each tossup twice)."""
    ids = [c.pk for c in competitors]
    holders: dict[tuple[str, int], set[int]] = defaultdict(set)
    for match_id, cid in Player.objects.filter(competitor__in=ids).values_list("match_id", "competitor_id"):
        holders[("seat", match_id)].add(cid)
    teams = Team.objects.filter(competitor__in=ids, kind=Team.Kind.HUMAN)
    for match_id, cid in teams.values_list("match_id", "competitor_id"):
        holders[("team", match_id)].add(cid)
    clashing = sorted({m for (_, m), who in holders.items() if len(who) > 1})
    return [str(m) for m in Match.objects.filter(id__in=clashing).order_by("id")]


def merge(target: Competitor, others: Iterable[Competitor]) -> Competitor:
    """Make ``others`` one subject with ``target``: their seats and teams move to ``target`` (its
    handle and secret stay) and they are deleted.

    Raises ValueError, changing nothing, when the kinds differ or two of them played in the same
    match."""
    others = [c for c in others if c.pk != target.pk]
    kinds = {target.kind, *(c.kind for c in others)}
    if len(kinds) > 1:
        raise ValueError(f"cannot merge identities of different kinds: {', '.join(sorted(kinds))}")
    clashes = _clashes([target, *others])
    if clashes:
        raise ValueError(
            f"these identities played against each other in {', '.join(clashes)}: not one subject"
        )
    with transaction.atomic():
        Player.objects.filter(competitor__in=others).update(competitor=target)
        Team.objects.filter(competitor__in=others).update(competitor=target)
        Competitor.objects.filter(pk__in=[c.pk for c in others]).delete()
    return target


def split(competitor: Competitor, match_ids: Iterable[int], handle: str = "") -> Competitor:
    """Move ``competitor``'s seats and teams in matches ``match_ids`` to a new identity of the same
    kind (``handle``, default the old handle numbered, e.g. ``Alex 2``; no secret: an organiser
    resets it for the owner). Raises ValueError, changing nothing, when ``competitor`` plays in
    none of those matches or in no other match."""
    chosen = set(match_ids)
    played = set(competitor.players.values_list("match_id", flat=True)) | set(
        competitor.teams.values_list("match_id", flat=True)
    )
    if not chosen & played:
        raise ValueError(f"{competitor.handle!r} played in none of the matches {sorted(chosen)}")
    if not played - chosen:
        raise ValueError(f"{competitor.handle!r} played only in those matches: nothing to split off")
    with transaction.atomic():
        new = Competitor.create_fresh(handle or competitor.handle, competitor.kind)
        competitor.players.filter(match_id__in=chosen).update(competitor=new)
        competitor.teams.filter(match_id__in=chosen).update(competitor=new)
    return new


def split_by_match(competitor: Competitor) -> list[Competitor]:
    """One identity per match: the seats of ``competitor``'s first match stay, those of each later
    match move to a new identity. Returns the new identities (none when it played one match)."""
    played = sorted(
        set(competitor.players.values_list("match_id", flat=True))
        | set(competitor.teams.values_list("match_id", flat=True))
    )
    with transaction.atomic():
        return [split(competitor, [match_id]) for match_id in played[1:]]
