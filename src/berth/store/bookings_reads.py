"""Bookings read and listed: by id, by filter (lists, exports), the places held per slot,
what a catalogue import checks, holds due to expire, a booking's history and the confirmations
per hour."""

from __future__ import annotations

from dataclasses import dataclass
from datetime import UTC, date, datetime
from typing import Any

from sqlalchemy import (
    and_,
    bindparam,
    func,
    literal,
    or_,
    select,
    tuple_,
)
from sqlalchemy.sql.elements import ColumnElement

from berth.domain.bookings import (
    HOLDING,
    Booking,
    BookingStatus,
)  # fmt: skip
from berth.domain.catalog_changes import HeldBooking
from berth.domain.resources import Allocation
from berth.domain.times import format_utc_or_none
from berth.store.bookings_repo import booking_from_row
from berth.store.connection import DbConnection
from berth.store.tables import (
    booking_events,
    bookings,
    slot_holds,
)


async def get_by_id(conn: DbConnection, booking_id: str) -> Booking | None:
    row = (await conn.execute(select(bookings).where(bookings.c.id == booking_id))).first()
    return None if row is None else booking_from_row(row)


@dataclass(frozen=True)
class BookingFilter:
    connection_id: str | None = None
    reseller_reference: str | None = None
    supplier_reference: str | None = None
    reference: str | None = None  # either reference (admin search)
    date_from: date | None = None
    date_to: date | None = None
    product_id: str | None = None
    option_id: str | None = None
    status: str | None = None
    availability_id: str | None = None


def _clauses(where: BookingFilter) -> list[ColumnElement[bool]]:
    clauses: list[ColumnElement[bool]] = []
    if where.connection_id is not None:
        clauses.append(bookings.c.connection_id == where.connection_id)
    if where.reseller_reference is not None:
        clauses.append(bookings.c.reseller_reference == where.reseller_reference)
    if where.supplier_reference is not None:
        clauses.append(bookings.c.supplier_reference == where.supplier_reference)
    if where.reference is not None:
        clauses.append(
            or_(
                bookings.c.reseller_reference == where.reference,
                bookings.c.supplier_reference == where.reference.upper(),
                bookings.c.uuid == where.reference,
            )
        )
    if where.date_from is not None:
        clauses.append(bookings.c.local_date >= where.date_from.isoformat())
    if where.date_to is not None:
        clauses.append(bookings.c.local_date <= where.date_to.isoformat())
    if where.product_id is not None:
        clauses.append(bookings.c.product_id == where.product_id)
    if where.option_id is not None:
        clauses.append(bookings.c.option_id == where.option_id)
    if where.status is not None:
        clauses.append(bookings.c.status == where.status)
    if where.availability_id is not None:
        clauses.append(bookings.c.availability_id == where.availability_id)
    return clauses


async def find_bookings(
    conn: DbConnection,
    where: BookingFilter,
    *,
    limit: int | None = None,
    offset: int = 0,
    count: bool = True,
) -> tuple[list[Booking], int]:
    """Bookings matching every given filter, by travel date then creation, and the total count
    (with `count=False`, the number of rows returned)."""
    clauses = _clauses(where)
    condition = and_(*clauses) if clauses else None
    query = select(bookings).order_by(bookings.c.slot_start, bookings.c.created_at, bookings.c.id)
    counting = select(func.count()).select_from(bookings)
    if condition is not None:
        query = query.where(condition)
        counting = counting.where(condition)
    if limit is not None:
        query = query.limit(limit).offset(offset)
    rows = (await conn.execute(query)).all()
    total = len(rows) if limit is None or not count else int(await conn.scalar(counting) or 0)
    return [booking_from_row(row) for row in rows], total


