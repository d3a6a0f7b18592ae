"""Reseller connections: stored with the SHA-256 of their API key, never the key."""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass
from datetime import datetime
from functools import lru_cache
from typing import Any

import orjson
from sqlalchemy import insert, or_, select, update

from berth.domain.connections import Connection
from berth.domain.contracts import DEFAULT_CONTRACT, Contract
from berth.domain.staff import Actor
from berth.store import availability_changes_repo
from berth.store.change_marks import EVERYTHING
from berth.store.connection import DbConnection
from berth.store.tables import LAST_VERSION, catalog_meta, connections, contract_versions

_COLUMNS = (
    connections.c.id,
    connections.c.name,
    connections.c.key_hint,
    connections.c.created_at,
    connections.c.revoked_at,
    connections.c.contract,
    connections.c.contract_version,
)


@lru_cache(maxsize=256)  # read at every key check: parsed once per saved document
def _contract(document: bytes) -> Contract:
    return Contract.model_validate(orjson.loads(document))


def _connection(row: Any) -> Connection:
    contract = DEFAULT_CONTRACT if row.contract is None else _contract(orjson.dumps(row.contract))
    return Connection(
        id=row.id,
        name=row.name,
        key_hint=row.key_hint,
        created_at=row.created_at,
        revoked_at=row.revoked_at,
        contract=contract,
        contract_version=int(row.contract_version or 0),
    )


@dataclass(frozen=True)
class ContractVersion:
    connection_id: str
    version: int
    created_at: datetime
    actor: str
    actor_role: str
    summary: str
    contract: Contract


async def save_contract(
    conn: DbConnection,
    connection_id: str,
    contract: Contract,
    version: int,
    *,
    actor: Actor,
    summary: str,
    at: datetime,
) -> None:
    """Store `contract` as the connection's version `version`; the caller holds the
    connection's row (`find_connection(..., lock=True)`), so that no save comes in between.
    (Two versions of one number are refused all the same: the key of `contract_versions`.)"""
    document = contract.to_document()
    await conn.execute(
        update(connections)
        .where(connections.c.id == connection_id)
        .values(contract=document, contract_version=version)
    )
    await conn.execute(
        insert(contract_versions).values(
            connection_id=connection_id,
            version=version,
            created_at=at,
            actor=actor.name,
            actor_id=actor.staff_id,
            actor_role=actor.role.value,
            summary=summary[:300],
            document=document,
        )
    )
    # Its allotments and stop-sells change what any connection may be shown.
    await availability_changes_repo.record(conn, [EVERYTHING], at)


def _version(row: Any) -> ContractVersion:
    return ContractVersion(
        row.connection_id, row.version, row.created_at, row.actor, row.actor_role, row.summary,
        Contract.model_validate(row.document),
    )  # fmt: skip


async def contract_versions_of(conn: DbConnection, connection_id: str, limit: int) -> list[ContractVersion]:
    rows = await conn.execute(
        select(contract_versions)
        .where(contract_versions.c.connection_id == connection_id)
        .order_by(contract_versions.c.version.desc())
        .limit(limit)
    )
    return [_version(row) for row in rows]


async def contract_version(conn: DbConnection, connection_id: str, version: int) -> ContractVersion | None:
    if not 0 < version <= LAST_VERSION:
        return None
    row = (
        await conn.execute(
            select(contract_versions).where(
                contract_versions.c.connection_id == connection_id, contract_versions.c.version == version
            )
        )
    ).first()
    return None if row is None else _version(row)


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


async def find_connection(conn: DbConnection, id_or_name: str, *, lock: bool = False) -> Connection | None:
    """`lock`: hold its row until the transaction ends, so that writers of it take turns
    (PostgreSQL; a SQLite write transaction holds the whole database already)."""
    query = select(*_COLUMNS).where(or_(connections.c.id == id_or_name, connections.c.name == id_or_name))
    rows = (await conn.execute(query.with_for_update() if lock else query)).all()
    if len(rows) != 1:
        return None
    return _connection(rows[0])


async def connections_by_id(conn: DbConnection, ids: Iterable[str]) -> dict[str, Connection]:
    wanted = set(ids)
    if not wanted:
        return {}
    rows = await conn.execute(select(*_COLUMNS).where(connections.c.id.in_(sorted(wanted))))
    return {row.id: _connection(row) for row in rows}


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
    # Its allotment blocks count no more: any connection may be shown more places.
    await availability_changes_repo.record(conn, [EVERYTHING], now)
