"""Slots: what an option's schedules put on sale, a departure (START_TIME) or a day (OPENING_HOURS).

Slots are derived from the catalogue on every request, never stored; their times are aware
datetimes in the product's time zone, so daylight-saving days come out right.
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from dataclasses import dataclass
from datetime import UTC, date, datetime, timedelta
from zoneinfo import ZoneInfo

from berth.domain.calendar import check_supported, supported
from berth.domain.catalog import AvailabilityType, Option, Product, Schedule
from berth.domain.errors import BadRequest
from berth.domain.times import add_duration, format_local, local_datetime

_ID = re.compile(r"[0-9]{4}-[0-9]{2}-[0-9]{2}T[0-9]{2}:[0-9]{2}:[0-9]{2}[+-][0-9]{2}:[0-9]{2}")

# (date, start time or None for the whole date) -> capacity (None: freesale)
_Overrides = dict[tuple[date, str | None], int | None]


@dataclass(frozen=True)
class Slot:
    """One availability of an option.

    `local_date` is the local date of `start`. `capacity` is in pax, None for freesale.
    `closed`: the date is one of the option's closed dates (listed, but not for sale).
    `cutoff_utc`: the sales cutoff (`utcCutoffAt`); after it the slot cannot be booked or confirmed.
    """

    id: str
    local_date: date
    start: datetime
    end: datetime
    all_day: bool
    opening_hours: tuple[tuple[str, str], ...]
    capacity: int | None
    closed: bool
    cutoff_utc: datetime


def slot_clock(slot: Slot) -> str | None:
    """The local start time of a departure (`HH:MM`); None for a whole day."""
    return None if slot.all_day else f"{slot.start.hour:02d}:{slot.start.minute:02d}"


@dataclass(frozen=True)
class _Candidate:
    slot: Slot
    # The configured day and time did not exist (clocks went forward) and were moved forward.
    shifted: bool


def slots_between(product: Product, option: Option, first: date, last: date) -> list[Slot]:
    """The option's slots whose local date is in `first`..`last`, ordered by start.

    Several schedules may give the same start: the first schedule in the option wins. A start
    time that falls in a daylight-saving gap moves forward by the gap; if that lands on a start
    that exists anyway, the existing one wins. Capacity overrides and closed dates address a
    slot by its actual local date and start time (the ones in its id), so an override at 01:30
    on the day 01:30 does not exist applies to nothing.
    """
    zone = ZoneInfo(product.time_zone)
    overrides = _capacity_overrides(option)
    closed_dates = set(option.closed_dates)
    chosen: dict[str, _Candidate] = {}
    # A departure in a gap just before midnight (America/Nuuk springs forward from 23:00)
    # moves to the next date, so the day before `first` can contribute a slot.
    generate_from = first - timedelta(days=1) if first > date.min else first
    for offset in range((last - generate_from).days + 1):
        day = generate_from + timedelta(days=offset)
        if product.availability_type is AvailabilityType.START_TIME:
            candidates = _departures(option, day, zone, overrides, closed_dates)
        else:
            candidates = _whole_day(option, day, zone, overrides, closed_dates)
        for candidate in candidates:
            if not first <= candidate.slot.local_date <= last:
                continue
            kept = chosen.get(candidate.slot.id)
            if kept is None or (kept.shifted and not candidate.shifted):
                chosen[candidate.slot.id] = candidate
    return sorted((c.slot for c in chosen.values()), key=lambda s: s.start.astimezone(UTC))


# Slots found by id, per product and option object: a reservation and its answer each look its
# slot up, and generating a day's slots costs a tenth of a reservation. The entry keeps its
# product and option, so an id() is never taken for another object's; bounded.
_FOUND: dict[tuple[int, int, str], tuple[Product, Option, Slot | None]] = {}
MAX_FOUND = 10_000


def slot_for_id(product: Product, option: Option, availability_id: str) -> Slot | None:
    """The slot an availability id names, or None (malformed ids included; never raises).

    The id must be `YYYY-MM-DDTHH:MM:SS±HH:MM`. It is matched by instant: the same start
    written with another offset (`2026-03-29T09:00:00+00:00` for `2026-03-29T10:00:00+01:00`)
    finds the slot, whose `id` is the canonical form to store and echo.
    """
    key = (id(product), id(option), availability_id)
    kept = _FOUND.get(key)
    if kept is not None and kept[0] is product and kept[1] is option:
        return kept[2]
    slot = _find_slot(product, option, availability_id)
    if len(_FOUND) >= MAX_FOUND:
        _FOUND.clear()
    _FOUND[key] = (product, option, slot)
    return slot


def _find_slot(product: Product, option: Option, availability_id: str) -> Slot | None:
    if _ID.fullmatch(availability_id) is None:
        return None
    try:
        start = datetime.fromisoformat(availability_id).astimezone(UTC)
        local_date = start.astimezone(ZoneInfo(product.time_zone)).date()
        if not supported(local_date):
            return None
        slots = slots_between(product, option, local_date, local_date)
    except (ValueError, OverflowError):  # impossible dates or offsets; the ends of the calendar
        return None
    return next((s for s in slots if s.start.astimezone(UTC) == start), None)


def cancellation_cutoff(option: Option, slot: Slot) -> datetime:
    """When (UTC) a booking of `slot` stops being cancellable or updatable (OCTO.md §5.4).

    Measured back from the start, or for OPENING_HOURS from the day's closing time, in elapsed
    time: a day is 24 hours, also across a daylight-saving change.
    """
    if slot.all_day:
        zone = slot.start.tzinfo
        if not isinstance(zone, ZoneInfo):
            raise TypeError("slot times must be in a ZoneInfo time zone")
        reference = _closing_time(slot.local_date, slot.opening_hours, zone)
    else:
        reference = slot.start
    delta = add_duration(option.cancellation_cutoff_amount, option.cancellation_cutoff_unit)
    return reference.astimezone(UTC) - delta


def _departures(
    option: Option, day: date, zone: ZoneInfo, overrides: _Overrides, closed_dates: set[date]
) -> Iterator[_Candidate]:
    duration = timedelta(minutes=option.duration_minutes)
    sales_cutoff = timedelta(minutes=option.sales_cutoff_minutes)
    for schedule in option.schedules:
        if not schedule.applies_on(day):
            continue
        for clock in schedule.start_times:
            start = local_datetime(day, clock, zone)
            start_utc, local_date, local_clock = start.astimezone(UTC), start.date(), _clock(start)
            slot = Slot(
                id=format_local(start),
                local_date=local_date,
                start=start,
                end=(start_utc + duration).astimezone(zone),
                all_day=False,
                opening_hours=(),
                capacity=_capacity(overrides, schedule, local_date, local_clock),
                closed=local_date in closed_dates,
                cutoff_utc=start_utc - sales_cutoff,
            )
            yield _Candidate(slot, shifted=(local_date, local_clock) != (day, clock))


def opening_hours_on(option: Option, day: date) -> tuple[tuple[str, str], ...]:
    """The hours an OPENING_HOURS option keeps on `day`, also on a day it is shut: those of the
    schedule that opens the day, else of the first whose season covers it, else of the first
    (every OPENING_HOURS availability carries opening hours, whatever its status)."""
    with_hours = [s for s in option.schedules if s.opening_hours]
    schedule = (
        next((s for s in with_hours if s.applies_on(day)), None)
        or next((s for s in with_hours if s.in_season(day)), None)
        or next(iter(with_hours), None)
    )
    return tuple((h.opens, h.closes) for h in schedule.opening_hours) if schedule else ()


def _whole_day(
    option: Option, day: date, zone: ZoneInfo, overrides: _Overrides, closed_dates: set[date]
) -> Iterator[_Candidate]:
    # A schedule without opening hours would have no closing time: it does not open the day.
    # A weekday its season's schedule skips is a closed day, as a closed date is.
    with_hours = [s for s in option.schedules if s.opening_hours]
    schedule = next((s for s in with_hours if s.applies_on(day)), None)
    shut = schedule is None
    if schedule is None:
        schedule = next((s for s in with_hours if s.in_season(day)), None)
        if schedule is None:
            return
    start = local_datetime(day, "00:00", zone)
    local_date = start.date()
    hours = tuple((h.opens, h.closes) for h in schedule.opening_hours)
    closing = _closing_time(local_date, hours, zone)
    slot = Slot(
        id=format_local(start),
        local_date=local_date,
        start=start,
        end=local_datetime(day + timedelta(days=1), "00:00", zone),
        all_day=True,
        opening_hours=hours,
        capacity=_capacity(overrides, schedule, local_date, None),
        closed=shut or local_date in closed_dates,
        cutoff_utc=closing.astimezone(UTC) - timedelta(minutes=option.sales_cutoff_minutes),
    )
    yield _Candidate(slot, shifted=(local_date, _clock(start)) != (day, "00:00"))


def _closing_time(day: date, hours: tuple[tuple[str, str], ...], zone: ZoneInfo) -> datetime:
    return local_datetime(day, hours[-1][1], zone)


def _clock(moment: datetime) -> str:
    return f"{moment.hour:02d}:{moment.minute:02d}"


def _capacity_overrides(option: Option) -> _Overrides:
    found: _Overrides = {}
    for override in option.capacity_overrides:
        found.setdefault((override.date, override.start_time), override.capacity)
    return found


def _capacity(overrides: _Overrides, schedule: Schedule, day: date, clock: str | None) -> int | None:
    """An override for the date and start time, else one for the whole date, else the schedule's.

    OPENING_HOURS slots have no start time (`clock` None): only whole-date overrides apply.
    """
    for key in ((day, clock), (day, None)):
        if key in overrides:
            return overrides[key]
    return schedule.capacity


def check_day_range(start: date, end: date, max_days: int) -> None:
    """A range of local dates a request names: in order, supported (berth.domain.calendar), and
    at most `max_days` long."""
    check_supported("localDateStart", start)
    check_supported("localDateEnd", end)
    if end < start:
        raise BadRequest(f"localDateEnd {end} is before localDateStart {start}")
    days = (end - start).days + 1
    if days > max_days:
        raise BadRequest(f"The range covers {days} days; at most {max_days} are allowed")
