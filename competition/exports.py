"""Exports of matches: QBJ tournament files and qb-tournament-runner files, rebuilt from the stored
event log (MatchEvent) and buzz log (Buzz, BonusPartResult); imported matches from the record their
import stored (``competition.interchange``).

``play_log(match)`` is the common reconstruction: one dict per tossup cycle (each
``tossup_started``; a replayed tossup gives a second cycle and its first is marked ``"replayed":
true``) with ``cycle``, ``qid`` (the source's id, else ours), ``question_id``, ``external_id``,
``index`` (0-based place in the packet), ``token_count``, server times, ``tossup.responses[]``
(``playerId``, ``playerName``, ``teamId``, ``teamName``, ``isBot``, 0-based ``position``, ``guess``,
``points``, ``isCorrect``, the judge's ``verdict``, the ``ruling``, ``undone``, times, ``race``; a
ruling corrected after the fact holds what stands and, under ``corrected``, the ruling, points
and reason it replaced),
``bonus`` (``bonus_id``, ``index``, ``teamId``, ``teamName``, ``parts[]``: each with the
captain's ``decision`` and ``aiRevealed``, whether a bot of the team had suggested an answer to
its seats before the part was ruled), ``adjustments`` and ``protests``. A tossup thrown out for a
spare has ``thrown_out`` (``reason``, ``spare_id``; else null) and is left out of the QBJ; a bonus
thrown out moves to ``thrown_out_bonuses``; a ruling reviewed on the scoresheet holds what
stands with the seat, ruling, reason and ``by`` it replaced under ``corrected``; a missed buzz
added on review (``buzz_added``) is a response of its own, in word order, with
``addedByReview`` (``reason``, ``by``), no guess or race, and a correct one makes the tossup
``answered``.

* QBJ (``formats.qbj``): one Tournament file for one match or many; teams and players named by
  their identities' handles (``Competitor``: one registration entry per identity, never per display
  name); per match the teams' players with the tossups each heard (``competition.game.tossups_heard``
  over the lineup log) and the lineups (the initial one, then each substitution's, in QBJ's
  reasons), per-player answer counts of the rulings that stand
  (undone and replayed ones left out), per-tossup buzzes with ``buzz_position.word_index`` (the
  0-based token index) and the controlling team's bonus parts. Moderator adjustments are not QBJ
  fields: they are listed in the match's ``notes``.
* qb-tournament-runner (``formats.runner``): ``cycles.jsonl`` (every cycle, replayed ones too, as
  the runner logs a replayed question twice), the question CSVs and, per bot, its response CSVs
  (one row per buzz: ``buzz`` 1, ``confidence`` 1.0, since a live bot reports decisions, not scores).
"""

from __future__ import annotations

import io
import json
import zipfile
from collections.abc import Sequence
from dataclasses import replace
from typing import Any

from competition import game
from competition.game import EventName
from competition.models import Bonus, BonusPartResult, Buzz, Match, MatchEvent, Player, Team, Tossup
from competition.selectors import load_state
from competition.vocabulary import UNCOUNTED_RULINGS, BonusDecision, Ruling, SeatKind, TossupOutcome
from formats import qbj as qbjfmt
from formats import runner
from scoring.judge.grammar import main_answer

#: ``render`` formats (text); ``runner`` is a zip of every runner file (``runner_zip``).
FORMATS = ("qbj", "cycles", "runner")
#: Tournament name of an export of matches played here.
EVENT_NAME = "Tossup"


# The captain's bonus decision (competition.vocabulary.BonusDecision) in qb-tournament-runner's words.
RUNNER_DECISIONS = {
    BonusDecision.OWN: "own",
    BonusDecision.CONSULT: "consult_ai",
    BonusDecision.ABSTAIN: "abstain",
}


