"""The failures of guessing per key, shared by every process on the database."""

from __future__ import annotations

from collections.abc import Sequence

from sqlalchemy import bindparam, delete, select, update
from sqlalchemy.dialects.postgresql import insert as pg_insert
from sqlalchemy.dialects.sqlite import insert as sqlite_insert

from berth.domain.guessing import Failures, Policy, after_failure
from berth.store.connection import DbConnection
from berth.store.tables import guessing_failures as table

_NEW = {
    dialect: statement(table).on_conflict_do_nothing(index_elements=["key"])
    for dialect, statement in (("postgresql", pg_insert), ("sqlite", sqlite_insert))
}
_READ = select(table.c.failures, table.c.last_at, table.c.blocked_until).where(table.c.key == bindparam("k"))
_SAVE = (
    update(table)
    .where(table.c.key == bindparam("k"))
    .values(failures=bindparam("failures"), last_at=bindparam("last"), blocked_until=bindparam("until"))
)


async def known(conn: DbConnection, keys: Sequence[str]) -> dict[str, Failures]:
    """The failures kept of each of `keys` that has any."""
    rows = await conn.execute(select(table).where(table.c.key.in_(keys)))
    return {row.key: Failures(row.failures, row.last_at, row.blocked_until) for row in rows}


async def waiting(conn: DbConnection, now: float) -> dict[str, float]:
    """Every key that must wait at `now`, and until when."""
    rows = await conn.execute(select(table.c.key, table.c.blocked_until).where(table.c.blocked_until > now))
    return {row.key: row.blocked_until for row in rows}


async def fail(conn: DbConnection, key: str, now: float, policy: Policy) -> tuple[Failures, bool]:
    """One more failure of `key` under its row's lock: its failures now, and whether this one
    locked it."""
    dialect = conn.dialect.name
    await conn.execute(_NEW[dialect], {"key": key, "failures": 0, "last_at": 0.0, "blocked_until": 0.0})
    read = _READ.with_for_update() if dialect == "postgresql" else _READ
    row = (await conn.execute(read, {"k": key})).one()
    failures, locked = after_failure(Failures(row.failures, row.last_at, row.blocked_until), now, policy)
    await conn.execute(
        _SAVE, {"k": key, "failures": failures.count, "last": failures.last, "until": failures.blocked_until}
    )
    return failures, locked


async def forget(conn: DbConnection, key: str) -> None:
    await conn.execute(delete(table).where(table.c.key == key))
