"""Orders (octo/cart): one hold, one confirmation and one cancellation for several bookings.

Every order operation runs in one transaction and acts on all of the order's bookings through
the booking service's in-transaction steps, so either every booking changes or none does. When
a booking changes on its own (its own routes, the supplier's steps), its order follows it in the
same transaction (`follow_in`). Writers lock an order before any of its bookings.
"""

from __future__ import annotations

import hashlib
import uuid as uuidlib
from collections.abc import Iterator, Mapping, Sequence
from contextlib import contextmanager
from dataclasses import dataclass, replace
from datetime import datetime
from typing import Any

import orjson
from sqlalchemy.exc import IntegrityError

from berth.capabilities.ids import CART, GIFTS
from berth.domain.bookings import (
    ENDED,
    Booking,
    BookingStatus,
    Cancellation,
    Contact,
    as_of,
    merge_contact,
    new_reference,
)
from berth.domain.catalog import Catalog
from berth.domain.errors import (
    BadRequest,
    InvalidBookingUuid,
    InvalidOrderId,
    OctoError,
    UnprocessableEntity,
)
from berth.domain.orders import LIVE, Order, OrderStatus, follow_bookings
from berth.read_models.bookings import BookingDetails
from berth.read_models.orders import OrderDetails
from berth.services.bookings.inputs import RESELLER, SUPPLIER, Change, ConfirmInput, ReserveInput
from berth.services.bookings.preparing import PreparedBooking
from berth.services.bookings.reseller import ResellerBookings
from berth.services.bookings.steps import BookingSteps
from berth.services.clock import Clock
from berth.services.events import ChangeObserver
from berth.store import bookings_repo, orders_repo
from berth.store.connection import DbConnection
from berth.store.database import Database


@dataclass(frozen=True)
class OrderInput:
    currency: str | None = None
    expiration_minutes: int | None = None
    email_receipt: bool | None = None
    contact: Contact | None = None
    bookings: tuple[ReserveInput, ...] = ()


def keyed_by_order(data: OrderInput, prepared: Sequence[PreparedBooking]) -> list[PreparedBooking]:
    """POST /orders: the bookings, each with a fingerprint of the whole request (OCTO.md §5.3
    for an order): every booking's own fingerprint in sequence, and the order's currency,
    contact and emailReceipt as sent (expirationMinutes is left out, as for a booking). A repeat
    then matches only the same order request, whichever of its uuids is looked at."""
    document: dict[str, Any] = {
        "currency": data.currency,
        "emailReceipt": data.email_receipt,
        "contact": data.contact.to_document() if data.contact else None,
        "bookings": [p.booking.request_fingerprint for p in prepared],
    }
    keyed = []
    for position, item in enumerate(prepared):
        key = {"order": document, "position": position}
        digest = hashlib.sha256(orjson.dumps(key, option=orjson.OPT_SORT_KEYS)).hexdigest()
        keyed.append(replace(item, booking=replace(item.booking, request_fingerprint=digest)))
    return keyed


def _named(exc: OctoError, index: int | None) -> OctoError:
    """An error about one booking of an order request names it (`index`: its place in
    `bookings[]`; None when the request was a single booking)."""
    if index is not None:
        exc.message = f"bookings[{index}]: {exc.message}"
    return exc


@contextmanager
def _named_after(index: int | None) -> Iterator[None]:
    """An error of one booking's step names the booking (`_named`); a uuid in use for another
    request is told by the caller (`_UuidTaken`)."""
    try:
        yield
    except InvalidBookingUuid:
        raise _UuidTaken from None
    except OctoError as exc:
        raise _named(exc, index) from None


class _UuidTaken(Exception):
    """A booking uuid of the request was in use: the request is answered as a repeat or refused."""


