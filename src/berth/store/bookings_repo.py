"""Bookings on the hot path of a write: a booking's row and its first event, the places it
counts in `slot_holds`, slot and booking locks, and its history. Reads and lists are in
`bookings_reads`; PostgreSQL's one-call statements of a reservation in `bookings_one_call`."""

from __future__ import annotations

from collections.abc import Iterable
from datetime import date, datetime
from typing import Any, NamedTuple

from sqlalchemy import (
    Integer,
    String,
    and_,
    bindparam,
    delete,
    exists,
    func,
    insert,
    or_,
    select,
    tuple_,
    update,
)
from sqlalchemy.dialects.postgresql import insert as pg_insert
from sqlalchemy.dialects.sqlite import insert as sqlite_insert
from sqlalchemy.sql.elements import ColumnElement

from berth.domain.bookings import (
    Booking,
    BookingStatus,
    Cancellation,
    Contact,
    PlaceHold,
    UnitItem,
    place_hold,
)  # fmt: skip
from berth.domain.price_lines import lines_from_document, lines_to_document
from berth.domain.resources import Allocation
from berth.domain.times import format_utc_or_none
from berth.store import driver
from berth.store.connection import DbConnection, held_in_transaction
from berth.store.driver import Prepared
from berth.store.one_call import one_call
from berth.store.tables import (
    booking_events,
    bookings,
    departure_overrides,
    slot_holds,
    slot_locks,
)
from berth.store.types import UTCDateTime


def _parse_utc(value: str | None) -> datetime | None:
    return datetime.strptime(value, "%Y-%m-%dT%H:%M:%S%z") if value else None


def row_values(booking: Booking) -> dict[str, Any]:
    return {
        "id": booking.id,
        "connection_id": booking.connection_id,
        "uuid": booking.uuid,
        "test_mode": booking.test_mode,
        "status": booking.status.value,
        "product_id": booking.product_id,
        "option_id": booking.option_id,
        "availability_id": booking.availability_id,
        "slot_start": booking.slot_start,
        "local_date": booking.local_date.isoformat() if booking.local_date else None,
        "pax": booking.pax,
        "reseller_reference": booking.reseller_reference,
        "supplier_reference": booking.supplier_reference,
        "notes": booking.notes,
        "contact": booking.contact.to_document(),
        "unit_items": [item.to_document() for item in booking.unit_items],
        "currency": booking.currency,
        "freesale": booking.freesale,
        "request_fingerprint": booking.request_fingerprint,
        "created_at": booking.created_at,
        "updated_at": booking.updated_at,
        "expires_at": booking.expires_at,
        "confirmed_at": booking.confirmed_at,
        "redeemed_at": booking.redeemed_at,
        "cancellation": (
            {
                "refund": booking.cancellation.refund,
                "reason": booking.cancellation.reason,
                "at": format_utc_or_none(booking.cancellation.at),
            }
            if booking.cancellation
            else None
        ),
        "order_id": booking.order_id,
        "is_primary": booking.primary,
        "order_position": booking.order_position,
        "rental_duration_id": booking.rental_duration_id,
        "slot_end": booking.slot_end,
        "package_booking_id": booking.package_booking_id,
        "package_include_id": booking.package_include_id,
        "rejection": (
            {"reason": booking.rejection_reason, "at": format_utc_or_none(booking.rejected_at)}
            if booking.rejected_at
            else None
        ),
        "resource_allocations": [a.to_document() for a in booking.resource_allocations],
        "extensions": booking.extensions or None,
        "price_lines": lines_to_document(booking.price_lines),
    }


