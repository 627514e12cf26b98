"""The tokens of a tossup: a word (a plain ``str``, the common case) or a :class:`MediaToken`.

Every token counts the same for positions: a buzz's ``token_index`` and a tossup's ``token_count``
count words, images, audio clips and delays alike. A token is revealed at its place like a word;
a delay holds the reading for its ``duration`` instead of a word's 60/wpm; an image or audio
token with a ``lockout`` refuses every buzz (``media_lockout``) for that many seconds after its
reveal. In specs, events and views a media token is the dict of :meth:`MediaToken.to_dict`
(``kind`` tells it from a word); the file is served by Tossup at ``MEDIA_URL + sha256``.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from formats.media import KINDS, MAX_SECONDS, MEDIA_KINDS, Marker

#: Where Tossup serves a stored media file: ``MEDIA_URL + sha256`` (frontend/urls.py routes it).
MEDIA_URL = "/media/"


@dataclass(frozen=True)
class MediaToken:
    """An image, audio or delay token. ``sha256``: the file's content hash (image/audio; "" for a
    delay); ``mime`` its type; ``alt`` its text alternative; ``duration``: seconds a delay holds the
    reading (> 0, delay only); ``lockout``: seconds after the reveal during which no buzz is
    accepted (image/audio; 0 = none). Raises ValueError for a value out of range."""

    kind: str
    sha256: str = ""
    mime: str = ""
    alt: str = ""
    duration: float = 0.0
    lockout: float = 0.0

    def __post_init__(self) -> None:
        if self.kind not in KINDS:
            raise ValueError(f"media token kind must be one of {KINDS}, got {self.kind!r}")
        if self.kind in MEDIA_KINDS and len(self.sha256) != 64:
            raise ValueError(f"{self.kind} token needs a sha256 (64 hex digits), got {self.sha256!r}")
        if self.kind == "delay" and not 0 < self.duration <= MAX_SECONDS:
            raise ValueError(f"delay duration must be in (0, {MAX_SECONDS:g}] seconds, got {self.duration!r}")
        if not 0 <= self.lockout <= MAX_SECONDS:
            raise ValueError(f"lockout must be in [0, {MAX_SECONDS:g}] seconds, got {self.lockout!r}")

    @property
    def url(self) -> str:
        """The path Tossup serves the file at ("" for a delay)."""
        return MEDIA_URL + self.sha256 if self.sha256 else ""

    def to_dict(self) -> dict[str, Any]:
        """Wire and storage form: ``{"kind", "duration"}`` for a delay; ``{"kind", "url", "sha256",
        "mime", "alt", "lockout"}`` for image/audio."""
        if self.kind == "delay":
            return {"kind": "delay", "duration": self.duration}
        return {
            "kind": self.kind,
            "url": self.url,
            "sha256": self.sha256,
            "mime": self.mime,
            "alt": self.alt,
            "lockout": self.lockout,
        }

    @classmethod
    def from_dict(cls, d: dict[str, Any]) -> MediaToken:
        """Inverse of :meth:`to_dict` (``url`` is derived, so ignored)."""
        return cls(
            kind=d["kind"],
            sha256=d.get("sha256", ""),
            mime=d.get("mime", ""),
            alt=d.get("alt", ""),
            duration=float(d.get("duration", 0.0)),
            lockout=float(d.get("lockout", 0.0)),
        )

    @classmethod
    def from_marker(cls, marker: Marker) -> MediaToken:
        """The token of a stored marker. Raises ValueError for an image/audio marker that still
        names a path (its file was never imported)."""
        if marker.kind == "delay":
            return cls("delay", duration=marker.duration)
        if marker.sha256 is None:
            raise ValueError(f"{marker.kind} marker {marker.ref!r} names a file that was not imported")
        return cls(marker.kind, marker.sha256, marker.mime, marker.alt, 0.0, marker.lockout)


Token = str | MediaToken


def token_to_json(token: Token) -> str | dict[str, Any]:
    """A word as it is; a media token as its dict."""
    return token if isinstance(token, str) else token.to_dict()


def token_from_json(value: str | dict[str, Any]) -> Token:
    """Inverse of :func:`token_to_json`."""
    return value if isinstance(value, str) else MediaToken.from_dict(value)


def tokens_json(tokens: list[Token]) -> list[str | dict[str, Any]]:
    """:func:`token_to_json` of each token; a list of words only is returned as a copy unchanged."""
    return [t if isinstance(t, str) else t.to_dict() for t in tokens]


def words_text(tokens: list[Token] | list[str | dict[str, Any]]) -> str:
    """The words of ``tokens`` joined by spaces, media skipped (what the answer judge and text-only
    readers read)."""
    return " ".join(t for t in tokens if isinstance(t, str))
