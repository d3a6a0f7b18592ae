"""`berth db backup` and the documented restore, with the real `berth` command: a live SQLite
database copied while a server writes to it, restored and served again; PostgreSQL dumped by the
pg_dump Berth runs, restored with the pg_restore command it prints."""

from __future__ import annotations

import asyncio
import json
import re
import shlex
import shutil
import sqlite3
import subprocess
import threading
import uuid
from collections.abc import Iterator
from contextlib import contextmanager
from datetime import date, timedelta
from pathlib import Path
from typing import Any

import asyncpg
import httpx
import pytest
from sqlalchemy.engine import make_url

from berth.store.migrate import head_revision
from tests.berth_process import berth, berth_serve, free_port
from tests.conftest import KEY_A
from tests.databases import POSTGRES_URL

HEADERS = {"Authorization": f"Bearer {KEY_A}"}
REFERENCE = "backup-test"


def sqlite_url(path: Path) -> str:
    return f"sqlite:///{path}"


def open_slots(base: str) -> list[str]:
    """Availability ids of the demo cruise with places left, over the coming week."""
    start = date.today() + timedelta(days=1)
    response = httpx.post(
        base + "/octo/availability",
        json={
            "productId": "thames-sightseeing",
            "optionId": "DEFAULT",
            "localDateStart": start.isoformat(),
            "localDateEnd": (start + timedelta(days=7)).isoformat(),
        },
        headers=HEADERS,
    )
    assert response.status_code == 200, response.text
    slots = [a["id"] for a in response.json() if a["available"] and a["vacancies"]]
    assert slots
    return slots


def book(http: httpx.Client, availability_id: str) -> str:
    """A confirmed booking of one adult; its uuid."""
    booking_uuid = str(uuid.uuid4())
    reserved = http.post(
        "/octo/bookings",
        json={
            "uuid": booking_uuid,
            "productId": "thames-sightseeing",
            "optionId": "DEFAULT",
            "availabilityId": availability_id,
            "resellerReference": REFERENCE,
            "unitItems": [{"unitId": "adult"}],
        },
    )
    assert reserved.status_code == 200, reserved.text
    confirmed = http.post(
        f"/octo/bookings/{booking_uuid}/confirm",
        json={"contact": {"firstName": "Ada", "lastName": "Lovelace", "emailAddress": "ada@example.com"}},
    )
    assert confirmed.status_code == 200, confirmed.text
    return booking_uuid


