"""The public match recap (``/match/<code>/recap/``): the standings, then every tossup read, in
play order, with its text, a mark where each buzz came, its answer line, the buzzes as ruled (and
corrected, or undone) and the parts of its bonus that were read.

Built on ``competition.exports.play_log``. Answers never reach anyone before their reveal: a
tossup's text and answer line are shown only once it ended (its ``tossup_ended``: the same words
and answer line went to every tablet then), and a bonus part only once it was ruled (its answer
line is in that ruling). The tossup being read, the part being read and everything not yet read
are left out, for a match in progress and for one ended in the middle of a question alike. A
tournament game's recap is for organisers unless its public feed shows names, individual stats
and (while it is played) live scores."""

from __future__ import annotations

import re
from typing import Any

from django.http import HttpRequest, HttpResponse, HttpResponseForbidden
from django.shortcuts import get_object_or_404, render
from django.utils.html import escape
from django.utils.safestring import SafeString, mark_safe

from competition import game, spectators
from competition.exports import play_log
from competition.models import Match
from competition.roles import is_organiser
from competition.vocabulary import Ruling

#: A ruling as the recap says it.
RULING_WORDS = {
    "correct": "accepted",
    "wrong": "rejected",
    "no_penalty": "no penalty",
    "timeout": "timed out",
    "abstained": "abstained",
}
# Answer lines mark the required part with <b><u>…</u></b>: only these inline tags survive escaping.
_KEPT_TAG = re.compile(r"&lt;(/?)(b|u|i|em|strong)&gt;", re.IGNORECASE)


def recap(request: HttpRequest, code: str) -> HttpResponse:
    """The recap page of the match with join code ``code`` (any status); 404 for an unknown code."""
    match = get_object_or_404(Match, join_code=code.strip().upper())
    if not is_organiser(request.user):  # a spectator: the tournament's public feed decides
        feed = spectators.match_policy(match.id)
        if not (
            feed.player_names
            and feed.individual_stats
            and (feed.live_scores or match.status == Match.Status.ENDED)
        ):
            return HttpResponseForbidden(
                "This tournament keeps its players private: the recap is for organisers."
            )
    return render(request, "frontend/recap.html", recap_context(match))


def answer_html(line: str) -> SafeString:
    """An answer line as HTML: escaped, its bold/underline/italic tags kept."""
    return mark_safe(_KEPT_TAG.sub(r"<\1\2>", escape(line)))


def points_text(points: int) -> str:
    """Points as the recap prints them: a neg with a real minus sign (``−5``)."""
    return f"\u2212{-points}" if points < 0 else str(points)


def ruling_text(entry: dict[str, Any], replayed: bool = False) -> str:
    """What became of one ruling (a play-log response or bonus part), e.g. ``"rejected, then
    accepted by the moderator: <reason>"``, ``"accepted, then undone"``."""
    if entry["ruling"] is None:
        return "not ruled"
    fixed = entry.get("corrected")
    said = RULING_WORDS.get(entry["ruling"], entry["ruling"])
    if fixed:
        before = RULING_WORDS.get(fixed["ruling"], fixed["ruling"])
        said = f"{before}, then {said} by the moderator: {fixed['reason']}"
    if replayed:  # the replay undid every ruling of the reading (one ruling_undone each)
        said += ", reversed when the tossup was replayed"
    elif entry["undone"]:
        said += ", then undone"
    return said


def recap_context(match: Match) -> dict[str, Any]:
    """The template's context: ``match``, ``ended`` (bool), ``standings`` (one row per team, best
    first: ``rank``, ``tied``, ``name``, ``kind``, ``score``), ``players`` (``name``, ``team``,
    ``correct``, ``negs``, ``points`` of the tossup rulings that stand), ``tossups`` (see
    ``_tossup``: only tossups whose answer was revealed, and replayed readings) and
    ``unread_note`` (why the tossup being read is not shown, or "")."""
    log = play_log(match)
    spec_tossups = {t["question_id"]: t for t in match.spec.get("tossups", [])}
    spec_bonuses = {b["bonus_id"]: b for b in match.spec.get("bonuses", [])}
    players = {p.id: p for p in match.players.select_related("team")}
    teams = dict(match.teams.values_list("id", "name"))
    tossups = [
        _tossup(c, spec_tossups.get(c["question_id"], {}), spec_bonuses, players, teams)
        for c in log
        if _revealed(c) or c["replayed"]
    ]
    reading = bool(log) and not _revealed(log[-1]) and not log[-1]["replayed"]
    return {
        "match": match,
        "ended": match.status == Match.Status.ENDED,
        "standings": _standings(match),
        "players": _player_lines(log, players),
        "tossups": tossups,
        "unread_note": _unread_note(match, reading),
    }


