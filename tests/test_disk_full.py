"""Disk full on SQLite, for real: each test's database lives on a small tmpfs that the test fills
to the last byte. A write that does not fit is refused with a clear OCTO error and leaves
nothing behind, reads go on, the file stays sound, and once space is freed writes succeed again
without a restart. Needs root (to mount); SQLite only (the PostgreSQL pass skips it)."""

from __future__ import annotations

import asyncio
import errno
import os
import sqlite3
import subprocess
from collections.abc import Iterator
from pathlib import Path

import httpx
import pytest
from sqlalchemy import select

from berth.background import run_background
from berth.container import Services
from berth.http.errors import DATABASE_FAULTS
from berth.store.tables import bookings
from tests.bookings_helpers import confirm, reservation, reserve, vacancies
from tests.conftest import Clock, auth
from tests.databases import PostgresDatabase, SqliteTemplate
from tests.test_faults import Logs, until

FULL = {"error": "INTERNAL_SERVER_ERROR", "errorMessage": DATABASE_FAULTS["full"]}


class SmallDisk:
    def __init__(self, directory: Path) -> None:
        self.directory = directory
        self.database = directory / "berth.db"
        self._filler = directory / "filler"

    def fill(self) -> None:
        """Take every byte left. SQLite writes a change to the write-ahead log first: it is
        emptied beforehand, so the next change needs new space (a log with room left from
        earlier changes would take a small one without growing)."""
        with sqlite3.connect(self.database) as conn:
            busy, _, _ = conn.execute("PRAGMA wal_checkpoint(TRUNCATE)").fetchone()
            assert busy == 0
        fd = os.open(self._filler, os.O_WRONLY | os.O_CREAT, 0o600)
        try:
            while True:
                os.write(fd, b"\0" * 65536)
        except OSError as exc:
            assert exc.errno == errno.ENOSPC
        finally:
            os.close(fd)

    def free(self) -> None:
        self._filler.unlink()

    def integrity(self) -> str:
        with sqlite3.connect(self.database) as conn:
            result: str = conn.execute("PRAGMA integrity_check").fetchone()[0]
        return result


pytestmark = pytest.mark.sqlite  # a full disk under SQLite's file


@pytest.fixture
def small_disk(tmp_path: Path) -> Iterator[SmallDisk]:
    if os.geteuid() != 0:
        pytest.skip("needs root, to mount a small tmpfs for the database")
    directory = tmp_path / "disk"
    directory.mkdir()
    mounted = subprocess.run(
        ["mount", "-t", "tmpfs", "-o", "size=8m", "tmpfs", str(directory)], capture_output=True, text=True
    )
    if mounted.returncode != 0:
        pytest.skip(f"cannot mount a tmpfs here: {mounted.stderr.strip()}")
    try:
        yield SmallDisk(directory)
    finally:
        subprocess.run(["umount", "--lazy", str(directory)], check=True)


@pytest.fixture
def database_url(test_database: SqliteTemplate | PostgresDatabase, small_disk: SmallDisk) -> str:
    return test_database.fresh(small_disk.directory)


async def test_a_write_that_does_not_fit_is_refused_and_nothing_is_half_written(
    client: httpx.AsyncClient, bookable: Services, small_disk: SmallDisk, capsys: pytest.CaptureFixture[str]
) -> None:
    logs = Logs(capsys)
    first = await reserve(client)
    small_disk.fill()

    body = reservation()
    refused = await client.post("/octo/bookings", json=body, headers=auth())
    assert refused.status_code == 500 and refused.json() == FULL
    logged = logs.error_of(refused)
    assert logged["fault"] == "full" and "database or disk is full" in logged["exception"]
    confirming = await confirm(client, first["uuid"])
    assert confirming.status_code == 500 and confirming.json() == FULL

    # Reads go on; the refused changes left no trace.
    assert await vacancies(client) == 18
    fetched = await client.get(f"/octo/bookings/{first['uuid']}", headers=auth())
    assert fetched.json()["status"] == "ON_HOLD"
    missing = await client.get(f"/octo/bookings/{body['uuid']}", headers=auth())
    assert missing.json()["error"] == "INVALID_BOOKING_UUID"
    assert small_disk.integrity() == "ok"

    small_disk.free()  # no restart
    assert (await reserve(client, body))["status"] == "ON_HOLD"
    assert (await confirm(client, first["uuid"])).json()["status"] == "CONFIRMED"
    assert await vacancies(client) == 16
    assert small_disk.integrity() == "ok"


async def test_the_sweeper_rides_out_a_full_disk(
    client: httpx.AsyncClient,
    bookable: Services,
    clock: Clock,
    small_disk: SmallDisk,
    capsys: pytest.CaptureFixture[str],
) -> None:
    logs = Logs(capsys)
    bookable.settings.expiry_sweep_seconds = 0.05
    bookable.settings.delivery_poll_seconds = 0.05
    held = await reserve(client, reservation(expirationMinutes=1))
    small_disk.fill()
    clock.advance(minutes=2)

    async def stored_status() -> str:
        async with bookable.database.transaction(write=False) as conn:
            status: str = (
                await conn.execute(select(bookings.c.status).where(bookings.c.uuid == held["uuid"]))
            ).scalar_one()
        return status

    async def expired() -> bool:
        return await stored_status() == "EXPIRED"

    stop = asyncio.Event()
    loops = asyncio.create_task(run_background(bookable, stop))
    try:
        await until(lambda: any(line["event"] == "expiry sweep failed" for line in logs.read()))
        failed = next(line for line in logs.read() if line["event"] == "expiry sweep failed")
        assert "database or disk is full" in failed["exception"]
        assert not loops.done() and await stored_status() == "ON_HOLD"
        small_disk.free()
        await until(expired)
    finally:
        stop.set()
        await asyncio.wait_for(loops, 8)
    assert small_disk.integrity() == "ok"
