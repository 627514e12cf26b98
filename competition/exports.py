"""Exports of a played match, rebuilt from its stored event log (MatchEvent) and buzz log
(Buzz, BonusPartResult).

* qb-tournament-runner ``cycles.jsonl``: one record per tossup cycle (each ``tossup_started``; a
  replayed tossup gives a second cycle and its first is marked ``"replayed": true``). The runner's
  fields (``cycle``, ``qid``, ``tossup.responses[]`` with 0-based ``position``, ``guess``,
  ``points``, ``isCorrect``; ``bonus.parts[]``) plus what it lacks, in snake_case: ``match_id``,
  ``match_code``, ``question_id`` (ours), ``external_id`` (the source's), ``token_count``, server
  times (``started_at``, ``ended_at`` and per response ``revealed_at``, ``received_at``,
  ``accepted_at``, ``ruled_at``, ``client_time``, ``corrected_press_at``, seconds since the epoch),
  the judge's ``verdict``, the ``ruling``, ``undone`` and the arbitration ``race``. Model
  counterfactuals ("would have buzzed at") are not known to a live server and are not written.
* QBJ (quizbowl/schema) match record: ``{"version", "objects": [{"type": "Match", "tossups_read",
  "match_teams", "match_questions"}]}``; each match question lists the buzzes that stand (undone
  and replayed rulings left out) with ``buzz_position.word_index`` (0-based) and ``result.value``
  (points), and the controlling team's bonus parts.
"""

from __future__ import annotations

import json
from collections.abc import Iterable
from typing import Any

from competition.models import BonusPartResult, Buzz, Match, MatchEvent, Tossup

QBJ_VERSION = "2.1.1"
FORMATS = ("cycles", "qbj")


