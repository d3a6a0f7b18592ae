"""Orders (octo/cart): one hold, one confirmation and one cancellation for several bookings.

Every order operation runs in one transaction and acts on all of the order's bookings through
the booking service's in-transaction steps, so either every booking changes or none does.
"""

from __future__ import annotations

import uuid as uuidlib
from collections.abc import Sequence
from dataclasses import dataclass, replace

from sqlalchemy.exc import IntegrityError

from berth.domain.bookings import Booking, BookingStatus, Cancellation, Contact, as_of, new_reference
from berth.domain.catalog import Catalog
from berth.domain.errors import BadRequest, InvalidOrderId, OctoError, UnprocessableEntity
from berth.domain.orders import Order, OrderStatus, confirmed_status, merge_contact, order_as_of
from berth.services.bookings import (
    RESELLER,
    SUPPLIER,
    BookingDetails,
    BookingService,
    ConfirmInput,
    PreparedBooking,
    ReserveInput,
)
from berth.services.clock import Clock
from berth.services.events import ChangeObserver
from berth.settings import Settings
from berth.store import bookings_repo, orders_repo
from berth.store.database import Database, DbConnection

LIVE = (OrderStatus.ON_HOLD, OrderStatus.CONFIRMED, OrderStatus.PENDING)


@dataclass(frozen=True)
class OrderInput:
    currency: str | None = None
    expiration_minutes: int | None = None
    email_receipt: bool | None = None
    contact: Contact | None = None
    bookings: tuple[ReserveInput, ...] = ()


@dataclass(frozen=True)
class OrderDetails:
    order: Order
    bookings: tuple[BookingDetails, ...]

    @property
    def cancellable(self) -> bool:
        return self.order.status in LIVE and all(
            d.cancellable
            for d in self.bookings
            if d.booking.status not in (BookingStatus.CANCELLED, BookingStatus.EXPIRED)
        )

    @property
    def confirmable(self) -> bool:
        return self.order.status is OrderStatus.ON_HOLD and any(
            d.booking.status is BookingStatus.ON_HOLD for d in self.bookings
        )


