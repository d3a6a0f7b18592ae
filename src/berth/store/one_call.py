"""PostgreSQL's one-call writes (`Database.one_call`): the reads of a block run at once, its
writes are kept by the repositories (`one_call`) and sent as one statement, its own
transaction, when the block ends."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from sqlalchemy import Connection, Dialect, ScalarResult, Select
from sqlalchemy.exc import DBAPIError
from sqlalchemy.ext.asyncio import AsyncConnection
from sqlalchemy.sql.base import Executable

from berth.store.connection import ONE_CALL, DbConnection, Rows, T

# The SQLSTATE a statement raises to refuse (migration 0025's `berth_hold_or_refuse`).
REFUSED = "BR001"


class OneCallRefused(Exception):
    """The one statement of `Database.one_call` refused (SQLSTATE `REFUSED`): nothing of it was
    written."""


class NotOneCall(Exception):
    """A block run under `Database.one_call` did what its one statement cannot carry (a write
    no repository kept for it, a locking read, or a write after the statement was made):
    nothing was written; the caller runs the block again in a `transaction`."""


@dataclass
class OneCall:
    """The writes a block under `Database.one_call` kept for its one statement, by the
    repository that kept them (`kept`), and the statement that carries them all once the last
    writer has made it (`close`)."""

    kept: dict[str, Any] = field(default_factory=dict)
    statement: Executable | None = None
    parameters: dict[str, Any] = field(default_factory=dict)

    def close(self, statement: Executable, parameters: dict[str, Any]) -> None:
        self.statement, self.parameters = statement, parameters


def one_call(conn: DbConnection) -> OneCall | None:
    """The one statement being gathered, when `conn` is a `Database.one_call` block's and its
    statement is not made yet: a writer then keeps its rows there instead of sending them."""
    call = conn.info.get(ONE_CALL)
    return call if isinstance(call, OneCall) and call.statement is None else None


class OneCallConnection:
    """A `Database.one_call` block's connection (PostgreSQL): reads run at once, each its own
    snapshot, outside any transaction; writes are kept by the repositories (`one_call`) and
    sent as one statement when the block ends. Anything else raises NotOneCall before it is
    sent."""

    def __init__(self, connection: AsyncConnection, info: dict[Any, Any]) -> None:
        self._connection = connection
        self._info = info
        self.written = False

    @property
    def dialect(self) -> Dialect:
        return self._connection.dialect

    @property
    def info(self) -> dict[Any, Any]:
        return self._info

    @staticmethod
    def _read_only(statement: Executable) -> Executable:
        if isinstance(statement, Select) and statement._for_update_arg is None:
            return statement
        raise NotOneCall(f"{type(statement).__name__} cannot wait for the one statement")

    async def execute(self, statement: Executable, parameters: Any = None) -> Rows:
        return await self._connection.execute(self._read_only(statement), parameters)

    async def scalar(self, statement: Executable, parameters: Any = None) -> Any:
        return await self._connection.scalar(self._read_only(statement), parameters)

    async def scalars(self, statement: Executable, parameters: Any = None) -> ScalarResult[Any]:
        return await self._connection.scalars(self._read_only(statement), parameters)

    async def run_sync(self, fn: Callable[[Connection], T]) -> T:
        raise NotOneCall("a block under one_call cannot run driver code")

    async def send(self) -> None:
        """The kept writes' one statement, its own transaction: one round trip. `written`: it
        answered a row (the statement's own sign that its writes were made)."""
        call: OneCall = self._info[ONE_CALL]
        if call.statement is None:
            if call.kept:
                raise NotOneCall(f"the writes kept ({', '.join(call.kept)}) were never closed")
            return
        try:
            rows = await self._connection.execute(call.statement, call.parameters)
        except DBAPIError as exc:
            if getattr(exc.orig, "sqlstate", None) == REFUSED:
                raise OneCallRefused(str(exc.orig)) from exc
            raise
        self.written = rows.first() is not None
