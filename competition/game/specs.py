"""Immutable inputs of a match: questions, teams, players and the match configuration."""

from __future__ import annotations

import math
from dataclasses import asdict, dataclass
from typing import Any

from competition.vocabulary import BuzzMode, SeatKind
from formats.media import has_markers, split_text
from scoring.rules import Preset, load_preset

from .tokens import MediaToken, Token

KINDS: tuple[SeatKind, ...] = tuple(SeatKind)
POWER_MARK = "(*)"
SUPERPOWER_MARK = "(+)"
DEFAULT_BOT_DELAY = 0.300


@dataclass(frozen=True)
class TossupSpec:
    """One tossup as read: ``tokens`` are the display tokens (marks removed): words, and media or
    delay tokens (:mod:`.tokens`); ``power_index`` /
    ``superpower_index`` = number of tokens before the ``(*)`` / ``(+)`` mark (None = unmarked),
    so a buzz with 0-based ``token_index < power_index`` is a power. ``external_id``: the question's
    id in its source ("" if none); server-side only: no event or player/spectator view carries it,
    since a source id lets a client look the answer up."""

    question_id: int
    tokens: list[Token]
    power_index: int | None
    superpower_index: int | None
    answer_line: str
    category: str = ""
    external_id: str = ""


def strip_marks(raw_words: list[str] | list[Token]) -> tuple[list[Token], dict[str, int], list[int]]:
    """Remove the ``(*)``/``(+)`` marks from whitespace words (media tokens pass through).

    Returns ``(tokens, marks, token_of)``: the display tokens; mark → number of tokens before it
    (also when glued to a word: ``word(*)`` counts the word as before the mark, ``(*)word`` as
    after it; the first occurrence wins, QUIZBOWL.md "Positions"); and for each raw word the
    index of the display token that shows it (a bare mark maps to the token before it, or 0)."""
    tokens: list[Token] = []
    marks: dict[str, int] = {}
    token_of: list[int] = []
    for raw in raw_words:
        if not isinstance(raw, str):
            tokens.append(raw)
            token_of.append(len(tokens) - 1)
            continue
        word = raw
        for mark in (POWER_MARK, SUPERPOWER_MARK):
            if mark not in word:
                continue
            before, _, after = word.partition(mark)
            # A mark glued to the end of a word follows that word; otherwise it precedes the rest.
            marks.setdefault(mark, len(tokens) + (1 if before and not after else 0))
            word = (before + after).replace(mark, "")
        if word:
            tokens.append(word)
        token_of.append(max(len(tokens) - 1, 0))
    return tokens, marks, token_of


def tokenize_tossup(
    question_id: int, question_text: str, answer_line: str, category: str = "", *, external_id: str = ""
) -> TossupSpec:
    """Split ``question_text`` on whitespace (``str.split``) and strip the power marks (see
    :func:`strip_marks`), recording their positions. Stored media and delay markers
    (``formats.media``) become :class:`MediaToken` s, one token each. Raises ValueError
    (``formats.media.MarkerError``) for a malformed marker or one naming a file never imported."""
    raw: list[Token] | list[str]
    if has_markers(question_text):
        raw = [p if isinstance(p, str) else MediaToken.from_marker(p) for p in split_text(question_text)]
    else:
        raw = question_text.split()
    tokens, marks, _ = strip_marks(raw)
    return TossupSpec(
        question_id=question_id,
        tokens=tokens,
        power_index=marks.get(POWER_MARK),
        superpower_index=marks.get(SUPERPOWER_MARK),
        answer_line=answer_line,
        category=category,
        external_id=external_id,
    )


def text_tokens(text: str) -> list[Token]:
    """A bonus lead-in's or part's text as display tokens, as a tossup's are shown: whitespace words,
    and a :class:`MediaToken` for each stored media or delay marker (``formats.media``). Text whose
    markers do not parse (the importer refuses them, so only hand-made rows) stays plain words."""
    if not has_markers(text):
        return list(text.split())
    try:
        return [p if isinstance(p, str) else MediaToken.from_marker(p) for p in split_text(text)]
    except ValueError:
        return list(text.split())


@dataclass(frozen=True)
class BonusPartSpec:
    """One bonus part: the text read, its answer line and its point value."""

    text: str
    answer_line: str
    value: int = 10


@dataclass(frozen=True)
class BonusSpec:
    """A bonus: the lead-in and its parts (played in order, at most ``preset.bonus_parts``)."""

    bonus_id: int
    leadin: str
    parts: list[BonusPartSpec]


@dataclass(frozen=True)
class TeamSpec:
    """A team; ``kind``: human|bot."""

    team_id: int
    name: str
    kind: SeatKind