def play_log(match: Match) -> list[dict[str, Any]]:
    """Every tossup cycle of a live-played ``match`` rebuilt from its event log, in play order (the
    shape in the module docstring); the exports below are views of it."""
    teams = {t.id: t for t in match.teams.all()}
    players = {p.id: p for p in match.players.all()}
    external = dict(Tossup.objects.filter(id__in=match.tossup_ids).values_list("id", "external_id"))
    verdicts = dict(Buzz.objects.filter(match=match).values_list("seq", "verdict"))
    bonus_verdicts = dict(BonusPartResult.objects.filter(match=match).values_list("seq", "verdict"))
    out: list[dict[str, Any]] = []
    cycle: dict[str, Any] | None = None
    race: dict[str, Any] = {}
    suggested: set[int] = set()  # parts of the open bonus with a bot's suggestion shown to the team
    for ev in MatchEvent.objects.filter(match=match).order_by("seq"):
        d, at = ev.payload, ev.created_at.timestamp()
        if ev.event == EventName.TOSSUP_STARTED:
            cycle = {
                "cycle": len(out),
                "qid": external.get(d["question_id"]) or str(d["question_id"]),
                "tossup": {"responses": [], "outcome": None, "answerline": ""},
                "bonus": None,
                "match_id": match.id,
                "match_code": match.join_code,
                "question_id": d["question_id"],
                "external_id": external.get(d["question_id"], ""),
                "index": d["index"],
                "token_count": d["token_count"],
                "started_at": at,
                "ended_at": None,
                "replayed": False,
                "thrown_out": None,
                "thrown_out_bonuses": [],
                "adjustments": [],
                "protests": [],
            }
            out.append(cycle)
        elif cycle is None:
            continue
        elif ev.event == EventName.RACE:
            race = d
        elif ev.event == EventName.BUZZ:
            player = players.get(d["player_id"])
            cycle["tossup"]["responses"].append(
                {
                    "playerId": d["player_id"],
                    "playerName": d["player"],
                    "teamId": d["team_id"],
                    "teamName": d["team"],
                    "isBot": d["kind"] == SeatKind.BOT,
                    "weight_class": player.weight_class if player else "",
                    "position": d["token_index"],
                    "guess": "",
                    "points": 0,
                    "isCorrect": None,
                    "verdict": verdicts.get(ev.seq, ""),
                    "ruling": None,
                    "undone": False,
                    "revealed_at": d["revealed_at"],
                    "received_at": d["received_at"],
                    "accepted_at": d["accepted_at"],
                    "ruled_at": None,
                    "client_time": d["client_time"],
                    "corrected_press_at": d["corrected_press_at"],
                    "race": race if race.get("winner") == d["player_id"] else None,
                }
            )
            race = {}
        elif ev.event == EventName.BUZZ_RULED:
            r = _last_response(cycle, d["player_id"])
            if r is not None:
                r.update(
                    guess=d["guess"],
                    points=d["points"],
                    isCorrect=d["ruling"] == Ruling.CORRECT,
                    ruling=d["ruling"],
                    ruled_at=at,
                )
        elif ev.event == EventName.TOSSUP_ENDED:
            cycle["tossup"].update(outcome=d["outcome"], answerline=d["answer_line"])
            cycle["ended_at"] = at
        elif ev.event == EventName.TOSSUP_REPLAYED:
            cycle.update(replayed=True, ended_at=at)
            cycle["tossup"]["outcome"] = cycle["tossup"]["outcome"] or "replayed"
        elif ev.event == EventName.RULING_UNDONE:
            _undo(out, d)
        elif ev.event == EventName.QUESTION_REPLACED:
            _thrown_out(cycle, d)
        elif ev.event == EventName.RULING_REVIEWED:
            _review(out, d, players, teams)
        elif ev.event == EventName.BUZZ_ADDED:
            _added(out, d, players, teams, at)
        elif ev.event == EventName.RULING_CORRECTED:
            _correct(out, d)
        elif ev.event == EventName.BONUS_WITHDRAWN:
            for earlier in reversed(out):  # the cycle whose correct buzz was undone
                if earlier["bonus"] is not None and earlier["bonus"]["bonus_id"] == d["bonus_id"]:
                    earlier["bonus"] = None
                    break
        elif ev.event == EventName.BONUS_STARTED:
            team = teams.get(d["team_id"])
            cycle["bonus"] = {
                "bonus_id": d["bonus_id"],
                "index": match.bonus_ids.index(d["bonus_id"]) if d["bonus_id"] in match.bonus_ids else 0,
                "teamId": d["team_id"],
                "teamName": team.name if team else "",
                "parts": [],
            }
            suggested.clear()
        elif ev.event == EventName.BONUS_SUGGESTION:
            suggested.add(d["part"])
        elif ev.event == EventName.BONUS_PART_RULED and cycle["bonus"] is not None:
            cycle["bonus"]["parts"].append(
                {
                    "part": d["part"],
                    "playerId": d.get("player_id"),
                    "guess": d["guess"],
                    "points": d["points"],
                    "isCorrect": d["ruling"] == Ruling.CORRECT,
                    "verdict": bonus_verdicts.get(ev.seq, ""),
                    "ruling": d["ruling"],
                    "decision": d.get("decision", ""),
                    "aiRevealed": d["part"] in suggested,
                    "undone": False,
                    "answerline": d["answer_line"],
                    "ruled_at": at,
                }
            )
        elif ev.event == EventName.POINTS_ADJUSTED:
            cycle["adjustments"].append({**_without_scores(d), "at": at})
        elif ev.event in (EventName.PROTEST_MARKED, EventName.PROTEST_RESOLVED):
            cycle["protests"].append({**_without_scores(d), "event": ev.event})
    return out


