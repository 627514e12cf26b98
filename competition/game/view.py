"""Audience-filtered snapshots of a match and the client's reducer (docs/PROTOCOL.md "Views").

``view(state, audience)`` is what a (re)connecting client gets; ``apply_event(view, event)`` is
what a connected client does with each event it receives. The two agree: for every audience,
folding a command's visible events into the view before it gives the view after it
(tests/game/test_view_property.py). The JavaScript reducer (``frontend/static/frontend/match.js``
``applyEvent``) mirrors :func:`apply_event`.
"""

from __future__ import annotations

import copy
from dataclasses import dataclass
from typing import Any

from competition.vocabulary import (
    BONUS_PHASES,
    PLAYER_PREFIX,
    Audience,
    MatchStatus,
    Phase,
    Ruling,
    team_audience,
)
from scoring.rules import bonus_points

from .commands import Event
from .events import EventName
from .lineups import lineups_table
from .periods import periods_view
from .records import Candidate
from .specs import text_tokens
from .state import MatchState
from .tokens import tokens_json

AUDIENCES = (Audience.MODERATOR, Audience.ALL, Audience.PLAYER)


def event_audiences(audience: str, team_id: int | None = None) -> frozenset[str]:
    """The event audiences delivered to a connection whose view audience is ``audience``
    (``"moderator"``, ``"all"`` or ``"player:<id>"``; ``team_id``: that player's team).
    Raises ValueError for any other audience string."""
    if audience == Audience.MODERATOR:
        return frozenset({Audience.ALL, Audience.MODERATOR})
    if audience == Audience.ALL:
        return frozenset({Audience.ALL})
    if audience.startswith(PLAYER_PREFIX):
        out = {Audience.ALL, audience}
        if team_id is not None:
            out.add(team_audience(team_id))
        return frozenset(out)
    raise ValueError(f"unknown audience {audience!r}")


def view(state: MatchState, audience: str) -> dict[str, Any]:
    """The snapshot for ``"moderator"``, ``"player:<id>"`` or ``"all"`` (spectators).

    Answer lines and power marks (tossup or bonus part) appear only in the moderator view
    until that tossup ended or that part was ruled; a pending guess and the judge's verdict,
    the buzzes of the open race (``racing``) and protests only in the moderator view. A
    semi-autonomous bot's pending buzzes (``tossup.proposals``) and the team's AI suggestions on
    the open bonus part (``bonus.suggestions``) only to that team's seats and the moderator
    (other seats get empty lists; spectators no key). ``you`` (players only): the viewer's seat,
    None if not seated. Raises ValueError for any other
    audience string.
    """
    moderator = audience == Audience.MODERATOR
    viewer: int | None = None
    if audience.startswith(PLAYER_PREFIX):
        viewer = int(audience.removeprefix(PLAYER_PREFIX))
    elif audience not in (Audience.MODERATOR, Audience.ALL):
        raise ValueError(f"unknown audience {audience!r}")
    st = state
    seat = st.player(viewer) if viewer is not None else None
    # Team-only parts: the moderator sees every team's, a seat its own team's, a spectator none.
    team = Team(moderator or viewer is not None, moderator, seat.team_id if seat else None)
    snapshot: dict[str, Any] = {
        "status": st.status,
        "phase": st.phase,
        "wpm": st.wpm,
        "paused": st.paused,
        # The pace between questions (None: the moderator advances) and, between questions, when
        # the next tossup starts (None: on the moderator's Next).
        "between_questions": st.between_questions,
        "next_tossup_at": st.between_deadline if st.phase == Phase.BETWEEN else None,
        "preset": st.config.preset.name,
        # The captain chooses own answer / consult the AI / abstain on each bonus part.
        "bonus_decisions": st.config.preset.bonus_decisions,
        "teams": [
            {"team_id": t.team_id, "name": t.name, "kind": t.kind, "score": st.scores[str(t.team_id)]}
            for t in st.teams
        ],
        "players": [
            {
                "player_id": p.player_id,
                "team_id": p.team_id,
                "name": p.name,
                "kind": p.kind,
                "weight_class": p.weight_class,
                "buzz_mode": p.buzz_mode,
                "min_token": p.min_token,
            }
            for p in st.players
        ],
        "tossup": _tossup_view(st, moderator, team),
        "bonus": _bonus_view(st, moderator, team),
        "tossup_count": len(st.tossups),
        "history": [h.to_dict() for h in st.history],
        # Who plays (``lineups``: active seat ids per team; the rest of a team's seats are on
        # its bench) and the format's halves, overtime and timeouts (``periods``).
        "players_per_team": st.config.preset.players_per_team,
        "lineups": lineups_table(st),
        "periods": periods_view(st),
        # Questions thrown out and replaced by spares (``MatchState.replaced``).
        "replaced": [dict(r) for r in st.replaced],
    }
    if moderator:
        snapshot["protests"] = [p.to_dict() for p in st.protests]
    if viewer is not None:
        me = st.player(viewer)
        snapshot["you"] = me and {
            "player_id": me.player_id,
            "team_id": me.team_id,
            "name": me.name,
            "kind": me.kind,
        }
    return snapshot


