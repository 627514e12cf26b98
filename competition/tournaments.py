"""Tournaments: create one from teams, packets and a format; schedule its games as matches;
advance it as results come in; its standings and its QBJ export.

The plan is ``competition.schedule.plan`` (pure) over the results so far; :func:`advance` creates
the games it does not have yet, under the tournament's row lock, so two games ending at once
create each next game once. Every game is a :class:`Match` made through ``services.create_match``
(the one door), its teams and seats carrying the tournament's identities (``Competitor``), so the
exports, the IRT fits and the standings see one team and one person across its games.

Results are read in two independent ways, which must agree (the simulated tournament checks it):
live from each ended match's engine state (:func:`game_result`: final scores, the ruling record)
and from an exported QBJ file (:func:`results_from_qbj`). Moderator adjustments count in the live
scores only (QBJ has no field for them; the export lists them in the match notes).

Reviewed results: the standings count only official results (``competition.review``: submitted
by the moderator, accepted by the director). The schedule's advance does not wait for them: it
plans from the results as played (:func:`results`), so the next phase's games exist the moment
the last game ends, as before. A result the director sends back after that has already seeded
the next phase; the director reviews a phase's last results before its next phase starts.
"""

from __future__ import annotations

import logging
from collections.abc import Sequence
from dataclasses import replace
from typing import Any

from django.db import transaction

from competition import exports, game, outbox, review, selectors, services
from competition import schedule as sc
from competition import standings as st
from competition.interchange import final_score
from competition.models import (
    Bonus,
    Competitor,
    Match,
    Packet,
    Player,
    Tossup,
    Tournament,
    TournamentGame,
    TournamentSeat,
    TournamentTeam,
)
from competition.vocabulary import QuestionKind, SeatKind
from formats import qbj as qbjfmt
from scoring.rules import load_preset

log = logging.getLogger(__name__)

PHASE_NAMES = {sc.PRELIM: qbjfmt.PRELIMS, sc.QUALIFIER: "Qualifier", sc.PLAYOFF: qbjfmt.PLAYOFFS}


def create_tournament(
    *,
    name: str,
    teams: Sequence[dict[str, Any]],
    packet_ids: Sequence[int],
    fmt: dict[str, Any] | sc.Format,
    preset: str = "naqt",
    config: dict[str, Any] | None = None,
    tossups_per_game: int | None = None,
    director: Any = None,
) -> Tournament:
    """Create a tournament and its first games. ``teams`` in seed order (best first):
    ``[{"name", "players": [{"name", "kind": "human" | "bot", "weight_class"}]}]``; every team
    and player gets a fresh identity (a bot: the bot of that name, the same across tournaments),
    whose handle becomes its name here. ``packet_ids``: one packet per round, in order;
    ``tossups_per_game``: play only the first n tossups (and bonuses) of each packet;
    ``director``: the user who reviews its results (``competition.review``; None: superusers).

    Raises ServiceError (``invalid``) for a format these teams cannot play, no packets, a packet
    without tossups, duplicate team or player names, a team without players, an unknown kind;
    ``unknown_preset`` for an unknown preset."""
    try:
        form = fmt if isinstance(fmt, sc.Format) else sc.Format.from_dict(fmt)
        form.check(len(teams))
    except sc.ScheduleError as exc:
        raise services.ServiceError("invalid", str(exc)) from exc
    if tossups_per_game is not None and tossups_per_game < 1:
        raise services.ServiceError("invalid", "tossups_per_game must be at least 1")
    if not packet_ids:
        raise services.ServiceError("invalid", "a tournament needs at least one packet")
    packets = {p.id: p for p in Packet.objects.filter(id__in=packet_ids)}
    for pid in packet_ids:
        if pid not in packets or not packets[pid].tossups.exists():
            raise services.ServiceError("invalid", f"packet {pid} does not exist or has no tossups")
    team_names = [str(t.get("name", "")).strip() for t in teams]
    people = [str(p.get("name", "")).strip() for t in teams for p in t.get("players", [])]
    if not all(team_names) or len(set(team_names)) != len(team_names):
        raise services.ServiceError("invalid", "team names must be non-empty and unique")
    if not all(people) or len(set(people)) != len(people):
        raise services.ServiceError("invalid", "player names must be non-empty and unique in a tournament")
    for t in teams:
        if not t.get("players"):
            raise services.ServiceError("invalid", f"team {t['name']!r} has no players")
        for p in t["players"]:
            if p.get("kind", SeatKind.HUMAN) not in Player.Kind.values:
                raise services.ServiceError(
                    "invalid", f"player {p['name']!r}: unknown kind {p.get('kind')!r}"
                )
    with transaction.atomic():
        tournament = Tournament.objects.create(
            name=name,
            preset=preset,
            format=form.to_dict(),
            config=dict(config or {}),
            packet_ids=list(packet_ids),
            tossups_per_game=tossups_per_game,
            director=director,
        )
        for seed, t in enumerate(teams, 1):
            identity = Competitor.create_fresh(t["name"], Competitor.Kind.TEAM)
            team = TournamentTeam.objects.create(
                tournament=tournament, name=identity.handle, seed=seed, competitor=identity
            )
            for p in t["players"]:
                kind = p.get("kind", SeatKind.HUMAN)
                person = (
                    Competitor.for_bot(p["name"])
                    if kind == Player.Kind.BOT
                    else Competitor.create_fresh(p["name"], Competitor.Kind.HUMAN)
                )
                TournamentSeat.objects.create(
                    team=team,
                    name=person.handle,
                    kind=kind,
                    weight_class=p.get("weight_class", ""),
                    competitor=person,
                )
        advance(tournament.id)
    return tournament


