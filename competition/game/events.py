"""Typed payloads of the events the engine emits (docs/PROTOCOL.md "Events").

Each class is one ``event`` (its name: ``EVENT``) for one default audience (``AUDIENCE``: "all",
"moderator" or "player:<id>"); ``.event()`` turns it into the :class:`~.commands.Event` stored in
the log and sent on the wire, its ``data`` being the fields in order. Times are seconds since the
epoch, ``token_index`` is 0-based, ``scores`` is ``{str(team_id): points}`` after the event.
"""

from __future__ import annotations

from dataclasses import dataclass
from enum import StrEnum
from typing import Any, ClassVar

from competition.vocabulary import Audience

from .commands import Event
from .records import Record


class EventName(StrEnum):
    """Every ``event`` name of the match log, one member each: the payload classes below take
    their ``EVENT`` from here; the names built elsewhere say where. Compare an event's name with
    these members, never with a string literal (``tests/game/test_vocabulary_used.py``)."""

    PAUSED = "paused"
    RESUMED = "resumed"
    SPEED_CHANGED = "speed_changed"
    PACE_CHANGED = "pace_changed"
    BETWEEN_QUESTIONS = "between_questions"
    RENAMED = "renamed"
    TEAM_ADDED = "team_added"
    PLAYER_JOINED = "player_joined"
    MATCH_STARTED = "match_started"
    MATCH_ENDED = "match_ended"
    TOSSUP_STARTED = "tossup_started"
    TOSSUP_ANSWER = "tossup_answer"
    WORDS = "words"
    BUZZ_RECEIVED = "buzz_received"
    RACE = "race"
    BUZZ_LOST = "buzz_lost"
    BUZZ_PROPOSED = "buzz_proposed"
    PROPOSAL_CLOSED = "proposal_closed"
    MUTED_BUZZ = "muted_buzz"
    ANSWER_DELEGATED = "answer_delegated"
    BUZZ = "buzz"
    TOSSUP_REVEALED = "tossup_revealed"
    TOSSUP_ENDED = "tossup_ended"
    ANSWER_GIVEN = "answer_given"
    AWAITING_RULING = "awaiting_ruling"
    PROMPT = "prompt"
    BUZZ_RULED = "buzz_ruled"
    READING_RESUMED = "reading_resumed"
    BONUS_STARTED = "bonus_started"
    BONUS_ANSWER_LINES = "bonus_answer_lines"
    BONUS_PART = "bonus_part"
    BONUS_ANSWER_GIVEN = "bonus_answer_given"
    BONUS_SUGGESTION = "bonus_suggestion"
    BONUS_DECISION = "bonus_decision"
    BONUS_PROMPT = "bonus_prompt"
    BONUS_PART_RULED = "bonus_part_ruled"
    BONUS_ENDED = "bonus_ended"
    BONUS_WITHDRAWN = "bonus_withdrawn"
    RULING_CORRECTED = "ruling_corrected"
    RULING_UNDONE = "ruling_undone"  # built in ``corrections`` from a history entry (``undone_data``)
    POINTS_ADJUSTED = "points_adjusted"
    PROTEST_MARKED = "protest_marked"  # built in ``corrections`` from a protest record
    PROTEST_RESOLVED = "protest_resolved"  # built in ``corrections`` from a protest record
    TOSSUP_REPLAYED = "tossup_replayed"
    QUESTION_FLAGGED = (
        "question_flagged"  # an expert flag, logged by ``services.flag_question`` for the moderator
    )
    MATCH_IMPORTED = (
        "match_imported"  # the first event of a match imported from a file (``competition.interchange``)
    )
    LINEUP_CHANGED = "lineup_changed"
    TIMEOUT_CALLED = "timeout_called"
    TIMEOUT_UNDONE = "timeout_undone"
    HALFTIME = "halftime"
    OVERTIME_STARTED = "overtime_started"
    QUESTION_REPLACED = "question_replaced"
    RULING_REVIEWED = "ruling_reviewed"
    BUZZ_ADDED = "buzz_added"


