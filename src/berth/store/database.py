"""Engine set-up and transactions for SQLite (embedded) and PostgreSQL (scale-out)."""

from __future__ import annotations

import asyncio
import contextlib
import fcntl
import os
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from typing import Any, Literal

from sqlalchemy import event, text
from sqlalchemy.engine import make_url
from sqlalchemy.exc import DBAPIError
from sqlalchemy.ext.asyncio import AsyncConnection, AsyncEngine, create_async_engine

_WRITE = "berth_write"
_SINGLE_READ = "berth_single_read"
_SQLITE_FULL = 13


class DatabaseUnavailable(Exception):
    """No connection to the database could be made (refused, shutting down, not accepting
    connections, unreachable). The cause carries the driver's error."""


def fault_of(exc: BaseException) -> Literal["unavailable", "full"] | None:
    """What kind of database fault `exc` is, if it is one a caller can name: the database could
    not be reached or the connection was lost ("unavailable"), or it has no room ("full")."""
    if isinstance(exc, DatabaseUnavailable):
        return "unavailable"
    if isinstance(exc, DBAPIError):
        if exc.connection_invalidated:
            return "unavailable"
        code = getattr(exc.orig, "sqlite_errorcode", None)
        if isinstance(code, int) and code & 0xFF == _SQLITE_FULL:
            return "full"
    return None


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
        self._lock_path: str | None = None
        self._local_writers = asyncio.Lock()
        if self.is_sqlite:
            self._configure_sqlite()
            path = make_url(self.url).database
            if path and path != ":memory:":
                self._lock_path = path + ".writelock"

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
            options = connection.get_execution_options()
            if options.get(_SINGLE_READ):
                return
            connection.exec_driver_sql("BEGIN IMMEDIATE" if options.get(_WRITE, False) else "BEGIN")

    @asynccontextmanager
    async def _connect(self) -> AsyncIterator[AsyncConnection]:
        """A pooled connection; failing to get one raises DatabaseUnavailable. (A connection
        lost later is marked by SQLAlchemy: `DBAPIError.connection_invalidated`.)"""
        async with contextlib.AsyncExitStack() as stack:
            try:
                conn = await stack.enter_async_context(self.engine.connect())
            except (DBAPIError, OSError) as exc:
                raise DatabaseUnavailable("cannot connect to the database") from exc
            yield conn

    @asynccontextmanager
    async def transaction(self, *, write: bool) -> AsyncIterator[AsyncConnection]:
        turn = self._write_turn() if write else contextlib.nullcontext()
        async with turn, self._connect() as conn:
            if write:
                await conn.execution_options(**{_WRITE: True})
            async with conn.begin():
                yield conn

    @asynccontextmanager
    async def _write_turn(self) -> AsyncIterator[None]:
        """SQLite: writers of every process take turns on a file lock, waiting in the kernel,
        which wakes the next one at once. (SQLite's own busy handler sleeps in growing steps
        of up to 100 ms, so under load writers starve while the database sits idle.)"""
        if self._lock_path is None:
            yield
            return
        async with self._local_writers:
            fd = os.open(self._lock_path, os.O_RDWR | os.O_CREAT, 0o600)
            try:
                waiting = asyncio.ensure_future(asyncio.to_thread(fcntl.flock, fd, fcntl.LOCK_EX))
                try:
                    await asyncio.shield(waiting)
                except asyncio.CancelledError:
                    # The thread may still get the lock: let it, then give the lock back.
                    await asyncio.wait([waiting])
                    fcntl.flock(fd, fcntl.LOCK_UN)
                    raise
                try:
                    yield
                finally:
                    fcntl.flock(fd, fcntl.LOCK_UN)
            finally:
                os.close(fd)

    @asynccontextmanager
    async def single_read(self) -> AsyncIterator[AsyncConnection]:
        """For one SELECT on a hot path: no BEGIN/COMMIT round trips around it (the statement
        is its own snapshot). Anything reading twice wants `transaction(write=False)`."""
        async with self._connect() as conn:
            if self.is_sqlite:
                await conn.execution_options(**{_SINGLE_READ: True})
            else:
                await conn.execution_options(isolation_level="AUTOCOMMIT")
            yield conn

    async def ping(self) -> None:
        async with self._connect() as conn:
            await conn.execute(text("SELECT 1"))

    async def dispose(self) -> None:
        await self.engine.dispose()
