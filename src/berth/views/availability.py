"""Availability objects (OCTO.md §3.5) and calendar days (§3.6), plus capability fields."""

from __future__ import annotations

from berth.capabilities.base import JSON, View
from berth.capabilities.registry import active
from berth.domain.catalog import AvailabilityType
from berth.domain.slots import opening_hours_on
from berth.domain.times import format_local, format_utc
from berth.read_models.availability import CalendarDay, SlotAvailability


def _opening_hours(hours: tuple[tuple[str, str], ...]) -> list[JSON]:
    return [{"from": opens, "to": closes} for opens, closes in hours]


def availability_view(item: SlotAvailability, view: View) -> JSON:
    slot, state = item.slot, item.state
    out: JSON = {
        "id": slot.id,
        "localDateTimeStart": format_local(slot.start),
        "localDateTimeEnd": format_local(slot.end),
        "utcCutoffAt": format_utc(slot.cutoff_utc),
        "allDay": slot.all_day,
        "available": state.available,
        "status": str(state.status),
        "vacancies": state.vacancies,
        "capacity": state.capacity,
        "maxUnits": item.option.restrictions.max_units,
        "openingHours": _opening_hours(slot.opening_hours),
    }
    for capability in active(view.capabilities):
        capability.availability_fields(item, out, view, availability_view)
    return out


def calendar_view(day: CalendarDay, view: View) -> JSON:
    state = day.state
    hours: list[JSON] = []
    if day.product.availability_type is AvailabilityType.OPENING_HOURS:
        kept = day.slots[0].opening_hours if day.slots else opening_hours_on(day.option, day.local_date)
        hours = _opening_hours(kept)
    out: JSON = {
        "localDate": day.local_date.isoformat(),
        "available": state.available,
        "status": str(state.status),
        "vacancies": state.vacancies,
        "capacity": state.capacity,
        "openingHours": hours,
    }
    for capability in active(view.capabilities):
        capability.calendar_fields(day, out, view)
    return out
