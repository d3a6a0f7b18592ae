"""The in-transaction steps of a booking's lifecycle: prepare, place, confirm, change, extend,
cancel and expire. Each runs inside its caller's transaction on a booking the caller locked;
the reseller and supplier use cases, orders and packages compose them.

Every step that can take places locks the slot(s) it touches (through the lock manager) and
re-checks capacity inside the same transaction, so two writers can never both take the last
places. How places are counted, which row is locked and what else a booking is given in its
slot is the option's capacity policy's business.
"""

from __future__ import annotations

import uuid as uuidlib
from collections.abc import Awaitable, Callable, Sequence
from dataclasses import dataclass, replace
from datetime import UTC, datetime, timedelta
from typing import Any, Protocol

from berth.domain.allotments import seen_with
from berth.domain.availability import AvailabilityStatus, SlotState, slot_state
from berth.domain.bookings import (
    Booking,
    BookingStatus,
    Cancellation,
    Contact,
    UnitItem,
    as_of,
    check_units,
    is_cancellable,
    merge_contact,
    missing_contact_fields,
    new_reference,
    not_changeable,
    pax_of,
    sold_anew,
)
from berth.domain.catalog import Catalog, Option, Product, RentalDuration
from berth.domain.catalog.lookup import find_currency, find_option, find_product
from berth.domain.checkin import TICKETS_CANCELLED, boarded_only, not_through, partly_through
from berth.domain.errors import (
    BadRequest,
    InvalidAvailabilityId,
    InvalidBookingUuid,
    OctoError,
    UnprocessableEntity,
)
from berth.domain.price_lines import price_lines
from berth.domain.pricing import booking_priceables
from berth.domain.slots import Slot, cancellation_cutoff, slot_for_id
from berth.domain.tickets import ISSUED, ticket_keys
from berth.domain.times import format_utc
from berth.services.allotments import AllotmentService
from berth.services.bookings.capacity import CapacityPolicies, SlotPolicy, slots_as_run
from berth.services.bookings.extensions import BookingExtensions, Holding, Stage
from berth.services.bookings.inputs import (
    RESELLER,
    SUPPLIER,
    SYSTEM,
    Change,
    ConfirmInput,
    ReserveInput,
    UnitItemInput,
    UpdateInput,
    fingerprint,
)
from berth.services.bookings.loader import BookingLoader, booked_slot
from berth.services.bookings.locks import SlotKey, SlotLocks
from berth.services.clock import Clock
from berth.services.events import ChangeObserver, GuestNotices
from berth.settings import Settings
from berth.store import allotments_repo, bookings_repo, orders_repo, tickets_repo
from berth.store.database import DbConnection


@dataclass(frozen=True)
class PreparedBooking:
    """A checked reservation, not yet stored. `slot` is the interval the booking holds, as its
    policy stretched it (a rental's ends when the item is due back)."""

    booking: Booking
    product: Product
    option: Option
    slot: Slot | None
    policy: SlotPolicy
    resource_ids: tuple[str, ...] | None = None  # octo/resources: the client's selection

    @property
    def lock_key(self) -> SlotKey | None:
        """The lock row a write of this booking takes (None: it takes no places)."""
        if self.slot is None or self.booking.test_mode:
            return None
        return self.policy.lock_key(self.product, self.option, self.slot)


def _event_detail(booking: Booking, detail: dict[str, Any] | None) -> dict[str, Any]:
    """A history entry's detail: the booking's status after the step, and the step's own."""
    return {"status": booking.status.value, **(detail or {})}


class Companions(Protocol):
    """A capability whose bookings change together (octo/packages: a package booking and its
    included bookings)."""

    async def companions(
        self, conn: DbConnection, booking: Booking, verb: str, *, staff: bool
    ) -> list[Booking]:
        """The bookings (locked) that `verb` (confirm, extend, cancel, update) must change
        with `booking`; refuses a reseller's `verb` on a booking that can only change through
        another (`staff`: the supplier's, which may change any booking on its own)."""


# A step applied to the booking: (conn, booking) -> the booking after it.
Step = Callable[[DbConnection, Booking], Awaitable[Booking]]
# The step applied to each companion, given the booking after its own step.
CompanionStep = Callable[[DbConnection, Booking, Booking], Awaitable[Booking]]
PARTICIPLES = {"confirm": "confirmed", "extend": "extended", "cancel": "cancelled"}


class ConfirmationCheck(Protocol):
    """A precondition of every confirmation, asked inside its transaction with the booking as
    it is about to be stored (the payments': a paying channel's booking is confirmed only for
    a captured payment of its amount, which the confirmation claims). Raises to refuse."""

    async def confirming(self, conn: DbConnection, booking: Booking) -> None: ...


