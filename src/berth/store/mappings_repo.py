"""Mapping rows. Reseller uploads and the supplier's resolution write disjoint columns, so
neither can overwrite the other's side of a row."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from sqlalchemy import (
    ColumnElement,
    and_,
    bindparam,
    case,
    delete,
    false,
    func,
    insert,
    or_,
    select,
    true,
    update,
)

from berth.domain.mappings import DEFAULT_OPTION, MappedRows, MappingFilter, MappingRow, notification_target
from berth.store.connection import DbConnection
from berth.store.deliveries_repo import Delivery, delivery_from_row
from berth.store.tables import connections, deliveries, mappings

c = mappings.c

# A row waits for the supplier until it has a product, and an option and a unit where required.
PENDING: ColumnElement[bool] = or_(
    c.product_id.is_(None),
    and_(c.option_required == true(), c.option_id.is_(None)),
    and_(c.unit_required == true(), c.unit_id.is_(None)),
)


def _row(row: Any) -> MappingRow:
    return MappingRow(
        id=row.id,
        connection_id=row.connection_id,
        position=row.position,
        reseller_reference=row.reseller_reference,
        reseller_status=row.reseller_status,
        reseller_product=row.reseller_product,
        option_required=row.option_required,
        unit_required=row.unit_required,
        validity_days=row.validity_days,
        webhook_url=row.webhook_url,
        product_id=row.product_id,
        option_id=row.option_id,
        unit_id=row.unit_id,
        created_at=row.created_at,
        updated_at=row.updated_at,
        mapped_at=row.mapped_at,
    )


def _reseller_side(row: MappingRow) -> dict[str, Any]:
    return {
        "position": row.position,
        "reseller_status": row.reseller_status,
        "reseller_product": row.reseller_product,
        "option_required": row.option_required,
        "unit_required": row.unit_required,
        "validity_days": row.validity_days,
        "webhook_url": row.webhook_url,
        "updated_at": row.updated_at,
    }


async def lock_connection(conn: DbConnection, connection_id: str) -> None:
    """Serialise uploads of one connection (PostgreSQL; SQLite's write transaction already
    does). FOR NO KEY UPDATE: rows that reference the connection (bookings, deliveries) can
    still be inserted meanwhile."""
    await conn.execute(
        select(connections.c.id).where(connections.c.id == connection_id).with_for_update(key_share=True)
    )


async def connection_rows(
    conn: DbConnection, connection_id: str, *, for_update: bool = False
) -> list[MappingRow]:
    query = select(mappings).where(c.connection_id == connection_id).order_by(c.position, c.id)
    if for_update:
        query = query.with_for_update()
    return [_row(row) for row in await conn.execute(query)]


async def insert_rows(conn: DbConnection, rows: Sequence[MappingRow]) -> None:
    if rows:
        await conn.execute(
            insert(mappings),
            [
                {
                    "id": row.id,
                    "connection_id": row.connection_id,
                    "reseller_reference": row.reseller_reference,
                    "product_id": row.product_id,
                    "option_id": row.option_id,
                    "unit_id": row.unit_id,
                    "created_at": row.created_at,
                    "mapped_at": row.mapped_at,
                    **_reseller_side(row),
                }
                for row in rows
            ],
        )


async def save_reseller_sides(conn: DbConnection, rows: Sequence[MappingRow]) -> None:
    """Write the reseller columns of several rows in one statement (executemany)."""
    if rows:
        await conn.execute(
            update(mappings)
            .where(c.id == bindparam("row_id"))
            .values({name: bindparam(f"new_{name}") for name in _reseller_side(rows[0])}),
            [{"row_id": row.id, **{f"new_{k}": v for k, v in _reseller_side(row).items()}} for row in rows],
        )


async def save_supplier_side(conn: DbConnection, row: MappingRow) -> None:
    await conn.execute(
        update(mappings)
        .where(c.id == row.id)
        .values(
            product_id=row.product_id,
            option_id=row.option_id,
            unit_id=row.unit_id,
            mapped_at=row.mapped_at,
            updated_at=row.updated_at,
        )
    )


async def delete_rows(conn: DbConnection, ids: Sequence[str]) -> None:
    if ids:
        await conn.execute(delete(mappings).where(c.id.in_(list(ids))))


def _option_condition(option_ids: Sequence[str]) -> ColumnElement[bool]:
    """The row's shown option is one of `option_ids`; `DEFAULT` also selects rows without one
    (no stored option, or optionRequired false)."""
    condition: ColumnElement[bool] = and_(c.option_required == true(), c.option_id.in_(list(option_ids)))
    if DEFAULT_OPTION in option_ids:
        condition = or_(condition, c.option_required == false(), c.option_id.is_(None))
    return condition


async def find_rows(conn: DbConnection, connection_id: str, where: MappingFilter) -> list[MappingRow]:
    query = select(mappings).where(c.connection_id == connection_id)
    if where.product_ids is not None:
        query = query.where(c.product_id.in_(list(where.product_ids)))
    if where.option_ids is not None:
        query = query.where(_option_condition(where.option_ids))
    if where.reseller_reference is not None:
        query = query.where(c.reseller_reference == where.reseller_reference)
    if where.reseller_status is not None:
        query = query.where(c.reseller_status == where.reseller_status)
    return [_row(row) for row in await conn.execute(query.order_by(c.position, c.id))]


async def mapped_rows(conn: DbConnection, connection_id: str) -> MappedRows:
    """A connection's complete rows: what `mappings[]` on availability and bookings draws from."""
    query = select(mappings).where(c.connection_id == connection_id, ~PENDING).order_by(c.position, c.id)
    return MappedRows(tuple(_row(row) for row in await conn.execute(query)))


