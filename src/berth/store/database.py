"""Engine set-up and transactions for SQLite (embedded) and PostgreSQL (scale-out).

On PostgreSQL statements go through SQLAlchemy's async engine (asyncpg). On SQLite they run
synchronously in the event loop's thread (pysqlite): an indexed statement on a local file takes
tens of microseconds, while handing each one to a driver thread and back (aiosqlite) cost more
than the statement itself, several times per transaction. What may wait (the write lock) is
awaited before the transaction starts, off the event loop. See docs/decisions.md.

Beside it: what a connection offers the repositories and a transaction keeps in it
(`connection`), PostgreSQL's one-call writes (`one_call`), the database's faults and how they
are logged (`faults`), and the URLs Berth runs on (`urls`).
"""

from __future__ import annotations

import asyncio
import contextlib
import fcntl
import json
import os
import time
from collections.abc import AsyncIterator, Callable, Iterator
from contextlib import asynccontextmanager
from typing import Any

import orjson
from sqlalchemy import Connection, Engine, create_engine, event, text
from sqlalchemy.engine import make_url
from sqlalchemy.exc import DBAPIError, DisconnectionError
from sqlalchemy.ext.asyncio import AsyncConnection, AsyncEngine, create_async_engine
from sqlalchemy.pool import QueuePool

from berth.store.change_marks import Look, Position, PostgresMarks, SqliteMarks
from berth.store.connection import (
    ONE_CALL,
    DbConnection,
    SqliteConnection,
    run_after_commit,
    transaction_info,
)
from berth.store.faults import DatabaseUnavailable
from berth.store.group_commit import GroupCommit
from berth.store.one_call import OneCall, OneCallConnection
from berth.store.outages import Outages
from berth.store.urls import describe_database, normalize_url

_WRITE = "berth_write"
_SINGLE_READ = "berth_single_read"
# A statement waiting for SQLite's lock would hold up the event loop: only processes that do
# not take Berth's write turn (an sqlite3 shell, say) can make it wait at all.
SQLITE_BUSY_TIMEOUT_MS = 5000
# How a writer waits for another process's SQLite writer (`Database._write_turn`).
LOCK_POLL_SECONDS = 0.001
LOCK_POLL_TRIES = 50


def json_text(value: Any) -> str:
    """JSON columns' text: orjson (a tenth of a reservation went to the json module), falling
    back to the json module for what orjson refuses (integers past 64 bits)."""
    try:
        return orjson.dumps(value, option=orjson.OPT_NON_STR_KEYS).decode()
    except (TypeError, orjson.JSONEncodeError):
        return json.dumps(value)


def json_value(text: str | bytes) -> Any:
    """JSON columns' values: orjson, or the json module for what it refuses (NaN)."""
    try:
        return orjson.loads(text)
    except orjson.JSONDecodeError:
        return json.loads(text)


async def _poll_lock(fd: int) -> bool:
    """Tries the file lock on `fd` now and at the next `LOCK_POLL_TRIES` turns of the event
    loop, at least `LOCK_POLL_SECONDS` apart after the first two; whether it got it."""
    for tries in range(LOCK_POLL_TRIES + 1):
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
            return True
        except BlockingIOError:
            pass
        if tries < LOCK_POLL_TRIES:
            await asyncio.sleep(0 if tries < 2 else LOCK_POLL_SECONDS)
    return False


