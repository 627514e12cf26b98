"""The one error every reader in ``formats`` raises for a file it cannot read."""

from __future__ import annotations

from pathlib import Path

from competition.errors import TossupError


class FormatError(TossupError, ValueError):
    """A malformed or unreadable file: code ``bad_file``. ``str`` is ``"path:LINE: message"``, or
    ``"path: message"`` when the problem concerns the whole file (``line`` None).

    ``path`` is the file as given (str), ``line`` 1-based (a CSV header is line 1), ``message`` the
    reason without the location; ``extra`` is ``{"path", "line"}``. A ValueError too, so callers that
    catch ValueError keep working."""

    def __init__(self, path: str | Path, line: int | None, message: str) -> None:
        self.path = str(path)
        self.line = line
        super().__init__("bad_file", message, {"path": self.path, "line": line})
        where = self.path if line is None else f"{self.path}:{line}"
        self.args = (f"{where}: {message}",)  # str(): the location first, as every reader documents
