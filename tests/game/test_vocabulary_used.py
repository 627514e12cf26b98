"""Event names are compared by their typed names (``competition.game.EventName``), never as string
literals: a renamed or misspelt event then fails at import, not silently at run time.

The check walks the AST of the project's Python files (not the tests, the migrations, or the
bots' SDK, which is installed apart from the server and cannot import it) and refuses, with an
event name as a string literal: a comparison (``==``, ``!=``, ``is``, ``in``/``not in`` a literal
tuple, list or set), a ``match`` case, an ORM lookup (``event=`` / ``event__in=``) and a literal
collection made only of event names (a table of names kept beside the one definition). Only the
protocol tables may spell the names out: ``buzzer/protocol.py`` (client frames share some names,
e.g. ``buzz``), ``buzzer/protocol_doc.py`` and the engine's ``competition/game/events.py``.
"""

from __future__ import annotations

import ast
from collections.abc import Iterator
from pathlib import Path

from competition.game import EventName
from competition.vocabulary import UNCOUNTED_RULINGS, BuzzLogRuling, Ruling

ROOT = Path(__file__).resolve().parents[2]
NAMES = frozenset(str(name) for name in EventName)
PROTOCOL_TABLES = frozenset({"buzzer/protocol.py", "buzzer/protocol_doc.py", "competition/game/events.py"})
SKIPPED_DIRS = frozenset({"tests", "migrations", "sdk", "node_modules", "__pycache__"})


def project_files() -> Iterator[Path]:
    for path in sorted(ROOT.rglob("*.py")):
        parts = path.relative_to(ROOT).parts
        if any(p.startswith(".") or p in SKIPPED_DIRS for p in parts[:-1]):
            continue
        if "/".join(parts) not in PROTOCOL_TABLES:
            yield path


def _names_in(node: ast.AST) -> list[str]:
    """The event names ``node`` spells as string literals: itself, or the elements of a literal
    tuple, list or set."""
    if isinstance(node, ast.Constant):
        return [node.value] if node.value in NAMES else []
    if isinstance(node, ast.Tuple | ast.List | ast.Set):
        return [e.value for e in node.elts if isinstance(e, ast.Constant) and e.value in NAMES]
    return []


def _only_names(node: ast.AST) -> bool:
    """A literal tuple, list or set (or ``frozenset``/``set`` of one) of event names only."""
    if (
        isinstance(node, ast.Call)
        and isinstance(node.func, ast.Name)
        and node.func.id in ("frozenset", "set")
    ):
        return len(node.args) == 1 and _only_names(node.args[0])
    return (
        isinstance(node, ast.Tuple | ast.List | ast.Set)
        and bool(node.elts)
        and all(isinstance(e, ast.Constant) and e.value in NAMES for e in node.elts)
    )


def string_compares(tree: ast.AST) -> Iterator[tuple[int, str, list[str]]]:
    """``(line, what, names)`` for every use of an event name as a string literal the module
    docstring forbids."""
    for node in ast.walk(tree):
        if isinstance(node, ast.Compare):
            names: list[str] = []
            left = node.left
            for op, right in zip(node.ops, node.comparators, strict=True):
                if isinstance(op, ast.Eq | ast.NotEq | ast.Is | ast.IsNot):
                    names += [
                        n for side in (left, right) if isinstance(side, ast.Constant) for n in _names_in(side)
                    ]
                elif isinstance(op, ast.In | ast.NotIn) and not isinstance(right, ast.Constant):
                    names += _names_in(right)
                left = right
            if names:
                yield node.lineno, "comparison", names
        elif isinstance(node, ast.MatchValue) and (names := _names_in(node.value)):
            yield node.lineno, "match case", names
        elif (
            isinstance(node, ast.keyword)
            and node.arg in ("event", "event__in")
            and (names := _names_in(node.value))
        ):
            yield node.value.lineno, f"lookup {node.arg}=", names
        elif (
            isinstance(node, ast.Assign | ast.AnnAssign)
            and node.value is not None
            and _only_names(node.value)
        ):
            yield node.lineno, "table of names", _names_in(node.value) or ["…"]


def sites() -> list[str]:
    out = []
    for path in project_files():
        rel = path.relative_to(ROOT).as_posix()
        for line, what, names in string_compares(ast.parse(path.read_text(), rel)):
            out.append(f"{rel}:{line}: {what} with {', '.join(names)}")
    return out


def test_the_check_finds_each_form() -> None:
    source = """
if ev.event == "buzz_ruled": pass
if "words" != name: pass
if e["event"] in ("tossup_started", "tossup_ended"): pass
match ev.event:
    case "race": pass
    case "paused" | EventName.RESUMED: pass
rows = MatchEvent.objects.filter(event="match_ended")
KINDS = frozenset({"renamed", "team_added"})
ok = ev.event == EventName.BUZZ_RULED or "words" in data or kind == "answer" or status == "running"
"""
    found = sorted((line, what) for line, what, _ in string_compares(ast.parse(source)))
    assert found == [
        (2, "comparison"),
        (3, "comparison"),
        (4, "comparison"),
        (6, "match case"),
        (7, "match case"),
        (8, "lookup event="),
        (9, "table of names"),
    ]


def test_the_project_scan_reads_the_engine_and_the_edges() -> None:
    scanned = {p.relative_to(ROOT).as_posix() for p in project_files()}
    assert {
        "competition/exports.py",
        "competition/game/view.py",
        "buzzer/consumers.py",
        "irt/selectors.py",
    } <= scanned
    assert not any(s.startswith(("tests/", "sdk/")) or "/migrations/" in s for s in scanned)
    assert not PROTOCOL_TABLES & scanned


def test_no_event_name_is_compared_as_a_string() -> None:
    left = sites()
    assert not left, "compare with competition.game.EventName members:\n" + "\n".join(left)


def test_the_buzz_log_names_every_ruling() -> None:
    """``Buzz.ruling`` holds a ruling as the events give it, or one of the buzz log's own two."""
    assert {str(r) for r in Ruling} | {str(r) for r in UNCOUNTED_RULINGS} == {str(r) for r in BuzzLogRuling}
