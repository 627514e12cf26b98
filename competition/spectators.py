"""What spectators see of a tournament's games: its public feed setting, applied field by field.

A tournament's ``public_feed`` holds three booleans, each **private unless set true** (a minors'
event shows nothing personal by default):

- ``player_names``: players' names; private, a human player is "Player N" (N its place in the
  tournament's seat list, the same in every game and table), bots and teams keep their names
  (team names are the schools on the schedule; a bot is no person);
- ``live_scores``: the scores and points of a game being played; private, they are null until the
  game is over (``match_ended``; the ended game's snapshot has them);
- ``individual_stats``: the player tables of the tournament page and standings API.

Every payload a spectator gets (the ``watch`` socket's snapshot and event frames, the tournament
page and ``api_standings`` for visitors without a login) is rebuilt from an **allow-list**: only the
fields named below are copied, so a field added to the engine's view or an event later reaches
spectators only when it is added here; an event type not listed reaches them with empty ``data``.
Matches outside a tournament keep today's feed (:data:`OPEN`): every field of the ``all``
audience. A socket reads its game's setting when it connects (a change applies on reconnect).
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

from competition.game import EventName
from competition.vocabulary import MatchStatus

#: The setting's keys, in the order the page lists them.
FEED_SETTINGS = ("player_names", "live_scores", "individual_stats")


@dataclass(frozen=True)
class FeedPolicy:
    """What spectators may see; ``names`` the spectator's name of each private player (by the
    match's player id), used when ``player_names`` is off."""

    player_names: bool = True
    live_scores: bool = True
    individual_stats: bool = True
    names: Mapping[int, str] = field(default_factory=dict)

    @property
    def open(self) -> bool:
        return self.player_names and self.live_scores and self.individual_stats

    def name_of(self, player_id: Any, real: Any) -> Any:
        """The spectator's name of a player: its own, or its pseudonym."""
        if self.player_names or player_id is None:
            return real
        return self.names.get(player_id, f"Player #{player_id}")


#: Today's feed: matches outside a tournament.
OPEN = FeedPolicy()


def setting(raw: Any) -> dict[str, bool]:
    """A stored ``public_feed`` as the three booleans (anything but ``true`` is private)."""
    raw = raw if isinstance(raw, dict) else {}
    return {k: raw.get(k) is True for k in FEED_SETTINGS}


def pseudonym(n: int) -> str:
    return f"Player {n}"


# --- the allow-lists ------------------------------------------------------------------------
# A schema maps each allowed key to LEAF (copied), SCORE (copied when scores are visible, else
# null), NAME (the spectator's name of the object's ``player_id``), a nested schema (an object)
# or a one-element list holding the schema of its items.

LEAF, SCORE, NAME = "leaf", "score", "name"
Schema = dict[str, Any]


def _keys(*names: str, **marked: Any) -> Schema:
    return {**dict.fromkeys(names, LEAF), **marked}


_PLAYER = _keys("player_id", "team_id", "kind", "weight_class", "buzz_mode", "min_token", name=NAME)
_HISTORY = _keys(
    "answerer_id", "at", "bonus_id", "decision", "fully_read", "guess", "kind", "part", "player_id",
    "question_id", "ruling", "team_id", "token_count", "token_index", "tossup_index", "undone", "verdict",
    points=SCORE,
)  # fmt: skip
SNAPSHOT: Schema = _keys(
    "status", "phase", "wpm", "paused", "between_questions", "next_tossup_at", "preset",
    "bonus_decisions", "tossup_count",
    teams=[_keys("team_id", "name", "kind", score=SCORE)],
    players=[_PLAYER],
    tossup=_keys(
        "answer_line", "category", "index", "locked_teams", "outcome", "power_index", "question_id",
        "superpower_index", "token_count", "words", "words_revealed",
        buzz=_keys("answer_deadline", "answerer_id", "directed_prompt", "kind", "player_id", "prompts",
                   "team_id", "token_index"),
    ),
    bonus=_keys(
        "answer_deadline", "bonus_id", "consulted", "decision", "leadin", "leadin_tokens", "part", "pending",
        "team_id", points=SCORE,
        parts=[_keys("answer_line", "part", "text", "tokens", "value",
                     result=_keys("decision", "guess", "part", "player_id", "ruling", points=SCORE))],
    ),
    history=[_HISTORY],
    match=_keys("match_id", "name", "join_code", "preset"),
    replaced=[_keys("bonus_id", "kind", "question_id", "reason", "spare_id", "tossup_index")],
    players_per_team=LEAF,
    lineups=LEAF,  # {team id: [seat ids]}: ids only, names come from ``players``
    periods=_keys("half", "overtime", "tossups_per_half", "timeouts", "timeouts_per", "timeouts_left",
                  "timeout", "timeout_seconds"),
)  # fmt: skip

