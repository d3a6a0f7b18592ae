"""Bookings, the places they hold, slot locks and booking history."""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass
from datetime import UTC, date, datetime
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
    literal,
    or_,
    select,
    text,
    true,
    tuple_,
    update,
)
from sqlalchemy.dialects.postgresql import ARRAY, JSONB
from sqlalchemy.dialects.postgresql import insert as pg_insert
from sqlalchemy.dialects.sqlite import insert as sqlite_insert
from sqlalchemy.sql.elements import ColumnElement

from berth.domain.bookings import (
    HOLDING,
    Booking,
    BookingStatus,
    Cancellation,
    Contact,
    PlaceHold,
    UnitItem,
    place_hold,
)  # fmt: skip
from berth.domain.catalog_changes import HeldBooking
from berth.domain.price_lines import lines_from_document, lines_to_document
from berth.domain.resources import Allocation
from berth.domain.times import format_utc_or_none
from berth.store import availability_changes_repo, driver
from berth.store.database import DbConnection, held_in_transaction, one_call
from berth.store.deliveries_repo import KEPT_OUTBOX
from berth.store.driver import Prepared
from berth.store.tables import (
    booking_events,
    bookings,
    departure_overrides,
    outbox,
    slot_holds,
    slot_locks,
    webhooks,
)
from berth.store.types import UTCDateTime


def _parse_utc(value: str | None) -> datetime | None:
    return datetime.strptime(value, "%Y-%m-%dT%H:%M:%S%z") if value else None


def _row_values(booking: Booking) -> dict[str, Any]:
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


class FirstEvent(NamedTuple):
    """A new booking's first entry in its history (`booking_events`)."""

    at: datetime
    kind: str
    actor: str
    detail: dict[str, Any]


def _new_booking() -> Any:
    """PostgreSQL: the booking's row unless its connection used its uuid, as a CTE."""
    return (
        pg_insert(bookings)
        .values({column.key: bindparam(column.key, type_=column.type) for column in bookings.c})
        .on_conflict_do_nothing(index_elements=["connection_id", "uuid"])
        .returning(bookings.c.id)
        .cte("new_booking")
    )


def _first_event_of(new: Any) -> Any:
    """The first event of the booking `new` (a `_new_booking`) inserted, if it was."""
    event = booking_events.c
    first = select(
        new.c.id, *(bindparam(f"event_{name}", type_=event[name].type) for name in FirstEvent._fields)
    )
    return insert(booking_events).from_select(["booking_id", *FirstEvent._fields], first)


def _with_first_event() -> Any:
    """PostgreSQL: the booking's row, unless its connection used its uuid, and its first event,
    in one statement (one round trip): the insert is a CTE the event's insert selects from."""
    new = _new_booking()
    return _first_event_of(new).returning(booking_events.c.booking_id).add_cte(new)


_INSERT_NEW_WITH_FIRST_EVENT = _with_first_event()


async def insert_new_booking(conn: DbConnection, booking: Booking, first: FirstEvent) -> bool:
    """The booking's row and its first event, unless its connection already used its uuid
    (False: nothing written): the uuid check and the insert in one statement (PostgreSQL: the
    event too). Its places count once `hold_if_room` or `count_new_hold` has run."""
    values = _row_values(booking)
    call = one_call(conn)
    if call is not None and _KEPT_BOOKING not in call.kept:
        call.kept[_KEPT_BOOKING] = (values, first)  # for `hold_in_one_call`'s statement
        return True
    if conn.dialect.name == "postgresql":
        event = {f"event_{name}": value for name, value in first._asdict().items()}
        inserted = await conn.execute(_INSERT_NEW_WITH_FIRST_EVENT, {**values, **event})
        return inserted.first() is not None
    if not await driver.fetch(conn, _INSERT_NEW_BOOKING, values):
        return False
    await add_event(conn, booking.id, *first)
    return True


def _hold_if_room(dialect: str, reserved: ColumnElement[Any] | None = None) -> Any:
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


_HOLD_IF_ROOM = {dialect: Prepared(_hold_if_room(dialect)) for dialect in ("sqlite", "postgresql")}


async def hold_if_room(conn: DbConnection, booking: Booking, capacity: int | None, now: datetime) -> bool:
    """Count a new booking's places in its slot if they fit (False: nothing written). The
    caller holds the slot's lock: on PostgreSQL the count read here is only current under it."""
    hold = place_hold(booking)
    if hold is None:
        return True
    parameters = _hold_parameters(hold, capacity, now)
    return bool(await driver.fetch(conn, _HOLD_IF_ROOM[conn.dialect.name], parameters))