class Payload(Record):
    """An event's data; ``.event()`` wraps it for the log."""

    __slots__ = ()
    EVENT: ClassVar[EventName]
    AUDIENCE: ClassVar[Audience] = Audience.ALL

    def event(self, audience: str | None = None) -> Event:
        """The log entry: ``Event(EVENT, self.to_dict(), audience or AUDIENCE)``. ValueError when
        the payload is for one seat (``AUDIENCE`` ``player:<id>``) and no ``audience`` is given."""
        audience = audience or self.AUDIENCE
        if "<" in audience:
            raise ValueError(f"{self.EVENT} needs the audience of its seat, not {audience!r}")
        return Event(self.EVENT, self.to_dict(), audience)


# -- clock ----------------------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class Paused(Payload):
    """The clock stopped at ``at``: no word, answer window, timeout or deadline runs until
    ``resumed`` (a countdown shows what was left at ``at``)."""

    EVENT = EventName.PAUSED
    at: float


@dataclass(frozen=True, slots=True)
class Resumed(Payload):
    """``shift``: seconds every pending deadline (a running timeout's ``ends_at`` included) moved by."""

    EVENT = EventName.RESUMED
    shift: float


@dataclass(frozen=True, slots=True)
class SpeedChanged(Payload):
    """The reading speed is now ``wpm`` words per minute."""

    EVENT = EventName.SPEED_CHANGED
    wpm: float


@dataclass(frozen=True, slots=True)
class PaceChanged(Payload):
    """The next tossup now starts ``between_questions`` seconds after one ends (None: when the
    moderator presses Next); ``next_tossup_at``: when the next one starts if the match is between
    questions now (None otherwise, or when the moderator advances)."""

    EVENT = EventName.PACE_CHANGED
    between_questions: float | None
    next_tossup_at: float | None


@dataclass(frozen=True, slots=True)
class BetweenQuestions(Payload):
    """A tossup (and its bonus) is over and another follows: it starts at ``next_tossup_at``
    (None: when the moderator presses Next)."""

    EVENT = EventName.BETWEEN_QUESTIONS
    next_tossup_at: float | None


# -- match flow -----------------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class Renamed(Payload):
    """Team ``team_id`` or seat ``player_id`` (the other is null) is now called ``name``."""

    EVENT = EventName.RENAMED
    team_id: int | None
    player_id: int | None
    name: str


@dataclass(frozen=True, slots=True)
class TeamAdded(Payload):
    """A team of bots the organiser added after the match was created (lobby or running), with
    score 0; its seats follow as ``player_joined``."""

    EVENT = EventName.TEAM_ADDED
    team_id: int
    name: str
    kind: str


@dataclass(frozen=True, slots=True)
class PlayerJoined(Payload):
    """A seat added after the match was created: a player in the lobby, or a bot the organiser adds in
    the lobby or while the match runs (names and ids only: a seat's token never enters the engine)."""

    EVENT = EventName.PLAYER_JOINED
    player_id: int
    team_id: int
    name: str
    kind: str
    weight_class: str
    buzz_mode: str
    min_token: int


@dataclass(frozen=True, slots=True)
class MatchStarted(Payload):
    """The lobby closed; the first tossup follows."""

    EVENT = EventName.MATCH_STARTED


@dataclass(frozen=True, slots=True)
class MatchEnded(Payload):
    """The final ``scores``."""

    EVENT = EventName.MATCH_ENDED
    scores: dict[str, int]


@dataclass(frozen=True, slots=True)
class TossupStarted(Payload):
    """No source id: it would let a player or bot look the answer up."""

    EVENT = EventName.TOSSUP_STARTED
    index: int
    question_id: int
    token_count: int
    category: str


