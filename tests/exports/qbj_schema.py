"""A JSON Schema for QBJ files, built at test time from the quizbowl/schema GraphQL types in
``../shared/reference/qbj-schema/`` (never copied into the repo), and a validator for whole files.

The serialization rules (serialization.mdx) on top of the types: ``{"version", "objects"}`` at the top
level, every top-level object carries its ``type``, any object may be replaced by ``{"$ref": id}``,
``id`` is optional unless referenced, exactly one ``Tournament``, ids unique, every ``$ref`` defined."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from django.conf import settings

SCHEMA_DIR = Path(settings.SHARED_DATA_DIR).parent / "reference" / "qbj-schema"
SCALARS = {
    "Int": "integer",
    "Float": "number",
    "String": "string",
    "ID": "string",
    "Boolean": "boolean",
    "Date": "string",
}
REF = {
    "type": "object",
    "properties": {"$ref": {"type": "string"}},
    "required": ["$ref"],
    "additionalProperties": False,
}


def json_schema(schema_dir: Path = SCHEMA_DIR) -> dict[str, Any]:
    import graphql

    sdl = "\n".join(p.read_text(encoding="utf-8") for p in sorted(schema_dir.glob("*.graphql")))
    gql = graphql.build_schema(sdl)

    def field(t: Any) -> dict[str, Any]:
        t = graphql.get_nullable_type(t)
        if graphql.is_list_type(t):
            return {"type": "array", "items": field(t.of_type)}
        if graphql.is_enum_type(t):
            return {"enum": list(t.values)}
        if graphql.is_scalar_type(t):
            return {"type": SCALARS[t.name]}
        return {"anyOf": [{"$ref": f"#/$defs/{t.name}"}, REF]}

    defs: dict[str, Any] = {}
    for name, t in gql.type_map.items():
        if not graphql.is_object_type(t) or name.startswith("__") or name == "Query":
            continue
        props = {f: field(ft.type) for f, ft in t.fields.items()}
        props["type"] = {"const": name}
        defs[name] = {
            "type": "object",
            "properties": props,
            "required": [f for f, ft in t.fields.items() if graphql.is_non_null_type(ft.type) and f != "id"],
            "additionalProperties": False,
        }
    typed = [
        {
            "allOf": [
                {"$ref": f"#/$defs/{name}"},
                {"required": ["type"], "properties": {"type": {"const": name}}},
            ]
        }
        for name in defs
    ]
    return {
        "$schema": "https://json-schema.org/draft/2020-12/schema",
        "$defs": defs,
        "type": "object",
        "properties": {
            "version": {"type": "string"},
            "objects": {"type": "array", "items": {"oneOf": typed}},
        },
        "required": ["version", "objects"],
        "additionalProperties": False,
    }


def problems(doc: dict[str, Any]) -> list[str]:
    """Every way ``doc`` breaks the schema or the serialization rules (empty when it conforms)."""
    import jsonschema

    validator = jsonschema.Draft202012Validator(json_schema())
    out = [f"{'/'.join(map(str, e.absolute_path))}: {e.message[:300]}" for e in validator.iter_errors(doc)][
        :20
    ]
    ids: list[str] = []
    refs: list[str] = []

    def walk(v: Any) -> None:
        if isinstance(v, dict):
            if "$ref" in v:
                refs.append(v["$ref"])
            elif "id" in v:
                ids.append(str(v["id"]))
            for x in v.values():
                walk(x)
        elif isinstance(v, list):
            for x in v:
                walk(x)

    walk(doc.get("objects"))
    tournaments = [o for o in doc.get("objects", []) if isinstance(o, dict) and o.get("type") == "Tournament"]
    if len(tournaments) != 1:
        out.append(f"{len(tournaments)} Tournament objects, expected 1")
    dup = {i for i in ids if ids.count(i) > 1} if len(ids) < 5000 else set()
    if len(set(ids)) != len(ids):
        out.append(f"ids defined twice: {sorted(dup)[:5]}")
    missing = set(refs) - set(ids)
    if missing:
        out.append(f"dangling references: {sorted(missing)[:5]}")
    return out