def _without_scores(d: dict[str, Any]) -> dict[str, Any]:
    return {k: v for k, v in d.items() if k != "scores"}


def _last_response(cycle: dict[str, Any], player_id: int) -> dict[str, Any] | None:
    return next((r for r in reversed(cycle["tossup"]["responses"]) if r["playerId"] == player_id), None)


def _correct(out: list[dict[str, Any]], d: dict[str, Any]) -> None:
    """A ``ruling_corrected``: the newest standing ruling it names takes the new ruling and points,
    and keeps what it was and why under ``corrected``; its tossup's outcome follows."""
    for cycle in reversed(out):
        if d["bonus_id"] is not None:
            bonus = cycle["bonus"]
            if bonus is None or bonus["bonus_id"] != d["bonus_id"]:
                continue
            ruled = next(
                (p for p in reversed(bonus["parts"]) if p["part"] == d["part"] and not p["undone"]), None
            )
        elif cycle["question_id"] == d["question_id"]:
            ruled = _last_response(cycle, d["player_id"])
            if d["outcome"] is not None:
                cycle["tossup"]["outcome"] = d["outcome"]
        else:
            continue
        if ruled is not None:
            before = {"ruling": d["ruling_before"], "points": d["points_before"], "reason": d["reason"]}
            ruled.update(
                ruling=d["ruling"],
                points=d["points"],
                isCorrect=d["ruling"] == Ruling.CORRECT,
                corrected=before,
            )
        return


def _thrown_out(cycle: dict[str, Any], d: dict[str, Any]) -> None:
    """A ``question_replaced``: the cycle's tossup (``thrown_out``: reason and spare) or its bonus
    (moved to ``thrown_out_bonuses`` with the reason; the spare's ``bonus_started`` follows)."""
    why = {"reason": d["reason"], "spare_id": d["spare_id"]}
    if d["bonus_id"] is None:
        cycle["thrown_out"] = why
    elif cycle["bonus"] is not None:
        cycle["thrown_out_bonuses"].append({**cycle["bonus"], "thrown_out": why})
        cycle["bonus"] = None


