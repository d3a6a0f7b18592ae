"""The payments ledger: payments (card attempts and the desk's), their refunds, and the provider
events already processed. Every change is written in the transaction of the step that makes it;
the back office reads the ledger through `ledger_repo`."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from datetime import datetime
from typing import Any

from sqlalchemy import (
    ColumnElement,
    and_,
    func,
    insert,
    select,
    update,
)
from sqlalchemy.dialects.postgresql import insert as pg_insert
from sqlalchemy.dialects.sqlite import insert as sqlite_insert

from berth.domain.bookings import Booking
from berth.domain.payments import OPEN, Outcome, PaymentStatus, RefundStatus
from berth.store.bookings_repo import booking_from_row
from berth.store.connection import DbConnection
from berth.store.tables import bookings, payment_events, payment_refunds, payments


@dataclass(frozen=True)
class Payment:
    id: str
    booking_id: str
    attempt: int  # the booking's payments in the order they began (`next_attempt`)
    provider: str  # stripe, desk
    method: str  # card, cash, card_terminal
    provider_id: str | None
    provider_customer: str | None
    provider_setup: str | None
    amount: int
    currency: str
    status: PaymentStatus
    outcome: Outcome | None
    failure_reason: str | None
    reference: str | None
    actor: str
    created_at: datetime
    updated_at: datetime
    captured_at: datetime | None


@dataclass(frozen=True)
class Refund:
    id: str
    payment_id: str
    provider_id: str | None
    idempotency_key: str
    amount: int
    currency: str
    status: RefundStatus
    reason: str
    actor: str
    failure_reason: str | None
    created_at: datetime
    updated_at: datetime


@dataclass(frozen=True)
class PaymentFilter:
    """The back office's filters of the payments page (all optional, combined with AND)."""

    status: PaymentStatus | None = None
    provider: str | None = None
    booking_id: str | None = None
    created_from: datetime | None = None  # inclusive
    created_before: datetime | None = None  # exclusive
    with_refunds: bool = False  # only payments with at least one refund


def _payment(row: Any) -> Payment:
    return Payment(
        id=row.id, booking_id=row.booking_id, attempt=row.attempt, provider=row.provider, method=row.method,
        provider_id=row.provider_id, provider_customer=row.provider_customer,
        provider_setup=row.provider_setup, amount=row.amount, currency=row.currency,
        status=PaymentStatus(row.status), outcome=Outcome(row.outcome) if row.outcome else None,
        failure_reason=row.failure_reason, reference=row.reference, actor=row.actor,
        created_at=row.created_at, updated_at=row.updated_at, captured_at=row.captured_at,
    )  # fmt: skip


def _refund(row: Any) -> Refund:
    return Refund(
        id=row.id, payment_id=row.payment_id, provider_id=row.provider_id,
        idempotency_key=row.idempotency_key, amount=row.amount, currency=row.currency,
        status=RefundStatus(row.status), reason=row.reason, actor=row.actor,
        failure_reason=row.failure_reason, created_at=row.created_at, updated_at=row.updated_at,
    )  # fmt: skip


# --- payments ----------------------------------------------------------------------------------


async def add_payment(conn: DbConnection, payment: Payment) -> None:
    await conn.execute(
        insert(payments).values(
            id=payment.id, booking_id=payment.booking_id, attempt=payment.attempt, provider=payment.provider,
            method=payment.method, provider_id=payment.provider_id,
            provider_customer=payment.provider_customer, provider_setup=payment.provider_setup,
            amount=payment.amount, currency=payment.currency, status=payment.status.value,
            outcome=payment.outcome.value if payment.outcome else None,
            failure_reason=payment.failure_reason, reference=payment.reference, actor=payment.actor,
            created_at=payment.created_at, updated_at=payment.updated_at, captured_at=payment.captured_at,
        )
    )  # fmt: skip


async def get_payment(conn: DbConnection, payment_id: str) -> Payment | None:
    row = (await conn.execute(select(payments).where(payments.c.id == payment_id))).first()
    return _payment(row) if row else None


async def by_provider_id(conn: DbConnection, provider_id: str) -> Payment | None:
    row = (await conn.execute(select(payments).where(payments.c.provider_id == provider_id))).first()
    return _payment(row) if row else None


async def payments_for_booking(conn: DbConnection, booking_id: str) -> list[Payment]:
    """The booking's payments, oldest first."""
    rows = await conn.execute(
        select(payments)
        .where(payments.c.booking_id == booking_id)
        .order_by(payments.c.attempt, payments.c.created_at, payments.c.id)
    )
    return [_payment(row) for row in rows]


