"""Audience-filtered snapshots of a match (docs/PROTOCOL.md "Views")."""

from __future__ import annotations

from typing import Any

from .state import LIVE_PHASES, MatchState


def view(state: MatchState, audience: str) -> dict[str, Any]:
    """The snapshot for ``"moderator"``, ``"player:<id>"`` or ``"all"`` (spectators).

    Answer lines (tossup or bonus part) appear only in the moderator view until that tossup
    ended or that part was ruled; a pending guess and the judge's verdict only for the moderator
    and the player who gave it; race candidates, held bot buzzes and protests only for the moderator.
    Raises ValueError for any other audience string.
    """
    moderator = audience == "moderator"
    viewer: int | None = None
    if audience.startswith("player:"):
        viewer = int(audience.removeprefix("player:"))
    elif audience not in ("moderator", "all"):
        raise ValueError(f"unknown audience {audience!r}")
    st = state
    snapshot: dict[str, Any] = {
        "status": st.status,
        "phase": st.phase,
        "wpm": st.wpm,
        "paused": st.paused,
        "preset": st.config.preset.name,
        "teams": [
            {"id": t.team_id, "name": t.name, "kind": t.kind, "score": st.scores[str(t.team_id)]}
            for t in st.teams
        ],
        "players": [
            {
                "id": p.player_id,
                "team_id": p.team_id,
                "name": p.name,
                "kind": p.kind,
                "weight_class": p.weight_class,
            }
            for p in st.players
        ],
        "tossup": _tossup_view(st, moderator, viewer),
        "bonus": _bonus_view(st, moderator, viewer),
        "tossup_count": len(st.tossups),
        "history": [dict(h) for h in st.history],
    }
    if moderator:
        snapshot["protests"] = [dict(p) for p in st.protests]
    if viewer is not None:
        me = st.player(viewer)
        t = st.tossup
        snapshot["you"] = me and {
            "player_id": me.player_id,
            "team_id": me.team_id,
            "can_buzz": bool(
                st.status == "running"
                and not st.paused
                and st.phase in LIVE_PHASES
                and t is not None
                and me.team_id not in t.locked_teams
                and me.team_id not in {c["team_id"] for c in [*t.candidates, *t.held]}
            ),
        }
    return snapshot


def _tossup_view(st: MatchState, moderator: bool, viewer: int | None) -> dict[str, Any] | None:
    t = st.tossup
    if t is None:
        return None
    spec = st.tossups[t.index]
    out: dict[str, Any] = {
        "index": t.index,
        "question_id": t.question_id,
        "token_count": len(spec.tokens),
        "words_revealed": spec.tokens[: t.revealed],
        "category": spec.category,
        "locked_teams": list(t.locked_teams),
        "buzz": None,
        "dead_deadline": t.dead_deadline,
        "outcome": t.outcome,
    }
    if t.buzz is not None:
        b = t.buzz
        out["buzz"] = {
            k: b[k]
            for k in (
                "player_id",
                "team_id",
                "kind",
                "token_index",
                "answer_deadline",
                "prompts",
                "directed_prompt",
            )
        }
        if moderator or viewer == b["player_id"]:
            out["buzz"].update(guess=b["guess"], verdict=b["verdict"], reason=b["reason"])
    if moderator:
        out["candidates"] = [dict(c) for c in t.candidates]
        out["held"] = [dict(h) for h in t.held]
    if moderator or t.outcome is not None:
        out["answer_line"] = spec.answer_line
        out["power_index"] = spec.power_index
        out["superpower_index"] = spec.superpower_index
    return out


def _bonus_view(st: MatchState, moderator: bool, viewer: int | None) -> dict[str, Any] | None:
    b = st.bonus
    if b is None:
        return None
    spec = next(s for s in st.bonuses if s.bonus_id == b.bonus_id)
    ruled = {r["part"]: r for r in b.results}
    parts = []
    # Players see the parts read so far; the moderator sees the whole bonus.
    for k, part in enumerate(spec.parts[: st.config.preset.bonus_parts]):
        if not moderator and k > b.part:
            break
        entry: dict[str, Any] = {"part": k, "text": part.text, "value": part.value, "result": ruled.get(k)}
        if moderator or k in ruled:
            entry["answer_line"] = part.answer_line
        parts.append(entry)
    out: dict[str, Any] = {
        "bonus_id": b.bonus_id,
        "team_id": b.team_id,
        "leadin": spec.leadin,
        "part": b.part,
        "parts": parts,
        "answer_deadline": b.deadline,
        "points": b.points,
        "pending": None,
    }
    if b.pending is not None and (moderator or viewer == b.pending["player_id"]):
        out["pending"] = dict(b.pending)
    return out
