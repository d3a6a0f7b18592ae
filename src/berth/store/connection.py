"""What the repositories use of a connection (`DbConnection`): SQLAlchemy's AsyncConnection on
PostgreSQL, `SqliteConnection` on SQLite; and what a transaction of `Database.transaction`
keeps in its connection's `info` while it runs: the callbacks after its commit, what it holds,
what it has read (each made afresh for each transaction, `transaction_info`)."""

from __future__ import annotations

import sqlite3
from collections.abc import Callable, Sequence
from typing import Any, Protocol, TypeVar

from sqlalchemy import Connection, CursorResult, Dialect, ScalarResult
from sqlalchemy.exc import DBAPIError
from sqlalchemy.sql.base import Executable

T = TypeVar("T")
Rows = CursorResult[*tuple[Any, ...]]


class DbConnection(Protocol):
    """What the repositories use of a connection: SQLAlchemy's AsyncConnection on PostgreSQL,
    `SqliteConnection` on SQLite."""

    @property
    def dialect(self) -> Dialect: ...

    async def execute(self, statement: Executable, parameters: Any = None) -> Rows: ...

    async def scalar(self, statement: Executable, parameters: Any = None) -> Any: ...

    async def scalars(self, statement: Executable, parameters: Any = None) -> ScalarResult[Any]: ...

    async def run_sync(self, fn: Callable[[Connection], T]) -> T: ...

    @property
    def info(self) -> dict[Any, Any]: ...


_AFTER_COMMIT = "berth.after_commit"


def after_commit(conn: DbConnection, callback: Callable[[], None]) -> None:
    """Call `callback` once `conn`'s transaction (of `Database.transaction`) has committed; never
    if it rolls back. For waking what reads the change from another connection: woken before
    the commit, it could look before the change is there to see."""
    conn.info[_AFTER_COMMIT].append(callback)


_HELD = "berth.held_in_transaction"


def held_in_transaction(conn: DbConnection) -> set[Any]:
    """What the connection's current transaction (of `Database.transaction`) has taken and
    keeps until it ends, e.g. the slot locks it holds: a set made afresh for each transaction.
    Outside one, an empty set nobody keeps."""
    held = conn.info.get(_HELD)
    return held if isinstance(held, set) else set()


_MEMO = "berth.transaction_memo"


def transaction_memo(conn: DbConnection) -> dict[Any, Any]:
    """What the connection's current transaction (of `Database.transaction`) has read and may
    read again as it was, e.g. the webhooks an event goes to: a dict made afresh for each
    transaction; whoever writes what is kept there drops it. Outside one, an empty dict nobody
    keeps."""
    memo = conn.info.get(_MEMO)
    return memo if isinstance(memo, dict) else {}


# The one statement a `Database.one_call` block gathers (`one_call.OneCall`); None otherwise.
ONE_CALL = "berth.one_call"


class SqliteConnection:
    """A pysqlite connection used from the event loop's thread: each statement runs at once.
    `info` is the transaction's own (transactions of a batch share the connection).
    `listeners` are told each statement `send` passes to the driver."""

    def __init__(
        self, connection: Connection, info: dict[Any, Any], listeners: Sequence[Callable[[str], None]] = ()
    ) -> None:
        self._connection = connection
        self._info = info
        self._listeners = listeners
        self._driver: sqlite3.Connection | None = None

    def send(self, sql: str, values: tuple[Any, ...]) -> list[tuple[Any, ...]]:
        """`sql` with its positional `values`, as the driver takes them, straight to pysqlite
        (`berth.store.driver`), in the connection's transaction; its rows. The driver's errors
        are raised as SQLAlchemy raises them (an IntegrityError, say)."""
        driver = self._driver
        if driver is None:
            driver = self._driver = self._connection.connection.driver_connection
            assert isinstance(driver, sqlite3.Connection)
        for listener in self._listeners:
            listener(sql)
        try:
            cursor = driver.execute(sql, values)
            try:
                return cursor.fetchall()
            finally:
                cursor.close()
        except sqlite3.Error as exc:
            raise DBAPIError.instance(sql, values, exc, sqlite3.Error) from exc

    @property
    def dialect(self) -> Dialect:
        return self._connection.dialect

    async def execute(self, statement: Executable, parameters: Any = None) -> Rows:
        return self._connection.execute(statement, parameters)

    async def scalar(self, statement: Executable, parameters: Any = None) -> Any:
        return self._connection.scalar(statement, parameters)

    async def scalars(self, statement: Executable, parameters: Any = None) -> ScalarResult[Any]:
        return self._connection.scalars(statement, parameters)

    async def run_sync(self, fn: Callable[[Connection], T]) -> T:
        return fn(self._connection)

    @property
    def info(self) -> dict[Any, Any]:
        return self._info


def transaction_info() -> dict[Any, Any]:
    # A new list each time: a failed transaction's callbacks are dropped with it. A pooled
    # PostgreSQL connection's info outlives its transactions: every key is set afresh.
    return {_AFTER_COMMIT: [], _HELD: set(), _MEMO: {}, ONE_CALL: None}


def run_after_commit(info: dict[Any, Any]) -> None:
    for callback in info[_AFTER_COMMIT]:
        callback()
