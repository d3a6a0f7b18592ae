"""Answers checked against Ventrata's OCTO schemas for the capabilities Berth takes from them
(tests/octo/ventrata-offers-gifts.yaml, extracted from Ventrata's OpenAPI document; its
`x-source` names the file and its digest).

`validator(name, capability)` is a JSON Schema (2020-12) validator of the component `name`:
`$ref`s resolve to the extract's other components, `nullable: true` also allows null, and a
property marked `x-capability-data` with `required: true` for `capability` is required (the
capability was asked for)."""

from __future__ import annotations

from functools import cache
from pathlib import Path
from typing import Any

import jsonschema_rs
import yaml

EXTRACT = Path(__file__).resolve().parent / "octo" / "ventrata-offers-gifts.yaml"
DROPPED = {"nullable", "example", "examples", "description", "x-capability-data", "x-oapi-codegen-extra-tags",
           "x-go-type", "x-go-type-import", "discriminator", "format"}  # fmt: skip


@cache
def _schemas() -> dict[str, Any]:
    loaded: dict[str, Any] = yaml.safe_load(EXTRACT.read_text(encoding="utf-8"))
    return dict(loaded["components"]["schemas"])


def _schema(node: Any, capability: str | None) -> Any:
    if isinstance(node, list):
        return [_schema(item, capability) for item in node]
    if not isinstance(node, dict):
        return node
    out: dict[str, Any] = {}
    for key, value in node.items():
        if key == "$ref":
            out[key] = value.replace("#/components/schemas/", "#/$defs/")
        elif key == "properties":
            out[key] = {name: _schema(prop, capability) for name, prop in value.items()}
            required = list(node.get("required", []))
            for name, prop in value.items():
                marker = prop.get("x-capability-data") if isinstance(prop, dict) else None
                if marker and marker.get("required") and marker.get("capability") == capability:
                    required.append(name)
            if required:
                out["required"] = sorted(set(required))
        elif key not in DROPPED and key != "required":
            out[key] = _schema(value, capability)
    if node.get("nullable"):
        return {"anyOf": [out, {"type": "null"}]}
    return out


def validator(name: str, capability: str | None = None) -> Any:
    schemas = _schemas()
    schema = {
        "$schema": "https://json-schema.org/draft/2020-12/schema",
        "$defs": {key: _schema(value, capability) for key, value in schemas.items()},
        **_schema(schemas[name], capability),
    }
    return jsonschema_rs.validator_for(schema)


def problems(name: str, value: Any, capability: str | None = None) -> list[str]:
    """What in `value` does not fit the component `name` (empty: it fits)."""
    return [
        f"{'/'.join(str(p) for p in e.instance_path)}: {e.message}"
        for e in validator(name, capability).iter_errors(value)
    ]