class OrderService:
    def __init__(
        self,
        database: Database,
        clock: Clock,
        steps: BookingSteps,
        bookings: ResellerBookings,
        observer: ChangeObserver,
    ) -> None:
        self._db = database
        self._clock = clock
        self._steps = steps
        self._bookings = bookings
        self._observer = observer

    # --- the grouping of octo/cart ------------------------------------------------------------

    def claims(self, catalog: Catalog, data: ReserveInput, capabilities: frozenset[str]) -> bool:
        """A booking joins the order it names; with the cart, one naming none starts one."""
        return data.order_id is not None or CART in capabilities

    # --- helpers ----------------------------------------------------------------------------

    async def _details(
        self, conn: DbConnection, catalog: Catalog, order: Order, *, exact: bool = False
    ) -> OrderDetails:
        """The order with its bookings; as they stand now unless `exact`."""
        members = await orders_repo.bookings_of(conn, order.id)
        described = await self._steps.loader.describe(conn, catalog, members, exact=exact)
        shown = order if exact else follow_bookings(order, members, self._clock())
        return OrderDetails(shown, tuple(described))

    async def _owned(
        self, conn: DbConnection, connection_id: str | None, order_id: str
    ) -> tuple[Order, list[Booking]]:
        """The order (of any connection when `connection_id` is None) and its bookings, all
        locked for this transaction; the order as its bookings make it now."""
        order = await orders_repo.get_order(conn, order_id, connection_id, lock=True)
        if order is None:
            raise InvalidOrderId(order_id)
        members = await orders_repo.bookings_of(conn, order.id, lock=True)
        return follow_bookings(order, members, self._clock()), members

    async def _changed(self, conn: DbConnection, catalog: Catalog, before: Order, after: Order) -> None:
        await self._observer.order_changed(
            conn, lambda o: self._details(conn, catalog, o, exact=True), before, after
        )
        if self._steps.notices is not None:
            await self._steps.notices.order_step(
                conn, lambda o: self._details(conn, catalog, o, exact=True), before, after
            )

    def _prepare_one(
        self, catalog: Catalog, connection_id: str, request: ReserveInput, index: int | None, **options: Any
    ) -> PreparedBooking:
        try:
            return self._steps.prepare(catalog, connection_id, request, **options)
        except OctoError as exc:
            raise _named(exc, index) from None

    def _prepare_all(
        self,
        catalog: Catalog,
        connection_id: str,
        order: Order,
        requests: Sequence[ReserveInput],
        first_primary: bool,
        first_position: int = 0,
        *,
        indexed: bool = True,
    ) -> list[PreparedBooking]:
        prepared = []
        for index, request in enumerate(requests):
            at = index if indexed else None
            item = self._prepare_one(
                catalog, connection_id, replace(request, currency=request.currency or order.currency), at,
                test_mode=order.test_mode, expires_at=order.expires_at, order_id=order.id,
                primary=first_primary and index == 0, order_position=first_position + index,
            )  # fmt: skip
            if order.currency and item.booking.currency and item.booking.currency != order.currency:
                raise _named(
                    BadRequest(
                        f"An order has one currency: this booking is in {item.booking.currency}, "
                        f"the order in {order.currency}"
                    ),
                    at,
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
            expires_at=self._steps.expiry(data.expiration_minutes, now),
        )

    def _prepare_order(
        self, catalog: Catalog, connection_id: str, data: OrderInput, test_mode: bool, *, indexed: bool = True
    ) -> tuple[Order, list[PreparedBooking]]:
        """A new ON_HOLD order and its checked bookings, nothing stored yet (`indexed`: errors
        name the booking by its place in `bookings[]`)."""
        seen: dict[str, int] = {}
        for index, request in enumerate(data.bookings):
            if request.uuid is not None and request.uuid in seen:
                raise BadRequest(
                    f"bookings[{index}].uuid {request.uuid!r} repeats the uuid of bookings[{seen[request.uuid]}]"
                )
            seen.setdefault(request.uuid or "", index)
        currency = data.currency
        if currency is None and data.bookings:
            currency = self._prepare_one(
                catalog, connection_id, data.bookings[0], 0 if indexed else None, test_mode=test_mode
            ).booking.currency
        order = self._new_order(connection_id, data, test_mode, currency)
        prepared = self._prepare_all(
            catalog, connection_id, order, data.bookings, first_primary=True, indexed=indexed
        )
        return order, prepared

    async def _hold(
        self, catalog: Catalog, order: Order, prepared: Sequence[PreparedBooking], *, indexed: bool = True
    ) -> OrderDetails:
        """Store the order and hold every one of its bookings, or nothing. Raises _UuidTaken
        (nothing stored) when a booking uuid is in use."""
        for item in prepared:
            await self._steps.read_ahead(item)
        try:
            async with self._db.transaction(write=True) as conn:
                await orders_repo.insert_order(conn, order)
                # Every slot of the order in one sorted pass: two orders holding the same slots
                # in another sequence then wait for each other instead of deadlocking. Taken
                # once every row is written (the slots' locks are held for the holds and the
                # commit), unless a booking's policy takes its places before its row.
                keys = [p.lock_key for p in prepared if p.lock_key is not None]
                locked_first = any(p.policy.takes_places_first(p.option) for p in prepared)
                if locked_first:
                    await self._steps.locks.lock(conn, keys)
                placed: list[Booking] = []
                for index, item in enumerate(prepared):
                    with _named_after(index if indexed else None):
                        booking, new = await self._steps.insert_in(conn, catalog, item)
                    if not new:
                        raise _UuidTaken
                    placed.append(booking)
                if not locked_first:
                    await self._steps.locks.lock(conn, keys)
                for index, (item, booking) in enumerate(zip(prepared, placed, strict=True)):
                    with _named_after(index if indexed else None):
                        await self._steps.hold_in(conn, item, booking)
        except IntegrityError:  # a concurrent request stored the uuid first
            raise _UuidTaken from None
        # Read after commit: the slots' locks are held for the writes only.
        async with self._db.single_read() as conn:
            return await self._details(conn, catalog, order)

    async def _repeated(
        self, catalog: Catalog, connection_id: str, prepared: Sequence[PreparedBooking]
    ) -> OrderDetails:
        """The answer to an order request whose booking uuids were in use: the order they
        belong to when this is the same request, else INVALID_BOOKING_UUID."""
        async with self._db.transaction(write=False) as conn:
            found = [await bookings_repo.get_by_uuid(conn, connection_id, p.booking.uuid) for p in prepared]
            for index, (item, existing) in enumerate(zip(prepared, found, strict=True)):
                if existing is None:
                    continue
                if existing.request_fingerprint != item.booking.request_fingerprint or None in found:
                    raise InvalidBookingUuid(
                        existing.uuid,
                        f"bookings[{index}]: the uuid {existing.uuid!r} was already used for a different reservation",
                    )
            order = await orders_repo.get_order(conn, found[0].order_id or "") if found[0] else None
            if order is None:
                raise BadRequest("The order conflicted with another request; try again")
            return await self._details(conn, catalog, order)

    # --- operations -------------------------------------------------------------------------

    async def create(
        self, catalog: Catalog, connection_id: str, data: OrderInput, *, test_mode: bool = False
    ) -> OrderDetails:
        """A new ON_HOLD order, holding every booking in `data.bookings` or none at all; the
        same request repeated answers the order it made."""
        await self._steps.refresh()
        order, prepared = self._prepare_order(catalog, connection_id, data, test_mode)
        keyed = keyed_by_order(data, prepared)
        try:
            return await self._hold(catalog, order, keyed)
        except _UuidTaken:
            return await self._repeated(catalog, connection_id, keyed)

    async def reserve(
        self, catalog: Catalog, connection_id: str, data: ReserveInput, *, test_mode: bool = False
    ) -> BookingDetails:
        """POST /bookings with the cart: join the order named by `orderId`, or start a new one.
        The booking's uuid is its key, as without the cart: a repeat answers the booking."""
        await self._steps.refresh()
        if data.order_id is None:
            alone = OrderInput(currency=data.currency, expiration_minutes=data.expiration_minutes,
                               contact=data.contact, bookings=(data,))  # fmt: skip
            order, (prepared,) = self._prepare_order(catalog, connection_id, alone, test_mode, indexed=False)
            try:
                created = await self._hold(catalog, order, [prepared], indexed=False)
            except _UuidTaken:
                return await self._bookings.repeated(catalog, prepared)
            return created.bookings[0]
        item: PreparedBooking | None = None
        try:
            async with self._db.transaction(write=True) as conn:
                order, _ = await self._owned(conn, connection_id, data.order_id)
                if order.status is not OrderStatus.ON_HOLD:
                    raise UnprocessableEntity(
                        f"Order {order.id!r} is {order.status.value}; bookings join ON_HOLD orders only"
                    )
                position = await orders_repo.next_position(conn, order.id)
                (item,) = self._prepare_all(
                    catalog, connection_id, order, [data], first_primary=False, first_position=position,
                    indexed=False,
                )  # fmt: skip
                await self._steps.read_ahead(item)
                booking, new = await self._steps.place_in(conn, catalog, item)
                if new:
                    joined = replace(
                        order, currency=order.currency or booking.currency, updated_at=self._clock()
                    )
                    await orders_repo.save_order(conn, joined)
                    await self._changed(conn, catalog, order, joined)
                return await self._steps.loader.one(conn, catalog, booking)
        except IntegrityError:  # the uuid was stored by a concurrent request
            assert item is not None
            return await self._bookings.repeated(catalog, item)

    async def get(self, catalog: Catalog, connection_id: str, order_id: str) -> OrderDetails:
        async with self._db.transaction(write=False) as conn:
            order = await orders_repo.get_order(conn, order_id, connection_id)
            if order is None:
                raise InvalidOrderId(order_id)
            return await self._details(conn, catalog, order)

    async def update(
        self, catalog: Catalog, connection_id: str, order_id: str, data: OrderInput, sent: frozenset[str]
    ) -> OrderDetails:
        await self._steps.refresh()
        now = self._clock()
        async with self._db.transaction(write=True) as conn:
            order, stored = await self._owned(conn, connection_id, order_id)
            if order.status not in LIVE:
                raise UnprocessableEntity(f"Order {order_id!r} is {order.status.value} and cannot be updated")
            members = [as_of(b, now) for b in stored]
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
                updated = replace(updated, expires_at=self._steps.expiry(data.expiration_minutes, now))
                for booking in members:
                    if booking.status is BookingStatus.ON_HOLD and updated.expires_at is not None:
                        await self._steps.hold_until_in(conn, catalog, booking, updated.expires_at)
            await orders_repo.save_order(conn, updated)
            await self._changed(conn, catalog, order, updated)
            return await self._details(conn, catalog, updated)

    async def extend(
        self, catalog: Catalog, connection_id: str, order_id: str, minutes: int | None
    ) -> OrderDetails:
        now = self._clock()
        async with self._db.transaction(write=True) as conn:
            order, members = await self._owned(conn, connection_id, order_id)
            if order.status is not OrderStatus.ON_HOLD or order.expires_at is None:
                raise UnprocessableEntity(
                    f"Only ON_HOLD orders can be extended; order {order_id!r} is {order.status.value}"
                )
            expires_at = self._steps.extended_expiry(order.expires_at, minutes, now)
            for booking in members:
                if as_of(booking, now).status is BookingStatus.ON_HOLD:
                    await self._steps.hold_until_in(conn, catalog, booking, expires_at)
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
        *,
        gift_payment: Mapping[str, Any] | None = None,
    ) -> OrderDetails:
        """Confirm every held booking of the order, or none: the first that cannot be confirmed
        is named in the error and the transaction rolls back. A `gift_payment` (octo/gifts'
        `giftPayment`) pays its amount over the bookings in the order's order, each at most its
        price (`gift_shares`)."""
        await self._steps.refresh()
        now = self._clock()
        async with self._db.transaction(write=True) as conn:
            order, stored = await self._owned(conn, connection_id, order_id)
            if order.status in (OrderStatus.CONFIRMED, OrderStatus.PENDING):
                return await self._details(conn, catalog, order)
            if order.status is not OrderStatus.ON_HOLD:
                raise UnprocessableEntity(
                    f"Order {order_id!r} is {order.status.value} and cannot be confirmed"
                )
            members = [as_of(b, now) for b in stored]
            if not any(b.status is BookingStatus.ON_HOLD for b in members):
                raise UnprocessableEntity(f"Order {order_id!r} has no bookings to confirm")
            lead = merge_contact(order.contact, contact) if contact else order.contact
            shares = gift_shares(members, gift_payment) if gift_payment is not None else {}
            after: list[Booking] = []
            for booking in members:
                if booking.status is BookingStatus.ON_HOLD:
                    try:
                        share = shares.get(booking.id)
                        extensions = {GIFTS: {"giftPayment": share}} if share is not None else {}
                        data = ConfirmInput(
                            contact=merge_contact(lead, booking.contact), extensions=extensions
                        )
                        booking = await self._steps.confirm_in(conn, catalog, booking, data, now)
                    except OctoError as exc:
                        raise UnprocessableEntity(
                            f"Booking {booking.uuid} ({booking.supplier_reference}) cannot be confirmed: "
                            f"{exc.message}. Nothing in the order was confirmed",
                            uuid=booking.uuid,
                        ) from None
                after.append(booking)
            done = replace(
                follow_bookings(order, after, now),
                contact=lead,
                email_receipt=order.email_receipt if email_receipt is None else email_receipt,
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
            order, members = await self._owned(conn, connection_id, order_id)
            if order.status is OrderStatus.CANCELLED:
                return await self._details(conn, catalog, order)
            if order.status not in LIVE:
                raise UnprocessableEntity(
                    f"Order {order_id!r} is {order.status.value} and cannot be cancelled"
                )
            actor = SUPPLIER if connection_id is None else RESELLER
            for stored in members:
                booking = as_of(stored, now)
                if booking.status in ENDED:
                    continue
                try:
                    await self._steps.cancel_in(conn, catalog, booking, reason, force=force, actor=actor)
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

    async def follow_in(self, conn: DbConnection, catalog: Catalog, changes: Sequence[Change]) -> None:
        """After booking-level changes of orders' bookings (each order locked by the writer):
        a hold moved on one booking moves the order's other holds with it (they share one),
        each order takes the status its bookings give it, and an order_update tells of it."""
        now = self._clock()
        by_order: dict[str, dict[str, Booking]] = {}  # order id -> booking id -> version before
        for before, after in changes:
            by_order.setdefault(after.order_id or "", {})[after.id] = before
        for order_id, befores in sorted(by_order.items()):
            stored = await orders_repo.get_order(conn, order_id)
            if stored is None:
                continue
            members = await orders_repo.bookings_of(conn, order_id)
            hold = _moved_hold([(befores[m.id], m) for m in members if m.id in befores], now)
            for index, member in enumerate(members):
                if (
                    hold is None
                    or member.id in befores
                    or as_of(member, now).status is not BookingStatus.ON_HOLD
                ):
                    continue
                befores[member.id] = member
                members[index] = await self._steps.hold_until_in(conn, catalog, member, hold)
            old = [befores.get(m.id, m) for m in members]
            followed = replace(follow_bookings(stored, members, now), updated_at=now)
            await orders_repo.save_order(conn, followed)
            await self._followed(conn, catalog, (follow_bookings(stored, old, now), old), (followed, members))

    async def _followed(
        self,
        conn: DbConnection,
        catalog: Catalog,
        before: tuple[Order, Sequence[Booking]],
        after: tuple[Order, Sequence[Booking]],
    ) -> None:
        """Announce an order that followed its bookings, each version shown with its own."""

        async def describe(order: Order) -> OrderDetails:
            members = before[1] if order is before[0] else after[1]
            return OrderDetails(order, tuple(await self._steps.loader.describe(conn, catalog, members)))

        await self._observer.order_changed(conn, describe, before[0], after[0])

    async def expire_due(self, catalog: Catalog, batch: int = 200) -> int:
        """Store what the passing of time made of orders: the holds that ran out EXPIRED, and
        each order as its bookings now make it (EXPIRED, or CONFIRMED around a booking sold)."""
        now = self._clock()
        async with self._db.transaction(write=True) as conn:
            due = await orders_repo.due_orders(conn, now, batch)
            for stored in due:
                members = []
                for booking in await orders_repo.bookings_of(conn, stored.id, lock=True):
                    if booking.status is BookingStatus.ON_HOLD and as_of(booking, now) != booking:
                        booking = await self._steps.expire_in(conn, catalog, booking)
                    members.append(booking)
                followed = follow_bookings(stored, members, now)
                if followed != stored:
                    await orders_repo.save_order(conn, followed)
                    await self._changed(conn, catalog, stored, followed)
        return len(due)


def _moved_hold(changes: Sequence[Change], now: datetime) -> datetime | None:
    """The new end of a hold that one of the changes moved (an extend, a new expirationMinutes)."""
    for before, after in changes:
        held = (
            as_of(before, now).status is BookingStatus.ON_HOLD
            and as_of(after, now).status is BookingStatus.ON_HOLD
        )
        if held and after.expires_at != before.expires_at:
            return after.expires_at
    return None


def gift_shares(members: Sequence[Booking], payment: Mapping[str, Any]) -> dict[str, dict[str, Any]]:
    """An order's gift payment as each held booking's own: the amount over the bookings in the
    order's order, each at most its price; refused when it is more than they cost together."""
    left = int(payment["amount"])
    held = [b for b in members if b.status is BookingStatus.ON_HOLD]
    price = sum(line.price.retail for b in held for line in b.price_lines)
    if left > price:
        raise UnprocessableEntity(f"giftPayment.amount {left} is more than the order's price, {price}")
    shares: dict[str, dict[str, Any]] = {}
    for booking in held:
        share = min(left, sum(line.price.retail for line in booking.price_lines))
        if share > 0:
            shares[booking.id] = {**payment, "amount": share}
            left -= share
    return shares
