"""Berth's answers checked against the official OCTO core OpenAPI document (tests/octo/).

`check(response, path, method, capabilities)` validates a response body against the schema the
core document gives that operation and status (OCTO files every error under "400"), and the
response headers it requires. The document is OpenAPI 3.0; its schemas are turned into JSON
Schema 2020-12 for the capabilities of the request:

- `nullable: true` becomes "or null";
- a property marked `x-capability-data` for a capability the request did not ask for must be
  absent (OCTO.md §1.5: capability keys are left out, not sent as null);
- an `octo/content` property marked required is required when `octo/content` is asked for.
  (`octo/pricing` presence is not taken from the document: it marks `pricingFrom` and `pricing`
  required on both options and units, while which of them appears follows `pricingPer` and
  whether the object is a listing or a booking, OCTO.md §6.2; their types are checked.)

Keys the core document does not name (other capabilities' fields) are allowed, as the core
schemas allow additional properties. Where the core document is silent or the project's sources
decide otherwise (OCTO.md says which source wins), the schemas are adjusted, each on purpose:
- `Contact.allowMarketing`, absent from core, is an optional boolean in the OCTO types
  (OCTO.md §3.9), so when present it must be a boolean;
- `CapabilityId` also takes the capability ids requirements.md names (`octo/resources`,
  `octo/rentals`, `vendor/mappings`): the requirements win over the core enum; and
  `octo/extras`, which issue 22 asks for from the Ventrata document (its CapabilityId lists it),
  and `octo/gifts`, which issue 51 asks for from the same document;
- `Option.availabilityLocalStartTimes` may be empty: an OPENING_HOURS option has no start
  times, and the OCTO validator warns unless it is `[]` (OCTO.md §3.3; core says at least 1).
"""

from __future__ import annotations

import hashlib
from functools import cache
from pathlib import Path
from typing import Any

import httpx
import jsonschema_rs
import yaml

DOCUMENT = Path(__file__).resolve().parent / "octo" / "octo-core.openapi.yaml"
SHA256 = "cd5cb533e506bf04e09bf08404c565e9180a7ffe3ae17a0e3cf84f7d1705bf33"  # tests/octo/README.md
CONTENT = "octo/content"
SCHEMA_LISTS = ("allOf", "anyOf", "oneOf")
REQUIREMENTS_CAPABILITIES = ["octo/resources", "octo/rentals", "vendor/mappings", "octo/extras", "octo/gifts"]
DROPPED = {"nullable", "example", "examples", "description", "x-capability-data", "discriminator"}


def document_digest() -> str:
    return hashlib.sha256(DOCUMENT.read_bytes()).hexdigest()


@cache
def document() -> dict[str, Any]:
    loaded: dict[str, Any] = yaml.safe_load(DOCUMENT.read_text(encoding="utf-8"))
    return loaded


def _property(prop: Any, capabilities: frozenset[str]) -> tuple[Any, bool]:
    """A property's JSON Schema, and whether the request's capabilities make it required."""
    marker = prop.get("x-capability-data") if isinstance(prop, dict) else None
    if marker is None:
        return _schema(prop, capabilities), False
    if marker["capability"] not in capabilities:
        return False, False
    return _schema(prop, capabilities), bool(marker["required"]) and marker["capability"] == CONTENT


def _schema(node: Any, capabilities: frozenset[str]) -> Any:
    if not isinstance(node, dict):
        return node
    out: dict[str, Any] = {}
    for key, value in node.items():
        if key in DROPPED:
            continue
        if key == "properties":
            out[key] = {}
            required = list(node.get("required", []))
            for name, prop in value.items():
                out[key][name], needed = _property(prop, capabilities)
                if needed and name not in required:
                    required.append(name)
            if required:
                out["required"] = required
        elif key in ("items", "additionalProperties", "not"):
            out[key] = _schema(value, capabilities)
        elif key in SCHEMA_LISTS:
            out[key] = [_schema(item, capabilities) for item in value]
        elif key != "required":
            out[key] = value
    if node.get("nullable"):
        return {"anyOf": [{"type": "null"}, out]}
    return out


@cache
def _components(capabilities: frozenset[str]) -> dict[str, Any]:
    schemas = {name: _schema(s, capabilities) for name, s in document()["components"]["schemas"].items()}
    schemas["Contact"]["properties"]["allowMarketing"] = {"type": "boolean"}
    schemas["CapabilityId"]["enum"] = [*schemas["CapabilityId"]["enum"], *REQUIREMENTS_CAPABILITIES]
    del schemas["Option"]["properties"]["availabilityLocalStartTimes"]["minItems"]
    return {"schemas": schemas}


def _validator(schema: Any, capabilities: frozenset[str]) -> Any:
    root = {
        "$schema": "https://json-schema.org/draft/2020-12/schema",
        "allOf": [_schema(schema, capabilities)],
        "components": _components(capabilities),
    }
    return jsonschema_rs.validator_for(root, validate_formats=True)


def _errors(found: Any, instance: Any) -> list[str]:
    return [
        f"{'/'.join(map(str, e.instance_path)) or '(root)'}: {e.message}" for e in found.iter_errors(instance)
    ]


@cache
def validator(path: str, method: str, status: int, capabilities: frozenset[str]) -> Any:
    answers = document()["paths"][path][method.lower()]["responses"]
    return _validator(answers[str(status)]["content"]["application/json"]["schema"], capabilities)


@cache
def _component_validator(name: str, capabilities: frozenset[str]) -> Any:
    return _validator({"$ref": f"#/components/schemas/{name}"}, capabilities)


def component_problems(instance: Any, name: str, capabilities: frozenset[str]) -> list[str]:
    """What in `instance` disagrees with the core schema `name` (empty: nothing)."""
    return _errors(_component_validator(name, capabilities), instance)


def required_headers(path: str, method: str, status: int, capabilities: frozenset[str]) -> list[str]:
    answer = document()["paths"][path][method.lower()]["responses"][str(status)]
    names = []
    for name, header in (answer.get("headers") or {}).items():
        marker = header.get("x-capability-data")
        if header.get("required") or (marker and marker["required"] and marker["capability"] in capabilities):
            names.append(name)
    return names


def problems(response: httpx.Response, path: str, method: str, capabilities: frozenset[str]) -> list[str]:
    """What in this answer disagrees with the core document (empty: nothing)."""
    status = 200 if response.status_code == 200 else 400
    found = _errors(validator(path, method, status, capabilities), response.json())
    found += [
        f"missing response header {name}"
        for name in required_headers(path, method, status, capabilities)
        if name not in response.headers
    ]
    return found


def check(
    response: httpx.Response, path: str, method: str, capabilities: frozenset[str], status: int = 200
) -> Any:
    """Assert the status and that the answer conforms to OCTO core; return its body."""
    assert response.status_code == status, (path, method, response.status_code, response.text)
    found = problems(response, path, method, capabilities)
    assert not found, (f"{method} {path} with {sorted(capabilities)}", found[:20])
    return response.json()
