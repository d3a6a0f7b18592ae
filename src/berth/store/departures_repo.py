"""Staff's departure overrides (closed, capacity, note), one row per changed departure."""

from __future__ import annotations

from collections.abc import Sequence
from datetime import datetime
from typing import Any

from sqlalchemy import and_, bindparam, delete, func, insert, select, update

from berth.domain.bookings import BookingStatus
from berth.domain.departures import DepartureOverride
from berth.store.database import DbConnection
from berth.store.tables import bookings, departure_overrides

_COLUMNS = departure_overrides.c
# Built once (a hot statement: every availability check reads it).
_BETWEEN = select(departure_overrides).where(
    _COLUMNS.product_id == bindparam("product_id"),
    _COLUMNS.option_id == bindparam("option_id"),
    _COLUMNS.slot_start >= bindparam("first"),
    _COLUMNS.slot_start <= bindparam("last"),
)


def _override(row: Any) -> DepartureOverride:
    return DepartureOverride(
        product_id=row.product_id,
        option_id=row.option_id,
        availability_id=row.availability_id,
        slot_start=row.slot_start,
        closed=bool(row.closed),
        capacity=row.capacity,
        note=row.note,
        updated_at=row.updated_at,
    )


async def between(
    conn: DbConnection, product_id: str, option_id: str, first: datetime, last: datetime
) -> dict[str, DepartureOverride]:
    """The overrides of the option's departures starting in [first, last], by availability id."""
    rows = await conn.execute(
        _BETWEEN, {"product_id": product_id, "option_id": option_id, "first": first, "last": last}
    )
    return {row.availability_id: _override(row) for row in rows}


async def of_slots(
    conn: DbConnection, product_id: str, option_id: str, starts: Sequence[datetime]
) -> dict[str, DepartureOverride]:
    if not starts:
        return {}
    return await between(conn, product_id, option_id, min(starts), max(starts))


async def get(
    conn: DbConnection, product_id: str, option_id: str, availability_id: str
) -> DepartureOverride | None:
    row = (
        await conn.execute(
            select(departure_overrides).where(
                _COLUMNS.product_id == product_id,
                _COLUMNS.option_id == option_id,
                _COLUMNS.availability_id == availability_id,
            )
        )
    ).first()
    return _override(row) if row is not None else None


async def save(conn: DbConnection, override: DepartureOverride, existed: bool) -> None:
    """Store `override` (`existed`: whether the departure had a row); one that changes nothing
    removes the row."""
    key = and_(
        _COLUMNS.product_id == override.product_id,
        _COLUMNS.option_id == override.option_id,
        _COLUMNS.availability_id == override.availability_id,
    )
    if override.is_default:
        if existed:
            await conn.execute(delete(departure_overrides).where(key))
        return
    values = {
        "slot_start": override.slot_start,
        "closed": override.closed,
        "capacity": override.capacity,
        "note": override.note,
        "updated_at": override.updated_at,
    }
    if existed:
        await conn.execute(update(departure_overrides).where(key).values(**values))
    else:
        await conn.execute(
            insert(departure_overrides).values(
                product_id=override.product_id,
                option_id=override.option_id,
                availability_id=override.availability_id,
                **values,
            )
        )


async def confirmed_places(
    conn: DbConnection, product_id: str, option_id: str, first: datetime, last: datetime
) -> dict[str, int]:
    """Places of the CONFIRMED and REDEEMED bookings (not test ones) per availability id, for
    the option's departures starting in [first, last]."""
    rows = await conn.execute(
        select(bookings.c.availability_id, func.sum(bookings.c.pax))
        .where(
            bookings.c.product_id == product_id,
            bookings.c.option_id == option_id,
            bookings.c.slot_start >= first,
            bookings.c.slot_start <= last,
            bookings.c.test_mode.is_(False),
            bookings.c.status.in_([BookingStatus.CONFIRMED.value, BookingStatus.REDEEMED.value]),
        )
        .group_by(bookings.c.availability_id)
    )
    return {row[0]: int(row[1]) for row in rows if row[1]}