@dataclass(frozen=True, slots=True)
class TossupAnswer(Payload):
    """The answer line and power marks, to the moderator as the tossup starts."""

    EVENT = EventName.TOSSUP_ANSWER
    AUDIENCE = Audience.MODERATOR
    question_id: int
    answer_line: str
    power_index: int | None
    superpower_index: int | None


# -- the tossup -----------------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class Words(Payload):
    """Tokens ``start…`` revealed together at ``revealed_at``: a word is a string, an image, audio
    or delay token a dict (``competition.game.tokens.MediaToken.to_dict``: ``kind``, and ``url``,
    ``sha256``, ``mime``, ``alt``, ``lockout`` for a file, ``duration`` for a delay)."""

    EVENT = EventName.WORDS
    question_id: int
    start: int
    words: list[str | dict[str, Any]]
    revealed_at: float


@dataclass(frozen=True, slots=True)
class BuzzReceived(Payload):
    """A buzz as received: the client's claims and what the engine decided from them."""

    EVENT = EventName.BUZZ_RECEIVED
    AUDIENCE = Audience.MODERATOR
    question_id: int
    player_id: int
    token_index: int
    claimed_token_index: int
    floor_token_index: int
    delay_bound: float
    client_time: float | None
    corrected_press_at: float | None
    claimed_press_at: float | None
    received_at: float


@dataclass(frozen=True, slots=True)
class Race(Payload):
    """How the race was decided: ``candidates`` in rank order (``tossup.CANDIDATE_FIELDS``),
    ``rule`` the ranking in words, ``eligible`` the players whose team could still buzz."""

    EVENT = EventName.RACE
    AUDIENCE = Audience.MODERATOR
    question_id: int
    candidates: list[dict[str, Any]]
    winner: int
    rule: str
    eligible: list[int]
    decided_at: float


@dataclass(frozen=True, slots=True)
class BuzzLost(Payload):
    """To the player whose buzz lost: ``reason`` outraced|tossup_ended (or a proposal's
    outcome). ``margin``: seconds from the winner's press to this one, both as the race counted
    them (server clock, ≥ 0); None unless outraced on the winner's word."""

    EVENT = EventName.BUZZ_LOST
    AUDIENCE = Audience.PLAYER
    question_id: int
    reason: str
    margin: float | None = None


@dataclass(frozen=True, slots=True)
class BuzzProposed(Payload):
    """A semi-autonomous bot's buzz waits for a human teammate's or the moderator's confirmation
    until ``deadline``; to that team (``team:<id>``) and to the moderator."""

    EVENT = EventName.BUZZ_PROPOSED
    AUDIENCE = Audience.TEAM
    question_id: int
    player_id: int
    team_id: int
    token_index: int
    deadline: float


@dataclass(frozen=True, slots=True)
class ProposalClosed(Payload):
    """A semi-autonomous bot's pending buzz is over: ``outcome`` confirmed (it joins the race; a
    ``buzz_received`` follows) | declined | timeout | tossup_ended; ``by``: the confirming or
    declining seat (None: the moderator, or no one). To that team and to the moderator."""

    EVENT = EventName.PROPOSAL_CLOSED
    AUDIENCE = Audience.TEAM
    question_id: int
    player_id: int
    team_id: int
    outcome: str
    by: int | None


@dataclass(frozen=True, slots=True)
class MutedBuzz(Payload):
    """A muted bot's would-be buzz, logged for analysis only (it never races): the token index
    the engine decided, as for a buzz (``token_index`` 0-based)."""

    EVENT = EventName.MUTED_BUZZ
    AUDIENCE = Audience.MODERATOR
    question_id: int
    player_id: int
    team_id: int
    token_index: int
    claimed_token_index: int
    received_at: float


@dataclass(frozen=True, slots=True)
class AnswerDelegated(Payload):
    """The moderator gave the answer of ``player_id``'s buzz to ``answerer_id`` (a bot seat of the
    same team; the buzzer itself on a revert), who answers before ``answer_deadline``."""

    EVENT = EventName.ANSWER_DELEGATED
    question_id: int
    player_id: int
    answerer_id: int
    answer_deadline: float | None


