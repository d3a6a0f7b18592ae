"""Change marks: a value that differs once anything has been committed to the database since it
was taken, by this process or any other, cheap enough to read on every request.
`berth.services.answers` reuses an answer only while the mark it was computed under stands.

Both kinds are exact: a commit that a request could see is never hidden behind an old mark.
- SQLite: `PRAGMA data_version` on a connection of its own, which never writes: SQLite changes
  the value whenever another connection (of any process) has committed (a few microseconds).
- PostgreSQL: the current snapshot (`pg_current_snapshot()`): two equal snapshots see the same
  committed transactions. One round trip on a connection of its own, outside SQLAlchemy; the
  requests that ask while one is under way share the next one, never one sent before they asked.
"""

from __future__ import annotations

import asyncio
import contextlib
import sqlite3
import time

import asyncpg
import structlog

log = structlog.get_logger("berth.store")

# After a failed read, PostgreSQL marks are not tried again for this long (requests go uncached).
RETRY_SECONDS = 1.0
READ_TIMEOUT_SECONDS = 5.0


class SqliteMarks:
    def __init__(self, path: str) -> None:
        self._path = path
        self._connection: sqlite3.Connection | None = None

    async def mark(self) -> int | None:
        try:
            if self._connection is None:
                self._connection = sqlite3.connect(self._path, isolation_level=None, check_same_thread=False)
            row = self._connection.execute("PRAGMA data_version").fetchone()
        except sqlite3.Error:
            self.close()
            return None
        return int(row[0])

    def close(self) -> None:
        if self._connection is not None:
            self._connection.close()
            self._connection = None


class PostgresMarks:
    def __init__(self, dsn: str) -> None:
        self._dsn = dsn
        self._connection: asyncpg.Connection | None = None
        self._waiting: list[asyncio.Future[str | None]] = []
        self._reader: asyncio.Task[None] | None = None
        self._failed_at = float("-inf")

    async def mark(self) -> str | None:
        if time.monotonic() - self._failed_at < RETRY_SECONDS:
            return None
        waiter: asyncio.Future[str | None] = asyncio.get_running_loop().create_future()
        self._waiting.append(waiter)
        if self._reader is None or self._reader.done():
            self._reader = asyncio.create_task(self._read_for_waiters())
        return await waiter

    async def _read_for_waiters(self) -> None:
        while self._waiting:
            batch, self._waiting = self._waiting, []
            value: str | None = None
            try:
                value = await self._read()
            finally:  # whatever happened, nobody is left waiting (None: compute afresh)
                for waiter in batch:
                    if not waiter.done():
                        waiter.set_result(value)

    async def _read(self) -> str | None:
        try:
            async with asyncio.timeout(READ_TIMEOUT_SECONDS):
                if self._connection is None or self._connection.is_closed():
                    self._connection = await asyncpg.connect(self._dsn)
                return str(await self._connection.fetchval("SELECT pg_current_snapshot()::text"))
        except Exception as exc:  # any failure only means: no reuse for now
            log.warning("change marks unavailable; answers are not reused for now", error=type(exc).__name__)
            self._failed_at = time.monotonic()
            await self._drop_connection()
            return None

    async def _drop_connection(self) -> None:
        connection, self._connection = self._connection, None
        if connection is not None:
            with contextlib.suppress(Exception):
                await connection.close(timeout=1)

    async def close(self) -> None:
        if self._reader is not None:
            self._reader.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await self._reader
        for waiter in self._waiting:
            waiter.cancel()
        self._waiting = []
        await self._drop_connection()