E = EventName
EVENTS: dict[str, Schema] = {
    E.PAUSED: _keys("at"),
    E.RESUMED: _keys("shift"),
    E.LINEUP_CHANGED: _keys("first_tossup", "player_in", "player_out", "players", "reason", "team_id"),
    E.TIMEOUT_CALLED: _keys("ends_at", "left", "length", "next_tossup_at", "team_id"),
    E.TIMEOUT_UNDONE: _keys("left", "next_tossup_at", "team_id", "timeout"),
    E.HALFTIME: _keys("half", "timeouts_left", scores=SCORE),
    E.OVERTIME_STARTED: _keys("bonuses", "first_tossup", "tossups", scores=SCORE),
    E.SPEED_CHANGED: _keys("wpm"),
    E.PACE_CHANGED: _keys("between_questions", "next_tossup_at"),
    E.BETWEEN_QUESTIONS: _keys("next_tossup_at"),
    E.RENAMED: _keys("player_id", "team_id", name=NAME),
    E.TEAM_ADDED: _keys("kind", "name", "team_id"),
    E.PLAYER_JOINED: _PLAYER,
    E.MATCH_STARTED: {},
    E.MATCH_ENDED: _keys(scores=SCORE),
    E.TOSSUP_STARTED: _keys("category", "index", "question_id", "token_count"),
    E.TOSSUP_ANSWER: _keys("answer_line", "power_index", "question_id", "superpower_index"),
    E.WORDS: _keys("question_id", "revealed_at", "start", "words"),
    E.BUZZ_RECEIVED: _keys("player_id", "question_id", "token_index", "received_at"),
    E.RACE: _keys("candidates", "decided_at", "eligible", "question_id", "rule", "winner"),
    E.BUZZ_LOST: _keys("margin", "question_id", "reason"),
    E.BUZZ_PROPOSED: _keys("deadline", "player_id", "question_id", "team_id", "token_index"),
    E.PROPOSAL_CLOSED: _keys("by", "outcome", "player_id", "question_id", "team_id"),
    E.MUTED_BUZZ: _keys("player_id", "question_id", "received_at", "team_id", "token_index"),
    E.ANSWER_DELEGATED: _keys("answer_deadline", "answerer_id", "player_id", "question_id"),
    E.BUZZ: _keys(
        "accepted_at", "answer_deadline", "kind", "player_id", "question_id", "received_at", "revealed_at",
        "team", "team_id", "token_count", "token_index", player=NAME,
    ),
    E.TOSSUP_REVEALED: _keys("question_id", "revealed_token_count"),
    E.TOSSUP_ENDED: _keys(
        "answer_line", "outcome", "power_index", "question_id", "superpower_index", "words", scores=SCORE
    ),
    E.ANSWER_GIVEN: _keys("directed_prompt", "guess", "player_id", "question_id", "reason", "verdict"),
    E.AWAITING_RULING: _keys("bonus_id", "part", "player_id", "question_id"),
    E.PROMPT: _keys("answer_deadline", "directed_prompt", "player_id", "question_id"),
    E.BUZZ_RULED: _keys(
        "answerer_id", "at", "fully_read", "guess", "player_id", "question_id", "ruling", "team_id",
        "token_count", "token_index", "tossup_index", "verdict", points=SCORE, scores=SCORE,
    ),
    E.READING_RESUMED: _keys("question_id"),
    E.BONUS_STARTED: _keys("bonus_id", "leadin", "leadin_tokens", "parts", "team_id"),
    E.BONUS_ANSWER_LINES: _keys("bonus_id", "parts"),
    E.BONUS_PART: _keys("answer_deadline", "bonus_id", "part", "text", "tokens", "value"),
    E.BONUS_ANSWER_GIVEN: _keys("bonus_id", "directed_prompt", "guess", "part", "player_id", "reason", "verdict"),
    E.BONUS_DECISION: _keys("bonus_id", "by", "consulted", "decision", "part", "team_id"),
    E.BONUS_PROMPT: _keys("answer_deadline", "bonus_id", "directed_prompt", "part"),
    E.BONUS_PART_RULED: _keys(
        "answer_line", "at", "bonus_id", "decision", "guess", "part", "player_id", "ruling", "team_id",
        "tossup_index", "verdict", points=SCORE, scores=SCORE,
    ),
    E.BONUS_ENDED: _keys("bonus_id", "team_id", points=SCORE, scores=SCORE),
    E.BONUS_WITHDRAWN: _keys("bonus_id", "team_id"),
    E.RULING_CORRECTED: _keys(
        "bonus_id", "history_index", "outcome", "part", "player_id", "question_id", "reason", "ruling",
        "ruling_before", "team_id", "tossup_index", points=SCORE, points_before=SCORE, scores=SCORE,
    ),
    E.RULING_UNDONE: _keys(
        "bonus_id", "history_index", "part", "player_id", "question_id", "reason", "team_id",
        points_reversed=SCORE, scores=SCORE,
    ),
    E.POINTS_ADJUSTED: _keys("protest_id", "reason", "team_id", points=SCORE, scores=SCORE),
    E.PROTEST_MARKED: _keys("at", "protest_id", "question_id", "reason", "resolution", "status", "team_id"),
    E.PROTEST_RESOLVED: _keys(
        "at", "protest_id", "question_id", "reason", "resolution", "status", "team_id", scores=SCORE
    ),
    E.TOSSUP_REPLAYED: _keys("index", "question_id", scores=SCORE),
    E.QUESTION_REPLACED: _keys(
        "bonus_id", "kind", "question_id", "reason", "spare_id", "team_id", "tossup_index", scores=SCORE
    ),
    E.BUZZ_ADDED: _keys(  # not ``by`` (as ``ruling_reviewed``)
        "at", "fully_read", "history_index", "player_id", "question_id", "reason", "ruling", "team_id",
        "token_count", "token_index", "tossup_index", points=SCORE, scores=SCORE,
    ),
    E.RULING_REVIEWED: _keys(  # not ``by``: the organiser's account is not the spectators' business
        "bonus_id", "history_index", "part", "player_before", "player_id", "question_id", "reason", "ruling",
        "ruling_before", "team_before", "team_id", "tossup_index", points=SCORE, points_before=SCORE,
        scores=SCORE,
    ),
}  # fmt: skip


