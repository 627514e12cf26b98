"""docs/PROTOCOL.md and docs/protocol.schema.json come from the tables the server validates and emits
with: they are current, and the schema agrees with the parser and with the engine's events."""

import json

import jsonschema
import pytest

from buzzer import protocol, protocol_doc
from competition import vocabulary
from competition.game import Answer, Buzz, Rule
from competition.vocabulary import Ruling, Verdict
from tests.game.support import HUMAN_A, HUMAN_B, T0, started

SCHEMA = protocol_doc.schema()


def is_valid(definition: str, instance: object) -> bool:
    schema = {k: v for k, v in SCHEMA.items() if k != "oneOf"} | {"$ref": f"#/$defs/{definition}"}
    return jsonschema.Draft202012Validator(schema).is_valid(instance)


def test_the_generated_doc_and_schema_are_current():
    assert protocol_doc.main(["--check"]) == 0, "run: python -m buzzer.protocol_doc"


def test_the_schema_is_a_valid_2020_12_schema():
    jsonschema.Draft202012Validator.check_schema(SCHEMA)


@pytest.mark.parametrize(
    ("frame", "definition"),
    [
        ({"type": "buzz", "question_id": 4, "token_index": 9, "client_time": 1.5, "ref": "a"}, "client.buzz"),
        ({"type": "flag", "question_id": 4, "problem": "ambiguity", "comment": "two answers"}, "client.flag"),
        ({"type": "command", "name": "rule", "verdict": "no_penalty"}, "command.rule"),
        ({"type": "command", "name": "speed", "wpm": 250, "command_id": "speed:{}@3"}, "command.speed"),
        ({"type": "resync", "after_seq": 12}, "client.resync"),
    ],
)
def test_frames_the_parser_accepts_are_valid_for_the_schema(frame, definition):
    role = protocol.FRAMES[frame["type"]].roles[0]
    protocol.parse(json.dumps(frame), role)
    assert is_valid(definition, frame)


@pytest.mark.parametrize(
    ("frame", "definition"),
    [
        ({"type": "buzz", "question_id": 4}, "client.buzz"),  # token_index missing
        ({"type": "flag", "question_id": 4, "problem": "boring"}, "client.flag"),
        ({"type": "command", "name": "rule", "verdict": "maybe"}, "command.rule"),
        ({"type": "command", "name": "speed", "wpm": 5}, "command.speed"),
        ({"type": "flag", "question_id": 4, "problem": "ambiguity", "comment": "x" * 1001}, "client.flag"),
    ],
)
def test_frames_the_parser_refuses_are_invalid_for_the_schema_too(frame, definition):
    role = protocol.FRAMES[frame["type"]].roles[0]
    with pytest.raises(protocol.ProtocolError):
        protocol.parse(json.dumps(frame), role)
    assert not is_valid(definition, frame)


def test_the_engines_events_match_their_schemas():
    d = started()
    d.run_until(T0 + 2)
    d.do(Buzz(HUMAN_A, 100, 2), T0 + 2.1)
    d.run_until(T0 + 2.3)
    d.do(Answer(HUMAN_A, 100, "nope", Verdict.NEEDS_MODERATOR), T0 + 2.5)
    d.do(Rule(Verdict.REJECT), T0 + 3)
    d.run_until(T0 + 5)
    d.do(Buzz(HUMAN_B, 100, 4), T0 + 5.1)
    d.run_until(T0 + 5.3)
    d.do(Answer(HUMAN_B, 100, "yes", Verdict.ACCEPT), T0 + 5.5)
    d.do(Rule(Verdict.ACCEPT), T0 + 6)
    d.run_until(T0 + 60)
    d.run_until(T0 + 200)
    typed = {cls.EVENT for cls in protocol_doc.payload_classes()}
    seen = set()
    for _, event in d.log:
        frame = {"type": "event", "seq": 1, "event": event.event, "data": json.loads(json.dumps(event.data))}
        assert is_valid("server.event", frame), frame
        if event.event in typed:
            seen.add(event.event)
            assert is_valid(f"event.{event.event}", frame["data"]), frame
    # The run exercised the events a tablet lives on.
    assert {"words", "buzz", "buzz_ruled", "tossup_ended", "bonus_started", "bonus_part"} <= seen
    bad = {"type": "event", "seq": 1, "event": "buzz_ruled", "data": {"question_id": "x"}}
    assert not is_valid("server.event", bad)


def test_one_mapping_from_a_verdict_to_a_ruling():
    assert [Ruling.of(v) for v in ("accept", "reject", "no_penalty")] == ["correct", "wrong", "no_penalty"]
    for undecided in ("prompt", "needs_moderator", "maybe"):
        with pytest.raises(ValueError):
            Ruling.of(undecided)
    assert set(vocabulary.MODERATOR_VERDICTS) == set(protocol.COMMANDS["rule"].fields["verdict"].choices)
    assert all(p.label for p in vocabulary.FlagProblem)
