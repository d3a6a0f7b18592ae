"""Input types that accept exactly what the OpenAPI document says they do.

pydantic's lax mode would take `0` or `"1"` for a boolean, `"30"` or `30.0` for an integer and
a number (seconds since 1970) for a date; the fuzzer showed each of them accepted. Request
fields use these instead: booleans and integers must be JSON booleans and integers, dates and
date-times ISO 8601 text.
"""

from __future__ import annotations

import re
from datetime import UTC, date, datetime
from typing import Annotated, Any

from pydantic import AfterValidator, BeforeValidator, StrictBool, StrictInt
from pydantic_core import PydanticCustomError

from berth.domain.calendar import RANGE_TEXT, supported

_DATE = re.compile(r"^\d{4}-\d{2}-\d{2}$")
_DATETIME = re.compile(r"^\d{4}-\d{2}-\d{2}[T ]\d{2}:\d{2}")


def _iso_date(value: Any) -> Any:
    if isinstance(value, date) or (isinstance(value, str) and _DATE.match(value)):
        return value
    raise PydanticCustomError("date_format", "must be a date, YYYY-MM-DD")


def _iso_datetime(value: Any) -> Any:
    if isinstance(value, datetime) or (isinstance(value, str) and _DATETIME.match(value)):
        return value
    raise PydanticCustomError("datetime_format", "must be an ISO 8601 date-time, e.g. 2026-06-01T10:00:00Z")


def _utc_unless_said(value: datetime) -> datetime:
    """A time without an offset is UTC (times are stored as UTC: a naive one cannot be compared)."""
    return value.replace(tzinfo=UTC) if value.tzinfo is None else value


def _supported(value: date) -> date:
    """Only the dates Berth supports (berth.domain.calendar): farther out, date arithmetic
    overflows."""
    day = value.date() if isinstance(value, datetime) else value
    if not supported(day):
        raise PydanticCustomError(
            "date_range",
            "{day} is outside the dates Berth supports, {range}",
            {"day": day.isoformat(), "range": RANGE_TEXT},
        )
    return value


IsoDate = Annotated[date, BeforeValidator(_iso_date), AfterValidator(_supported)]
IsoDateTime = Annotated[
    datetime, BeforeValidator(_iso_datetime), AfterValidator(_supported), AfterValidator(_utc_unless_said)
]
Flag = StrictBool
Whole = StrictInt

# Farther than any list goes; beyond it a database integer would overflow (found by the fuzzer:
# offset=2**63 was a 500 on SQLite).
MAX_OFFSET = 1_000_000_000