def _revealed(cycle: dict[str, Any]) -> bool:
    """Did this reading end with the answer shown (``tossup_ended``)? A reading cut short by a
    replay has outcome ``replayed`` and revealed nothing."""
    return cycle["tossup"]["outcome"] not in (None, "replayed")


def _unread_note(match: Match, reading: bool) -> str:
    """Why the reading in progress (``reading``) is missing from the page, or ""."""
    if not reading:
        return ""
    if match.status == Match.Status.ENDED:
        return "The match ended during a tossup; that tossup is not shown."
    return "The tossup being read now is shown here once it ends."


def _standings(match: Match) -> list[dict[str, Any]]:
    """Teams by score (the live scores: tossups, bonuses and adjustments), ties sharing a rank."""
    scores = match.state.get("scores", {})
    rows = sorted(
        ({"name": t.name, "kind": t.kind, "score": int(scores.get(str(t.id), 0))} for t in match.teams.all()),
        key=lambda r: (-r["score"], r["name"]),
    )
    for row in rows:
        row["rank"] = next(k for k, r in enumerate(rows, 1) if r["score"] == row["score"])
        row["tied"] = sum(r["score"] == row["score"] for r in rows) > 1
        row["points"] = points_text(row["score"])
    return rows


def _player_lines(log: list[dict[str, Any]], players: dict[int, Any]) -> list[dict[str, Any]]:
    """Each seat's tossup figures over the rulings that stand (undone and replayed ones left out),
    best first; seats that never buzzed are listed with zeros."""
    lines = {
        pid: {"name": p.name, "team": p.team.name if p.team else "", "correct": 0, "negs": 0, "points": 0}
        for pid, p in players.items()
    }
    for c in log:
        if c["replayed"]:
            continue
        for r in c["tossup"]["responses"]:
            if r["ruling"] is None or r["undone"] or r["playerId"] not in lines:
                continue
            line = lines[r["playerId"]]
            line["points"] += r["points"]
            line["correct"] += r["ruling"] == Ruling.CORRECT
            line["negs"] += r["points"] < 0
    rows = sorted(lines.values(), key=lambda r: (-r["points"], r["name"]))
    for row in rows:
        row["points_text"] = points_text(row["points"])
    return rows


def _tossup(
    cycle: dict[str, Any],
    spec: dict[str, Any],
    bonuses: dict[int, dict[str, Any]],
    players: dict[int, Any],
    teams: dict[int, str],
) -> dict[str, Any]:
    """One reading of a tossup: ``number`` (its place in the packet, from 1), ``category``,
    ``outcome`` (answered|dead|skipped|replayed, or e.g. "dead, then replayed"; a tossup thrown
    out for a spare says so with the reason), ``replayed``,
    ``revealed`` (this reading ended with the answer shown, so its text and answer may be shown;
    a reading cut short by a replay did not), ``words`` (``_words``; empty when not revealed),
    ``answer`` (HTML, or ""), ``buzzes`` (``_buzz``), ``bonus`` (``_bonus`` or None) and
    ``adjustments`` (``team`` name, ``points`` text, ``reason``). ``teams``: names by id."""
    replayed, revealed = cycle["replayed"], _revealed(cycle)
    outcome = cycle["tossup"]["outcome"] or ""
    if replayed and outcome != "replayed":  # replayed after it ended: its rulings were reversed
        outcome += ", then replayed"
    thrown_out = cycle.get("thrown_out")
    if thrown_out:  # its rulings were reversed (one ruling_undone each): they show as undone
        outcome += f", thrown out ({thrown_out['reason']}): a spare was read in its place"
    buzzes = [_buzz(n, r, replayed) for n, r in enumerate(cycle["tossup"]["responses"], 1)]
    return {
        "number": cycle["index"] + 1,
        "category": spec.get("category", ""),
        "outcome": outcome,
        "replayed": replayed,
        "revealed": revealed,
        "words": _words(spec, buzzes) if revealed else [],
        "answer": answer_html(cycle["tossup"]["answerline"]) if revealed else "",
        "buzzes": buzzes,
        "bonus": _bonus(cycle["bonus"], bonuses, players) if cycle["bonus"] and not replayed else None,
        "adjustments": [
            {
                "team": teams.get(a["team_id"], ""),
                "points": f"+{a['points']}" if a["points"] > 0 else points_text(a["points"]),
                "reason": a["reason"],
            }
            for a in cycle["adjustments"]
        ],
    }


