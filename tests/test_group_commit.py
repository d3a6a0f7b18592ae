"""Group commit on SQLite (issue 31, `berth.store.group_commit`): the write transactions of one
process that come together share one SQLite transaction, each in its own savepoint.

What must hold: every member's work commits once, with the others, or not at all; a member
that fails leaves nothing and sinks no other; after-commit callbacks run after the COMMIT and
only for members that succeeded; a failed COMMIT fails every member; the leader's request
being stopped does not take the others' work with it. And reservations made together are
never oversold and each is kept. Across processes, a writer waits for another process's
writer, whether that one is quick (the lock is tried again from the event loop) or slow (then
waited for in a thread), and the event loop serves others meanwhile."""

from __future__ import annotations

import asyncio
import sys
import time
from collections.abc import AsyncIterator, Callable, Coroutine
from typing import Any

import pytest
from sqlalchemy import func, select, text
from sqlalchemy.engine import make_url
from sqlalchemy.exc import IntegrityError

from berth.container import Services
from berth.domain.errors import UnprocessableEntity
from berth.domain.staff import COMMAND_LINE
from berth.services.bookings.inputs import ReserveInput, UnitItemInput
from berth.services.departures import DepartureChange
from berth.store.connection import DbConnection, after_commit
from berth.store.database import Database
from berth.store.tables import bookings, slot_holds
from tests.statement_counts import counting
from tests.test_catalog_import import MINIMAL

SLOT = "2026-06-02T10:00:00+01:00"


@pytest.fixture
async def db(services: Services) -> AsyncIterator[Database]:
    assert services.database.is_sqlite
    async with services.database.transaction(write=True) as conn:
        await conn.execute(text("CREATE TABLE scratch (id INTEGER PRIMARY KEY, note TEXT NOT NULL)"))
        await conn.execute(
            text("CREATE TABLE child (id INTEGER PRIMARY KEY, parent INTEGER REFERENCES scratch(id))")
        )
    yield services.database


async def _notes(db: Database) -> list[str]:
    async with db.transaction(write=False) as conn:
        return list(await conn.scalars(text("SELECT note FROM scratch ORDER BY id")))


def _writer(db: Database, note: str, called: list[str]) -> Callable[[], Coroutine[Any, Any, None]]:
    async def write() -> None:
        async with db.transaction(write=True) as conn:
            await conn.execute(text("INSERT INTO scratch (note) VALUES (:note)"), {"note": note})
            # Work that waits (a read elsewhere, a lock): writers coming meanwhile wait for the
            # batch and join it. A leader that no writer waits for commits at once.
            await asyncio.sleep(0)
            after_commit(conn, lambda: called.append(note))
            if note.startswith("fail"):
                raise ValueError(note)

    return write


@pytest.mark.sqlite  # group commit is SQLite's: PostgreSQL has many writers at once
async def test_writers_that_come_together_share_one_commit_and_a_failing_one_sinks_no_other(
    db: Database,
) -> None:
    called: list[str] = []
    notes = [f"ok {n}" if n % 4 else f"fail {n}" for n in range(20)]
    with counting(db) as statements:
        outcomes = await asyncio.gather(
            *(_writer(db, note, called)() for note in notes), return_exceptions=True
        )
    failed = [str(o) for o in outcomes if isinstance(o, ValueError)]
    assert failed == [n for n in notes if n.startswith("fail")]
    kept = [n for n in notes if n.startswith("ok")]
    assert sorted(await _notes(db)) == sorted(kept)
    assert sorted(called) == sorted(kept)  # callbacks of the failed ones dropped with their work
    kinds = statements.kinds()
    # One leader's BEGIN and COMMIT for several writers: fewer COMMITs than writers that succeeded.
    assert 1 <= kinds.count("COMMIT") < len(kept), kinds
    assert kinds.count("SAVEPOINT") >= 1
    assert "ROLLBACK" in kinds  # ROLLBACK TO SAVEPOINT of a failing member


@pytest.mark.sqlite  # group commit is SQLite's: PostgreSQL has many writers at once
async def test_a_member_that_fails_is_told_after_the_commit_of_the_writers_before_it(db: Database) -> None:
    """As one transaction after another: a writer refused by the row of one before it (a uuid
    taken, say) reads that row when it looks again."""
    async with db.transaction(write=True) as conn:
        await conn.execute(text("CREATE UNIQUE INDEX scratch_note ON scratch (note)"))

    async def write() -> str:
        try:
            await _writer(db, "taken", [])()
        except IntegrityError:
            return f"refused; then found {await _notes(db)}"
        return "written"

    assert sorted(await asyncio.gather(write(), write(), write())) == [
        "refused; then found ['taken']", "refused; then found ['taken']", "written",
    ]  # fmt: skip


@pytest.mark.sqlite  # group commit is SQLite's: PostgreSQL has many writers at once
async def test_callbacks_run_after_the_commit(db: Database) -> None:
    seen: list[list[str]] = []
    looks: list[asyncio.Task[None]] = []

    async def write(note: str) -> None:
        async with db.transaction(write=True) as conn:
            await conn.execute(text("INSERT INTO scratch (note) VALUES (:note)"), {"note": note})

            async def look() -> None:
                seen.append(await _notes(db))

            def look_soon() -> None:
                looks.append(asyncio.get_running_loop().create_task(look()))

            after_commit(conn, look_soon)

    await asyncio.gather(*(write(f"n{n}") for n in range(8)))
    await asyncio.gather(*looks)
    # Each callback, read from another connection, already sees its own row.
    assert len(seen) == 8 and all(len(rows) == 8 for rows in seen), seen


