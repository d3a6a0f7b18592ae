"""The payments ledger as the back office reads it: its movements (payments and refunds in one
list, a UNION of the two tables), their totals by channel, the span of time money moved in, and
the refunds that failed. Only reads: the payments service writes the ledger (`payments_repo`)."""

from __future__ import annotations

from dataclasses import dataclass, replace
from datetime import datetime
from typing import Any

from sqlalchemy import (
    ColumnElement,
    Select,
    String,
    Subquery,
    and_,
    func,
    literal,
    or_,
    select,
    union_all,
)

from berth.domain.ledger import SUCCEEDED, ChannelSales, Kind, Movement
from berth.domain.payments import RefundStatus
from berth.store.connection import DbConnection
from berth.store.tables import bookings, payment_refunds, payments


@dataclass(frozen=True)
class LedgerFilter:
    """The payments page's filters (all optional, combined with AND). `search` is one of the
    booking's references or uuid, or a provider's, Berth's or the desk's id of a payment or
    refund (a payment's id finds its refunds too)."""

    moved_from: datetime | None = None  # inclusive
    moved_before: datetime | None = None  # exclusive
    connection_id: str | None = None
    method: str | None = None
    kind: Kind | None = None
    status: str | None = None
    currency: str | None = None
    search: str | None = None


def _payment_moved() -> ColumnElement[datetime]:
    return func.coalesce(payments.c.captured_at, payments.c.created_at)


def _branch(kind: Kind, where: LedgerFilter) -> Select[Any]:
    """The payments' or the refunds' part of the ledger, each with its filters."""
    refund = kind is Kind.REFUND
    moved = payment_refunds.c.created_at if refund else _payment_moved()
    status = payment_refunds.c.status if refund else payments.c.status
    currency = payment_refunds.c.currency if refund else payments.c.currency
    clauses: list[ColumnElement[bool]] = []
    if where.moved_from is not None:
        clauses.append(moved >= where.moved_from)
    if where.moved_before is not None:
        clauses.append(moved < where.moved_before)
    if where.connection_id is not None:
        clauses.append(bookings.c.connection_id == where.connection_id)
    if where.method is not None:
        clauses.append(payments.c.method == where.method)
    if where.status is not None:
        clauses.append(status == where.status)
    if where.currency is not None:
        clauses.append(currency == where.currency.upper())
    if where.search:
        text = where.search
        found = [
            bookings.c.supplier_reference == text.upper(), bookings.c.reseller_reference == text,
            bookings.c.uuid == text, payments.c.provider_id == text, payments.c.id == text,
            payments.c.reference == text,
        ]  # fmt: skip
        if refund:
            found += [payment_refunds.c.provider_id == text, payment_refunds.c.id == text]
        clauses.append(or_(*found))
    columns = [
        literal(kind.value).label("kind"),
        (payment_refunds.c.id if refund else payments.c.id).label("id"),
        payments.c.id.label("payment_id"),
        payments.c.booking_id,
        bookings.c.supplier_reference,
        bookings.c.connection_id,
        payments.c.provider,
        payments.c.method,
        (payment_refunds.c.provider_id if refund else payments.c.provider_id).label("provider_id"),
        payments.c.provider_id.label("payment_provider_id"),
        (payment_refunds.c.amount if refund else payments.c.amount).label("amount"),
        currency.label("currency"),
        status.label("status"),
        moved.label("at"),
        (payment_refunds.c.reason if refund else literal(None, String)).label("reason"),
        (payment_refunds.c.failure_reason if refund else payments.c.failure_reason).label("failure_reason"),
        payments.c.reference,
        (payment_refunds.c.actor if refund else payments.c.actor).label("actor"),
    ]
    joined = payments.join(bookings, bookings.c.id == payments.c.booking_id)
    if refund:
        joined = payment_refunds.join(joined, payments.c.id == payment_refunds.c.payment_id)
    return select(*columns).select_from(joined).where(*clauses)


def _ledger(where: LedgerFilter) -> Subquery:
    kinds = [where.kind] if where.kind is not None else [Kind.PAYMENT, Kind.REFUND]
    branches = [_branch(kind, where) for kind in kinds]
    return (branches[0] if len(branches) == 1 else union_all(*branches)).subquery("ledger")


def _movement(row: Any) -> Movement:
    return Movement(
        kind=Kind(row.kind), id=row.id, payment_id=row.payment_id, booking_id=row.booking_id,
        supplier_reference=row.supplier_reference, connection_id=row.connection_id, provider=row.provider,
        method=row.method, provider_id=row.provider_id, payment_provider_id=row.payment_provider_id,
        amount=int(row.amount), currency=row.currency, status=row.status, at=row.at, reason=row.reason,
        failure_reason=row.failure_reason, reference=row.reference, actor=row.actor,
    )  # fmt: skip


async def ledger_page(
    conn: DbConnection, where: LedgerFilter, limit: int, offset: int
) -> tuple[list[Movement], int]:
    """Matching movements, newest first, and how many match."""
    ledger = _ledger(where)
    total = await conn.scalar(select(func.count()).select_from(ledger))
    rows = await conn.execute(
        select(ledger).order_by(ledger.c.at.desc(), ledger.c.id.desc()).limit(limit).offset(offset)
    )
    return [_movement(row) for row in rows], int(total or 0)


async def ledger_after(
    conn: DbConnection, where: LedgerFilter, after: tuple[datetime, str] | None, limit: int
) -> list[Movement]:
    """Matching movements, oldest first, past `after` (a movement's time and id): an export
    reads the ledger batch by batch this way."""
    ledger = _ledger(where)
    query = select(ledger).order_by(ledger.c.at, ledger.c.id).limit(limit)
    if after is not None:
        at, movement_id = after
        query = query.where(or_(ledger.c.at > at, and_(ledger.c.at == at, ledger.c.id > movement_id)))
    return [_movement(row) for row in await conn.execute(query)]


async def channel_sales(conn: DbConnection, where: LedgerFilter) -> list[ChannelSales]:
    """The money that moved among the matching movements (succeeded payments and refunds), by
    channel (the booking's connection) and currency: a month's sales report, or the payments
    page's totals."""
    ledger = _ledger(replace(where, status=SUCCEEDED))
    rows = await conn.execute(
        select(
            ledger.c.connection_id, ledger.c.currency, ledger.c.kind, func.count(), func.sum(ledger.c.amount)
        ).group_by(ledger.c.connection_id, ledger.c.currency, ledger.c.kind)
    )
    sums: dict[tuple[str, str], list[int]] = {}
    for connection_id, currency, kind, count, amount in rows:
        found = sums.setdefault((connection_id, currency), [0, 0, 0, 0])
        at = 0 if kind == Kind.PAYMENT.value else 2
        found[at] += int(count)
        found[at + 1] += int(amount or 0)
    return [ChannelSales(channel, currency, *found) for (channel, currency), found in sorted(sums.items())]


async def moved_between(conn: DbConnection) -> tuple[datetime, datetime] | None:
    """The times of the first and the last money that moved, if any has."""
    ledger = _ledger(LedgerFilter(status=SUCCEEDED))
    first, last = (await conn.execute(select(func.min(ledger.c.at), func.max(ledger.c.at)))).one()
    return None if first is None else (first, last)


async def failed_refunds_since(conn: DbConnection, since: datetime) -> int:
    """How many refunds made since `since` the provider could not make."""
    count = await conn.scalar(
        select(func.count())
        .select_from(payment_refunds)
        .where(payment_refunds.c.status == RefundStatus.FAILED.value, payment_refunds.c.created_at >= since)
    )
    return int(count or 0)