async def bookings_after(
    conn: DbConnection, where: BookingFilter, after: tuple[Any, ...] | None, limit: int
) -> list[Booking]:
    """The next `limit` matching bookings after the key `after` (None: from the first), in the
    order of `find_bookings` (bookings on a slot, then those without one): exports read a
    result of any size batch by batch. A booking's key is `export_key`."""
    clauses = _clauses(where)
    dated = bookings.c.slot_start.is_not(None)
    if after is None:
        query = select(bookings).where(*clauses, dated)
    elif after[0] is not None:
        columns = (bookings.c.slot_start, bookings.c.created_at, bookings.c.id)
        key = tuple_(*(literal(v, c.type) for v, c in zip(after, columns, strict=True)))
        query = select(bookings).where(*clauses, dated, tuple_(*columns) > key)
    else:
        query = None
    order = (bookings.c.slot_start, bookings.c.created_at, bookings.c.id)
    found: list[Booking] = []
    if query is not None:
        found = [booking_from_row(r) for r in await conn.execute(query.order_by(*order).limit(limit))]
    if len(found) < limit:
        undated = [*clauses, bookings.c.slot_start.is_(None)]
        if after is not None and after[0] is None:
            since = tuple_(
                literal(after[1], bookings.c.created_at.type), literal(after[2], bookings.c.id.type)
            )
            undated.append(tuple_(bookings.c.created_at, bookings.c.id) > since)
        rows = await conn.execute(
            select(bookings)
            .where(*undated)
            .order_by(bookings.c.created_at, bookings.c.id)
            .limit(limit - len(found))
        )
        found.extend(booking_from_row(r) for r in rows)
    return found


def export_key(booking: Booking) -> tuple[Any, ...]:
    return (booking.slot_start, booking.created_at, booking.id)


# Hot statements are built once, with bind parameters: building and hashing an expression
# costs more than running it on SQLite. `HOLDING_NOW` needs the parameter "now".
HOLDING_NOW = and_(
    bookings.c.test_mode.is_(False),
    or_(
        bookings.c.status.in_([literal(s.value) for s in HOLDING]),
        and_(bookings.c.status == BookingStatus.ON_HOLD.value, bookings.c.expires_at > bindparam("now")),
    ),
)
IN_OPTION = and_(
    bookings.c.product_id == bindparam("product_id"), bookings.c.option_id == bindparam("option_id")
)
NOT_EXCLUDED = bookings.c.id != bindparam("excluding")
_HELD_PLACES = (
    select(slot_holds.c.availability_id, func.sum(slot_holds.c.pax))
    .where(
        slot_holds.c.product_id == bindparam("product_id"),
        slot_holds.c.option_id == bindparam("option_id"),
        slot_holds.c.slot_start >= bindparam("first"),
        slot_holds.c.slot_start <= bindparam("last"),
        slot_holds.c.until > bindparam("now"),
    )
    .group_by(slot_holds.c.availability_id)
)
# Leaving one booking out: from the bookings themselves.
_HELD_PLACES_EXCLUDING = (
    select(bookings.c.availability_id, func.sum(bookings.c.pax))
    .where(
        IN_OPTION,
        bookings.c.slot_start >= bindparam("first"),
        bookings.c.slot_start <= bindparam("last"),
        HOLDING_NOW,
        NOT_EXCLUDED,
    )
    .group_by(bookings.c.availability_id)
)


async def held_places(
    conn: DbConnection,
    product_id: str,
    option_id: str,
    first: datetime,
    last: datetime,
    now: datetime,
    *,
    excluding: str | None = None,
) -> dict[str, int]:
    """Places held per availability id for slots starting in [first, last]: one query (from
    slot_holds; leaving out the booking `excluding`, from the bookings)."""
    parameters = {"product_id": product_id, "option_id": option_id, "first": first, "last": last, "now": now}
    if excluding is None:
        rows = await conn.execute(_HELD_PLACES, parameters)
    else:
        rows = await conn.execute(_HELD_PLACES_EXCLUDING, {**parameters, "excluding": excluding})
    return {row[0]: int(row[1]) for row in rows if row[1]}


