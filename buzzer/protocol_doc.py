"""docs/PROTOCOL.md's generated sections and docs/protocol.schema.json, from the tables the server
validates and emits with (pure: no Django).

Sources: client frames and moderator commands — ``buzzer.protocol.FRAMES`` / ``COMMANDS`` (what
``protocol.parse`` checks); error codes — ``protocol.ERROR_CODES`` and ``competition.errors``;
values — ``competition.vocabulary``; events — the typed payloads of ``competition.game.events``.
The hand-written parts of PROTOCOL.md lie outside ``<!-- generated: NAME -->`` … ``<!-- /generated -->``.

    python -m buzzer.protocol_doc           # rewrite both files
    python -m buzzer.protocol_doc --check   # exit 1 when either is stale (tests run this)
"""

from __future__ import annotations

import argparse
import dataclasses
import json
import re
import sys
import types
import typing
from collections.abc import Callable, Iterator
from enum import StrEnum
from pathlib import Path
from typing import Any

from buzzer import protocol
from competition import errors, vocabulary
from competition.game import events

DOCS = Path(__file__).resolve().parent.parent / "docs"
PROTOCOL_MD = DOCS / "PROTOCOL.md"
SCHEMA_JSON = DOCS / "protocol.schema.json"
SCHEMA_ID = "https://tossup.invalid/protocol.schema.json"
_JSON_TYPES = {int: "integer", float: "number", str: "string", bool: "boolean"}
_ENUMS: tuple[type[StrEnum], ...] = (
    vocabulary.Verdict,
    vocabulary.Ruling,
    vocabulary.BuzzLogRuling,
    vocabulary.TossupOutcome,
    vocabulary.MatchStatus,
    vocabulary.Phase,
    vocabulary.SeatKind,
    vocabulary.Role,
    vocabulary.Audience,
    vocabulary.FlagProblem,
    events.EventName,
)


def _json_type(types_: tuple[type, ...]) -> str:
    return "number" if float in types_ else _JSON_TYPES[types_[0]]


def payload_classes() -> Iterator[type[events.Payload]]:
    """Every typed event payload, in the order events.py declares them."""
    for value in vars(events).values():
        if isinstance(value, type) and issubclass(value, events.Payload) and value is not events.Payload:
            yield value


def _doc(obj: Any) -> str:
    """An object's own docstring as one line of Markdown ("" for dataclasses' generated
    signatures): reST literals and roles become code spans."""
    doc = obj.__dict__.get("__doc__") or ""
    if doc.startswith(f"{obj.__name__}("):
        return ""
    doc = re.sub(r":\w+:`([^`]+)`", r"`\1`", " ".join(doc.split()))
    return doc.replace("``", "`")


def _cell(text: str) -> str:
    """``text`` safe inside a Markdown table cell."""
    return text.replace("|", "\\|")


# --- JSON Schema -------------------------------------------------------------------------------


def _field_schema(field: protocol.Field) -> dict[str, Any]:
    out: dict[str, Any] = {"type": _json_type(field.types)}
    if field.doc:
        out["description"] = field.doc
    if field.choices:
        out["enum"] = [str(c) for c in field.choices]
    if field.max_length is not None:
        out["maxLength"] = field.max_length
    if field.minimum is not None:
        out["minimum"] = field.minimum
    if field.maximum is not None:
        out["maximum"] = field.maximum
    if out["type"] in ("integer", "number") and field.minimum is None:
        out["exclusiveMinimum"], out["exclusiveMaximum"] = -protocol.MAX_NUMBER, protocol.MAX_NUMBER
    return out


def _object(
    const: dict[str, str], fields: dict[str, protocol.Field], doc: str, extra: dict[str, Any] | None = None
) -> dict[str, Any]:
    props: dict[str, Any] = {k: {"const": v} for k, v in const.items()}
    props |= extra or {}
    props |= {name: _field_schema(f) for name, f in fields.items()}
    required = [*const, *(name for name, f in fields.items() if f.required)]
    return {"type": "object", "description": doc, "properties": props, "required": required}


def _annotation_schema(tp: Any) -> dict[str, Any]:
    args = typing.get_args(tp)
    if isinstance(tp, types.UnionType) or typing.get_origin(tp) is typing.Union:
        inner = [_annotation_schema(a) for a in args if a is not type(None)]
        schema = inner[0] if len(inner) == 1 else {"anyOf": inner}
        return {**schema, "type": [schema["type"], "null"]} if "type" in schema else schema
    origin = typing.get_origin(tp)
    if origin is list:
        return {"type": "array", "items": _annotation_schema(args[0]) if args else {}}
    if origin is dict:
        return {"type": "object"}
    if tp in _JSON_TYPES:
        return {"type": _JSON_TYPES[tp]}
    return {}


