"""Preparing a booking: its slot and placement, unit items, prices and expiry, and the checks
of a sale (what the connection's contract sells), before anything is written."""

from __future__ import annotations

import uuid as uuidlib
from collections.abc import Sequence
from dataclasses import dataclass, replace
from datetime import UTC, datetime, timedelta

from berth.domain.bookings import (
    Booking,
    BookingStatus,
    Contact,
    UnitItem,
    check_units,
    new_reference,
    pax_of,
    sold_anew,
    with_placed,
)
from berth.domain.catalog import Catalog, Option, Product
from berth.domain.catalog.lookup import find_currency, find_option, find_product
from berth.domain.errors import (
    BadRequest,
    InvalidAvailabilityId,
    InvalidBookingUuid,
    OctoError,
    UnprocessableEntity,
)
from berth.domain.price_lines import price_lines
from berth.domain.pricing import booking_parts
from berth.domain.slots import Slot, slot_for_id
from berth.services.bookings.base import StepsBase
from berth.services.bookings.capacity import Placement, SlotPolicy
from berth.services.bookings.extensions import Stage
from berth.services.bookings.inputs import (
    ReserveInput,
    UnitItemInput,
    fingerprint,
)
from berth.services.bookings.locks import SlotKey
from berth.store.connection import DbConnection


@dataclass(frozen=True)
class PreparedBooking:
    """A checked reservation, not yet stored, where its option's policy placed it."""

    booking: Booking
    product: Product
    option: Option
    policy: SlotPolicy
    placement: Placement

    @property
    def slot(self) -> Slot | None:
        """The interval the booking holds (None: freesale)."""
        return self.placement.slot

    @property
    def lock_key(self) -> SlotKey | None:
        """The lock row a write of this booking takes (None: it takes no places)."""
        if self.slot is None or self.booking.test_mode:
            return None
        return self.policy.lock_key(self.product, self.option, self.slot)