def booking_from_row(row: Any) -> Booking:
    cancellation = row.cancellation
    rejection = row.rejection
    cancelled_at = _parse_utc(cancellation["at"]) if cancellation else None
    return Booking(
        id=row.id,
        uuid=row.uuid,
        connection_id=row.connection_id,
        test_mode=row.test_mode,
        status=BookingStatus(row.status),
        product_id=row.product_id,
        option_id=row.option_id,
        availability_id=row.availability_id,
        slot_start=row.slot_start,
        local_date=date.fromisoformat(row.local_date) if row.local_date else None,
        pax=row.pax,
        reseller_reference=row.reseller_reference,
        supplier_reference=row.supplier_reference,
        notes=row.notes,
        contact=Contact.from_document(row.contact),
        unit_items=tuple(UnitItem.from_document(item) for item in row.unit_items),
        currency=row.currency,
        freesale=row.freesale,
        request_fingerprint=row.request_fingerprint,
        created_at=row.created_at,
        updated_at=row.updated_at,
        expires_at=row.expires_at,
        confirmed_at=row.confirmed_at,
        redeemed_at=row.redeemed_at,
        cancellation=(
            Cancellation(refund=cancellation["refund"], reason=cancellation["reason"], at=cancelled_at)
            if cancellation and cancelled_at
            else None
        ),
        rejection_reason=rejection["reason"] if rejection else None,
        rejected_at=_parse_utc(rejection["at"]) if rejection else None,
        order_id=row.order_id,
        primary=row.is_primary,
        order_position=row.order_position,
        rental_duration_id=row.rental_duration_id,
        slot_end=row.slot_end,
        package_booking_id=row.package_booking_id,
        package_include_id=row.package_include_id,
        resource_allocations=tuple(Allocation.from_document(a) for a in row.resource_allocations or ()),
        extensions=dict(row.extensions or {}),
        price_lines=lines_from_document(row.price_lines),
    )


_HOLD_KEY = ("product_id", "option_id", "availability_id", "until")


def _add_to_holds(dialect: str) -> Any:
    """Upsert into slot_holds adding "pax" (negative to take away) to the row's count."""
    statement = (pg_insert if dialect == "postgresql" else sqlite_insert)(slot_holds)
    return statement.on_conflict_do_update(
        index_elements=list(_HOLD_KEY), set_={"pax": slot_holds.c.pax + statement.excluded.pax}
    )


_ADD_TO_HOLDS = {dialect: _add_to_holds(dialect) for dialect in ("sqlite", "postgresql")}
_HOLD_COLUMNS = (*_HOLD_KEY, "slot_start", "pax")


def _move_holds(dialect: str) -> Any:
    """Two rows of `_add_to_holds` in one statement (a booking's places leaving one count for
    another, e.g. a confirmed hold: from its expiry's count to the one held for good)."""
    rows = [
        {name: bindparam(f"{name}_{n}", type_=slot_holds.c[name].type) for name in _HOLD_COLUMNS}
        for n in (0, 1)
    ]
    statement = (pg_insert if dialect == "postgresql" else sqlite_insert)(slot_holds).values(rows)
    return statement.on_conflict_do_update(
        index_elements=list(_HOLD_KEY), set_={"pax": slot_holds.c.pax + statement.excluded.pax}
    )


_MOVE_HOLDS = {dialect: _move_holds(dialect) for dialect in ("sqlite", "postgresql")}
_ADDING = {dialect: Prepared(statement, _HOLD_COLUMNS) for dialect, statement in _ADD_TO_HOLDS.items()}
_MOVING = {dialect: Prepared(statement) for dialect, statement in _MOVE_HOLDS.items()}


def _hold_rows(before: Booking | None, after: Booking | None) -> list[dict[str, Any]]:
    """The slot_holds rows that move the booking's places from what `before` counted to what
    `after` does, each with the places it adds (negative: takes away), in key order."""
    changes: dict[tuple[str, str, str, datetime], tuple[datetime, int]] = {}
    for hold, sign in (
        (place_hold(before) if before else None, -1),
        (place_hold(after) if after else None, 1),
    ):
        if hold is not None:
            key = (hold.product_id, hold.option_id, hold.availability_id, hold.until)
            changes[key] = (hold.slot_start, changes.get(key, (hold.slot_start, 0))[1] + sign * hold.pax)
    return [
        {**dict(zip(_HOLD_KEY, key, strict=True)), "slot_start": slot_start, "pax": pax}
        for key, (slot_start, pax) in sorted(changes.items())
        if pax
    ]


