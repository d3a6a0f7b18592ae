"""Availability checks and calendars: slots from the cached schedule, and their states from
the option's capacity policy in one query per option and range, whatever the range's length.

A rental option's slots are start times: each is checked for the requested rental duration
(the policy stretches it to the time the item is due back)."""

from __future__ import annotations

from collections.abc import Hashable, Sequence
from dataclasses import dataclass, replace
from datetime import UTC, date, datetime, timedelta
from typing import Protocol
from zoneinfo import ZoneInfo

import orjson

from berth.domain.availability import AvailabilityStatus, SlotState, day_state
from berth.domain.calendar import check_supported
from berth.domain.catalog import Catalog, Option, Product
from berth.domain.catalog.lookup import find_currency, find_option, find_product, requested_units
from berth.domain.errors import BadRequest, InvalidAvailabilityId
from berth.domain.slots import Slot, check_day_range, slot_for_id, slots_between
from berth.read_models.availability import CalendarDay, SlotAvailability
from berth.services.allotments import STAFF, AllotmentService, Viewer
from berth.services.answers import EVERY, AnswerCache, Reach
from berth.services.bookings.capacity import CapacityPolicies, Wanted, slots_as_run
from berth.services.clock import Clock
from berth.settings import Settings
from berth.store import bookings_reads
from berth.store.availability_changes_repo import local_date_of
from berth.store.connection import DbConnection
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
    rental_duration_id: str | None = None


def today_in(product: Product, now: datetime) -> date:
    return now.astimezone(ZoneInfo(product.time_zone)).date()


class CheckExtension(Protocol):
    """A capability that adds to the slots an availability check answers (octo/packages: a
    package slot's includes)."""

    async def extend(
        self, catalog: Catalog, items: list[SlotAvailability], wanted: Wanted | None
    ) -> list[SlotAvailability]: ...


MAX_REMEMBERED_DAYS = 200_000


