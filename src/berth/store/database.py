"""Engine set-up and transactions for SQLite (embedded) and PostgreSQL (scale-out)."""

from __future__ import annotations

from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from typing import Any

from sqlalchemy import event, text
from sqlalchemy.engine import make_url
from sqlalchemy.ext.asyncio import AsyncConnection, AsyncEngine, create_async_engine

_WRITE = "berth_write"


def normalize_url(url: str) -> str:
    """Accept the URLs people paste (`postgresql://…`, `sqlite:///…`) and pick async drivers."""
    parsed = make_url(url)
    driver = parsed.drivername
    if driver in ("postgresql", "postgres", "postgresql+psycopg2", "postgresql+psycopg"):
        parsed = parsed.set(drivername="postgresql+asyncpg")
    elif driver == "sqlite":
        parsed = parsed.set(drivername="sqlite+aiosqlite")
    return parsed.render_as_string(hide_password=False)


class Database:
    """Owns the engine. `transaction(write=True)` is the unit of work for changes.

    On SQLite a write transaction starts with BEGIN IMMEDIATE, so it holds the database's
    single write lock from its first statement: two writers never interleave their
    read-check-write steps. On PostgreSQL, writers lock the rows they change explicitly.
    """

    def __init__(self, url: str, *, echo: bool = False) -> None:
        self.url = normalize_url(url)
        self.dialect = make_url(self.url).get_backend_name()
        connect_args: dict[str, Any] = {}
        if self.is_sqlite:
            connect_args["timeout"] = 30
        self.engine: AsyncEngine = create_async_engine(
            self.url, echo=echo, connect_args=connect_args, pool_pre_ping=not self.is_sqlite
        )
        if self.is_sqlite:
            self._configure_sqlite()

    @property
    def is_sqlite(self) -> bool:
        return self.dialect == "sqlite"

    def _configure_sqlite(self) -> None:
        sync_engine = self.engine.sync_engine

        @event.listens_for(sync_engine, "connect")
        def _on_connect(dbapi_connection: Any, _record: Any) -> None:
            # Take transaction control away from the driver so BEGIN is ours to choose.
            dbapi_connection.isolation_level = None
            cursor = dbapi_connection.cursor()
            cursor.execute("PRAGMA journal_mode=WAL")
            cursor.execute("PRAGMA synchronous=NORMAL")
            cursor.execute("PRAGMA busy_timeout=30000")
            cursor.execute("PRAGMA foreign_keys=ON")
            cursor.close()

        @event.listens_for(sync_engine, "begin")
        def _on_begin(connection: Any) -> None:
            write = connection.get_execution_options().get(_WRITE, False)
            connection.exec_driver_sql("BEGIN IMMEDIATE" if write else "BEGIN")

    @asynccontextmanager
    async def transaction(self, *, write: bool) -> AsyncIterator[AsyncConnection]:
        async with self.engine.connect() as conn:
            if write:
                await conn.execution_options(**{_WRITE: True})
            async with conn.begin():
                yield conn

    async def ping(self) -> None:
        async with self.engine.connect() as conn:
            await conn.execute(text("SELECT 1"))

    async def dispose(self) -> None:
        await self.engine.dispose()