def _copy(value: Any, schema: Any, policy: FeedPolicy, scores: bool) -> Any:
    if isinstance(schema, list):
        return [_copy(v, schema[0], policy, scores) for v in value] if isinstance(value, list) else None
    if isinstance(schema, dict):
        if not isinstance(value, dict):
            return None
        out = {}
        for key, sub in schema.items():
            if key not in value:
                continue
            if sub == SCORE:
                out[key] = value[key] if scores else None
            elif sub == NAME:
                out[key] = policy.name_of(value.get("player_id"), value[key])
            else:
                out[key] = value[key] if sub == LEAF else _copy(value[key], sub, policy, scores)
        return out
    return value


def snapshot_view(view: dict[str, Any], policy: FeedPolicy) -> dict[str, Any]:
    """A spectator's snapshot state: ``view`` (``game.view(state, "all")`` plus ``match``) through
    :data:`SNAPSHOT`; scores null while the game is not over unless ``live_scores``."""
    scores = policy.live_scores or view.get("status") == MatchStatus.ENDED
    return _copy(view, SNAPSHOT, policy, scores)  # type: ignore[no-any-return]


def event_data(event: str, data: dict[str, Any], policy: FeedPolicy, *, over: bool) -> dict[str, Any]:
    """A spectator's ``data`` of an ``event`` frame (``over``: the game has ended; the end itself
    carries its final scores). An event not in :data:`EVENTS` gets ``{}``."""
    scores = policy.live_scores or over or event == EventName.MATCH_ENDED
    return _copy(data, EVENTS.get(event, {}), policy, scores)  # type: ignore[no-any-return]