def results(tournament: Tournament) -> list[tuple[sc.Pairing, st.GameResult]]:
    """``(pairing, result)`` of every ended game, read live from the matches' states, reviewed
    or not (the schedule's plan reads these; the standings read :func:`official_results`)."""
    out = []
    games = tournament.games.select_related("home", "away", "match")
    for g in games:
        if g.match.status == Match.Status.ENDED:
            out.append((pairing(g), game_result(g.match, key=game_key(g))))
    return out


def pairing(g: TournamentGame) -> sc.Pairing:
    """A stored game as the schedule's pairing (teams by name)."""
    return sc.Pairing(g.phase, g.round, g.group, g.slot, g.home.name, g.away.name)


def game_key(g: TournamentGame) -> str:
    """A game's name in results, e.g. ``prelim-r2-g1`` (round 2, its first game)."""
    return f"{g.phase}-r{g.round}-g{g.slot + 1}"


def game_result(match: Match, *, key: str) -> st.GameResult:
    """An ended match's result from its engine state: final scores, the rulings that stand
    (undone ones left out), the tossups read (thrown-out ones left out). Teams and players are named by their identities'
    handles, as in the QBJ export."""
    state = selectors.match_state(match)
    handles = selectors.identity_handles(
        [c for c in match.teams.values_list("competitor_id", flat=True) if c is not None]
        + [c for c in match.players.values_list("competitor_id", flat=True) if c is not None]
    )
    team_label = {t.id: handles.get(t.competitor_id or -1, t.name) for t in match.teams.all()}
    seat_label = {p.id: handles.get(p.competitor_id or -1, p.name) for p in match.players.all()}
    # A tossup thrown out for a spare was not heard: its spare was (spares.replace_question).
    read = state.tossup_index + 1 - sum(1 for r in state.replaced if r["kind"] == QuestionKind.TOSSUP)
    lines = []
    for team in state.teams:
        tid = team.team_id
        kept = [h for h in state.history if h.team_id == tid and not h.undone]
        bonus = [h for h in kept if isinstance(h, game.BonusRuling)]
        players = tuple(
            st.PlayerLine(
                seat_label[p.player_id],
                read,
                tuple(
                    (h.points, h.token_index)
                    for h in kept
                    if isinstance(h, game.TossupRuling) and h.player_id == p.player_id
                ),
            )
            for p in state.players
            if p.team_id == tid
        )
        lines.append(
            st.TeamLine(
                team_label[tid],
                state.scores[str(tid)],
                bonus_points=sum(h.points for h in bonus),
                bonuses_heard=len({h.tossup_index for h in bonus}),
                players=players,
            )
        )
    if len(lines) != 2:
        raise services.ServiceError("invalid", f"match {match.id} has {len(lines)} teams, a game has 2")
    return st.GameResult(key, read, (lines[0], lines[1]))