def _review(
    out: list[dict[str, Any]], d: dict[str, Any], players: dict[int, Player], teams: dict[int, Team]
) -> None:
    """A ``ruling_reviewed``: the standing ruling it names (newest cycle of its question or bonus)
    takes the new seat, ruling and points, and keeps what it was, why and who under ``corrected``."""
    before = {
        "ruling": d["ruling_before"],
        "points": d["points_before"],
        "reason": d["reason"],
        "by": d["by"],
    }
    for cycle in reversed(out):
        if d["bonus_id"] is not None:
            bonus = cycle["bonus"]
            if bonus is None or bonus["bonus_id"] != d["bonus_id"]:
                continue
            ruled = next(
                (p for p in reversed(bonus["parts"]) if p["part"] == d["part"] and not p["undone"]), None
            )
        elif cycle["question_id"] == d["question_id"] and not cycle["replayed"] and not cycle["thrown_out"]:
            ruled = _last_response(cycle, d["player_before"])
            if ruled is not None and d["player_id"] != d["player_before"]:
                seat, team = players.get(d["player_id"]), teams.get(d["team_id"])
                ruled.update(
                    playerId=d["player_id"],
                    playerName=seat.name if seat else "",
                    teamId=d["team_id"],
                    teamName=team.name if team else "",
                    isBot=bool(seat and seat.kind == SeatKind.BOT),
                )
                before.update(playerId=d["player_before"], teamId=d["team_before"])
        else:
            continue
        if ruled is not None:
            ruled.update(
                ruling=d["ruling"],
                points=d["points"],
                isCorrect=d["ruling"] == Ruling.CORRECT,
                corrected=before,
            )
        return


def _added(
    out: list[dict[str, Any]],
    d: dict[str, Any],
    players: dict[int, Player],
    teams: dict[int, Team],
    at: float,
) -> None:
    """A ``buzz_added``: a response of its own (``addedByReview``, with why and who) in the newest
    cycle of its question, placed among the responses by word; a correct one answers the tossup."""
    for cycle in reversed(out):
        if cycle["question_id"] != d["question_id"] or cycle["replayed"] or cycle["thrown_out"]:
            continue
        seat, team = players.get(d["player_id"]), teams.get(d["team_id"])
        responses = cycle["tossup"]["responses"]
        where = sum(1 for r in responses if r["position"] <= d["token_index"])
        responses.insert(
            where,
            {
                "playerId": d["player_id"],
                "playerName": seat.name if seat else "",
                "teamId": d["team_id"],
                "teamName": team.name if team else "",
                "isBot": bool(seat and seat.kind == SeatKind.BOT),
                "weight_class": seat.weight_class if seat else "",
                "position": d["token_index"],
                "guess": "",
                "points": d["points"],
                "isCorrect": d["ruling"] == Ruling.CORRECT,
                "verdict": "",
                "ruling": d["ruling"],
                "undone": False,
                "revealed_at": None,
                "received_at": at,
                "accepted_at": None,
                "ruled_at": at,
                "client_time": None,
                "corrected_press_at": None,
                "race": None,
                "addedByReview": {"reason": d["reason"], "by": d["by"]},
            },
        )
        if d["ruling"] == Ruling.CORRECT:
            cycle["tossup"]["outcome"] = TossupOutcome.ANSWERED
        return


def _undo(out: list[dict[str, Any]], d: dict[str, Any]) -> None:
    """Mark the newest matching ruling (tossup buzz or bonus part) as undone."""
    for cycle in reversed(out):
        if d.get("bonus_id") is not None:
            bonus = cycle["bonus"]
            if bonus is None or bonus["bonus_id"] != d["bonus_id"]:
                continue
            part = next(
                (p for p in reversed(bonus["parts"]) if p["part"] == d["part"] and not p["undone"]), None
            )
        elif cycle["question_id"] == d["question_id"]:
            part = _last_response(cycle, d["player_id"])
        else:
            continue
        if part is not None:
            part["undone"] = True
            return


# ---------------------------------------------------------------- QBJ


def _imported(matches: Sequence[Match]) -> dict[int, dict[str, Any]]:
    """The import records of those of ``matches`` that were imported, by match id (one query)."""
    rows = MatchEvent.objects.filter(match__in=list(matches), event=EventName.MATCH_IMPORTED).values_list(
        "match_id", "payload"
    )
    return dict(rows)