class Writer:
    """Books one place after another on a live server, in a thread, until stopped."""

    def __init__(self, base: str) -> None:
        self.slots = open_slots(base)
        self.http = httpx.Client(base_url=base, headers=HEADERS, timeout=30)
        self.confirmed: list[str] = []
        self.stop = threading.Event()
        self.failure: BaseException | None = None
        self.thread = threading.Thread(target=self._run, daemon=True)

    def _run(self) -> None:
        try:
            while not self.stop.is_set():
                slot = self.slots[len(self.confirmed) // 100 % len(self.slots)]
                self.confirmed.append(book(self.http, slot))
        except BaseException as exc:
            self.failure = exc

    def wait_for(self, count: int) -> None:
        while len(self.confirmed) < count:
            assert self.failure is None and self.thread.is_alive(), self.failure
            self.stop.wait(0.05)

    @contextmanager
    def running(self) -> Iterator[Writer]:
        self.thread.start()
        try:
            yield self
        finally:
            self.stop.set()
            self.thread.join(30)
            self.http.close()
        assert self.failure is None, self.failure


def bookings(base: str) -> list[dict[str, Any]]:
    response = httpx.get(base + "/octo/bookings", params={"resellerReference": REFERENCE}, headers=HEADERS)
    assert response.status_code == 200, response.text
    found: list[dict[str, Any]] = response.json()
    return sorted(found, key=lambda b: b["uuid"])


def as_booked(booking: dict[str, Any]) -> dict[str, Any]:
    """A booking without its availability, whose vacancies change with every later booking,
    and with its ticket URLs' tokens without the server's address (each server here has its own
    port, and so its own BERTH_PUBLIC_URL)."""
    kept = {key: value for key, value in booking.items() if key != "availability"}
    found: dict[str, Any] = json.loads(re.sub(r'"https?://[^/"]+/tickets/', '"/tickets/', json.dumps(kept)))
    return found


def test_backup_refuses_to_overwrite_unless_forced(tmp_path: Path) -> None:
    url = sqlite_url(tmp_path / "berth.db")
    missing = berth("db", "backup", str(tmp_path / "copy.db"), database_url=url)
    assert missing.returncode == 1
    assert f"no database at {tmp_path / 'berth.db'}: nothing to back up" in missing.stderr
    assert not (tmp_path / "berth.db").exists() and not (tmp_path / "copy.db").exists()

    assert berth("db", "upgrade", database_url=url).returncode == 0
    assert berth("demo", database_url=url).returncode == 0
    target = tmp_path / "copy.db"
    made = berth("db", "backup", str(target), database_url=url)
    assert made.returncode == 0, made.stderr
    assert f"Backed up SQLite database {tmp_path / 'berth.db'} to {target}" in made.stdout
    assert f"revision {head_revision()}" in made.stdout
    before = target.read_bytes()

    assert berth("connection", "create", "Ticket Hub", database_url=url).returncode == 0
    refused = berth("db", "backup", str(target), database_url=url)
    assert refused.returncode == 1 and refused.stdout == ""
    assert f"{target} already exists; nothing was written (--force replaces it)" in refused.stderr
    assert target.read_bytes() == before

    forced = berth("db", "backup", "--force", str(target), database_url=url)
    assert forced.returncode == 0, forced.stderr
    with sqlite3.connect(target) as copy:
        names = {row[0] for row in copy.execute("SELECT name FROM connections")}
    assert "Ticket Hub" in names
    assert sorted(p.name for p in tmp_path.iterdir() if p.name.startswith("copy")) == ["copy.db"]


def test_a_live_sqlite_database_is_backed_up_and_restored(tmp_path: Path) -> None:
    live = tmp_path / "live" / "berth.db"
    live.parent.mkdir()
    backup = tmp_path / "berth-backup.db"
    with berth_serve(sqlite_url(live), "--demo") as base, Writer(base).running() as writer:
        writer.wait_for(5)
        confirmed_before = set(writer.confirmed)
        # Fresh, as this test was written: the writer books while the command runs, which a
        # command forked from the fork server (a few tenths of a second) may not last for.
        made = berth("db", "backup", str(backup), database_url=sqlite_url(live), fresh=True)
        confirmed_after = set(writer.confirmed)
        assert made.returncode == 0, made.stderr
        assert len(confirmed_after) > len(confirmed_before)  # the server wrote while it ran
        writer.wait_for(len(confirmed_after) + 3)
        live_bookings = {b["uuid"]: b for b in bookings(base)}

    with sqlite3.connect(backup) as copy:
        assert copy.execute("PRAGMA integrity_check").fetchone() == ("ok",)
        rows = copy.execute("SELECT uuid FROM bookings WHERE reseller_reference = ?", (REFERENCE,))
        in_backup = {row[0] for row in rows}
    assert confirmed_before <= in_backup <= set(live_bookings)
    assert set(live_bookings) - in_backup  # bookings made after the copy are not in it

    # The documented restore: with Berth stopped, copy the file into place and start Berth.
    restored = tmp_path / "restored" / "berth.db"
    restored.parent.mkdir()
    shutil.copyfile(backup, restored)
    with berth_serve(sqlite_url(restored)) as base:
        served = bookings(base)
    assert {b["uuid"] for b in served} == in_backup
    # The copy is one moment's state: the writer books one at a time, so at most one booking
    # was between its reservation and its confirmation then.
    assert len([b for b in served if b["status"] != "CONFIRMED"]) <= 1
    done = [b for b in served if b["uuid"] in confirmed_before]
    assert [as_booked(b) for b in done] == [as_booked(live_bookings[b["uuid"]]) for b in done]


def test_a_postgresql_backup_that_fails_is_one_line_and_writes_nothing(tmp_path: Path) -> None:
    port = free_port()  # nothing listens there
    url = f"postgresql://berth:s3cret@127.0.0.1:{port}/berth?sslmode=disable"
    run = berth("db", "backup", str(tmp_path / "berth.dump"), database_url=url)
    assert run.returncode == 1
    assert "s3cret" not in run.stdout + run.stderr
    lines = [line for line in run.stderr.splitlines() if line.strip()]
    assert len(lines) == 1 and lines[0].startswith("error: pg_dump failed, nothing was written: "), run.stderr
    assert str(port) in lines[0]
    assert list(tmp_path.iterdir()) == []


def test_without_pg_dump_the_backup_names_the_package(tmp_path: Path) -> None:
    url = "postgresql://berth:s3cret@127.0.0.1:5432/berth"
    run = berth("db", "backup", str(tmp_path / "berth.dump"), database_url=url, PATH=str(tmp_path))
    assert run.returncode == 1
    assert "pg_dump is not installed" in run.stderr and "postgresql-client" in run.stderr, run.stderr
    assert list(tmp_path.iterdir()) == []


def printed_command(output: str, program: str) -> list[str]:
    line = next(line.strip() for line in output.splitlines() if line.strip().startswith(program))
    return shlex.split(line)


@contextmanager
def new_postgres_database(admin_url: str) -> Iterator[str]:
    """An empty database of its own on the test server, dropped afterwards; its URL."""
    parsed = make_url(admin_url)
    admin_dsn = parsed.set(drivername="postgresql").render_as_string(hide_password=False)
    name = f"berth_backup_{uuid.uuid4().hex[:12]}"

    async def admin(statement: str) -> None:
        conn = await asyncpg.connect(admin_dsn)
        try:
            await conn.execute(statement)
        finally:
            await conn.close()

    asyncio.run(admin(f'CREATE DATABASE "{name}"'))
    try:
        yield parsed.set(drivername="postgresql", database=name).render_as_string(hide_password=False)
    finally:
        asyncio.run(admin(f'DROP DATABASE IF EXISTS "{name}" WITH (FORCE)'))


@pytest.mark.postgresql  # with pg_dump and pg_restore, which dev.py test installs
def test_a_live_postgresql_database_is_dumped_and_restored(tmp_path: Path) -> None:
    assert POSTGRES_URL is not None
    dump = tmp_path / "berth.dump"
    with new_postgres_database(POSTGRES_URL) as live_url, new_postgres_database(POSTGRES_URL) as fresh_url:
        with berth_serve(live_url, "--demo") as base, Writer(base).running() as writer:
            writer.wait_for(5)
            confirmed_before = set(writer.confirmed)
            told = berth("db", "backup", str(dump), database_url=live_url)
            assert told.returncode == 0, told.stderr
            assert f"to {dump} (" in told.stdout, told.stdout
            assert dump.stat().st_mode & 0o777 == 0o600  # the whole database: its owner's alone
            writer.wait_for(len(writer.confirmed) + 3)
            live_bookings = {b["uuid"]: b for b in bookings(base)}

        # The documented restore, into an empty database.
        restore = printed_command(told.stdout, "pg_restore")
        restore = [f"--dbname={fresh_url}" if arg.startswith("--dbname=") else arg for arg in restore]
        subprocess.run(restore, check=True, timeout=120)
        with berth_serve(fresh_url) as base:
            served = bookings(base)
    assert confirmed_before <= {b["uuid"] for b in served} <= set(live_bookings)
    assert len([b for b in served if b["status"] != "CONFIRMED"]) <= 1
    done = [b for b in served if b["uuid"] in confirmed_before]
    assert [as_booked(b) for b in done] == [as_booked(live_bookings[b["uuid"]]) for b in done]
