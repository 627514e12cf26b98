"""One name per concept (pure: standard library only). Every layer — engine, database, websocket
protocol, pages, bots, exports — takes these values from here; ``docs/PROTOCOL.md`` is generated
from them (``python -m buzzer.protocol_doc``).

The members are ``StrEnum``s, so they compare equal to (and serialise as) their plain strings:
``Ruling.CORRECT == "correct"``.
"""

from __future__ import annotations

from enum import StrEnum


class Verdict(StrEnum):
    """A reading of one given answer against the answer line (QUIZBOWL.md "answer lines").

    The judge (``scoring.judge``) suggests ACCEPT, PROMPT, REJECT or NEEDS_MODERATOR (no clause
    decided it); the moderator's ``rule`` command gives ACCEPT, PROMPT, REJECT or NO_PENALTY
    (reject without the neg: e.g. the moderator misread the question)."""

    ACCEPT = "accept"
    PROMPT = "prompt"
    REJECT = "reject"
    NEEDS_MODERATOR = "needs_moderator"
    NO_PENALTY = "no_penalty"


JUDGE_VERDICTS: tuple[Verdict, ...] = (
    Verdict.ACCEPT,
    Verdict.PROMPT,
    Verdict.REJECT,
    Verdict.NEEDS_MODERATOR,
)
MODERATOR_VERDICTS: tuple[Verdict, ...] = (Verdict.ACCEPT, Verdict.PROMPT, Verdict.REJECT, Verdict.NO_PENALTY)


class Ruling(StrEnum):
    """How a buzz or a bonus part was scored: events ``buzz_ruled`` / ``bonus_part_ruled``, the buzz
    log (``Buzz.ruling``), the view's ``history`` and every export. TIMEOUT: no answer in time;
    ABSTAINED: the team's captain abstained on a bonus part (presets with bonus decisions)."""

    CORRECT = "correct"
    WRONG = "wrong"
    NO_PENALTY = "no_penalty"
    TIMEOUT = "timeout"
    ABSTAINED = "abstained"

    @classmethod
    def of(cls, verdict: str) -> Ruling:
        """The ruling a final verdict stands for: accept → correct, reject → wrong, no_penalty →
        no_penalty. ValueError for prompt and needs_moderator, which rule nothing yet."""
        try:
            return _RULING_OF[Verdict(verdict)]
        except (KeyError, ValueError):
            raise ValueError(f"verdict {verdict!r} is not a ruling") from None


_RULING_OF = {
    Verdict.ACCEPT: Ruling.CORRECT,
    Verdict.REJECT: Ruling.WRONG,
    Verdict.NO_PENALTY: Ruling.NO_PENALTY,
}


class TossupOutcome(StrEnum):
    """How a tossup ended (``tossup_ended.outcome``, the view's ``tossup.outcome``)."""

    ANSWERED = "answered"
    DEAD = "dead"
    SKIPPED = "skipped"


class MatchStatus(StrEnum):
    """Where a match is in its life (``Match.status``, the engine's ``MatchState.status``, the
    view's ``status``): seats join in the LOBBY; RUNNING from ``match_started``; ENDED from
    ``match_ended``."""

    LOBBY = "lobby"
    RUNNING = "running"
    ENDED = "ended"


class Phase(StrEnum):
    """The engine's phase of play (``MatchState.phase``, the view's ``phase``): LOBBY → (READING ⇄
    DEAD_TIME ⇄ ANSWERING / RULING) → BONUS / BONUS_RULING → BETWEEN … → ENDED. DEAD_TIME: the
    tossup is fully read and buzzes are still open; RULING / BONUS_RULING: an answer waits for the
    moderator; BETWEEN: a question is over and the next tossup has not started."""

    LOBBY = "lobby"
    READING = "reading"
    DEAD_TIME = "dead_time"
    ANSWERING = "answering"
    RULING = "ruling"
    BONUS = "bonus"
    BONUS_RULING = "bonus_ruling"
    BETWEEN = "between"
    ENDED = "ended"


# Words are read (or buzzes still open after them): a buzz may race.
LIVE_PHASES: tuple[Phase, ...] = (Phase.READING, Phase.DEAD_TIME)
TOSSUP_PHASES: tuple[Phase, ...] = (Phase.READING, Phase.DEAD_TIME, Phase.ANSWERING, Phase.RULING)
BONUS_PHASES: tuple[Phase, ...] = (Phase.BONUS, Phase.BONUS_RULING)


class SeatKind(StrEnum):
    """Who plays a seat, and what a team is made of (``Player.kind``, ``Team.kind``, the engine's
    ``PlayerSpec.kind`` / ``TeamSpec.kind``, the ``buzz`` event's ``kind``): a person or a bot."""

    HUMAN = "human"
    BOT = "bot"


