"""Matches read from files into the database: QBJ tournaments (``formats.qbj``).

An imported match is an ended ``Match`` (preset ``naqt``, no tossups: a QBJ file has no question
text) with its ``Team`` rows and a ``Player`` row for each player who played (a player line or a
lineup) — each team and each registered player one identity (``Competitor``) across the file's
matches — whose spec, live state (status ``ended``, the final
scores) and records are built by the engine as for a match played here, so every page and read of
a match works on it; and one ``MatchEvent`` of type ``match_imported`` (``EventName.
MATCH_IMPORTED``) holding what the file said of it: ``{"format": "qbj", "source", "tournament", "teams":
[{"name", "registration", "location", "players": [{"name", "year"}]}], "match":
formats.qbj.match_to_json(...)}`` — per-player answer counts, lineups, per-tossup buzzes, bonuses.
Exports read that record back (``competition.exports.qbj_match``). Imported matches feed no IRT
fit: answer counts do not say which tossup a player answered.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from dataclasses import dataclass

from django.db import transaction
from django.utils import timezone

from competition import game
from competition.live import rowcache
from competition.models import Competitor, Match, MatchEvent, Player, Team
from competition.vocabulary import MatchStatus
from formats import qbj
from scoring.rules import load_preset

#: The rules an imported match is stored under (QBJ's usual 15/10/−5 with bonuses).
PRESET = "naqt"


@dataclass(frozen=True)
class Imported:
    """What ``import_tournament`` stored: counts of rows and the seconds it took."""

    tournament: str
    matches: int
    teams: int
    players: int
    seconds: float


def final_score(mt: qbj.MatchTeam) -> int:
    """A team's total: its ``points`` when the file gives them, else tossup points from the answer
    counts plus bonus and bounceback points."""
    if mt.points is not None:
        return mt.points
    tossups = sum(c.value * c.number for p in mt.match_players for c in p.answer_counts)
    return tossups + (mt.bonus_points or 0) + (mt.bonus_bounceback_points or 0)


def import_tournament(
    t: qbj.Tournament, source: str, progress: Callable[[int], None] | None = None
) -> Imported:
    """Store every match of ``t`` (see the module docstring) in one transaction: a failure stores
    nothing. ``source`` names the file (kept in each match's record); ``progress(n)`` is called
    after each batch of ``n`` matches. Raises ValueError when a match names a team the
    registrations lack (the reader adds such teams, so only hand-built records can)."""
    started = time.perf_counter()
    teams_of: dict[str, tuple[qbj.Registration, qbj.Team]] = {
        team.name: (reg, team) for reg in t.registrations for team in reg.teams
    }
    cfg = game.MatchConfig(preset=load_preset(PRESET))
    now = timezone.now()
    n_teams = n_players = 0
    with transaction.atomic():
        matches = Match.objects.bulk_create(
            [
                Match(
                    name=" · ".join(x for x in (t.name, m.phase, m.round, m.serial or m.key) if x)[:200],
                    preset=PRESET,
                    config=cfg.to_dict(),
                    status=Match.Status.ENDED,
                    ended_at=now,
                    seq=1,
                )
                for m in t.matches
            ]
        )
        identities = _identities(t)
        team_rows: list[Team] = []
        sides: list[qbj.MatchTeam] = []
        for row, m in zip(matches, t.matches, strict=True):
            for mt in m.match_teams:
                if mt.team not in teams_of:
                    raise ValueError(f"match {m.key!r}: team {mt.team!r} is in no registration")
                team_rows.append(Team(match=row, name=mt.team[:100], competitor=identities[(mt.team, None)]))
                sides.append(mt)
        team_rows = Team.objects.bulk_create(team_rows)
        player_rows: list[Player] = []
        for team_row, mt in zip(team_rows, sides, strict=True):
            played = _participants(mt)
            player_rows += [
                Player(
                    match=team_row.match,
                    team=team_row,
                    name=p.name[:100],
                    competitor=identities[(mt.team, p.name)],
                )
                for p in teams_of[mt.team][1].players
                if p.name in played
            ]
        player_rows = Player.objects.bulk_create(player_rows)
        n_teams, n_players = len(team_rows), len(player_rows)
        by_match_teams: dict[int, list[Team]] = {}
        for team_row in team_rows:
            by_match_teams.setdefault(team_row.match_id, []).append(team_row)
        by_match_players: dict[int, list[Player]] = {}
        for p in player_rows:
            by_match_players.setdefault(p.match_id, []).append(p)
        events = []
        for i, (row, m) in enumerate(zip(matches, t.matches, strict=True)):
            rows = by_match_teams.get(row.id, [])
            state = game.new_match(
                cfg,
                [game.TeamSpec(x.id, x.name, x.kind) for x in rows],
                [game.PlayerSpec(p.id, p.team_id, p.name, p.kind) for p in by_match_players.get(row.id, [])],
                [],
                [],
            )
            state.status = MatchStatus.ENDED
            state.scores = {str(x.id): final_score(mt) for x, mt in zip(rows, m.match_teams, strict=True)}
            row.state = state.live_dict()
            row.spec, row.spec_key = state.spec().to_dict(), rowcache.new_part_key()
            row.records, row.records_key = state.records_dict(), rowcache.new_part_key()
            payload = {
                "format": "qbj",
                "source": source,
                "tournament": t.name,
                "teams": [_team_json(*teams_of[mt.team]) for mt in m.match_teams],
                "match": qbj.match_to_json(m),
            }
            events.append(
                MatchEvent(
                    match=row, seq=1, event=game.EventName.MATCH_IMPORTED, payload=payload, actor="import"
                )
            )
            if progress is not None and (i + 1) % 100 == 0:
                progress(100)
        Match.objects.bulk_update(
            matches, ["state", "spec", "spec_key", "records", "records_key"], batch_size=500
        )
        MatchEvent.objects.bulk_create(events, batch_size=500)
    if progress is not None and len(matches) % 100:
        progress(len(matches) % 100)
    return Imported(t.name, len(matches), n_teams, n_players, time.perf_counter() - started)


def _identities(t: qbj.Tournament) -> dict[tuple[str, str | None], Competitor]:
    """One new identity per registered team (key ``(team, None)``) and per player on its roster
    (``(team, player)``), handles made unique as ``Competitor.create_fresh`` does ("Ann", "Ann 2"):
    a file's people are its own, never merged with existing identities by name (organisers merge
    in the admin). Created in bulk, inside the import's transaction."""
    taken = {h.lower() for h in Competitor.objects.values_list("handle", flat=True)}

    def fresh(base: str, kind: str) -> Competitor:
        base = base.strip()[:90] or kind
        n = 1
        while (handle := base if n == 1 else f"{base} {n}").lower() in taken:
            n += 1
        taken.add(handle.lower())
        return Competitor(handle=handle, kind=kind)

    out: dict[tuple[str, str | None], Competitor] = {}
    for reg in t.registrations:
        for team in reg.teams:
            out[(team.name, None)] = fresh(team.name, Competitor.Kind.TEAM)
            for p in team.players:
                out[(team.name, p.name)] = fresh(p.name, Competitor.Kind.HUMAN)
    Competitor.objects.bulk_create(out.values(), batch_size=1000)
    return out


def _participants(mt: qbj.MatchTeam) -> set[str]:
    """The players of a side who played: in its player lines or a lineup."""
    return {p.player for p in mt.match_players} | {name for lu in mt.lineups for name in lu.players}


def _team_json(reg: qbj.Registration, team: qbj.Team) -> dict[str, object]:
    return {
        "name": team.name,
        "registration": reg.name,
        "location": reg.location,
        "players": [{"name": p.name, "year": p.year} for p in team.players],
    }
