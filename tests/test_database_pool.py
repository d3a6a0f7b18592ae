"""PostgreSQL: the pool keeps as many connections as a process uses at once, so a steady load
reuses them instead of opening (and closing) a server process per request."""

from __future__ import annotations

import asyncio

import pytest
from sqlalchemy import text

from berth.store.database import Database


async def _backends_of_a_burst(database: Database, concurrency: int) -> set[int]:
    async def one() -> int:
        async with database.single_read() as conn:
            # Long enough that every request of the burst holds a connection at once.
            return int(await conn.scalar(text("SELECT pg_backend_pid() FROM pg_sleep(0.05)")))

    return set(await asyncio.gather(*(one() for _ in range(concurrency))))


@pytest.mark.parametrize(("pool_size", "reused"), [(8, True), (2, False)])
async def test_a_steady_load_reuses_the_pools_connections(
    database_url: str, pool_size: int, reused: bool
) -> None:
    if not database_url.startswith("postgresql"):
        pytest.skip("PostgreSQL only: SQLite connections are files opened in-process")
    database = Database(database_url, pool_size=pool_size, max_overflow=8)
    try:
        first = await _backends_of_a_burst(database, 8)
        second = await _backends_of_a_burst(database, 8)
    finally:
        await database.dispose()
    assert len(first) == len(second) == 8
    # A pool smaller than the load closes its extra connections and opens new ones next time.
    assert (second == first) is reused, (first, second)