@dataclass(frozen=True, slots=True)
class BuzzWon(Payload):
    """The buzz that won the race: its player answers before ``answer_deadline``."""

    EVENT = EventName.BUZZ
    question_id: int
    player_id: int
    player: str
    team_id: int
    team: str
    kind: str
    token_index: int
    token_count: int
    answer_deadline: float | None
    revealed_at: float
    received_at: float
    accepted_at: float | None
    client_time: float | None
    corrected_press_at: float | None


@dataclass(frozen=True, slots=True)
class TossupRevealed(Payload):
    """The moderator ended the tossup after its first ``revealed_token_count`` tokens; a
    ``tossup_ended`` (dead) follows."""

    EVENT = EventName.TOSSUP_REVEALED
    question_id: int
    revealed_token_count: int


@dataclass(frozen=True, slots=True)
class TossupEnded(Payload):
    """``outcome``: answered|dead|skipped. ``words``: the whole tossup, every token as read
    (the players see the rest of the question after an early buzz)."""

    EVENT = EventName.TOSSUP_ENDED
    question_id: int
    answer_line: str
    power_index: int | None
    superpower_index: int | None
    outcome: str
    scores: dict[str, int]
    words: list[str | dict[str, Any]]


# -- answers and rulings --------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class AnswerGiven(Payload):
    """A tossup answer waiting for the moderator, with the judge's suggestion."""

    EVENT = EventName.ANSWER_GIVEN
    AUDIENCE = Audience.MODERATOR
    question_id: int
    player_id: int
    guess: str
    verdict: str
    reason: str
    directed_prompt: str | None


@dataclass(frozen=True, slots=True)
class AwaitingRuling(Payload):
    """The clock stopped for a ruling on a tossup answer (not the guess or the verdict)."""

    EVENT = EventName.AWAITING_RULING
    question_id: int
    player_id: int


@dataclass(frozen=True, slots=True)
class AwaitingBonusRuling(Payload):
    """The clock stopped for a ruling on a bonus part's answer."""

    EVENT = EventName.AWAITING_RULING
    bonus_id: int
    part: int
    player_id: int


@dataclass(frozen=True, slots=True)
class Prompted(Payload):
    """The buzzer is prompted and answers again before ``answer_deadline``."""

    EVENT = EventName.PROMPT
    question_id: int
    player_id: int
    directed_prompt: str | None
    answer_deadline: float | None


@dataclass(frozen=True, slots=True)
class BuzzRuled(Payload):
    """A tossup buzz ruled (``ruling``: correct|wrong|no_penalty|timeout) and scored;
    ``fully_read``: the whole tossup had been read when it arrived (a wrong answer is no neg);
    ``answerer_id`` (only when the moderator delegated the answer): the bot seat that answered."""

    EVENT = EventName.BUZZ_RULED
    question_id: int
    player_id: int
    team_id: int
    guess: str
    verdict: str
    ruling: str
    points: int
    token_index: int
    token_count: int
    tossup_index: int
    at: float
    fully_read: bool
    scores: dict[str, int]
    answerer_id: int | None = None

    def to_dict(self) -> dict[str, Any]:
        d = Payload.to_dict(self)
        if self.answerer_id is None:  # only a delegated answer names its answerer
            del d["answerer_id"]
        return d


@dataclass(frozen=True, slots=True)
class ReadingResumed(Payload):
    """After a wrong buzz, reading (or dead time) goes on for the teams still eligible."""

    EVENT = EventName.READING_RESUMED
    question_id: int


