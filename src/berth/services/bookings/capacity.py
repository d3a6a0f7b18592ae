"""Capacity policies: how an option's places are counted, locked and allocated.

The booking core and the availability service ask the option's policy; they never branch on
a capability. `SlotPolicy` is plain OCTO (a schedule's places per departure); a capability
registers its own policy for the options it recognises (octo/rentals: overlapping rentals;
octo/resources: resource groups and seats). `CapacityPolicies` picks one per option, the first
registered that claims it, else `SlotPolicy`.

A reservation, a change and a confirmation ask the option's policy for a `Placement`: what it
makes of the request's fields (`inputs.Asked`) and of the booking as it is. The core carries
the placement without looking inside: the interval it holds places over, what the booking
stores of it (`domain.bookings.Placed`), and, after `allocate` under the slot's lock, what the
booking was given there.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field, replace
from datetime import UTC, datetime
from typing import Any

from berth.domain.availability import SlotState, slot_state
from berth.domain.bookings import Booking, Placed, UnitItem, placed
from berth.domain.catalog import Catalog, Option, Product, RentalDuration
from berth.domain.departures import as_run
from berth.domain.errors import BadRequest
from berth.domain.slots import Slot
from berth.services.bookings.inputs import Asked
from berth.services.bookings.locks import SlotKey, SlotLocks
from berth.store import bookings_reads, departures_repo
from berth.store.connection import DbConnection


@dataclass(frozen=True)
class Wanted:
    """The party an availability request names: its places and its units."""

    pax: int
    units: tuple[tuple[str, int], ...]


@dataclass(frozen=True)
class Placement:
    """Where a booking is, as its option's policy made it: `slot`, the interval it holds its
    places over (None: freesale); `stored`, what the booking stores of it; `asked`, the policy's
    own reading of the request, for `allocate`. Opaque to the core."""

    slot: Slot | None
    stored: Placed = field(default_factory=Placed)
    asked: Any = None


def kept_interval(slot: Slot, booking: Booking) -> Slot:
    """`slot` over the interval `booking` holds (its stored end, if any)."""
    if booking.slot_end is None:
        return slot
    return replace(slot, end=booking.slot_end.astimezone(slot.start.tzinfo))


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

    def check_request(self, catalog: Catalog, product: Product, option: Option, asked: Asked) -> None:
        """Validate the request fields this policy's capability reads (`asked`) for `option`,
        whichever policy the option has."""
        return None

    def place(
        self, option: Option, slot: Slot | None, asked: Asked, booking: Booking | None, *, moved: bool = False
    ) -> Placement:
        """Where a booking of `option` on `slot` (the schedule's; None: freesale) is, from the
        request's fields (`asked`, checked by `check_request`) and the booking as it is (None: a
        new one; `moved`: to another product, option or departure). Plain slots: a booking
        that stays keeps its interval and what it stores; any other stores nothing."""
        if booking is not None and not moved:
            return Placement(kept_interval(slot, booking) if slot is not None else None, placed(booking))
        return Placement(slot)

    # The availability service's interval (a check names a duration, the core a placement).
    # The two words of octo/rentals the core keeps: in the availability's hooks only.
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
        held = await bookings_reads.held_places(
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
        booking: Booking,
        items: Sequence[UnitItem],
        placement: Placement,
        *,
        moved: bool = True,
        same_option: bool = True,
    ) -> Placement:
        """`placement` (on a slot) with what the booking is given there besides places, under
        the slot's lock: `booking` as it was (a new one: as prepared), `items` its unit items
        now."""
        return placement

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

    def check_request(self, catalog: Catalog, product: Product, option: Option, asked: Asked) -> None:
        """Every policy checks the fields it reads, whichever policy the option has."""
        if asked:
            for policy in self._policies:
                policy.check_request(catalog, product, option, asked)

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