class OrderService:
    def __init__(
        self,
        database: Database,
        settings: Settings,
        clock: Clock,
        bookings: BookingService,
        observer: ChangeObserver,
    ) -> None:
        self._db = database
        self._settings = settings
        self._clock = clock
        self._bookings = bookings
        self._observer = observer

    # --- helpers ----------------------------------------------------------------------------

    async def _details(
        self, conn: DbConnection, catalog: Catalog, order: Order, *, exact: bool = False
    ) -> OrderDetails:
        members = await orders_repo.bookings_of(conn, order.id)
        described = await self._bookings.describe(conn, catalog, members, exact=exact)
        return OrderDetails(order if exact else order_as_of(order, self._clock()), tuple(described))

    async def _owned(self, conn: DbConnection, connection_id: str, order_id: str) -> Order:
        order = await orders_repo.get_order(conn, order_id, connection_id, lock=True)
        if order is None:
            raise InvalidOrderId(order_id)
        return order_as_of(order, self._clock())

    async def _changed(self, conn: DbConnection, catalog: Catalog, before: Order, after: Order) -> None:
        await self._observer.order_changed(
            conn, lambda o: self._details(conn, catalog, o, exact=True), before, after
        )

    def _prepare_all(
        self,
        catalog: Catalog,
        connection_id: str,
        order: Order,
        requests: Sequence[ReserveInput],
        first_primary: bool,
        first_position: int = 0,
    ) -> list[PreparedBooking]:
        prepared = []
        for index, request in enumerate(requests):
            try:
                item = self._bookings.prepare(
                    catalog, connection_id, replace(request, currency=request.currency or order.currency),
                    test_mode=order.test_mode, expires_at=order.expires_at, order_id=order.id,
                    primary=first_primary and index == 0, order_position=first_position + index,
                )  # fmt: skip
            except OctoError as exc:
                exc.message = f"bookings[{index}]: {exc.message}"
                raise
            if order.currency and item.booking.currency and item.booking.currency != order.currency:
                raise BadRequest(
                    f"bookings[{index}]: an order has one currency; this booking is in {item.booking.currency}, "
                    f"the order in {order.currency}"
                )
            prepared.append(item)
        return prepared

    def _new_order(
        self, connection_id: str, data: OrderInput, test_mode: bool, currency: str | None
    ) -> Order:
        now = self._clock()
        return Order(
            id=str(uuidlib.uuid4()),
            connection_id=connection_id,
            supplier_reference=new_reference(),
            status=OrderStatus.ON_HOLD,
            test_mode=test_mode,
            currency=currency,
            contact=data.contact or Contact(),
            email_receipt=bool(data.email_receipt),
            created_at=now,
            updated_at=now,
            expires_at=self._bookings.expiry(data.expiration_minutes, now),
        )

    # --- operations -------------------------------------------------------------------------

    async def create(
        self, catalog: Catalog, connection_id: str, data: OrderInput, *, test_mode: bool = False
    ) -> OrderDetails:
        """A new ON_HOLD order, holding every booking in `data.bookings` or none at all."""
        currency = data.currency
        if currency is None and data.bookings:
            first = self._bookings.prepare(catalog, connection_id, data.bookings[0], test_mode=test_mode)
            currency = first.booking.currency
        order = self._new_order(connection_id, data, test_mode, currency)
        prepared = self._prepare_all(catalog, connection_id, order, data.bookings, first_primary=True)
        held = [await self._bookings.held_before(p) for p in prepared]
        try:
            async with self._db.transaction(write=True) as conn:
                await orders_repo.insert_order(conn, order)
                # Every slot of the order first, in one sorted pass: two orders holding the same
                # slots in another sequence then wait for each other instead of deadlocking.
                await bookings_repo.lock_slots(conn, [p.lock_key for p in prepared if p.lock_key is not None])
                for index, (item, held_before) in enumerate(zip(prepared, held, strict=True)):
                    booking, new = await self._place(conn, catalog, item, held_before, index)
                    if not new:
                        raise BadRequest(
                            f"bookings[{index}]: the uuid {booking.uuid!r} is already used by another booking"
                        )
                return await self._details(conn, catalog, order)
        except IntegrityError:
            raise BadRequest("A booking uuid of this order is already in use; nothing was held") from None

    async def _place(
        self,
        conn: DbConnection,
        catalog: Catalog,
        item: PreparedBooking,
        held_before: int | None,
        index: int,
    ) -> tuple[Booking, bool]:
        try:
            return await self._bookings.place_in(conn, catalog, item, held_before)
        except OctoError as exc:
            exc.message = f"bookings[{index}]: {exc.message}"
            raise

    async def reserve(
        self, catalog: Catalog, connection_id: str, data: ReserveInput, *, test_mode: bool = False
    ) -> BookingDetails:
        """POST /bookings with the cart: join the order named by `orderId`, or start a new one."""
        if data.order_id is None:
            created = await self.create(
                catalog, connection_id, OrderInput(currency=data.currency, expiration_minutes=data.expiration_minutes,
                                                   contact=data.contact, bookings=(data,)),
                test_mode=test_mode,
            )  # fmt: skip
            return created.bookings[0]
        async with self._db.transaction(write=True) as conn:
            order = await self._owned(conn, connection_id, data.order_id)
            if order.status is not OrderStatus.ON_HOLD:
                raise UnprocessableEntity(
                    f"Order {order.id!r} is {order.status.value}; bookings join ON_HOLD orders only"
                )
            position = await orders_repo.next_position(conn, order.id)
            (item,) = self._prepare_all(
                catalog, connection_id, order, [data], first_primary=False, first_position=position
            )
            held_before = await self._bookings.held_before(item)
            booking, new = await self._bookings.place_in(conn, catalog, item, held_before)
            if new:
                joined = replace(order, currency=order.currency or booking.currency, updated_at=self._clock())
                await orders_repo.save_order(conn, joined)
                await self._changed(conn, catalog, order, joined)
            return (await self._bookings.describe(conn, catalog, [booking]))[0]

    async def get(self, catalog: Catalog, connection_id: str, order_id: str) -> OrderDetails:
        async with self._db.transaction(write=False) as conn:
            order = await orders_repo.get_order(conn, order_id, connection_id)
            if order is None:
                raise InvalidOrderId(order_id)
            return await self._details(conn, catalog, order)

    async def update(
        self, catalog: Catalog, connection_id: str, order_id: str, data: OrderInput, sent: frozenset[str]
    ) -> OrderDetails:
        now = self._clock()
        async with self._db.transaction(write=True) as conn:
            order = await self._owned(conn, connection_id, order_id)
            if order.status not in LIVE:
                raise UnprocessableEntity(f"Order {order_id!r} is {order.status.value} and cannot be updated")
            members = [as_of(b, now) for b in await orders_repo.bookings_of(conn, order.id, lock=True)]
            if "currency" in sent and data.currency != order.currency and members:
                raise BadRequest("The currency of an order with bookings cannot change")
            updated = replace(
                order,
                currency=data.currency if "currency" in sent else order.currency,
                email_receipt=order.email_receipt if data.email_receipt is None else data.email_receipt,
                contact=merge_contact(order.contact, data.contact) if data.contact else order.contact,
                updated_at=now,
            )
            if "expirationMinutes" in sent and order.status is OrderStatus.ON_HOLD:
                updated = replace(updated, expires_at=self._bookings.expiry(data.expiration_minutes, now))
                for booking in members:
                    if booking.status is BookingStatus.ON_HOLD and updated.expires_at is not None:
                        await self._bookings.hold_until_in(conn, catalog, booking, updated.expires_at)
            await orders_repo.save_order(conn, updated)
            await self._changed(conn, catalog, order, updated)
            return await self._details(conn, catalog, updated)

    async def extend(
        self, catalog: Catalog, connection_id: str, order_id: str, minutes: int | None
    ) -> OrderDetails:
        now = self._clock()
        async with self._db.transaction(write=True) as conn:
            order = await self._owned(conn, connection_id, order_id)
            if order.status is not OrderStatus.ON_HOLD or order.expires_at is None:
                raise UnprocessableEntity(
                    f"Only ON_HOLD orders can be extended; order {order_id!r} is {order.status.value}"
                )
            expires_at = self._bookings.extended_expiry(order.expires_at, minutes, now)
            for booking in await orders_repo.bookings_of(conn, order.id, lock=True):
                if as_of(booking, now).status is BookingStatus.ON_HOLD:
                    await self._bookings.hold_until_in(conn, catalog, booking, expires_at)
            extended = replace(order, expires_at=expires_at, updated_at=now)
            await orders_repo.save_order(conn, extended)
            await self._changed(conn, catalog, order, extended)
            return await self._details(conn, catalog, extended)

    async def confirm(
        self,
        catalog: Catalog,
        connection_id: str,
        order_id: str,
        contact: Contact | None,
        email_receipt: bool | None,
    ) -> OrderDetails:
        """Confirm every booking of the order, or none: the first that cannot be confirmed is
        named in the error and the transaction rolls back."""
        now = self._clock()
        async with self._db.transaction(write=True) as conn:
            order = await self._owned(conn, connection_id, order_id)
            if order.status in (OrderStatus.CONFIRMED, OrderStatus.PENDING):
                return await self._details(conn, catalog, order)
            if order.status is not OrderStatus.ON_HOLD:
                raise UnprocessableEntity(
                    f"Order {order_id!r} is {order.status.value} and cannot be confirmed"
                )
            lead = merge_contact(order.contact, contact) if contact else order.contact
            members = await orders_repo.bookings_of(conn, order.id, lock=True)
            if not any(b.status is not BookingStatus.CANCELLED for b in members):
                raise UnprocessableEntity(f"Order {order_id!r} has no bookings to confirm")
            confirmed: list[Booking] = []
            for stored in members:
                booking = as_of(stored, now)
                if booking.status is BookingStatus.CANCELLED:
                    continue
                try:
                    if booking.status is BookingStatus.EXPIRED:
                        raise UnprocessableEntity("its hold expired")
                    data = ConfirmInput(contact=merge_contact(lead, booking.contact))
                    confirmed.append(await self._bookings.confirm_in(conn, catalog, booking, data, now))
                except OctoError as exc:
                    raise UnprocessableEntity(
                        f"Booking {booking.uuid} ({booking.supplier_reference}) cannot be confirmed: {exc.message}. "
                        "Nothing in the order was confirmed",
                        uuid=booking.uuid,
                    ) from None
            status = confirmed_status(confirmed)
            done = replace(
                order,
                status=status,
                contact=lead,
                email_receipt=order.email_receipt if email_receipt is None else email_receipt,
                expires_at=None,
                confirmed_at=now,
                updated_at=now,
            )
            await orders_repo.save_order(conn, done)
            await self._changed(conn, catalog, order, done)
            return await self._details(conn, catalog, done)

    async def cancel(
        self,
        catalog: Catalog,
        connection_id: str | None,
        order_id: str,
        reason: str | None,
        *,
        force: bool = False,
    ) -> OrderDetails:
        """Cancel every live booking of the order, or none."""
        now = self._clock()
        async with self._db.transaction(write=True) as conn:
            if connection_id is None:
                found = await orders_repo.get_order(conn, order_id, lock=True)
                if found is None:
                    raise InvalidOrderId(order_id)
                order = order_as_of(found, now)
            else:
                order = await self._owned(conn, connection_id, order_id)
            if order.status is OrderStatus.CANCELLED:
                return await self._details(conn, catalog, order)
            if order.status not in LIVE:
                raise UnprocessableEntity(
                    f"Order {order_id!r} is {order.status.value} and cannot be cancelled"
                )
            actor = SUPPLIER if connection_id is None else RESELLER
            for stored in await orders_repo.bookings_of(conn, order.id, lock=True):
                booking = as_of(stored, now)
                if booking.status in (BookingStatus.CANCELLED, BookingStatus.EXPIRED, BookingStatus.REJECTED):
                    continue
                try:
                    await self._bookings.cancel_in(conn, catalog, booking, reason, force=force, actor=actor)
                except OctoError as exc:
                    raise UnprocessableEntity(
                        f"Booking {booking.uuid} ({booking.supplier_reference}) cannot be cancelled: {exc.message}. "
                        "Nothing in the order was cancelled",
                        uuid=booking.uuid,
                    ) from None
            cancelled = replace(
                order,
                status=OrderStatus.CANCELLED,
                cancellation=Cancellation(refund="FULL", reason=reason, at=now),
                expires_at=None,
                updated_at=now,
            )
            await orders_repo.save_order(conn, cancelled)
            await self._changed(conn, catalog, order, cancelled)
            return await self._details(conn, catalog, cancelled)

    async def expire_due(self, catalog: Catalog, batch: int = 200) -> int:
        """Store EXPIRED on orders whose hold ran out (their held bookings expire with them)."""
        now = self._clock()
        async with self._db.transaction(write=True) as conn:
            due = await orders_repo.due_orders(conn, now, batch)
            for stored in due:
                expired = order_as_of(stored, now)
                await orders_repo.save_order(conn, expired)
                await self._changed(conn, catalog, stored, expired)
        return len(due)
