"""Capacity policies: how an option's places are counted, locked and allocated.

The booking core and the availability service ask the option's policy; they never branch on
a capability. `SlotPolicy` is plain OCTO (a schedule's places per departure); a capability
registers its own policy for the options it recognises (octo/rentals: overlapping rentals;
octo/resources: resource groups and seats). `CapacityPolicies` picks one per option, the first
registered that claims it, else `SlotPolicy`.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from datetime import UTC, datetime

from berth.domain.availability import SlotState, slot_state
from berth.domain.bookings import Booking, UnitItem
from berth.domain.catalog import Catalog, Option, Product, RentalDuration
from berth.domain.departures import as_run
from berth.domain.errors import BadRequest
from berth.domain.resources import Allocation
from berth.domain.slots import Slot
from berth.services.bookings.locks import SlotKey, SlotLocks
from berth.store import bookings_repo, departures_repo
from berth.store.database import DbConnection


@dataclass(frozen=True)
class Wanted:
    """The party an availability request names: its places and its units."""

    pax: int
    units: tuple[tuple[str, int], ...]


def slot_key(booking: Booking) -> SlotKey:
    return (booking.product_id, booking.option_id, booking.availability_id or "")


async def slots_as_run(
    conn: DbConnection, product: Product, option: Option, slots: Sequence[Slot]
) -> list[Slot]:
    """`slots` as they run: with staff's departure overrides (closed, capacity) applied. One
    query; a writer that takes places calls it under the slot's lock."""
    if not slots:
        return []
    overrides = await departures_repo.of_slots(
        conn, product.id, option.id, [s.start.astimezone(UTC) for s in slots]
    )
    if not overrides:
        return list(slots)
    return [as_run(s, overrides.get(s.id)) for s in slots]


