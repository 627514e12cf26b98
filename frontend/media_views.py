"""Files the pages load from this server: a multimodal tossup's image or audio (once revealed) and
plotly.js (no CDN: the pages work offline)."""

from __future__ import annotations

from pathlib import Path

import plotly
from django.http import FileResponse, Http404, HttpRequest
from django.views.decorators.http import require_GET

from competition.models import MediaFile
from competition.roles import is_organiser

PLOTLY_JS = Path(plotly.__file__).resolve().parent / "package_data" / "plotly.min.js"


def plotly_js(request: HttpRequest) -> FileResponse:
    """plotly.js from the installed ``plotly`` package (no CDN: the pages work offline)."""
    response = FileResponse(PLOTLY_JS.open("rb"), content_type="text/javascript")
    response["Cache-Control"] = "public, max-age=86400"
    return response


@require_GET
def media_file(request: HttpRequest, sha256: str) -> FileResponse:
    """A multimodal tossup's image or audio (``competition.models.MediaFile``) by its content hash,
    at ``competition.game.MEDIA_URL + sha256``. 404 for an unknown hash, and for a file no match
    has revealed yet unless the user is a logged-in organiser (the moderator's preview). Served
    with its stored type, ``nosniff`` and a sandboxing CSP (an SVG image cannot run script here)."""
    media = MediaFile.objects.filter(sha256=sha256).first()
    if media is None or not (media.revealed or is_organiser(request.user)):
        raise Http404("no such media file")
    response = FileResponse(media.file.open("rb"), content_type=media.mime)
    response["X-Content-Type-Options"] = "nosniff"
    response["Content-Security-Policy"] = "default-src 'none'; style-src 'unsafe-inline'; sandbox"
    # The content never changes (the URL is its hash); private: the reveal gate is per user.
    response["Cache-Control"] = "private, max-age=31536000, immutable"
    return response
