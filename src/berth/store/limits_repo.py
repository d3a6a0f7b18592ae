"""Rate-limit buckets shared by every process on the database (one row per connection)."""

from __future__ import annotations

from sqlalchemy import bindparam, select, update
from sqlalchemy.dialects.postgresql import insert as pg_insert
from sqlalchemy.dialects.sqlite import insert as sqlite_insert

from berth.domain.limits import Bucket, take_up_to
from berth.store.connection import DbConnection
from berth.store.tables import rate_buckets

_NEW = {
    dialect: statement(rate_buckets).on_conflict_do_nothing(index_elements=["connection_id"])
    for dialect, statement in (("postgresql", pg_insert), ("sqlite", sqlite_insert))
}
_READ = select(rate_buckets.c.tokens, rate_buckets.c.at).where(
    rate_buckets.c.connection_id == bindparam("key")
)
_SAVE = (
    update(rate_buckets)
    .where(rate_buckets.c.connection_id == bindparam("key"))
    .values(tokens=bindparam("tokens"), at=bindparam("now"))
)


async def take_tokens(
    conn: DbConnection, key: str, now: float, capacity: float, per_second: float, wanted: int
) -> tuple[int, float]:
    """Up to `wanted` tokens from `key`'s bucket (created full), under the row's lock: the
    tokens granted, and the seconds until one is there when none is."""
    dialect = conn.dialect.name
    await conn.execute(_NEW[dialect], {"connection_id": key, "tokens": capacity, "at": now})
    read = _READ.with_for_update() if dialect == "postgresql" else _READ
    row = (await conn.execute(read, {"key": key})).one()
    bucket, granted, wait = take_up_to(Bucket(row.tokens, row.at), now, capacity, per_second, wanted)
    await conn.execute(_SAVE, {"key": key, "tokens": bucket.tokens, "now": bucket.at})
    return granted, wait