@pytest.mark.sqlite  # group commit is SQLite's: PostgreSQL has many writers at once
async def test_a_failed_commit_fails_every_member_and_writes_nothing(db: Database) -> None:
    async def orphan() -> None:
        async with db.transaction(write=True) as conn:
            # A foreign key checked at COMMIT: the whole batch's COMMIT fails.
            await conn.execute(text("PRAGMA defer_foreign_keys = ON"))
            await conn.execute(text("INSERT INTO child (parent) VALUES (999)"))

    called: list[str] = []
    writers = [_writer(db, f"ok {n}", called) for n in range(6)]
    outcomes = await asyncio.gather(
        writers[0](), orphan(), *(w() for w in writers[1:]), return_exceptions=True
    )
    assert all(isinstance(o, Exception) for o in outcomes), outcomes
    assert "FOREIGN KEY" in str(outcomes[1])
    assert await _notes(db) == [] and called == []
    await _writer(db, "after", called)()  # and the database takes writes again
    assert await _notes(db) == ["after"] and called == ["after"]


@pytest.mark.sqlite  # group commit is SQLite's: PostgreSQL has many writers at once
async def test_the_leaders_request_stopped_after_its_work_leaves_the_batch_to_commit(db: Database) -> None:
    called: list[str] = []
    leader = asyncio.create_task(_writer(db, "leader", called)())
    members = [asyncio.create_task(_writer(db, f"member {n}", called)()) for n in range(5)]
    await asyncio.sleep(0)  # the leader is at its work, the members wait for its batch
    await asyncio.sleep(0)  # the leader's work is done: it opened its batch and gives them a turn
    assert not leader.done()
    leader.cancel()
    await asyncio.gather(*members)
    with pytest.raises(asyncio.CancelledError):
        await leader
    assert sorted(await _notes(db)) == sorted(["leader", *(f"member {n}" for n in range(5))])
    assert sorted(called) == sorted(f"member {n}" for n in range(5))


def _request(pax: int) -> ReserveInput:
    return ReserveInput(
        product_id="walk", option_id="DEFAULT", availability_id=SLOT,
        unit_items=tuple(UnitItemInput("adult") for _ in range(pax)), expiration_minutes=30,
    )  # fmt: skip


async def _count(conn: DbConnection, statement: object) -> int:
    return int(await conn.scalar(statement) or 0)  # type: ignore[arg-type]


@pytest.mark.sqlite  # group commit is SQLite's: PostgreSQL has many writers at once
async def test_reservations_made_together_are_never_oversold_and_each_is_kept(
    services: Services, db: Database
) -> None:
    await services.catalog.import_text(MINIMAL.replace("capacity: 12", "capacity: 40"), actor=COMMAND_LINE)
    connection = await services.connections.ensure("Batcher", "batcher-key")
    catalog = (await services.catalog.snapshot()).catalog
    change = DepartureChange(set_capacity=True, capacity=9)
    await services.departures.change(catalog, "walk", "DEFAULT", SLOT, change, actor=COMMAND_LINE)

    async def one(pax: int) -> int:
        try:
            await services.bookings.reserve(catalog, connection.id, _request(pax))
        except UnprocessableEntity:
            return -pax
        return pax

    with counting(db) as statements:
        outcomes = await asyncio.gather(*(one(pax) for pax in (1, 2, 3) * 6))
    taken = sum(o for o in outcomes if o > 0)
    async with db.transaction(write=False) as conn:
        rows = await _count(conn, select(func.count()).select_from(bookings))
        booked = await _count(conn, select(func.coalesce(func.sum(bookings.c.pax), 0)))
        counted = await _count(conn, select(func.coalesce(func.sum(slot_holds.c.pax), 0)))
    assert taken <= 9 and (booked, counted) == (taken, taken)
    assert rows == sum(1 for o in outcomes if o > 0)  # a refused party's row was rolled back
    assert all(-o > 9 - taken for o in outcomes if o < 0), outcomes
    assert statements.kinds().count("COMMIT") < len(outcomes)


# Another OS process takes Berth's SQLite write lock, says so, holds it, says when it gave it back.
_HOLD_THE_LOCK = """
import fcntl, os, sys, time
fd = os.open(sys.argv[1], os.O_RDWR | os.O_CREAT, 0o600)
fcntl.flock(fd, fcntl.LOCK_EX)
print("held", flush=True)
time.sleep(float(sys.argv[2]))
released = time.time()
fcntl.flock(fd, fcntl.LOCK_UN)
print(released, flush=True)
"""


@pytest.mark.parametrize("hold_seconds", [0.02, 0.6], ids=["quick", "slow"])
@pytest.mark.sqlite  # group commit is SQLite's: PostgreSQL has many writers at once
async def test_a_writer_waits_for_another_process_and_the_loop_serves_others_meanwhile(
    db: Database, hold_seconds: float
) -> None:
    lock_path = f"{make_url(db.url).database}.writelock"
    holder = await asyncio.create_subprocess_exec(
        sys.executable, "-c", _HOLD_THE_LOCK, lock_path, str(hold_seconds), stdout=asyncio.subprocess.PIPE
    )
    assert holder.stdout is not None
    assert await holder.stdout.readline() == b"held\n"
    turns = 0

    async def others() -> None:
        nonlocal turns
        while True:
            await asyncio.sleep(0.001)
            turns += 1

    ticking = asyncio.create_task(others())
    try:
        async with db.transaction(write=True) as conn:
            await conn.execute(text("INSERT INTO scratch (note) VALUES ('after the other process')"))
        committed = time.time()
    finally:
        ticking.cancel()
    released = float(await holder.stdout.readline())
    await holder.wait()
    assert committed >= released  # it did not write while the other process held the lock
    assert turns > 0  # the loop served others while the writer waited
    assert await _notes(db) == ["after the other process"]