def _hold_parameters(hold: PlaceHold, capacity: int | None, now: datetime) -> dict[str, Any]:
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


def hold_if_room_reserving(dialect: str, reserved: ColumnElement[Any]) -> Any:
    """The statement of `hold_if_room` where `reserved` places besides the holds are taken;
    for `lock_and_hold_reserving` (built once per shape by its caller: building one costs more
    than running it)."""
    return _hold_if_room(dialect, reserved)


async def lock_and_hold_reserving(
    conn: DbConnection,
    lock_key: tuple[str, str, str],
    booking: Booking,
    capacity: int | None,
    now: datetime,
    reserving: Reserving,
) -> bool:
    """`lock_and_hold_if_room` where other connections' allotment blocks are counted as taken
    (`reserving`). On PostgreSQL in one round trip (the function of migration 0032) when the
    lock is the hold's own slot and not yet held by the transaction; else the lock, then the
    `hold_if_room_reserving` statement."""
    hold = _hold_taking_its_lock(conn, lock_key, booking) if conn.dialect.name == "postgresql" else None
    if hold is None:
        hold = place_hold(booking)
        if hold is None:
            return True
        await lock_slots(conn, [lock_key])
        parameters = {**_hold_parameters(hold, capacity, now), **reserving.parameters}
        return (await conn.execute(reserving.statement, parameters)).first() is not None
    held_in_transaction(conn).add(("slot lock", *lock_key))
    arguments = {
        **_hold_parameters(hold, capacity, now),
        "block_connections": [connection_id for connection_id, _ in reserving.blocks],
        "block_places": [places for _, places in reserving.blocks],
        "block_day": reserving.day,
    }
    return await conn.scalar(_LOCK_AND_HOLD_RESERVING, arguments) is not None


@dataclass(frozen=True)
class Reserving:
    """Other connections' blocks (connection id, places) on a departure of `day`, for
    `lock_and_hold_reserving`: as a `hold_if_room_reserving` statement with its parameters, and
    as the arguments of the PostgreSQL function."""

    blocks: tuple[tuple[str, int], ...]
    day: str
    statement: Any
    parameters: dict[str, Any]


_LOCK_AND_HOLD_RESERVING = text(
    "SELECT berth_lock_and_hold_reserving(:product_id, :option_id, :availability_id, :until, :slot_start, "
    ":pax, :capacity, :need, :now, :block_connections, :block_places, :block_day)"
).bindparams(
    bindparam("until", type_=UTCDateTime()),
    bindparam("slot_start", type_=UTCDateTime()),
    bindparam("now", type_=UTCDateTime()),
    bindparam("block_connections", type_=ARRAY(String())),
    bindparam("block_places", type_=ARRAY(Integer())),
)


_LOCK_AND_HOLD = text(
    "SELECT berth_lock_and_hold(:product_id, :option_id, :availability_id, :until, :slot_start, :pax, "
    ":capacity, :need, :now)"
).bindparams(
    bindparam("until", type_=UTCDateTime()),
    bindparam("slot_start", type_=UTCDateTime()),
    bindparam("now", type_=UTCDateTime()),
)


async def lock_and_hold_if_room(
    conn: DbConnection, lock_key: tuple[str, str, str], booking: Booking, capacity: int | None, now: datetime
) -> bool:
    """Take the slot's lock (`lock_slots`), then `hold_if_room`. On PostgreSQL both in one
    round trip (the function of migration 0024) when the lock is the hold's own slot and not
    yet held by the transaction; the lock is then held for that round trip and the COMMIT."""
    hold = _hold_taking_its_lock(conn, lock_key, booking) if conn.dialect.name == "postgresql" else None
    if hold is None:
        await lock_slots(conn, [lock_key])
        return await hold_if_room(conn, booking, capacity, now)
    held_in_transaction(conn).add(("slot lock", *lock_key))
    return await conn.scalar(_LOCK_AND_HOLD, _hold_parameters(hold, capacity, now)) is not None


def _hold_taking_its_lock(
    conn: DbConnection, lock_key: tuple[str, str, str], booking: Booking
) -> PlaceHold | None:
    """The booking's hold, when one statement may take its slot's lock along with it: the lock
    is the hold's own slot, and the transaction does not hold it yet (an order locks its
    slots first, in one sorted pass)."""
    hold = place_hold(booking)
    if (
        hold is None
        or ("slot lock", *lock_key) in held_in_transaction(conn)
        or lock_key != (hold.product_id, hold.option_id, hold.availability_id)
    ):
        return None
    return hold