async def _count_holds(conn: DbConnection, before: Booking | None, after: Booking | None) -> None:
    """Move the booking's places in slot_holds from what `before` counted to what `after` does
    (rows in key order, so two writers moving places between the same slots cannot deadlock)."""
    rows = _hold_rows(before, after)
    if len(rows) == 2:
        moved = {f"{name}_{n}": value for n, row in enumerate(rows) for name, value in row.items()}
        await driver.run(conn, _MOVING[conn.dialect.name], moved)
        return
    for row in rows:
        await driver.run(conn, _ADDING[conn.dialect.name], row)


_COLUMN_KEYS = tuple(column.key for column in bookings.c)
_SAVE_BOOKING = Prepared(
    update(bookings).where(bookings.c.id == bindparam("booking_id")),
    [key for key in _COLUMN_KEYS if key != "id"],
)
_BY_UUID = Prepared(
    select(bookings).where(
        bookings.c.connection_id == bindparam("connection_id"), bookings.c.uuid == bindparam("uuid")
    )
)
_ADD_EVENT = Prepared(insert(booking_events), ("booking_id", "at", "kind", "actor", "detail"))


_INSERT_NEW_BOOKING = Prepared(
    sqlite_insert(bookings)
    .on_conflict_do_nothing(index_elements=["connection_id", "uuid"])
    .returning(bookings.c.id),
    _COLUMN_KEYS,
)


# The key under which `insert_new_booking` keeps a booking's row for the one-call statement
# (`bookings_one_call.hold_in_one_call`).
KEPT_BOOKING = "booking"


class FirstEvent(NamedTuple):
    """A new booking's first entry in its history (`booking_events`)."""

    at: datetime
    kind: str
    actor: str
    detail: dict[str, Any]


def new_booking() -> Any:
    """PostgreSQL: the booking's row unless its connection used its uuid, as a CTE."""
    return (
        pg_insert(bookings)
        .values({column.key: bindparam(column.key, type_=column.type) for column in bookings.c})
        .on_conflict_do_nothing(index_elements=["connection_id", "uuid"])
        .returning(bookings.c.id)
        .cte("new_booking")
    )


def first_event_of(new: Any) -> Any:
    """The first event of the booking `new` (a `new_booking`) inserted, if it was."""
    event = booking_events.c
    first = select(
        new.c.id, *(bindparam(f"event_{name}", type_=event[name].type) for name in FirstEvent._fields)
    )
    return insert(booking_events).from_select(["booking_id", *FirstEvent._fields], first)


def _with_first_event() -> Any:
    """PostgreSQL: the booking's row, unless its connection used its uuid, and its first event,
    in one statement (one round trip): the insert is a CTE the event's insert selects from."""
    new = new_booking()
    return first_event_of(new).returning(booking_events.c.booking_id).add_cte(new)


_INSERT_NEW_WITH_FIRST_EVENT = _with_first_event()


async def insert_new_booking(conn: DbConnection, booking: Booking, first: FirstEvent) -> bool:
    """The booking's row and its first event, unless its connection already used its uuid
    (False: nothing written): the uuid check and the insert in one statement (PostgreSQL: the
    event too). Its places count once `hold_if_room` or `count_new_hold` has run."""
    values = row_values(booking)
    call = one_call(conn)
    if call is not None and KEPT_BOOKING not in call.kept:
        call.kept[KEPT_BOOKING] = (values, first)  # for `hold_in_one_call`'s statement
        return True
    if conn.dialect.name == "postgresql":
        event = {f"event_{name}": value for name, value in first._asdict().items()}
        inserted = await conn.execute(_INSERT_NEW_WITH_FIRST_EVENT, {**values, **event})
        return inserted.first() is not None
    if not await driver.fetch(conn, _INSERT_NEW_BOOKING, values):
        return False
    await add_event(conn, booking.id, *first)
    return True