# A question thrown out for a spare, as the view's ``replaced`` lists it (``MatchState.replaced``).
REPLACED_FIELDS = ("kind", "tossup_index", "question_id", "bonus_id", "spare_id", "reason")
RECEIVED_FIELDS = (
    "question_id",
    "player_id",
    "token_index",
    "claimed_token_index",
    "floor_token_index",
    "delay_bound",
    "client_time",
    "corrected_press_at",
    "claimed_press_at",
    "received_at",
)


@dataclass(frozen=True)
class Team:
    """What a viewer sees of the team-only parts (pending semi-autonomous buzzes, AI
    suggestions): ``shown`` the key at all (moderator, seats), ``every`` team's (the moderator),
    else only team ``team_id``'s (None: an unseated viewer, none)."""

    shown: bool
    every: bool
    team_id: int | None

    def sees(self, team_id: int) -> bool:
        return self.every or self.team_id == team_id


def _tossup_view(st: MatchState, moderator: bool, team: Team) -> dict[str, Any] | None:
    t = st.tossup
    if t is None:
        return None
    spec = st.tossups[t.index]
    out: dict[str, Any] = {
        "index": t.index,
        "question_id": t.question_id,
        "token_count": len(spec.tokens),
        "words_revealed": tokens_json(spec.tokens[: t.revealed]),
        "category": spec.category,
        "locked_teams": list(t.locked_teams),
        "buzz": None,
        "outcome": t.outcome,
    }
    if t.buzz is not None:
        b = t.buzz
        out["buzz"] = {
            "player_id": b.player_id,
            "team_id": b.team_id,
            "kind": b.kind,
            "token_index": b.token_index,
            "answer_deadline": b.answer_deadline,
            "prompts": b.prompts,
            "answerer_id": b.answerer_id,
        }
        # Others see a directed prompt once it is given; the moderator also the judge's suggestion.
        given = moderator or st.phase == Phase.ANSWERING
        out["buzz"]["directed_prompt"] = b.directed_prompt if given else None
        if moderator:
            waiting = st.phase == Phase.RULING
            out["buzz"].update(
                guess=b.guess if waiting else None,
                verdict=b.verdict if waiting else None,
                reason=b.reason if waiting else None,
            )
    if team.shown:
        out["proposals"] = [_proposal_entry(p.to_dict()) for p in t.proposals if team.sees(p.team_id)]
    if moderator:
        # Every buzz of the open race (a bot's included while in its reaction delay), as received.
        racing = [_racing_entry(t.question_id, c) for c in [*t.candidates, *t.held]]
        out["racing"] = sorted(racing, key=_racing_order)
    if moderator or t.outcome is not None:
        out["answer_line"] = spec.answer_line
        out["power_index"] = spec.power_index
        out["superpower_index"] = spec.superpower_index
    if t.outcome is not None:
        out["words"] = tokens_json(spec.tokens)
    return out


def _proposal_entry(d: dict[str, Any]) -> dict[str, Any]:
    """A pending semi-autonomous buzz as its ``buzz_proposed`` event published it."""
    return {k: d[k] for k in ("player_id", "team_id", "token_index", "deadline")}


def _racing_entry(question_id: int, c: Candidate) -> dict[str, Any]:
    """A buzz of the open race as its ``buzz_received`` event published it."""
    d = c.to_dict()
    return {"question_id": question_id, **{k: d[k] for k in RECEIVED_FIELDS[1:]}}


