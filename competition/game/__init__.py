"""Pure quizbowl match engine (no Django, no I/O, no clock): see docs/PROTOCOL.md "Engine contract".

Where things are:

* ``machine``: ``apply(state, command, now)``, the command dispatch and the deadline loop.
* ``clock``: pending deadlines, pause, resume, reading speed.
* ``flow``: the lobby, starting the match and each tossup, between questions, the end.
* ``tossup``: reading words, buzzes, the race between buzzes, the end of a tossup.
* ``ruling``: answers, prompts, the moderator's rulings, answer timeouts.
* ``bonus``: bonus parts, answers and rulings.
* ``corrections``: undo, point adjustments, protests, replaying a tossup.
* ``commands`` (inputs and ``Event``), ``specs`` (immutable inputs), ``state`` and ``records``
  (the live state and its typed records), ``view`` (audience snapshots and the client reducer).
"""

from .commands import (
    MAX_DELAY_BOUND,
    Adjust,
    Answer,
    BonusAnswer,
    Buzz,
    Command,
    End,
    Event,
    Next,
    Pause,
    Protest,
    Rename,
    ReplayTossup,
    Resume,
    Reveal,
    Rule,
    RuleViolation,
    SeatPlayer,
    SetSpeed,
    Skip,
    Start,
    Tick,
    Undo,
)
from .machine import apply
from .records import (
    Adjustment,
    BonusRuling,
    Candidate,
    PartResult,
    PendingAnswer,
    ProtestNote,
    Resolution,
    RulingRecord,
    TossupRuling,
    WinningBuzz,
)
from .specs import BonusPartSpec, BonusSpec, MatchConfig, PlayerSpec, TeamSpec, TossupSpec, tokenize_tossup
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
    "MEDIA_URL",
    "Adjust",
    "Adjustment",
    "Answer",
    "BonusAnswer",
    "BonusPartSpec",
    "BonusRuling",
    "BonusRun",
    "BonusSpec",
    "Buzz",
    "Candidate",
    "Command",
    "End",
    "Event",
    "MatchConfig",
    "MatchSpec",
    "MatchState",
    "MediaToken",
    "Next",
    "PartResult",
    "Pause",
    "PendingAnswer",
    "PlayerSpec",
    "Protest",
    "ProtestNote",
    "Records",
    "Rename",
    "ReplayTossup",
    "Resolution",
    "Resume",
    "Reveal",
    "Rule",
    "RuleViolation",
    "RulingRecord",
    "SeatPlayer",
    "SetSpeed",
    "Skip",
    "Start",
    "TeamSpec",
    "Tick",
    "Token",
    "TossupRuling",
    "TossupRun",
    "TossupSpec",
    "Undo",
    "WinningBuzz",
    "apply",
    "apply_event",
    "event_audiences",
    "new_match",
    "records_from_dict",
    "records_to_dict",
    "tokenize_tossup",
    "tokens_json",
    "view",
    "words_text",
]
