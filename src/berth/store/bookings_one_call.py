"""A reservation's write on PostgreSQL in one round trip: the lock, the check of places and
the new hold in one statement (`lock_and_hold_if_room`, `lock_and_hold_reserving` beside other
connections' blocks), or the booking's row, its first event and its hold as one statement sent
by `Database.one_call` (`hold_in_one_call`)."""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime
from typing import Any

from sqlalchemy import (
    Integer,
    String,
    bindparam,
    exists,
    func,
    insert,
    select,
    text,
    true,
)
from sqlalchemy.dialects.postgresql import ARRAY, JSONB
from sqlalchemy.sql.elements import ColumnElement

from berth.domain.bookings import (
    Booking,
    PlaceHold,
    place_hold,
)  # fmt: skip
from berth.store import availability_changes_repo
from berth.store.bookings_repo import (
    KEPT_BOOKING,
    first_event_of,
    hold_if_room,
    hold_if_room_statement,
    hold_parameters,
    lock_slots,
    new_booking,
)
from berth.store.connection import DbConnection, held_in_transaction
from berth.store.deliveries_repo import KEPT_OUTBOX
from berth.store.one_call import one_call
from berth.store.tables import (
    outbox,
    webhooks,
)
from berth.store.types import UTCDateTime


def hold_if_room_reserving(dialect: str, reserved: ColumnElement[Any]) -> Any:
    """The statement of `hold_if_room` where `reserved` places besides the holds are taken;
    for `lock_and_hold_reserving` (built once per shape by its caller: building one costs more
    than running it)."""
    return hold_if_room_statement(dialect, reserved)


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
        parameters = {**hold_parameters(hold, capacity, now), **reserving.parameters}
        return (await conn.execute(reserving.statement, parameters)).first() is not None
    held_in_transaction(conn).add(("slot lock", *lock_key))
    arguments = {
        **hold_parameters(hold, capacity, now),
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
    return await conn.scalar(_LOCK_AND_HOLD, hold_parameters(hold, capacity, now)) is not None


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
    new = new_booking()
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
        .add_cte(first_event_of(new).cte("first_event"), announced.cte("announced"), changed.cte("changed"))
    )


# berth_hold_or_refuse's arguments: a hold's row, then what `hold_if_room` checks it against.
_HOLD_KINDS = (
    ("product_id", String()), ("option_id", String()), ("availability_id", String()),
    ("until", UTCDateTime()), ("slot_start", UTCDateTime()), ("pax", Integer()),
    ("capacity", Integer()), ("need", Integer()), ("now", UTCDateTime()),
)  # fmt: skip
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
    kept = call.kept.get(KEPT_BOOKING)
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
        **{f"hold_{name}": value for name, value in hold_parameters(hold, capacity, now).items()},
    }
    call.close(_RESERVE_IN_ONE_STATEMENT, parameters)
    held_in_transaction(conn).add(("slot lock", *lock_key))
    return True
