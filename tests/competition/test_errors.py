"""The one error family (competition.errors): every layer's refusal is a TossupError with a
catalogued code, and each edge (websocket, HTTP, management commands) translates it one way."""

from __future__ import annotations

import ast
import json
import re
from pathlib import Path

import pytest
from django.core.management import call_command
from django.core.management.base import CommandError

from buzzer import protocol
from buzzer.consumers import error_frame
from competition import game, services
from competition.errors import RULE_CODES, SERVICE_CODES, TossupError
from formats import FormatError

ROOT = Path(__file__).resolve().parents[2]


def _literal_codes(expr: ast.expr) -> set[str]:
    """The codes a code argument can take: a string literal, or either branch of ``a if c else b``."""
    if isinstance(expr, ast.Constant) and isinstance(expr.value, str):
        return {expr.value}
    if isinstance(expr, ast.IfExp):
        return _literal_codes(expr.body) | _literal_codes(expr.orelse)
    raise AssertionError(f"line {expr.lineno}: a code that is not a literal: {ast.unparse(expr)}")


def _codes_raised(paths: list[Path], cls: str) -> set[str]:
    """The codes given as the first argument of every ``cls(...)`` call in ``paths``."""
    codes: set[str] = set()
    for path in paths:
        for node in ast.walk(ast.parse(path.read_text(), str(path))):
            if (
                isinstance(node, ast.Call)
                and getattr(node.func, "id", getattr(node.func, "attr", None)) == cls
            ):
                assert node.args, f"{path}:{node.lineno}: {cls} without a code"
                codes |= _literal_codes(node.args[0])
    return codes


def test_every_rule_code_the_engine_raises_is_catalogued_and_every_catalogued_one_is_raised() -> None:
    raised = _codes_raised(sorted((ROOT / "competition" / "game").glob("*.py")), "RuleViolation")
    assert raised == set(RULE_CODES)


def test_every_service_code_is_catalogued() -> None:
    raised = _codes_raised([ROOT / "competition" / "services.py"], "ServiceError")
    assert raised and raised <= set(SERVICE_CODES)


def test_the_websocket_codes_cover_the_edge_the_rules_and_the_service_and_drop_rejected() -> None:
    assert set(protocol.ERROR_CODES) == {*protocol.FRAME_ERROR_CODES, *RULE_CODES, *SERVICE_CODES}
    assert len(protocol.ERROR_CODES) == len(set(protocol.ERROR_CODES))
    assert "rejected" not in protocol.ERROR_CODES


def test_protocol_md_lists_every_error_code() -> None:
    doc = (ROOT / "docs" / "PROTOCOL.md").read_text()
    section = doc[doc.index("## Errors") :]
    section = section[: section.index("\n## ", 1)]
    listed = set(re.findall(r"^\| `([a-z_]+)` \|", section, flags=re.M))
    assert listed == set(protocol.ERROR_CODES)


def test_members_keep_their_names_and_attributes() -> None:
    rule = game.RuleViolation("locked_out", "another buzz is being answered")
    assert isinstance(rule, TossupError)
    assert (rule.code, rule.message, rule.extra, str(rule)) == (
        "locked_out",
        "another buzz is being answered",
        {},
        "another buzz is being answered",
    )
    assert not hasattr(rule, "reason")  # one name for the code
    # Without a message, people read the code's catalogued description, never the bare code.
    bare = game.RuleViolation("team_already_buzzed")
    assert bare.message == str(bare) == RULE_CODES["team_already_buzzed"]

    service = services.ServiceError("seat_taken", "that name is already seated")
    assert isinstance(service, TossupError) and (service.code, service.message) == (
        "seat_taken",
        "that name is already seated",
    )

    frame = protocol.ProtocolError("invalid", "field 'x' is missing", ref=7)
    assert isinstance(frame, TossupError) and (frame.code, frame.ref) == ("invalid", 7)

    bad = FormatError("q.csv", 3, "empty 'id'")
    assert isinstance(bad, TossupError) and isinstance(bad, ValueError)
    assert (str(bad), bad.message, bad.code) == ("q.csv:3: empty 'id'", "empty 'id'", "bad_file")
    assert bad.extra == {"path": "q.csv", "line": 3}
    assert str(FormatError("q.csv", None, "cannot open")) == "q.csv: cannot open"


def test_one_body_shape_with_extra_only_when_there_is_some() -> None:
    assert TossupError("not_live").to_dict() == {"code": "not_live", "message": "not_live"}
    with_facts = TossupError("bad_value", "too fast", {"max_wpm": 1000})
    assert with_facts.to_dict() == {"code": "bad_value", "message": "too fast", "extra": {"max_wpm": 1000}}
    # The websocket frame is the same body plus type and the client's ref.
    assert json.loads(error_frame(game.RuleViolation("locked_out", "busy"), ref="b1")) == {
        "type": "error",
        "code": "locked_out",
        "message": "busy",
        "ref": "b1",
    }
    assert json.loads(error_frame(with_facts, ref=None))["extra"] == {"max_wpm": 1000}


@pytest.mark.django_db
def test_a_management_command_reports_the_refusal_with_its_code() -> None:
    with pytest.raises(CommandError, match=r"no tossup with id 999999 \(invalid\)$"):
        call_command("flag_question", "999999", "--problem", "ambiguity")
