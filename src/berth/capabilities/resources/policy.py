"""octo/resources' capacity policy: an option with resource groups takes its places from its
resources, and each booking is allocated resources (and seats) under its slot's lock
(OCTO.md §6.5 rules 2 to 5).

The index of live allocations (`booking_resources`, `booking_seats`) is kept in step with every
change of a booking; a seat's uniqueness is also a database constraint.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import replace
from datetime import UTC, datetime

from berth.capabilities.request_fields import RESOURCE_IDS
from berth.domain.availability import AvailabilityStatus, SlotState
from berth.domain.bookings import Booking, UnitItem
from berth.domain.catalog import Catalog, Option, Product
from berth.domain.resources import (
    Allocation,
    ResourceUse,
    allocate,
    availability_state,
    check_selection,
    party_of,
    party_of_units,
)
from berth.domain.slots import Slot
from berth.services.bookings.capacity import Placement, SlotPolicy, Wanted, slots_as_run
from berth.services.bookings.inputs import Asked
from berth.services.bookings.locks import SlotLocks
from berth.services.clock import Clock
from berth.store import resources_repo
from berth.store.connection import DbConnection
from berth.store.resources_repo import SlotIndex


async def resource_use(
    conn: DbConnection, product: Product, option: Option, slots: Sequence[Slot], now: datetime
) -> dict[str, dict[str, ResourceUse]]:
    """Use of the option's resources per slot: one query, none for an option without
    resources."""
    if not option.resource_groups or not slots:
        return {}
    first = min(s.start for s in slots).astimezone(UTC)
    last = max(s.start for s in slots).astimezone(UTC)
    return await resources_repo.use_between(conn, product.id, option.id, first, last, now)


def _use_token(booking: Booking) -> str:
    return f"{booking.id}:resources"


class ResourcePolicy(SlotPolicy):
    def __init__(self, clock: Clock) -> None:
        self._clock = clock

    def applies_to(self, option: Option) -> bool:
        return bool(option.resource_groups)

    def takes_places_first(self, option: Option) -> bool:
        # Resources are allocated under the slot's lock into the booking's row.
        return True

    def check_request(self, catalog: Catalog, product: Product, option: Option, asked: Asked) -> None:
        selection = asked.get(RESOURCE_IDS)
        if selection:
            check_selection(catalog, product, option, selection)

    def place(
        self, option: Option, slot: Slot | None, asked: Asked, booking: Booking | None, *, moved: bool = False
    ) -> Placement:
        """The slot's placement, with the resources the request chose (for `allocate`)."""
        return replace(
            super().place(option, slot, asked, booking, moved=moved), asked=asked.get(RESOURCE_IDS)
        )

    async def states(
        self,
        conn: DbConnection,
        product: Product,
        option: Option,
        slots: Sequence[Slot],
        now: datetime,
        wanted: Wanted | None = None,
    ) -> list[SlotState]:
        slots = await slots_as_run(conn, product, option, slots)
        held = await self.held(conn, product, option, slots, now)
        use = await resource_use(conn, product, option, slots, now)
        party = party_of_units(option, wanted.units) if wanted is not None else None
        return [
            availability_state(option, s, h, use.get(s.id, {}), now, party)
            for s, h in zip(slots, held, strict=True)
        ]

    async def state_in(
        self,
        conn: DbConnection,
        product: Product,
        option: Option,
        run: Slot,
        now: datetime,
        requested: int,
        *,
        excluding: str | None = None,
    ) -> SlotState:
        """The place count of `states` (the resources' free places, and the schedule's
        capacity if set), without the booking `excluding`. The schedule's places refuse
        `requested` more than they have left; whether the party fits a boat or a row of seats
        is the allocation's to say, after this, under the same lock."""
        key = (product.id, option.id, run.id)
        use = (
            await resources_repo.use_of_slot(conn, key, run.start.astimezone(UTC), now, excluding=excluding)
        ).use
        if run.capacity is None:
            return availability_state(option, run, 0, use, now)
        held = (await self.held(conn, product, option, [run], now, excluding=excluding))[0]
        state = availability_state(option, run, held, use, now)
        if state.available and run.capacity - held < requested:
            return SlotState(AvailabilityStatus.SOLD_OUT, False, state.vacancies, state.capacity)
        return state

    async def read_ahead(
        self, locks: SlotLocks, product: Product, option: Option, slot: Slot, booking: Booking
    ) -> None:
        key = (product.id, option.id, slot.id)
        start = slot.start.astimezone(UTC)
        now = self._clock()

        async def use(conn: DbConnection) -> SlotIndex:
            return await resources_repo.use_of_slot(conn, key, start, now)

        await locks.read_ahead(_use_token(booking), use)

    async def allocate(
        self,
        conn: DbConnection,
        locks: SlotLocks,
        product: Product,
        option: Option,
        booking: Booking,
        items: Sequence[UnitItem],
        placement: Placement,
        *,
        moved: bool = True,
        same_option: bool = True,
    ) -> Placement:
        """The booking's allocations (rules 2 and 3): a non-empty selection replaces them in the
        groups it names; otherwise (absent or `[]`, and in the groups it does not name) they stay
        as they are unless the party or the slot changed, and then the booking is re-allocated,
        keeping its resources (and seats) where they still fit. Raises UNPROCESSABLE_ENTITY
        (naming the group) when the party or the selection does not fit."""
        slot, selection = placement.slot, placement.asked
        assert slot is not None  # asked only of a placement on a slot
        party = party_of(option, [i.unit_id for i in items])
        previous = booking.resource_allocations if same_option else ()
        changed = (
            moved or not same_option or party != party_of(option, [i.unit_id for i in booking.unit_items])
        )
        if not selection and not changed and booking.resource_allocations:
            return self._given(placement, booking.resource_allocations)
        key = (product.id, option.id, slot.id)
        start = slot.start.astimezone(UTC)
        now = self._clock()

        async def use(c: DbConnection) -> SlotIndex:
            return await resources_repo.use_of_slot(c, key, start, now, excluding=booking.id)

        if booking.test_mode:
            index = await use(conn)
        else:
            index = await locks.locked_read(conn, [key], _use_token(booking), use)
        allocations = allocate(option, slot, index.use, party, selection or None, previous)
        if not booking.test_mode and index.released:
            given = [(a.resource_id, s) for a in allocations for s in a.seat_ids]
            stale = [seat for seat in given if seat in index.released]
            if stale:
                await resources_repo.clear_released_seats(conn, key, stale)
        return self._given(placement, allocations)

    @staticmethod
    def _given(placement: Placement, allocations: tuple[Allocation, ...]) -> Placement:
        return replace(placement, stored=replace(placement.stored, resource_allocations=allocations))

    async def booking_changed(
        self, conn: DbConnection, before: Booking | None, after: Booking, now: datetime
    ) -> None:
        """Keep the index of live allocations in step with a booking that changed: its rows
        while it holds places, none once it stops (cancelled, expired, rejected)."""

        def live(booking: Booking | None) -> bool:
            return (
                booking is not None
                and booking.holds_places(now)
                and booking.availability_id is not None
                and bool(booking.resource_allocations)
            )

        if live(after):
            unchanged = (
                before is not None
                and live(before)
                and (before.product_id, before.option_id, before.availability_id, before.resource_allocations)
                == (after.product_id, after.option_id, after.availability_id, after.resource_allocations)
            )
            if not unchanged:
                await resources_repo.hold(conn, after, fresh=before is None)
        elif after.resource_allocations or (before is not None and before.resource_allocations):
            await resources_repo.release(conn, after.id)