# -- bonuses --------------------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class BonusStarted(Payload):
    """``parts``: how many parts will be read. ``leadin_tokens``: the lead-in as display tokens
    (words and image, audio or delay tokens, as a tossup's ``words``; ``leadin`` keeps the stored
    text with its media markers)."""

    EVENT = EventName.BONUS_STARTED
    bonus_id: int
    team_id: int
    leadin: str
    parts: int
    leadin_tokens: list[str | dict[str, Any]]


@dataclass(frozen=True, slots=True)
class BonusAnswerLines(Payload):
    """The whole bonus for the moderator up front: ``{part, text, tokens, value, answer_line}`` per
    part."""

    EVENT = EventName.BONUS_ANSWER_LINES
    AUDIENCE = Audience.MODERATOR
    bonus_id: int
    parts: list[dict[str, Any]]


@dataclass(frozen=True, slots=True)
class BonusPartOpened(Payload):
    """Part ``part`` (0-based) is read; the controlling team answers before ``answer_deadline``.
    ``tokens``: its text as display tokens (words and image, audio or delay tokens, as a tossup's
    ``words``: its media is revealed now; ``text`` keeps the stored text with its media markers)."""

    EVENT = EventName.BONUS_PART
    bonus_id: int
    part: int
    text: str
    value: int
    answer_deadline: float | None
    tokens: list[str | dict[str, Any]]


@dataclass(frozen=True, slots=True)
class BonusAnswerGiven(Payload):
    """A bonus part's answer waiting for the moderator (auto-ruling off, or a needs_moderator
    verdict), with the judge's suggestion."""

    EVENT = EventName.BONUS_ANSWER_GIVEN
    AUDIENCE = Audience.MODERATOR
    bonus_id: int
    part: int
    player_id: int
    guess: str
    verdict: str
    reason: str
    directed_prompt: str | None


@dataclass(frozen=True, slots=True)
class BonusSuggested(Payload):
    """A bot seat's suggestion on the open part, for its team's captain (``team:<id>``) and the
    moderator: ``guess``, ``confidence`` in [0, 1], ``explanation``."""

    EVENT = EventName.BONUS_SUGGESTION
    AUDIENCE = Audience.TEAM
    bonus_id: int
    part: int
    player_id: int
    guess: str
    confidence: float
    explanation: str


@dataclass(frozen=True, slots=True)
class BonusDecided(Payload):
    """The captain's ``decision`` on the open part (own|consult|abstain); ``by``: the deciding
    seat (None: the moderator); ``consulted``: the bot seat whose suggestion answers (consult)."""

    EVENT = EventName.BONUS_DECISION
    bonus_id: int
    part: int
    team_id: int
    decision: str
    by: int | None
    consulted: int | None


@dataclass(frozen=True, slots=True)
class BonusPrompted(Payload):
    """The controlling team is prompted on the open part and answers again before
    ``answer_deadline``; a second prompt on the same part counts as wrong."""

    EVENT = EventName.BONUS_PROMPT
    bonus_id: int
    part: int
    directed_prompt: str | None
    answer_deadline: float | None


@dataclass(frozen=True, slots=True)
class BonusPartRuled(Payload):
    """``player_id`` None: nobody answered (a timeout); ``decision`` (only when the captain took
    one): own|consult|abstain."""

    EVENT = EventName.BONUS_PART_RULED
    bonus_id: int
    part: int
    team_id: int
    player_id: int | None
    guess: str
    verdict: str
    ruling: str
    points: int
    answer_line: str
    tossup_index: int
    at: float
    scores: dict[str, int]
    decision: str = ""

    def to_dict(self) -> dict[str, Any]:
        d = Payload.to_dict(self)
        if not self.decision:  # only presets with bonus decisions take one
            del d["decision"]
        return d


@dataclass(frozen=True, slots=True)
class BonusEnded(Payload):
    """The bonus is over: ``points`` earned on it."""

    EVENT = EventName.BONUS_ENDED
    bonus_id: int
    team_id: int
    points: int
    scores: dict[str, int]


