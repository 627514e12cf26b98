"""The one error family: every refusal Tossup reports is a :class:`TossupError`.

A ``TossupError`` has a machine ``code`` (clients branch on it), a human ``message`` (clients
show it, never parse it) and ``extra``, a JSON-serialisable dict of facts a client may use
(empty for most). Each layer raises its own subclass, keeping its historical name:

- ``competition.game.RuleViolation`` — the engine refuses a command (``code`` one of :data:`RULE_CODES`);
- :class:`ServiceError` — the services (``competition.services``, the live store
  ``competition.live.store``) refuse a request (:data:`SERVICE_CODES`);
- ``buzzer.protocol.ProtocolError`` — a client frame is malformed or not allowed;
- ``formats.FormatError`` — a file cannot be read (``code`` ``bad_file``).

Each edge translates the family in one place: the websocket consumer's ``error`` frame
(``buzzer.consumers.error_frame``), the HTTP API's ``{"code", "message", "extra"?}`` body
(``frontend.errors.api_error``) and management commands
(``competition.management.errors.command_error``).

Pure: no Django (the engine imports it)."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

# The engine's refusals (``RuleViolation.code``): nothing changed.
RULE_CODES: dict[str, str] = {
    "not_live": "no tossup is being read (or no word yet, or the match has not started)",
    "wrong_question": "the frame names a question that is not the live one",
    "team_already_buzzed": "the player's team has already buzzed on this tossup",
    "locked_out": "another buzz is being answered",
    "media_lockout": "an image or audio clue was just revealed: no buzz until its lockout ends",
    "bot_min_token": "a bot may not buzz this early in the tossup",
    "bot_buzz_period": "a bot may buzz only every few tokens",
    "not_your_buzz": "an answer from a player who does not hold the buzz",
    "answer_window_closed": "the answer came after its window closed or after another answer",
    "not_your_bonus": "a bonus answer from a player whose team does not control the bonus",
    "wrong_part": "a bonus answer to a part that is not open",
    "no_pending_answer": "a ruling with no answer waiting for it",
    "bad_verdict": "a verdict the judge or the moderator cannot give",
    "bad_value": "a command value out of range",
    "bad_phase": "a command that does not fit the match's phase",
    "paused": "the match is paused",
    "not_paused": "resume while not paused",
    "unknown_command": "a command the engine does not know",
    "unknown_player": "no such player in the match",
    "unknown_team": "no such team in the match",
    "unknown_protest": "no such open protest",
    "nothing_to_undo": "undo with no ruling to undo",
    "not_correctable": "a correction of a ruling that is not the newest tossup ruling or a part of its bonus",
    "no_tossups": "start with no tossups",
    "already_buzzed": "this bot seat already has a would-be or pending buzz on this tossup",
    "no_pending_buzz": "a confirmation with no semi-autonomous buzz waiting for it",
    "not_your_team": "a confirmation, delegation or decision by a seat of another team",
    "not_captain": "a bonus decision from a seat that is not the team's captain",
    "no_bonus_decisions": "a bonus suggestion or decision under a preset without bonus decisions",
    "already_decided": "the captain already decided on this bonus part",
    "no_suggestion": "consult with no suggestion from the team's AI on this part",
    "bots_suggest": "a bot's bonus answer on a team with a human captain: the bot suggests, the captain decides",
    "benched": "a buzz or answer from a seat on its team's bench",
    "lineup_full": "a substitution that would put more players in than the preset allows",
    "no_substitution": "a substitution where the format allows none (mid-tossup, or not at this break)",
    "no_timeouts_left": "a timeout from a team that has used its allowance",
    "no_timeout": "an undo of a timeout when none was called since the last tossup (the next tossup has started)",
    "no_spares": "a question replaced with no spare question left",
}

# The service's refusals (``ServiceError.code``).
SERVICE_CODES: dict[str, str] = {
    "invalid": "a value missing, of the wrong type or out of range",
    "not_found": "no such match, seat or question",
    "closed": "the match has started: only existing seats can rejoin",
    "seat_taken": "the name is seated: rejoin with the seat's token or a reclaim code",
    "unknown_preset": "no such rules preset",
    "stale_view": "a moderator command made on a view of the match that is out of date: look again and resend",
}


class TossupError(Exception):
    """A refusal: ``code`` (machine, snake_case), ``message`` (for people; defaults to the code)
    and ``extra`` (a JSON-serialisable dict, empty unless the code has facts to give).
    ``str(error)`` is the message."""

    def __init__(self, code: str, message: str = "", extra: Mapping[str, Any] | None = None) -> None:
        super().__init__(message or code)
        self.code = code
        self.message = message or code
        self.extra: dict[str, Any] = dict(extra or {})

    def to_dict(self) -> dict[str, Any]:
        """``{"code", "message"}`` plus ``"extra"`` when it is not empty: the body every edge sends."""
        body: dict[str, Any] = {"code": self.code, "message": self.message}
        if self.extra:
            body["extra"] = self.extra
        return body

    def __repr__(self) -> str:
        return f"{type(self).__name__}({self.code!r}, {self.message!r})"


class ServiceError(TossupError):
    """A request the services refuse (unknown code, bad team, …): ``code`` one of
    :data:`SERVICE_CODES`, ``message`` for people, ``extra`` facts (often empty)."""
