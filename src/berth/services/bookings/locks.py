"""The slot lock manager: how a write that takes places gets a count it can trust.

Every write that can take places locks the slot rows it touches, then reads what they hold
inside the lock (`RowLocks`). The race tests swap in `NoLocks` (BERTH_DEBUG_DISABLE_SLOT_LOCK)
to show what the lock prevents: no lock is taken, and counts are read outside the write
transaction, as a server without the lock would see them; a reservation reads ahead, before
its write transaction, so that concurrent reservations all count the same places.
"""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable, Callable, Sequence
from typing import Any, Protocol, TypeVar, cast

from berth.store import bookings_repo
from berth.store.connection import DbConnection
from berth.store.database import Database

T = TypeVar("T")
# A slot's lock row: product id, option id, availability id (or a policy's own row name).
SlotKey = tuple[str, str, str]
Read = Callable[[DbConnection], Awaitable[T]]


class SlotLocks(Protocol):
    # Whether a statement that checks and takes places at once (`bookings_repo.hold_if_room`)
    # may be trusted: under the lock it may; without it (NoLocks) counts are read ahead instead.
    checks_in_statement: bool

    async def lock(self, conn: DbConnection, keys: Sequence[SlotKey]) -> None:
        """Lock the slots `keys` for the rest of the transaction (sorted: no deadlocks)."""

    async def read_ahead(self, token: str, read: Read[Any]) -> None:
        """Before a write transaction: what `read` answers, for `locked_read` under `token`."""

    async def locked_read(self, conn: DbConnection, keys: Sequence[SlotKey], token: str, read: Read[T]) -> T:
        """Lock `keys`, then answer `read` inside the transaction."""


class RowLocks:
    """The real locks: PostgreSQL rows in `slot_locks` (SQLite: the write transaction)."""

    checks_in_statement = True

    async def lock(self, conn: DbConnection, keys: Sequence[SlotKey]) -> None:
        await bookings_repo.lock_slots(conn, keys)

    async def read_ahead(self, token: str, read: Read[Any]) -> None:
        return None

    async def locked_read(self, conn: DbConnection, keys: Sequence[SlotKey], token: str, read: Read[T]) -> T:
        await bookings_repo.lock_slots(conn, keys)
        return await read(conn)


class NoLocks:
    """No locks, and counts read outside the write transaction (race tests only)."""

    checks_in_statement = False

    def __init__(self, database: Database) -> None:
        self._db = database
        self._ahead: dict[str, Any] = {}

    async def lock(self, conn: DbConnection, keys: Sequence[SlotKey]) -> None:
        return None

    async def read_ahead(self, token: str, read: Read[Any]) -> None:
        self._ahead[token] = await self._read(read)

    async def locked_read(self, conn: DbConnection, keys: Sequence[SlotKey], token: str, read: Read[T]) -> T:
        if token in self._ahead:
            return cast(T, self._ahead.pop(token))
        return await self._read(read)

    async def _read(self, read: Read[T]) -> T:
        async with self._db.transaction(write=False) as conn:
            value = await read(conn)
        # Let other requests read the same count before this one writes, as they would from
        # other processes (SQLite statements run without yielding to the event loop).
        await asyncio.sleep(0)
        return value


def slot_locks(database: Database, *, disabled: bool) -> SlotLocks:
    return NoLocks(database) if disabled else RowLocks()
