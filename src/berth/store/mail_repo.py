"""Guests' emails: written in the changing transaction, claimed and recorded by the mail worker."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from datetime import datetime
from typing import Any

from sqlalchemy import and_, bindparam, func, insert, or_, select, update
from sqlalchemy.orm import aliased

from berth.store.connection import DbConnection
from berth.store.tables import mail_messages

PENDING = "pending"
SENDING = "sending"
SENT = "sent"  # accepted by the SMTP server
MAILBOX = "mailbox"  # kept in the database's mailbox (no SMTP server configured)
FAILED = "failed"  # given up after the retry schedule
UNDELIVERABLE = "undeliverable"  # no valid address: never sent, `error` says why
STATUSES = (PENDING, SENDING, SENT, MAILBOX, FAILED, UNDELIVERABLE)
RECEIPT = "receipt"
GIFT_VOUCHER = "gift voucher"  # a gift voucher issued (octo/gifts), its PDF attached
KINDS = (RECEIPT, "cancelled", "changed", GIFT_VOUCHER)


@dataclass(frozen=True)
class NewMessage:
    """What the changing transaction writes: which email, about what, and the facts it tells
    (a cancellation's reason, a move's earlier start). The worker writes the email itself."""

    id: str
    kind: str
    booking_id: str | None
    order_id: str | None
    requested_by: str
    facts: dict[str, Any]
    gift_id: str | None = None  # a gift voucher's email (octo/gifts): no booking, no order


def subject_key(new: NewMessage) -> str:
    """What a message is about: a guest gets the messages of one subject in the order queued."""
    if new.gift_id is not None:
        return f"gift:{new.gift_id}"
    return f"booking:{new.booking_id}" if new.booking_id else f"order:{new.order_id}"


@dataclass(frozen=True)
class Written:
    """A message written out: to whom, in which language, what it says."""

    recipient: str | None
    recipient_name: str | None
    language: str
    subject: str
    text_body: str
    html_body: str
    error: str | None = None  # set: it cannot be sent (no valid address)
    # The PDFs it attaches, rendered when it is sent: [{"bookingId": ..., "filename": ...}], or a
    # gift voucher's [{"giftId": ..., "filename": ...}]
    attachments: list[dict[str, str]] = field(default_factory=list)


@dataclass(frozen=True)
class Message:
    id: str
    sequence: int
    kind: str
    booking_id: str | None
    order_id: str | None
    requested_by: str
    facts: dict[str, Any]
    status: str
    attempts: int
    error: str | None
    created_at: datetime
    next_attempt_at: datetime | None
    sent_at: datetime | None
    written: Written | None  # None until the worker has written it
    attachments: list[dict[str, str]]
    gift_id: str | None = None

    @property
    def recipient(self) -> str | None:
        return self.written.recipient if self.written else None

    @property
    def subject(self) -> str | None:
        return self.written.subject if self.written else None


def _message(row: Any) -> Message:
    written = None
    if row.subject is not None:
        written = Written(
            row.recipient,
            row.recipient_name,
            row.language,
            row.subject,
            row.text_body,
            row.html_body,
            attachments=list(row.attachments),
        )
    return Message(
        id=row.id, sequence=row.sequence, kind=row.kind, booking_id=row.booking_id, order_id=row.order_id,
        requested_by=row.requested_by, facts=dict(row.facts), status=row.status, attempts=row.attempts,
        error=row.error, created_at=row.created_at, next_attempt_at=row.next_attempt_at, sent_at=row.sent_at,
        written=written, attachments=list(row.attachments), gift_id=row.gift_id,
    )  # fmt: skip


async def add_message(conn: DbConnection, new: NewMessage, now: datetime) -> None:
    await conn.execute(
        insert(mail_messages).values(
            id=new.id,
            kind=new.kind,
            booking_id=new.booking_id,
            order_id=new.order_id,
            gift_id=new.gift_id,
            subject_key=subject_key(new),
            requested_by=new.requested_by[:254],
            facts=new.facts,
            attachments=[],
            status=PENDING,
            attempts=0,
            created_at=now,
            next_attempt_at=now,
        )
    )


async def record_written(conn: DbConnection, message_id: str, written: Written) -> None:
    """A message written out at once (a receipt staff asked for); one that cannot be sent is
    final."""
    values: dict[str, Any] = {
        "recipient": written.recipient, "recipient_name": written.recipient_name, "language": written.language,
        "subject": written.subject, "text_body": written.text_body, "html_body": written.html_body,
        "attachments": written.attachments,
    }  # fmt: skip
    if written.error is not None:
        values.update(status=UNDELIVERABLE, error=written.error[:500], next_attempt_at=None)
    await conn.execute(update(mail_messages).where(mail_messages.c.id == message_id).values(**values))


async def asked_for_mail(conn: DbConnection, booking_id: str, order_id: str | None) -> bool:
    """Whether the booking (or its order) was confirmed with `emailReceipt`: a receipt was
    written for it. Its later cancellation or move is told to the guest too."""
    whose = mail_messages.c.booking_id == booking_id
    if order_id is not None:
        whose = or_(whose, mail_messages.c.order_id == order_id)
    found = await conn.scalar(
        select(mail_messages.c.sequence).where(whose, mail_messages.c.kind == RECEIPT).limit(1)
    )
    return found is not None


async def claim_due(conn: DbConnection, now: datetime, lease_until: datetime, limit: int) -> list[Message]:
    """Due messages leased to this worker until `lease_until` (a dead worker's lease runs out
    and another sends them again, with the same Message-ID). A guest gets a booking's emails in
    the order they were queued: none is claimed while an earlier one about the same booking
    (or order) is still to be sent."""
    due = or_(
        and_(mail_messages.c.status == PENDING, mail_messages.c.next_attempt_at <= now),
        and_(mail_messages.c.status == SENDING, mail_messages.c.lease_until <= now),
    )
    earlier = aliased(mail_messages)
    blocked = (
        select(earlier.c.sequence)
        .where(
            earlier.c.subject_key == mail_messages.c.subject_key,
            earlier.c.sequence < mail_messages.c.sequence,
            earlier.c.status.in_((PENDING, SENDING)),
        )
        .exists()
    )
    query = select(mail_messages).where(due, ~blocked).order_by(mail_messages.c.sequence).limit(limit)
    if conn.dialect.name == "postgresql":
        query = query.with_for_update(skip_locked=True)
    claimed = [_message(row) for row in await conn.execute(query)]
    if claimed:
        await conn.execute(
            update(mail_messages)
            .where(mail_messages.c.id.in_([m.id for m in claimed]))
            .values(status=SENDING, lease_until=lease_until)
        )
    return claimed


async def renew_leases(conn: DbConnection, ids: list[str], lease_until: datetime) -> None:
    await conn.execute(
        update(mail_messages)
        .where(mail_messages.c.id.in_(ids), mail_messages.c.status == SENDING)
        .values(lease_until=lease_until)
    )


@dataclass(frozen=True)
class Outcome:
    """What one attempt left a message in."""

    id: str
    status: str
    attempts: int
    error: str | None
    next_attempt_at: datetime | None
    sent_at: datetime | None
    written: Written | None = None  # written out in this attempt (the first)


_WRITE = (
    update(mail_messages)
    .where(mail_messages.c.id == bindparam("b_id"))
    .values(
        recipient=bindparam("b_recipient"),
        recipient_name=bindparam("b_recipient_name"),
        language=bindparam("b_language"),
        subject=bindparam("b_subject"),
        text_body=bindparam("b_text"),
        html_body=bindparam("b_html"),
        attachments=bindparam("b_attachments"),
    )
)
_RECORD = (
    update(mail_messages)
    .where(mail_messages.c.id == bindparam("b_id"), mail_messages.c.status == SENDING)
    .values(
        status=bindparam("b_status"),
        attempts=bindparam("b_attempts"),
        error=bindparam("b_error"),
        next_attempt_at=bindparam("b_next"),
        sent_at=bindparam("b_sent"),
        lease_until=None,
    )
)


async def record(conn: DbConnection, outcomes: Sequence[Outcome]) -> None:
    written = [(o.id, o.written) for o in outcomes if o.written is not None]
    if written:
        await conn.execute(
            _WRITE,
            [
                {
                    "b_id": message_id,
                    "b_recipient": w.recipient,
                    "b_recipient_name": w.recipient_name,
                    "b_language": w.language,
                    "b_subject": w.subject,
                    "b_text": w.text_body,
                    "b_html": w.html_body,
                    "b_attachments": w.attachments,
                }
                for message_id, w in written
            ],
        )
    if outcomes:
        await conn.execute(
            _RECORD,
            [
                {
                    "b_id": o.id,
                    "b_status": o.status,
                    "b_attempts": o.attempts,
                    "b_error": o.error[:500] if o.error else None,
                    "b_next": o.next_attempt_at,
                    "b_sent": o.sent_at,
                }
                for o in outcomes
            ],
        )


async def get_message(conn: DbConnection, message_id: str) -> Message | None:
    row = (await conn.execute(select(mail_messages).where(mail_messages.c.id == message_id))).first()
    return None if row is None else _message(row)


async def messages_of(conn: DbConnection, booking_id: str, order_id: str | None) -> list[Message]:
    """A booking's messages and its order's, newest first."""
    whose = mail_messages.c.booking_id == booking_id
    if order_id is not None:
        whose = or_(whose, mail_messages.c.order_id == order_id)
    rows = await conn.execute(select(mail_messages).where(whose).order_by(mail_messages.c.sequence.desc()))
    return [_message(row) for row in rows]


async def messages_of_gift(conn: DbConnection, gift_id: str) -> list[Message]:
    """A gift voucher's messages, newest first."""
    rows = await conn.execute(
        select(mail_messages)
        .where(mail_messages.c.gift_id == gift_id)
        .order_by(mail_messages.c.sequence.desc())
    )
    return [_message(row) for row in rows]


async def list_messages(
    conn: DbConnection, *, status: str | None = None, limit: int = 50, offset: int = 0
) -> tuple[list[Message], int]:
    condition = and_(True) if status is None else mail_messages.c.status == status
    rows = await conn.execute(
        select(mail_messages)
        .where(condition)
        .order_by(mail_messages.c.sequence.desc())
        .limit(limit)
        .offset(offset)
    )
    total = int(await conn.scalar(select(func.count()).select_from(mail_messages).where(condition)) or 0)
    return [_message(row) for row in rows], total


async def counts_by_status(conn: DbConnection) -> dict[str, int]:
    rows = await conn.execute(select(mail_messages.c.status, func.count()).group_by(mail_messages.c.status))
    return {row[0]: int(row[1]) for row in rows}