async def next_attempt(conn: DbConnection, booking_id: str) -> int:
    """The number of the booking's next payment (read in the transaction that adds it)."""
    last = await conn.scalar(select(func.max(payments.c.attempt)).where(payments.c.booking_id == booking_id))
    return int(last or 0) + 1


async def set_provider_ids(
    conn: DbConnection, payment_id: str, provider_id: str, customer: str, setup: str, now: datetime
) -> None:
    await conn.execute(
        update(payments)
        .where(payments.c.id == payment_id)
        .values(provider_id=provider_id, provider_customer=customer, provider_setup=setup, updated_at=now)
    )


async def set_setup(conn: DbConnection, payment_id: str, setup: str, now: datetime) -> None:
    await conn.execute(
        update(payments).where(payments.c.id == payment_id).values(provider_setup=setup, updated_at=now)
    )


async def set_status(
    conn: DbConnection,
    payment_id: str,
    status: PaymentStatus,
    now: datetime,
    *,
    failure_reason: str | None = None,
    captured_at: datetime | None = None,
) -> None:
    """Record what the provider says of a payment (a failure's reason, once given, stays). A
    capture is final: a succeeded payment never goes back to another status, whatever order
    the news arrives in."""
    values: dict[str, Any] = {"status": status.value, "updated_at": now}
    if failure_reason is not None:
        values["failure_reason"] = failure_reason
    if captured_at is not None:
        values["captured_at"] = captured_at
    await conn.execute(
        update(payments)
        .where(payments.c.id == payment_id, payments.c.status != PaymentStatus.SUCCEEDED.value)
        .values(**values)
    )


async def set_outcome(conn: DbConnection, payment_id: str, outcome: Outcome, now: datetime) -> bool:
    """Give a captured payment its outcome, once: False when it already had one."""
    done = await conn.execute(
        update(payments)
        .where(
            payments.c.id == payment_id,
            payments.c.status == PaymentStatus.SUCCEEDED.value,
            payments.c.outcome.is_(None),
        )
        .values(outcome=outcome.value, updated_at=now)
    )
    return bool(done.rowcount)


async def unsettled(conn: DbConnection, older_than: datetime, limit: int) -> list[Payment]:
    """Card payments the sweep looks at: open ones (a guest who left mid-payment) last changed
    before `older_than`, and captured ones with no outcome yet (a crash between the capture and
    the confirmation), oldest first."""
    # FAILED: declined, its provider payment not yet known cancelled (nothing may capture it).
    open_statuses = [s.value for s in (*OPEN, PaymentStatus.FAILED)]
    rows = await conn.execute(
        select(payments)
        .where(
            payments.c.provider != "desk",
            (
                and_(payments.c.status.in_(open_statuses), payments.c.updated_at < older_than)
                | and_(payments.c.status == PaymentStatus.SUCCEEDED.value, payments.c.outcome.is_(None))
            ),
        )
        .order_by(payments.c.updated_at)
        .limit(limit)
    )
    return [_payment(row) for row in rows]


def _clauses(where: PaymentFilter) -> list[ColumnElement[bool]]:
    clauses: list[ColumnElement[bool]] = []
    if where.status is not None:
        clauses.append(payments.c.status == where.status.value)
    if where.provider is not None:
        clauses.append(payments.c.provider == where.provider)
    if where.booking_id is not None:
        clauses.append(payments.c.booking_id == where.booking_id)
    if where.created_from is not None:
        clauses.append(payments.c.created_at >= where.created_from)
    if where.created_before is not None:
        clauses.append(payments.c.created_at < where.created_before)
    if where.with_refunds:
        clauses.append(
            select(payment_refunds.c.id).where(payment_refunds.c.payment_id == payments.c.id).exists()
        )
    return clauses


@dataclass(frozen=True)
class PaymentRow:
    """A payment as the payments page lists it: with its booking's reference and its refunds."""

    payment: Payment
    supplier_reference: str
    refunds: tuple[Refund, ...]

    @property
    def refunded(self) -> int:
        """What was given back (refunds that succeeded)."""
        return sum(r.amount for r in self.refunds if r.status is RefundStatus.SUCCEEDED)


