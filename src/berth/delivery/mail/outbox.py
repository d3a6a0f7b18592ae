"""Guests' emails. Inside the transaction of a change, only what happened is queued (one small
row): a receipt when a booking or order is confirmed with `emailReceipt`, a notice when such a
booking is later cancelled (who did, and why) or moved in time. The mail worker writes each
email out later, from the booking as it then stands, in the guest's language: the booking's
transaction pays for one INSERT, nothing more."""

from __future__ import annotations

import asyncio
import uuid
from dataclasses import dataclass, field
from datetime import datetime
from typing import Any, Protocol

from berth.delivery.mail.compose import (
    CANCELLING,
    NAME_LIMIT,
    PARTLY_CANCELLED,
    REFUNDED,
    Letter,
    booking_line,
    is_pending,
    mail_address,
    mail_language,
    one_line,
    refunded_amount,
    render,
    supplier_of,
    why_cancelled,
    why_refunded,
)
from berth.delivery.mail.gift_letter import GiftLetters
from berth.domain.bookings import Booking, BookingStatus, Contact
from berth.domain.catalog import Catalog
from berth.domain.checkin import TICKETS_CANCELLED
from berth.domain.errors import BadRequest, NotFound, UnprocessableEntity
from berth.domain.gifts import Gift
from berth.domain.orders import Order, OrderStatus
from berth.domain.staff import Actor
from berth.domain.tickets import ISSUED, VOUCHER
from berth.read_models.bookings import BookingDetails
from berth.services.bookings.loader import BookingLoader
from berth.services.bookings.supplier import booking_target
from berth.services.catalog import CatalogService
from berth.services.clock import Clock
from berth.services.events import Describe, DescribeOrder
from berth.services.tickets import IssuedTicket
from berth.store import audit_repo, bookings_reads, bookings_repo, connections_repo, mail_repo, orders_repo
from berth.store.connection import DbConnection, after_commit
from berth.store.database import Database
from berth.store.mail_repo import GIFT_VOUCHER, RECEIPT, Message, NewMessage, Written

CONFIRMED = (BookingStatus.CONFIRMED, BookingStatus.PENDING)
ORDER_CONFIRMED = (OrderStatus.CONFIRMED, OrderStatus.PENDING)
RECEIPTED = (*CONFIRMED, BookingStatus.REDEEMED)  # what staff may send a receipt for


def new_message_id() -> str:
    return "mail_" + uuid.uuid4().hex


@dataclass
class Batch:
    """Messages written out at once (`written`: by message id, or why one cannot be), and the
    issued bookings read for them, by id: their tickets' PDFs need not read them again."""

    written: dict[str, Written | str] = field(default_factory=dict)
    issued: dict[str, IssuedTicket] = field(default_factory=dict)


class Unwritable(Exception):
    """What a message is about is gone (a booking or order no longer stored)."""


async def _box_offices(conn: DbConnection, described: list[BookingDetails]) -> frozenset[str]:
    """Which of the bookings' connections are the supplier's own box office (their contract's
    `boxOffice`)."""
    found = await connections_repo.connections_by_id(conn, (d.booking.connection_id for d in described))
    return frozenset(connection_id for connection_id, c in found.items() if c.contract.box_office)


class ManageLinks(Protocol):
    """Where guests manage the bookings a channel of the supplier's own sold (the web shop)."""

    async def links_in(self, conn: DbConnection, booking_ids: list[str]) -> dict[str, str]: ...


