"""What was committed since a process last looked, cheap enough to ask on every request:
`berth.services.answers` keeps an availability answer until a commit changes its product's
places on one of its days (`availability_changes_repo` records them), or until its seconds run
out.

A reader keeps a position and asks for the changes after it; the answer is the new position
and the changes, or `None` for the changes when they cannot be told (the first look, a look
after longer than `READER_PATIENCE`, too many rows): then everything counts as changed. Both kinds
are exact: a commit that a request could see is never missed.
- SQLite: `PRAGMA data_version` on a connection of its own, which never writes: SQLite changes
  the value whenever another connection (of any process) has committed (a few microseconds).
  Only then are the rows after the last id seen read (ids come in commit order: writers take
  turns).
- PostgreSQL: the current snapshot (`pg_current_snapshot()`); only when it differs from the
  last one, a statement that answers its own snapshot and the rows written by the transactions
  that snapshot sees committed and the last one did not. On a connection of its own, outside
  SQLAlchemy; the requests that ask while one is under way share the next one, never one sent
  before they asked.
"""

from __future__ import annotations

import asyncio
import contextlib
import sqlite3
import time
from dataclasses import dataclass
from datetime import timedelta

import asyncpg
import structlog

log = structlog.get_logger("berth.store")

# (product id, local date "YYYY-MM-DD"): a change to that product's places on that day
# (`availability_changes`). None for the date: every day of the product; for both: everything.
Change = tuple[str | None, str | None]
EVERYTHING: Change = (None, None)

# The rows are kept for `availability_changes_repo.KEEP_FOR`; a reader that has not looked for
# longer than this treats everything as changed.
READER_PATIENCE = timedelta(minutes=2)

# After a failed read, PostgreSQL marks are not tried again for this long (requests go uncached).
RETRY_SECONDS = 1.0
READ_TIMEOUT_SECONDS = 5.0
# More changes than this since the last look: everything counts as changed.
MOST_CHANGES = 1000


@dataclass(frozen=True)
class Position:
    """Where a reader stands: the database's mark and the last change seen, and when it looked
    (time.monotonic())."""

    mark: object
    last: object
    at: float


@dataclass(frozen=True)
class Look:
    position: Position
    changes: frozenset[Change] | None  # None: unknown, so everything


def _unknown_since(position: Position | None) -> bool:
    return position is None or time.monotonic() - position.at > READER_PATIENCE.total_seconds()


class SqliteMarks:
    def __init__(self, path: str) -> None:
        self._path = path
        self._connection: sqlite3.Connection | None = None

    async def look(self, since: Position | None) -> Look | None:
        try:
            if self._connection is None:
                self._connection = sqlite3.connect(self._path, isolation_level=None, check_same_thread=False)
            return self._look(self._connection, since)
        except sqlite3.Error:
            self.close()
            return None

    @staticmethod
    def _look(connection: sqlite3.Connection, since: Position | None) -> Look:
        now = time.monotonic()
        mark = connection.execute("PRAGMA data_version").fetchone()[0]
        if since is not None and mark == since.mark and not _unknown_since(since):
            return Look(Position(mark, since.last, now), frozenset())
        if _unknown_since(since) or since is None:
            last = connection.execute("SELECT max(id) FROM availability_changes").fetchone()[0]
            return Look(Position(mark, last or 0, now), None)
        rows = connection.execute(
            "SELECT id, product_id, local_date FROM availability_changes WHERE id > ? ORDER BY id LIMIT ?",
            (since.last, MOST_CHANGES + 1),
        ).fetchall()
        last = rows[-1][0] if rows else since.last
        changes = frozenset((product, day) for _, product, day in rows) if len(rows) <= MOST_CHANGES else None
        return Look(Position(mark, last, now), changes)

    def close(self) -> None:
        if self._connection is not None:
            self._connection.close()
            self._connection = None


# The snapshot now, and what the transactions committed since the one given have recorded (rows
# of transactions the given snapshot already saw finished are not even looked at: xid < xmin).
_SINCE = """
SELECT pg_current_snapshot()::text, array_agg(product_id), array_agg(local_date), count(*)
FROM (
    SELECT DISTINCT product_id, local_date FROM availability_changes
    WHERE $1::text IS NOT NULL
      AND xid >= pg_snapshot_xmin($1::text::pg_snapshot)::text::bigint
      AND NOT pg_visible_in_snapshot(xid::text::xid8, $1::text::pg_snapshot)
    LIMIT $2
) AS changed
"""


class PostgresMarks:
    def __init__(self, dsn: str) -> None:
        self._dsn = dsn
        self._connection: asyncpg.Connection | None = None
        self._waiting: list[tuple[Position | None, asyncio.Future[Look | None]]] = []
        self._reader: asyncio.Task[None] | None = None
        self._failed_at = float("-inf")

    async def look(self, since: Position | None) -> Look | None:
        if time.monotonic() - self._failed_at < RETRY_SECONDS:
            return None
        waiter: asyncio.Future[Look | None] = asyncio.get_running_loop().create_future()
        self._waiting.append((since, waiter))
        if self._reader is None or self._reader.done():
            self._reader = asyncio.create_task(self._read_for_waiters())
        return await waiter

    async def _read_for_waiters(self) -> None:
        while self._waiting:
            batch, self._waiting = self._waiting, []
            looks: dict[Position | None, Look | None] = {}
            try:
                for since in dict.fromkeys(position for position, _ in batch):  # nearly always one
                    looks[since] = await self._read(since)
            finally:  # whatever happened, nobody is left waiting (None: compute afresh)
                for since, waiter in batch:
                    if not waiter.done():
                        waiter.set_result(looks.get(since))

    async def _read(self, since: Position | None) -> Look | None:
        now = time.monotonic()
        unknown = _unknown_since(since)
        try:
            async with asyncio.timeout(READ_TIMEOUT_SECONDS):
                if self._connection is None or self._connection.is_closed():
                    self._connection = await asyncpg.connect(self._dsn)
                given = None if unknown or since is None else since.mark
                if given is not None:
                    # The snapshot alone first: unchanged (no commit since), the look ends there,
                    # a third of the statement below (about 0.1 against 0.3 ms).
                    snapshot = str(await self._connection.fetchval("SELECT pg_current_snapshot()::text"))
                    if snapshot == given:
                        return Look(Position(snapshot, None, now), frozenset())
                row = await self._connection.fetchrow(_SINCE, given, MOST_CHANGES + 1)
        except Exception as exc:  # any failure only means: no reuse for now
            log.warning("change marks unavailable; answers are not reused for now", error=type(exc).__name__)
            self._failed_at = time.monotonic()
            await self._drop_connection()
            return None
        snapshot, products, days, count = str(row[0]), row[1] or [], row[2] or [], int(row[3])
        changes = None if unknown or count > MOST_CHANGES else frozenset(zip(products, days, strict=True))
        return Look(Position(snapshot, None, now), changes)

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
        for _, waiter in self._waiting:
            waiter.cancel()
        self._waiting = []
        await self._drop_connection()