async def list_payments(
    conn: DbConnection, where: PaymentFilter, limit: int, offset: int
) -> tuple[list[PaymentRow], int]:
    """Matching payments, newest first, with their refunds, and how many match (two queries and
    one for the refunds of the page, whatever its size)."""
    clauses = _clauses(where)
    total = await conn.scalar(select(func.count()).select_from(payments).where(*clauses))
    rows = list(
        await conn.execute(
            select(payments, bookings.c.supplier_reference)
            .join(bookings, bookings.c.id == payments.c.booking_id)
            .where(*clauses)
            .order_by(payments.c.created_at.desc(), payments.c.id.desc())
            .limit(limit)
            .offset(offset)
        )
    )
    found = [_payment(row) for row in rows]
    refunds = await refunds_of(conn, [p.id for p in found])
    listed = [
        PaymentRow(p, row.supplier_reference, tuple(r for r in refunds if r.payment_id == p.id))
        for p, row in zip(found, rows, strict=True)
    ]
    return listed, int(total or 0)


async def bookings_by_uuid(conn: DbConnection, uuid: str) -> list[Booking]:
    """The bookings any connection gave `uuid` (a paying channel's are found by it)."""
    rows = await conn.execute(select(bookings).where(bookings.c.uuid == uuid))
    return [booking_from_row(row) for row in rows]


# --- refunds -----------------------------------------------------------------------------------


async def add_refund(conn: DbConnection, refund: Refund) -> None:
    await conn.execute(
        insert(payment_refunds).values(
            id=refund.id, payment_id=refund.payment_id, provider_id=refund.provider_id,
            idempotency_key=refund.idempotency_key, amount=refund.amount, currency=refund.currency,
            status=refund.status.value, reason=refund.reason, actor=refund.actor,
            failure_reason=refund.failure_reason, created_at=refund.created_at,
            updated_at=refund.updated_at,
        )
    )  # fmt: skip


async def get_refund(conn: DbConnection, refund_id: str) -> Refund | None:
    row = (await conn.execute(select(payment_refunds).where(payment_refunds.c.id == refund_id))).first()
    return _refund(row) if row else None


async def refunds_of(conn: DbConnection, payment_ids: Sequence[str]) -> list[Refund]:
    if not payment_ids:
        return []
    rows = await conn.execute(
        select(payment_refunds)
        .where(payment_refunds.c.payment_id.in_(list(payment_ids)))
        .order_by(payment_refunds.c.created_at, payment_refunds.c.id)
    )
    return [_refund(row) for row in rows]


async def set_refund_state(
    conn: DbConnection,
    refund_id: str,
    status: RefundStatus,
    now: datetime,
    *,
    provider_id: str | None = None,
    failure_reason: str | None = None,
) -> None:
    """Record what the provider says of a refund; a succeeded or failed one stays so."""
    values: dict[str, Any] = {"status": status.value, "updated_at": now, "failure_reason": failure_reason}
    if provider_id is not None:
        values["provider_id"] = provider_id
    final = [RefundStatus.SUCCEEDED.value, RefundStatus.FAILED.value]
    await conn.execute(
        update(payment_refunds)
        .where(payment_refunds.c.id == refund_id, payment_refunds.c.status.not_in(final))
        .values(**values)
    )


async def unfinished_refunds(conn: DbConnection, limit: int) -> list[Refund]:
    """Refunds the provider has not finished (or not been asked for), oldest first."""
    rows = await conn.execute(
        select(payment_refunds)
        .where(payment_refunds.c.status.in_([RefundStatus.REQUESTED.value, RefundStatus.PENDING.value]))
        .order_by(payment_refunds.c.created_at)
        .limit(limit)
    )
    return [_refund(row) for row in rows]


# --- provider events ---------------------------------------------------------------------------


async def event_seen(conn: DbConnection, provider: str, event_id: str) -> bool:
    found = await conn.scalar(
        select(func.count())
        .select_from(payment_events)
        .where(payment_events.c.provider == provider, payment_events.c.event_id == event_id)
    )
    return bool(found)


async def first_time(conn: DbConnection, provider: str, event_id: str, kind: str, now: datetime) -> bool:
    """Note a provider event as processed; False when it was already (processed once, whatever
    the number of deliveries). Call it in the transaction of what the event changes."""
    insert_of = pg_insert if conn.dialect.name == "postgresql" else sqlite_insert
    done = await conn.execute(
        insert_of(payment_events)
        .values(provider=provider, event_id=event_id, type=kind[:100], received_at=now)
        .on_conflict_do_nothing(index_elements=["provider", "event_id"])
    )
    return bool(done.rowcount)