class OrderFollower(Protocol):
    """Brings orders (octo/cart) in line with their bookings after booking-level changes."""

    async def follow_in(self, conn: DbConnection, catalog: Catalog, changes: Sequence[Change]) -> None: ...


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


def _holding(booking: Booking | None, now: datetime) -> tuple[SlotKey, datetime | None, int] | None:
    """What a booking holds: its slot, when its interval ends, and how many places."""
    if booking is None or booking.availability_id is None or not booking.holds_places(now):
        return None
    return (booking.product_id, booking.option_id, booking.availability_id), booking.slot_end, booking.pax


class BookingSteps:
    def __init__(
        self,
        settings: Settings,
        clock: Clock,
        observer: ChangeObserver,
        policies: CapacityPolicies,
        locks: SlotLocks,
        loader: BookingLoader,
        allotments: AllotmentService,
        extensions: BookingExtensions | None = None,
    ) -> None:
        self._settings = settings
        self.allotments = allotments
        self._clock = clock
        self._observer = observer
        self.policies = policies
        self.locks = locks
        self.loader = loader
        self.extensions = extensions or BookingExtensions()
        # The order service, once built (it is built on these steps).
        self.orders: OrderFollower | None = None
        # The guests' emails, once built (receipts and notices, queued in each step's transaction).
        self.notices: GuestNotices | None = None
        self._companions: tuple[Companions, ...] = ()
        self._confirmation_checks: tuple[ConfirmationCheck, ...] = ()

    def add_confirmation_check(self, check: ConfirmationCheck) -> None:
        self._confirmation_checks = (*self._confirmation_checks, check)

    def add_companions(self, companions: Companions) -> None:
        self._companions = (*self._companions, companions)

    # --- checks -----------------------------------------------------------------------------

    def priced(
        self,
        product: Product,
        option: Option,
        booking: Booking,
        rental: RentalDuration | None,
        *,
        reprice: bool = False,
    ) -> Booking:
        """The booking with a line for each of its parts: the parts it had keep what they were
        sold at (unless `reprice`), new ones are priced now from `product` (the catalogue as
        the booking's connection buys it: its contract's net)."""
        wanted = [
            *booking_priceables(product, option, booking, rental),
            *self.extensions.priceables(booking, product, option),
        ]
        lines = price_lines(wanted, booking.price_lines, reprice=reprice)
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

    # --- history and events ----------------------------------------------------------------

    async def lock_in(self, conn: DbConnection, booking: Booking) -> Booking:
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

    async def changed(
        self,
        conn: DbConnection,
        catalog: Catalog,
        before: Booking | None,
        after: Booking,
        kind: str,
        actor: str,
        detail: dict[str, Any] | None = None,
        slots: Sequence[SlotKey] | None = None,
        *,
        recorded: bool = False,
    ) -> None:
        """Record a step in the booking's history (unless `recorded` with the booking's row)
        and announce it: a booking_update for every change of an existing booking, an
        availability_update for each slot whose held places changed."""
        now = self._clock()
        await self.policies.booking_changed(conn, before, after, now)
        await self._issue_tickets(conn, catalog, before, after)
        if not recorded:
            await bookings_repo.add_event(conn, after.id, now, kind, actor, _event_detail(after, detail))
        if before is not None:
            await self._observer.booking_changed(
                conn, lambda b: self.loader.exactly(conn, catalog, b), before, after
            )
        if self.notices is not None:
            await self.notices.booking_step(
                conn,
                lambda b: self.loader.exactly(conn, catalog, b),
                before,
                after,
                kind,
                actor,
                detail or {},
            )
        moved = self._moved_slots(catalog, before, after, now) if slots is None else slots
        if moved:
            await self._observer.slots_changed(conn, moved)

    async def _issue_tickets(
        self, conn: DbConnection, catalog: Catalog, before: Booking | None, after: Booking
    ) -> None:
        """Tokens for the ticket documents of a booking just issued, or of unit items it was
        given since (before the change is announced, so that its payload has the URLs)."""
        if after.status not in ISSUED:
            return
        if before is not None and before.status in ISSUED:
            kept = {item.uuid for item in before.unit_items}
            if all(item.uuid in kept for item in after.unit_items):
                return
        product = await self.loader.product(conn, catalog, after.product_id)
        await tickets_repo.issue(conn, after.id, ticket_keys(product, after))

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
                keys.extend(self.policies.counted_in(catalog, booking))
        return list(dict.fromkeys(keys))

    # --- groups of bookings ------------------------------------------------------------------

    async def companions(
        self, conn: DbConnection, booking: Booking, verb: str, *, staff: bool = False
    ) -> list[Booking]:
        """The bookings that change with `booking` (locked, as they stand now)."""
        found: list[Booking] = []
        for companions in self._companions:
            found.extend(await companions.companions(conn, booking, verb, staff=staff))
        now = self._clock()
        return [as_of(b, now) for b in found]

    async def with_companions(
        self,
        conn: DbConnection,
        catalog: Catalog,
        booking: Booking,
        verb: str,
        first: Step,
        companion: CompanionStep,
        *,
        staff: bool = False,
        skip: Sequence[BookingStatus] = (),
    ) -> Booking:
        """Apply `first` to the (locked, as-of-now) booking and `companion` to each of its
        companions not in a `skip` status: all of them change, or none; its order follows."""
        companions = await self.companions(conn, booking, verb, staff=staff)
        after = await first(conn, booking)
        for member in companions:
            if member.status in skip:
                continue
            try:
                await companion(conn, member, after)
            except OctoError as exc:
                done = PARTICIPLES[verb]
                raise UnprocessableEntity(
                    f"The included booking {member.package_include_id!r} cannot be {done}: "
                    f"{exc.message}. Nothing was {done}",
                    uuid=booking.uuid,
                ) from None
        await self.follow_in(conn, catalog, [(booking, after)])
        return after

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
        rental = policy.duration(option, data.rental_duration_id, None)
        slot = self._slot(product, option, data.availability_id)
        if slot is not None:
            slot = policy.stretch(slot, rental)
        items = self._unit_items(option, data.unit_items)
        currency = find_currency(product, data.currency)
        self.policies.check_request(catalog, product, option, data.resource_ids)
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
        booking = self.extensions.apply(Stage.RESERVE, product, option, slot, booking, data.extensions)
        booking = self.priced(product, option, booking, rental)
        return PreparedBooking(booking, product, option, slot, policy, data.resource_ids)

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
        product, option, policy = prepared.product, prepared.option, prepared.policy
        if self._places_first(prepared):
            existing = await bookings_repo.get_by_uuid(conn, booking.connection_id, booking.uuid)
            if existing is not None:
                return self._repeat(existing, booking), False
            assert prepared.slot is not None
            await self._check_on_sale(conn, product, option, prepared.slot, booking)
            await self._take_places(conn, product, option, prepared.slot, booking, booking.pax)
        if prepared.slot is not None:
            allocations = await policy.allocate(
                conn, self.locks, product, option, prepared.slot, booking, booking.unit_items,
                prepared.resource_ids,
            )  # fmt: skip
            booking = replace(booking, resource_allocations=allocations)
        detail = {"availabilityId": booking.availability_id}
        first = bookings_repo.FirstEvent(self._clock(), "reserved", RESELLER, _event_detail(booking, detail))
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
                if await bookings_repo.lock_and_hold_reserving(
                    conn, key, booking, slot.capacity, now, reserving
                ):
                    return
            elif bookings_repo.hold_in_one_call(
                conn, key, booking, slot.capacity, now
            ) or await bookings_repo.lock_and_hold_if_room(conn, key, booking, slot.capacity, now):
                return
        # Refused, or no lock (the race tests' read-ahead count): the count, read under the
        # lock, decides (and says why when it refuses).
        await self._take_places(conn, product, option, slot, booking, booking.pax)
        await bookings_repo.count_new_hold(conn, booking)

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
        self.policies.check_request(catalog, product, option, data.resource_ids)
        # A new rental duration moves the booking's interval; without one it keeps its own.
        rental = (
            policy.duration(option, data.rental_duration_id, None)
            if data.rental_duration_id is not None
            else None
        )
        bare = slot_for_id(product, option, booking.availability_id) if booking.availability_id else None
        if bare is not None and rental is not None:
            slot: Slot | None = policy.stretch(bare, rental)
        else:
            slot = booked_slot(product, option, booking)
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
        rental_id = rental.id if rental is not None else booking.rental_duration_id
        grown = replace(booking, unit_items=items, pax=pax, rental_duration_id=rental_id, slot_end=slot_end)
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
        allocations = (
            await policy.allocate(
                conn, self.locks, product, option, slot, booking, items, data.resource_ids, moved=False
            )
            if slot is not None
            else ()
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
            rental_duration_id=rental_id,
            slot_end=slot_end,
            resource_allocations=allocations,
            expires_at=None,
            confirmed_at=now if status is BookingStatus.CONFIRMED else None,
            updated_at=now,
        )
        confirmed = self.extensions.apply(Stage.CONFIRM, product, option, slot, confirmed, data.extensions)
        confirmed = self.priced(
            product,
            option,
            confirmed,
            option.rental_duration(confirmed.rental_duration_id) if confirmed.rental_duration_id else None,
            reprice=confirmed.rental_duration_id != booking.rental_duration_id,
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
        self.policies.check_request(catalog, product, option, data.resource_ids)
        # The booking's interval is worked out again when it moves or its duration changes;
        # otherwise it keeps its own (also if the catalogue changed since).
        keep_interval = not moving and "rentalDurationId" not in data.sent
        rental: RentalDuration | None = None
        if not keep_interval:
            if "rentalDurationId" in data.sent:
                rental = policy.duration(option, data.rental_duration_id, None)
            else:
                rental = policy.duration(option, None, booking.rental_duration_id)
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
            if slot is not None:
                slot = policy.stretch(slot, rental)
            slot_end = slot.end.astimezone(UTC) if slot is not None and rental is not None else None
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
        placed = replace(
            placed,
            unit_items=items,
            pax=pax,
            rental_duration_id=booking.rental_duration_id
            if keep_interval
            else (rental.id if rental else None),
            slot_end=slot_end,
        )
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
        allocations = (
            await policy.allocate(
                conn,
                self.locks,
                product,
                option,
                slot,
                booking,
                items,
                data.resource_ids,
                moved=not same_slot,
                same_option=same_option,
            )
            if slot is not None
            else ()
        )
        expires_at = booking.expires_at
        if booking.status is BookingStatus.ON_HOLD and data.expiration_minutes is not None:
            expires_at = self.expiry(data.expiration_minutes, now)
        updated = replace(
            placed,
            resource_allocations=allocations,
            expires_at=expires_at,
            notes=data.notes if "notes" in data.sent else booking.notes,
            reseller_reference=data.reseller_reference
            if "resellerReference" in data.sent
            else booking.reseller_reference,
            contact=merge_contact(booking.contact, data.contact) if data.contact else booking.contact,
            updated_at=now,
        )
        updated = self.extensions.apply(Stage.UPDATE, product, option, slot, updated, data.extensions)
        # A part's price is its departure's day, option and duration's: a booking moved to
        # another of them is sold again; one that only gained or lost parts keeps the others'.
        updated = self.priced(
            product,
            option,
            updated,
            option.rental_duration(updated.rental_duration_id) if updated.rental_duration_id else None,
            reprice=(updated.product_id, updated.option_id, updated.local_date, updated.rental_duration_id)
            != (booking.product_id, booking.option_id, booking.local_date, booking.rental_duration_id),
        )
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

    # --- extend, cancel, expire ------------------------------------------------------------------

    async def hold_until_in(
        self, conn: DbConnection, catalog: Catalog, booking: Booking, expires_at: datetime
    ) -> Booking:
        extended = replace(booking, expires_at=expires_at, updated_at=self._clock())
        await bookings_repo.save_booking(conn, extended, booking)
        await self.changed(
            conn, catalog, booking, extended, "extended", RESELLER, {"utcExpiresAt": format_utc(expires_at)}
        )
        return extended

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
        allocations = (
            await self.policies.of(option).allocate(
                conn, self.locks, product, option, slot, booking, booking.unit_items, None
            )
            if slot is not None
            else ()
        )
        now = self._clock()
        held = replace(
            booking, status=BookingStatus.ON_HOLD, expires_at=expires_at, cancellation=None,
            resource_allocations=allocations, updated_at=now,
        )  # fmt: skip
        await bookings_repo.save_booking(conn, held, booking)
        await self.extensions.hold(conn, self.locks, self._holding(product, option, slot, booking, held, now))
        await self.changed(
            conn, catalog, booking, held, "reinstated", SYSTEM, {"utcExpiresAt": format_utc(expires_at)}
        )
        return held

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
        allocations = (
            await self.policies.of(option).allocate(
                conn, self.locks, product, option, slot, booking, kept.unit_items, None, moved=False
            )
            if slot is not None
            else ()
        )
        updated = replace(
            kept, pax=pax_of(option, [i.unit_id for i in kept.unit_items]), resource_allocations=allocations
        )
        updated = self.extensions.apply(Stage.UPDATE, product, option, slot, updated, {})
        rental = option.rental_duration(updated.rental_duration_id) if updated.rental_duration_id else None
        updated = self.priced(product, option, updated, rental)
        await bookings_repo.save_booking(conn, updated, booking)
        await self.extensions.hold(
            conn, self.locks, self._holding(product, option, slot, booking, updated, now)
        )
        tickets = [item.supplier_reference for item in not_through(booking)]
        detail = {"reason": reason, "cause": cause, "tickets": tickets}
        await self.changed(conn, catalog, booking, updated, TICKETS_CANCELLED, SUPPLIER, detail)
        return updated

    async def expire_in(self, conn: DbConnection, catalog: Catalog, stored: Booking) -> Booking:
        """Store EXPIRED on a (locked) hold whose time has passed."""
        expired = as_of(stored, self._clock())
        await bookings_repo.save_booking(conn, expired, stored)
        # The places came free when the hold ran out; announce the slot(s) now.
        freed = (
            []
            if stored.test_mode or stored.availability_id is None
            else self.policies.counted_in(catalog, stored)
        )
        await self.changed(conn, catalog, stored, expired, "expired", SYSTEM, slots=freed)
        return expired
