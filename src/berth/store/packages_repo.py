"""octo/packages' bookings: a package booking's included bookings (`package_booking_id`)."""

from __future__ import annotations

from collections.abc import Iterable

from sqlalchemy import bindparam, select

from berth.domain.bookings import Booking
from berth.store import driver
from berth.store.bookings_repo import booking_from_row
from berth.store.connection import DbConnection
from berth.store.driver import Prepared
from berth.store.tables import bookings

_MEMBERS = (
    select(bookings).where(bookings.c.package_booking_id == bindparam("package")).order_by(bookings.c.id)
)
_MEMBERS_OF = Prepared(_MEMBERS)
# FOR UPDATE on PostgreSQL; SQLite has no row locks (its write transaction holds the database's).
_MEMBERS_OF_LOCKED = Prepared(_MEMBERS.with_for_update())


async def package_members(
    conn: DbConnection, package_booking_ids: Iterable[str], *, lock: bool = False
) -> list[Booking]:
    """The included bookings of package bookings (octo/packages), one query for all of them."""
    ids = list(set(package_booking_ids))
    if not ids:
        return []
    if len(ids) == 1:  # a confirmation's, a cancellation's (`Companions`): compiled once
        prepared = _MEMBERS_OF_LOCKED if lock else _MEMBERS_OF
        return [booking_from_row(row) for row in await driver.fetch(conn, prepared, {"package": ids[0]})]
    query = select(bookings).where(bookings.c.package_booking_id.in_(ids)).order_by(bookings.c.id)
    if lock and conn.dialect.name == "postgresql":
        query = query.with_for_update()
    return [booking_from_row(row) for row in await conn.execute(query)]