def hold_if_room_statement(dialect: str, reserved: ColumnElement[Any] | None = None) -> Any:
    """Add a new hold to its slot's count if the departure, as staff left it, has room for it:
    the check and the write in one statement. `capacity` is the catalogue's (NULL: no limit),
    staff's own capacity or closing of the departure win over it; `need` is what must be left
    (the hold's places, at least one); `reserved`, places of the departure counted as taken
    besides the holds (other connections' allotment blocks)."""
    held, staff = slot_holds.c, departure_overrides.c
    key = {"product_id": String(), "option_id": String(), "availability_id": String()}
    slot = [held[name] == bindparam(name, type_=kind) for name, kind in key.items()]
    staffs = [staff[name] == bindparam(name, type_=kind) for name, kind in key.items()]
    capacity = func.coalesce(
        select(staff.capacity).where(*staffs).scalar_subquery(), bindparam("capacity", type_=Integer())
    )
    taken = (
        select(func.coalesce(func.sum(held.pax), 0))
        .where(*slot, held.until > bindparam("now", type_=UTCDateTime()))
        .scalar_subquery()
    )
    room = and_(
        ~exists().where(*staffs, staff.closed.is_(True)),
        or_(
            capacity.is_(None),
            taken + bindparam("need", type_=Integer()) + (0 if reserved is None else reserved) <= capacity,
        ),
    )
    row = select(
        *(bindparam(name, type_=kind) for name, kind in key.items()),
        bindparam("until", type_=UTCDateTime()),
        bindparam("slot_start", type_=UTCDateTime()),
        bindparam("pax", type_=Integer()),
    ).where(room)
    statement = (pg_insert if dialect == "postgresql" else sqlite_insert)(slot_holds).from_select(
        [*key, "until", "slot_start", "pax"], row
    )
    return statement.on_conflict_do_update(
        index_elements=list(_HOLD_KEY), set_={"pax": slot_holds.c.pax + statement.excluded.pax}
    ).returning(slot_holds.c.pax)


_HOLD_IF_ROOM = {dialect: Prepared(hold_if_room_statement(dialect)) for dialect in ("sqlite", "postgresql")}


async def hold_if_room(conn: DbConnection, booking: Booking, capacity: int | None, now: datetime) -> bool:
    """Count a new booking's places in its slot if they fit (False: nothing written). The
    caller holds the slot's lock: on PostgreSQL the count read here is only current under it."""
    hold = place_hold(booking)
    if hold is None:
        return True
    parameters = hold_parameters(hold, capacity, now)
    return bool(await driver.fetch(conn, _HOLD_IF_ROOM[conn.dialect.name], parameters))


def hold_parameters(hold: PlaceHold, capacity: int | None, now: datetime) -> dict[str, Any]:
    return {
        "product_id": hold.product_id,
        "option_id": hold.option_id,
        "availability_id": hold.availability_id,
        "until": hold.until,
        "slot_start": hold.slot_start,
        "pax": hold.pax,
        "need": max(hold.pax, 1),
        "capacity": capacity,
        "now": now,
    }


async def count_new_hold(conn: DbConnection, booking: Booking) -> None:
    await _count_holds(conn, None, booking)


async def save_booking(
    conn: DbConnection, booking: Booking, before: Booking, *, move_places: bool = True
) -> None:
    """Store `booking` over `before`, the version read in this transaction (or that version
    as of now: a hold whose time has passed counts nothing either way). Its places move with
    it, unless `move_places` is False: the caller then calls `move_places` itself, later."""
    values = row_values(booking)
    values["booking_id"] = values.pop("id")
    await driver.run(conn, _SAVE_BOOKING, values)
    if move_places:
        await _count_holds(conn, before, booking)


async def move_places(conn: DbConnection, before: Booking, booking: Booking) -> None:
    """`save_booking`'s move of the booking's places, sent on its own: a move that leaves the
    slot's sum as it was (a confirmation's, from its expiry's count to the count held for
    good) can come last in its transaction, so that the count rows it locks, which every
    confirmation of the departure updates, are held for the COMMIT only."""
    await _count_holds(conn, before, booking)