class BuzzLogRuling(StrEnum):
    """A ruling as the buzz log stores it (``Buzz.ruling``, ``BonusPartResult.ruling``): every
    :class:`Ruling`, PENDING (blank) while a buzz waits for its answer or ruling, UNDONE once the
    moderator undid (or a replay reversed) it, THROWN_OUT once its question was replaced by a spare.
    :data:`UNCOUNTED_RULINGS`: the rows that score nothing."""

    CORRECT = "correct"
    WRONG = "wrong"
    NO_PENALTY = "no_penalty"
    TIMEOUT = "timeout"
    ABSTAINED = "abstained"
    PENDING = ""
    UNDONE = "undone"
    THROWN_OUT = "thrown_out"  # its question was thrown out and replaced by a spare


UNCOUNTED_RULINGS: tuple[BuzzLogRuling, ...] = (
    BuzzLogRuling.PENDING,
    BuzzLogRuling.UNDONE,
    BuzzLogRuling.THROWN_OUT,
)


class Role(StrEnum):
    """Who a connection, a request or a log entry speaks for. The websocket paths name the pages
    (``/ws/match/<code>/play|moderate|watch/``): :data:`PATH_ROLES` maps them to a role."""

    PLAYER = "player"  # a human seat or a bot seat
    MODERATOR = "moderator"
    SPECTATOR = "spectator"  # the scoreboard, the projector, anyone watching
    EDITOR = "editor"  # flags questions from the command line or the analyst pages
    ORGANISER = "organiser"  # runs the event: creates matches, corrects names in the admin
    DRIVER = "driver"  # the reading driver: ticks and its own pause/resume (log actor only)


PATH_ROLES: dict[str, Role] = {"play": Role.PLAYER, "moderate": Role.MODERATOR, "watch": Role.SPECTATOR}
CONNECTION_ROLES: tuple[Role, ...] = (Role.PLAYER, Role.MODERATOR, Role.SPECTATOR)
FLAG_ROLES: tuple[Role, ...] = (Role.PLAYER, Role.MODERATOR, Role.EDITOR)


class Audience(StrEnum):
    """Who an event (or a view) is for. ALL and MODERATOR are audiences; PLAYER and TEAM are the
    forms of one seat's (:func:`player_audience`, ``player:<player_id>``) and one team's
    (:func:`team_audience`, ``team:<team_id>``: a team's pending bot buzzes and bonus
    suggestions, which its seats and the moderator receive). A connection receives the audiences
    ``game.event_audiences`` gives it."""

    ALL = "all"
    MODERATOR = "moderator"
    PLAYER = "player:<id>"
    TEAM = "team:<id>"


PLAYER_PREFIX = "player:"
TEAM_PREFIX = "team:"


def player_audience(player_id: int) -> str:
    """``"player:<player_id>"``: the audience of one seat."""
    return f"{PLAYER_PREFIX}{player_id}"


def team_audience(team_id: int) -> str:
    """``"team:<team_id>"``: the audience of one team's seats."""
    return f"{TEAM_PREFIX}{team_id}"


def actor(role: Role, player_id: int | None = None) -> str:
    """The event log's ``actor``: ``player:<id>`` for a seat, else the role's name."""
    return player_audience(player_id) if role is Role.PLAYER and player_id is not None else str(role)


class FlagProblem(StrEnum):
    """Why an expert flags a tossup as ill-posed (ADVSCORE.md §6). ``label``: what pages show."""

    LACKS_FACTUALITY = "lacks_factuality"
    LACKS_SPECIFICITY = "lacks_specificity"
    SUBJECTIVITY = "subjectivity"
    AMBIGUITY = "ambiguity"

    @property
    def label(self) -> str:
        return _FLAG_LABELS[self]


_FLAG_LABELS = {
    FlagProblem.LACKS_FACTUALITY: "Lacks factuality",
    FlagProblem.LACKS_SPECIFICITY: "Lacks specificity / false presupposition",
    FlagProblem.SUBJECTIVITY: "Subjectivity",
    FlagProblem.AMBIGUITY: "Ambiguity / multiple acceptable answers",
}


class BuzzMode(StrEnum):
    """How a bot seat buzzes (HYBRID.md "Hybrid teams"). AUTONOMOUS: its buzz races at once
    (optionally only from its seat's ``min_token``); SEMI_AUTONOMOUS: its buzz waits for a human
    teammate's or the moderator's confirmation within the match's ``confirm_window``; MUTED: it
    plays silently, its would-be buzzes are logged (``muted_buzz``, moderator only) and never race.
    A human seat is always AUTONOMOUS."""

    AUTONOMOUS = "autonomous"
    SEMI_AUTONOMOUS = "semi_autonomous"
    MUTED = "muted"


class BonusDecision(StrEnum):
    """The captain's choice on a bonus part under a preset with ``bonus_decisions`` (QANTA 2026):
    OWN answer, CONSULT the team's AI (its suggestion is the answer; points deflated by the
    preset), ABSTAIN (the preset's ``abstain_points``)."""

    OWN = "own"
    CONSULT = "consult"
    ABSTAIN = "abstain"


class QuestionKind(StrEnum):
    """Which question a spare replaces (``competition.game.ReplaceQuestion.kind``)."""

    TOSSUP = "tossup"
    BONUS = "bonus"