def advance(tournament_id: int) -> list[TournamentGame]:
    """Create the games the plan calls for and the tournament does not have yet (none while a
    phase is still being played); returns the new ones. Idempotent; safe to call concurrently."""
    with transaction.atomic():
        tournament = Tournament.objects.select_for_update().get(pk=tournament_id)
        teams = {t.name: t for t in tournament.teams.all()}
        seeded = sorted(teams, key=lambda n: teams[n].seed)
        have = {(g.phase, g.round, g.slot) for g in tournament.games.all()}
        planned = sc.plan(sc.Format.from_dict(tournament.format), seeded, results(tournament))
        made = []
        for p in planned.games:
            if p.key not in have:
                made.append(_create_game(tournament, p, teams))
        return made


def _create_game(tournament: Tournament, p: sc.Pairing, teams: dict[str, TournamentTeam]) -> TournamentGame:
    packet_id = tournament.packet_ids[(p.round - 1) % len(tournament.packet_ids)]
    tossup_ids = list(
        Tossup.objects.filter(packet_id=packet_id).order_by("number").values_list("id", flat=True)
    )
    bonus_ids = list(
        Bonus.objects.filter(packet_id=packet_id).order_by("number").values_list("id", flat=True)
    )
    if tournament.tossups_per_game:
        tossup_ids = tossup_ids[: tournament.tossups_per_game]
        bonus_ids = bonus_ids[: tournament.tossups_per_game]
    home, away = teams[p.home], teams[p.away]
    seats = [
        {
            "team": t.name,
            "name": s.name,
            "kind": s.kind,
            "weight_class": s.weight_class,
            "competitor": s.competitor,
        }
        for t in (home, away)
        for s in t.seats.all()
    ]
    match = services.create_match(
        name=f"{tournament.name}: {PHASE_NAMES[p.phase]} round {p.round}, {home.name} vs {away.name}",
        tossup_ids=tossup_ids,
        bonus_ids=bonus_ids,
        preset=tournament.preset,
        teams=[home.name, away.name],
        config=tournament.config,
        identities={home.name: home.competitor, away.name: away.competitor},
        seats=seats,
    )
    review.ensure_room(tournament, f"Room {p.slot + 1}")
    return TournamentGame.objects.create(
        tournament=tournament,
        phase=p.phase,
        round=p.round,
        slot=p.slot,
        group=p.group,
        room=f"Room {p.slot + 1}",
        packet_id=packet_id,
        home=home,
        away=away,
        match=match,
    )


#: The outbox topic (competition.signals.on_match_ended) of a match end: its tournament advances.
ADVANCE_TOPIC = "tournament_advance"


def advance_after_match(match_id: int) -> None:
    """The outbox job of a match that ended: if it was a tournament game, its tournament
    advances (:func:`advance`). Runs in the process that stored the end, right after the
    commit, or in the outbox sweeper (``outbox.sweep_outbox``: ``serve``, a worker's start)
    when that process died in between. Raises what :func:`advance` raises; the row then stays
    for the sweeper."""
    game = TournamentGame.objects.filter(match_id=match_id).only("tournament_id").first()
    if game is not None:
        made = advance(game.tournament_id)
        if made:
            log.info("tournament %s: %d new games after match %s", game.tournament_id, len(made), match_id)
    outbox.mark_outbox_done(topic=ADVANCE_TOPIC, match_id=match_id)


Done = list[tuple[sc.Pairing, st.GameResult]]


def official_results(tournament: Tournament, done: Done | None = None) -> Done:
    """The results of :func:`results` (``done`` if given) whose game's result is official: its
    moderator submitted it and the director accepted it (``competition.review``)."""
    done = results(tournament) if done is None else done
    official = {game_key(g) for g in tournament.games.filter(id__in=review.official_game_ids(tournament))}
    return [(p, r) for p, r in done if r.key in official]


