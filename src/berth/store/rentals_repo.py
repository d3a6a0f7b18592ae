"""octo/rentals' bookings: the items rentals hold over their intervals (`slot_start` to
`slot_end`)."""

from __future__ import annotations

from datetime import datetime

from sqlalchemy import bindparam, func, select

from berth.domain.rentals import HeldInterval
from berth.store.bookings_reads import HOLDING_NOW, IN_OPTION, NOT_EXCLUDED
from berth.store.connection import DbConnection
from berth.store.tables import bookings

_HELD_INTERVALS = (
    select(bookings.c.slot_start, bookings.c.slot_end, func.sum(bookings.c.pax))
    .where(
        IN_OPTION,
        bookings.c.slot_end > bindparam("start"),
        bookings.c.slot_start < bindparam("end"),
        HOLDING_NOW,
    )
    .group_by(bookings.c.slot_start, bookings.c.slot_end)
)
_HELD_INTERVALS_EXCLUDING = _HELD_INTERVALS.where(NOT_EXCLUDED)


async def held_intervals(
    conn: DbConnection,
    product_id: str,
    option_id: str,
    start: datetime,
    end: datetime,
    now: datetime,
    *,
    excluding: str | None = None,
) -> list[HeldInterval]:
    """Items held by the option's rentals overlapping [start, end): one aggregate query, one
    row per distinct (start, end) with the places held over it."""
    parameters = {"product_id": product_id, "option_id": option_id, "start": start, "end": end, "now": now}
    if excluding is None:
        rows = await conn.execute(_HELD_INTERVALS, parameters)
    else:
        rows = await conn.execute(_HELD_INTERVALS_EXCLUDING, {**parameters, "excluding": excluding})
    return [HeldInterval(row[0], row[1], int(row[2])) for row in rows]
