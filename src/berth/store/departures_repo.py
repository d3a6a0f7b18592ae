"""Staff's departure overrides (closed, capacity, note), one row per changed departure."""

from __future__ import annotations

from collections.abc import Sequence
from datetime import datetime
from typing import Any

from sqlalchemy import (
    Integer,
    and_,
    bindparam,
    cast,
    delete,
    func,
    insert,
    literal,
    null,
    select,
    union_all,
    update,
)

from berth.domain.bookings import BookingStatus
from berth.domain.departures import DepartureOverride
from berth.store import driver
from berth.store.connection import DbConnection
from berth.store.driver import Prepared
from berth.store.tables import bookings, departure_overrides, slot_holds

_COLUMNS = departure_overrides.c
_OVERRIDE_FIELDS = (
    "product_id", "option_id", "availability_id", "slot_start", "closed", "capacity", "note", "updated_at",
)  # fmt: skip
# Built once (a hot statement: every availability check reads it).
_BETWEEN = select(departure_overrides).where(
    _COLUMNS.product_id == bindparam("product_id"),
    _COLUMNS.option_id == bindparam("option_id"),
    _COLUMNS.slot_start >= bindparam("first"),
    _COLUMNS.slot_start <= bindparam("last"),
)


_KEY = ("product_id", "option_id")
# Staff's overrides and the places held, of the option's departures starting in [first, last],
# in one statement (every booking's answer and every availability check reads both): rows of
# kind "o" are overrides, rows of kind "h" a departure's places held now.
_OVERRIDES_AND_HELD = Prepared(union_all(
    select(
        literal("o").label("kind"), *(_COLUMNS[name] for name in _OVERRIDE_FIELDS),
        cast(null(), Integer).label("held"),
    ).where(
        *(_COLUMNS[name] == bindparam(name) for name in _KEY),
        _COLUMNS.slot_start >= bindparam("first"), _COLUMNS.slot_start <= bindparam("last"),
    ),
    select(
        literal("h"), *(
            slot_holds.c.availability_id if name == "availability_id" else cast(null(), _COLUMNS[name].type)
            for name in _OVERRIDE_FIELDS
        ),
        func.sum(slot_holds.c.pax),
    ).where(
        *(slot_holds.c[name] == bindparam(name) for name in _KEY),
        slot_holds.c.slot_start >= bindparam("first"), slot_holds.c.slot_start <= bindparam("last"),
        slot_holds.c.until > bindparam("now"),
    ).group_by(slot_holds.c.availability_id),
))  # fmt: skip


async def overrides_and_held(
    conn: DbConnection, product_id: str, option_id: str, first: datetime, last: datetime, now: datetime
) -> tuple[dict[str, DepartureOverride], dict[str, int]]:
    """Staff's overrides of the option's departures starting in [first, last], and the places
    each holds now (`slot_holds`), by availability id: one query for both."""
    parameters = {"product_id": product_id, "option_id": option_id, "first": first, "last": last, "now": now}
    overrides: dict[str, DepartureOverride] = {}
    held: dict[str, int] = {}
    for row in await driver.fetch(conn, _OVERRIDES_AND_HELD, parameters):
        if row.kind == "o":
            overrides[row.availability_id] = _override(row)
        elif row.held:
            held[row.availability_id] = int(row.held)
    return overrides, held


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
