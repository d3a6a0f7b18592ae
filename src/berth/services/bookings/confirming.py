"""Confirming a booking on hold: its last changes (unit items, contact, what its capabilities
ask), the places they take, and the confirmation checks (a payment captured)."""

from __future__ import annotations

from dataclasses import replace
from datetime import datetime

from berth.domain.bookings import (
    Booking,
    BookingStatus,
    missing_contact_fields,
    pax_of,
    price_basis,
    with_placed,
)
from berth.domain.catalog import Catalog
from berth.domain.catalog.lookup import find_option
from berth.domain.errors import (
    InvalidBookingUuid,
    UnprocessableEntity,
)
from berth.domain.slots import slot_for_id
from berth.domain.times import format_utc
from berth.services.bookings.extensions import Stage
from berth.services.bookings.holding import HoldingPlaces
from berth.services.bookings.inputs import (
    RESELLER,
    ConfirmInput,
)
from berth.store import bookings_repo
from berth.store.connection import DbConnection


class Confirming(HoldingPlaces):
    # --- confirm -----------------------------------------------------------------------------

    async def confirm_in(
        self, conn: DbConnection, catalog: Catalog, booking: Booking, data: ConfirmInput, now: datetime
    ) -> Booking:
        """Confirm one (locked, as-of-now) booking inside the caller's transaction."""
        uuid = booking.uuid
        if booking.status is BookingStatus.EXPIRED:
            raise InvalidBookingUuid(uuid, f"The hold on booking {uuid!r} expired; reserve again")
        if booking.status in (BookingStatus.CONFIRMED, BookingStatus.PENDING):
            return booking
        if booking.status is not BookingStatus.ON_HOLD:
            raise UnprocessableEntity(f"Booking {uuid!r} is {booking.status.value} and cannot be confirmed")
        # The booking's own product and option, whatever its contract sells today.
        product, _ = await self.loader.booked(conn, catalog, booking)
        option = find_option(product, booking.option_id)
        policy = self.policies.of(option)
        self.policies.check_request(catalog, product, option, data.asked)
        # What the request asks of the policy may move the booking's interval; else it keeps its own.
        bare = slot_for_id(product, option, booking.availability_id) if booking.availability_id else None
        placement = policy.place(option, bare, data.asked, booking)
        slot = placement.slot
        if slot is not None and now >= slot.cutoff_utc:
            raise UnprocessableEntity(
                f"Availability {slot.id} closed for sale at {format_utc(slot.cutoff_utc)}"
            )
        items = (
            self._unit_items(option, data.unit_items, booking.unit_items)
            if data.unit_items
            else booking.unit_items
        )
        pax = pax_of(option, [i.unit_id for i in items])
        grown = with_placed(replace(booking, unit_items=items, pax=pax), placement.stored)
        slot_end = grown.slot_end
        checked = await self._check_sale(conn, catalog, product, option, slot, booking, grown)
        # Places the same as held: the slot's sum of places held stays as it is, and the count
        # moves last (`bookings_repo.move_places`).
        same_places = pax == booking.pax and slot_end == booking.slot_end
        if slot is not None and (pax > booking.pax or slot_end != booking.slot_end) and not booking.test_mode:
            await self._take_places(conn, product, option, slot, booking, pax, excluding=booking.id)
        contact = booking.contact if data.contact is None else data.contact
        if data.request_locales:
            contact = replace(contact, request_locales=data.request_locales)
        missing = missing_contact_fields(option, contact, items)
        if missing:
            raise UnprocessableEntity("Required contact fields are missing: " + ", ".join(missing))
        given = await self._given(
            conn, product, option, booking, items, placement, moved=False, same_option=True
        )
        status = BookingStatus.CONFIRMED if product.instant_confirmation else BookingStatus.PENDING
        confirmed = replace(
            booking,
            status=status,
            contact=contact,
            reseller_reference=booking.reseller_reference
            if data.reseller_reference is None
            else data.reseller_reference,
            notes=booking.notes if data.notes is None else data.notes,
            unit_items=items,
            pax=pax,
            expires_at=None,
            confirmed_at=now if status is BookingStatus.CONFIRMED else None,
            updated_at=now,
        )
        confirmed = with_placed(confirmed, given)
        confirmed = self.extensions.apply(Stage.CONFIRM, product, option, slot, confirmed, data.extensions)
        confirmed = self.priced(
            product, option, confirmed, reprice=price_basis(confirmed) != price_basis(booking)
        )
        if not checked:  # a part priced now (an extra's piece) is sold too
            await self._check_sale(conn, catalog, product, option, slot, booking, confirmed)
        for check in self._confirmation_checks:
            await check.confirming(conn, confirmed)
        await bookings_repo.save_booking(conn, confirmed, booking, move_places=not same_places)
        await self.extensions.hold(
            conn, self.locks, self._holding(product, option, slot, booking, confirmed, now)
        )
        receipt = {"emailReceipt": True} if data.email_receipt else None
        await self.changed(conn, catalog, booking, confirmed, "confirmed", RESELLER, receipt)
        if same_places:
            await bookings_repo.move_places(conn, booking, confirmed)
        return confirmed
