"""Commands the engine accepts, the events it emits and the refusal exception."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from competition.errors import RULE_CODES, TossupError
from competition.vocabulary import BuzzMode, SeatKind

from .specs import BonusSpec, TossupSpec


class RuleViolation(TossupError):
    """A command the rules refuse; nothing changed. ``code`` is one of ``competition.errors.RULE_CODES``
    (e.g. "not_live", "locked_out", "team_already_buzzed", "wrong_question"); ``message`` says why
    for people (defaults to the code's description)."""

    def __init__(self, code: str, message: str = "", extra: dict[str, Any] | None = None) -> None:
        super().__init__(code, message or RULE_CODES.get(code, ""), extra)


@dataclass(frozen=True)
class Event:
    """One log entry: ``event`` (its name) and ``data`` as in docs/PROTOCOL.md; ``audience`` is
    "all", "moderator", "player:<id>" or "team:<id>" (``competition.vocabulary.Audience``)."""

    event: str
    data: dict[str, Any] = field(default_factory=dict)
    audience: str = "all"

    def to_dict(self) -> dict[str, Any]:
        """``{"event", "data", "audience"}``."""
        return {"event": self.event, "data": self.data, "audience": self.audience}


@dataclass(frozen=True)
class SeatPlayer:
    """Lobby: seat a player on team ``team_id`` (the service created the seat and chose its id;
    its token never reaches the engine). ``kind``: human|bot; ``weight_class``, ``buzz_mode`` and
    ``min_token`` for bots (see ``specs.PlayerSpec``)."""

    player_id: int
    team_id: int
    name: str
    kind: str = SeatKind.HUMAN
    weight_class: str = ""
    buzz_mode: str = BuzzMode.AUTONOMOUS
    min_token: int = 0


@dataclass(frozen=True)
class AddTeam:
    """Organiser: a new team of bots, in the lobby or while the match runs, with score 0 (the
    service created its row and chose its id); its bots join with :class:`SeatPlayer`."""

    team_id: int
    name: str


@dataclass(frozen=True)
class Rename:
    """An organiser corrects the name of team ``team_id`` or of seat ``player_id`` (exactly one
    of them), at any time: names live in the match spec, so this is the one way to change them."""

    name: str
    team_id: int | None = None
    player_id: int | None = None


@dataclass(frozen=True)
class Start:
    """Moderator: leave the lobby and start tossup 0."""


@dataclass(frozen=True)
class Tick:
    """Driver: apply every deadline due at ``now`` (see ``MatchState.next_deadline``)."""


# Largest one-way delay (seconds) a connection may be credited with: the most a buzz's token
# index and press time can be moved back from what the server had revealed at its arrival.
MAX_DELAY_BOUND = 0.3


@dataclass(frozen=True)
class Buzz:
    """A player's buzz. ``token_index``: the client's claim of the last 0-based token it had
    shown; ``corrected_press_at``: its press time on the server clock, corrected for the measured
    clock offset (used to break token-index ties); ``delay_bound``: the connection's measured
    one-way delay bound in seconds (capped at ``MAX_DELAY_BOUND``); ``cost``: what producing the
    guess behind the buzz cost, USD, as the bot declares it (None: not declared).

    The engine decides both (docs/PROTOCOL.md "The server decides the race"): the token index is
    the claim clamped to [floor, revealed − 1], floor being the last token revealed at or before
    ``now − delay_bound``; the press time is clamped to [now − delay_bound, now]."""

    player_id: int
    question_id: int
    token_index: int
    client_time: float | None = None
    corrected_press_at: float | None = None
    delay_bound: float = 0.0
    cost: float | None = None


@dataclass(frozen=True)
class ConfirmBuzz:
    """Confirm (``confirm`` True) or decline the pending buzz of semi-autonomous bot seat
    ``bot_id``. ``player_id``: the confirming human teammate; None: the moderator. A confirmed
    buzz joins the race as a press at the confirmation (the last token revealed then)."""

    bot_id: int
    confirm: bool = True
    player_id: int | None = None


@dataclass(frozen=True)
class Delegate:
    """Moderator: the tossup buzz waiting for its answer is answered by bot seat ``bot_id`` of
    the buzzer's team (None: revert to the buzzer). The answer window starts again."""

    bot_id: int | None = None


@dataclass(frozen=True)
class BonusSuggestion:
    """A bot seat of the controlling team suggests its answer to the open bonus part, for its
    team's captain (presets with ``bonus_decisions``): ``guess``, ``confidence`` in [0, 1] and a
    short ``explanation``. Only that team and the moderator see it."""

    player_id: int
    bonus_id: int
    part: int
    guess: str
    confidence: float
    explanation: str = ""


@dataclass(frozen=True)
class DecideBonus:
    """The captain's (``player_id``; None: the moderator) ``decision`` on the open bonus part:
    own|consult|abstain (``competition.vocabulary.BonusDecision``). ``consult`` answers with the
    suggestion of bot seat ``bot_id`` (None: the first suggestion given); ``verdict``,
    ``reason``, ``directed_prompt``: the judge's reading of that suggestion (the caller judges)."""

    bonus_id: int
    part: int
    decision: str
    player_id: int | None = None
    bot_id: int | None = None
    verdict: str = ""
    reason: str = ""
    directed_prompt: str | None = None


@dataclass(frozen=True)
class Answer:
    """The buzzer's answer (also the reply to a prompt). ``verdict`` (one of
    ``competition.vocabulary.JUDGE_VERDICTS``) is the caller's judge suggestion; ``directed_prompt``
    its prompt text."""

    player_id: int
    question_id: int
    text: str
    verdict: str
    reason: str = ""
    directed_prompt: str | None = None


@dataclass(frozen=True)
class BonusAnswer:
    """An answer to bonus part ``part`` (0-based) by a player of the controlling team;
    ``directed_prompt`` is the judge's text for a ``prompt`` verdict."""

    player_id: int
    bonus_id: int
    part: int
    text: str
    verdict: str
    reason: str = ""
    directed_prompt: str | None = None


@dataclass(frozen=True)
class Rule:
    """Moderator's verdict on the pending tossup buzz or bonus part: one of
    ``competition.vocabulary.MODERATOR_VERDICTS`` (accept|prompt|reject|no_penalty)."""

    verdict: str
    directed_prompt: str | None = None


@dataclass(frozen=True)
class Pause:
    """Stop the clock (all deadlines shift by the paused duration on Resume)."""


@dataclass(frozen=True)
class Resume:
    """Restart the clock after Pause."""


@dataclass(frozen=True)
class SetSpeed:
    """Change the reading speed (words per minute), keeping the reading position."""

    wpm: float


@dataclass(frozen=True)
class Skip:
    """End the current tossup as "skipped" (no points for the pending buzz), or the current bonus."""


@dataclass(frozen=True)
class Undo:
    """Reverse the last ruling that is not already undone (its points; see engine docs)."""


@dataclass(frozen=True)
class Adjust:
    """Add ``points`` (may be negative, or 0) to a team's score, with a reason (protests,
    corrections). ``protest_id``: the open protest this adjustment resolves."""

    team_id: int
    points: int
    reason: str = ""
    protest_id: int | None = None


@dataclass(frozen=True)
class ReplayTossup:
    """Re-read the current (or just finished) tossup from its first word: every ruling on it and
    on the bonus it earned is reversed (one ``ruling_undone`` each); adjustments are kept."""


@dataclass(frozen=True)
class Protest:
    """Mark a protest for later resolution (by an ``Adjust`` with its ``protest_id``).
    ``team_id``: the protesting team (None: the moderator's own note); ``question_id``: the
    tossup protested (None: the current or last one)."""

    reason: str
    team_id: int | None = None
    question_id: int | None = None


@dataclass(frozen=True)
class Reveal:
    """End the tossup being read now, unanswered (``dead``), and show its answer line."""


@dataclass(frozen=True)
class Next:
    """Moderator: start the next tossup now (between questions). ``after_index``: the 0-based
    tossup the moderator saw ending; when the match has already gone past it (the pace started the
    next one meanwhile), Next changes nothing instead of being refused, so a click never races
    the clock."""

    after_index: int | None = None


@dataclass(frozen=True)
class SetPace:
    """How the match goes on between questions: the next tossup starts ``between_questions``
    seconds after one ends (bonus included), or, with None, when the moderator presses Next."""

    between_questions: float | None = None


@dataclass(frozen=True)
class CorrectRuling:
    """Moderator: change a ruling after the fact, as one ``ruling_corrected`` event with the
    ``reason``. ``history_index``: the position in ``MatchState.history`` of the newest tossup
    ruling not undone, or of a part of the bonus it earned; ``ruling``: correct|wrong|no_penalty
    for a tossup buzz, correct|wrong for a bonus part. See ``corrections.correct_ruling``."""

    history_index: int
    ruling: str
    reason: str


@dataclass(frozen=True)
class End:
    """End the match immediately."""


@dataclass(frozen=True)
class Substitute:
    """Moderator: change team ``team_id``'s lineup: ``player_in`` (a bench seat of that team)
    comes in, ``player_out`` (an active one) goes out; either may be None (a seat only joins, up
    to the preset's ``players_per_team``, or only leaves). Only in the lobby and at the breaks
    the preset's ``substitutions`` allow (``lineups.substitute``)."""

    team_id: int
    player_in: int | None = None
    player_out: int | None = None


@dataclass(frozen=True)
class CallTimeout:
    """Moderator: team ``team_id`` calls a timeout, between questions only, within the preset's
    ``timeouts`` per ``timeouts_per``; it lasts ``timeout_seconds`` (``periods.call_timeout``)."""

    team_id: int


@dataclass(frozen=True)
class UndoTimeout:
    """Moderator: take back the newest timeout of this break (a mis-click): its team gets it back
    and the next tossup is due when it was before the timeout; allowed until that tossup starts,
    paused included (``periods.undo_timeout``)."""


# -- spares (competition.game.spares) and the full-scoresheet review (competition.game.review) --


@dataclass(frozen=True)
class ReplaceQuestion:
    """Moderator: throw out the current (or just finished) tossup, or the current (or just
    finished) bonus (``kind`` tossup|bonus), for ``reason``, and read ``spare`` in its place: a
    :class:`TossupSpec` or :class:`BonusSpec` the match has not used (the service takes the next
    of the match's spares; None: none is left, refused ``no_spares``). See ``spares.replace_question``."""

    kind: str
    reason: str
    spare: TossupSpec | BonusSpec | None = None


@dataclass(frozen=True)
class ReviewRuling:
    """Moderator or control desk (``by``: who, as the log names them): correct ANY earlier ruling
    in ``MatchState.history`` at ``history_index``, for ``reason``: its ``ruling`` ("" keeps it;
    correct|wrong|no_penalty for a tossup buzz, correct|wrong for a bonus part) and, for a tossup
    buzz, the seat credited with it (``player_id``; None keeps it). See ``review.review_ruling``."""

    history_index: int
    reason: str
    ruling: str = ""
    player_id: int | None = None
    by: str = ""


@dataclass(frozen=True)
class AddBuzz:
    """Moderator or control desk (``by``: who, as the log names them): add to the scoresheet a
    buzz that was missed on a tossup already played (``tossup_index``, 0-based, as in
    ``MatchState.history``), for ``reason``: seat ``player_id`` buzzed at 0-based word
    ``token_index`` (None: after the question ended) and was ruled ``ruling``
    (correct|wrong|no_penalty). See ``review.add_buzz``."""

    tossup_index: int
    player_id: int
    ruling: str
    reason: str
    token_index: int | None = None
    by: str = ""


Command = (
    SeatPlayer
    | AddTeam
    | Rename
    | Start
    | Tick
    | Buzz
    | ConfirmBuzz
    | Delegate
    | Answer
    | BonusAnswer
    | BonusSuggestion
    | DecideBonus
    | Rule
    | Pause
    | Resume
    | SetSpeed
    | Skip
    | Undo
    | Adjust
    | ReplayTossup
    | Protest
    | Reveal
    | Next
    | SetPace
    | CorrectRuling
    | End
    | Substitute
    | CallTimeout
    | UndoTimeout
    | ReplaceQuestion
    | ReviewRuling
    | AddBuzz
)
