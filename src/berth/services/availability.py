"""Availability checks and calendars: slots from the cached schedule, held places from one
aggregate query per option and range, whatever the range's length.

A rental option's slots are start times: each is checked for the requested rental duration,
and its places held are the peak of items out at any instant of [start, start + duration)
(`berth.domain.rentals`), from one interval query per option and range."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, replace
from datetime import UTC, date, datetime, timedelta
from zoneinfo import ZoneInfo

from berth.domain.availability import AvailabilityStatus, SlotState, day_state, slot_state
from berth.domain.catalog import Catalog, Option, Product
from berth.domain.catalog_lookup import find_currency, find_option, find_product, requested_units
from berth.domain.errors import BadRequest, InvalidAvailabilityId
from berth.domain.rentals import peak_held, rental_due, rental_duration_for, rental_slot
from berth.domain.resources import ResourceUse, availability_state, party_of_units
from berth.domain.slots import Slot, slot_for_id, slots_between
from berth.read_models.availability import CalendarDay, SlotAvailability
from berth.services.clock import Clock
from berth.settings import Settings
from berth.store import bookings_repo, resources_repo
from berth.store.database import Database, DbConnection


@dataclass(frozen=True)
class AvailabilityQuery:
    product_id: str | None
    option_id: str | None
    local_date: date | None = None
    local_date_start: date | None = None
    local_date_end: date | None = None
    availability_ids: tuple[str, ...] | None = None
    units: tuple[tuple[str, int], ...] | None = None
    currency: str | None = None
    rental_duration_id: str | None = None


def package_sold_out(state: SlotState) -> SlotState:
    """A package slot whose required include cannot be booked that day: SOLD_OUT, no vacancies."""
    return SlotState(AvailabilityStatus.SOLD_OUT, False, 0, state.capacity)


def today_in(product: Product, now: datetime) -> date:
    return now.astimezone(ZoneInfo(product.time_zone)).date()


async def held_in(
    conn: DbConnection,
    product: Product,
    option: Option,
    slots: Sequence[Slot],
    now: datetime,
    *,
    rental: bool = False,
    excluding: str | None = None,
) -> dict[str, int]:
    """Places held per slot id, in one query. With `rental`, `slots` are rental slots (ending
    when the item is due back) and a slot's places held are the peak over [start, end)."""
    if not slots:
        return {}
    if rental:
        windows = [(s.start, s.end) for s in slots]
        peaks = await rental_peaks(conn, product.id, option.id, windows, now, excluding=excluding)
        return {slot.id: peak for slot, peak in zip(slots, peaks, strict=True)}
    first = min(s.start for s in slots).astimezone(UTC)
    last = max(s.start for s in slots).astimezone(UTC)
    return await bookings_repo.held_places(conn, product.id, option.id, first, last, now, excluding=excluding)


async def rental_peaks(
    conn: DbConnection,
    product_id: str,
    option_id: str,
    windows: Sequence[tuple[datetime, datetime]],
    now: datetime,
    *,
    excluding: str | None = None,
) -> list[int]:
    """The most items out at any instant of each window [start, end), from one interval query
    over all of them."""
    if not windows:
        return []
    first = min(start for start, _ in windows).astimezone(UTC)
    last = max(end for _, end in windows).astimezone(UTC)
    held = await bookings_repo.held_intervals(
        conn, product_id, option_id, first, last, now, excluding=excluding
    )
    return peak_held(held, windows)


async def _use_in(
    conn: DbConnection, product: Product, option: Option, slots: Sequence[Slot], now: datetime
) -> dict[str, dict[str, ResourceUse]]:
    first = min(s.start for s in slots).astimezone(UTC)
    last = max(s.start for s in slots).astimezone(UTC)
    return await resources_repo.use_between(conn, product.id, option.id, first, last, now)


MAX_REMEMBERED_DAYS = 200_000


