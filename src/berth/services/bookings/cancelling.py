"""Cancelling a booking, whole or (after boarding began) its tickets not admitted."""

from __future__ import annotations

from dataclasses import replace

from berth.domain.bookings import (
    Booking,
    BookingStatus,
    Cancellation,
    is_cancellable,
    not_changeable,
    pax_of,
    placed,
    with_placed,
)
from berth.domain.catalog import Catalog
from berth.domain.checkin import TICKETS_CANCELLED, boarded_only, not_through, partly_through
from berth.domain.errors import (
    UnprocessableEntity,
)
from berth.domain.slots import cancellation_cutoff
from berth.services.bookings.capacity import Placement
from berth.services.bookings.extensions import Stage
from berth.services.bookings.holding import HoldingPlaces
from berth.services.bookings.inputs import (
    SUPPLIER,
)
from berth.services.bookings.loader import booked_slot
from berth.store import bookings_repo
from berth.store.connection import DbConnection


class Cancelling(HoldingPlaces):
    async def cancel_in(
        self,
        conn: DbConnection,
        catalog: Catalog,
        booking: Booking,
        reason: str | None,
        *,
        force: bool,
        actor: str,
        cause: str | None = None,
    ) -> Booking:
        """Cancel one (locked, as-of-now) booking inside the caller's transaction; `cause`
        names what cancelled it when that is not its actor alone (`departure`)."""
        if booking.status is BookingStatus.CANCELLED:
            return booking
        now = self._clock()
        details = await self.loader.one(conn, catalog, booking)
        cutoff = cancellation_cutoff(details.option, details.slot) if details.slot else None
        if not is_cancellable(booking, None if force else cutoff, now):
            raise UnprocessableEntity(not_changeable(booking, cutoff, "cancelled"))
        cancelled = replace(
            booking,
            status=BookingStatus.CANCELLED,
            cancellation=Cancellation(refund="FULL", reason=reason, at=now),
            expires_at=None,
            updated_at=now,
        )
        await bookings_repo.save_booking(conn, cancelled, booking)
        # What extensions hold for the booking and do not count from its status goes back with it.
        await self.extensions.hold(
            conn,
            self.locks,
            self._holding(details.product, details.option, details.slot, booking, cancelled, now),
        )
        detail = {"reason": reason} if cause is None else {"reason": reason, "cause": cause}
        await self.changed(conn, catalog, booking, cancelled, "cancelled", actor, detail)
        return cancelled

    async def cancel_not_through_in(
        self, conn: DbConnection, catalog: Catalog, booking: Booking, reason: str, *, cause: str
    ) -> Booking:
        """Cancel the tickets not admitted at the gate of one (locked, as-of-now) booking partly
        through it, `cause` naming why (`departure`: cancelled after boarding began): the
        booking keeps its admitted tickets, REDEEMED, and the places, seats, extras and prices
        of those alone. In its history as `tickets cancelled`, announced as every change is (a
        booking_update; the guest's email where the booking asked for emails)."""
        if not partly_through(booking):
            return booking
        now = self._clock()
        product = await self.loader.product(conn, catalog, booking.product_id)
        option = product.option(booking.option_id) or product.default_option
        slot = booked_slot(product, option, booking)
        kept = boarded_only(booking, now)
        given = await self._given(
            conn, product, option, booking, kept.unit_items, Placement(slot, placed(booking)),
            moved=False, same_option=True,
        )  # fmt: skip
        updated = with_placed(replace(kept, pax=pax_of(option, [i.unit_id for i in kept.unit_items])), given)
        updated = self.extensions.apply(Stage.UPDATE, product, option, slot, updated, {})
        updated = self.priced(product, option, updated)
        await bookings_repo.save_booking(conn, updated, booking)
        await self.extensions.hold(
            conn, self.locks, self._holding(product, option, slot, booking, updated, now)
        )
        tickets = [item.supplier_reference for item in not_through(booking)]
        detail = {"reason": reason, "cause": cause, "tickets": tickets}
        await self.changed(conn, catalog, booking, updated, TICKETS_CANCELLED, SUPPLIER, detail)
        return updated