def qbj_match(
    match: Match, imported: dict[str, Any] | None = None
) -> tuple[qbjfmt.Match, list[qbjfmt.Registration]]:
    """``match`` as a QBJ match record and the registrations of its teams (one per team for a match
    played here; as imported otherwise). ``imported``: its import record when the caller has read
    it (``_imported``), else it is looked up."""
    imported = imported or _imported([match]).get(match.id)
    if imported is not None:
        regs = [
            qbjfmt.Registration(
                t["registration"],
                (qbjfmt.Team(t["name"], tuple(qbjfmt.Player(p["name"], p["year"]) for p in t["players"])),),
                t["location"],
            )
            for t in imported["teams"]
        ]
        return qbjfmt.match_from_json(imported["match"]), regs
    teams = list(match.teams.select_related("competitor"))
    players = list(match.players.select_related("competitor"))
    full = play_log(match)
    log = [c for c in full if not c["replayed"] and not c["thrown_out"]]
    # Names in the file are the identities' handles (unique): the same team or person across the
    # matches of an export is one registration entry, two people of one name are two.
    team_label = {t.id: _label(t) for t in teams}
    player_label = {p.id: _label(p) for p in players}
    counts: dict[int, dict[int, int]] = {p.id: {} for p in players}
    bonus_points = {t.id: 0 for t in teams}
    questions = []
    for number, c in enumerate(log, 1):
        buzzes = []
        for r in c["tossup"]["responses"]:
            if r["undone"] or r["ruling"] is None:
                continue
            buzzes.append(
                qbjfmt.Buzz(team_label[r["teamId"]], player_label[r["playerId"]], r["points"], r["position"])
            )
            mine = counts.setdefault(r["playerId"], {})
            mine[r["points"]] = mine.get(r["points"], 0) + 1
        parts = None
        if c["bonus"] is not None:
            parts = tuple(p["points"] for p in c["bonus"]["parts"] if not p["undone"])
            bonus_points[c["bonus"]["teamId"]] += sum(parts)
        questions.append(qbjfmt.MatchQuestion(number, tuple(buzzes), bonus_parts=parts))
    adjustments = [a for c in full for a in c["adjustments"]]  # they stand when their tossup is replayed
    notes = f"Tossup match {match.join_code} ({match.name}), preset {match.preset}"
    if adjustments:
        notes += "; adjustments: " + ", ".join(
            f"{team_label.get(a.get('team_id'), '?')} {a.get('points', 0):+d} ({a.get('reason', '')})"
            for a in adjustments
        )
    state = load_state(match.id)  # the row as stored now (``match`` may be an older copy)
    heard = game.tossups_heard(state)
    match_teams = []
    for t in teams:
        members = [p for p in players if p.team_id == t.id]
        lines = tuple(
            qbjfmt.MatchPlayer(
                player_label[p.id],
                heard.get(p.id, 0),
                tuple(
                    qbjfmt.AnswerCount(v, n) for v, n in sorted(counts.get(p.id, {}).items(), reverse=True)
                ),
            )
            for p in members
        )
        lineup = tuple(
            qbjfmt.Lineup(first + 1, tuple(player_label[pid] for pid in seats if pid in player_label), reason)
            for first, seats, reason in _lineups(state, t.id, len(log))
        )
        match_teams.append(
            qbjfmt.MatchTeam(
                team_label[t.id], bonus_points=bonus_points[t.id], match_players=lines, lineups=lineup
            )
        )
    record = qbjfmt.Match(
        f"match_{match.join_code.lower()}",
        tuple(match_teams),
        tuple(questions),
        round=match.created_at.date().isoformat(),
        tossups_read=len(log),
        serial=match.join_code,
        notes=notes,
    )
    regs = [
        qbjfmt.Registration(
            team_label[t.id],
            (
                qbjfmt.Team(
                    team_label[t.id],
                    tuple(qbjfmt.Player(player_label[p.id]) for p in players if p.team_id == t.id),
                ),
            ),
        )
        for t in teams
    ]
    return record, regs


def _lineups(state: game.MatchState, team_id: int, read: int) -> list[tuple[int, list[int], str]]:
    """Team ``team_id``'s lineups as QBJ lists them: ``(first tossup 0-based, seat ids, reason)``,
    the initial one first, then each change that heard a tossup of the ``read`` ones (several
    changes at one break count as the last; one that changed nobody is left out)."""
    initial = game.active_players(replace(state, lineups=[]), team_id)
    out: list[tuple[int, list[int], str]] = [(0, initial, "initial")] if read else []
    for entry in state.lineups:
        if entry["team_id"] != team_id or entry["first_tossup"] >= read:
            continue
        if out and out[-1][0] == entry["first_tossup"]:
            reason = "initial" if entry["first_tossup"] == 0 else entry["reason"]
            out[-1] = (entry["first_tossup"], entry["players"], reason)
        elif not out or out[-1][1] != entry["players"]:
            out.append((entry["first_tossup"], entry["players"], entry["reason"]))
    return [lu for lu in out if lu[1]]