_ENDED = or_(slot_holds.c.until <= bindparam("now"), slot_holds.c.pax == 0)
_HOLD_KEY_COLUMNS = tuple_(*(slot_holds.c[name] for name in _HOLD_KEY))
_FORGET_ENDED = {
    "sqlite": delete(slot_holds).where(_ENDED),
    # Only rows no writer holds: a writer upserts its rows in key order while a plain DELETE
    # locks them in the table's order, and each would wait for the other (a deadlock). A row
    # skipped now is dropped by a later sweep.
    "postgresql": delete(slot_holds).where(
        _HOLD_KEY_COLUMNS.in_(
            select(*(slot_holds.c[name] for name in _HOLD_KEY))
            .where(_ENDED)
            .with_for_update(skip_locked=True)
        )
    ),
}


async def forget_ended_holds(conn: DbConnection, now: datetime) -> None:
    """Drop slot_holds rows that count nothing any more: holds that ran out, emptied counts."""
    await conn.execute(_FORGET_ENDED[conn.dialect.name], {"now": now})


async def get_by_uuid(conn: DbConnection, connection_id: str, uuid: str) -> Booking | None:
    rows = await driver.fetch(conn, _BY_UUID, {"connection_id": connection_id, "uuid": uuid})
    return booking_from_row(rows[0]) if rows else None


_ALONE_BY_UUID_LOCKED = (
    select(bookings)
    .where(
        bookings.c.connection_id == bindparam("connection_id"),
        bookings.c.uuid == bindparam("uuid"),
        bookings.c.order_id.is_(None),
    )
    .with_for_update()
)


async def lock_alone_by_uuid(conn: DbConnection, connection_id: str, uuid: str) -> Booking | None:
    """PostgreSQL: the connection's booking `uuid` read and locked in one statement, if it is
    of no order (an order's bookings are locked after their order; a booking's order never
    changes). None otherwise, and always on SQLite, whose write transaction holds the whole
    database: `get_by_uuid` reads the booking as it stands."""
    if conn.dialect.name != "postgresql":
        return None
    row = (await conn.execute(_ALONE_BY_UUID_LOCKED, {"connection_id": connection_id, "uuid": uuid})).first()
    return None if row is None else booking_from_row(row)


# One statement: a new row is ours until commit; an existing one is locked by the (no-op)
# update, as by SELECT … FOR UPDATE.
_SLOT_ROW = pg_insert(slot_locks).values(
    product_id=bindparam("product_id"),
    option_id=bindparam("option_id"),
    availability_id=bindparam("availability_id"),
)
_LOCK_SLOT = _SLOT_ROW.on_conflict_do_update(
    index_elements=[slot_locks.c.product_id, slot_locks.c.option_id, slot_locks.c.availability_id],
    set_={"product_id": _SLOT_ROW.excluded.product_id},
)


async def lock_slots(conn: DbConnection, keys: Iterable[tuple[str, str, str]]) -> None:
    """Take the PostgreSQL row lock of each slot, creating the row on first use. Keys are
    locked in sorted order so two writers touching the same two slots cannot deadlock.
    (On SQLite the write transaction already holds the database's only write lock.)"""
    if conn.dialect.name != "postgresql":
        return
    # A lock the transaction already holds (an order's slots, locked in one sorted pass first)
    # is not asked for again: one round trip less under the lock.
    held = held_in_transaction(conn)
    for product_id, option_id, availability_id in sorted(set(keys)):
        key = {"product_id": product_id, "option_id": option_id, "availability_id": availability_id}
        if ("slot lock", product_id, option_id, availability_id) not in held:
            await conn.execute(_LOCK_SLOT, key)
            held.add(("slot lock", product_id, option_id, availability_id))


async def lock_booking(conn: DbConnection, booking: Booking) -> Booking:
    """Serialise writers of one booking, read earlier in this transaction, and answer it as it
    stands once locked (PostgreSQL row lock; on SQLite the write transaction has held the
    database's write lock since before the read, so `booking` is current)."""
    if conn.dialect.name != "postgresql":
        return booking
    row = (await conn.execute(select(bookings).where(bookings.c.id == booking.id).with_for_update())).one()
    return booking_from_row(row)


async def add_event(
    conn: DbConnection, booking_id: str, at: datetime, kind: str, actor: str, detail: dict[str, Any]
) -> None:
    await driver.run(
        conn, _ADD_EVENT, {"booking_id": booking_id, "at": at, "kind": kind, "actor": actor, "detail": detail}
    )
