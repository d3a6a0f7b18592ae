"""Holding places: a reservation's write (its row, then its places under the slot's lock, in
one statement on PostgreSQL where it fits), the count of places a change takes, and an
expired hold held again."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import replace
from datetime import datetime

from berth.domain.allotments import seen_with
from berth.domain.availability import AvailabilityStatus, SlotState, slot_state
from berth.domain.bookings import (
    Booking,
    BookingStatus,
    Placed,
    UnitItem,
    placed,
    with_placed,
)
from berth.domain.catalog import Catalog, Option, Product
from berth.domain.errors import (
    BadRequest,
    UnprocessableEntity,
)
from berth.domain.slots import Slot
from berth.domain.times import format_utc
from berth.services.bookings.base import event_detail
from berth.services.bookings.capacity import Placement, slots_as_run
from berth.services.bookings.extensions import Holding
from berth.services.bookings.inputs import (
    RESELLER,
    SYSTEM,
)
from berth.services.bookings.loader import booked_slot
from berth.services.bookings.locks import SlotKey
from berth.services.bookings.preparing import PreparedBooking, Preparing
from berth.store import allotments_repo, bookings_one_call, bookings_repo
from berth.store.connection import DbConnection


class HoldingPlaces(Preparing):
    # --- places ------------------------------------------------------------------------------

    @staticmethod
    def _places_token(booking: Booking) -> str:
        return f"{booking.id}:places"

    async def _seen_as_run(
        self,
        conn: DbConnection,
        product: Product,
        option: Option,
        slot: Slot,
        now: datetime,
        excluding: str | None,
        booking: Booking,
        pax: int,
    ) -> tuple[Slot, SlotState]:
        """The slot as it runs (staff's overrides applied) and its state for `pax` more places
        of `booking`, as its connection's availability shows it (`AllotmentService.seen_by`):
        the option's policy's count, less the other connections' unused blocks."""
        (run,) = await slots_as_run(conn, product, option, [slot])
        reserved = await self.allotments.reserved_in(
            conn, product, option, run, booking.connection_id, now, excluding=excluding
        )
        if run.capacity is None and not reserved:
            # Freesale, or places from resources with no block of another to keep: nothing
            # to count (resources are allocated after this, under the same lock).
            return run, slot_state(run, 0, now, pax)
        policy = self.policies.of(option)
        state = await policy.state_in(conn, product, option, run, now, pax, excluding=excluding)
        return run, seen_with(state, reserved, pax)

    async def _take_places(
        self,
        conn: DbConnection,
        product: Product,
        option: Option,
        slot: Slot,
        booking: Booking,
        pax: int,
        *,
        excluding: str | None = None,
        also_lock: Sequence[SlotKey] = (),
    ) -> None:
        """Lock the slot's row (the policy's), then check that `pax` more places fit in `slot`.
        Raises UNPROCESSABLE_ENTITY."""
        policy = self.policies.of(option)
        now = self._clock()

        async def seen(c: DbConnection) -> tuple[Slot, SlotState]:
            return await self._seen_as_run(c, product, option, slot, now, excluding, booking, pax)

        keys = [policy.lock_key(product, option, slot), *also_lock]
        # The departure as staff left it (closed, capacity), read under its lock as the places
        # are: a change of the departure and a reservation take turns.
        run, state = await self.locks.locked_read(conn, keys, self._places_token(booking), seen)
        if not state.available:
            if state.status is AvailabilityStatus.CLOSED:
                past_cutoff = not run.closed and now >= run.cutoff_utc
                reason = "is past its sales cutoff" if past_cutoff else "is closed for sale"
                raise UnprocessableEntity(f"Availability {run.id} {reason}")
            raise UnprocessableEntity(policy.sold_out(run, state.vacancies or 0, pax))

    def _holding(
        self,
        product: Product,
        option: Option,
        slot: Slot | None,
        before: Booking,
        after: Booking,
        now: datetime,
    ) -> Holding:
        """A change's write as booking extensions' stocks see it (see `extensions.Holding`)."""
        takes = slot is not None and not after.test_mode
        lock_key = (
            self.policies.of(option).lock_key(product, option, slot) if slot is not None and takes else None
        )
        return Holding(product, option, slot, lock_key, before, after, now)

    async def read_ahead(self, prepared: PreparedBooking) -> None:
        """Before a reservation's write transaction: let the lock manager read what the write
        will count on (it reads nothing when it locks)."""
        booking, slot = prepared.booking, prepared.slot
        if booking.test_mode or slot is None:
            return
        now = self._clock()
        policy = prepared.policy
        await policy.read_ahead(self.locks, prepared.product, prepared.option, slot, booking)
        await self.extensions.read_ahead(self.locks, prepared.product, prepared.option, slot, booking)

        async def seen(c: DbConnection) -> tuple[Slot, SlotState]:
            return await self._seen_as_run(
                c, prepared.product, prepared.option, slot, now, None, booking, booking.pax
            )

        await self.locks.read_ahead(self._places_token(booking), seen)

    async def place_in(
        self, conn: DbConnection, catalog: Catalog, prepared: PreparedBooking
    ) -> tuple[Booking, bool]:
        """Insert a prepared booking after taking its places, inside the caller's transaction.
        Returns the booking and whether it is new (False: the same request was made before)."""
        booking, new = await self.insert_in(conn, catalog, prepared)
        if new:
            await self.hold_in(conn, prepared, booking)
        return booking, new

    async def insert_in(
        self, conn: DbConnection, catalog: Catalog, prepared: PreparedBooking
    ) -> tuple[Booking, bool]:
        """`place_in`'s first part: the booking's row, its history and its announcements, and
        the places of a policy that takes them first (under their lock, before the row). The
        places of the others are `hold_in`'s, once every row of the transaction is written."""
        booking = prepared.booking
        product, option = prepared.product, prepared.option
        if self._places_first(prepared):
            existing = await bookings_repo.get_by_uuid(conn, booking.connection_id, booking.uuid)
            if existing is not None:
                return self._repeat(existing, booking), False
            assert prepared.slot is not None
            await self._check_on_sale(conn, product, option, prepared.slot, booking)
            await self._take_places(conn, product, option, prepared.slot, booking, booking.pax)
        given = await self._given(
            conn,
            product,
            option,
            booking,
            booking.unit_items,
            prepared.placement,
            moved=True,
            same_option=True,
        )
        booking = with_placed(booking, given)
        detail = {"availabilityId": booking.availability_id}
        first = bookings_repo.FirstEvent(self._clock(), "reserved", RESELLER, event_detail(booking, detail))
        if not await bookings_repo.insert_new_booking(conn, booking, first):
            existing = await bookings_repo.get_by_uuid(conn, booking.connection_id, booking.uuid)
            if existing is None:  # written by a transaction not committed yet (SQLite cannot)
                raise BadRequest(f"The reservation {booking.uuid!r} conflicted with another; try again")
            return self._repeat(existing, booking), False
        # On PostgreSQL the slot's lock is held from _hold_places to the commit, and every
        # reservation of a departure queues for it: what does not need the lock (the row, its
        # history, the outbox) is written first, so the lock is held for one statement.
        await self.changed(conn, catalog, None, booking, "reserved", RESELLER, detail, recorded=True)
        return booking, True

    async def hold_in(self, conn: DbConnection, prepared: PreparedBooking, booking: Booking) -> None:
        """`place_in`'s second part, for a booking `insert_in` wrote: check and count its places
        under the slot's lock (raises UNPROCESSABLE_ENTITY when they are not there), or count
        those taken first; then its extensions' stock."""
        if prepared.slot is not None and not booking.test_mode and not self._places_first(prepared):
            await self._hold_places(conn, prepared.product, prepared.option, prepared.slot, booking)
        else:
            await bookings_repo.count_new_hold(conn, booking)
        holding = Holding(
            prepared.product, prepared.option, prepared.slot, prepared.lock_key, None, booking, self._clock()
        )
        await self.extensions.hold(conn, self.locks, holding)

    def fits_one_call(self, prepared: PreparedBooking) -> bool:
        """Whether the reservation's write can be one statement (`Database.one_call`): a plain
        hold, checked in the statement. A hint that spares the attempt what cannot fit (and the
        race tests' read-ahead count); what does not fit is refused before anything is sent."""
        return (
            prepared.lock_key is not None
            and self.locks.checks_in_statement
            and not self._places_first(prepared)
            and not prepared.booking.extensions
        )

    @staticmethod
    def _places_first(prepared: PreparedBooking) -> bool:
        """Whether the booking's policy takes its places before its row is written."""
        return (
            prepared.slot is not None
            and not prepared.booking.test_mode
            and prepared.policy.takes_places_first(prepared.option)
        )

    def _repeat(self, existing: Booking, booking: Booking) -> Booking:
        self.check_repeat(existing, booking.request_fingerprint)
        return existing

    async def _hold_places(
        self, conn: DbConnection, product: Product, option: Option, slot: Slot, booking: Booking
    ) -> None:
        """Lock the slot, then check and count a new booking's places in one statement (the
        departure as staff left it, the places held, the new hold); on PostgreSQL the lock and
        the statement are one round trip, or the last part of the reservation's one statement
        under `Database.one_call` (anything after it, such as an extension's stock, then makes
        the block run again as a transaction). Raises UNPROCESSABLE_ENTITY (or, from the one
        statement, OneCallRefused)."""
        await self._check_on_sale(conn, product, option, slot, booking)
        now = self._clock()
        blocks = await self.allotments.blocking(conn, product, option, slot, booking.connection_id, now)
        if self.locks.checks_in_statement and not (slot.closed or now >= slot.cutoff_utc):
            key = self.policies.of(option).lock_key(product, option, slot)
            if blocks:
                # Other connections' blocks: their unused places count as taken, in the statement.
                reserving = allotments_repo.reserving(conn.dialect.name, blocks, slot.local_date.isoformat())
                if await bookings_one_call.lock_and_hold_reserving(
                    conn, key, booking, slot.capacity, now, reserving
                ):
                    return
            elif bookings_one_call.hold_in_one_call(
                conn, key, booking, slot.capacity, now
            ) or await bookings_one_call.lock_and_hold_if_room(conn, key, booking, slot.capacity, now):
                return
        # Refused, or no lock (the race tests' read-ahead count): the count, read under the
        # lock, decides (and says why when it refuses).
        await self._take_places(conn, product, option, slot, booking, booking.pax)
        await bookings_repo.count_new_hold(conn, booking)

    async def _given(
        self,
        conn: DbConnection,
        product: Product,
        option: Option,
        booking: Booking,
        items: Sequence[UnitItem],
        placement: Placement,
        *,
        moved: bool,
        same_option: bool,
    ) -> Placed:
        """What the booking stores of `placement` once its policy gave it what it is given in
        its slot besides places (`SlotPolicy.allocate`, under the slot's lock): `booking` as it
        was, `items` its unit items now."""
        if placement.slot is not None:
            placement = await self.policies.of(option).allocate(
                conn,
                self.locks,
                product,
                option,
                booking,
                items,
                placement,
                moved=moved,
                same_option=same_option,
            )
        return placement.stored

    async def reinstate_in(
        self, conn: DbConnection, catalog: Catalog, booking: Booking, expires_at: datetime
    ) -> Booking:
        """Hold again the places of one (locked, as-of-now) booking whose hold ran out, until
        `expires_at`, if they are still there (raises UNPROCESSABLE_ENTITY when they are not):
        what a payment that succeeded after the hold ended asks before it confirms."""
        if booking.status is not BookingStatus.EXPIRED:
            raise UnprocessableEntity(
                f"Booking {booking.uuid!r} is {booking.status.value}: only an expired hold is held again"
            )
        product, option = await self.loader.booked(conn, catalog, booking)
        slot = booked_slot(product, option, booking)
        if slot is not None and not booking.test_mode:
            await self._check_on_sale(conn, product, option, slot, booking)
            await self._take_places(conn, product, option, slot, booking, booking.pax, excluding=booking.id)
        given = await self._given(
            conn, product, option, booking, booking.unit_items, Placement(slot, placed(booking)),
            moved=True, same_option=True,
        )  # fmt: skip
        now = self._clock()
        held = replace(
            booking, status=BookingStatus.ON_HOLD, expires_at=expires_at, cancellation=None, updated_at=now
        )
        held = with_placed(held, given)
        await bookings_repo.save_booking(conn, held, booking)
        await self.extensions.hold(conn, self.locks, self._holding(product, option, slot, booking, held, now))
        await self.changed(
            conn, catalog, booking, held, "reinstated", SYSTEM, {"utcExpiresAt": format_utc(expires_at)}
        )
        return held