def event_schemas() -> dict[str, dict[str, Any]]:
    """``{event type: schema of its data}`` for every typed payload (two payloads may share a
    type, e.g. ``awaiting_ruling`` for tossups and bonus parts: then any of them). A field with a
    default (e.g. ``buzz_ruled``'s ``answerer_id``) is optional: the payload leaves it out when unset."""
    out: dict[str, list[dict[str, Any]]] = {}
    for cls in payload_classes():
        hints = typing.get_type_hints(cls)
        fields = dataclasses.fields(typing.cast(Any, cls))
        names = [f.name for f in fields]
        unset = (dataclasses.MISSING, dataclasses.MISSING)
        schema = {
            "type": "object",
            "description": f"{_doc(cls)} Audience: {cls.AUDIENCE}.".strip(),
            "properties": {n: _annotation_schema(hints[n]) for n in names},
            "required": [f.name for f in fields if (f.default, f.default_factory) == unset],
        }
        out.setdefault(cls.EVENT, []).append(schema)
    return {k: v[0] if len(v) == 1 else {"anyOf": v} for k, v in out.items()}


def _server_frame(
    kind: str, fields: dict[str, Any], optional: tuple[str, ...] = (), doc: str = ""
) -> dict[str, Any]:
    """The schema of a server frame ``{"type": kind, **fields}``; all fields required but ``optional``."""
    out: dict[str, Any] = {"type": "object"}
    if doc:
        out["description"] = doc
    out["properties"] = {"type": {"const": kind}, **fields}
    out["required"] = ["type", *(name for name in fields if name not in optional)]
    return out


def schema() -> dict[str, Any]:
    """The JSON Schema (2020-12) of every frame, both ways: ``$defs`` holds one definition per
    client frame type, moderator command, server frame and event payload."""
    ref = {"description": "echoed in the ack/error", "type": ["string", "integer", "null"]}
    defs: dict[str, Any] = {}
    for kind, spec in protocol.FRAMES.items():
        if kind != "command":
            defs[f"client.{kind}"] = _object({"type": kind}, spec.fields, spec.doc, {"ref": ref})
    for name, cmd in protocol.COMMANDS.items():
        fields = {**protocol.FRAMES["command"].fields, **cmd.fields}
        fields.pop("name")
        defs[f"command.{name}"] = _object({"type": "command", "name": name}, fields, cmd.doc, {"ref": ref})
    events = event_schemas()
    for kind, data in events.items():
        defs[f"event.{kind}"] = data
    integer, number, obj = {"type": "integer"}, {"type": "number"}, {"type": "object"}
    defs["server.event"] = _server_frame(
        "event",
        {"seq": integer, "event": {"type": "string"}, "data": obj},
        doc="one log entry the connection may see",
    )
    defs["server.event"]["allOf"] = [
        {
            "if": {"properties": {"event": {"const": k}}},
            "then": {"properties": {"data": {"$ref": f"#/$defs/event.{k}"}}},
        }
        for k in events
    ]
    defs["server.error"] = _server_frame(
        "error",
        {
            "code": {"enum": list(protocol.ERROR_CODES)},
            "message": {"type": "string"},
            "ref": ref,
            "extra": obj,
        },
        optional=("extra",),
    )
    defs["server.ack"] = _server_frame(
        "ack", {"ref": ref, "seq": integer, "duplicate": {"type": "boolean"}}, optional=("duplicate",)
    )
    defs["server.snapshot"] = _server_frame("snapshot", {"seq": integer, "state": obj})
    defs["server.heartbeat"] = _server_frame("heartbeat", {"server_time": number, "seq": integer})
    defs["server.pong"] = _server_frame("pong", {"client_time": number, "server_time": number})
    seat = {
        "type": "object",
        "properties": {
            "player_id": integer,
            "state": {"enum": list(protocol.PRESENCE_STATES)},
            "connections": {"type": "integer", "minimum": 0},
            "last_seen": {"type": ["number", "null"]},
        },
        "required": ["player_id", "state", "connections", "last_seen"],
    }
    defs["server.presence"] = _server_frame(
        "presence",
        {"server_time": number, "seats": {"type": "array", "items": seat}},
        doc="seat connection states, to a moderator connection opened with presence=1",
    )
    for enum in _ENUMS:
        defs[f"vocabulary.{enum.__name__}"] = {"enum": [m.value for m in enum], "description": _doc(enum)}
    client = [{"$ref": f"#/$defs/{k}"} for k in defs if k.startswith(("client.", "command."))]
    server = [{"$ref": f"#/$defs/{k}"} for k in defs if k.startswith("server.")]
    return {
        "$schema": "https://json-schema.org/draft/2020-12/schema",
        "$id": SCHEMA_ID,
        "title": "Tossup websocket protocol (docs/PROTOCOL.md)",
        "description": "A frame from a client (oneOf the client/command definitions) or from the server.",
        "oneOf": [{"title": "client frame", "oneOf": client}, {"title": "server frame", "oneOf": server}],
        "$defs": defs,
    }


