"""Media and delay markers inside question text, and the media files they name (pure: no Django).

A tossup's text may hold, between its words, a **marker** for an image, an audio clip or a timed
pause. It is one token however many spaces it holds, revealed at its place like a word. Syntax::

    [[image:REF|ALT|lockout=SECONDS]]     an image; ALT (optional) is its text for screen readers
    [[audio:REF|ALT|lockout=SECONDS]]     an audio clip; ALT describes it
    [[delay:SECONDS]]                     the reading holds SECONDS (0 < s ≤ 60) before the next token

``REF`` is a path relative to the imported file's folder (``pics/mona.png``; no ``..``, not
absolute), or ``sha256:<64 hex>`` once stored: the importer reads the file, stores it by its
content hash and rewrites the marker to the stored form, which adds ``mime=TYPE``. ``lockout``
(optional, 0 ≤ s ≤ 60): seconds after the token's reveal during which nobody may buzz. Fields
other than ``lockout=``/``mime=`` are the ALT text (at most one); ``|`` and ``]]`` cannot appear
in it. Other double brackets are text (qbreader writes pronunciations as ``[[“VOT-seck”]]``); a
marker that never closes is an error.

qb-tournament-runner packets (``formats.runner``) write ``<multimodal type="img|audio|delay"
hash="H" displayText="…">`` instead; the asset is the one file ``img/H.*`` (``audio/H.*``) next to
``tossups.csv``. :func:`runner_markers` turns those tags into markers: images and audio get the
runner's default reveal lockout (``RUNNER_LOCKOUT``, its ``multimodal_reveal_lockout_seconds``)
unless the tag has ``lockout="…"``, a delay the tag's ``duration="…"`` or ``RUNNER_DELAY`` (the
runner's delay token carries no length; this default is ours).
"""

from __future__ import annotations

import hashlib
import mimetypes
import re
from dataclasses import dataclass, replace
from pathlib import Path, PurePosixPath

MEDIA_KINDS = ("image", "audio")
KINDS = (*MEDIA_KINDS, "delay")
MAX_SECONDS = 60.0
#: Largest media file accepted (bytes).
MAX_MEDIA_BYTES = 20 * 1024 * 1024
RUNNER_LOCKOUT = 5.0
RUNNER_DELAY = 2.0
MARKER_START_RE = re.compile(r"\[\[\s*(?:image|audio|delay)\s*:", re.I)
SHA256_RE = re.compile(r"sha256:([0-9a-f]{64})")
RUNNER_TAG_RE = re.compile(r"<multimodal\s+([^>]*)>", re.I)
RUNNER_ATTR_RE = re.compile(r"([A-Za-z_][\w-]*)\s*=\s*\"([^\"]*)\"")
RUNNER_KINDS = {"img": "image", "audio": "audio", "delay": "delay"}


class MarkerError(ValueError):
    """A malformed marker; ``str`` is the reason (callers add the file and line)."""


@dataclass(frozen=True)
class Marker:
    """One parsed marker: ``kind`` image|audio|delay; ``ref`` a relative path or ``sha256:<hex>``
    (image/audio; "" for a delay); ``alt`` text; ``lockout`` and ``duration`` in seconds; ``mime``
    the stored file's type ("" until stored)."""

    kind: str
    ref: str = ""
    alt: str = ""
    lockout: float = 0.0
    duration: float = 0.0
    mime: str = ""

    @property
    def sha256(self) -> str | None:
        """The content hash of a stored marker, else None."""
        m = SHA256_RE.fullmatch(self.ref)
        return m.group(1) if m else None

    def text(self) -> str:
        """The marker as written in question text (parses back to an equal marker)."""
        if self.kind == "delay":
            return f"[[delay:{_num(self.duration)}]]"
        fields = [f"{self.kind}:{self.ref}"]
        if self.alt:
            fields.append(self.alt)
        if self.lockout:
            fields.append(f"lockout={_num(self.lockout)}")
        if self.mime:
            fields.append(f"mime={self.mime}")
        return "[[" + "|".join(fields) + "]]"


def _num(x: float) -> str:
    return str(int(x)) if float(x).is_integer() else repr(float(x))


def _seconds(value: str, what: str, *, positive: bool) -> float:
    try:
        x = float(value)
    except ValueError:
        raise MarkerError(f"{what} must be a number of seconds, got {value!r}") from None
    if not (0 < x <= MAX_SECONDS if positive else 0 <= x <= MAX_SECONDS):
        low = "> 0" if positive else "≥ 0"
        raise MarkerError(f"{what} must be {low} and ≤ {MAX_SECONDS:g} seconds, got {value!r}")
    return x


def parse_marker(body: str) -> Marker:
    """The marker whose text between ``[[`` and ``]]`` is ``body``. Raises MarkerError."""
    head, *rest = body.split("|")
    kind, colon, ref = head.partition(":")
    kind, ref = kind.strip().lower(), ref.strip()
    if not colon or kind not in KINDS:
        raise MarkerError(
            f"unknown marker [[{body}]]: expected [[image:…]], [[audio:…]] or [[delay:SECONDS]]"
        )
    if kind == "delay":
        if rest:
            raise MarkerError(f"a delay marker takes only its seconds: [[{body}]]")
        return Marker("delay", duration=_seconds(ref, "a delay", positive=True))
    if not ref:
        raise MarkerError(f"{kind} marker without a file: [[{body}]]")
    if not SHA256_RE.fullmatch(ref):
        p = PurePosixPath(ref.replace("\\", "/"))
        if p.is_absolute() or ".." in p.parts or re.match(r"^[A-Za-z]+:", ref):
            raise MarkerError(f"{kind} file must be a relative path inside the packet's folder, got {ref!r}")
    alt, lockout, mime = "", 0.0, ""
    for raw in rest:
        field = raw.strip()
        key, eq, value = field.partition("=")
        if eq and key.strip() == "lockout":
            lockout = _seconds(value.strip(), "lockout", positive=False)
        elif eq and key.strip() == "mime":
            mime = value.strip()
        elif alt:
            raise MarkerError(f"more than one alt text in [[{body}]]")
        else:
            alt = field
    return Marker(kind, ref, alt, lockout, 0.0, mime)


