"""The booking lifecycle (OCTO.md §4.6 to §4.12, §5): reserve, confirm, update, extend, cancel,
expire; and the supplier's redeem, accept, reject and forced cancel.

Every write that can take places locks the slot(s) it touches and re-checks capacity inside
the same transaction, so two writers can never both take the last places.
"""

from __future__ import annotations

import hashlib
import uuid as uuidlib
from collections.abc import Callable, Sequence
from dataclasses import dataclass, replace
from datetime import UTC, datetime, timedelta
from typing import Any

import orjson
from sqlalchemy.exc import IntegrityError
from sqlalchemy.ext.asyncio import AsyncConnection

from berth.domain.availability import SlotState, slot_state
from berth.domain.bookings import (
    Booking,
    BookingStatus,
    Cancellation,
    Contact,
    UnitItem,
    as_of,
    check_units,
    is_cancellable,
    missing_contact_fields,
    new_reference,
    pax_of,
)
from berth.domain.catalog import Catalog, Option, Product
from berth.domain.catalog_lookup import find_currency, find_option, find_product
from berth.domain.errors import (
    BadRequest,
    InvalidAvailabilityId,
    InvalidBookingUuid,
    NotFound,
    UnprocessableEntity,
)
from berth.domain.resources import Allocation, ResourceUse, availability_state, check_selection, party_of
from berth.domain.slots import Slot, cancellation_cutoff, slot_for_id
from berth.domain.times import format_utc
from berth.services.catalog import CatalogService
from berth.services.clock import Clock
from berth.services.events import ChangeObserver
from berth.services.resources import ResourceService
from berth.settings import Settings
from berth.store import bookings_repo, catalog_repo, orders_repo
from berth.store.bookings_repo import BookingFilter
from berth.store.database import Database

RESELLER = "reseller"
SUPPLIER = "supplier"
SYSTEM = "system"


@dataclass(frozen=True)
class UnitItemInput:
    unit_id: str
    uuid: str | None = None
    reseller_reference: str | None = None
    contact: Contact | None = None


@dataclass(frozen=True)
class ReserveInput:
    product_id: str | None
    option_id: str | None
    unit_items: tuple[UnitItemInput, ...] | None
    uuid: str | None = None
    availability_id: str | None = None
    expiration_minutes: int | None = None
    notes: str | None = None
    reseller_reference: str | None = None
    contact: Contact | None = None
    currency: str | None = None
    order_id: str | None = None
    # octo/resources: resourceAllocations[].resourceId (None: not sent or capability off)
    resource_ids: tuple[str, ...] | None = None


@dataclass(frozen=True)
class UpdateInput:
    product_id: str | None = None
    option_id: str | None = None
    availability_id: str | None = None
    unit_items: tuple[UnitItemInput, ...] | None = None
    expiration_minutes: int | None = None
    notes: str | None = None
    reseller_reference: str | None = None
    contact: Contact | None = None
    sent: frozenset[str] = frozenset()
    resource_ids: tuple[str, ...] | None = None  # octo/resources


@dataclass(frozen=True)
class ConfirmInput:
    contact: Contact
    reseller_reference: str | None = None
    unit_items: tuple[UnitItemInput, ...] | None = None
    notes: str | None = None
    resource_ids: tuple[str, ...] | None = None  # octo/resources


@dataclass(frozen=True)
class PreparedBooking:
    """A checked reservation, not yet stored."""

    booking: Booking
    product: Product
    option: Option
    slot: Slot | None
    resource_ids: tuple[str, ...] | None = None  # octo/resources: the client's selection


@dataclass(frozen=True)
class BookingDetails:
    """A booking with what serializing it needs: its product, option, slot and slot state."""

    booking: Booking
    product: Product
    option: Option
    slot: Slot | None
    state: SlotState | None
    cancellable: bool
    order_reference: str | None = None