# What a catalogue import's check reads of a booking (domain.catalog_changes.HeldBooking).
_HELD_BOOKING_COLUMNS = (
    "supplier_reference", "reseller_reference", "status", "test_mode", "expires_at", "product_id",
    "option_id", "availability_id", "slot_start", "slot_end", "local_date", "pax", "unit_items",
    "rental_duration_id", "resource_allocations",
)  # fmt: skip
_HOLDING_SINCE = (
    select(*(bookings.c[name] for name in _HELD_BOOKING_COLUMNS))
    .where(
        HOLDING_NOW,
        or_(
            bookings.c.slot_start.is_(None),
            bookings.c.slot_start >= bindparam("since"),
            bookings.c.slot_end > bindparam("since"),
        ),
    )
    .order_by(bookings.c.slot_start, bookings.c.created_at, bookings.c.id)
)


async def holding_places_since(conn: DbConnection, since: datetime, now: datetime) -> list[HeldBooking]:
    """Bookings that hold places at `now`: on departures from `since` on, rentals still out
    then, and those without a date (a catalogue import checks what it takes from them). Only
    the columns the check reads: a whole `Booking` of each took a worker 60-90 MB at its peak
    with 17,000 of them, and kept a third of it as a fragmented heap."""
    return [
        HeldBooking(
            supplier_reference=row[0],
            reseller_reference=row[1],
            status=BookingStatus(row[2]),
            test_mode=row[3],
            expires_at=row[4],
            product_id=row[5],
            option_id=row[6],
            availability_id=row[7],
            slot_start=row[8],
            slot_end=row[9],
            local_date=date.fromisoformat(row[10]) if row[10] else None,
            pax=row[11],
            unit_ids=tuple(item["unitId"] for item in row[12]),
            rental_duration_id=row[13],
            resource_allocations=tuple(Allocation.from_document(a) for a in row[14] or ()),
        )
        for row in await conn.execute(_HOLDING_SINCE, {"since": since, "now": now})
    ]


async def due_holds(conn: DbConnection, now: datetime, limit: int) -> list[Booking]:
    query = (
        select(bookings)
        .where(
            bookings.c.status == BookingStatus.ON_HOLD.value,
            bookings.c.expires_at <= now,
            bookings.c.order_id.is_(None),  # an order's holds expire with it, the order locked first
        )
        .order_by(bookings.c.expires_at)
        .limit(limit)
    )
    if conn.dialect.name == "postgresql":
        query = query.with_for_update(skip_locked=True)
    due = [booking_from_row(row) for row in await conn.execute(query)]
    # The oldest first, answered in the order of their count rows: holds that ran out at the
    # same second share a row per slot, and two sweeps expiring different holds of the same
    # slots must take those rows in one order, as every writer does (`_count_holds`), or each
    # waits for the other (a deadlock, seen with four processes sweeping at once).
    return sorted(due, key=lambda b: (b.product_id, b.option_id, b.availability_id or "", b.expires_at))


async def events_of(conn: DbConnection, booking_id: str) -> list[dict[str, Any]]:
    rows = await conn.execute(
        select(booking_events).where(booking_events.c.booking_id == booking_id).order_by(booking_events.c.id)
    )
    return [
        {"at": format_utc_or_none(row.at), "kind": row.kind, "actor": row.actor, "detail": row.detail}
        for row in rows
    ]


async def confirmations_per_hour(
    conn: DbConnection, since: datetime, until: datetime
) -> list[tuple[datetime, str, int]]:
    """(UTC hour, connection id, bookings) of the bookings confirmed in [since, until), cancelled
    since or not (test bookings left out),
    counted per hour in the database (the caller's days may start at any whole hour)."""
    confirmed = bookings.c.confirmed_at
    hour: ColumnElement[str]
    if conn.dialect.name == "postgresql":
        hour = func.to_char(func.date_trunc("hour", confirmed), "YYYY-MM-DD HH24")
    else:
        hour = func.strftime("%Y-%m-%d %H", confirmed)
    query = (
        select(hour.label("hour"), bookings.c.connection_id, func.count().label("confirmed"))
        .where(confirmed >= since, confirmed < until, bookings.c.test_mode.is_(False))
        .group_by(hour, bookings.c.connection_id)
    )
    rows = await conn.execute(query)
    return [
        (
            datetime.strptime(row.hour, "%Y-%m-%d %H").replace(tzinfo=UTC),
            row.connection_id,
            int(row.confirmed),
        )
        for row in rows
    ]