class SlotPolicy:
    """Plain slots: a departure holds its schedule's places; a write locks the departure."""

    def applies_to(self, option: Option) -> bool:
        return True

    # Whether a reservation takes its places (and so the lock) before its row is written: a
    # policy that counts the new row itself, or allocates under the lock into the row, does.
    def takes_places_first(self, option: Option) -> bool:
        return False

    def check_request(
        self, catalog: Catalog, product: Product, option: Option, selection: Sequence[str]
    ) -> None:
        """Validate the request fields this policy's capability adds (e.g. a resource selection)
        for `option`, whichever policy the option has."""
        return None

    def duration(self, option: Option, wanted: str | None, kept: str | None) -> RentalDuration | None:
        """How long a booking holds its places: the rental duration a request names (`wanted`),
        else the booking's own (`kept`) while the option still has it, else the option's
        default; None for an option whose bookings hold their slot only."""
        if wanted is not None:
            raise BadRequest(f"Option {option.id!r} is not a rental option: rentalDurationId is not accepted")
        return None

    def stretch(self, slot: Slot, duration: RentalDuration | None) -> Slot:
        """The slot a booking of `duration` occupies when it books `slot`."""
        return slot

    def lock_key(self, product: Product, option: Option, slot: Slot) -> SlotKey:
        return (product.id, option.id, slot.id)

    async def held(
        self,
        conn: DbConnection,
        product: Product,
        option: Option,
        slots: Sequence[Slot],
        now: datetime,
        *,
        excluding: str | None = None,
    ) -> list[int]:
        """Places held in each of `slots` by live bookings (but `excluding`): one query."""
        if not slots:
            return []
        first = min(s.start for s in slots).astimezone(UTC)
        last = max(s.start for s in slots).astimezone(UTC)
        held = await bookings_repo.held_places(
            conn, product.id, option.id, first, last, now, excluding=excluding
        )
        return [held.get(s.id, 0) for s in slots]

    async def states(
        self,
        conn: DbConnection,
        product: Product,
        option: Option,
        slots: Sequence[Slot],
        now: datetime,
        wanted: Wanted | None = None,
    ) -> list[SlotState]:
        """Each slot as it stands now, for the party `wanted` if one is named."""
        slots, held = await self.held_as_run(conn, product, option, slots, now)
        requested = wanted.pax if wanted is not None else None
        return [slot_state(s, h, now, requested) for s, h in zip(slots, held, strict=True)]

    async def held_as_run(
        self, conn: DbConnection, product: Product, option: Option, slots: Sequence[Slot], now: datetime
    ) -> tuple[list[Slot], list[int]]:
        """`slots` as they run (staff's overrides applied) and the places each holds now. Plain
        places: one query for both (a policy that counts its places otherwise overrides this)."""
        if not slots:
            return [], []
        first = min(s.start for s in slots).astimezone(UTC)
        last = max(s.start for s in slots).astimezone(UTC)
        overrides, held = await departures_repo.overrides_and_held(
            conn, product.id, option.id, first, last, now
        )
        run = [as_run(s, overrides.get(s.id)) for s in slots] if overrides else list(slots)
        return run, [held.get(s.id, 0) for s in run]

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
        """A writer's count, under the slot's lock: `run` (as it runs) as availability states
        it for `requested` places, without the places of the booking `excluding`."""
        if run.capacity is None:
            return slot_state(run, 0, now, requested)
        held = (await self.held(conn, product, option, [run], now, excluding=excluding))[0]
        return slot_state(run, held, now, requested)

    def sold_out(self, slot: Slot, left: int, pax: int) -> str:
        return f"Availability {slot.id} is sold out: {left} place(s) left, {pax} requested"

    async def read_ahead(
        self, locks: SlotLocks, product: Product, option: Option, slot: Slot, booking: Booking
    ) -> None:
        """Before a reservation's write transaction: what the lock manager should read ahead
        besides the places held (see `locks.NoLocks`)."""
        return None

    async def allocate(
        self,
        conn: DbConnection,
        locks: SlotLocks,
        product: Product,
        option: Option,
        slot: Slot,
        booking: Booking,
        items: Sequence[UnitItem],
        selection: Sequence[str] | None,
        *,
        moved: bool = True,
        same_option: bool = True,
    ) -> tuple[Allocation, ...]:
        """What the booking is given in `slot` besides places, under the slot's lock: `booking`
        as it was (a new one: as prepared), `items` its unit items now."""
        return ()

    async def booking_changed(
        self, conn: DbConnection, before: Booking | None, after: Booking, now: datetime
    ) -> None:
        """Keep what the policy indexes of a booking in step with its change."""
        return None

    def counted_in(self, catalog: Catalog, booking: Booking) -> list[SlotKey]:
        """The slots whose availability the booking's places count in."""
        return [slot_key(booking)]

    def counts_across_days(self, option: Option) -> bool:
        """Whether a slot's availability may change with bookings of other days (kept answers
        of such an option are dropped by a change on any day of its product)."""
        return False


class CapacityPolicies:
    """The policies of the registered capabilities, asked in order; plain slots otherwise."""

    def __init__(self, policies: Sequence[SlotPolicy] = ()) -> None:
        self._policies = tuple(policies)
        self._plain = SlotPolicy()

    def of(self, option: Option) -> SlotPolicy:
        return next((p for p in self._policies if p.applies_to(option)), self._plain)

    def check_request(
        self, catalog: Catalog, product: Product, option: Option, selection: Sequence[str] | None
    ) -> None:
        if selection:
            for policy in self._policies:
                policy.check_request(catalog, product, option, selection)

    async def booking_changed(
        self, conn: DbConnection, before: Booking | None, after: Booking, now: datetime
    ) -> None:
        for policy in self._policies:
            await policy.booking_changed(conn, before, after, now)

    def counted_in(self, catalog: Catalog, booking: Booking) -> list[SlotKey]:
        product = catalog.booked(booking.product_id, booking.option_id)
        option = product.option(booking.option_id) if product else None
        if option is None:
            return [slot_key(booking)]
        return self.of(option).counted_in(catalog, booking)
