"""Group commit on SQLite: the write transactions of one process that come together share one
SQLite transaction, each in a savepoint of its own.

SQLite has one writer at a time. Every write transaction used to take the file lock, open a
connection, BEGIN IMMEDIATE, and COMMIT (writing its pages to the WAL), and under load the
lock passed between processes once per transaction. Here the first writer (the leader) takes
the lock and begins; when its own work is done, the batch opens: writers of the same process
that reach their write meanwhile join it, each in a SAVEPOINT, released on success and rolled
back on error, so one refusal does not sink the others. A leader that no writer waits for
commits at once: a turn of an event loop busy with other requests (reads computing their
answers) can take tens of milliseconds, and the leader holds the database's write lock, which
writers of the other processes wait for. Otherwise it gives the waiting writers turns of the
event loop to join, until none waits and none came in a turn (at most `BATCH_TURNS`, or until
the batch is full), and every member learns the outcome of that one COMMIT. Across processes
the file lock stays the arbiter.

What a member sees is what it would have seen had the writers before it in the batch
committed first: the batch is a serial order of transactions, the same as one after another.
A member is told how it went only after the COMMIT, failed or not (what it reads next sees the
writers before it); if the COMMIT fails, every member fails with it (nothing of any of them was
written).
"""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator, Callable, Iterator
from contextlib import (
    AbstractAsyncContextManager,
    AbstractContextManager,
    asynccontextmanager,
    contextmanager,
)
from typing import Any

from sqlalchemy import Connection

# Turns of the event loop a batch stays open while writers keep joining, and its size at most:
# a bound on how long the leader's own answer waits for the others.
BATCH_TURNS = 4
BATCH_LIMIT = 64

Info = dict[Any, Any]


class _Batch:
    def __init__(self) -> None:
        loop = asyncio.get_running_loop()
        self.connection: Connection | None = None
        self.open = False  # writers may join
        self.joined = 0
        self.running = 0  # members whose own work is not done
        self.drained = asyncio.Event()
        self.bodies = asyncio.Lock()  # one member's statements at a time: savepoints nest
        self.opened: asyncio.Future[None] = loop.create_future()  # resolved on opening or ending
        self.ended: asyncio.Future[BaseException | None] = loop.create_future()

    def end(self, failure: BaseException | None) -> None:
        self.open = False
        if not self.opened.done():
            self.opened.set_result(None)
        self.ended.set_result(failure)


class GroupCommit:
    """Write transactions of one process on one SQLite file, batched.

    `connect` opens a connection whose `begin()` starts a write transaction (BEGIN IMMEDIATE);
    `turn` takes the database's write lock; `fresh` makes what a transaction's statements run
    through, with its own `info` (after-commit callbacks, what it holds)."""

    def __init__(
        self,
        connect: Callable[[], AbstractContextManager[Connection]],
        turn: Callable[[], AbstractAsyncContextManager[None]],
        fresh: Callable[[Connection], tuple[Any, Info]],
        after: Callable[[Info], None],
    ) -> None:
        self._connect = connect
        self._turn = turn
        self._fresh = fresh
        self._after = after
        self._batch: _Batch | None = None
        self._waiting = 0  # writers waiting for the batch to open (or end)

    @asynccontextmanager
    async def transaction(self) -> AsyncIterator[Any]:
        while True:
            batch = self._batch
            if batch is None or (batch.open and batch.joined < BATCH_LIMIT):
                break
            # The leader is still at its own work (or committing): wait for the batch to open
            # or end, then look again.
            self._waiting += 1
            try:
                await asyncio.shield(batch.opened if not batch.opened.done() else batch.ended)
            finally:
                self._waiting -= 1
        if batch is None:
            async with self._lead() as conn:
                yield conn
        else:
            async with self._join(batch) as conn:
                yield conn

    @asynccontextmanager
    async def _lead(self) -> AsyncIterator[Any]:
        batch = self._batch = _Batch()
        failure: BaseException | None = None
        try:
            async with self._turn():
                with self._connect() as connection:
                    batch.connection = connection
                    conn, info = self._fresh(connection)
                    with connection.begin():
                        yield conn
                        cancelled = await _gather(batch, lambda: self._waiting)
        except BaseException as exc:
            failure = exc
            raise
        finally:
            self._batch = None
            batch.end(failure)
        if cancelled is not None:  # committed all the same
            raise cancelled
        self._after(info)

    @asynccontextmanager
    async def _join(self, batch: _Batch) -> AsyncIterator[Any]:
        batch.joined += 1
        batch.running += 1
        refused: BaseException | None = None
        try:
            async with batch.bodies:
                assert batch.connection is not None
                conn, info = self._fresh(batch.connection)
                with _savepoint(batch.connection):
                    yield conn
        except BaseException as exc:
            refused = exc
        finally:
            batch.running -= 1
            if not batch.running:
                batch.drained.set()
        # A failed member is told after the COMMIT too: what it reads next (the request it
        # repeats, the booking that took its uuid) is there to be read, as after a
        # transaction before it.
        failure = await asyncio.shield(batch.ended)
        if refused is not None:
            raise refused
        if failure is not None:
            raise failure
        self._after(info)


@contextmanager
def _savepoint(connection: Connection) -> Iterator[None]:
    """SAVEPOINT, then RELEASE on success, ROLLBACK TO and RELEASE on error. One name for all:
    members' savepoints never nest (one member's statements at a time). Sent as SQL text: an
    SQLAlchemy savepoint is named afresh each time, so compiled afresh, and cost a reservation
    more than the COMMIT it saves."""
    connection.exec_driver_sql("SAVEPOINT berth_member")
    try:
        yield
    except BaseException:
        connection.exec_driver_sql("ROLLBACK TO berth_member")
        connection.exec_driver_sql("RELEASE berth_member")
        raise
    connection.exec_driver_sql("RELEASE berth_member")


async def _gather(batch: _Batch, waiting: Callable[[], int]) -> asyncio.CancelledError | None:
    """The leader's work is done: let writers join while they keep coming, if some wait to
    (`waiting()`; else it commits at once, holding the write lock for no turn of a loop busy
    with other requests), then wait for the work of those that joined. Not cancelled with the leader's request (that cancellation is
    answered, to be raised after the COMMIT): the members' work is in the batch, and the COMMIT
    is theirs too (the leader's client, told to repeat its request to learn its outcome, finds
    it done)."""
    cancelled: asyncio.CancelledError | None = None
    batch.open = True
    batch.opened.set_result(None)
    for _ in range(BATCH_TURNS if waiting() else 0):
        joined = batch.joined
        try:
            await asyncio.sleep(0)
        except asyncio.CancelledError as exc:
            cancelled = exc
            break
        if (batch.joined == joined and not waiting()) or batch.joined >= BATCH_LIMIT:
            break
    batch.open = False
    while batch.running:
        batch.drained.clear()
        try:
            await asyncio.shield(batch.drained.wait())
        except asyncio.CancelledError as exc:
            cancelled = exc
    return cancelled