def cycles(match: Match) -> list[dict[str, Any]]:
    """The ``cycles.jsonl`` records of ``match`` (see the module docstring), in play order."""
    teams = {t.id: t for t in match.teams.all()}
    players = {p.id: p for p in match.players.all()}
    external = dict(Tossup.objects.filter(id__in=match.tossup_ids).values_list("id", "external_id"))
    verdicts = dict(Buzz.objects.filter(match=match).values_list("seq", "verdict"))
    bonus_verdicts = dict(BonusPartResult.objects.filter(match=match).values_list("seq", "verdict"))
    out: list[dict[str, Any]] = []
    cycle: dict[str, Any] | None = None
    race: dict[str, Any] = {}
    for ev in MatchEvent.objects.filter(match=match).order_by("seq"):
        d, at = ev.payload, ev.created_at.timestamp()
        if ev.type == "tossup_started":
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
                "adjustments": [],
                "protests": [],
            }
            out.append(cycle)
        elif cycle is None:
            continue
        elif ev.type == "race":
            race = d
        elif ev.type == "buzz":
            player = players.get(d["player_id"])
            cycle["tossup"]["responses"].append(
                {
                    "playerId": d["player_id"],
                    "playerName": d["player"],
                    "teamId": d["team_id"],
                    "teamName": d["team"],
                    "isBot": d["kind"] == "bot",
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
        elif ev.type == "buzz_ruled":
            r = _last_response(cycle, d["player_id"])
            if r is not None:
                r.update(
                    guess=d["guess"],
                    points=d["points"],
                    isCorrect=d["ruling"] == "correct",
                    ruling=d["ruling"],
                    ruled_at=at,
                )
        elif ev.type == "tossup_ended":
            cycle["tossup"].update(outcome=d["outcome"], answerline=d["answer_line"])
            cycle["ended_at"] = at
        elif ev.type == "tossup_replayed":
            cycle.update(replayed=True, ended_at=at)
            cycle["tossup"]["outcome"] = cycle["tossup"]["outcome"] or "replayed"
        elif ev.type == "ruling_undone":
            _undo(out, d)
        elif ev.type == "bonus_started":
            team = teams.get(d["team_id"])
            cycle["bonus"] = {
                "bonus_id": d["bonus_id"],
                "teamId": d["team_id"],
                "teamName": team.name if team else "",
                "parts": [],
            }
        elif ev.type == "bonus_part_ruled" and cycle["bonus"] is not None:
            cycle["bonus"]["parts"].append(
                {
                    "part": d["part"],
                    "guess": d["guess"],
                    "points": d["points"],
                    "isCorrect": d["ruling"] == "correct",
                    "verdict": bonus_verdicts.get(ev.seq, ""),
                    "ruling": d["ruling"],
                    "undone": False,
                    "answerline": d["answer_line"],
                    "ruled_at": at,
                }
            )
        elif ev.type == "points_adjusted":
            cycle["adjustments"].append({**_without_scores(d), "at": at})
        elif ev.type in ("protest_marked", "protest_resolved"):
            cycle["protests"].append({**_without_scores(d), "event": ev.type})
    return out


def _without_scores(d: dict[str, Any]) -> dict[str, Any]:
    return {k: v for k, v in d.items() if k != "scores"}


def _last_response(cycle: dict[str, Any], player_id: int) -> dict[str, Any] | None:
    return next((r for r in reversed(cycle["tossup"]["responses"]) if r["playerId"] == player_id), None)


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


def qbj(match: Match) -> dict[str, Any]:
    """The QBJ match record of ``match`` (see the module docstring)."""
    teams = list(match.teams.all())
    players = list(match.players.all())
    records = [c for c in cycles(match) if not c["replayed"]]
    questions = []
    bonus_points = {t.id: 0 for t in teams}
    answer_counts: dict[int, dict[int, int]] = {p.id: {} for p in players}
    for number, c in enumerate(records, 1):
        buzzes = []
        for r in c["tossup"]["responses"]:
            if r["undone"] or r["ruling"] is None:
                continue
            buzzes.append(
                {
                    "player": {"name": r["playerName"]},
                    "team": {"name": r["teamName"]},
                    "buzz_position": {"word_index": r["position"]},
                    "result": {"value": r["points"]},
                }
            )
            counts = answer_counts.setdefault(r["playerId"], {})
            counts[r["points"]] = counts.get(r["points"], 0) + 1
        question: dict[str, Any] = {
            "question_number": number,
            "tossup_question": {"question_number": number, "type": "tossup", "parts": 1},
            "buzzes": buzzes,
        }
        bonus = c["bonus"]
        if bonus is not None:
            parts = [p for p in bonus["parts"] if not p["undone"]]
            question["bonus"] = {
                "question": {"question_number": number, "type": "bonus", "parts": len(parts)},
                "parts": [{"controlled_points": p["points"], "bounceback_points": 0} for p in parts],
            }
            bonus_points[bonus["teamId"]] += sum(p["points"] for p in parts)
        questions.append(question)
    match_teams = []
    for t in teams:
        members = [p for p in players if p.team_id == t.id]
        match_teams.append(
            {
                "team": {"name": t.name, "players": [{"name": p.name} for p in members]},
                "bonus_points": bonus_points[t.id],
                "bonus_bounceback_points": 0,
                "match_players": [
                    {
                        "player": {"name": p.name},
                        "tossups_heard": len(records),
                        "answer_counts": [
                            {"number": n, "answer": {"value": v}}
                            for v, n in sorted(answer_counts.get(p.id, {}).items(), reverse=True)
                        ],
                    }
                    for p in members
                ],
            }
        )
    return {
        "version": QBJ_VERSION,
        "objects": [
            {
                "type": "Match",
                "tossups_read": len(records),
                "match_teams": match_teams,
                "match_questions": questions,
                "notes": f"Tossup match {match.join_code} ({match.name}), preset {match.preset}",
            }
        ],
    }


def render(match: Match, fmt: str) -> str:
    """The export text: ``cycles`` → JSON Lines (one cycle per line), ``qbj`` → one JSON document.
    Raises ValueError for another format."""
    if fmt == "cycles":
        return _jsonl(cycles(match))
    if fmt == "qbj":
        return json.dumps(qbj(match), indent=2, ensure_ascii=False) + "\n"
    raise ValueError(f"unknown export format {fmt!r}; expected one of {FORMATS}")


def _jsonl(rows: Iterable[dict[str, Any]]) -> str:
    return "".join(json.dumps(r, ensure_ascii=False) + "\n" for r in rows)
