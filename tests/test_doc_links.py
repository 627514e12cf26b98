"""Every relative link in README.md and docs/*.md points to a file that exists (and, with a
``#fragment``, to a heading of that file): a moved or renamed document breaks the build, not the
reader."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

BASE_DIR = Path(__file__).resolve().parents[1]
DOCUMENTS = [BASE_DIR / "README.md", *sorted((BASE_DIR / "docs").glob("*.md"))]

# [text](target) and ![alt](target), not inside code spans or fenced blocks (stripped first).
LINK = re.compile(r"!?\[[^\]]*\]\(([^)\s]+)(?:\s+\"[^\"]*\")?\)")
FENCE = re.compile(r"^```.*?^```", re.S | re.M)
CODE_SPAN = re.compile(r"`[^`\n]*`")
INDENTED_CODE = re.compile(r"^(?: {4}|\t).*$", re.M)


def _anchor(heading: str) -> str:
    """GitHub's id for a heading: lower case, punctuation dropped, spaces as hyphens."""
    text = CODE_SPAN.sub(lambda m: m.group(0).strip("`"), heading.strip().lower())
    return re.sub(r"[^\w\- ]", "", text).replace(" ", "-")


def _anchors(path: Path) -> set[str]:
    text = FENCE.sub("", path.read_text(encoding="utf-8"))
    return {_anchor(m.group(1)) for m in re.finditer(r"^#{1,6}\s+(.+?)\s*#*\s*$", text, re.M)}


def broken_links(path: Path) -> list[str]:
    """The relative links of the Markdown file ``path`` whose file (or heading) does not exist."""
    text = path.read_text(encoding="utf-8")
    text = INDENTED_CODE.sub("", CODE_SPAN.sub("", FENCE.sub("", text)))
    broken = []
    for target in LINK.findall(text):
        if re.match(r"^[a-z][a-z0-9+.-]*:", target):  # http:, https:, mailto:
            continue
        file_part, _, fragment = target.partition("#")
        linked = (path.parent / file_part).resolve() if file_part else path
        if not linked.exists() or (fragment and linked.suffix == ".md" and fragment not in _anchors(linked)):
            broken.append(target)
    return broken


@pytest.mark.parametrize("document", DOCUMENTS, ids=lambda p: str(p.relative_to(BASE_DIR)))
def test_every_relative_link_resolves(document: Path):
    assert broken_links(document) == []


def test_the_check_finds_a_missing_file_and_a_missing_heading(tmp_path: Path):
    (tmp_path / "there.md").write_text("# A heading\n", encoding="utf-8")
    doc = tmp_path / "doc.md"
    doc.write_text(
        "[ok](there.md) [ok too](there.md#a-heading) [web](https://example.org/x.md)\n"
        "[gone](missing.md#top) ![gone too](images/none.png) [no such heading](there.md#nope)\n"
        "`[in code](not-a-link.md)`\n",
        encoding="utf-8",
    )
    assert broken_links(doc) == ["missing.md#top", "images/none.png", "there.md#nope"]
