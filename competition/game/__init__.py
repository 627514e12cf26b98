"""Pure quizbowl match engine (no Django, no I/O, no clock): see docs/PROTOCOL.md "Engine contract".

Where things are:

* ``machine``: ``apply(state, command, now)``, the command dispatch and the deadline loop.
* ``clock``: pending deadlines, pause, resume, reading speed.
* ``flow``: the lobby, starting the match and each tossup, between questions, the end.
* ``tossup``: reading words, buzzes, the race between buzzes, the end of a tossup.
* ``ruling``: answers, prompts, the moderator's rulings, answer timeouts.
* ``bonus``: bonus parts, answers and rulings; the captain's own/consult/abstain decisions.
* ``proposals``, ``hybrid``: muted and semi-autonomous bot seats (would-be and pending buzzes,
  confirmation), the moderator's delegation of an answer to the team's AI.
* ``corrections``: undo, correcting a ruling after the fact, point adjustments, protests,
  replaying a tossup.
* ``lineups``: active players and bench, substitutions, tossups heard per player.
* ``periods``: halves, overtime and timeouts, per the preset.
* ``spares``: a thrown-out question replaced by a spare; ``review``: the full-scoresheet review
  (any earlier ruling corrected, with who and why).
* ``commands`` (inputs and ``Event``), ``specs`` (immutable inputs), ``state`` and ``records``
  (the live state and its typed records), ``view`` (audience snapshots and the client reducer).
"""

from .commands import (
    MAX_DELAY_BOUND,
    AddBuzz,
    AddTeam,
    Adjust,
    Answer,
    BonusAnswer,
    BonusSuggestion,
    Buzz,
    CallTimeout,
    Command,
    ConfirmBuzz,
    CorrectRuling,
    DecideBonus,
    Delegate,
    End,
    Event,
    Next,
    Pause,
    Protest,
    Rename,
    ReplaceQuestion,
    ReplayTossup,
    Resume,
    Reveal,
    ReviewRuling,
    Rule,
    RuleViolation,
    SeatPlayer,
    SetPace,
    SetSpeed,
    Skip,
    Start,
    Substitute,
    Tick,
    Undo,
    UndoTimeout,
)
from .corrections import MAX_REASON, PART_CORRECTIONS, TOSSUP_CORRECTIONS
from .events import EventName
from .flow import MAX_PACE
from .lineups import active_players, tossups_heard
from .machine import apply
from .records import (
    Adjustment,
    BonusRuling,
    Candidate,
    PartResult,
    PendingAnswer,
    Proposal,
    ProtestNote,
    Resolution,
    RulingRecord,
    Suggestion,
    TossupRuling,
    WinningBuzz,
)
from .specs import (
    BonusPartSpec,
    BonusSpec,
    MatchConfig,
    PlayerSpec,
    TeamSpec,
    TossupSpec,
    check_seat,
    text_tokens,
    tokenize_tossup,
)
from .state import (
    BonusRun,
    MatchSpec,
    MatchState,
    Records,
    TossupRun,
    new_match,
    records_from_dict,
    records_to_dict,
)
from .tokens import MEDIA_URL, MediaToken, Token, tokens_json, words_text
from .view import apply_event, event_audiences, view

__all__ = [
    "MAX_DELAY_BOUND",
    "MAX_PACE",
    "MAX_REASON",
    "MEDIA_URL",
    "PART_CORRECTIONS",
    "TOSSUP_CORRECTIONS",
    "AddBuzz",
    "AddTeam",
    "Adjust",
    "Adjustment",
    "Answer",
    "BonusAnswer",
    "BonusPartSpec",
    "BonusRuling",
    "BonusRun",
    "BonusSpec",
    "BonusSuggestion",
    "Buzz",
    "CallTimeout",
    "Candidate",
    "Command",
    "ConfirmBuzz",
    "CorrectRuling",
    "DecideBonus",
    "Delegate",
    "End",
    "Event",
    "EventName",
    "MatchConfig",
    "MatchSpec",
    "MatchState",
    "MediaToken",
    "Next",
    "PartResult",
    "Pause",
    "PendingAnswer",
    "PlayerSpec",
    "Proposal",
    "Protest",
    "ProtestNote",
    "Records",
    "Rename",
    "ReplaceQuestion",
    "ReplayTossup",
    "Resolution",
    "Resume",
    "Reveal",
    "ReviewRuling",
    "Rule",
    "RuleViolation",
    "RulingRecord",
    "SeatPlayer",
    "SetPace",
    "SetSpeed",
    "Skip",
    "Start",
    "Substitute",
    "Suggestion",
    "TeamSpec",
    "Tick",
    "Token",
    "TossupRuling",
    "TossupRun",
    "TossupSpec",
    "Undo",
    "UndoTimeout",
    "WinningBuzz",
    "active_players",
    "apply",
    "apply_event",
    "check_seat",
    "event_audiences",
    "new_match",
    "records_from_dict",
    "records_to_dict",
    "text_tokens",
    "tokenize_tossup",
    "tokens_json",
    "tossups_heard",
    "view",
    "words_text",
]
