"""The management-command edge of the error family (``competition.errors``)."""

from __future__ import annotations

from django.core.management.base import CommandError

from competition.errors import TossupError


def command_error(error: TossupError) -> CommandError:
    """The ``CommandError`` for a refusal: ``"<str(error)> (<code>)"`` — the message (a file error's
    ``path:LINE: message``) then the machine code; the command exits non-zero with that line."""
    return CommandError(f"{error} ({error.code})")
