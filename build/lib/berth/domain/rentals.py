"""Rentals (octo/rentals): which duration a request means, when a rented item is due back, and
how many items overlapping rentals hold.

A rental option lends a stock of interchangeable items: its schedules' capacity. A booking
holds `pax` items over the half-open interval [start, end) of its rental. Because the items
are interchangeable, a set of rentals fits a stock of N exactly when at no instant more than N
of them are out at once (the most rentals overlapping at one instant is the number of items
they need). So the places a start time has left for a duration are the stock minus the *peak*
of items held at any instant of [start, start + duration), computed by `peak_held` with a
sweep over the held intervals' endpoints.
"""

from __future__ import annotations

import math
from bisect import bisect_left, bisect_right
from collections.abc import Sequence
from dataclasses import replace
from datetime import UTC, date, datetime, timedelta
from functools import lru_cache
from typing import NamedTuple
from zoneinfo import ZoneInfo

from berth.domain.catalog import (
    DurationUnit,
    Option,
    Product,
    RentalDuration,
    duration_minutes,
    rental_minutes,
)
from berth.domain.errors import BadRequest, InvalidRentalDurationId
from berth.domain.slots import Slot, slots_between
from berth.domain.times import local_datetime

MINUTES_PER_DAY = 24 * 60


class HeldInterval(NamedTuple):
    """`pax` items out over [start, end) (aware datetimes)."""

    start: datetime
    end: datetime
    pax: int


def rental_duration_for(option: Option, duration_id: str | None) -> RentalDuration | None:
    """The rental duration a request names for `option`: None for an option that is not a
    rental; the option's default duration when it names none (a request without octo/rentals
    names none: its `rentalDurationId` is dropped before it gets here). Raises BAD_REQUEST for a
    duration on a non-rental option and INVALID_RENTAL_DURATION_ID for an id that is not one
    of the option's."""
    if not option.rental_durations:
        if duration_id is not None:
            raise BadRequest(f"Option {option.id!r} is not a rental option: rentalDurationId is not accepted")
        return None
    default = option.default_rental_duration or option.rental_durations[0]
    if duration_id is None:
        return default
    duration = option.rental_duration(duration_id)
    if duration is None:
        choices = ", ".join(d.id for d in option.rental_durations)
        raise InvalidRentalDurationId(
            duration_id,
            f"The rental duration {duration_id!r} is not a rental duration of option {option.id!r}: "
            f"send one of {choices}, or leave rentalDurationId out for the default, {default.id}",
        )
    return duration


def _zone(moment: datetime) -> ZoneInfo:
    zone = moment.tzinfo
    if not isinstance(zone, ZoneInfo):
        raise TypeError("rental times must be in a ZoneInfo time zone")
    return zone


def rental_end(start: datetime, duration: RentalDuration) -> datetime:
    """When an item picked up at `start` (aware, in the product's zone) is due back.

    Whole days are calendar days: the same wall-clock time that many days later (23 or 25
    hours for a day across a daylight-saving change); a wall-clock time the clocks skip moves
    forward by the gap, an ambiguous one is its first occurrence. Hours, minutes and the
    fraction of a day are elapsed time. The end is always after the start.
    """
    zone = _zone(start)
    days, rest = _length(duration.duration_amount, duration.duration_unit)
    if days:
        wall = start.replace(tzinfo=None, fold=0) + days
        # Through UTC and back: a skipped wall time moves forward by the gap.
        anchor = wall.replace(tzinfo=zone).astimezone(UTC)
    else:
        anchor = start.astimezone(UTC)
    return (anchor + rest).astimezone(zone)


@lru_cache(maxsize=1024)
def _length(amount: int | float, unit: DurationUnit) -> tuple[timedelta, timedelta]:
    """A duration as (calendar days, elapsed rest): whole days count on the calendar."""
    minutes = int(duration_minutes(amount, unit))
    days = int(amount) if unit is DurationUnit.day else 0
    return timedelta(days=days), timedelta(minutes=minutes - days * MINUTES_PER_DAY)


def rental_due(slot: Slot, duration: RentalDuration) -> datetime:
    """When an item rented from `slot` for `duration` is due back.

    An OPENING_HOURS slot is a whole day with no pick-up time, so a rental of it holds whole
    days, midnight to midnight: as many as the duration's days (one for a rental of hours).
    """
    if not slot.all_day:
        return rental_end(slot.start, duration)
    days = max(1, math.ceil(rental_minutes(duration) / MINUTES_PER_DAY))
    return local_datetime(slot.local_date + timedelta(days=days), "00:00", _zone(slot.start))


def rental_slot(slot: Slot, duration: RentalDuration) -> Slot:
    """`slot` as a rental of `duration`: the same start, ending when the item is due back."""
    return replace(slot, end=rental_due(slot, duration))


def peak_held(held: Sequence[HeldInterval], windows: Sequence[tuple[datetime, datetime]]) -> list[int]:
    """For each window [start, end), the most items `held` has out at any one instant of it.

    A sweep over the held intervals' endpoints gives the number out on each stretch between
    consecutive endpoints; a window's peak is the largest of the stretch it starts in and the
    stretches starting inside it. Intervals are half-open: one ending when another (or a
    window) starts does not overlap it. All instants are compared in UTC.
    """
    changes: dict[datetime, int] = {}
    for start, end, pax in held:
        start_utc, end_utc = start.astimezone(UTC), end.astimezone(UTC)
        if pax == 0 or end_utc <= start_utc:
            continue
        changes[start_utc] = changes.get(start_utc, 0) + pax
        changes[end_utc] = changes.get(end_utc, 0) - pax
    points = sorted(changes)
    levels: list[int] = []  # levels[k]: items out on [points[k], points[k + 1])
    level = 0
    for point in points:
        level += changes[point]
        levels.append(level)
    peaks = []
    for window_start, window_end in windows:
        first, last = window_start.astimezone(UTC), window_end.astimezone(UTC)
        at_start = bisect_right(points, first) - 1  # the stretch `first` lies in (-1: before any)
        inside_end = bisect_left(points, last)  # stretches starting before `last`
        peak = levels[at_start] if at_start >= 0 else 0
        if inside_end > at_start + 1:
            peak = max(peak, max(levels[at_start + 1 : inside_end]))
        peaks.append(peak)
    return peaks


def affected_starts(product: Product, option: Option, start: datetime, end: datetime) -> list[Slot]:
    """The option's start slots whose availability, for some rental duration, depends on items
    out over [start, end): those a rental starting there would overlap."""
    if not option.rental_durations:
        return []
    zone = ZoneInfo(product.time_zone)
    longest = max(rental_minutes(d) for d in option.rental_durations)
    # A day's margin: a calendar day may be 25 hours long.
    first = (
        (start.astimezone(UTC) - timedelta(minutes=int(longest) + MINUTES_PER_DAY)).astimezone(zone).date()
    )
    last = end.astimezone(zone).date()
    found = []
    for slot in slots_between(product, option, max(first, date.min), last):
        if slot.start.astimezone(UTC) >= end.astimezone(UTC):
            continue
        reach = max(rental_slot(slot, d).end.astimezone(UTC) for d in option.rental_durations)
        if reach > start.astimezone(UTC):
            found.append(slot)
    return found
