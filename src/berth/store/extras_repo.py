"""octo/extras: the pieces of extras bookings have per departure, and those held now."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from datetime import datetime

from sqlalchemy import bindparam, delete, func, insert, select

from berth.domain.bookings import Booking
from berth.store.bookings_reads import HOLDING_NOW
from berth.store.connection import DbConnection
from berth.store.tables import booking_extras, bookings

_HELD = (
    select(booking_extras.c.extra_id, func.sum(booking_extras.c.quantity))
    .select_from(booking_extras.join(bookings, bookings.c.id == booking_extras.c.booking_id))
    .where(
        booking_extras.c.product_id == bindparam("product_id"),
        booking_extras.c.option_id == bindparam("option_id"),
        booking_extras.c.availability_id == bindparam("availability_id"),
        booking_extras.c.extra_id.in_(bindparam("extra_ids", expanding=True)),
        booking_extras.c.booking_id != bindparam("excluding"),
        HOLDING_NOW,
    )
    .group_by(booking_extras.c.extra_id)
)


async def held_extras(
    conn: DbConnection,
    product_id: str,
    option_id: str,
    availability_id: str,
    extra_ids: Sequence[str],
    now: datetime,
    *,
    excluding: str,
) -> dict[str, int]:
    """Pieces of each extra held on the departure by bookings that hold places now (but
    `excluding`): one query."""
    if not extra_ids:
        return {}
    rows = await conn.execute(
        _HELD,
        {
            "product_id": product_id,
            "option_id": option_id,
            "availability_id": availability_id,
            "extra_ids": list(extra_ids),
            "excluding": excluding,
            "now": now,
        },
    )
    return {extra_id: int(total) for extra_id, total in rows}


async def record_extras(conn: DbConnection, booking: Booking, counts: Mapping[str, int]) -> None:
    """The booking's pieces per extra on its departure, replacing what was recorded."""
    await conn.execute(delete(booking_extras).where(booking_extras.c.booking_id == booking.id))
    if booking.availability_id is None:
        return
    rows = [
        {
            "booking_id": booking.id,
            "extra_id": extra_id,
            "product_id": booking.product_id,
            "option_id": booking.option_id,
            "availability_id": booking.availability_id,
            "quantity": quantity,
        }
        for extra_id, quantity in counts.items()
        if quantity > 0
    ]
    if rows:
        await conn.execute(insert(booking_extras), rows)
