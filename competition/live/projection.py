"""The queryable buzz log (``Buzz``, ``BonusPartResult``) and the match's status, kept in step
with the events a command stored: run by :func:`competition.live.store.store_events` inside the
command's transaction, so the log and the events never disagree."""

from __future__ import annotations

from typing import Any

from django.utils import timezone

from competition import game
from competition.game import EventName
from competition.models import BonusPartResult, Buzz, Match, MatchEvent, Player, Team
from competition.vocabulary import BuzzLogRuling

# ``ruling_undone`` has no payload class in the engine (its data is ``corrections.undone_data``).


def project(
    match: Match, rows: list[MatchEvent], command: Any, old: game.MatchState, new: game.MatchState, now: float
) -> None:
    """Update the buzz log and ``match``'s status (not saved: the caller saves the row) for the
    events ``rows`` that ``command`` caused, the state going from ``old`` to ``new`` at ``now``
    (epoch s)."""
    race: dict[str, Any] = {}
    if isinstance(command, game.Answer):
        # The judge's suggestion is recorded whatever the engine does with it next.
        _current_buzz(match, {"question_id": command.question_id, "player_id": command.player_id}).update(
            guess=command.text, verdict=command.verdict, verdict_reason=command.reason[:200]
        )
    bonus_teams = {b.bonus_id: b.team_id for b in (old.bonus, new.bonus) if b is not None}
    for row in rows:
        d = row.payload
        name = row.event
        if name == EventName.MATCH_STARTED:
            match.status = Match.Status.RUNNING
        elif name == EventName.MATCH_ENDED:
            match.status = Match.Status.ENDED
            match.ended_at = timezone.now()
        elif name == EventName.RACE:
            race = d
        elif name == EventName.RENAMED:
            team = d["team_id"] is not None
            seats = Team.objects if team else Player.objects
            seats.filter(match=match, pk=d["team_id"] if team else d["player_id"]).update(name=d["name"])
        elif name == EventName.BUZZ:
            winner: dict[str, Any] = next(
                (c for c in race.get("candidates", []) if c["player_id"] == d["player_id"]), {}
            )
            Buzz.objects.create(
                match=match,
                tossup_id=d["question_id"],
                player_id=d["player_id"],
                team_id=d["team_id"],
                kind=d["kind"],
                token_index=d["token_index"],
                token_count=d["token_count"],
                revealed_at=d.get("revealed_at"),
                received_at=winner.get("received_at", now),
                accepted_at=winner.get("accepted_at", now),
                client_time=winner.get("client_time"),
                corrected_press_at=winner.get("corrected_press_at"),
                eligible=race.get("eligible", []),
                race=race,
                seq=row.seq,
            )
        elif name == EventName.BUZZ_RULED:
            # A timeout is ruled at its deadline, not when a (late) driver's Tick applied it.
            ruled_at = next(
                (
                    h.at
                    for h in reversed(new.history)
                    if isinstance(h, game.TossupRuling)
                    and h.question_id == d["question_id"]
                    and h.player_id == d["player_id"]
                ),
                now,
            )
            fields: dict[str, Any] = {"ruling": d["ruling"], "points": d["points"], "ruled_at": ruled_at}
            if d.get("guess") is not None:
                fields["guess"] = d["guess"]
            _current_buzz(match, d).update(**fields)
        elif name == EventName.RULING_UNDONE:
            if d.get("bonus_id") is not None:
                BonusPartResult.objects.filter(match=match, bonus_id=d["bonus_id"], part=d["part"]).update(
                    ruling=BuzzLogRuling.UNDONE, points=0
                )
            else:
                _current_buzz(match, d).update(ruling=BuzzLogRuling.UNDONE, points=0)
        elif name == EventName.RULING_CORRECTED:
            # The log keeps the ruling given first in the event; the buzz log holds what stands.
            if d["bonus_id"] is not None:
                _current_part(match, d).update(ruling=d["ruling"], points=d["points"])
            else:
                _current_buzz(match, d).update(ruling=d["ruling"], points=d["points"])
        elif name == EventName.QUESTION_REPLACED:
            # Its rows stay in the buzz log, marked: they count in no score, standing or fit.
            thrown_out = {"ruling": BuzzLogRuling.THROWN_OUT, "points": 0}
            if d["bonus_id"] is not None:
                BonusPartResult.objects.filter(match=match, bonus_id=d["bonus_id"]).update(**thrown_out)
            else:
                Buzz.objects.filter(match=match, tossup_id=d["question_id"]).update(**thrown_out)
        elif name == EventName.BUZZ_ADDED:  # a missed buzz: a row of its own, marked
            kind = (
                Player.objects.filter(match=match, pk=d["player_id"]).values_list("kind", flat=True).first()
            )
            Buzz.objects.create(
                match=match,
                tossup_id=d["question_id"],
                player_id=d["player_id"],
                team_id=d["team_id"],
                kind=kind or "",
                token_index=d["token_index"],
                token_count=d["token_count"],
                ruling=d["ruling"],
                points=d["points"],
                received_at=d["at"],
                ruled_at=d["at"],
                seq=row.seq,
                added_by_review=True,
            )
        elif name == EventName.RULING_REVIEWED:
            if d["bonus_id"] is not None:
                _current_part(match, d).update(ruling=d["ruling"], points=d["points"])
            else:
                seat = (
                    Player.objects.filter(match=match, pk=d["player_id"])
                    .values_list("kind", flat=True)
                    .first()
                )
                _current_buzz(match, {**d, "player_id": d["player_before"]}).update(
                    ruling=d["ruling"], points=d["points"], player_id=d["player_id"], team_id=d["team_id"],
                    kind=seat or "",
                )  # fmt: skip
        elif name == EventName.BONUS_PART_RULED:
            BonusPartResult.objects.create(
                match=match,
                bonus_id=d["bonus_id"],
                team_id=bonus_teams[d["bonus_id"]],
                part=d["part"],
                guess=d.get("guess") or "",
                verdict=_bonus_verdict(command, old, d),
                ruling=d["ruling"],
                points=d["points"],
                seq=row.seq,
            )


def _bonus_verdict(command: Any, old: game.MatchState, d: dict[str, Any]) -> str:
    """The judge's verdict on a bonus part: from this command, or from the answer the
    moderator has just ruled on."""
    if isinstance(command, game.BonusAnswer | game.DecideBonus):
        return command.verdict
    pending = old.bonus.pending if old.bonus is not None else None
    return pending.verdict if pending is not None else ""


def _current_buzz(match: Match, d: dict[str, Any]):
    """The latest buzz row of this player on this tossup (a player buzzes once per tossup)."""
    qs = Buzz.objects.filter(match=match, tossup_id=d["question_id"], player_id=d["player_id"])
    last = qs.order_by("-seq").values_list("id", flat=True).first()
    return Buzz.objects.filter(id=last)


def _current_part(match: Match, d: dict[str, Any]):
    """The latest result row of this bonus part (a part is ruled again only after an undo)."""
    qs = BonusPartResult.objects.filter(match=match, bonus_id=d["bonus_id"], part=d["part"])
    last = qs.exclude(ruling=BuzzLogRuling.UNDONE).order_by("-seq").values_list("id", flat=True).first()
    return BonusPartResult.objects.filter(id=last)