def fingerprint(data: ReserveInput) -> str:
    """What makes two reservations with one uuid 'the same request' (OCTO.md §5.3)."""
    document: dict[str, Any] = {
        "productId": data.product_id,
        "optionId": data.option_id,
        "availabilityId": data.availability_id,
        "unitItems": [
            [i.unit_id, i.uuid, i.reseller_reference, i.contact.to_document() if i.contact else None]
            for i in data.unit_items or ()
        ],
        "notes": data.notes,
        "resellerReference": data.reseller_reference,
        "contact": data.contact.to_document() if data.contact else None,
        "currency": data.currency,
        "orderId": data.order_id,
    }
    if data.resource_ids is not None:
        document["resourceIds"] = list(data.resource_ids)
    return hashlib.sha256(orjson.dumps(document, option=orjson.OPT_SORT_KEYS)).hexdigest()


SlotKey = tuple[str, str, str]


def _slot_key(booking: Booking) -> SlotKey:
    return (booking.product_id, booking.option_id, booking.availability_id or "")


def _moved_places(before: Booking | None, after: Booking, now: datetime) -> list[SlotKey]:
    """The slots whose held places differ between the two versions of a booking."""

    def holding(booking: Booking | None) -> tuple[SlotKey, int] | None:
        if booking is None or booking.availability_id is None or not booking.holds_places(now):
            return None
        return _slot_key(booking), booking.pax

    old, new = holding(before), holding(after)
    if old == new:
        return []
    return list(dict.fromkeys(held[0] for held in (old, new) if held is not None))


def _merge_contact(old: Contact, new: Contact) -> Contact:
    return Contact(
        values={**old.values, **new.values},
        locales=new.locales or old.locales,
        allow_marketing=new.allow_marketing if new.allow_marketing is not None else old.allow_marketing,
    )


