"""Changing a booking: a reseller's PATCH (a move, other units, what its capabilities ask)
and the extension of a hold."""

from __future__ import annotations

from dataclasses import replace
from datetime import UTC, datetime

from berth.domain.bookings import (
    Booking,
    BookingStatus,
    check_units,
    is_cancellable,
    merge_contact,
    not_changeable,
    pax_of,
    price_basis,
    with_placed,
)
from berth.domain.catalog import Catalog, Option, Product
from berth.domain.catalog.lookup import find_option, find_product
from berth.domain.errors import (
    UnprocessableEntity,
)
from berth.domain.slots import cancellation_cutoff
from berth.domain.times import format_utc
from berth.services.bookings.extensions import Stage
from berth.services.bookings.holding import HoldingPlaces
from berth.services.bookings.inputs import (
    RESELLER,
    UpdateInput,
)
from berth.services.bookings.loader import booked_slot
from berth.store import bookings_repo
from berth.store.connection import DbConnection

_PLACEMENT = (("productId", "product_id"), ("optionId", "option_id"), ("availabilityId", "availability_id"))


def _moves(booking: Booking, data: UpdateInput) -> bool:
    """Whether a PATCH moves the booking: it sends a product, option or availability other
    than the booking's own (sending its own again moves nothing)."""
    return any(
        sent in data.sent and getattr(data, name) != getattr(booking, name) for sent, name in _PLACEMENT
    )


def _move_target(catalog: Catalog, booking: Booking, data: UpdateInput) -> tuple[Product, Option]:
    """Where a PATCH moves a booking, found as a new sale finds it: in the catalogue its
    connection's contract sells today. The booking's own product and option unless it sends
    others (another product without an option: that product's default option)."""
    product = find_product(catalog, data.product_id if "productId" in data.sent else booking.product_id)
    if "optionId" in data.sent:
        return product, find_option(product, data.option_id)
    if product.id == booking.product_id:
        return product, find_option(product, booking.option_id)
    return product, product.default_option


class Changing(HoldingPlaces):
    # --- change ------------------------------------------------------------------------------

    async def change_in(
        self, conn: DbConnection, catalog: Catalog, booking: Booking, data: UpdateInput, now: datetime
    ) -> Booking:
        """Apply a reseller's PATCH to one (locked, as-of-now) booking. A change that sells it
        something (`sold_anew`) must pass a new sale's checks; any other keeps its product,
        option and departure, whatever the contract sells today."""
        old_product, old_option = await self.loader.booked(conn, catalog, booking)
        old_slot = booked_slot(old_product, old_option, booking)
        cutoff = cancellation_cutoff(old_option, old_slot) if old_slot else None
        if not is_cancellable(booking, cutoff, now):
            raise UnprocessableEntity(not_changeable(booking, cutoff, "updated"))
        moving = _moves(booking, data)
        product, option = _move_target(catalog, booking, data) if moving else (old_product, old_option)
        policy = self.policies.of(option)
        self.policies.check_request(catalog, product, option, data.asked)
        if moving:
            availability_id = (
                data.availability_id if "availabilityId" in data.sent else booking.availability_id
            )
            slot = self._slot(product, option, availability_id)
        else:
            slot = old_slot
        # Where the booking is placed is worked out again when it moves or the request asks
        # its policy for it; otherwise it keeps its own (also if the catalogue changed since).
        placement = policy.place(option, slot, data.asked, booking, moved=moving)
        slot = placement.slot
        if data.unit_items is not None:
            items = self._unit_items(option, data.unit_items, booking.unit_items)
        else:
            check_units(option, [i.unit_id for i in booking.unit_items])
            items = booking.unit_items
        pax = pax_of(option, [i.unit_id for i in items])
        # Only a move changes where the booking is (one that does not move stays on its own
        # product, option and departure, also if the catalogue no longer has them).
        placed = (
            replace(
                booking,
                product_id=product.id,
                option_id=option.id,
                availability_id=slot.id if slot else None,
                slot_start=slot.start.astimezone(UTC) if slot else None,
                local_date=slot.local_date if slot else None,
                freesale=slot is None,
            )
            if moving
            else booking
        )
        placed = with_placed(replace(placed, unit_items=items, pax=pax), placement.stored)
        slot_end = placed.slot_end
        # Checked before the places, so that a sale refused says why rather than "sold out".
        checked = await self._check_sale(conn, catalog, product, option, slot, booking, placed)
        same_slot = slot is not None and old_slot is not None and (product.id, option.id, slot.id) == (
            old_product.id, old_option.id, old_slot.id,
        ) and slot_end == booking.slot_end  # fmt: skip
        if slot is not None and not booking.test_mode and (not same_slot or pax > booking.pax):
            old_lock = (
                [self.policies.of(old_option).lock_key(old_product, old_option, old_slot)]
                if old_slot is not None and not same_slot
                else []
            )
            await self._take_places(
                conn, product, option, slot, booking, pax, excluding=booking.id, also_lock=old_lock
            )
        same_option = (product.id, option.id) == (old_product.id, old_option.id)
        given = await self._given(
            conn, product, option, booking, items, placement, moved=not same_slot, same_option=same_option
        )
        expires_at = booking.expires_at
        if booking.status is BookingStatus.ON_HOLD and data.expiration_minutes is not None:
            expires_at = self.expiry(data.expiration_minutes, now)
        updated = replace(
            placed,
            expires_at=expires_at,
            notes=data.notes if "notes" in data.sent else booking.notes,
            reseller_reference=data.reseller_reference
            if "resellerReference" in data.sent
            else booking.reseller_reference,
            contact=merge_contact(booking.contact, data.contact) if data.contact else booking.contact,
            updated_at=now,
        )
        updated = with_placed(updated, given)
        updated = self.extensions.apply(Stage.UPDATE, product, option, slot, updated, data.extensions)
        # A booking moved to another price basis (`price_basis`) is sold again; one that only
        # gained or lost parts keeps the others'.
        updated = self.priced(product, option, updated, reprice=price_basis(updated) != price_basis(booking))
        if not checked:  # a part priced now (an extra's piece) is sold too
            await self._check_sale(conn, catalog, product, option, slot, booking, updated)
        await bookings_repo.save_booking(conn, updated, booking)
        await self.extensions.hold(
            conn, self.locks, self._holding(product, option, slot, booking, updated, now)
        )
        await self.changed(
            conn, catalog, booking, updated, "updated", RESELLER, {"fields": sorted(data.sent)}
        )
        return updated

    # --- extend ------------------------------------------------------------------------------

    async def hold_until_in(
        self, conn: DbConnection, catalog: Catalog, booking: Booking, expires_at: datetime
    ) -> Booking:
        extended = replace(booking, expires_at=expires_at, updated_at=self._clock())
        await bookings_repo.save_booking(conn, extended, booking)
        await self.changed(
            conn, catalog, booking, extended, "extended", RESELLER, {"utcExpiresAt": format_utc(expires_at)}
        )
        return extended