# -- corrections --------------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class BonusWithdrawn(Payload):
    """Follows the ``ruling_undone`` of the correct buzz that earned bonus ``bonus_id``, undone
    while the bonus was being read, or its ``ruling_corrected`` to another ruling while the bonus
    is the match's (read or just over): the bonus is taken back (its ruled parts were reversed
    first) and the match waits between questions."""

    EVENT = EventName.BONUS_WITHDRAWN
    bonus_id: int
    team_id: int


@dataclass(frozen=True, slots=True)
class RulingCorrected(Payload):
    """The moderator changed the ruling at ``history_index`` after the fact, for ``reason``: a
    tossup buzz (``bonus_id``/``part`` null) or a bonus part, from ``ruling_before`` /
    ``points_before`` to ``ruling`` / ``points``. ``outcome``: the tossup's outcome now, when it had
    already ended (answered|dead; null when it is still being read: its ``tossup_ended`` follows,
    or when the match has gone past it). What follows in the same command: a tossup made correct
    while live ends (``tossup_ended``, then its bonus); one made correct just after it ended gets
    its bonus (``bonus_started``); a correct buzz made wrong takes its bonus with it (each ruled
    part ``ruling_undone``, then ``bonus_withdrawn`` while it was being read)."""

    EVENT = EventName.RULING_CORRECTED
    history_index: int
    tossup_index: int
    question_id: int | None
    bonus_id: int | None
    part: int | None
    player_id: int | None
    team_id: int
    ruling_before: str
    points_before: int
    ruling: str
    points: int
    reason: str
    outcome: str | None
    scores: dict[str, int]


# ``ruling_undone`` and the protest events are built in ``corrections`` from the records they
# report (a history entry, a protest): their payloads are those records' fields.


@dataclass(frozen=True, slots=True)
class PointsAdjusted(Payload):
    """``protest_id`` (only when the adjustment resolves a protest)."""

    EVENT = EventName.POINTS_ADJUSTED
    team_id: int
    points: int
    reason: str
    scores: dict[str, int]
    protest_id: int | None = None

    def to_dict(self) -> dict[str, Any]:
        d = Payload.to_dict(self)
        if self.protest_id is None:
            del d["protest_id"]
        return d


@dataclass(frozen=True, slots=True)
class TossupReplayed(Payload):
    """Tossup ``index`` is read again from its first word (its rulings were undone first)."""

    EVENT = EventName.TOSSUP_REPLAYED
    question_id: int
    index: int
    scores: dict[str, int]


# -- lineups, timeouts, halves, overtime (``lineups``, ``periods``) -------------------------


@dataclass(frozen=True, slots=True)
class LineupChanged(Payload):
    """Team ``team_id``'s active ``players`` (seat ids, in order) from tossup ``first_tossup``
    (0-based) on, after ``player_in`` came in and/or ``player_out`` left; ``reason`` in QBJ's
    words: initial|halftime|before_overtime|own_timeout|other_timeout|segment_break."""

    EVENT = EventName.LINEUP_CHANGED
    team_id: int
    player_in: int | None
    player_out: int | None
    players: list[int]
    first_tossup: int
    reason: str


@dataclass(frozen=True, slots=True)
class TimeoutCalled(Payload):
    """Team ``team_id`` called a timeout of ``length`` seconds ending at ``ends_at``; it has
    ``left`` timeouts left (this game or half); ``next_tossup_at``: when the next tossup now
    starts (None: on the moderator's Next)."""

    EVENT = EventName.TIMEOUT_CALLED
    team_id: int
    length: float
    ends_at: float
    left: int
    next_tossup_at: float | None


@dataclass(frozen=True, slots=True)
class TimeoutUndone(Payload):
    """Team ``team_id``'s timeout, the newest of this break, was taken back (a mis-click): it has
    ``left`` timeouts left again; ``timeout``: the timeout running now, as the views'
    ``periods.timeout`` show it (another team's, called earlier this break), else None;
    ``next_tossup_at``: when the next tossup now starts, as it was before the timeout (not
    before now; None: on the moderator's Next)."""

    EVENT = EventName.TIMEOUT_UNDONE
    team_id: int
    left: int
    timeout: dict[str, Any] | None
    next_tossup_at: float | None