BUZZ_MODES: tuple[BuzzMode, ...] = tuple(BuzzMode)


@dataclass(frozen=True)
class PlayerSpec:
    """A seat; bots carry a ``weight_class`` (light|mid|heavy) used for deflation and tie-breaks,
    a ``buzz_mode`` (``competition.vocabulary.BuzzMode``: autonomous|semi_autonomous|muted) and
    ``min_token``: the bot may not buzz before this 0-based token (on top of the preset's
    ``min_token_for_bots``). A human seat is autonomous with ``min_token`` 0."""

    player_id: int
    team_id: int
    name: str
    kind: SeatKind
    weight_class: str = ""
    buzz_mode: str = "autonomous"
    min_token: int = 0


def check_seat(kind: str, buzz_mode: str, min_token: int) -> str:
    """Why a seat's buzz settings are invalid ("" if valid): ``buzz_mode`` one of BUZZ_MODES,
    ``min_token`` an integer ≥ 0, and a human seat autonomous with ``min_token`` 0."""
    if buzz_mode not in BUZZ_MODES:
        return f"buzz_mode must be one of {', '.join(BUZZ_MODES)}, got {buzz_mode!r}"
    if not isinstance(min_token, int) or isinstance(min_token, bool) or min_token < 0:
        return f"min_token must be an integer >= 0, got {min_token!r}"
    if kind != SeatKind.BOT and (buzz_mode != BuzzMode.AUTONOMOUS or min_token):
        return "buzz modes and min_token are for bot seats; a human seat buzzes itself"
    return ""


@dataclass
class MatchConfig:
    """Match settings. Times in seconds, speed in words per minute.

    ``collection_window``: buzzes arriving within it after the first valid one compete on
    token index (0 = first arrival wins). ``bot_delay``: a bot's reaction delay after a word's
    reveal; None = the preset's ``bot_delay``, else ``DEFAULT_BOT_DELAY`` (an explicit match
    setting wins over the preset: see :attr:`reaction_delay`). ``auto_rule``: apply the judge's
    verdict passed with an Answer at once instead of waiting for the moderator's Rule.
    ``auto_advance``: start the next tossup ``between_questions`` after one ends (else on Next);
    the default gap leaves the room time to read the tossup's recap, and the moderator changes
    the pace during the match (``SetPace``) or presses Next to go on at once.
    ``confirm_window``: how long a semi-autonomous bot's buzz waits for a teammate's or the
    moderator's confirmation before it lapses. ``unattended``: no moderator at all (simulations, practice): with ``auto_rule``, answers the
    judge cannot decide (``needs_moderator``) are ruled wrong instead of waiting for a ruling
    that would never come.
    """

    preset: Preset
    wpm: float = 200
    answer_window: float = 8.0
    dead_time: float = 5.0
    prompt_window: float = 8.0
    bonus_part_window: float = 10.0
    between_questions: float = 10.0
    collection_window: float = 0.150
    bot_delay: float | None = None
    auto_rule: bool = False
    auto_advance: bool = True
    unattended: bool = False
    confirm_window: float = 3.0

    def __post_init__(self) -> None:
        if not (math.isfinite(self.wpm) and self.wpm > 0):
            raise ValueError(f"wpm must be a positive number, got {self.wpm!r}")
        if self.bot_delay is not None and not (math.isfinite(self.bot_delay) and self.bot_delay >= 0):
            raise ValueError(f"bot_delay must be a number of seconds ≥ 0, got {self.bot_delay!r}")
        if not (math.isfinite(self.confirm_window) and self.confirm_window > 0):
            raise ValueError(
                f"confirm_window must be a positive number of seconds, got {self.confirm_window!r}"
            )

    @property
    def reaction_delay(self) -> float:
        """The bots' reaction delay in seconds: this match's ``bot_delay``, else the preset's, else
        ``DEFAULT_BOT_DELAY`` (a human-like reaction time)."""
        for delay in (self.bot_delay, self.preset.bot_delay):
            if delay is not None:
                return delay
        return DEFAULT_BOT_DELAY

    def to_dict(self) -> dict[str, Any]:
        """JSON-ready dict; ``preset`` is embedded as a snapshot dict."""
        return {**asdict(self), "preset": self.preset.to_dict()}

    @classmethod
    def from_dict(cls, d: dict[str, Any]) -> MatchConfig:
        """Inverse of :meth:`to_dict`; ``preset`` may also be a preset name (ValueError if unknown)."""
        preset = d["preset"]
        preset = load_preset(preset) if isinstance(preset, str) else Preset.from_dict(preset)
        return cls(**{**d, "preset": preset})
