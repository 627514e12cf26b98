"""Pure quizbowl match engine (no Django, no I/O, no clock): see docs/PROTOCOL.md "Engine contract"."""

from .commands import (
    Adjust,
    Answer,
    BonusAnswer,
    Buzz,
    Command,
    End,
    Event,
    Next,
    Pause,
    Resume,
    Rule,
    RuleViolation,
    SetSpeed,
    Skip,
    Start,
    Tick,
    Undo,
)
from .engine import apply
from .specs import BonusPartSpec, BonusSpec, MatchConfig, PlayerSpec, TeamSpec, TossupSpec, tokenize_tossup
from .state import BonusRun, MatchState, TossupRun, new_match
from .view import view

__all__ = [
    "Adjust",
    "Answer",
    "BonusAnswer",
    "BonusPartSpec",
    "BonusRun",
    "BonusSpec",
    "Buzz",
    "Command",
    "End",
    "Event",
    "MatchConfig",
    "MatchState",
    "Next",
    "Pause",
    "PlayerSpec",
    "Resume",
    "Rule",
    "RuleViolation",
    "SetSpeed",
    "Skip",
    "Start",
    "TeamSpec",
    "Tick",
    "TossupRun",
    "TossupSpec",
    "Undo",
    "apply",
    "new_match",
    "tokenize_tossup",
    "view",
]
