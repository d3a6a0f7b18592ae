"""The booking lifecycle (OCTO.md §4.6 to §4.12, §5): reserve, confirm, update, extend, cancel,
expire; and the supplier's redeem, accept, reject and forced cancel.

Every write that can take places locks the slot(s) it touches and re-checks capacity inside
the same transaction, so two writers can never both take the last places.

Rentals (octo/rentals) hold their items over an interval, so two rentals starting at different
times compete for the same items whenever they overlap. Their writers lock one row per rental
option (`RENTAL_LOCK`) instead of a slot: every rental write of the option takes turns, so the
peak re-read inside the lock sees every overlapping rental, whatever its start and length.
"""

from __future__ import annotations

import asyncio
import hashlib
import uuid as uuidlib
from collections.abc import Callable, Sequence
from dataclasses import dataclass, replace
from datetime import UTC, datetime, timedelta
from typing import Any, Protocol
from zoneinfo import ZoneInfo

import orjson
from sqlalchemy.exc import IntegrityError

from berth.domain.availability import slot_state
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
from berth.domain.catalog import Catalog, Option, Product, RentalDuration
from berth.domain.catalog_lookup import find_currency, find_option, find_product
from berth.domain.errors import (
    BadRequest,
    InvalidAvailabilityId,
    InvalidBookingUuid,
    NotFound,
    UnprocessableEntity,
)
from berth.domain.rentals import affected_starts, rental_duration_for, rental_slot
from berth.domain.resources import Allocation, ResourceUse, availability_state, check_selection, party_of
from berth.domain.slots import Slot, cancellation_cutoff, slot_for_id
from berth.domain.times import format_local, format_utc
from berth.read_models.bookings import BookingDetails
from berth.services.availability import held_in, rental_peaks
from berth.services.catalog import CatalogService
from berth.services.clock import Clock
from berth.services.events import ChangeObserver
from berth.services.resources import ResourceService
from berth.settings import Settings
from berth.store import bookings_repo, catalog_repo, orders_repo
from berth.store.bookings_repo import BookingFilter
from berth.store.database import Database, DbConnection

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
class PackageBookingInput:
    """octo/packages: the include a package booking books, at which availability."""

    include_id: str | None
    availability_id: str | None = None


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
    rental_duration_id: str | None = None
    package_bookings: tuple[PackageBookingInput, ...] | None = None
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
    rental_duration_id: str | None = None
    sent: frozenset[str] = frozenset()
    resource_ids: tuple[str, ...] | None = None  # octo/resources


@dataclass(frozen=True)
class ConfirmInput:
    """`contact`: the lead traveller (None: keep the one given at reservation);
    `rental_duration_id`: a new rental duration for the booking (None: keep its own)."""

    contact: Contact | None
    reseller_reference: str | None = None
    unit_items: tuple[UnitItemInput, ...] | None = None
    notes: str | None = None
    rental_duration_id: str | None = None
    resource_ids: tuple[str, ...] | None = None  # octo/resources


@dataclass(frozen=True)
class PreparedBooking:
    """A checked reservation, not yet stored. For a rental, `slot` ends when the item is due
    back and `rental` is the duration."""

    booking: Booking
    product: Product
    option: Option
    slot: Slot | None
    rental: RentalDuration | None = None
    resource_ids: tuple[str, ...] | None = None  # octo/resources: the client's selection

    @property
    def lock_key(self) -> SlotKey | None:
        """The lock row a write of this booking takes (None: it takes no places)."""
        if self.slot is None:
            return None
        return lock_key(self.product.id, self.option.id, self.slot.id, rental=self.rental is not None)


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
    if data.rental_duration_id is not None:  # absent otherwise: fingerprints made before rentals still match
        document["rentalDurationId"] = data.rental_duration_id
    if data.package_bookings is not None:
        document["packageBookings"] = [[p.include_id, p.availability_id] for p in data.package_bookings]
    if data.resource_ids is not None:
        document["resourceIds"] = list(data.resource_ids)
    return hashlib.sha256(orjson.dumps(document, option=orjson.OPT_SORT_KEYS)).hexdigest()


