"""The settings reference (docs/settings.md), written from the `Settings` class itself so the
document cannot leave a setting out: `python scripts/settings_reference.py` rewrites it, and a
test fails when the file and the class disagree."""

from __future__ import annotations

import types
import typing
from typing import Any

from pydantic import SecretStr
from pydantic.fields import FieldInfo

from berth.settings import Settings

HEADER = """# Settings reference

Berth reads its settings from environment variables prefixed `BERTH_` (a `.env` file is not
read: set them in the environment of the process, e.g. the systemd unit in
[operations.md](operations.md)). Unknown `BERTH_*` variables are ignored.

This page is generated from `src/berth/settings.py` by `python scripts/settings_reference.py`;
`tests/test_settings_reference.py` fails when a setting is missing here or undocumented.

| Variable | Type | Default | Meaning |
| --- | --- | --- | --- |
"""


def _type_name(annotation: Any) -> str:
    origin = typing.get_origin(annotation)
    if origin is typing.Literal:
        return " or ".join(f"`{value}`" for value in typing.get_args(annotation))
    if origin in (typing.Union, types.UnionType):
        names = [_type_name(arg) for arg in typing.get_args(annotation) if arg is not type(None)]
        return " or ".join(names)
    if annotation is SecretStr:
        return "secret text"
    return {str: "text", int: "integer", float: "number", bool: "true/false"}.get(annotation, str(annotation))


def _default(field: FieldInfo) -> str:
    if field.default is None:
        return "unset"
    if isinstance(field.default, bool):
        return f"`{str(field.default).lower()}`"
    return f"`{field.default}`"


def _limits(field: FieldInfo) -> str:
    bounds = []
    for rule in field.metadata:
        for name, word in (("ge", "at least"), ("gt", "more than"), ("le", "at most"), ("lt", "less than")):
            value = getattr(rule, name, None)
            if value is not None:
                bounds.append(f"{word} {value}")
    return f" ({', '.join(bounds)})" if bounds else ""


def undocumented() -> list[str]:
    """Settings without a description: each must say what it does."""
    return [name for name, field in Settings.model_fields.items() if not field.description]


def settings_reference() -> str:
    prefix = str(Settings.model_config.get("env_prefix", ""))
    rows = []
    for name, field in Settings.model_fields.items():
        meaning = (field.description or "").replace("|", "\\|")
        rows.append(
            f"| `{prefix}{name.upper()}` | {_type_name(field.annotation)}{_limits(field)} "
            f"| {_default(field)} | {meaning} |"
        )
    return HEADER + "\n".join(rows) + "\n"
