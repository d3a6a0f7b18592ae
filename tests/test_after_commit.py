"""`after_commit`: what wakes a reader on another connection runs once the change is committed,
never for a transaction that rolled back, and never again in a later transaction."""

from __future__ import annotations

import pytest
from sqlalchemy import text

from berth.store.connection import after_commit
from berth.store.database import Database


@pytest.mark.parametrize("write", [True, False])
async def test_callbacks_run_once_after_the_commit_only(database_url: str, write: bool) -> None:
    database = Database(database_url)
    calls: list[str] = []
    try:
        async with database.transaction(write=write) as conn:
            after_commit(conn, lambda: calls.append("committed"))
            await conn.execute(text("SELECT 1"))
            assert calls == [], "called before the commit"
        assert calls == ["committed"]

        with pytest.raises(RuntimeError):
            async with database.transaction(write=write) as conn:
                after_commit(conn, lambda: calls.append("rolled back"))
                raise RuntimeError("the transaction fails")
        async with database.transaction(write=write) as conn:  # likely the same pooled connection
            await conn.execute(text("SELECT 1"))
        assert calls == ["committed"]
    finally:
        await database.dispose()
