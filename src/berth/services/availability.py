"""Availability checks and calendars: slots from the cached schedule, held places from one
aggregate query per option and range, whatever the range's length."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from datetime import UTC, date, datetime, timedelta
from zoneinfo import ZoneInfo

from sqlalchemy.ext.asyncio import AsyncConnection

from berth.domain.availability import SlotState, day_state
from berth.domain.catalog import Catalog, Option, Product
from berth.domain.catalog_lookup import find_currency, find_option, find_product, requested_units
from berth.domain.errors import BadRequest, InvalidAvailabilityId
from berth.domain.resources import ResourceUse, availability_state, party_of_units
from berth.domain.slots import Slot, slot_for_id, slots_between
from berth.services.clock import Clock
from berth.settings import Settings
from berth.store import bookings_repo, resources_repo
from berth.store.database import Database


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


@dataclass(frozen=True)
class SlotAvailability:
    product: Product
    option: Option
    slot: Slot
    state: SlotState
    units: tuple[tuple[str, int], ...]
    currency: str | None


@dataclass(frozen=True)
class CalendarDay:
    product: Product
    option: Option
    local_date: date
    slots: tuple[Slot, ...]
    state: SlotState
    units: tuple[tuple[str, int], ...]
    currency: str | None


def today_in(product: Product, now: datetime) -> date:
    return now.astimezone(ZoneInfo(product.time_zone)).date()


async def _held_in(
    conn: AsyncConnection, product: Product, option: Option, slots: Sequence[Slot], now: datetime
) -> dict[str, int]:
    first = min(s.start for s in slots).astimezone(UTC)
    last = max(s.start for s in slots).astimezone(UTC)
    return await bookings_repo.held_places(conn, product.id, option.id, first, last, now)


async def _use_in(
    conn: AsyncConnection, product: Product, option: Option, slots: Sequence[Slot], now: datetime
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
        self, product: Product, option: Option, slots: Sequence[Slot], now: datetime
    ) -> dict[str, int]:
        if not slots:
            return {}
        async with self._db.single_read() as conn:
            return await _held_in(conn, product, option, slots, now)

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
        self, conn: AsyncConnection, product: Product, option: Option, slots: Sequence[Slot]
    ) -> list[SlotAvailability]:
        """The slots as they stand now, read inside the caller's transaction."""
        now = self._clock()
        held = await _held_in(conn, product, option, slots, now)
        use = await _use_in(conn, product, option, slots, now) if option.resource_groups else {}
        states = [availability_state(option, s, held.get(s.id, 0), use.get(s.id, {}), now) for s in slots]
        return [
            SlotAvailability(product, option, slot, state, (), product.currency)
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
        now = self._clock()
        held = await self.held(product, option, slots, now)
        use = await self.resource_use(product, option, slots, now)
        party = party_of_units(option, units) if requested is not None else None
        states = [
            availability_state(option, s, held.get(s.id, 0), use.get(s.id, {}), now, party) for s in slots
        ]
        return [
            SlotAvailability(product, option, slot, state, units, currency)
            for slot, state in zip(slots, states, strict=True)
        ]

    async def calendar(self, catalog: Catalog, query: AvailabilityQuery) -> list[CalendarDay]:
        product = find_product(catalog, query.product_id)
        option = find_option(product, query.option_id)
        if query.local_date_start is None or query.local_date_end is None:
            raise BadRequest("localDateStart and localDateEnd are required")
        start, end = query.local_date_start, query.local_date_end
        self._range(product, start, end)
        currency = find_currency(product, query.currency)
        pax, units = requested_units(option, query.units or ())
        requested = pax if query.units else None
        slots = self.slots(catalog, product, option, start, end)
        now = self._clock()
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
                CalendarDay(product, option, day, tuple(day_slots), day_state(states), units, currency)
            )
        return days