# --- markdown ----------------------------------------------------------------------------------


def _field_md(name: str, f: protocol.Field) -> str:
    bits = [_json_type(f.types)]
    if f.choices:
        bits = [" / ".join(f"`{c}`" for c in f.choices)]
    if f.minimum is not None:
        bits.append(f"{f.minimum:g}–{f.maximum:g}" if f.maximum is not None else f"≥ {f.minimum:g}")
    if f.max_length is not None:
        bits.append(f"≤ {f.max_length:,} chars")
    opt = "" if f.required else ", optional"
    return f"`{name}` ({', '.join(bits)}{opt}): {f.doc}"


def client_frames_md() -> str:
    lines = ["| `type` | who may send it | fields | what it does |", "|---|---|---|---|"]
    for kind, spec in protocol.FRAMES.items():
        fields = "; ".join(_field_md(n, f) for n, f in spec.fields.items()) or "—"
        lines.append(f"| `{kind}` | {', '.join(spec.roles)} | {_cell(fields)} | {_cell(spec.doc)} |")
    lines += ["", 'Moderator commands (`{"type": "command", "name": NAME, …fields}`):', ""]
    lines += ["| `name` | fields | what it does |", "|---|---|---|"]
    for name, cmd in protocol.COMMANDS.items():
        fields = "; ".join(_field_md(n, f) for n, f in cmd.fields.items()) or "—"
        lines.append(f"| `{name}` | {_cell(fields)} | {_cell(cmd.doc)} |")
    return "\n".join(lines)


def error_codes_md() -> str:
    lines = ["| code | from | meaning |", "|---|---|---|"]
    sources = (
        ("edge", protocol.FRAME_ERROR_CODES),
        ("service", errors.SERVICE_CODES),
        ("rules", errors.RULE_CODES),
    )
    seen: set[str] = set()
    for origin, table in sources:
        for code, meaning in table.items():
            if code not in seen:
                seen.add(code)
                lines.append(f"| `{code}` | {origin} | {_cell(meaning)} |")
    return "\n".join(lines)


def vocabulary_md() -> str:
    lines = ["| concept | values | where |", "|---|---|---|"]
    for enum in _ENUMS:
        values = ", ".join(f"`{m.value}`" if m.value else '`""`' for m in enum)
        lines.append(f"| `{enum.__name__}` | {values} | {_cell(_doc(enum))} |")
    return "\n".join(lines)


def events_md() -> str:
    lines = ["| `event` | audience | `data` fields | meaning |", "|---|---|---|---|"]
    for cls in payload_classes():
        fields = ", ".join(f.name for f in dataclasses.fields(typing.cast(Any, cls))) or "—"
        lines.append(f"| `{cls.EVENT}` | {cls.AUDIENCE} | {fields} | {_cell(_doc(cls))} |")
    return "\n".join(lines)


SECTIONS: dict[str, Callable[[], str]] = {
    "vocabulary": vocabulary_md,
    "client-frames": client_frames_md,
    "error-codes": error_codes_md,
    "events": events_md,
}
_BLOCK = re.compile(r"(<!-- generated: ([\w-]+) -->\n)(.*?)(<!-- /generated -->)", re.S)


def render_protocol_md(text: str) -> str:
    """``text`` with every generated block replaced by its current content. ValueError when a
    section is missing from the text or unknown."""
    found = {m.group(2) for m in _BLOCK.finditer(text)}
    if found != set(SECTIONS):
        raise ValueError(f"PROTOCOL.md generated blocks {sorted(found)} != {sorted(SECTIONS)}")
    return _BLOCK.sub(lambda m: f"{m.group(1)}{SECTIONS[m.group(2)]()}\n{m.group(4)}", text)


def render_schema() -> str:
    return json.dumps(schema(), indent=2, ensure_ascii=False) + "\n"


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--check", action="store_true", help="exit 1 if a generated file is stale")
    args = parser.parse_args(argv)
    wanted = {PROTOCOL_MD: render_protocol_md(PROTOCOL_MD.read_text()), SCHEMA_JSON: render_schema()}
    stale = [p for p, text in wanted.items() if not p.exists() or p.read_text() != text]
    if args.check:
        for p in stale:
            print(
                f"{p.relative_to(DOCS.parent)} is stale: run python -m buzzer.protocol_doc", file=sys.stderr
            )
        return 1 if stale else 0
    for p in stale:
        p.write_text(wanted[p])
        print(f"wrote {p.relative_to(DOCS.parent)}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
