"""YellowFruit tournament files (``.yft``), as YellowFruit 4 saves and opens them (github
ANadig/YellowFruit: ``TournamentManager.generateWholeFileObj``, ``Tournament.toFileObject``,
``FileParsing.parseYftTournament``).

A YellowFruit 4 ``.yft`` is a QBJ file (schema 2.1.1, snake_case field names): ``{"version":
"2.1.1", "objects": [Tournament]}`` with everything nested in the one Tournament — its
``scoring_rules`` (answer types), ``registrations`` → teams → players, ``phases`` → ``pools``
(pool teams) and ``rounds`` → matches — where each object may carry a ``YfData`` object of
YellowFruit's own (camelCase keys). YellowFruit refuses a file without ``YfData.YfVersion`` on the
Tournament, or one of a newer version than itself; a phase's ``YfData`` gives its ``phaseType``
and ``code``, a round's its ``number``, a pool's its ``size``. Matches name teams, players and
answer types by ``{"$ref": id}``; a side gives its ``points`` (total) and each player its
``tossups_heard`` and ``answer_counts``.

``to_yft`` writes :class:`formats.qbj.Tournament` records as such a file (a phase per QBJ phase
name, in order: the first a prelim phase, the others playoff phases, each with one pool of every
team); ``read_yft`` reads one back (the QBJ reader, after checking it is a YellowFruit file).
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from formats import qbj
from formats.errors import FormatError
from formats.sqbs import round_number, total

#: The QBJ schema version YellowFruit 4 writes, and the YellowFruit version these files claim.
QBJ_VERSION, YF_VERSION = "2.1.1", "4.0.0"
#: YellowFruit's phase types (``Phase.ts`` ``PhaseTypes``): the first phase, then the others.
PRELIM, PLAYOFF = "Prelim", "Playoff"


def _answer_id(value: int) -> str:
    return f"AnswerType_{value}".replace("-", "neg")


def to_yft(t: qbj.Tournament, *, power_above: int = 10, regulation_tossups: int = 20) -> dict[str, Any]:
    """The ``.yft`` document of ``t``. ``power_above`` marks the answer types above it as powers;
    ``regulation_tossups`` the format's tossup count. Raises ValueError for a match without two
    teams or naming a team or player not registered."""
    team_ids: dict[str, str] = {}
    player_ids: dict[tuple[str, str], str] = {}
    registrations = []
    for r, reg in enumerate(t.registrations, 1):
        teams = []
        for team in reg.teams:
            team_ids[team.name] = tid = f"Team_{len(team_ids) + 1}"
            players = []
            for p in team.players:
                player_ids[(team.name, p.name)] = pid = f"Player_{len(player_ids) + 1}"
                players.append({"type": "Player", "id": pid, "name": p.name})
            teams.append({"type": "Team", "id": tid, "name": team.name, "players": players})
        registrations.append(
            {"type": "Registration", "id": f"Registration_{r}", "name": reg.name, "teams": teams}
        )
    values = {0} | {
        c.value for m in t.matches for mt in m.match_teams for p in mt.match_players for c in p.answer_counts
    }
    answer_types = [
        {
            "type": "AnswerType",
            "id": _answer_id(v),
            "value": v,
            "awards_bonus": v > 0,
            "YfData": {"isPower": v > power_above, "isNeg": v < 0},
        }
        for v in sorted(values, reverse=True)
    ]
    most = max((len(team.players) for reg in t.registrations for team in reg.teams), default=4)
    rules = {
        "type": "ScoringRules",
        "id": "ScoringRules",
        "name": f"{t.name} rules",
        "teams_per_match": 2,
        "maximum_players_per_team": max(most, 1),
        "regulation_tossup_count": regulation_tossups,
        "maximum_regulation_tossup_count": regulation_tossups,
        "minimum_overtime_question_count": 1,
        "overtime_includes_bonuses": False,
        "total_divisor": 5,
        "maximum_bonus_score": 30,
        "bonus_divisor": 10,
        "minimum_parts_per_bonus": 3,
        "maximum_parts_per_bonus": 3,
        "points_per_bonus_part": 10,
        "bonuses_bounce_back": False,
        "lightning_count_per_team": 0,
        "answer_types": answer_types,
    }
    phases: dict[str, dict[int, list[dict[str, Any]]]] = {}
    for n, m in enumerate(t.matches, 1):
        if len(m.match_teams) != 2:
            raise ValueError(f"match {m.key}: YellowFruit matches have 2 teams, not {len(m.match_teams)}")
        sides = []
        for mt in m.match_teams:
            if mt.team not in team_ids:
                raise ValueError(f"match {m.key}: team {mt.team!r} is not registered")
            lines = []
            for mp in mt.match_players:
                if (mt.team, mp.player) not in player_ids:
                    raise ValueError(f"match {m.key}: {mp.player!r} is not on {mt.team!r}'s roster")
                lines.append(
                    {
                        "player": {"$ref": player_ids[(mt.team, mp.player)]},
                        "tossups_heard": mp.tossups_heard,
                        "answer_counts": [
                            {"number": c.number, "answer_type": {"$ref": _answer_id(c.value)}}
                            for c in mp.answer_counts
                        ],
                    }
                )
            sides.append({"team": {"$ref": team_ids[mt.team]}, "points": total(mt), "match_players": lines})
        match = {
            "type": "Match",
            "id": f"Match_{n}",
            "tossups_read": m.tossups_read or len(m.match_questions),
            "match_teams": sides,
            **({"location": m.location} if m.location else {}),
        }
        phases.setdefault(m.phase, {}).setdefault(round_number(m.round, 1), []).append(match)
    phase_objects = []
    every_team = [{"type": "PoolTeam", "team": {"$ref": tid}} for tid in team_ids.values()]
    for i, (name, rounds) in enumerate(phases.items(), 1):
        phase_objects.append(
            {
                "type": "Phase",
                "id": f"Phase_{i}",
                "name": name,
                "YfData": {
                    "phaseType": PRELIM if i == 1 else PLAYOFF,
                    "code": str(i),
                    "forceNumericRounds": False,
                },
                "pools": [
                    {
                        "type": "Pool",
                        "id": f"Pool_{i}_1",
                        "name": "All teams",
                        "position": 1,
                        "pool_teams": every_team,
                        "YfData": {"size": len(every_team)},
                    }
                ],
                "rounds": [
                    {
                        "type": "Round",
                        "id": f"Round_{i}_{number}",
                        "name": f"Round {number}",
                        "YfData": {"number": number},
                        "matches": rounds[number],
                    }
                    for number in sorted(rounds)
                ],
            }
        )
    tournament = {
        "type": "Tournament",
        "name": t.name,
        "scoring_rules": rules,
        "registrations": registrations,
        "phases": phase_objects,
        "YfData": {
            "YfVersion": YF_VERSION,
            "seeds": [{"$ref": tid} for tid in team_ids.values()],
            "trackPlayerYear": False,
            "trackSmallSchool": False,
            "trackJV": False,
            "trackUG": False,
            "trackDiv2": False,
            "finalRankingsReady": False,
            "usingScheduleTemplate": False,
        },
    }
    return {"version": QBJ_VERSION, "objects": [tournament]}


def read_yft(text: str, source: str | Path = "file.yft") -> qbj.Tournament:
    """The tournament of a ``.yft`` file's text. Raises FormatError for text that is not JSON, a
    file without YellowFruit's version (as YellowFruit does), or what the QBJ reader refuses."""
    try:
        doc = json.loads(text)
    except json.JSONDecodeError as exc:
        raise FormatError(Path(source), exc.lineno, f"invalid JSON: {exc.msg}") from None
    objects = doc.get("objects") if isinstance(doc, dict) else None
    tournaments = [o for o in objects or [] if isinstance(o, dict) and o.get("type") == "Tournament"]
    version = (tournaments[0].get("YfData") or {}).get("YfVersion") if len(tournaments) == 1 else None
    if not isinstance(version, str) or not version:
        raise FormatError(Path(source), None, "not a YellowFruit file: no Tournament with YfData.YfVersion")
    return qbj.read_document(doc, source)