SlotKey = tuple[str, str, str]
# The availability id of the one lock row of a rental option (never a real availability id).
RENTAL_LOCK = "RENTAL"


def lock_key(product_id: str, option_id: str, availability_id: str, *, rental: bool) -> SlotKey:
    """The lock row of a write that takes places: the slot's, or the rental option's."""
    return (product_id, option_id, RENTAL_LOCK if rental else availability_id)


def _slot_key(booking: Booking) -> SlotKey:
    return (booking.product_id, booking.option_id, booking.availability_id or "")


def _holding(booking: Booking | None, now: datetime) -> tuple[SlotKey, datetime | None, int] | None:
    """What a booking holds: its slot, when a rental's item is due back, and how many places."""
    if booking is None or booking.availability_id is None or not booking.holds_places(now):
        return None
    return _slot_key(booking), booking.slot_end, booking.pax


def _with_end(product: Product, slot: Slot, end: datetime | None) -> Slot:
    """A rental booking's slot ends when its item is due back (as stored with the booking)."""
    return slot if end is None else replace(slot, end=end.astimezone(ZoneInfo(product.time_zone)))


def _merge_contact(old: Contact, new: Contact) -> Contact:
    return Contact(
        values={**old.values, **new.values},
        locales=new.locales or old.locales,
        allow_marketing=new.allow_marketing if new.allow_marketing is not None else old.allow_marketing,
    )


# A booking's version before and after a change, both as stored.
Change = tuple[Booking, Booking]