@dataclass(frozen=True, slots=True)
class Halftime(Payload):
    """The first half is over; the next tossup is the second half's first. ``timeouts_left``:
    ``{str(team_id): n}`` (renewed when the preset counts them per half)."""

    EVENT = EventName.HALFTIME
    half: int
    timeouts_left: dict[str, int]
    scores: dict[str, int]


@dataclass(frozen=True, slots=True)
class OvertimeStarted(Payload):
    """Regulation ended tied: overtime is read from tossup ``first_tossup`` (0-based) of the
    packet on, ``tossups`` of them before sudden death, with bonuses or not (``bonuses``)."""

    EVENT = EventName.OVERTIME_STARTED
    first_tossup: int
    tossups: int
    bonuses: bool
    scores: dict[str, int]


# -- spares and the full-scoresheet review ------------------------------------------------


@dataclass(frozen=True, slots=True)
class QuestionReplaced(Payload):
    """A question thrown out for ``reason`` and replaced by a spare: ``kind`` tossup (tossup
    ``tossup_index``, ``question_id`` thrown out; the spare ``spare_id`` is read next, as tossup
    ``tossup_index + 1``) or bonus (``bonus_id`` thrown out; ``team_id`` hears spare ``spare_id``
    at once). Every ruling on the thrown-out question (and on the bonus a thrown-out tossup
    earned) was reversed first, one ``ruling_undone`` each; it counts in no score, standing or fit."""

    EVENT = EventName.QUESTION_REPLACED
    kind: str
    tossup_index: int
    question_id: int | None
    bonus_id: int | None
    team_id: int | None
    spare_id: int
    reason: str
    scores: dict[str, int]


@dataclass(frozen=True, slots=True)
class RulingReviewed(Payload):
    """A ruling of the scoresheet at ``history_index`` corrected after the fact by ``by`` for
    ``reason``: a tossup buzz (``bonus_id``/``part`` null) or a bonus part, its seat
    ``player_before`` → ``player_id`` (and team), ``ruling_before``/``points_before`` →
    ``ruling``/``points``. A correct buzz that no longer stands correct for its team takes its
    bonus with it: each ruled part follows as ``ruling_undone``. A later wrong buzz of the tossup
    whose neg rule depended on the change is scored again as one more ``ruling_reviewed`` (its
    ruling and seat unchanged, ``reason`` prefixed "neg rule follows a review: ")."""

    EVENT = EventName.RULING_REVIEWED
    history_index: int
    tossup_index: int
    question_id: int | None
    bonus_id: int | None
    part: int | None
    player_before: int | None
    player_id: int | None
    team_before: int
    team_id: int
    ruling_before: str
    ruling: str
    points_before: int
    points: int
    reason: str
    by: str
    scores: dict[str, int]


@dataclass(frozen=True, slots=True)
class BuzzAdded(Payload):
    """A buzz missed during play, added to the scoresheet by ``by`` for ``reason``: the new
    ruling at ``history_index`` (appended to ``history``) on tossup ``tossup_index``, as a
    ``buzz_ruled`` would have recorded it (``guess``/``verdict`` empty; ``fully_read``: the buzz
    came after the question ended). It earns no bonus (none was read). Later buzzes of the
    tossup whose neg depended on it follow as ``ruling_reviewed`` (ruling unchanged)."""

    EVENT = EventName.BUZZ_ADDED
    history_index: int
    tossup_index: int
    question_id: int
    player_id: int
    team_id: int
    ruling: str
    points: int
    token_index: int
    token_count: int
    fully_read: bool
    at: float
    reason: str
    by: str
    scores: dict[str, int]