def _reserve_in_one_statement() -> Any:
    """PostgreSQL, a reservation under `Database.one_call`: the booking's row (unless its
    connection used its uuid: then nothing at all), its first event, its outbox rows (only
    while an enabled webhook listens to their event), its availability changes, and last the departure's lock, check and
    hold (`berth_hold_or_refuse`, migration 0025: refusing raises, and the statement is undone).
    Bound parameters only. A row answered: it was all written."""
    new = _new_booking()
    subjects = func.jsonb_array_elements(bindparam("outbox_subjects", type_=JSONB())).table_valued("value")
    listened = exists().where(webhooks.c.event == bindparam("outbox_event"), webhooks.c.disabled_at.is_(None))
    rows = select(
        bindparam("outbox_event", type_=String()),
        subjects.c.value,
        bindparam("outbox_at", type_=UTCDateTime()),
    )
    announced = insert(outbox).from_select(
        ["event", "subject", "created_at"], rows.select_from(new).join(subjects, true()).where(listened)
    )
    changed = availability_changes_repo.insert_from_arrays(only_with=new)
    hold = func.berth_hold_or_refuse(*(bindparam(f"hold_{name}", type_=kind) for name, kind in _HOLD_KINDS))
    return (
        select(hold)
        .select_from(new)
        .add_cte(_first_event_of(new).cte("first_event"), announced.cte("announced"), changed.cte("changed"))
    )


# berth_hold_or_refuse's arguments: a hold's row, then what `hold_if_room` checks it against.
_HOLD_KINDS = (
    ("product_id", String()), ("option_id", String()), ("availability_id", String()),
    ("until", UTCDateTime()), ("slot_start", UTCDateTime()), ("pax", Integer()),
    ("capacity", Integer()), ("need", Integer()), ("now", UTCDateTime()),
)  # fmt: skip
_KEPT_BOOKING = "booking"
_RESERVE_IN_ONE_STATEMENT = _reserve_in_one_statement()


def hold_in_one_call(
    conn: DbConnection, lock_key: tuple[str, str, str], booking: Booking, capacity: int | None, now: datetime
) -> bool:
    """`lock_and_hold_if_room` as the last part of a reservation's one statement
    (`Database.one_call`), which then carries the booking's row, first event and outbox rows
    kept before it: the departure's lock is held for the server's time alone. Where the block
    is not one call, or the booking's row was not kept, or the lock is not the hold's own slot
    or is held already: False, with nothing done. The statement raises OneCallRefused if there
    is no room."""
    call = one_call(conn)
    hold = _hold_taking_its_lock(conn, lock_key, booking) if call is not None else None
    if call is None or hold is None:
        return False
    kept = call.kept.get(_KEPT_BOOKING)
    if kept is None or kept[0]["id"] != booking.id:
        return False
    row, first = kept
    event_name, subjects, at = call.kept.get(KEPT_OUTBOX, ("", [], now))
    changes = call.kept.get(availability_changes_repo.KEPT_CHANGES, [])
    parameters = {
        **row,
        **availability_changes_repo.array_parameters(changes, now),
        **{f"event_{name}": value for name, value in first._asdict().items()},
        "outbox_event": event_name,
        "outbox_subjects": subjects,
        "outbox_at": at,
        **{f"hold_{name}": value for name, value in _hold_parameters(hold, capacity, now).items()},
    }
    call.close(_RESERVE_IN_ONE_STATEMENT, parameters)
    held_in_transaction(conn).add(("slot lock", *lock_key))
    return True


async def count_new_hold(conn: DbConnection, booking: Booking) -> None:
    await _count_holds(conn, None, booking)


async def save_booking(
    conn: DbConnection, booking: Booking, before: Booking, *, move_places: bool = True
) -> None:
    """Store `booking` over `before`, the version read in this transaction (or that version
    as of now: a hold whose time has passed counts nothing either way). Its places move with
    it, unless `move_places` is False: the caller then calls `move_places` itself, later."""
    values = _row_values(booking)
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


async def add_event(
    conn: DbConnection, booking_id: str, at: datetime, kind: str, actor: str, detail: dict[str, Any]
) -> None:
    await driver.run(
        conn, _ADD_EVENT, {"booking_id": booking_id, "at": at, "kind": kind, "actor": actor, "detail": detail}
    )


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
