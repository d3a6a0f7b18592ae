"""Guests' emails: written in the changing transaction, claimed and recorded by the mail worker."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from datetime import datetime
from typing import Any

from sqlalchemy import and_, bindparam, func, insert, or_, select, update

from berth.store.database import DbConnection
from berth.store.tables import mail_messages

PENDING = "pending"
SENDING = "sending"
SENT = "sent"  # accepted by the SMTP server
MAILBOX = "mailbox"  # kept in the database's mailbox (no SMTP server configured)
FAILED = "failed"  # given up after the retry schedule
UNDELIVERABLE = "undeliverable"  # no valid address: never sent, `error` says why
STATUSES = (PENDING, SENDING, SENT, MAILBOX, FAILED, UNDELIVERABLE)
RECEIPT = "receipt"
KINDS = (RECEIPT, "cancelled", "changed")


@dataclass(frozen=True)
class NewMessage:
    id: str
    kind: str
    booking_id: str | None
    order_id: str | None
    recipient: str | None
    recipient_name: str | None
    language: str
    subject: str
    text_body: str
    html_body: str
    attachments: list[dict[str, str]]
    requested_by: str
    error: str | None = None  # set: the message cannot be sent (no valid address)


@dataclass(frozen=True)
class Message:
    id: str
    sequence: int
    kind: str
    booking_id: str | None
    order_id: str | None
    recipient: str | None
    recipient_name: str | None
    language: str
    subject: str
    text_body: str
    html_body: str
    attachments: list[dict[str, str]]
    requested_by: str
    status: str
    attempts: int
    error: str | None
    created_at: datetime
    next_attempt_at: datetime | None
    sent_at: datetime | None


def _message(row: Any) -> Message:
    return Message(
        id=row.id, sequence=row.sequence, kind=row.kind, booking_id=row.booking_id,
        order_id=row.order_id, recipient=row.recipient, recipient_name=row.recipient_name, language=row.language, subject=row.subject,
        text_body=row.text_body, html_body=row.html_body, attachments=list(row.attachments),
        requested_by=row.requested_by, status=row.status, attempts=row.attempts, error=row.error,
        created_at=row.created_at, next_attempt_at=row.next_attempt_at, sent_at=row.sent_at,
    )  # fmt: skip


async def add_message(conn: DbConnection, new: NewMessage, now: datetime) -> None:
    undeliverable = new.error is not None or new.recipient is None
    await conn.execute(
        insert(mail_messages).values(
            id=new.id,
            kind=new.kind,
            booking_id=new.booking_id,
            order_id=new.order_id,
            recipient=new.recipient,
            recipient_name=new.recipient_name,
            language=new.language,
            subject=new.subject,
            text_body=new.text_body,
            html_body=new.html_body,
            attachments=new.attachments,
            requested_by=new.requested_by[:254],
            status=UNDELIVERABLE if undeliverable else PENDING,
            attempts=0,
            error=new.error[:500] if new.error else None,
            created_at=now,
            next_attempt_at=None if undeliverable else now,
        )
    )


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
    and another sends them again, with the same Message-ID)."""
    due = or_(
        and_(mail_messages.c.status == PENDING, mail_messages.c.next_attempt_at <= now),
        and_(mail_messages.c.status == SENDING, mail_messages.c.lease_until <= now),
    )
    query = select(mail_messages).where(due).order_by(mail_messages.c.sequence).limit(limit)
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
