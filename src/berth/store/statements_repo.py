"""The bookings a connection's monthly statement reads, batch by batch (keyset on the id), and
the months it has bookings in. Every query is led by the connection (`ix_bookings_connection_date`):
on the travel basis the month's travel dates, or the open-dated bookings (a NULL local date),
are one range of that index; the confirmation basis reads the connection's sold bookings."""

from __future__ import annotations

from collections.abc import AsyncIterator

from sqlalchemy import ColumnElement, and_, func, select

from berth.domain.bookings import Booking
from berth.domain.statements import SOLD, Basis, Month
from berth.store.bookings_repo import booking_from_row
from berth.store.connection import DbConnection
from berth.store.tables import bookings

# Bookings a query reads: on SQLite the rows are read and made into bookings in the event
# loop's thread, which waits meanwhile (100: a few tens of milliseconds; docs/decisions.md).
BATCH = 100


def _sold(connection_id: str) -> list[ColumnElement[bool]]:
    return [
        bookings.c.connection_id == connection_id,
        bookings.c.status.in_([s.value for s in SOLD]),
        bookings.c.confirmed_at.is_not(None),
        bookings.c.test_mode.is_(False),
    ]


def _confirmed_in(month: Month) -> ColumnElement[bool]:
    return and_(
        bookings.c.confirmed_at >= month.starts_at(), bookings.c.confirmed_at < month.next.starts_at()
    )


def _parts(connection_id: str, month: Month, basis: Basis) -> list[list[ColumnElement[bool]]]:
    """The month's bookings as index ranges, each read on its own."""
    sold = _sold(connection_id)
    if basis is Basis.CONFIRMATION:
        return [[*sold, _confirmed_in(month)]]
    return [
        [
            *sold,
            bookings.c.local_date >= month.first.isoformat(),
            bookings.c.local_date <= month.last.isoformat(),
        ],
        [*sold, bookings.c.local_date.is_(None), _confirmed_in(month)],
    ]


async def month_bookings(
    conn: DbConnection, connection_id: str, month: Month, basis: Basis, batch: int = BATCH
) -> AsyncIterator[list[Booking]]:
    """The connection's sold bookings of `month` on `basis`, `batch` at a time."""
    for where in _parts(connection_id, month, basis):
        after = ""
        while True:
            rows = (
                await conn.execute(
                    select(bookings).where(*where, bookings.c.id > after).order_by(bookings.c.id).limit(batch)
                )
            ).all()
            if not rows:
                break
            yield [booking_from_row(row) for row in rows]
            if len(rows) < batch:
                break
            after = rows[-1].id


async def months_with_bookings(conn: DbConnection, connection_id: str, basis: Basis) -> set[Month]:
    """The months whose statement of the connection has a line."""
    sold = _sold(connection_id)
    months: set[Month] = set()
    if basis is Basis.TRAVEL:
        dated = (
            select(func.substr(bookings.c.local_date, 1, 7))
            .where(*sold, bookings.c.local_date.is_not(None))
            .distinct()
        )
        months.update(Month.parse(text) for text in (await conn.scalars(dated)).all())
        sold = [*sold, bookings.c.local_date.is_(None)]
    confirmed = await conn.scalars(select(bookings.c.confirmed_at).where(*sold))
    months.update(Month(at.year, at.month) for at in confirmed.all())
    return months
