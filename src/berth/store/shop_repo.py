"""The web shop's rows: the connection it sells as, and what it keeps of each of its bookings
(who held it, for the limits on holds, and its manage link's salt and hash)."""

from __future__ import annotations

import hashlib
from collections.abc import Iterable
from dataclasses import dataclass
from datetime import datetime
from typing import Any

from sqlalchemy import and_, case, func, insert, or_, select, text

from berth.domain.bookings import BookingStatus
from berth.domain.shop_access import LiveHolds
from berth.store.connection import DbConnection
from berth.store.tables import bookings, shop_bookings, shop_channel

CHANNEL_ROW = 1


@dataclass(frozen=True)
class ShopBooking:
    booking_id: str
    session_hash: str
    address: str
    places: int
    link_salt: str
    link_hash: str
    language: str
    created_at: datetime


def _row(row: Any) -> ShopBooking:
    return ShopBooking(
        row.booking_id, row.session_hash, row.address, row.places, row.link_salt, row.link_hash,
        row.language, row.created_at,
    )  # fmt: skip


async def channel_connection_id(conn: DbConnection) -> str | None:
    found = await conn.scalar(select(shop_channel.c.connection_id).where(shop_channel.c.id == CHANNEL_ROW))
    return str(found) if found is not None else None


async def set_channel(conn: DbConnection, connection_id: str, now: datetime) -> None:
    await conn.execute(
        insert(shop_channel).values(id=CHANNEL_ROW, connection_id=connection_id, created_at=now)
    )


def _lock_key(key: str) -> int:
    """A PostgreSQL advisory lock's 64-bit key for `key`."""
    return int.from_bytes(
        hashlib.sha256(b"berth shop hold\0" + key.encode()).digest()[:8], "big", signed=True
    )


async def lock_holders(conn: DbConnection, keys: Iterable[str]) -> None:
    """Serialise the shop's holds of one session or address for the rest of the transaction
    (PostgreSQL advisory locks, in sorted order; SQLite's write transaction already does)."""
    if conn.dialect.name != "postgresql":
        return
    for key in sorted({_lock_key(k) for k in keys}):
        await conn.execute(text("SELECT pg_advisory_xact_lock(:key)"), {"key": key})


async def live_holds(conn: DbConnection, session_hash: str, address: str, now: datetime) -> LiveHolds:
    """The shop's bookings of the session and of the address still on hold (unexpired)."""
    live = and_(bookings.c.status == BookingStatus.ON_HOLD.value, bookings.c.expires_at > now)
    mine = shop_bookings.c.session_hash == session_hash
    here = shop_bookings.c.address == address
    query = (
        select(
            func.coalesce(func.sum(case((mine, 1), else_=0)), 0),
            func.coalesce(func.sum(case((here, 1), else_=0)), 0),
            func.coalesce(func.sum(case((here, shop_bookings.c.places), else_=0)), 0),
        )
        .select_from(shop_bookings.join(bookings, bookings.c.id == shop_bookings.c.booking_id))
        .where(or_(mine, here), live)
    )
    session, by_address, places = (await conn.execute(query)).one()
    return LiveHolds(int(session), int(by_address), int(places))


async def add_booking(conn: DbConnection, booking: ShopBooking) -> None:
    await conn.execute(
        insert(shop_bookings).values(
            booking_id=booking.booking_id,
            session_hash=booking.session_hash,
            address=booking.address,
            places=booking.places,
            link_salt=booking.link_salt,
            link_hash=booking.link_hash,
            language=booking.language,
            created_at=booking.created_at,
        )
    )


async def by_link_hash(conn: DbConnection, link_hash: str) -> ShopBooking | None:
    row = (await conn.execute(select(shop_bookings).where(shop_bookings.c.link_hash == link_hash))).first()
    return _row(row) if row is not None else None


async def of_bookings(conn: DbConnection, booking_ids: Iterable[str]) -> dict[str, ShopBooking]:
    wanted = sorted(set(booking_ids))
    if not wanted:
        return {}
    rows = (await conn.execute(select(shop_bookings).where(shop_bookings.c.booking_id.in_(wanted)))).all()
    return {row.booking_id: _row(row) for row in rows}