class OrderFollower(Protocol):
    """Brings orders (octo/cart) in line with their bookings after booking-level changes."""

    async def follow_in(self, conn: DbConnection, catalog: Catalog, changes: Sequence[Change]) -> None: ...


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
        # The order service, once built (it is built on this one).
        self.orders: OrderFollower | None = None

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
        self,
        product: Product,
        option: Option,
        slot: Slot | None,
        now: datetime,
        excluding: str | None,
        *,
        rental: bool = False,
    ) -> int | None:
        """DEBUG mode only: read held places before the write transaction (the race)."""
        if slot is None or not self._settings.debug_disable_slot_lock:
            return None
        async with self._db.transaction(write=False) as conn:
            held = await self._held_in(conn, product, option, slot, now, excluding, rental=rental)
        # Let other requests read the same count before this one writes, as they would from
        # other processes (SQLite statements run without yielding to the event loop).
        await asyncio.sleep(0)
        return held

    @staticmethod
    async def _held_in(
        conn: DbConnection,
        product: Product,
        option: Option,
        slot: Slot,
        now: datetime,
        excluding: str | None,
        *,
        rental: bool = False,
    ) -> int:
        """Places held in `slot` by other bookings; for a rental slot (ending when the item is
        due back), the peak of items out at any instant of it."""
        held = await held_in(conn, product, option, [slot], now, rental=rental, excluding=excluding)
        return held.get(slot.id, 0)

    async def _take_places(
        self,
        conn: DbConnection,
        product: Product,
        option: Option,
        slot: Slot,
        pax: int,
        now: datetime,
        *,
        excluding: str | None = None,
        held_before: int | None = None,
        also_lock: Sequence[SlotKey] = (),
        rental: bool = False,
    ) -> None:
        """Lock the slot (a rental: its option's rental row), then check that `pax` more places
        fit (a rental: over the whole of `slot`, which ends when the item is due back). Raises
        UNPROCESSABLE_ENTITY."""
        if held_before is None:
            keys = [lock_key(product.id, option.id, slot.id, rental=rental), *also_lock]
            await bookings_repo.lock_slots(conn, keys)
            # No limit (freesale, or capacity from resources): the places held do not matter.
            held = (
                0
                if slot.capacity is None
                else await self._held_in(conn, product, option, slot, now, excluding, rental=rental)
            )
        else:
            held = held_before
        state = slot_state(slot, held, now, pax)
        if not state.available:
            if state.status == "CLOSED":
                reason = "is closed for sale" if slot.closed else "is past its sales cutoff"
                raise UnprocessableEntity(f"Availability {slot.id} {reason}")
            left = state.vacancies or 0
            if rental:
                raise UnprocessableEntity(
                    f"Availability {slot.id} is sold out for a rental until {format_local(slot.end)}: "
                    f"{left} item(s) free all that time, {pax} requested"
                )
            raise UnprocessableEntity(
                f"Availability {slot.id} is sold out: {left} place(s) left, {pax} requested"
            )

    async def _reallocated(
        self,
        conn: DbConnection,
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
        replaces them in the groups it names; otherwise (absent or `[]`, and in the groups it
        does not name) they stay as they are unless the party or the slot changed, and then the
        booking is re-allocated, keeping its resources (and seats) where they still fit."""
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

    async def _product(self, conn: DbConnection, catalog: Catalog, product_id: str) -> Product:
        product = catalog.product(product_id) or await catalog_repo.load_archived_product(conn, product_id)
        if product is None:
            raise NotFound(f"Product {product_id!r} of a booking is missing from the catalogue")
        return product

    async def _details(
        self, conn: DbConnection, catalog: Catalog, bookings: Sequence[Booking], *, exact: bool = False
    ) -> list[BookingDetails]:
        """Serializable details for bookings, with one held-places query per option (one
        interval query per rental option). Bookings are shown as they stand now (a passed hold
        as EXPIRED) unless `exact`."""
        now = self._clock()
        resolved: list[tuple[Booking, Product, Option, Slot | None]] = []
        groups: dict[tuple[str, str], list[Slot]] = {}
        rentals: dict[tuple[str, str], list[int]] = {}  # indexes into `resolved`
        targets: dict[tuple[str, str], tuple[Product, Option]] = {}
        for raw in bookings:
            booking = raw if exact else as_of(raw, now)
            product = await self._product(conn, catalog, booking.product_id)
            option = product.option(booking.option_id) or product.default_option
            slot = slot_for_id(product, option, booking.availability_id) if booking.availability_id else None
            if slot is not None and booking.slot_end is not None:
                slot = _with_end(product, slot, booking.slot_end)
                rentals.setdefault((product.id, option.id), []).append(len(resolved))
            elif slot is not None:
                groups.setdefault((product.id, option.id), []).append(slot)
                targets[(product.id, option.id)] = (product, option)
            resolved.append((booking, product, option, slot))
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
        peaks: dict[int, int] = {}
        for (product_id, option_id), indexes in rentals.items():
            windows = [
                (slot.start, slot.end) for index in indexes if (slot := resolved[index][3]) is not None
            ]
            found = await rental_peaks(conn, product_id, option_id, windows, now)
            peaks.update(zip(indexes, found, strict=True))
        order_references = await orders_repo.references(
            conn, (b.order_id for b, *_ in resolved if b.order_id)
        )
        details = []
        for index, (booking, product, option, slot) in enumerate(resolved):
            state = None
            cutoff = None
            if slot is not None:
                if index in peaks:
                    state = slot_state(slot, peaks[index], now)
                else:
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
                    option.rental_duration(booking.rental_duration_id)
                    if booking.rental_duration_id
                    else None,
                )
            )
        return await self._with_package_bookings(conn, catalog, details, exact)

    async def _with_package_bookings(
        self, conn: DbConnection, catalog: Catalog, details: list[BookingDetails], exact: bool
    ) -> list[BookingDetails]:
        """octo/packages: package bookings with their included bookings (one query for all)."""
        packages = [d.booking.id for d in details if d.option.package_includes]
        if not packages:
            return details
        members = await bookings_repo.package_members(conn, packages)
        described = await self._details(conn, catalog, members, exact=exact)
        by_package: dict[str, list[BookingDetails]] = {}
        for member in described:
            by_package.setdefault(member.booking.package_booking_id or "", []).append(member)
        result = []
        for d in details:
            found = by_package.get(d.booking.id)
            if found:
                order = [i.id for i in d.option.includes]
                found.sort(
                    key=lambda m: (
                        order.index(m.booking.package_include_id or "")
                        if (m.booking.package_include_id or "") in order
                        else len(order)
                    )
                )
                d = replace(d, package_bookings=tuple(found))
            result.append(d)
        return result

    async def describe(
        self, conn: DbConnection, catalog: Catalog, bookings: Sequence[Booking], *, exact: bool = False
    ) -> list[BookingDetails]:
        return await self._details(conn, catalog, bookings, exact=exact)

    async def _one(self, conn: DbConnection, catalog: Catalog, booking: Booking) -> BookingDetails:
        return (await self._details(conn, catalog, [booking]))[0]

    async def _exactly(self, conn: DbConnection, catalog: Catalog, booking: Booking) -> BookingDetails:
        return (await self._details(conn, catalog, [booking], exact=True))[0]

    async def _owned(self, conn: DbConnection, connection_id: str, uuid: str, now: datetime) -> Booking:
        """The connection's booking, locked for this transaction, as it stands at `now`."""
        booking = await bookings_repo.get_by_uuid(conn, connection_id, uuid)
        if booking is None:
            raise InvalidBookingUuid(uuid)
        return as_of(await self.lock_in(conn, booking), now)

    @staticmethod
    async def lock_in(conn: DbConnection, booking: Booking) -> Booking:
        """Lock a booking read in this transaction and answer it as it stands once locked.
        The booking's order is locked first, as every writer of an order's bookings does."""
        if booking.order_id is not None:
            await orders_repo.lock_order(conn, booking.order_id)
        return await bookings_repo.lock_booking(conn, booking)

    async def follow_in(self, conn: DbConnection, catalog: Catalog, changes: Sequence[Change]) -> None:
        """After booking-level changes (not an order's own steps): their orders follow them."""
        ordered = [(before, after) for before, after in changes if after.order_id and before != after]
        if ordered and self.orders is not None:
            await self.orders.follow_in(conn, catalog, ordered)

    async def _changed(
        self,
        conn: DbConnection,
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
        moved = self._moved_slots(catalog, before, after, now) if slots is None else slots
        if moved:
            await self._observer.slots_changed(conn, moved)

    def _moved_slots(
        self, catalog: Catalog, before: Booking | None, after: Booking, now: datetime
    ) -> list[SlotKey]:
        """The slots whose held places differ between the two versions of a booking."""
        old, new = _holding(before, now), _holding(after, now)
        if old == new:
            return []
        keys: list[SlotKey] = []
        for booking, held in ((before, old), (after, new)):
            if booking is not None and held is not None:
                keys.extend(self._slots_of(catalog, booking))
        return list(dict.fromkeys(keys))

    @staticmethod
    def _slots_of(catalog: Catalog, booking: Booking) -> list[SlotKey]:
        """The slots whose availability the places of `booking` count in: its own, or for a
        rental every start slot whose rentals would overlap the booking's interval."""
        own = _slot_key(booking)
        product = catalog.product(booking.product_id)
        option = product.option(booking.option_id) if product else None
        if product is None or option is None or booking.slot_start is None or booking.slot_end is None:
            return [own]
        starts = affected_starts(product, option, booking.slot_start, booking.slot_end)
        return [(product.id, option.id, slot.id) for slot in starts] or [own]

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
        rental = rental_duration_for(option, data.rental_duration_id)
        slot = self._slot(product, option, data.availability_id)
        if slot is not None and rental is not None:
            slot = rental_slot(slot, rental)
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
            rental_duration_id=rental.id if rental else None,
            slot_end=slot.end.astimezone(UTC) if slot is not None and rental is not None else None,
        )
        return PreparedBooking(booking, product, option, slot, rental, data.resource_ids)

    async def held_before(self, prepared: PreparedBooking) -> int | None:
        if prepared.booking.test_mode:
            return None
        await self._resources.read_unlocked(
            prepared.booking, prepared.product, prepared.option, prepared.slot
        )
        return await self._held_unlocked(
            prepared.product, prepared.option, prepared.slot, self._clock(), None,
            rental=prepared.rental is not None,
        )  # fmt: skip

    async def _take_prepared(
        self, conn: DbConnection, prepared: PreparedBooking, slot: Slot, held_before: int | None
    ) -> None:
        await self._take_places(
            conn, prepared.product, prepared.option, slot, prepared.booking.pax, self._clock(),
            held_before=held_before, rental=prepared.rental is not None,
        )  # fmt: skip

    async def place_in(
        self, conn: DbConnection, catalog: Catalog, prepared: PreparedBooking, held_before: int | None
    ) -> tuple[Booking, bool]:
        """Insert a prepared booking after taking its places, inside the caller's transaction.
        Returns the booking and whether it is new (False: the same request was made before)."""
        booking = prepared.booking
        existing = await bookings_repo.get_by_uuid(conn, booking.connection_id, booking.uuid)
        if existing is not None:
            self._check_repeat(existing, booking.request_fingerprint)
            return existing, False
        slot = prepared.slot if not booking.test_mode else None
        # Resources are allocated under the slot's lock into the row, and a rental's places are
        # counted from the bookings themselves (this one too, once written): both lock first.
        if slot is not None and (prepared.option.resource_groups or prepared.rental is not None):
            await self._take_prepared(conn, prepared, slot, held_before)
            slot = None  # taken
        if prepared.slot is not None and prepared.option.resource_groups:
            allocations = await self._resources.allocate_in(
                conn, prepared.product, prepared.option, prepared.slot, booking,
                party_of(prepared.option, [i.unit_id for i in booking.unit_items]), prepared.resource_ids,
                locked=held_before is None,  # _take_places has just locked the slot
            )  # fmt: skip
            booking = replace(booking, resource_allocations=allocations)
        # On PostgreSQL the slot's lock is held from _take_places to the commit, and every
        # reservation of a departure queues for it: what does not need the lock (the row, its
        # history, the outbox) is written first, so the lock is held for three statements.
        # Its places count (slot_holds) from count_new_hold on, after the check.
        await bookings_repo.insert_booking(conn, booking)
        await self._changed(
            conn, catalog, None, booking, "reserved", RESELLER, {"availabilityId": booking.availability_id}
        )
        if slot is not None:
            await self._take_prepared(conn, prepared, slot, held_before)
        await bookings_repo.count_new_hold(conn, booking)
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
        # Serialized after commit: the write lock is held only for the write itself. The reads
        # (the slot's places; its resources or order, if any) are each as of now: no BEGIN and
        # COMMIT round trips around them.
        async with self._db.single_read() as conn:
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
        """Every matching booking (callers bound the filter: a day's manifest, a reference)."""
        async with self._db.transaction(write=False) as conn:
            found, _ = await bookings_repo.find_bookings(conn, where)
            return await self._details(conn, catalog, found)

    async def find_page(
        self, catalog: Catalog, where: BookingFilter, *, limit: int, offset: int = 0
    ) -> tuple[list[BookingDetails], bool]:
        """At most `limit` matching bookings from `offset` on, and whether more match."""
        async with self._db.transaction(write=False) as conn:
            found, _ = await bookings_repo.find_bookings(
                conn, where, limit=limit + 1, offset=offset, count=False
            )
            return await self._details(conn, catalog, found[:limit]), len(found) > limit

    async def confirm(
        self, catalog: Catalog, connection_id: str, uuid: str, data: ConfirmInput
    ) -> BookingDetails:
        now = self._clock()
        async with self._db.transaction(write=True) as conn:
            booking = await self._owned(conn, connection_id, uuid, now)
            confirmed = await self.confirm_in(conn, catalog, booking, data, now)
            await self.follow_in(conn, catalog, [(booking, confirmed)])
            return await self._one(conn, catalog, confirmed)

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
        product = await self._product(conn, catalog, booking.product_id)
        option = find_option(product, booking.option_id)
        if data.resource_ids:
            check_selection(catalog, product, option, data.resource_ids)
        slot = slot_for_id(product, option, booking.availability_id) if booking.availability_id else None
        # A new rental duration moves the booking's interval; without one it keeps its own.
        rental = (
            rental_duration_for(option, data.rental_duration_id)
            if data.rental_duration_id is not None
            else None
        )
        if slot is not None and rental is not None:
            slot = rental_slot(slot, rental)
        elif slot is not None:
            slot = _with_end(product, slot, booking.slot_end)
        rents = rental is not None or booking.slot_end is not None
        slot_end = slot.end.astimezone(UTC) if slot is not None and rents else None
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
        is_rental = slot_end is not None
        if slot is not None and (pax > booking.pax or slot_end != booking.slot_end) and not booking.test_mode:
            held_before = await self._held_unlocked(product, option, slot, now, booking.id, rental=is_rental)
            await self._take_places(
                conn, product, option, slot, pax, now, excluding=booking.id, held_before=held_before,
                rental=is_rental,
            )  # fmt: skip
        contact = booking.contact if data.contact is None else data.contact
        missing = missing_contact_fields(option, contact, items)
        if missing:
            raise UnprocessableEntity("Required contact fields are missing: " + ", ".join(missing))
        allocations = await self._reallocated(
            conn, product, option, slot, booking, items, data.resource_ids, moved=False
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
            rental_duration_id=rental.id if rental is not None else booking.rental_duration_id,
            slot_end=slot_end,
            resource_allocations=allocations,
            expires_at=None,
            confirmed_at=now if status is BookingStatus.CONFIRMED else None,
            updated_at=now,
        )
        await bookings_repo.save_booking(conn, confirmed, booking)
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
            if old_slot is not None:
                old_slot = _with_end(old_product, old_slot, booking.slot_end)
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
            # The rental interval is worked out again when the booking moves or its duration
            # changes; otherwise the booking keeps its own (also if the catalogue changed since).
            keep_interval = not moving and "rentalDurationId" not in data.sent
            rental: RentalDuration | None = None
            if not keep_interval:
                if "rentalDurationId" in data.sent:
                    rental_id = data.rental_duration_id
                elif booking.rental_duration_id and option.rental_duration(booking.rental_duration_id):
                    rental_id = booking.rental_duration_id
                else:
                    rental_id = None
                rental = rental_duration_for(option, rental_id)
            if data.resource_ids:
                check_selection(catalog, product, option, data.resource_ids)
            if moving:
                availability_id = (
                    data.availability_id if "availabilityId" in data.sent else booking.availability_id
                )
                slot = self._slot(product, option, availability_id)
            else:
                slot = old_slot
            if keep_interval:
                slot_end = booking.slot_end
            else:
                if slot is not None and rental is not None:
                    slot = rental_slot(slot, rental)
                slot_end = slot.end.astimezone(UTC) if slot is not None and rental is not None else None
            if data.unit_items is not None:
                items = self._unit_items(option, data.unit_items, booking.unit_items)
            else:
                check_units(option, [i.unit_id for i in booking.unit_items])
                items = booking.unit_items
            pax = pax_of(option, [i.unit_id for i in items])
            same_slot = slot is not None and old_slot is not None and (product.id, option.id, slot.id) == (
                old_product.id, old_option.id, old_slot.id,
            ) and slot_end == booking.slot_end  # fmt: skip
            if slot is not None and not booking.test_mode and (not same_slot or pax > booking.pax):
                is_rental = slot_end is not None
                old_lock = (
                    [
                        lock_key(
                            old_product.id, old_option.id, old_slot.id, rental=booking.slot_end is not None
                        )
                    ]
                    if old_slot is not None and not same_slot
                    else []
                )
                held_before = await self._held_unlocked(
                    product, option, slot, now, booking.id, rental=is_rental
                )
                await self._take_places(
                    conn, product, option, slot, pax, now,
                    excluding=booking.id, held_before=held_before, also_lock=old_lock, rental=is_rental,
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
                rental_duration_id=booking.rental_duration_id
                if keep_interval
                else (rental.id if rental else None),
                slot_end=slot_end,
                resource_allocations=allocations,
                expires_at=expires_at,
                notes=data.notes if "notes" in data.sent else booking.notes,
                reseller_reference=data.reseller_reference
                if "resellerReference" in data.sent
                else booking.reseller_reference,
                contact=_merge_contact(booking.contact, data.contact) if data.contact else booking.contact,
                updated_at=now,
            )
            await bookings_repo.save_booking(conn, updated, booking)
            await self._changed(
                conn, catalog, booking, updated, "updated", RESELLER, {"fields": sorted(data.sent)}
            )
            await self.follow_in(conn, catalog, [(booking, updated)])
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
            await self.follow_in(conn, catalog, [(booking, extended)])
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
        self, conn: DbConnection, catalog: Catalog, booking: Booking, expires_at: datetime
    ) -> Booking:
        extended = replace(booking, expires_at=expires_at, updated_at=self._clock())
        await bookings_repo.save_booking(conn, extended, booking)
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
            await self.follow_in(conn, catalog, [(booking, cancelled)])
            # A package booking's included bookings go with it (the staff's cancel comes here).
            for member in await bookings_repo.package_members(conn, [booking.id], lock=True):
                included = as_of(member, now)
                if included.status in (
                    BookingStatus.CANCELLED,
                    BookingStatus.EXPIRED,
                    BookingStatus.REJECTED,
                ):
                    continue
                await self.cancel_in(conn, catalog, included, reason, force=force, actor=actor)
            return await self._one(conn, catalog, cancelled)

    async def cancel_in(
        self,
        conn: DbConnection,
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
        await bookings_repo.save_booking(conn, cancelled, booking)
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
        """Mark holds whose time has passed EXPIRED (reads already treat them so). Holds of an
        order expire with their order (OrderService.expire_due), which is locked first."""
        now = self._clock()
        catalog = (await self._catalogs.snapshot()).catalog
        async with self._db.transaction(write=True) as conn:
            due = await bookings_repo.due_holds(conn, now, batch)
            for stored in due:
                await self.expire_in(conn, catalog, stored)
            await bookings_repo.forget_ended_holds(conn, now)
        return len(due)

    async def expire_in(self, conn: DbConnection, catalog: Catalog, stored: Booking) -> Booking:
        """Store EXPIRED on a (locked) hold whose time has passed."""
        expired = as_of(stored, self._clock())
        await bookings_repo.save_booking(conn, expired, stored)
        # The places came free when the hold ran out; announce the slot(s) now.
        freed = [] if stored.test_mode or stored.availability_id is None else self._slots_of(catalog, stored)
        await self._changed(conn, catalog, stored, expired, "expired", SYSTEM, slots=freed)
        return expired

    # --- supplier operations ---------------------------------------------------------------

    async def _by_id(self, conn: DbConnection, booking_id: str) -> Booking:
        booking = await bookings_repo.get_by_id(conn, booking_id)
        if booking is None:
            raise NotFound(f"No booking with id {booking_id!r}")
        return await self.lock_in(conn, booking)

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
            await bookings_repo.save_booking(conn, changed, booking)
            await self._changed(conn, catalog, booking, changed, kind, SUPPLIER)
            await self.follow_in(conn, catalog, [(booking, changed)])
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
