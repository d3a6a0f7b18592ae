"""Reseller connections: stored with the SHA-256 of their API key, never the key."""

from __future__ import annotations

from datetime import datetime
from typing import Any

from sqlalchemy import insert, or_, select, update

from berth.domain.connections import Connection
from berth.store.database import DbConnection
from berth.store.tables import catalog_meta, connections

_COLUMNS = (
    connections.c.id,
    connections.c.name,
    connections.c.key_hint,
    connections.c.created_at,
    connections.c.revoked_at,
)


def _connection(row: Any) -> Connection:
    return Connection(
        id=row.id, name=row.name, key_hint=row.key_hint, created_at=row.created_at, revoked_at=row.revoked_at
    )


async def insert_connection(conn: DbConnection, connection: Connection, key_hash: str) -> None:
    await conn.execute(
        insert(connections).values(
            id=connection.id,
            name=connection.name,
            key_hash=key_hash,
            key_hint=connection.key_hint,
            created_at=connection.created_at,
            revoked_at=connection.revoked_at,
        )
    )


async def list_connections(conn: DbConnection) -> list[Connection]:
    rows = await conn.execute(select(*_COLUMNS).order_by(connections.c.created_at, connections.c.name))
    return [_connection(row) for row in rows]


async def find_connection(conn: DbConnection, id_or_name: str) -> Connection | None:
    rows = (
        await conn.execute(
            select(*_COLUMNS).where(or_(connections.c.id == id_or_name, connections.c.name == id_or_name))
        )
    ).all()
    if len(rows) != 1:
        return None
    return _connection(rows[0])


async def find_by_key_hash(conn: DbConnection, key_hash: str) -> Connection | None:
    row = (await conn.execute(select(*_COLUMNS).where(connections.c.key_hash == key_hash))).first()
    return None if row is None else _connection(row)


async def authenticate(conn: DbConnection, key_hash: str) -> tuple[Connection, int] | None:
    """The connection holding this key (revoked or not) and the catalogue version, in one query."""
    version = select(catalog_meta.c.version).where(catalog_meta.c.id == 1).scalar_subquery()
    row = (
        await conn.execute(
            select(*_COLUMNS, version.label("catalog_version")).where(connections.c.key_hash == key_hash)
        )
    ).first()
    if row is None:
        return None
    return _connection(row), int(row.catalog_version or 0)


async def revoke_connection(conn: DbConnection, connection_id: str, now: datetime) -> None:
    await conn.execute(
        update(connections)
        .where(connections.c.id == connection_id, connections.c.revoked_at.is_(None))
        .values(revoked_at=now)
    )
