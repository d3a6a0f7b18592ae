"""The feed of availability changes (`tables.availability_changes`): which products and local
dates had their places changed, written in the transaction that changed them, so that each
process drops only the kept answers a commit changed (`berth.services.answers`; the reading side
is `berth.store.change_marks`).

Whatever announces an availability change (`WebhookFanout.slots_changed`: a booking's places,
staff's changes to a departure, an allotment's release) records it here too; what changes every
product's answers (a contract saved) records `EVERYTHING`."""

from __future__ import annotations

import re
from collections.abc import Iterable, Sequence
from datetime import datetime, timedelta
from typing import Any

from sqlalchemy import (
    BigInteger,
    FromClause,
    String,
    Text,
    bindparam,
    cast,
    delete,
    func,
    insert,
    select,
    true,
)
from sqlalchemy.dialects.postgresql import ARRAY

from berth.store.change_marks import Change
from berth.store.connection import DbConnection
from berth.store.driver import Prepared
from berth.store.driver import run as driver_run
from berth.store.one_call import one_call
from berth.store.tables import availability_changes
from berth.store.types import UTCDateTime

# Rows are dropped after this long: readers that have not looked for longer than
# `change_marks.READER_PATIENCE` treat everything as changed anyway.
KEEP_FOR = timedelta(minutes=10)

KEPT_CHANGES = "availability changes"
_DAY = re.compile(r"\d{4}-\d{2}-\d{2}")


def local_date_of(availability_id: str) -> str | None:
    """The local date an availability id starts on (`YYYY-MM-DDTHH:MM:SS±HH:MM`, the slot's own
    offset), or None (every day) for an id of another form."""
    day = availability_id[:10]
    return day if _DAY.fullmatch(day) else None


def changes_of(slots: Iterable[tuple[str, str, str]]) -> list[Change]:
    """The changes of the slots (product id, option id, availability id), once each."""
    return list(dict.fromkeys((product_id, local_date_of(slot_id)) for product_id, _, slot_id in slots))


_XID = cast(cast(func.pg_current_xact_id(), Text), BigInteger)


def insert_from_arrays(only_with: FromClause | None = None) -> Any:
    """PostgreSQL: insert the changes given as two arrays (`changes_products`, `changes_dates`),
    each with the writing transaction's id; `only_with`: once per row of it (none if it has
    none: a CTE of a row maybe written)."""
    given = (
        func.unnest(
            bindparam("changes_products", type_=ARRAY(String())),
            bindparam("changes_dates", type_=ARRAY(String())),
        )
        .table_valued("product_id", "local_date")
        .render_derived()
    )
    rows = select(given.c.product_id, given.c.local_date, _XID, bindparam("changes_at", type_=UTCDateTime()))
    if only_with is not None:
        rows = rows.select_from(only_with).join(given, true())
    return insert(availability_changes).from_select(["product_id", "local_date", "xid", "changed_at"], rows)


_POSTGRES_INSERT = insert_from_arrays()
_SQLITE_INSERT = Prepared(insert(availability_changes), ("product_id", "local_date", "changed_at"))


def array_parameters(changes: Sequence[Change], now: datetime) -> dict[str, Any]:
    return {
        "changes_products": [product for product, _ in changes],
        "changes_dates": [day for _, day in changes],
        "changes_at": now,
    }


async def record(conn: DbConnection, changes: Sequence[Change], now: datetime) -> None:
    """Record `changes` in the transaction of `conn` (under `Database.one_call`: kept for the
    block's one statement)."""
    if not changes:
        return
    call = one_call(conn)
    if call is not None and KEPT_CHANGES not in call.kept:
        call.kept[KEPT_CHANGES] = list(changes)
        return
    if conn.dialect.name == "postgresql":
        await conn.execute(_POSTGRES_INSERT, array_parameters(changes, now))
        return
    for product_id, day in changes:
        await driver_run(
            conn, _SQLITE_INSERT, {"product_id": product_id, "local_date": day, "changed_at": now}
        )


async def forget_old(conn: DbConnection, now: datetime) -> None:
    """Drop the rows older than `KEEP_FOR`: those before the first younger one, by id (the
    old rows alone are read, then deleted by the primary key)."""
    table = availability_changes.c
    first_kept = (
        select(table.id)
        .where(table.changed_at >= now - KEEP_FOR)
        .order_by(table.id)
        .limit(1)
        .scalar_subquery()
    )
    after_last = select(func.max(table.id) + 1).scalar_subquery()
    await conn.execute(delete(availability_changes).where(table.id < func.coalesce(first_kept, after_last)))