def _words(spec: dict[str, Any], buzzes: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """The tossup's tokens, each ``{"text": str | "media": dict (image, audio or delay), "power":
    bool (the power mark follows), "marks": [the buzzes (``_buzz``) that came on this token]}``.
    A buzz's mark follows the word it came on (``word`` - 1: its 0-based token index), as on the
    tablets; one counted past the last token follows the last."""
    tokens = spec.get("tokens", [])
    power = spec.get("power_index")
    out: list[dict[str, Any]] = []
    for i, token in enumerate(tokens):
        entry: dict[str, Any] = {"power": power is not None and i == power - 1, "marks": []}
        entry["text" if isinstance(token, str) else "media"] = token
        out.append(entry)
    for b in buzzes:
        if out:
            out[min(b["word"] - 1, len(out) - 1)]["marks"].append(b)
    return out


def _tokens(text: str) -> list[dict[str, Any]]:
    """A bonus lead-in's or part's stored text as ``[{"text": str} | {"media": dict}]``
    (``game.text_tokens``: words, and image, audio or delay tokens)."""
    return [{"text": t} if isinstance(t, str) else {"media": t.to_dict()} for t in game.text_tokens(text)]


def _buzz(number: int, r: dict[str, Any], replayed: bool) -> dict[str, Any]:
    """One buzz: ``number``, ``player``, ``team``, ``is_bot``, ``word`` (1-based), ``guess``,
    ``ruling`` (words), ``points`` (text), ``standing`` (false when undone or replayed),
    ``correct`` (the ruling that stands is correct), ``corrected``."""
    standing = not (r["undone"] or replayed)
    return {
        "number": number,
        "player": r["playerName"],
        "team": r["teamName"],
        "is_bot": r["isBot"],
        "word": r["position"] + 1,
        "guess": r["guess"],
        "ruling": ruling_text(r, replayed),
        "points": points_text(r["points"] if standing else 0),
        "standing": standing,
        "correct": bool(r["isCorrect"]) and standing,
        "corrected": bool(r.get("corrected")),
    }


def _bonus(
    bonus: dict[str, Any], specs: dict[int, dict[str, Any]], players: dict[int, Any]
) -> dict[str, Any] | None:
    """The bonus a correct buzz earned, with only the parts that were ruled (a part being read or
    never read is left out): ``team``, ``leadin`` (tokens), ``points`` (text, of the parts that
    stand) and ``parts`` (``number`` from 1, ``text`` (tokens), ``answer`` HTML, ``guess``, ``by``,
    ``ruling`` words, ``points`` text, ``standing``). Tokens are ``{"text": str | "media": dict}``
    as a tossup's (:func:`_tokens`: a bonus's images show as images; its media were revealed when
    its part was read). None when no part was ruled yet."""
    if not bonus["parts"]:
        return None
    spec = specs.get(bonus["bonus_id"], {})
    texts = [p.get("text", "") for p in spec.get("parts", [])]
    parts = []
    total = 0
    for p in bonus["parts"]:
        standing = not p["undone"]
        total += p["points"] if standing else 0
        who = players.get(p["playerId"]) if p["playerId"] is not None else None
        parts.append(
            {
                "number": p["part"] + 1,
                "text": _tokens(texts[p["part"]] if p["part"] < len(texts) else ""),
                "answer": answer_html(p["answerline"]),
                "guess": p["guess"],
                "by": who.name if who is not None else "",
                "ruling": ruling_text(p),
                "points": points_text(p["points"] if standing else 0),
                "standing": standing,
                "correct": bool(p["isCorrect"]) and standing,
            }
        )
    return {
        "team": bonus["teamName"],
        "leadin": _tokens(spec.get("leadin", "")),
        "points": points_text(total),
        "parts": parts,
    }