def _label(row: Team | Player) -> str:
    """A team's or seat's name in exports: its identity's handle (else its display name)."""
    return row.competitor.handle if row.competitor is not None else row.name


def tournament(matches: Sequence[Match], name: str | None = None) -> qbjfmt.Tournament:
    """One QBJ tournament of ``matches``. Teams are one team per name across the matches (for
    matches played here the name is the identity's handle, unique per identity; rosters merged,
    first registration kept); ``name`` defaults to the imported tournament's name when every
    match comes from one, else ``EVENT_NAME``."""
    records: list[qbjfmt.Match] = []
    teams: dict[str, tuple[qbjfmt.Registration, list[qbjfmt.Player]]] = {}
    sources: set[str] = set()
    records_of = _imported(matches)
    for m in matches:
        imported = records_of.get(m.id)
        sources.add(imported["tournament"] if imported else EVENT_NAME)
        record, regs = qbj_match(m, imported)
        records.append(record)
        for reg in regs:
            for team in reg.teams:
                _, roster = teams.setdefault(team.name, (reg, []))
                roster.extend(p for p in team.players if all(p.name != q.name for q in roster))
    registrations: dict[str, tuple[str | None, list[qbjfmt.Team]]] = {}
    for team_name, (reg, roster) in teams.items():
        registrations.setdefault(reg.name, (reg.location, []))[1].append(
            qbjfmt.Team(team_name, tuple(roster))
        )
    regs = tuple(qbjfmt.Registration(n, tuple(ts), loc) for n, (loc, ts) in registrations.items())
    title = name or (sources.pop() if len(sources) == 1 else EVENT_NAME)
    return qbjfmt.Tournament(title, regs, tuple(records))


def qbj_document(matches: Sequence[Match], name: str | None = None) -> dict[str, Any]:
    """The QBJ file (one Tournament object, see ``formats.qbj.to_document``) of ``matches``."""
    return qbjfmt.to_document(tournament(matches, name))


# ---------------------------------------------------------------- qb-tournament-runner


def _runner_id(player: Player | None, player_id: int | None) -> str:
    """The runner's player id: its AI players are ``ai_<n>``."""
    prefix = runner.AI_PREFIX if player is not None and player.kind == Player.Kind.BOT else "human_"
    return f"{prefix}{player_id}"


def runner_cycles(match: Match) -> list[runner.Cycle]:
    """The runner's per-cycle records of ``match``: the rulings of each cycle that stand (an undone
    ruling is left out; a replayed cycle keeps its own), positions as the runner counts them."""
    players = {p.id: p for p in match.players.all()}
    out = []
    for c in play_log(match):
        tossups = tuple(
            runner.TossupResponse(
                c["index"],
                c["qid"],
                _runner_id(players.get(r["playerId"]), r["playerId"]),
                r["playerName"],
                r["teamName"],
                r["position"] + 1,
                r["guess"],
                r["points"],
                bool(r["isCorrect"]),
            )
            for r in c["tossup"]["responses"]
            if r["ruling"] is not None and not r["undone"]
        )
        bonus = None
        if c["bonus"] is not None:
            b = c["bonus"]
            parts = []
            for p in b["parts"]:
                if p["undone"]:
                    continue
                who = players.get(p["playerId"]) if p["playerId"] is not None else None
                responses = {who.name: p["guess"]} if who is not None else {}
                decision = RUNNER_DECISIONS.get(p.get("decision", ""))
                # The runner records aiRevealed where the team had a choice (a decisions preset).
                revealed = p["aiRevealed"] if decision is not None else None
                parts.append(
                    runner.BonusPart(b["teamName"], p["points"], responses, p["guess"], decision, revealed)
                )
            bonus = runner.BonusResponse(b["index"], b["teamName"], tuple(parts))
        out.append(runner.Cycle(tossups, bonus))
    return out


