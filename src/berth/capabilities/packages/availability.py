"""octo/packages in availability checks: a package slot carries its includes' slots of the same
local date, and is sellable only when every required include that needs an availability has a
sellable slot that day."""

from __future__ import annotations

from dataclasses import replace
from datetime import date, timedelta

from berth.domain.availability import AvailabilityStatus, SlotState, slot_state
from berth.domain.catalog import Catalog
from berth.read_models.availability import SlotAvailability
from berth.services.availability import AvailabilityService
from berth.services.bookings.capacity import Wanted
from berth.services.clock import Clock


def package_sold_out(state: SlotState) -> SlotState:
    """A package slot whose required include cannot be booked that day: SOLD_OUT, no vacancies."""
    return SlotState(AvailabilityStatus.SOLD_OUT, False, 0, state.capacity)


class PackageAvailability:
    def __init__(self, availability: AvailabilityService, clock: Clock) -> None:
        self._availability = availability
        self._clock = clock

    async def extend(
        self, catalog: Catalog, items: list[SlotAvailability], wanted: Wanted | None
    ) -> list[SlotAvailability]:
        """Package slots with their includes' slots of the same local date: one held-places
        query per include option over the dates of `items`."""
        option = items[0].option
        if not option.package_includes:
            return items
        now = self._clock()
        requested = wanted.pax if wanted is not None else None
        first = min(i.slot.local_date for i in items)
        last = max(i.slot.local_date for i in items)
        by_day: dict[date, list[SlotAvailability]] = {}
        missing_on: dict[date, list[str]] = {}
        for include in option.includes:
            included = catalog.product(include.product_id)
            included_option = included.option(include.option_id) if included else None
            if included is None or included_option is None:
                continue  # the catalogue rules prevent this
            policy = self._availability.policies.of(included_option)
            # An include is booked at its default rental duration (a package names none).
            rental = policy.duration(included_option, None, None)
            slots = [
                policy.stretch(slot, rental)
                for slot in self._availability.slots(catalog, included, included_option, first, last)
            ]
            slots, held = await self._availability.held_as_run(included, included_option, slots, now)
            sellable: set[date] = set()
            for slot, taken in zip(slots, held, strict=True):
                state = slot_state(slot, taken, now, requested)
                if state.available:
                    sellable.add(slot.local_date)
                by_day.setdefault(slot.local_date, []).append(
                    SlotAvailability(included, included_option, slot, state, (), included.currency, rental)
                )
            if include.required and include.availability_required:
                for offset in range((last - first).days + 1):
                    day = first + timedelta(days=offset)
                    if day not in sellable:
                        missing_on.setdefault(day, []).append(include.id)
        result = []
        for item in items:
            day = item.slot.local_date
            state = item.state
            if state.available and day in missing_on:
                state = package_sold_out(state)
            result.append(replace(item, state=state, includes=tuple(by_day.get(day, ()))))
        return result