def _racing_order(c: dict[str, Any]) -> tuple[float, int]:
    return (c["received_at"], c["player_id"])


def _bonus_view(st: MatchState, moderator: bool, team: Team) -> dict[str, Any] | None:
    b = st.bonus
    if b is None:
        return None
    spec = next(s for s in st.bonuses if s.bonus_id == b.bonus_id)
    ruled = {r.part: r for r in b.results}
    parts = []
    # Players see the parts read so far; the moderator sees the whole bonus.
    for k, part in enumerate(spec.parts[: st.config.preset.bonus_parts]):
        if not moderator and k > b.part:
            break
        entry: dict[str, Any] = {
            "part": k,
            "text": part.text,
            "tokens": tokens_json(text_tokens(part.text)),
            "value": bonus_points(st.config.preset, True, part.value),
            "result": ruled[k].to_dict() if k in ruled else None,
        }
        if moderator or k in ruled:
            entry["answer_line"] = part.answer_line
        parts.append(entry)
    out: dict[str, Any] = {
        "bonus_id": b.bonus_id,
        "team_id": b.team_id,
        "leadin": spec.leadin,
        "leadin_tokens": tokens_json(text_tokens(spec.leadin)),
        "part": b.part,
        "parts": parts,
        "answer_deadline": b.deadline,
        "points": b.points,
        "pending": None,
        "decision": b.decision,
        "consulted": b.consulted,
    }
    if team.shown:
        out["suggestions"] = [s.to_dict() for s in b.suggestions] if team.sees(b.team_id) else []
    if b.pending is not None and moderator:
        # the answer is always to the open part: named, as bonus_answer_given names it
        out["pending"] = {"part": b.part, **b.pending.to_dict()}
    return out


# -- the client's reducer -------------------------------------------------------------------