def _qids(model: type[Tossup] | type[Bonus], ids: list[int]) -> dict[int, str]:
    rows = dict(model.objects.filter(id__in=ids).values_list("id", "external_id"))
    return {i: rows.get(i) or str(i) for i in ids}


def runner_files(match: Match) -> dict[str, str]:
    """Every runner file of ``match`` by name: ``cycles.jsonl``; the packet as the runner loads it
    (``tossups.csv``, ``power.csv``, ``bonuses.csv``); per bot ``responses/<name>.buzz.csv`` and,
    when it answered bonus parts, ``responses/<name>.bonus.csv``. These hold answer lines: for
    moderators only before the match ends."""
    spec = match.spec
    tqids = _qids(Tossup, match.tossup_ids)
    bqids = _qids(Bonus, match.bonus_ids)
    tossups = [
        (tqids.get(t["question_id"], str(t["question_id"])), " ".join(map(runner.token_text, t["tokens"])), t)
        for t in spec.get("tossups", [])
    ]
    files = {
        "cycles.jsonl": runner.write_cycles(runner_cycles(match)),
        "tossups.csv": runner.write_csv(
            runner.TOSSUPS_CSV,
            [(q, text, main_answer(t["answer_line"]), t["answer_line"]) for q, text, t in tossups],
        ),
        "power.csv": runner.write_csv(
            runner.POWER_CSV,
            [
                (q, runner.token_text(t["tokens"][t["power_index"]]))
                for q, _, t in tossups
                if t["power_index"] is not None and t["power_index"] < len(t["tokens"])
            ],
        ),
    }
    bonus_rows = []
    for b in spec.get("bonuses", []):
        cells: list[str] = [bqids.get(b["bonus_id"], str(b["bonus_id"])), b["leadin"]]
        for part in b["parts"][:3]:  # the runner's CSV layout has three parts
            cells += [part["text"], main_answer(part["answer_line"]), part["answer_line"]]
        bonus_rows.append(cells + [""] * (len(runner.BONUSES_CSV) - len(cells)))
    files["bonuses.csv"] = runner.write_csv(runner.BONUSES_CSV, bonus_rows)
    for bot in match.players.filter(kind=Player.Kind.BOT):
        buzzes = Buzz.objects.filter(match=match, player=bot).exclude(ruling__in=UNCOUNTED_RULINGS)
        files[f"responses/{bot.name}.buzz.csv"] = runner.write_csv(
            runner.BUZZ_CSV,
            [
                (
                    tqids.get(b.tossup_id, str(b.tossup_id)),
                    b.token_index,
                    b.guess,
                    1.0,
                    1,
                    int(b.ruling == Ruling.CORRECT),
                )
                for b in buzzes
            ],
        )
        parts = BonusPartResult.objects.filter(match=match, team=bot.team).exclude(guess="").order_by("seq")
        if parts:
            files[f"responses/{bot.name}.bonus.csv"] = runner.write_csv(
                runner.BONUS_CSV,
                [(bqids.get(p.bonus_id, str(p.bonus_id)), p.part + 1, p.guess, 1.0, "") for p in parts],
            )
    return files


def runner_zip(match: Match) -> bytes:
    """``runner_files`` in one zip archive (a folder the runner's dataset loader can point at)."""
    buf = io.BytesIO()
    with zipfile.ZipFile(buf, "w", zipfile.ZIP_DEFLATED) as z:
        for name, text in runner_files(match).items():
            z.writestr(f"{match.join_code}/{name}", text)
    return buf.getvalue()


def render(match: Match, fmt: str) -> str:
    """The export text of one match: ``qbj`` → a QBJ tournament file, ``cycles`` → the runner's
    ``cycles.jsonl``. Raises ValueError for another format (``runner`` is binary: ``runner_zip``)."""
    if fmt == "cycles":
        return runner.write_cycles(runner_cycles(match))
    if fmt == "qbj":
        return json.dumps(qbj_document([match]), indent=2, ensure_ascii=False) + "\n"
    raise ValueError(f"unknown export format {fmt!r}; expected qbj or cycles (runner: runner_zip)")