class GuestMail:
    # The web shop's "manage my booking" links, set by the composition root.
    links: ManageLinks | None = None
    # Gift vouchers' emails and PDFs (octo/gifts), set by the composition root.
    gifts: GiftLetters | None = None

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
        kind: str, actor: str, detail: dict[str, Any],
    ) -> None:  # fmt: skip
        if kind == "confirmed" and detail.get("emailReceipt") and after.status in CONFIRMED:
            await self._queue(conn, RECEIPT, after.id, None, actor, {})
            return
        if before is None or before.status not in CONFIRMED:
            return
        cancelled = kind == "cancelled" and after.status is BookingStatus.CANCELLED
        moved = after.status in CONFIRMED and after.slot_start != before.slot_start
        some = kind == TICKETS_CANCELLED  # tickets not through the gate, the booking used
        if not (cancelled or moved or some) or not await mail_repo.asked_for_mail(
            conn, after.id, after.order_id
        ):
            return
        if cancelled or some:
            facts = {"actor": actor, "cause": detail.get("cause"), "reason": detail.get("reason")}
            if some:
                facts["tickets"] = detail.get("tickets")
            await self._queue(conn, PARTLY_CANCELLED if some else kind, after.id, None, actor, facts)
        elif before.slot_start is not None:
            await self._queue(
                conn, "changed", after.id, None, actor, {"previously": before.slot_start.isoformat()}
            )

    async def order_step(
        self, conn: DbConnection, describe: DescribeOrder, before: Order, after: Order
    ) -> None:
        """An order confirmed with `emailReceipt`: one receipt for all its bookings."""
        if after.email_receipt and after.status in ORDER_CONFIRMED and before.status not in ORDER_CONFIRMED:
            await self._queue(conn, RECEIPT, None, after.id, "reseller", {})

    async def gift_issued(self, conn: DbConnection, gift: Gift, actor: str) -> None:
        """A gift voucher issued with `emailReceipt`: its email, with the voucher attached."""
        await self._queue(conn, GIFT_VOUCHER, None, None, actor, {}, gift_id=gift.id)

    async def _queue(
        self, conn: DbConnection, kind: str, booking_id: str | None, order_id: str | None, actor: str,
        facts: dict[str, Any], gift_id: str | None = None,
    ) -> str:  # fmt: skip
        message_id = new_message_id()
        new = NewMessage(message_id, kind, booking_id, order_id, actor, facts, gift_id)
        await mail_repo.add_message(conn, new, self._clock())
        after_commit(conn, self.wakeup.set)
        return message_id

    # --- asked for by staff or the box office ---------------------------------------------------

    async def send_receipt(self, booking_id: str, actor: Actor, to: str | None = None) -> Message:
        """Queue the booking's receipt again (or for the first time), written out at once so
        that staff see to whom it goes; the audit trail records who asked. `to`: another
        address than the guest's (the guest asked for it elsewhere)."""
        facts: dict[str, Any] = {}
        if to is not None and to.strip():
            address, _ = mail_address(to)
            if address is None:
                raise BadRequest(f"to: {one_line(to, 80)!r} is not an email address")
            facts["to"] = address
        async with self._db.transaction(write=True) as conn:
            booking = await bookings_reads.get_by_id(conn, booking_id)
            if booking is None:
                raise NotFound(f"Booking {booking_id!r} not found")
            booking = await bookings_repo.lock_booking(conn, booking)
            if booking.status not in RECEIPTED:
                raise UnprocessableEntity(
                    f"Booking {booking.supplier_reference} is {booking.status.value}: "
                    "only a confirmed, pending or redeemed booking has a receipt"
                )
            message_id = await self._queue(conn, RECEIPT, booking.id, None, actor.name, facts)
            queued = await mail_repo.get_message(conn, message_id)
            assert queued is not None
            written = await self.write(conn, queued)
            await mail_repo.record_written(conn, message_id, written)
            await audit_repo.record(
                conn, actor, "booking.receipt", booking_target(booking),
                {"message": message_id, "to": written.recipient}, at=self._clock(),
            )  # fmt: skip
            message = await mail_repo.get_message(conn, message_id)
        assert message is not None
        return message

    # --- written out by the worker ------------------------------------------------------------

    async def write_all(self, messages: list[Message]) -> Batch:
        """Each message not yet written out, written (or why it cannot be), in one read."""
        todo = [m for m in messages if m.written is None]
        batch = Batch()
        if not todo:
            return batch
        done = batch.written
        async with self._db.transaction(write=False) as conn:
            catalog = (await self._catalogs.snapshot_in(conn)).catalog
            about: dict[str, Booking] = {}  # the bookings of one-booking messages, described at once
            for message in todo:
                booking = (
                    await bookings_reads.get_by_id(conn, message.booking_id) if message.booking_id else None
                )
                if booking is not None:
                    about[message.id] = booking
            described = await self._loader.describe(conn, catalog, list(about.values()), exact=True)
            details = dict(zip(about, described, strict=True))
            box_offices = await _box_offices(conn, described)
            links = await self._links(conn, described)
            batch.issued.update(
                (found.booking.id, IssuedTicket(found, VOUCHER, catalog.supplier))
                for found in described
                if found.booking.status in ISSUED
            )
            for message in todo:
                try:
                    if message.id in details:
                        found = details[message.id]
                        done[message.id] = self._letter(
                            message, [found], found.booking.contact, None, catalog, box_offices, links
                        )
                    else:
                        done[message.id] = await self.write(conn, message)
                except Unwritable as exc:
                    done[message.id] = str(exc)
        return batch

    async def write(self, conn: DbConnection, message: Message) -> Written:
        if message.gift_id is not None:
            written = await self.gifts.write_in(conn, message) if self.gifts is not None else None
            if written is None:
                raise Unwritable(
                    f"gift {message.gift_id} is not to be spent (cancelled or expired since), or is gone"
                )
            return written
        catalog = (await self._catalogs.snapshot_in(conn)).catalog
        order: Order | None = None
        if message.booking_id is not None:
            booking = await bookings_reads.get_by_id(conn, message.booking_id)
            if booking is None:
                raise Unwritable(f"booking {message.booking_id} is no longer stored")
            described = await self._loader.describe(conn, catalog, [booking], exact=True)
            contact = booking.contact
        else:
            assert message.order_id is not None
            order = await orders_repo.get_order(conn, message.order_id)
            if order is None:
                raise Unwritable(f"order {message.order_id} is no longer stored")
            members = await orders_repo.bookings_of(conn, order.id)
            described = await self._loader.describe(conn, catalog, members, exact=True)
            contact = order.contact
        box_offices = await _box_offices(conn, described)
        links = await self._links(conn, described)
        return self._letter(message, described, contact, order, catalog, box_offices, links)

    async def _links(self, conn: DbConnection, described: list[BookingDetails]) -> dict[str, str]:
        if self.links is None:
            return {}
        return await self.links.links_in(conn, [d.booking.id for d in described])

    def _letter(
        self,
        message: Message,
        described: list[BookingDetails],
        contact: Contact,
        order: Order | None,
        catalog: Catalog,
        box_offices: frozenset[str],
        links: dict[str, str],
    ) -> Written:
        language = mail_language(contact, catalog, described[0].product.locale)
        supplier = supplier_of(catalog)
        facts = message.facts
        own = [d.booking.connection_id in box_offices for d in described]
        why: list[str] = []
        first = described[0].booking
        if message.kind == REFUNDED:
            amount = refunded_amount(facts, first, language) or ""
            why = why_refunded(language, facts.get("cause"), facts.get("reason"), amount)
        elif message.kind in CANCELLING:
            why = why_cancelled(
                language,
                str(facts.get("actor")),
                facts.get("cause"),
                facts.get("reason"),
                supplier["name"] or "",
                box_office=all(own),
                by_guest=all(d.booking.id in links for d in described),
            )
        previously = datetime.fromisoformat(facts["previously"]) if facts.get("previously") else None
        letter = Letter(
            kind=message.kind,
            language=language,
            name=contact.full_name,
            lines=[
                booking_line(d, language, previously, box_office=mine, manage=links.get(d.booking.id))
                for d, mine in zip(described, own, strict=True)
            ],
            supplier=supplier,
            why=why,
            pending=is_pending([d.booking for d in described]),
            order_reference=order.supplier_reference if order is not None else None,
            cancelled_tickets=[one_line(str(t)) for t in facts.get("tickets") or ()],
        )
        subject, text, html = render(letter)
        recipient, problem = mail_address(facts.get("to") or contact.get("emailAddress"))
        # Sent on to another address than the guest's: not addressed by the guest's name.
        name = None if facts.get("to") else one_line(contact.full_name, NAME_LIMIT) or None
        attachments = [
            {"bookingId": details.booking.id, "filename": f"{details.booking.supplier_reference}.pdf"}
            for details, line in zip(described, letter.lines, strict=True)
            if line.tickets and letter.with_tickets
        ]
        return Written(recipient, name, language, subject, text, html, problem, attachments)

    # --- read by the back office and the admin API ----------------------------------------------

    async def messages_of(self, booking: Booking) -> list[Message]:
        async with self._db.transaction(write=False) as conn:
            return await mail_repo.messages_of(conn, booking.id, booking.order_id)

    async def messages_of_gift(self, gift_id: str) -> list[Message]:
        async with self._db.transaction(write=False) as conn:
            return await mail_repo.messages_of_gift(conn, gift_id)

    async def message(self, message_id: str) -> Message:
        async with self._db.transaction(write=False) as conn:
            found = await mail_repo.get_message(conn, message_id)
        if found is None:
            raise NotFound(f"Message {message_id!r} not found")
        return found

    async def outbox(self, status: str | None, limit: int, offset: int) -> tuple[list[Message], int]:
        async with self._db.transaction(write=False) as conn:
            return await mail_repo.list_messages(conn, status=status, limit=limit, offset=offset)