class Preparing(StepsBase):
    async def refresh(self) -> None:
        """Before a step: the extensions read what they answer from (`BookingExtension.refresh`)."""
        await self.extensions.refresh()

    # --- checks -----------------------------------------------------------------------------

    def priced(
        self,
        product: Product,
        option: Option,
        booking: Booking,
        *,
        reprice: bool = False,
    ) -> Booking:
        """The booking with a line for each of its parts: the parts it had keep what they were
        sold at (unless `reprice`), new ones are priced now from `product` (the catalogue as
        the booking's connection buys it: its contract's net)."""
        wanted = [
            *booking_parts(product, option, booking),
            *self.extensions.priceables(booking, product, option),
        ]
        lines = price_lines(wanted, booking.price_lines, reprice=reprice)
        lines = self.extensions.lines(booking, lines)
        return booking if lines == booking.price_lines else replace(booking, price_lines=lines)

    def expiry(self, minutes: int | None, now: datetime) -> datetime:
        if minutes is None:
            minutes = self._settings.default_expiration_minutes
        if minutes < 1:
            raise BadRequest(f"expirationMinutes must be at least 1; {minutes} given")
        return now + timedelta(minutes=min(minutes, self._settings.max_expiration_minutes))

    def extended_expiry(self, current: datetime, minutes: int | None, now: datetime) -> datetime:
        """`minutes` (default the setting) added to the later of now and the current expiry,
        capped at the longest hold allowed; always strictly later than `current`."""
        if minutes is None:
            minutes = self._settings.default_expiration_minutes
        if minutes < 1:
            raise BadRequest(f"expirationMinutes must be at least 1; {minutes} given")
        longest = self._settings.max_expiration_minutes
        # Minutes past the longest hold change nothing (and a huge number would overflow).
        expires_at = min(
            max(now, current) + timedelta(minutes=min(minutes, longest)), now + timedelta(minutes=longest)
        )
        if expires_at <= current:
            raise UnprocessableEntity(
                f"The hold already lasts the longest allowed ({self._settings.max_expiration_minutes} minutes)"
            )
        return expires_at

    @staticmethod
    def _unit_items(
        option: Option, inputs: Sequence[UnitItemInput] | None, existing: Sequence[UnitItem] = ()
    ) -> tuple[UnitItem, ...]:
        """The unit items a request lists, over the booking's `existing` ones. An item sent with
        its uuid is the booking's item of that uuid (else a new one); an item sent without takes
        the first existing item of its unit, in the booking's order, that the request neither
        names by uuid nor gave to an earlier item (else it is new). An existing item kept keeps
        its uuid, supplier reference, ticket and price line."""
        if not inputs:
            raise UnprocessableEntity("unitItems must list at least one unit")
        check_units(option, [i.unit_id for i in inputs])
        kept = {item.uuid: item for item in existing}
        named = {given.uuid for given in inputs if given.uuid}
        unnamed = [item for item in existing if item.uuid not in named]
        items: list[UnitItem] = []
        for index, given in enumerate(inputs):
            if given.uuid:
                previous = kept.get(given.uuid)
            else:
                previous = next((item for item in unnamed if item.unit_id == given.unit_id), None)
                if previous is not None:
                    unnamed.remove(previous)
            item_uuid = given.uuid or (previous.uuid if previous is not None else str(uuidlib.uuid4()))
            if any(item.uuid == item_uuid for item in items):
                raise BadRequest(f"unitItems[{index}].uuid {item_uuid!r} repeats an earlier item's uuid")
            items.append(
                UnitItem(
                    uuid=item_uuid,
                    unit_id=given.unit_id,
                    supplier_reference=previous.supplier_reference if previous else new_reference(10),
                    reseller_reference=given.reseller_reference
                    if given.reseller_reference is not None
                    else (previous.reseller_reference if previous else None),
                    contact=given.contact or (previous.contact if previous else Contact()),
                )
            )
        return tuple(items)

    @staticmethod
    def _slot(product: Product, option: Option, availability_id: str | None) -> Slot | None:
        if availability_id is None:
            if product.availability_required:
                raise InvalidAvailabilityId(None, f"Product {product.id!r} needs an availabilityId")
            return None
        slot = slot_for_id(product, option, availability_id)
        if slot is None:
            raise InvalidAvailabilityId(availability_id)
        return slot

    @staticmethod
    def check_repeat(existing: Booking, request: str) -> None:
        if existing.request_fingerprint != request:
            raise InvalidBookingUuid(
                existing.uuid, f"The uuid {existing.uuid!r} was already used for a different reservation"
            )

    async def _check_on_sale(
        self, conn: DbConnection, product: Product, option: Option, slot: Slot, booking: Booking
    ) -> None:
        """A new sale or a move to `slot`: refused when the connection's contract stops it
        selling there (the supplier's reason is its own, never said)."""
        if await self.allotments.stopped(conn, booking.connection_id, product, option, slot):
            raise InvalidAvailabilityId(slot.id, f"Availability {slot.id} is not on sale for this connection")

    async def _check_sale(
        self,
        conn: DbConnection,
        catalog: Catalog,
        product: Product,
        option: Option,
        slot: Slot | None,
        before: Booking,
        after: Booking,
    ) -> bool:
        """A change of `before` into `after` (on `product`, `option`, `slot`) that sells it
        something (`sold_anew`) is refused as a new sale there would be: when the connection's
        contract does not sell the product or option today (INVALID_PRODUCT_ID or
        INVALID_OPTION_ID, as a reservation is answered), or stops it selling on the departure
        (INVALID_AVAILABILITY_ID). Whether the change sells anything (and so was checked)."""
        sold = sold_anew(before, after)
        if sold is None:
            return False
        if not catalog.sells(product.id, option.id):
            try:
                find_option(find_product(catalog, product.id), option.id)
            except OctoError as exc:
                raise exc.adding(
                    f"Booking {before.uuid!r} keeps what it has there, but {sold} would be a new sale"
                ) from None
        if slot is not None:
            await self._check_on_sale(conn, product, option, slot, after)
        return True

    # --- reserve -------------------------------------------------------------------------------

    def prepare(
        self,
        catalog: Catalog,
        connection_id: str,
        data: ReserveInput,
        *,
        test_mode: bool = False,
        expires_at: datetime | None = None,
        order_id: str | None = None,
        primary: bool = False,
        order_position: int | None = None,
    ) -> PreparedBooking:
        """Check a reservation against the catalogue and build the booking it would create."""
        product = find_product(catalog, data.product_id)
        option = find_option(product, data.option_id)
        policy = self.policies.of(option)
        self.policies.check_request(catalog, product, option, data.asked)
        placement = policy.place(option, self._slot(product, option, data.availability_id), data.asked, None)
        slot = placement.slot
        items = self._unit_items(option, data.unit_items)
        currency = find_currency(product, data.currency)
        now = self._clock()
        booking = Booking(
            id=str(uuidlib.uuid4()),
            uuid=data.uuid or str(uuidlib.uuid4()),
            connection_id=connection_id,
            test_mode=test_mode,
            status=BookingStatus.ON_HOLD,
            product_id=product.id,
            option_id=option.id,
            availability_id=slot.id if slot else None,
            slot_start=slot.start.astimezone(UTC) if slot else None,
            local_date=slot.local_date if slot else None,
            pax=pax_of(option, [i.unit_id for i in items]),
            reseller_reference=data.reseller_reference,
            supplier_reference=new_reference(),
            notes=data.notes,
            contact=data.contact or Contact(),
            unit_items=items,
            currency=currency,
            freesale=slot is None,
            request_fingerprint=fingerprint(data),
            created_at=now,
            updated_at=now,
            expires_at=expires_at or self.expiry(data.expiration_minutes, now),
            order_id=order_id,
            primary=primary,
            order_position=order_position,
        )
        booking = with_placed(booking, placement.stored)
        booking = self.extensions.apply(Stage.RESERVE, product, option, slot, booking, data.extensions)
        booking = self.priced(product, option, booking)
        return PreparedBooking(booking, product, option, policy, placement)