class Database:
    """Owns the engine. `transaction(write=True)` is the unit of work for changes.

    On SQLite a write transaction starts with BEGIN IMMEDIATE, so it holds the database's
    single write lock from its first statement: two writers never interleave their
    read-check-write steps. On PostgreSQL, writers lock the rows they change explicitly.
    """

    def __init__(
        self,
        url: str,
        *,
        echo: bool = False,
        ping_idle_seconds: float = 1.0,
        pool_size: int = 16,
        max_overflow: int = 4,
    ) -> None:
        self.url = normalize_url(url)
        self.dialect = make_url(self.url).get_backend_name()
        self._lock_path: str | None = None
        self._lock_fd: int | None = None
        self._group_commit: GroupCommit | None = None
        self._sqlite: Engine | None = None
        self._async: AsyncEngine | None = None
        self._marks: SqliteMarks | PostgresMarks | None = None
        # Called with each statement sent to SQLite's driver past SQLAlchemy (`SqliteConnection.send`).
        self.driver_listeners: list[Callable[[str], None]] = []
        self.outages = Outages()
        if self.is_sqlite:
            path = make_url(self.url).database
            in_memory = not path or path == ":memory:"
            if path and not in_memory:
                self._marks = SqliteMarks(path)
            # A file: a pool that never makes the (single) thread wait for a connection.
            pool: dict[str, Any] = {} if in_memory else {"poolclass": QueuePool, "max_overflow": -1}
            self._sqlite = create_engine(
                self.url, echo=echo, connect_args={"check_same_thread": False}, json_serializer=json_text,
                json_deserializer=json_value, **pool,
            )  # fmt: skip
            self._configure_sqlite(self._sqlite)
            if not in_memory:
                self._lock_path = f"{path}.writelock"
                self._group_commit = GroupCommit(
                    self._connect_sqlite_writer, self._write_turn, self._sqlite_connection, run_after_commit
                )
        else:
            # Every request past the pool's size opens a connection (a server process) and closes
            # it again: the pool must cover a process's usual concurrency (docs/decisions.md).
            self._async = create_async_engine(
                self.url, echo=echo, pool_size=pool_size, max_overflow=max_overflow,
                json_serializer=json_text, json_deserializer=json_value,
            )  # fmt: skip
            self._ping_when_idle(self._async.sync_engine, ping_idle_seconds)
            dsn = make_url(self.url).set(drivername="postgresql").render_as_string(hide_password=False)
            self._marks = PostgresMarks(dsn)

    @property
    def is_sqlite(self) -> bool:
        return self.dialect == "sqlite"

    @property
    def sync_engine(self) -> Engine:
        """The engine statements run through, for event listeners (statement counts)."""
        engine = self._sqlite if self._async is None else self._async.sync_engine
        assert engine is not None
        return engine

    @staticmethod
    def _ping_when_idle(engine: Engine, seconds: float) -> None:
        """Check a pooled connection with a round trip before use, when it has been idle for
        `seconds`: one that the server or network dropped meanwhile is replaced, unseen.
        (Checking at every checkout, `pool_pre_ping`, cost a fifth of an availability check;
        under load connections are never idle that long. A connection lost while in use is
        answered 500 once, and SQLAlchemy then replaces every connection made before.)"""

        @event.listens_for(engine, "checkin")
        def _on_checkin(_dbapi_connection: Any, record: Any) -> None:
            record.info["idle_since"] = time.monotonic()

        @event.listens_for(engine, "checkout")
        def _on_checkout(dbapi_connection: Any, record: Any, _proxy: Any) -> None:
            idle_since = record.info.get("idle_since")
            if idle_since is None or time.monotonic() - idle_since < seconds:
                return
            try:
                alive = engine.dialect.do_ping(dbapi_connection)
            except engine.dialect.loaded_dbapi.Error as exc:
                if not engine.dialect.is_disconnect(exc, dbapi_connection, None):
                    raise
                alive = False
            if not alive:
                raise DisconnectionError("the pooled connection was lost")

    @staticmethod
    def _configure_sqlite(engine: Engine) -> None:
        @event.listens_for(engine, "connect")
        def _on_connect(dbapi_connection: Any, _record: Any) -> None:
            # Take transaction control away from the driver so BEGIN is ours to choose.
            dbapi_connection.isolation_level = None
            cursor = dbapi_connection.cursor()
            cursor.execute("PRAGMA journal_mode=WAL")
            cursor.execute("PRAGMA synchronous=NORMAL")
            cursor.execute(f"PRAGMA busy_timeout={SQLITE_BUSY_TIMEOUT_MS}")
            cursor.execute("PRAGMA foreign_keys=ON")
            cursor.close()

        @event.listens_for(engine, "begin")
        def _on_begin(connection: Any) -> None:
            options = connection.get_execution_options()
            if options.get(_SINGLE_READ):
                return
            connection.exec_driver_sql("BEGIN IMMEDIATE" if options.get(_WRITE, False) else "BEGIN")

    def _refused(self, what: str) -> DatabaseUnavailable:
        """A connection could not be made: counted, and the exception to raise."""
        self.outages.refusal()
        return DatabaseUnavailable(f"{what} {describe_database(self.url)}", self.outages)

    @contextlib.contextmanager
    def _connect_sqlite(self) -> Iterator[Connection]:
        assert self._sqlite is not None
        try:
            conn = self._sqlite.connect()
        except (DBAPIError, OSError) as exc:
            raise self._refused("cannot open the") from exc
        if self.outages.ongoing:
            self.outages.reached(describe_database(self.url))
        with conn:
            yield conn

    @asynccontextmanager
    async def _connect(self) -> AsyncIterator[AsyncConnection]:
        """A pooled connection; failing to get one raises DatabaseUnavailable. (A connection
        lost later is marked by SQLAlchemy: `DBAPIError.connection_invalidated`.)"""
        assert self._async is not None
        async with contextlib.AsyncExitStack() as stack:
            try:
                conn = await stack.enter_async_context(self._async.connect())
            except (DBAPIError, OSError) as exc:
                raise self._refused("cannot connect to") from exc
            if self.outages.ongoing:
                self.outages.reached(describe_database(self.url))
            yield conn

    @contextlib.contextmanager
    def _connect_sqlite_writer(self) -> Iterator[Connection]:
        with self._connect_sqlite() as sync_conn:
            sync_conn.execution_options(**{_WRITE: True})
            yield sync_conn

    def _sqlite_connection(self, sync_conn: Connection) -> tuple[SqliteConnection, dict[Any, Any]]:
        info = transaction_info()
        return SqliteConnection(sync_conn, info, self.driver_listeners), info

    @asynccontextmanager
    async def transaction(self, *, write: bool) -> AsyncIterator[DbConnection]:
        """A transaction; `write` ones change the database."""
        if write and self._group_commit is not None:
            async with self._group_commit.transaction() as batched:
                yield batched
            return
        if self._sqlite is not None:  # reads, and writes to an in-memory database (no lock file)
            with self._connect_sqlite_writer() if write else self._connect_sqlite() as sync_conn:
                sqlite, info = self._sqlite_connection(sync_conn)
                with sync_conn.begin():
                    yield sqlite
        else:
            async with self._connect() as conn:
                info = transaction_info()
                conn.info.update(info)
                async with conn.begin():
                    yield conn
        run_after_commit(info)

    @property
    def sends_one_call(self) -> bool:
        """Whether `one_call` is this database's (PostgreSQL's)."""
        return self._async is not None

    @asynccontextmanager
    async def one_call(self) -> AsyncIterator[OneCallConnection]:
        """PostgreSQL: a write whose statements are made into one, sent when the block ends as
        its own transaction (one round trip; the locks it takes are held for the server's time
        alone). The block's reads run at once; its writers keep their rows (`one_call`) and the
        last makes the statement (`OneCall.close`). Raises NotOneCall when the block does what
        one statement cannot carry, OneCallRefused when the statement refuses: either way
        nothing was written. `written` says whether the statement answered a row."""
        assert self._async is not None, "one_call is PostgreSQL's (sends_one_call)"
        async with self._connect() as conn:
            await conn.execution_options(isolation_level="AUTOCOMMIT")
            info = {**transaction_info(), ONE_CALL: OneCall()}
            conn.info.update(info)
            call = OneCallConnection(conn, info)
            yield call
            await call.send()
        run_after_commit(info)

    @asynccontextmanager
    async def _write_turn(self) -> AsyncIterator[None]:
        """SQLite: writers of every process take turns on a file lock. (SQLite's own busy
        handler sleeps in growing steps of up to 100 ms, so under load writers starve while
        the database sits idle.) Within a process one leader of a batch at a time takes it
        (`berth.store.group_commit`).

        A free lock is taken at once. A taken one is tried again from the event loop, at the
        next two turns and then every millisecond (`LOCK_POLL_SECONDS`), `LOCK_POLL_TRIES`
        times, and only then waited for in a thread, which takes it when it is free. A lock
        taken by a thread is held, unused, until the writer resumes, a turn or two of the event
        loop later: tens of milliseconds when the loop is busy with reads, while
        every writer of the other processes waits (look-to-book's writes waited 7 times as long
        as its reads, docs/decisions.md). The thread is the fallback that keeps a writer from
        losing the race to the other processes' writers forever."""
        assert self._lock_path is not None  # a file database's: only group commit takes it
        if self._lock_fd is None:
            try:
                self._lock_fd = os.open(self._lock_path, os.O_RDWR | os.O_CREAT, 0o600)
            except OSError as exc:
                raise self._refused("cannot open the") from exc
        fd = self._lock_fd
        if not await _poll_lock(fd):
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

    @asynccontextmanager
    async def single_read(self) -> AsyncIterator[DbConnection]:
        """For one SELECT on a hot path: no BEGIN/COMMIT round trips around it (the statement
        is its own snapshot). Anything reading twice wants `transaction(write=False)`."""
        if self._sqlite is not None:
            with self._connect_sqlite() as sync_conn:
                sync_conn.execution_options(**{_SINGLE_READ: True})
                yield SqliteConnection(sync_conn, {}, self.driver_listeners)
            return
        async with self._connect() as conn:
            await conn.execution_options(isolation_level="AUTOCOMMIT")
            conn.info.update(transaction_info())  # nothing kept from the connection's last transaction
            yield conn

    async def changes_since(self, since: Position | None) -> Look | None:
        """The availability changes committed, by any process, since `since` (a position an
        earlier look answered; None: the first look), and the position now
        (`berth.store.change_marks`); None when they cannot be read now."""
        return None if self._marks is None else await self._marks.look(since)

    async def ping(self) -> None:
        async with self.single_read() as conn:
            await conn.execute(text("SELECT 1"))

    async def dispose(self) -> None:
        if isinstance(self._marks, PostgresMarks):
            await self._marks.close()
        elif self._marks is not None:
            self._marks.close()
        if self._sqlite is not None:
            self._sqlite.dispose()
        if self._async is not None:
            await self._async.dispose()
        if self._lock_fd is not None:
            os.close(self._lock_fd)
            self._lock_fd = None
