"""The one error every reader in ``formats`` raises for a file it cannot read."""

from __future__ import annotations

from pathlib import Path


class FormatError(ValueError):
    """A malformed or unreadable file. ``str`` is ``"path:LINE: message"``, or ``"path: message"``
    when the problem concerns the whole file (``line`` None).

    ``path`` is the file as given (str), ``line`` 1-based (a CSV header is line 1), ``message`` the
    reason without the location. A ValueError, so callers that catch ValueError keep working."""

    def __init__(self, path: str | Path, line: int | None, message: str) -> None:
        self.path = str(path)
        self.line = line
        self.message = message
        where = self.path if line is None else f"{self.path}:{line}"
        super().__init__(f"{where}: {message}")