class AvailabilityService:
    def __init__(self, database: Database, settings: Settings, clock: Clock) -> None:
        self._db = database
        self._settings = settings
        self._clock = clock
        # Slots depend only on the catalogue: remembered per day until the catalogue changes.
        self._slots_of: Catalog | None = None
        self._day_slots: dict[tuple[str, str, date], list[Slot]] = {}

    def slots(
        self, catalog: Catalog, product: Product, option: Option, first: date, last: date
    ) -> list[Slot]:
        if catalog is not self._slots_of or len(self._day_slots) > MAX_REMEMBERED_DAYS:
            self._slots_of = catalog
            self._day_slots = {}
        found: list[Slot] = []
        for offset in range((last - first).days + 1):
            day = first + timedelta(days=offset)
            key = (product.id, option.id, day)
            day_slots = self._day_slots.get(key)
            if day_slots is None:
                day_slots = self._day_slots[key] = slots_between(product, option, day, day)
            found.extend(day_slots)
        return found

    def _range(self, product: Product, start: date, end: date) -> None:
        if end < start:
            raise BadRequest(f"localDateEnd {end} is before localDateStart {start}")
        days = (end - start).days + 1
        if days > self._settings.max_range_days:
            raise BadRequest(
                f"The range covers {days} days; at most {self._settings.max_range_days} are allowed"
            )
        today = today_in(product, self._clock())
        if end < today:
            raise BadRequest(f"The dates requested are in the past (today is {today} in {product.time_zone})")

    async def held(
        self, product: Product, option: Option, slots: Sequence[Slot], now: datetime, *, rental: bool = False
    ) -> dict[str, int]:
        if not slots:
            return {}
        async with self._db.single_read() as conn:
            return await held_in(conn, product, option, slots, now, rental=rental)

    async def resource_use(
        self, product: Product, option: Option, slots: Sequence[Slot], now: datetime
    ) -> dict[str, dict[str, ResourceUse]]:
        """octo/resources: what live bookings take of each resource, per slot (one query; none
        for an option without resources)."""
        if not slots or not option.resource_groups:
            return {}
        async with self._db.single_read() as conn:
            return await _use_in(conn, product, option, slots, now)

    async def states_in(
        self, conn: DbConnection, product: Product, option: Option, slots: Sequence[Slot]
    ) -> list[SlotAvailability]:
        """The slots as they stand now, read inside the caller's transaction. A rental
        option's slots are described for its default rental duration, as a check that names no
        duration (or is made without octo/rentals) describes them."""
        now = self._clock()
        rental = option.default_rental_duration
        if rental is not None:
            slots = [rental_slot(slot, rental) for slot in slots]
        held = await held_in(conn, product, option, slots, now, rental=rental is not None)
        use = await _use_in(conn, product, option, slots, now) if option.resource_groups else {}
        states = [availability_state(option, s, held.get(s.id, 0), use.get(s.id, {}), now) for s in slots]
        return [
            SlotAvailability(product, option, slot, state, (), product.currency, rental)
            for slot, state in zip(slots, states, strict=True)
        ]

    async def check(self, catalog: Catalog, query: AvailabilityQuery) -> list[SlotAvailability]:
        product = find_product(catalog, query.product_id)
        option = find_option(product, query.option_id)
        selectors = [
            query.local_date is not None,
            query.local_date_start is not None or query.local_date_end is not None,
            query.availability_ids is not None,
        ]
        if sum(selectors) != 1:
            raise BadRequest(
                "Send exactly one of localDate, localDateStart with localDateEnd, or availabilityIds"
            )
        rental = rental_duration_for(option, query.rental_duration_id)
        currency = find_currency(product, query.currency)
        pax, units = requested_units(option, query.units or ())
        requested = pax if query.units else None
        if query.availability_ids is not None:
            slots = []
            for availability_id in query.availability_ids:
                slot = slot_for_id(product, option, availability_id)
                if slot is None:
                    raise InvalidAvailabilityId(availability_id)
                slots.append(slot)
        else:
            if query.local_date is not None:
                start = end = query.local_date
            elif query.local_date_start is None or query.local_date_end is None:
                raise BadRequest("localDateStart and localDateEnd must be sent together")
            else:
                start, end = query.local_date_start, query.local_date_end
            self._range(product, start, end)
            slots = self.slots(catalog, product, option, start, end)
        if rental is not None:
            slots = [rental_slot(slot, rental) for slot in slots]
        now = self._clock()
        held = await self.held(product, option, slots, now, rental=rental is not None)
        use = await self.resource_use(product, option, slots, now)
        party = party_of_units(option, units) if requested is not None else None
        states = [
            availability_state(option, s, held.get(s.id, 0), use.get(s.id, {}), now, party) for s in slots
        ]
        items = [
            SlotAvailability(product, option, slot, state, units, currency, rental)
            for slot, state in zip(slots, states, strict=True)
        ]
        if option.package_includes and items:
            return await self.with_includes(catalog, items, requested, now)
        return items

    async def with_includes(
        self, catalog: Catalog, items: list[SlotAvailability], requested: int | None, now: datetime
    ) -> list[SlotAvailability]:
        """Package slots with their includes' slots of the same local date: one held-places query
        per include option over the dates of `items`. A package slot is sellable only when every
        required include that needs an availability has a sellable slot that day."""
        first = min(i.slot.local_date for i in items)
        last = max(i.slot.local_date for i in items)
        option = items[0].option
        by_day: dict[date, list[SlotAvailability]] = {}
        missing_on: dict[date, list[str]] = {}
        for include in option.includes:
            included = catalog.product(include.product_id)
            included_option = included.option(include.option_id) if included else None
            if included is None or included_option is None:
                continue  # the catalogue rules prevent this
            slots = self.slots(catalog, included, included_option, first, last)
            # An include is booked at its default rental duration (a package names none).
            rental = included_option.default_rental_duration
            if rental is not None:
                slots = [rental_slot(slot, rental) for slot in slots]
            held = await self.held(included, included_option, slots, now, rental=rental is not None)
            sellable: set[date] = set()
            for slot in slots:
                state = slot_state(slot, held.get(slot.id, 0), now, requested)
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

    async def calendar(self, catalog: Catalog, query: AvailabilityQuery) -> list[CalendarDay]:
        product = find_product(catalog, query.product_id)
        option = find_option(product, query.option_id)
        if query.local_date_start is None or query.local_date_end is None:
            raise BadRequest("localDateStart and localDateEnd are required")
        start, end = query.local_date_start, query.local_date_end
        rental = rental_duration_for(option, query.rental_duration_id)
        self._range(product, start, end)
        currency = find_currency(product, query.currency)
        pax, units = requested_units(option, query.units or ())
        requested = pax if query.units else None
        slots = self.slots(catalog, product, option, start, end)
        now = self._clock()
        if rental is not None:  # days need no due-back times of their own: only the peaks
            windows = [(slot.start, rental_due(slot, rental)) for slot in slots]
            async with self._db.transaction(write=False) as conn:
                peaks = await rental_peaks(conn, product.id, option.id, windows, now)
            held = {slot.id: peak for slot, peak in zip(slots, peaks, strict=True)}
        else:
            held = await self.held(product, option, slots, now)
        use = await self.resource_use(product, option, slots, now)
        party = party_of_units(option, units) if requested is not None else None
        by_day: dict[date, list[Slot]] = {}
        for slot in slots:
            by_day.setdefault(slot.local_date, []).append(slot)
        days = []
        for offset in range((end - start).days + 1):
            day = start + timedelta(days=offset)
            day_slots = by_day.get(day, [])
            states = [
                availability_state(option, s, held.get(s.id, 0), use.get(s.id, {}), now, party)
                for s in day_slots
            ]
            days.append(
                CalendarDay(
                    product, option, day, tuple(day_slots), day_state(states), units, currency, rental
                )
            )
        return days
