"""The dates Berth supports: local dates from FIRST_DATE to LAST_DATE. Farther out, slot
arithmetic (a rental's days, a package's validity, a time zone's offset) would leave the range
of `datetime.date`; requests naming such a date are refused with BAD_REQUEST naming the range."""

from __future__ import annotations

from datetime import date

from berth.domain.errors import BadRequest

FIRST_DATE = date(2000, 1, 1)
LAST_DATE = date(2199, 12, 31)
RANGE_TEXT = f"{FIRST_DATE.isoformat()} to {LAST_DATE.isoformat()}"


def supported(day: date) -> bool:
    return FIRST_DATE <= day <= LAST_DATE


def out_of_range(name: str, day: date) -> str:
    """The message of a refusal: what `name` was, and the range."""
    return f"{name} {day.isoformat()} is outside the dates Berth supports, {RANGE_TEXT}"


def check_supported(name: str, *days: date) -> None:
    """BAD_REQUEST, naming the range, for a date outside it."""
    for day in days:
        if not supported(day):
            raise BadRequest(out_of_range(name, day))