def standings(tournament: Tournament, done: Done | None = None) -> st.Standings:
    """Standings over ``done``: by default the official results (:func:`official_results`,
    all phases), live; pass :func:`results` for the results as played, reviewed or not."""
    done = official_results(tournament) if done is None else done
    return st.compute(
        [r for _, r in done],
        [t.name for t in tournament.teams.all()],
        power_above=power_above(tournament),
    )


def power_above(tournament: Tournament) -> int:
    """A correct answer's plain value under the tournament's preset: more is a power."""
    return load_preset(tournament.preset).ten


def current_plan(tournament: Tournament, done: Done | None = None) -> sc.Plan:
    """The schedule's plan given the results so far (``done`` as for :func:`standings`)."""
    teams = sorted(tournament.teams.all(), key=lambda t: t.seed)
    done = results(tournament) if done is None else done
    return sc.plan(sc.Format.from_dict(tournament.format), [t.name for t in teams], done)


def champion(tournament: Tournament, done: Done | None = None) -> str | None:
    """The playoff winner once the final is played; None before, or without playoffs."""
    return current_plan(tournament, done).champion


def complete(tournament: Tournament, done: Done | None = None) -> bool:
    """Every game planned is created and ended."""
    done = results(tournament) if done is None else done
    return len(done) == len(current_plan(tournament, done).games)


def tournament_complete(tournament_id: int) -> bool:
    """:func:`complete` for the tournament of id ``tournament_id`` (irt's fit of a tournament's
    last game). Raises ``Tournament.DoesNotExist``."""
    return complete(Tournament.objects.get(pk=tournament_id))


# --- export ----------------------------------------------------------------------------------


def qbj_tournament(tournament: Tournament) -> qbjfmt.Tournament:
    """The whole tournament as one QBJ Tournament: every ended game, in its phase and round."""
    games = [g for g in tournament.games.select_related("match") if g.match.status == Match.Status.ENDED]
    whole = exports.tournament([g.match for g in games], name=tournament.name)
    where = {
        f"match_{g.match.join_code.lower()}": (PHASE_NAMES[g.phase], f"Round {g.round}", g.room)
        for g in games
    }
    records = tuple(
        replace(m, phase=where[m.key][0], round=where[m.key][1], location=where[m.key][2])
        for m in whole.matches
    )
    return replace(whole, matches=records)


def qbj_document(tournament: Tournament) -> dict[str, Any]:
    """The QBJ file of :func:`qbj_tournament`."""
    return qbjfmt.to_document(qbj_tournament(tournament))


def results_from_qbj(t: qbjfmt.Tournament) -> list[st.GameResult]:
    """Game results recomputed from a QBJ tournament (e.g. a file read back with
    ``formats.qbj.read_qbj``): points are tossup points (answer counts) plus bonus points; a
    question's bonus belongs to the team whose buzz scored and counts as heard once a part of it was
    ruled (as live: a bonus cut short by the match's end before any part is not heard); buzz
    positions are the buzzes' ``word_index``. Raises ValueError for a match without exactly two teams."""
    out = []
    for m in t.matches:
        if len(m.match_teams) != 2:
            raise ValueError(f"match {m.key}: {len(m.match_teams)} teams, a game has 2")
        lines = []
        for mt in m.match_teams:
            heard = sum(1 for q in m.match_questions if q.bonus_parts and _controller(q) == mt.team)
            players = tuple(
                st.PlayerLine(
                    mp.player,
                    mp.tossups_heard,
                    tuple(
                        (b.value, b.word_index)
                        for q in m.match_questions
                        for b in q.buzzes
                        if b.team == mt.team and b.player == mp.player
                    ),
                )
                for mp in mt.match_players
            )
            lines.append(
                st.TeamLine(
                    mt.team,
                    final_score(mt),
                    bonus_points=mt.bonus_points or 0,
                    bonuses_heard=heard,
                    players=players,
                )
            )
        out.append(st.GameResult(m.key, m.tossups_read or len(m.match_questions), (lines[0], lines[1])))
    return out


def _controller(q: qbjfmt.MatchQuestion) -> str | None:
    return next((b.team for b in q.buzzes if b.value > 0), None)