def split_text(text: str) -> list[str | Marker]:
    """``text`` as whitespace words and markers, in order. Raises MarkerError for a malformed or
    unclosed marker."""
    out: list[str | Marker] = []
    at = 0
    for m in MARKER_START_RE.finditer(text):
        if m.start() < at:  # inside the marker just read (its alt text names a kind)
            continue
        close = text.find("]]", m.end())
        if close < 0:
            raise MarkerError(f"unclosed marker {text[m.start() : m.start() + 40]!r}…: expected ]]")
        out += text[at : m.start()].split()
        out.append(parse_marker(text[m.start() + 2 : close]))
        at = close + 2
    out += text[at:].split()
    return out


def has_markers(text: str) -> bool:
    """Whether ``text`` holds a marker (or a runner tag): the cheap test before parsing."""
    return ("[[" in text and MARKER_START_RE.search(text) is not None) or "<multimodal" in text.lower()


def runner_markers(text: str, folder: Path) -> tuple[str, list[Marker]]:
    """``text`` with each runner ``<multimodal …>`` tag replaced by a marker whose ``ref`` is the
    asset's path relative to ``folder`` (see the module docstring). Raises MarkerError for an
    unknown type, a missing hash, or no or several assets for a hash."""
    found: list[Marker] = []

    def one(m: re.Match[str]) -> str:
        attrs = dict(RUNNER_ATTR_RE.findall(m.group(1)))
        kind = RUNNER_KINDS.get(attrs.get("type", "").lower())
        if kind is None:
            raise MarkerError(f"multimodal tag type must be img, audio or delay: {m.group(0)}")
        if kind == "delay":
            marker = Marker(
                "delay", duration=_seconds(attrs.get("duration", str(RUNNER_DELAY)), "a delay", positive=True)
            )
        else:
            digest = attrs.get("hash", "").strip()
            sub = "img" if kind == "image" else "audio"
            if not digest or "/" in digest or "\\" in digest or digest.startswith("."):
                raise MarkerError(f"multimodal {kind} tag without a usable hash: {m.group(0)}")
            assets = (
                sorted((folder / sub).glob(f"{glob_escape(digest)}.*")) if (folder / sub).is_dir() else []
            )
            if len(assets) != 1:
                what = "no asset" if not assets else f"{len(assets)} assets"
                raise MarkerError(f"{what} for hash {digest!r} in {folder / sub}")
            lockout = _seconds(attrs.get("lockout", str(RUNNER_LOCKOUT)), "lockout", positive=False)
            alt = attrs.get("displayText", "").replace("|", "/").replace("]]", "")
            marker = Marker(kind, f"{sub}/{assets[0].name}", alt.strip(), lockout)
        found.append(marker)
        return " " + marker.text() + " "

    return RUNNER_TAG_RE.sub(one, text), found


def glob_escape(name: str) -> str:
    """``name`` with glob metacharacters escaped."""
    return re.sub(r"([*?\[])", r"[\1]", name)


@dataclass(frozen=True)
class MediaBlob:
    """A media file read for import: its content hash, MIME type and bytes."""

    sha256: str
    mime: str
    data: bytes


def read_media(folder: Path, marker: Marker) -> MediaBlob:
    """Read the file a path marker names, relative to ``folder``. Raises MarkerError for a missing,
    empty or too large file, a path leaving ``folder`` (also through a link), or a type that is not
    the marker's kind (by file name: image/* for an image, audio/* for audio)."""
    root = folder.resolve()
    path = (folder / marker.ref).resolve()
    if not path.is_relative_to(root):
        raise MarkerError(f"{marker.kind} file {marker.ref!r} is outside the packet's folder")
    if not path.is_file():
        raise MarkerError(f"{marker.kind} file {marker.ref!r} not found in {folder}")
    size = path.stat().st_size
    if not 0 < size <= MAX_MEDIA_BYTES:
        raise MarkerError(
            f"{marker.kind} file {marker.ref!r} is empty or larger than {MAX_MEDIA_BYTES} bytes"
        )
    mime = mimetypes.guess_type(path.name)[0] or ""
    if not mime.startswith(marker.kind + "/"):
        raise MarkerError(
            f"{marker.kind} file {marker.ref!r} has type {mime or 'unknown'}, not {marker.kind}/*"
        )
    data = path.read_bytes()
    return MediaBlob(hashlib.sha256(data).hexdigest(), mime, data)


def store_markers(text: str, folder: Path, blobs: dict[str, MediaBlob], *, runner: bool = False) -> str:
    """``text`` with every path marker read (:func:`read_media`) and rewritten to its stored form
    (``sha256:…`` and ``mime=``); the files land in ``blobs`` by hash. With ``runner``, runner tags
    are turned into markers first. Text without markers is returned as it is. Raises MarkerError."""
    if not has_markers(text):
        return text
    if runner:
        text, _ = runner_markers(text, folder)
    parts: list[str] = []
    for piece in split_text(text):
        if isinstance(piece, str):
            parts.append(piece)
            continue
        if piece.kind != "delay" and piece.sha256 is None:
            blob = read_media(folder, piece)
            blobs.setdefault(blob.sha256, blob)
            piece = replace(piece, ref=f"sha256:{blob.sha256}", mime=blob.mime)
        parts.append(piece.text())
    return " ".join(parts)