def apply_event(snapshot: dict[str, Any], event: Event) -> dict[str, Any]:
    """The view after ``event``, computed from the view before it and the event alone (what a
    connected client does; never mutates ``snapshot``). ``snapshot`` is a :func:`view` of the
    audience the event was delivered to (see :func:`event_audiences`): a moderator view is
    recognised by its ``protests``. Events of unknown types change nothing but the scores."""
    v = copy.deepcopy(snapshot)
    d = event.data
    moderator = "protests" in v
    seated = moderator or "you" in v  # sees its team's proposals and suggestions
    t = v["tossup"]
    b = v["bonus"]
    if isinstance(d.get("scores"), dict):
        for team in v["teams"]:
            team["score"] = d["scores"].get(str(team["team_id"]), team["score"])
    match event.event:
        case EventName.TEAM_ADDED:
            v["teams"].append({"team_id": d["team_id"], "name": d["name"], "kind": d["kind"], "score": 0})
            v["lineups"][str(d["team_id"])] = []
            v["periods"]["timeouts_left"][str(d["team_id"])] = v["periods"]["timeouts"]
        case EventName.PLAYER_JOINED:
            seat = {k: d[k] for k in ("team_id", "name", "kind", "weight_class", "buzz_mode", "min_token")}
            v["players"].append({"player_id": d["player_id"], **seat})
            active = v["lineups"][str(d["team_id"])]
            if v["players_per_team"] is None or len(active) < v["players_per_team"]:
                active.append(d["player_id"])  # a seat beyond the limit joins the bench
        case EventName.LINEUP_CHANGED:
            v["lineups"][str(d["team_id"])] = list(d["players"])
        case EventName.TIMEOUT_CALLED:
            v["periods"]["timeouts_left"][str(d["team_id"])] = d["left"]
            v["periods"]["timeout"] = {
                **{k: d[k] for k in ("team_id", "length", "ends_at")},
                "remaining": None,
            }
            v["next_tossup_at"] = d["next_tossup_at"]
        case EventName.TIMEOUT_UNDONE:
            v["periods"]["timeouts_left"][str(d["team_id"])] = d["left"]
            v["periods"]["timeout"] = None if d["timeout"] is None else dict(d["timeout"])
            v["next_tossup_at"] = d["next_tossup_at"]
        case EventName.HALFTIME:
            v["periods"].update(half=d["half"], timeouts_left=dict(d["timeouts_left"]), timeout=None)
        case EventName.OVERTIME_STARTED:
            v["periods"].update(overtime=True, timeout=None)
        case EventName.RENAMED:
            key, rows = ("team_id", v["teams"]) if d["team_id"] is not None else ("player_id", v["players"])
            for row in rows:
                if row[key] == d[key]:
                    row["name"] = d["name"]
            you = v.get("you")
            if you and d["player_id"] == you["player_id"]:
                you["name"] = d["name"]
        case EventName.MATCH_STARTED:
            v["status"] = MatchStatus.RUNNING
        case EventName.TOSSUP_STARTED:
            v["phase"], v["bonus"], v["next_tossup_at"] = Phase.READING, None, None
            v["periods"]["timeout"] = None
            v["tossup"] = {
                "index": d["index"],
                "question_id": d["question_id"],
                "token_count": d["token_count"],
                "words_revealed": [],
                "category": d["category"],
                "locked_teams": [],
                "buzz": None,
                "outcome": None,
            }
            if moderator:
                v["tossup"]["racing"] = []
            if seated:
                v["tossup"]["proposals"] = []
        case EventName.TOSSUP_ANSWER:
            t.update({k: d[k] for k in ("answer_line", "power_index", "superpower_index")})
        case EventName.WORDS:
            t["words_revealed"][d["start"] :] = d["words"]
            if len(t["words_revealed"]) >= t["token_count"]:
                v["phase"] = Phase.DEAD_TIME
        case EventName.BUZZ_RECEIVED:
            t["racing"] = sorted([*t["racing"], {k: d[k] for k in RECEIVED_FIELDS}], key=_racing_order)
        case EventName.RACE:
            t["racing"] = []
        case EventName.BUZZ_PROPOSED:
            t["proposals"].append(_proposal_entry(d))
        case EventName.PROPOSAL_CLOSED:
            t["proposals"] = [p for p in t["proposals"] if p["player_id"] != d["player_id"]]
        case EventName.ANSWER_DELEGATED:
            answerer = None if d["answerer_id"] == d["player_id"] else d["answerer_id"]
            t["buzz"].update(answerer_id=answerer, answer_deadline=d["answer_deadline"], prompts=0)
            t["buzz"]["directed_prompt"] = None
        case EventName.BUZZ:
            t["buzz"] = {
                **{k: d[k] for k in ("player_id", "team_id", "kind", "token_index", "answer_deadline")},
                "prompts": 0,
                "answerer_id": None,
                "directed_prompt": None,
            }
            if moderator:
                t["buzz"].update(guess=None, verdict=None, reason=None)
            if d["team_id"] not in t["locked_teams"]:
                t["locked_teams"].append(d["team_id"])
            v["phase"] = Phase.ANSWERING
        case EventName.ANSWER_GIVEN:
            t["buzz"].update({k: d[k] for k in ("guess", "verdict", "reason", "directed_prompt")})
        case EventName.AWAITING_RULING:
            if "bonus_id" in d:
                v["phase"], b["answer_deadline"] = Phase.BONUS_RULING, None
            else:
                v["phase"], t["buzz"]["answer_deadline"] = Phase.RULING, None
                if not moderator:
                    t["buzz"]["directed_prompt"] = None
        case EventName.PROMPT:
            t["buzz"].update(
                prompts=t["buzz"]["prompts"] + 1,
                directed_prompt=d["directed_prompt"],
                answer_deadline=d["answer_deadline"],
            )
            if moderator:
                t["buzz"].update(guess=None, verdict=None, reason=None)
            v["phase"] = Phase.ANSWERING
        case EventName.BUZZ_RULED:
            keys = ("tossup_index", "question_id", "player_id", "team_id", "guess", "verdict", "ruling")
            entry = {k: d[k] for k in (*keys, "points", "token_index", "token_count", "at")}
            v["history"].append(
                {
                    "kind": "tossup",
                    **entry,
                    "undone": False,
                    "answerer_id": d.get("answerer_id"),
                    "fully_read": d["fully_read"],
                }
            )
            t["buzz"] = None
            v["phase"] = _reading_phase(t)
        case EventName.READING_RESUMED:
            v["phase"] = _reading_phase(t)
        case EventName.TOSSUP_ENDED:
            t.update(
                {k: d[k] for k in ("outcome", "answer_line", "power_index", "superpower_index", "words")}
            )
            t["buzz"] = None
            if moderator:
                t["racing"] = []
            v["phase"] = Phase.BETWEEN
        case EventName.BONUS_STARTED:
            v["next_tossup_at"] = None
            v["bonus"] = {
                "bonus_id": d["bonus_id"],
                "team_id": d["team_id"],
                "leadin": d["leadin"],
                "leadin_tokens": d["leadin_tokens"],
                "part": 0,
                "parts": [],
                "answer_deadline": None,
                "points": 0,
                "pending": None,
                "decision": "",
                "consulted": None,
            }
            if seated:
                v["bonus"]["suggestions"] = []
        case EventName.BONUS_ANSWER_LINES:
            b["parts"] = [{**p, "result": None} for p in d["parts"]]
        case EventName.BONUS_PART:
            b.update(
                part=d["part"],
                answer_deadline=d["answer_deadline"],
                pending=None,
                decision="",
                consulted=None,
            )
            if seated:
                b["suggestions"] = []
            if not moderator:
                part = {
                    "part": d["part"],
                    "text": d["text"],
                    "tokens": d["tokens"],
                    "value": d["value"],
                    "result": None,
                }
                b["parts"] = [*b["parts"][: d["part"]], part]
            v["phase"] = Phase.BONUS
        case EventName.BONUS_ANSWER_GIVEN:
            b["pending"] = {
                k: d[k] for k in ("part", "player_id", "guess", "verdict", "reason", "directed_prompt")
            }
        case EventName.BONUS_SUGGESTION:
            entry = {k: d[k] for k in ("player_id", "part", "guess", "confidence", "explanation")}
            b["suggestions"] = [*(x for x in b["suggestions"] if x["player_id"] != d["player_id"]), entry]
        case EventName.BONUS_DECISION:
            b.update(decision=d["decision"], consulted=d["consulted"])
        case EventName.BONUS_PROMPT:
            b.update(pending=None, answer_deadline=d["answer_deadline"])
            v["phase"] = Phase.BONUS
        case EventName.BONUS_PART_RULED:
            part = b["parts"][d["part"]]
            result = {k: d[k] for k in ("part", "player_id", "guess", "ruling", "points")}
            part["result"] = {**result, "decision": d.get("decision", "")}
            part["answer_line"] = d["answer_line"]
            b.update(points=b["points"] + d["points"], pending=None, answer_deadline=None)
            keys = ("tossup_index", "bonus_id", "team_id", "part", "player_id", "guess", "ruling")
            entry = {k: d[k] for k in (*keys, "verdict", "points", "at")}
            v["history"].append(
                {"kind": "bonus", **entry, "undone": False, "decision": d.get("decision", "")}
            )
        case EventName.BONUS_ENDED:
            b.update(points=d["points"], pending=None, answer_deadline=None)
            v["phase"] = Phase.BETWEEN
        case EventName.PAUSED:
            v["paused"] = True
            running = v["periods"]["timeout"]
            # A running timeout's countdown stops with what it had left (logs older than ``at``: not shown).
            if running is not None and d.get("at") is not None:
                running["remaining"] = max(0.0, running["ends_at"] - d["at"])
        case EventName.RESUMED:
            v["paused"] = False
            running = v["periods"]["timeout"]
            if running is not None:
                running.update(ends_at=running["ends_at"] + d["shift"], remaining=None)
            if t is not None and t["buzz"] is not None and t["buzz"]["answer_deadline"] is not None:
                t["buzz"]["answer_deadline"] += d["shift"]
            if b is not None and b["answer_deadline"] is not None:
                b["answer_deadline"] += d["shift"]
            for p in t["proposals"] if t is not None and "proposals" in t else []:
                p["deadline"] += d["shift"]
            if v["next_tossup_at"] is not None:
                v["next_tossup_at"] += d["shift"]
        case EventName.SPEED_CHANGED:
            v["wpm"] = d["wpm"]
        case EventName.PACE_CHANGED:
            v["between_questions"], v["next_tossup_at"] = d["between_questions"], d["next_tossup_at"]
        case EventName.BETWEEN_QUESTIONS:
            v["phase"], v["next_tossup_at"] = Phase.BETWEEN, d["next_tossup_at"]
        case EventName.BONUS_WITHDRAWN:
            if b is not None and b["bonus_id"] == d["bonus_id"]:
                v["bonus"] = None
        case EventName.RULING_CORRECTED:
            entry = v["history"][d["history_index"]]
            entry.update(ruling=d["ruling"], points=d["points"])
            if d["bonus_id"] is not None and b is not None and b["bonus_id"] == d["bonus_id"]:
                part = b["parts"][d["part"]]
                if part.get("result") is not None:
                    part["result"].update(ruling=d["ruling"], points=d["points"])
                b["points"] += d["points"] - d["points_before"]
            if d["outcome"] is not None and t is not None and t["index"] == d["tossup_index"]:
                t["outcome"] = d["outcome"]
        case EventName.RULING_UNDONE:
            if d.get("history_index") is not None:
                entry = v["history"][d["history_index"]]
                entry["undone"] = True
                # A wrong (or timed-out, no-penalty) buzz undone on the live tossup: that team may buzz again.
                live = t is not None and t["outcome"] is None and t["index"] == entry["tossup_index"]
                if entry["kind"] == "tossup" and entry["ruling"] != Ruling.CORRECT and live:
                    t["locked_teams"] = [x for x in t["locked_teams"] if x != entry["team_id"]]
                # The correct buzz whose bonus is being read: the bonus goes with it (engine's undo).
                earned = (
                    t is not None
                    and t["index"] == entry["tossup_index"]
                    and entry["ruling"] == Ruling.CORRECT
                )
                if entry["kind"] == "tossup" and earned and b is not None and v["phase"] in BONUS_PHASES:
                    v["bonus"], v["phase"] = None, Phase.BETWEEN
        case EventName.QUESTION_REPLACED:
            v["replaced"].append({k: d[k] for k in REPLACED_FIELDS})
            if d["kind"] == "tossup":  # the spare is read next: one tossup more
                v["tossup_count"] += 1
        case EventName.RULING_REVIEWED:
            entry = v["history"][d["history_index"]]
            if entry["kind"] == "tossup" and d["player_id"] != entry["player_id"]:
                entry["answerer_id"] = None
            entry.update(
                ruling=d["ruling"], points=d["points"], player_id=d["player_id"], team_id=d["team_id"]
            )
            if d["bonus_id"] is not None and b is not None and b["bonus_id"] == d["bonus_id"]:
                part = b["parts"][d["part"]]
                if part.get("result") is not None:
                    part["result"].update(ruling=d["ruling"], points=d["points"])
                b["points"] += d["points"] - d["points_before"]
        case EventName.BUZZ_ADDED:  # a missed buzz added by review: a tossup already played
            added = ("tossup_index", "question_id", "player_id", "team_id", "ruling", "points")
            entry = {k: d[k] for k in (*added, "token_index", "token_count", "at")}
            v["history"].append(
                {
                    "kind": "tossup",
                    **entry,
                    "guess": "",
                    "verdict": "",
                    "undone": False,
                    "answerer_id": None,
                    "fully_read": d["fully_read"],
                }
            )
        case EventName.PROTEST_MARKED:
            if moderator:
                v["protests"].append(dict(d))
        case EventName.PROTEST_RESOLVED:
            if moderator:
                resolved = {k: val for k, val in d.items() if k != "scores"}
                v["protests"] = [resolved if p["protest_id"] == d["protest_id"] else p for p in v["protests"]]
        case EventName.MATCH_ENDED:
            v["status"], v["phase"], v["paused"], v["next_tossup_at"] = (
                MatchStatus.ENDED,
                Phase.ENDED,
                False,
                None,
            )
            if t is not None and t["buzz"] is not None:  # a buzz cut off by the end: nothing pending
                t["buzz"].update({"guess": None, "verdict": None, "reason": None} if moderator else {})
                if not moderator:
                    t["buzz"]["directed_prompt"] = None
    return v


def _reading_phase(t: dict[str, Any]) -> Phase:
    """After a ruling the tossup goes on: read on, or wait out the dead time if fully read."""
    return Phase.DEAD_TIME if len(t["words_revealed"]) >= t["token_count"] else Phase.READING
