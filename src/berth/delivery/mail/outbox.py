"""Queues guests' emails inside the transaction of the change they tell of: a receipt when a
booking or order is confirmed with `emailReceipt`, a notice when such a booking is later
cancelled or moved in time, and a receipt sent again when staff ask for one."""

from __future__ import annotations

import asyncio
import uuid
from collections.abc import Sequence

from berth.delivery.mail.compose import (
    NAME_LIMIT,
    Letter,
    booking_line,
    is_pending,
    mail_address,
    mail_language,
    one_line,
    render,
    supplier_of,
    why_cancelled,
)
from berth.domain.bookings import Booking, BookingStatus, Contact
from berth.domain.catalog import Catalog
from berth.domain.errors import NotFound, UnprocessableEntity
from berth.domain.orders import Order, OrderStatus
from berth.domain.staff import Actor
from berth.read_models.bookings import BookingDetails
from berth.services.bookings.loader import BookingLoader
from berth.services.bookings.supplier import booking_target
from berth.services.catalog import CatalogService
from berth.services.clock import Clock
from berth.services.events import Describe, DescribeOrder
from berth.store import audit_repo, bookings_repo, mail_repo
from berth.store.database import Database, DbConnection, after_commit
from berth.store.mail_repo import RECEIPT, Message, NewMessage

CONFIRMED = (BookingStatus.CONFIRMED, BookingStatus.PENDING)
ORDER_CONFIRMED = (OrderStatus.CONFIRMED, OrderStatus.PENDING)
RECEIPTED = (*CONFIRMED, BookingStatus.REDEEMED)  # what staff may send a receipt for


def new_message_id() -> str:
    return "mail_" + uuid.uuid4().hex


class GuestMail:
    def __init__(
        self, database: Database, clock: Clock, catalogs: CatalogService, loader: BookingLoader
    ) -> None:
        self._db = database
        self._clock = clock
        self._catalogs = catalogs
        self._loader = loader
        self.wakeup = asyncio.Event()

    # --- called inside the changing transaction ---------------------------------------------

    async def booking_step(
        self, conn: DbConnection, describe: Describe, before: Booking | None, after: Booking,
        kind: str, actor: str, detail: dict[str, object],
    ) -> None:  # fmt: skip
        if kind == "confirmed" and detail.get("emailReceipt") and after.status in CONFIRMED:
            await self._queue(conn, RECEIPT, [await describe(after)], after.contact, actor, after)
            return
        if before is None or before.status not in CONFIRMED:
            return
        cancelled = kind == "cancelled" and after.status is BookingStatus.CANCELLED
        moved = after.status in CONFIRMED and after.slot_start != before.slot_start
        if not (cancelled or moved) or not await mail_repo.asked_for_mail(conn, after.id, after.order_id):
            return
        if cancelled:
            why = (actor, detail.get("cause"), detail.get("reason"))
            await self._queue(
                conn, "cancelled", [await describe(after)], after.contact, actor, after, cancelled=why
            )
        else:
            await self._queue(
                conn, "changed", [await describe(after)], after.contact, actor, after, previously=before
            )

    async def order_step(
        self, conn: DbConnection, describe: DescribeOrder, before: Order, after: Order
    ) -> None:
        """An order confirmed with `emailReceipt`: one receipt for all its bookings."""
        if after.email_receipt and after.status in ORDER_CONFIRMED and before.status not in ORDER_CONFIRMED:
            details = await describe(after)
            await self._queue(conn, RECEIPT, list(details.bookings), after.contact, "reseller", order=after)

    # --- asked for by staff or the box office ---------------------------------------------------

    async def send_receipt(self, booking_id: str, actor: Actor) -> Message:
        """Queue the booking's receipt again (or for the first time), as it stands now; the
        audit trail records who asked."""
        catalog = (await self._catalogs.snapshot()).catalog
        async with self._db.transaction(write=True) as conn:
            booking = await bookings_repo.get_by_id(conn, booking_id)
            if booking is None:
                raise NotFound(f"Booking {booking_id!r} not found")
            booking = await bookings_repo.lock_booking(conn, booking)
            if booking.status not in RECEIPTED:
                raise UnprocessableEntity(
                    f"Booking {booking.supplier_reference} is {booking.status.value}: "
                    "only a confirmed, pending or redeemed booking has a receipt"
                )
            details = await self._loader.exactly(conn, catalog, booking)
            message_id = await self._queue(conn, RECEIPT, [details], booking.contact, actor.name, booking)
            message = await mail_repo.get_message(conn, message_id)
            assert message is not None
            await audit_repo.record(
                conn, actor, "booking.receipt", booking_target(booking),
                {"message": message.id, "to": message.recipient, "status": message.status}, at=self._clock(),
            )  # fmt: skip
        return message

    async def messages_of(self, booking: Booking) -> list[Message]:
        async with self._db.transaction(write=False) as conn:
            return await mail_repo.messages_of(conn, booking.id, booking.order_id)

    async def message(self, message_id: str) -> Message:
        async with self._db.transaction(write=False) as conn:
            found = await mail_repo.get_message(conn, message_id)
        if found is None:
            raise NotFound(f"Message {message_id!r} not found")
        return found

    async def outbox(self, status: str | None, limit: int, offset: int) -> tuple[list[Message], int]:
        async with self._db.transaction(write=False) as conn:
            return await mail_repo.list_messages(conn, status=status, limit=limit, offset=offset)

    # --- the message ------------------------------------------------------------------------

    async def _queue(
        self, conn: DbConnection, kind: str, bookings: Sequence[BookingDetails], contact: Contact, actor: str,
        booking: Booking | None = None, *, order: Order | None = None, previously: Booking | None = None,
        cancelled: tuple[str, object, object] | None = None,
    ) -> str:  # fmt: skip
        catalog: Catalog = (await self._catalogs.snapshot_in(conn)).catalog
        first = bookings[0]
        language = mail_language(contact, catalog, first.product.locale)
        supplier = supplier_of(catalog)
        why: list[str] = []
        if cancelled is not None:
            who, cause, reason = cancelled
            why = why_cancelled(
                language, who, cause if isinstance(cause, str) else None,
                reason if isinstance(reason, str) else None, supplier["name"] or "",
            )  # fmt: skip
        letter = Letter(
            kind=kind,
            language=language,
            name=contact.full_name,
            lines=[booking_line(d, language, previously) for d in bookings],
            supplier=supplier,
            why=why,
            pending=is_pending([d.booking for d in bookings]),
            order_reference=order.supplier_reference if order is not None else None,
        )
        subject, text, html = render(letter)
        recipient, problem = mail_address(contact.get("emailAddress"))
        message_id = new_message_id()
        await mail_repo.add_message(
            conn,
            NewMessage(
                id=message_id,
                kind=kind,
                booking_id=booking.id if booking is not None else None,
                order_id=order.id
                if order is not None
                else (booking.order_id if booking is not None else None),
                recipient=recipient,
                recipient_name=one_line(contact.full_name, NAME_LIMIT) or None,
                language=language,
                subject=subject,
                text_body=text,
                html_body=html,
                attachments=[],
                requested_by=actor,
                error=problem,
            ),
            self._clock(),
        )
        if problem is None:
            after_commit(conn, self.wakeup.set)
        return message_id