def stats_rows(
    teams: list[dict[str, Any]], players: list[dict[str, Any]], policy: FeedPolicy, names: Mapping[str, str]
) -> tuple[list[dict[str, Any]], list[dict[str, Any]]]:
    """The tournament tables a spectator may see: team rows as they are (team figures are the
    game results'), player rows only with ``individual_stats``, each ``player`` name through
    ``names`` (real name → pseudonym) unless ``player_names``."""
    if not policy.individual_stats:
        return teams, []
    if policy.player_names:
        return teams, players
    return teams, [{**p, "player": names.get(str(p["player"]), str(p["player"]))} for p in players]


# --- the settings of a tournament and of a match (database reads) -----------------------------


def _pseudonyms(tournament: Any) -> dict[int, str]:
    """``{competitor id: "Player N"}`` of the tournament's human seats (team seed, then seat order)."""
    from competition.models import Player, TournamentSeat

    seats = (
        TournamentSeat.objects.filter(team__tournament=tournament, kind=Player.Kind.HUMAN)
        .order_by("team__seed", "id")
        .values_list("competitor_id", flat=True)
    )
    return {c: pseudonym(n) for n, c in enumerate(seats, 1)}


def tournament_policy(tournament: Any) -> tuple[FeedPolicy, dict[str, str]]:
    """The tournament's policy and ``{real name: pseudonym}`` of its human seats (for tables)."""
    from competition.models import TournamentSeat

    on = setting(tournament.public_feed)
    by_competitor = _pseudonyms(tournament)
    names = {
        name: by_competitor[c]
        for name, c in TournamentSeat.objects.filter(team__tournament=tournament).values_list(
            "name", "competitor_id"
        )
        if c in by_competitor
    }
    return FeedPolicy(**on), names


def match_policy(match_id: int) -> FeedPolicy:
    """The spectators' policy of a match: :data:`OPEN` outside a tournament, else its
    tournament's setting with each seat's spectator name (by the match's player id): a human's
    pseudonym, a bot's own name; a seat not known at connect shows as "Player #id"."""
    from competition.models import Player, TournamentGame

    game = TournamentGame.objects.filter(match_id=match_id).select_related("tournament").first()
    if game is None:
        return OPEN
    on = setting(game.tournament.public_feed)
    if on["player_names"]:
        return FeedPolicy(**on)
    by_competitor = _pseudonyms(game.tournament)
    names: dict[int, str] = {}
    seats = (
        Player.objects.filter(match_id=match_id)
        .order_by("id")
        .values_list("id", "kind", "name", "competitor_id")
    )
    for pid, kind, name, c in seats:
        if kind != Player.Kind.HUMAN:
            names[pid] = name  # a bot keeps its name
        else:
            names[pid] = by_competitor.get(c or -1) or pseudonym(len(by_competitor) + len(names) + 1)
    return FeedPolicy(**on, names=names)