async def get_row(conn: DbConnection, row_id: str, *, for_update: bool = False) -> MappingRow | None:
    query = select(mappings).where(c.id == row_id)
    if for_update:
        query = query.with_for_update()
    row = (await conn.execute(query)).first()
    return None if row is None else _row(row)


async def staff_rows(
    conn: DbConnection, *, pending: bool | None, connection_id: str | None, limit: int, offset: int
) -> tuple[list[tuple[MappingRow, str]], int]:
    """Rows of every connection (or one) with the connection's name, oldest first, and the total."""
    clauses: list[ColumnElement[bool]] = []
    if pending is not None:
        clauses.append(PENDING if pending else ~PENDING)
    if connection_id is not None:
        clauses.append(c.connection_id == connection_id)
    condition = and_(true(), *clauses)
    rows = await conn.execute(
        select(mappings, connections.c.name.label("connection_name"))
        .join(connections, connections.c.id == c.connection_id)
        .where(condition)
        .order_by(c.created_at, c.connection_id, c.position, c.id)
        .limit(limit)
        .offset(offset)
    )
    total = int(await conn.scalar(select(func.count()).select_from(mappings).where(condition)) or 0)
    return [(_row(row), row.connection_name) for row in rows], total


async def counts(conn: DbConnection) -> list[tuple[str, str, int, int]]:
    """(connection id, name, pending rows, mapped rows) of each connection that has rows."""
    pending = func.sum(case((PENDING, 1), else_=0))
    rows = await conn.execute(
        select(c.connection_id, connections.c.name, pending.label("pending"), func.count().label("rows"))
        .join(connections, connections.c.id == c.connection_id)
        .group_by(c.connection_id, connections.c.name)
        .order_by(connections.c.name)
    )
    return [
        (row.connection_id, row.name, int(row.pending or 0), int(row.rows) - int(row.pending or 0))
        for row in rows
    ]


async def latest_notifications(conn: DbConnection, row_ids: Sequence[str]) -> dict[str, Delivery]:
    """The newest notification of each of these rows (if it has any), in one query."""
    if not row_ids:
        return {}
    targets = {notification_target(row_id): row_id for row_id in row_ids}
    newest = (
        select(func.max(deliveries.c.sequence))
        .where(deliveries.c.target_key.in_(list(targets)))
        .group_by(deliveries.c.target_key)
    )
    rows = await conn.execute(select(deliveries).where(deliveries.c.sequence.in_(newest)))
    return {targets[row.target_key]: delivery_from_row(row) for row in rows}