class BookingService:
    def __init__(
        self,
        database: Database,
        settings: Settings,
        clock: Clock,
        catalogs: CatalogService,
        observer: ChangeObserver,
        resources: ResourceService | None = None,
    ) -> None:
        self._db = database
        self._settings = settings
        self._clock = clock
        self._catalogs = catalogs
        self._observer = observer
        self._resources = resources or ResourceService(database, settings, clock)

    def now(self) -> datetime:
        return self._clock()

    # --- helpers --------------------------------------------------------------------------

    def expiry(self, minutes: int | None, now: datetime) -> datetime:
        if minutes is None:
            minutes = self._settings.default_expiration_minutes
        if minutes < 1:
            raise BadRequest(f"expirationMinutes must be at least 1; {minutes} given")
        return now + timedelta(minutes=min(minutes, self._settings.max_expiration_minutes))

    def _unit_items(
        self, option: Option, inputs: Sequence[UnitItemInput] | None, existing: Sequence[UnitItem] = ()
    ) -> tuple[UnitItem, ...]:
        if not inputs:
            raise UnprocessableEntity("unitItems must list at least one unit")
        check_units(option, [i.unit_id for i in inputs])
        kept = {item.uuid: item for item in existing}
        items: list[UnitItem] = []
        for index, given in enumerate(inputs):
            item_uuid = given.uuid or str(uuidlib.uuid4())
            if any(item.uuid == item_uuid for item in items):
                raise BadRequest(f"unitItems[{index}].uuid {item_uuid!r} repeats an earlier item's uuid")
            previous = kept.get(item_uuid)
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

    def _slot(self, product: Product, option: Option, availability_id: str | None) -> Slot | None:
        if availability_id is None:
            if product.availability_required:
                raise InvalidAvailabilityId(None, f"Product {product.id!r} needs an availabilityId")
            return None
        slot = slot_for_id(product, option, availability_id)
        if slot is None:
            raise InvalidAvailabilityId(availability_id)
        return slot

    async def _held_unlocked(
        self, product: Product, option: Option, slot: Slot | None, now: datetime, excluding: str | None
    ) -> int | None:
        """DEBUG mode only: read held places before the write transaction (the race)."""
        if slot is None or not self._settings.debug_disable_slot_lock:
            return None
        async with self._db.transaction(write=False) as conn:
            return await self._held_in(conn, product, option, slot, now, excluding)

    @staticmethod
    async def _held_in(
        conn: AsyncConnection,
        product: Product,
        option: Option,
        slot: Slot,
        now: datetime,
        excluding: str | None,
    ) -> int:
        start = slot.start.astimezone(UTC)
        held = await bookings_repo.held_places(
            conn, product.id, option.id, start, start, now, excluding=excluding
        )
        return held.get(slot.id, 0)

    async def _take_places(
        self,
        conn: AsyncConnection,
        product: Product,
        option: Option,
        slot: Slot,
        pax: int,
        now: datetime,
        *,
        excluding: str | None = None,
        held_before: int | None = None,
        also_lock: Sequence[Slot] = (),
    ) -> None:
        """Lock the slot, then check that `pax` more places fit. Raises UNPROCESSABLE_ENTITY."""
        if held_before is None:
            keys = [(product.id, option.id, s.id) for s in (slot, *also_lock)]
            await bookings_repo.lock_slots(conn, keys)
            # No limit (freesale, or capacity from resources): the places held do not matter.
            held = (
                0
                if slot.capacity is None
                else await self._held_in(conn, product, option, slot, now, excluding)
            )
        else:
            held = held_before
        state = slot_state(slot, held, now, pax)
        if not state.available:
            if state.status == "CLOSED":
                reason = "is closed for sale" if slot.closed else "is past its sales cutoff"
                raise UnprocessableEntity(f"Availability {slot.id} {reason}")
            left = state.vacancies or 0
            raise UnprocessableEntity(
                f"Availability {slot.id} is sold out: {left} place(s) left, {pax} requested"
            )

    async def _reallocated(
        self,
        conn: AsyncConnection,
        product: Product,
        option: Option,
        slot: Slot | None,
        booking: Booking,
        items: Sequence[UnitItem],
        selection: Sequence[str] | None,
        *,
        moved: bool,
        same_option: bool = True,
    ) -> tuple[Allocation, ...]:
        """A changed booking's allocations (octo/resources rules 2 and 3): a non-empty selection
        replaces them; otherwise (absent or `[]`) they stay as they are unless the party or the
        slot changed, and then the booking is re-allocated, keeping its resources (and seats)
        where they still fit."""
        if slot is None or not option.resource_groups:
            return ()
        party = party_of(option, [i.unit_id for i in items])
        previous = booking.resource_allocations if same_option else ()
        changed = (
            moved or not same_option or party != party_of(option, [i.unit_id for i in booking.unit_items])
        )
        if not selection and not changed and booking.resource_allocations:
            return booking.resource_allocations
        return await self._resources.allocate_in(
            conn, product, option, slot, booking, party, selection or None, previous
        )

    async def _product(self, conn: AsyncConnection, catalog: Catalog, product_id: str) -> Product:
        product = catalog.product(product_id) or await catalog_repo.load_archived_product(conn, product_id)
        if product is None:
            raise NotFound(f"Product {product_id!r} of a booking is missing from the catalogue")
        return product

    async def _details(
        self, conn: AsyncConnection, catalog: Catalog, bookings: Sequence[Booking], *, exact: bool = False
    ) -> list[BookingDetails]:
        """Serializable details for bookings, with one held-places query per option. Bookings
        are shown as they stand now (a passed hold as EXPIRED) unless `exact`."""
        now = self._clock()
        resolved: list[tuple[Booking, Product, Option, Slot | None]] = []
        groups: dict[tuple[str, str], list[Slot]] = {}
        targets: dict[tuple[str, str], tuple[Product, Option]] = {}
        for raw in bookings:
            booking = raw if exact else as_of(raw, now)
            product = await self._product(conn, catalog, booking.product_id)
            option = product.option(booking.option_id) or product.default_option
            slot = slot_for_id(product, option, booking.availability_id) if booking.availability_id else None
            resolved.append((booking, product, option, slot))
            if slot is not None:
                groups.setdefault((product.id, option.id), []).append(slot)
                targets[(product.id, option.id)] = (product, option)
        held: dict[tuple[str, str], dict[str, int]] = {}
        uses: dict[tuple[str, str], dict[str, dict[str, ResourceUse]]] = {}
        for (product_id, option_id), slots in groups.items():
            first = min(s.start for s in slots).astimezone(UTC)
            last = max(s.start for s in slots).astimezone(UTC)
            held[(product_id, option_id)] = await bookings_repo.held_places(
                conn, product_id, option_id, first, last, now
            )
            uses[(product_id, option_id)] = await self._resources.use_in(
                conn, *targets[(product_id, option_id)], slots, now
            )
        order_references = await orders_repo.references(
            conn, (b.order_id for b, *_ in resolved if b.order_id)
        )
        details = []
        for booking, product, option, slot in resolved:
            state = None
            cutoff = None
            if slot is not None:
                use = uses.get((product.id, option.id), {}).get(slot.id, {})
                state = availability_state(
                    option, slot, held.get((product.id, option.id), {}).get(slot.id, 0), use, now
                )
                cutoff = cancellation_cutoff(option, slot)
            details.append(
                BookingDetails(
                    booking,
                    product,
                    option,
                    slot,
                    state,
                    is_cancellable(booking, cutoff, now),
                    order_references.get(booking.order_id or ""),
                )
            )
        return details

    async def describe(
        self, conn: AsyncConnection, catalog: Catalog, bookings: Sequence[Booking], *, exact: bool = False
    ) -> list[BookingDetails]:
        return await self._details(conn, catalog, bookings, exact=exact)

    async def _one(self, conn: AsyncConnection, catalog: Catalog, booking: Booking) -> BookingDetails:
        return (await self._details(conn, catalog, [booking]))[0]

    async def _exactly(self, conn: AsyncConnection, catalog: Catalog, booking: Booking) -> BookingDetails:
        return (await self._details(conn, catalog, [booking], exact=True))[0]

    async def _owned(self, conn: AsyncConnection, connection_id: str, uuid: str, now: datetime) -> Booking:
        """The connection's booking, locked for this transaction, as it stands at `now`."""
        booking = await bookings_repo.get_by_uuid(conn, connection_id, uuid)
        if booking is None:
            raise InvalidBookingUuid(uuid)
        await bookings_repo.lock_booking(conn, booking.id)
        return as_of(booking, now)

    async def _changed(
        self,
        conn: AsyncConnection,
        catalog: Catalog,
        before: Booking | None,
        after: Booking,
        kind: str,
        actor: str,
        detail: dict[str, Any] | None = None,
        slots: Sequence[SlotKey] | None = None,
    ) -> None:
        """Record a step in the booking's history and announce it: a booking_update for every
        change of an existing booking, an availability_update for each slot whose held places
        changed."""
        now = self._clock()
        await self._resources.sync_in(conn, before, after, now)
        await bookings_repo.add_event(
            conn, after.id, now, kind, actor, {"status": after.status.value, **(detail or {})}
        )
        if before is not None:
            await self._observer.booking_changed(
                conn, lambda b: self._exactly(conn, catalog, b), before, after
            )
        moved = _moved_places(before, after, now) if slots is None else slots
        if moved:
            await self._observer.slots_changed(conn, moved)

    # --- reseller operations ---------------------------------------------------------------

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
        slot = self._slot(product, option, data.availability_id)
        items = self._unit_items(option, data.unit_items)
        currency = find_currency(product, data.currency)
        if data.resource_ids:
            check_selection(catalog, product, option, data.resource_ids)
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
        return PreparedBooking(booking, product, option, slot, data.resource_ids)

    async def held_before(self, prepared: PreparedBooking) -> int | None:
        if prepared.booking.test_mode:
            return None
        await self._resources.read_unlocked(
            prepared.booking, prepared.product, prepared.option, prepared.slot
        )
        return await self._held_unlocked(
            prepared.product, prepared.option, prepared.slot, self._clock(), None
        )

    async def place_in(
        self, conn: AsyncConnection, catalog: Catalog, prepared: PreparedBooking, held_before: int | None
    ) -> tuple[Booking, bool]:
        """Insert a prepared booking after taking its places, inside the caller's transaction.
        Returns the booking and whether it is new (False: the same request was made before)."""
        booking = prepared.booking
        existing = await bookings_repo.get_by_uuid(conn, booking.connection_id, booking.uuid)
        if existing is not None:
            self._check_repeat(existing, booking.request_fingerprint)
            return existing, False
        if prepared.slot is not None and not booking.test_mode:
            await self._take_places(
                conn, prepared.product, prepared.option, prepared.slot, booking.pax, self._clock(),
                held_before=held_before,
            )  # fmt: skip
        if prepared.slot is not None and prepared.option.resource_groups:
            allocations = await self._resources.allocate_in(
                conn, prepared.product, prepared.option, prepared.slot, booking,
                party_of(prepared.option, [i.unit_id for i in booking.unit_items]), prepared.resource_ids,
                locked=held_before is None,  # _take_places has just locked the slot
            )  # fmt: skip
            booking = replace(booking, resource_allocations=allocations)
        await bookings_repo.insert_booking(conn, booking)
        await self._changed(
            conn, catalog, None, booking, "reserved", RESELLER, {"availabilityId": booking.availability_id}
        )
        return booking, True

    async def reserve(
        self, catalog: Catalog, connection_id: str, data: ReserveInput, *, test_mode: bool = False
    ) -> BookingDetails:
        prepared = self.prepare(catalog, connection_id, data, test_mode=test_mode)
        held_before = await self.held_before(prepared)
        try:
            async with self._db.transaction(write=True) as conn:
                booking, _ = await self.place_in(conn, catalog, prepared, held_before)
        except IntegrityError:
            return await self.repeated(catalog, prepared)
        # Serialized after commit: the write lock is held only for the write itself.
        async with self._db.transaction(write=False) as conn:
            return await self._one(conn, catalog, booking)

    async def repeated(self, catalog: Catalog, prepared: PreparedBooking) -> BookingDetails:
        """After losing a race on the uuid's unique constraint: answer as a repeat of the winner."""
        booking = prepared.booking
        async with self._db.transaction(write=False) as conn:
            existing = await bookings_repo.get_by_uuid(conn, booking.connection_id, booking.uuid)
            if existing is None:
                raise BadRequest(f"The reservation {booking.uuid!r} conflicted with another; try again")
            self._check_repeat(existing, booking.request_fingerprint)
            return await self._one(conn, catalog, existing)

    @staticmethod
    def _check_repeat(existing: Booking, request: str) -> None:
        if existing.request_fingerprint != request:
            raise InvalidBookingUuid(
                existing.uuid, f"The uuid {existing.uuid!r} was already used for a different reservation"
            )

    async def get(self, catalog: Catalog, connection_id: str, uuid: str) -> BookingDetails:
        async with self._db.transaction(write=False) as conn:
            booking = await bookings_repo.get_by_uuid(conn, connection_id, uuid)
            if booking is None:
                raise InvalidBookingUuid(uuid)
            return await self._one(conn, catalog, booking)

    async def find(self, catalog: Catalog, where: BookingFilter) -> list[BookingDetails]:
        async with self._db.transaction(write=False) as conn:
            found, _ = await bookings_repo.find_bookings(conn, where)
            return await self._details(conn, catalog, found)

    async def confirm(
        self, catalog: Catalog, connection_id: str, uuid: str, data: ConfirmInput
    ) -> BookingDetails:
        now = self._clock()
        async with self._db.transaction(write=True) as conn:
            booking = await self._owned(conn, connection_id, uuid, now)
            confirmed = await self.confirm_in(conn, catalog, booking, data, now)
            return await self._one(conn, catalog, confirmed)

    async def confirm_in(
        self, conn: AsyncConnection, catalog: Catalog, booking: Booking, data: ConfirmInput, now: datetime
    ) -> Booking:
        """Confirm one (locked, as-of-now) booking inside the caller's transaction."""
        uuid = booking.uuid
        if booking.status is BookingStatus.EXPIRED:
            raise InvalidBookingUuid(uuid, f"The hold on booking {uuid!r} expired; reserve again")
        if booking.status in (BookingStatus.CONFIRMED, BookingStatus.PENDING):
            return booking
        if booking.status is not BookingStatus.ON_HOLD:
            raise UnprocessableEntity(f"Booking {uuid!r} is {booking.status.value} and cannot be confirmed")
        product = await self._product(conn, catalog, booking.product_id)
        option = find_option(product, booking.option_id)
        if data.resource_ids:
            check_selection(catalog, product, option, data.resource_ids)
        slot = slot_for_id(product, option, booking.availability_id) if booking.availability_id else None
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
        if slot is not None and pax > booking.pax and not booking.test_mode:
            held_before = await self._held_unlocked(product, option, slot, now, booking.id)
            await self._take_places(
                conn, product, option, slot, pax, now, excluding=booking.id, held_before=held_before
            )
        missing = missing_contact_fields(option, data.contact, items)
        if missing:
            raise UnprocessableEntity("Required contact fields are missing: " + ", ".join(missing))
        allocations = await self._reallocated(
            conn, product, option, slot, booking, items, data.resource_ids, moved=False
        )
        status = BookingStatus.CONFIRMED if product.instant_confirmation else BookingStatus.PENDING
        confirmed = replace(
            booking,
            status=status,
            contact=data.contact,
            reseller_reference=booking.reseller_reference
            if data.reseller_reference is None
            else data.reseller_reference,
            notes=booking.notes if data.notes is None else data.notes,
            unit_items=items,
            pax=pax,
            resource_allocations=allocations,
            expires_at=None,
            confirmed_at=now if status is BookingStatus.CONFIRMED else None,
            updated_at=now,
        )
        await bookings_repo.save_booking(conn, confirmed)
        await self._changed(conn, catalog, booking, confirmed, "confirmed", RESELLER)
        return confirmed

    async def update(
        self, catalog: Catalog, connection_id: str, uuid: str, data: UpdateInput
    ) -> BookingDetails:
        now = self._clock()
        async with self._db.transaction(write=True) as conn:
            booking = await self._owned(conn, connection_id, uuid, now)
            old_product = await self._product(conn, catalog, booking.product_id)
            old_option = old_product.option(booking.option_id) or old_product.default_option
            old_slot = (
                slot_for_id(old_product, old_option, booking.availability_id)
                if booking.availability_id
                else None
            )
            cutoff = cancellation_cutoff(old_option, old_slot) if old_slot else None
            if not is_cancellable(booking, cutoff, now):
                raise UnprocessableEntity(self._not_changeable(booking, cutoff, "updated"))
            moving = bool({"productId", "optionId", "availabilityId"} & data.sent)
            product = find_product(catalog, data.product_id) if "productId" in data.sent else old_product
            if "optionId" in data.sent:
                option = find_option(product, data.option_id)
            elif product is old_product:
                option = old_option
            else:
                option = product.default_option
            if data.resource_ids:
                check_selection(catalog, product, option, data.resource_ids)
            if moving:
                availability_id = (
                    data.availability_id if "availabilityId" in data.sent else booking.availability_id
                )
                slot = self._slot(product, option, availability_id)
            else:
                slot = old_slot
            if data.unit_items is not None:
                items = self._unit_items(option, data.unit_items, booking.unit_items)
            else:
                check_units(option, [i.unit_id for i in booking.unit_items])
                items = booking.unit_items
            pax = pax_of(option, [i.unit_id for i in items])
            same_slot = slot is not None and old_slot is not None and (product.id, option.id, slot.id) == (
                old_product.id, old_option.id, old_slot.id,
            )  # fmt: skip
            if slot is not None and not booking.test_mode and (not same_slot or pax > booking.pax):
                held_before = await self._held_unlocked(product, option, slot, now, booking.id)
                await self._take_places(
                    conn, product, option, slot, pax, now,
                    excluding=booking.id, held_before=held_before,
                    also_lock=[old_slot] if old_slot is not None and not same_slot else [],
                )  # fmt: skip
            allocations = await self._reallocated(
                conn, product, option, slot, booking, items, data.resource_ids,
                moved=not same_slot, same_option=(product.id, option.id) == (old_product.id, old_option.id),
            )  # fmt: skip
            expires_at = booking.expires_at
            if booking.status is BookingStatus.ON_HOLD and data.expiration_minutes is not None:
                expires_at = self.expiry(data.expiration_minutes, now)
            updated = replace(
                booking,
                product_id=product.id,
                option_id=option.id,
                availability_id=slot.id if slot else None,
                slot_start=slot.start.astimezone(UTC) if slot else None,
                local_date=slot.local_date if slot else None,
                freesale=slot is None,
                unit_items=items,
                pax=pax,
                resource_allocations=allocations,
                expires_at=expires_at,
                notes=data.notes if "notes" in data.sent else booking.notes,
                reseller_reference=data.reseller_reference
                if "resellerReference" in data.sent
                else booking.reseller_reference,
                contact=_merge_contact(booking.contact, data.contact) if data.contact else booking.contact,
                updated_at=now,
            )
            await bookings_repo.save_booking(conn, updated)
            await self._changed(
                conn, catalog, booking, updated, "updated", RESELLER, {"fields": sorted(data.sent)}
            )
            return await self._one(conn, catalog, updated)

    async def extend(
        self, catalog: Catalog, connection_id: str, uuid: str, minutes: int | None
    ) -> BookingDetails:
        now = self._clock()
        async with self._db.transaction(write=True) as conn:
            booking = await self._owned(conn, connection_id, uuid, now)
            if booking.status is not BookingStatus.ON_HOLD or booking.expires_at is None:
                raise UnprocessableEntity(
                    f"Only ON_HOLD bookings can be extended; booking {uuid!r} is {booking.status.value}"
                )
            extended = await self.hold_until_in(
                conn, catalog, booking, self.extended_expiry(booking.expires_at, minutes, now)
            )
            return await self._one(conn, catalog, extended)

    def extended_expiry(self, current: datetime, minutes: int | None, now: datetime) -> datetime:
        """`minutes` (default the setting) added to the later of now and the current expiry,
        capped at the longest hold allowed; always strictly later than `current`."""
        if minutes is None:
            minutes = self._settings.default_expiration_minutes
        if minutes < 1:
            raise BadRequest(f"expirationMinutes must be at least 1; {minutes} given")
        ceiling = now + timedelta(minutes=self._settings.max_expiration_minutes)
        expires_at = min(max(now, current) + timedelta(minutes=minutes), ceiling)
        if expires_at <= current:
            raise UnprocessableEntity(
                f"The hold already lasts the longest allowed ({self._settings.max_expiration_minutes} minutes)"
            )
        return expires_at

    async def hold_until_in(
        self, conn: AsyncConnection, catalog: Catalog, booking: Booking, expires_at: datetime
    ) -> Booking:
        extended = replace(booking, expires_at=expires_at, updated_at=self._clock())
        await bookings_repo.save_booking(conn, extended)
        await self._changed(
            conn, catalog, booking, extended, "extended", RESELLER, {"utcExpiresAt": format_utc(expires_at)}
        )
        return extended

    async def cancel(
        self,
        catalog: Catalog,
        connection_id: str | None,
        uuid_or_id: str,
        reason: str | None,
        *,
        force: bool = False,
    ) -> BookingDetails:
        """Cancel a booking: a reseller's (by uuid) within the cutoff, or the supplier's (by id,
        `force` overriding the cutoff)."""
        now = self._clock()
        async with self._db.transaction(write=True) as conn:
            if connection_id is not None:
                booking = await self._owned(conn, connection_id, uuid_or_id, now)
            else:
                booking = as_of(await self._by_id(conn, uuid_or_id), now)
            actor = SUPPLIER if connection_id is None else RESELLER
            cancelled = await self.cancel_in(conn, catalog, booking, reason, force=force, actor=actor)
            return await self._one(conn, catalog, cancelled)

    async def cancel_in(
        self,
        conn: AsyncConnection,
        catalog: Catalog,
        booking: Booking,
        reason: str | None,
        *,
        force: bool,
        actor: str,
    ) -> Booking:
        """Cancel one (locked, as-of-now) booking inside the caller's transaction."""
        if booking.status is BookingStatus.CANCELLED:
            return booking
        now = self._clock()
        details = await self._one(conn, catalog, booking)
        cutoff = cancellation_cutoff(details.option, details.slot) if details.slot else None
        if not is_cancellable(booking, None if force else cutoff, now):
            raise UnprocessableEntity(self._not_changeable(booking, cutoff, "cancelled"))
        cancelled = replace(
            booking,
            status=BookingStatus.CANCELLED,
            cancellation=Cancellation(refund="FULL", reason=reason, at=now),
            expires_at=None,
            updated_at=now,
        )
        await bookings_repo.save_booking(conn, cancelled)
        await self._changed(conn, catalog, booking, cancelled, "cancelled", actor, {"reason": reason})
        return cancelled

    @staticmethod
    def _not_changeable(booking: Booking, cutoff: datetime | None, verb: str) -> str:
        if booking.status not in (BookingStatus.ON_HOLD, BookingStatus.CONFIRMED, BookingStatus.PENDING):
            return f"Booking {booking.uuid!r} is {booking.status.value} and cannot be {verb}"
        assert cutoff is not None
        return f"Booking {booking.uuid!r} can no longer be {verb}: the cutoff was {format_utc(cutoff)}"

    # --- expiry ----------------------------------------------------------------------------

    async def expire_due(self, batch: int = 500) -> int:
        """Mark holds whose time has passed EXPIRED (reads already treat them so)."""
        now = self._clock()
        catalog = (await self._catalogs.snapshot()).catalog
        async with self._db.transaction(write=True) as conn:
            due = await bookings_repo.due_holds(conn, now, batch)
            for stored in due:
                expired = as_of(stored, now)
                await bookings_repo.save_booking(conn, expired)
                # The places came free when the hold ran out; announce the slot now.
                freed = [] if stored.test_mode or stored.availability_id is None else [_slot_key(stored)]
                await self._changed(conn, catalog, stored, expired, "expired", SYSTEM, slots=freed)
        return len(due)

    # --- supplier operations ---------------------------------------------------------------

    async def _by_id(self, conn: AsyncConnection, booking_id: str) -> Booking:
        booking = await bookings_repo.get_by_id(conn, booking_id)
        if booking is None:
            raise NotFound(f"No booking with id {booking_id!r}")
        await bookings_repo.lock_booking(conn, booking_id)
        return booking

    async def search(
        self, catalog: Catalog, where: BookingFilter, limit: int, offset: int
    ) -> tuple[list[BookingDetails], int]:
        async with self._db.transaction(write=False) as conn:
            found, total = await bookings_repo.find_bookings(conn, where, limit=limit, offset=offset)
            return await self._details(conn, catalog, found), total

    async def admin_get(
        self, catalog: Catalog, booking_id: str
    ) -> tuple[BookingDetails, list[dict[str, Any]]]:
        async with self._db.transaction(write=False) as conn:
            booking = await bookings_repo.get_by_id(conn, booking_id)
            if booking is None:
                raise NotFound(f"No booking with id {booking_id!r}")
            return await self._one(conn, catalog, booking), await bookings_repo.events_of(conn, booking_id)

    async def _supplier_transition(
        self,
        catalog: Catalog,
        booking_id: str,
        expected: BookingStatus,
        kind: str,
        change: Callable[[Booking, datetime], Booking],
    ) -> BookingDetails:
        now = self._clock()
        async with self._db.transaction(write=True) as conn:
            booking = as_of(await self._by_id(conn, booking_id), now)
            if booking.status is not expected:
                raise UnprocessableEntity(
                    f"Booking {booking_id!r} is {booking.status.value}; only {expected.value} bookings can be {kind}"
                )
            changed = replace(change(booking, now), updated_at=now)
            await bookings_repo.save_booking(conn, changed)
            await self._changed(conn, catalog, booking, changed, kind, SUPPLIER)
            return await self._one(conn, catalog, changed)

    async def redeem(self, catalog: Catalog, booking_id: str) -> BookingDetails:
        return await self._supplier_transition(
            catalog, booking_id, BookingStatus.CONFIRMED, "redeemed",
            lambda b, now: replace(b, status=BookingStatus.REDEEMED, redeemed_at=now),
        )  # fmt: skip

    async def accept(self, catalog: Catalog, booking_id: str) -> BookingDetails:
        return await self._supplier_transition(
            catalog, booking_id, BookingStatus.PENDING, "accepted",
            lambda b, now: replace(b, status=BookingStatus.CONFIRMED, confirmed_at=now),
        )  # fmt: skip

    async def reject(self, catalog: Catalog, booking_id: str, reason: str | None) -> BookingDetails:
        return await self._supplier_transition(
            catalog, booking_id, BookingStatus.PENDING, "rejected",
            lambda b, now: replace(b, status=BookingStatus.REJECTED, rejected_at=now, rejection_reason=reason),
        )  # fmt: skip
