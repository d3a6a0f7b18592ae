"""Orders."""

from __future__ import annotations

from collections.abc import Iterable
from datetime import datetime
from typing import Any

from sqlalchemy import func, insert, or_, select, update

from berth.domain.bookings import Booking, BookingStatus, Cancellation, Contact
from berth.domain.orders import Order, OrderStatus
from berth.store.bookings_repo import booking_from_row
from berth.store.connection import DbConnection
from berth.store.tables import bookings, orders


def _values(order: Order) -> dict[str, Any]:
    cancellation = order.cancellation
    return {
        "connection_id": order.connection_id,
        "supplier_reference": order.supplier_reference,
        "status": order.status.value,
        "test_mode": order.test_mode,
        "currency": order.currency,
        "contact": order.contact.to_document(),
        "email_receipt": order.email_receipt,
        "created_at": order.created_at,
        "updated_at": order.updated_at,
        "expires_at": order.expires_at,
        "confirmed_at": order.confirmed_at,
        "cancellation": (
            {"refund": cancellation.refund, "reason": cancellation.reason, "at": cancellation.at.isoformat()}
            if cancellation
            else None
        ),
    }


def _order(row: Any) -> Order:
    cancellation = row.cancellation
    return Order(
        id=row.id,
        connection_id=row.connection_id,
        supplier_reference=row.supplier_reference,
        status=OrderStatus(row.status),
        test_mode=row.test_mode,
        currency=row.currency,
        contact=Contact.from_document(row.contact),
        email_receipt=row.email_receipt,
        created_at=row.created_at,
        updated_at=row.updated_at,
        expires_at=row.expires_at,
        confirmed_at=row.confirmed_at,
        cancellation=(
            Cancellation(
                cancellation["refund"], cancellation["reason"], datetime.fromisoformat(cancellation["at"])
            )
            if cancellation
            else None
        ),
    )


async def insert_order(conn: DbConnection, order: Order) -> None:
    await conn.execute(insert(orders).values(id=order.id, **_values(order)))


async def save_order(conn: DbConnection, order: Order) -> None:
    await conn.execute(update(orders).where(orders.c.id == order.id).values(**_values(order)))


async def get_order(
    conn: DbConnection, order_id: str, connection_id: str | None = None, *, lock: bool = False
) -> Order | None:
    query = select(orders).where(orders.c.id == order_id)
    if connection_id is not None:
        query = query.where(orders.c.connection_id == connection_id)
    if lock and conn.dialect.name == "postgresql":
        query = query.with_for_update()
    row = (await conn.execute(query)).first()
    return None if row is None else _order(row)


async def lock_order(conn: DbConnection, order_id: str) -> None:
    """Serialise writers of an order and its bookings (PostgreSQL row lock; SQLite's write
    lock does it)."""
    if conn.dialect.name == "postgresql":
        await conn.execute(select(orders.c.id).where(orders.c.id == order_id).with_for_update())


async def bookings_of(conn: DbConnection, order_id: str, *, lock: bool = False) -> list[Booking]:
    query = select(bookings).where(bookings.c.order_id == order_id).order_by(bookings.c.order_position)
    if lock and conn.dialect.name == "postgresql":
        query = query.with_for_update()
    return [booking_from_row(row) for row in await conn.execute(query)]


async def references(conn: DbConnection, order_ids: Iterable[str]) -> dict[str, str]:
    ids = list(set(order_ids))
    if not ids:
        return {}
    rows = await conn.execute(select(orders.c.id, orders.c.supplier_reference).where(orders.c.id.in_(ids)))
    return {row[0]: row[1] for row in rows}


async def due_orders(conn: DbConnection, now: datetime, limit: int) -> list[Order]:
    """ON_HOLD orders whose hold has run out, and orders with a booking whose hold has."""
    due_holds = select(bookings.c.order_id).where(
        bookings.c.status == BookingStatus.ON_HOLD.value,
        bookings.c.expires_at <= now,
        bookings.c.order_id.is_not(None),
    )
    query = (
        select(orders)
        .where(
            or_(
                (orders.c.status == OrderStatus.ON_HOLD.value) & (orders.c.expires_at <= now),
                orders.c.id.in_(due_holds),
            )
        )
        .order_by(orders.c.expires_at)
        .limit(limit)
    )
    if conn.dialect.name == "postgresql":
        query = query.with_for_update(skip_locked=True)
    return [_order(row) for row in await conn.execute(query)]


async def next_position(conn: DbConnection, order_id: str) -> int:
    found = await conn.scalar(
        select(func.max(bookings.c.order_position)).where(bookings.c.order_id == order_id)
    )
    return 0 if found is None else int(found) + 1
