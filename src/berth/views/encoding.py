"""JSON bytes for answers and documents: orjson, exact for any integer."""

from __future__ import annotations

import json
from typing import Any

import orjson


def json_bytes(data: Any) -> bytes:
    """`data` as JSON: orjson, or the json module for what orjson refuses, integers past 64 bits.
    Amounts entering Berth are at most `MAX_AMOUNT`, so one booking's sums fit in 64 bits; a
    sum over bookings (a statement's totals, an order's) has no such bound and is written
    exactly whatever its size (docs/decisions.md, "One maximum for every amount")."""
    try:
        return orjson.dumps(data)
    except TypeError:  # orjson.JSONEncodeError is one
        return json.dumps(data, separators=(",", ":"), ensure_ascii=False).encode()