class AvailabilityService:
    def __init__(
        self,
        database: Database,
        settings: Settings,
        clock: Clock,
        policies: CapacityPolicies,
        allotments: AllotmentService,
        answers: AnswerCache | None = None,
    ) -> None:
        self._db = database
        self.allotments = allotments
        self._answers = answers
        self._settings = settings
        self._clock = clock
        self.policies = policies
        self._extensions: tuple[CheckExtension, ...] = ()
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
        check_day_range(start, end, self._settings.max_range_days)
        today = today_in(product, self._clock())
        if end < today:
            raise BadRequest(f"The dates requested are in the past (today is {today} in {product.time_zone})")

    def add_extension(self, extension: CheckExtension) -> None:
        self._extensions = (*self._extensions, extension)

    async def states(
        self,
        product: Product,
        option: Option,
        slots: Sequence[Slot],
        now: datetime,
        wanted: Wanted | None = None,
        viewer: Viewer = STAFF,
    ) -> list[SlotState]:
        """Each slot's state from the option's policy as `viewer` sees it (its stop-sells, the
        others' blocks): one read, two more where others hold blocks, none for no slots."""
        if not slots:
            return []
        async with self._db.single_read() as conn:
            states = await self.policies.of(option).states(conn, product, option, slots, now, wanted)
            requested = wanted.pax if wanted is not None else None
            return await self.allotments.seen_by(conn, viewer, product, option, slots, states, now, requested)

    async def _asked_states(
        self,
        catalog: Catalog,
        query: AvailabilityQuery,
        kept: Hashable | None,
        product: Product,
        option: Option,
        slots: Sequence[Slot],
        wanted: Wanted | None,
        viewer: Viewer,
    ) -> list[SlotState]:
        """The states of the slots `query` asks for. With `kept` (the caller's key of the
        catalogue it asks of: version and contract), reused from the availability answers
        (`AnswerCache`) while no commit, by any process, changed their places."""
        if kept is None or self._answers is None:
            return await self.states(product, option, slots, self._clock(), wanted, viewer)

        async def compute() -> bytes:
            found = await self.states(product, option, slots, self._clock(), wanted, viewer)
            return orjson.dumps([tuple(state) for state in found])

        key = ("states", kept, query, viewer.connection_id)
        encoded = await self._answers.answer(key, compute, self.reach(catalog, query))
        return [SlotState(AvailabilityStatus(s), a, v, c) for s, a, v, c in orjson.loads(encoded)]

    async def seen_in(self, conn: DbConnection, viewer: Viewer, item: SlotAvailability) -> SlotAvailability:
        """One slot read by `states_in`, as `viewer` sees it."""
        (state,) = await self.allotments.seen_by(
            conn, viewer, item.product, item.option, [item.slot], [item.state], self._clock(), None
        )
        return item if state is item.state else replace(item, state=state)

    async def held_as_run(
        self, product: Product, option: Option, slots: Sequence[Slot], now: datetime
    ) -> tuple[list[Slot], list[int]]:
        """The slots as they run (staff's departure overrides applied) and the places held in
        each, as the option's policy counts them."""
        if not slots:
            return [], []
        async with self._db.transaction(write=False) as conn:
            run = await slots_as_run(conn, product, option, slots)
            return run, await self.policies.of(option).held(conn, product, option, run, now)

    async def states_in(
        self, conn: DbConnection, product: Product, option: Option, slots: Sequence[Slot]
    ) -> list[SlotAvailability]:
        """The slots as they stand now, read inside the caller's transaction. A rental
        option's slots are described for its default rental duration, as a check that names no
        duration (or is made without octo/rentals) describes them."""
        now = self._clock()
        policy = self.policies.of(option)
        rental = policy.duration(option, None, None)
        slots = [policy.stretch(slot, rental) for slot in slots]
        states = await policy.states(conn, product, option, slots, now)
        return [
            SlotAvailability(product, option, slot, state, (), product.currency, rental)
            for slot, state in zip(slots, states, strict=True)
        ]

    async def occupancy(
        self, product: Product, option: Option, slots: Sequence[Slot]
    ) -> list[tuple[int, SlotState]]:
        """For staff: the places of the bookings starting in each slot, and its state as a
        reseller's check for the default duration sees it."""
        now = self._clock()
        policy = self.policies.of(option)
        rental = policy.duration(option, None, None)
        stretched = [policy.stretch(slot, rental) for slot in slots]
        if not slots:
            return []
        async with self._db.single_read() as conn:
            first = min(s.start for s in slots).astimezone(UTC)
            last = max(s.start for s in slots).astimezone(UTC)
            held = await bookings_reads.held_places(conn, product.id, option.id, first, last, now)
            states = await policy.states(conn, product, option, stretched, now)
        return [(held.get(s.id, 0), state) for s, state in zip(slots, states, strict=True)]

    def reach(self, catalog: Catalog, query: AvailabilityQuery) -> Reach:
        """What an answer to `query` shows, for `AnswerCache`: its product's places and a
        package's includes', on the days asked (every day where a booking of another day may
        count: rentals)."""
        product = catalog.product(query.product_id) if query.product_id is not None else None
        if product is None:
            return EVERY
        options = [o for o in product.options if query.option_id in (None, o.id)]
        involved = [(product, o) for o in options]
        for option in options:
            for include in option.includes:
                included = catalog.product(include.product_id)
                included_option = included.option(include.option_id) if included is not None else None
                if included is None or included_option is None:
                    return EVERY
                involved.append((included, included_option))
        products = frozenset(p.id for p, _ in involved)
        if any(self.policies.of(o).counts_across_days(o) for _, o in involved):
            return Reach(products)
        if query.local_date is not None:
            days = [query.local_date.isoformat()]
        elif query.local_date_start is not None and query.local_date_end is not None:
            days = [query.local_date_start.isoformat(), query.local_date_end.isoformat()]
        elif query.availability_ids:
            found = [local_date_of(availability_id) for availability_id in query.availability_ids]
            days = [day for day in found if day is not None] if None not in found else []
        else:
            days = []
        return Reach(products, min(days), max(days)) if days else Reach(products)

    async def check(
        self, catalog: Catalog, query: AvailabilityQuery, viewer: Viewer = STAFF, kept: Hashable | None = None
    ) -> list[SlotAvailability]:
        """The slots `query` asks for with their states as `viewer` sees them (`kept`: see
        `_asked_states`)."""
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
        policy = self.policies.of(option)
        rental = policy.duration(option, query.rental_duration_id, None)
        currency = find_currency(product, query.currency)
        pax, units = requested_units(option, query.units or ())
        wanted = Wanted(pax, tuple(units)) if query.units else None
        if query.availability_ids is not None:
            slots = []
            for availability_id in query.availability_ids:
                slot = slot_for_id(product, option, availability_id)
                if slot is None:
                    raise InvalidAvailabilityId(availability_id)
                slots.append(slot)
        else:
            if query.local_date is not None:
                check_supported("localDate", query.local_date)
                start = end = query.local_date
            elif query.local_date_start is None or query.local_date_end is None:
                raise BadRequest("localDateStart and localDateEnd must be sent together")
            else:
                start, end = query.local_date_start, query.local_date_end
            self._range(product, start, end)
            slots = self.slots(catalog, product, option, start, end)
        slots = [policy.stretch(slot, rental) for slot in slots]
        states = await self._asked_states(catalog, query, kept, product, option, slots, wanted, viewer)
        items = [
            SlotAvailability(product, option, slot, state, tuple(units), currency, rental)
            for slot, state in zip(slots, states, strict=True)
        ]
        for extension in self._extensions:
            if items:
                items = await extension.extend(catalog, items, wanted)
        return items

    async def calendar(
        self, catalog: Catalog, query: AvailabilityQuery, viewer: Viewer = STAFF, kept: Hashable | None = None
    ) -> list[CalendarDay]:
        """Each day `query` asks for, its state the best of its slots' (`kept`: see
        `_asked_states`)."""
        product = find_product(catalog, query.product_id)
        option = find_option(product, query.option_id)
        if query.local_date_start is None or query.local_date_end is None:
            raise BadRequest("localDateStart and localDateEnd are required")
        start, end = query.local_date_start, query.local_date_end
        policy = self.policies.of(option)
        rental = policy.duration(option, query.rental_duration_id, None)
        self._range(product, start, end)
        currency = find_currency(product, query.currency)
        pax, units = requested_units(option, query.units or ())
        wanted = Wanted(pax, tuple(units)) if query.units else None
        slots = self.slots(catalog, product, option, start, end)
        stretched = [policy.stretch(slot, rental) for slot in slots]
        states = await self._asked_states(catalog, query, kept, product, option, stretched, wanted, viewer)
        by_day: dict[date, list[tuple[Slot, SlotState]]] = {}
        for slot, state in zip(slots, states, strict=True):
            by_day.setdefault(slot.local_date, []).append((slot, state))
        days = []
        for offset in range((end - start).days + 1):
            day = start + timedelta(days=offset)
            found = by_day.get(day, [])
            days.append(
                CalendarDay(
                    product,
                    option,
                    day,
                    tuple(s for s, _ in found),
                    day_state([st for _, st in found]),
                    tuple(units),
                    currency,
                    rental,
                )
            )
        return days
