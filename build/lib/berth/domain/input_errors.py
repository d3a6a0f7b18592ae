"""Input of the wrong shape, described in the client's terms: pydantic's errors as a field path
written the way OCTO documents name fields (`unitItems[0].unitId`) and what the field expects
(`must be a string`), never pydantic's own wording or Python names."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

# The parts of a location that name where a value came from, not a field.
_SOURCES = frozenset({"body", "query", "path", "header"})

_KINDS: dict[str, str] = {
    "string_type": "must be a string",
    "int_type": "must be a whole number",
    "int_parsing": "must be a whole number",
    "int_from_float": "must be a whole number",
    "float_type": "must be a number",
    "float_parsing": "must be a number",
    "decimal_type": "must be a number",
    "bool_type": "must be true or false",
    "bool_parsing": "must be true or false",
    "list_type": "must be an array",
    "tuple_type": "must be an array",
    "set_type": "must be an array",
    "dict_type": "must be an object",
    "model_type": "must be an object",
    "model_attributes_type": "must be an object",
    "date_type": "must be a date, YYYY-MM-DD",
    "date_parsing": "must be a date, YYYY-MM-DD",
    "date_from_datetime_parsing": "must be a date, YYYY-MM-DD",
    "date_from_datetime_inexact": "must be a date, YYYY-MM-DD",
    "datetime_type": "must be an ISO 8601 date-time, e.g. 2026-06-01T10:00:00Z",
    "datetime_parsing": "must be an ISO 8601 date-time, e.g. 2026-06-01T10:00:00Z",
    "datetime_from_date_parsing": "must be an ISO 8601 date-time, e.g. 2026-06-01T10:00:00Z",
    "time_parsing": "must be a time, HH:MM",
    "url_type": "must be a URL",
    "url_parsing": "must be a URL",
    "url_scheme": "must be an http or https URL",
    "missing": "is required",
    "extra_forbidden": "is not a known field",
}

_LIMITS: dict[str, str] = {
    "string_too_short": "must be at least {min_length} characters",
    "string_too_long": "must be at most {max_length} characters",
    "too_short": "must have at least {min_length} items",
    "too_long": "must have at most {max_length} items",
    "greater_than": "must be greater than {gt}",
    "greater_than_equal": "must be at least {ge}",
    "less_than": "must be less than {lt}",
    "less_than_equal": "must be at most {le}",
    "multiple_of": "must be a multiple of {multiple_of}",
    "string_pattern_mismatch": "must match the pattern {pattern}",
    "enum": "must be one of {expected}",
    "literal_error": "must be one of {expected}",
}


def field_path(loc: Sequence[Any]) -> str:
    """`("body", "unitItems", 0, "unitId")` → `unitItems[0].unitId`; an item of a top-level
    array is `[0]`."""
    path = ""
    for part in loc:
        if part in _SOURCES and not path:
            continue
        if isinstance(part, int):
            path += f"[{part}]"
        else:
            path += f".{part}" if path else str(part)
    return path


def expectation(error: Mapping[str, Any]) -> str:
    """What the field of one pydantic error expects, in a client's words."""
    kind = str(error.get("type", ""))
    if kind in _KINDS:
        return _KINDS[kind]
    context = error.get("ctx") or {}
    if kind in _LIMITS:
        try:
            return _LIMITS[kind].format(**context)
        except (KeyError, IndexError):
            pass
    message = str(error.get("msg", ""))
    # Our own validators (ValueError, PydanticCustomError) already speak to the client.
    return message.removeprefix("Value error, ").removeprefix("Assertion failed, ") or "is not valid"
