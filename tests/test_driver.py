"""Hot statements straight through SQLite's driver (`berth.store.driver`, issue 41 §3): the rows
they write and the values they read are those SQLAlchemy writes and reads for the same
statement and values, and the driver's errors are raised as SQLAlchemy's."""

from __future__ import annotations

from dataclasses import replace
from datetime import UTC, date, datetime, timedelta, timezone
from typing import Any

import pytest
from sqlalchemy import Connection, insert
from sqlalchemy.dialects.sqlite.pysqlite import SQLiteDialect_pysqlite as sqlite_dialect
from sqlalchemy.exc import IntegrityError

from berth.container import Services
from berth.domain.bookings import Booking, BookingStatus, Cancellation, Contact, UnitItem
from berth.domain.price_lines import lines_from_document
from berth.store import bookings_repo, departures_repo, driver
from berth.store.connection import DbConnection, SqliteConnection
from berth.store.database import Database
from berth.store.tables import booking_events, departure_overrides
from berth.store.types import UTCDateTime

NOW = datetime(2026, 6, 1, 8, 0, 0, 123456, tzinfo=UTC)
START = datetime(2026, 6, 2, 9, 0, tzinfo=UTC)


def _booking(connection_id: str, name: str) -> Booking:
    return Booking(
        id=f"{name}-id", uuid=f"{name}-uuid", connection_id=connection_id, test_mode=False,
        status=BookingStatus.ON_HOLD, product_id="walk", option_id="DEFAULT",
        availability_id="2026-06-02T10:00:00+01:00", slot_start=START, local_date=date(2026, 6, 2), pax=2,
        reseller_reference="Réf «1»", supplier_reference=f"SR{name.upper()}", notes=None,
        contact=Contact({"fullName": "Ann Ö", "emailAddress": "ann@example.com"}, ("en",), True),
        unit_items=(UnitItem(uuid="item", unit_id="adult", supplier_reference="U1"),),
        currency="GBP", freesale=False, request_fingerprint="f" * 64, created_at=NOW, updated_at=NOW,
        expires_at=NOW + timedelta(minutes=30), order_position=None, slot_end=START + timedelta(hours=2),
        extensions={"octo/pickups": {"pickupPointId": "pier", "big": 2**70}},
        price_lines=lines_from_document([]),
    )  # fmt: skip


def _raw(conn: Connection, table: str, order: str) -> list[dict[str, Any]]:
    rows = conn.exec_driver_sql(f"SELECT * FROM {table} ORDER BY {order}").mappings().all()
    return [dict(row) for row in rows]


def _alike(rows: list[dict[str, Any]], *names: str) -> list[dict[str, Any]]:
    """The rows without the columns that differ on purpose between the two writes."""
    return [{key: value for key, value in row.items() if key not in names} for row in rows]


@pytest.mark.sqlite  # the driver path is SQLite's; PostgreSQL's goes through SQLAlchemy
async def test_rows_written_and_read_through_the_driver_are_sqlalchemys(services: Services) -> None:
    database = services.database
    connection = await services.connections.ensure("Driver", "driver-key")
    by_sqlalchemy, by_driver = _booking(connection.id, "a"), _booking(connection.id, "b")
    hold = {"product_id": "walk", "option_id": "DEFAULT", "until": NOW + timedelta(minutes=30),
            "slot_start": START, "pax": 2}  # fmt: skip
    first = bookings_repo.FirstEvent(NOW, "reserved", "reseller", {"status": "ON_HOLD", "n": None})
    event = first._asdict()
    override = {"product_id": "walk", "option_id": "DEFAULT", "slot_start": START, "closed": True,
                "capacity": 7, "note": "staff", "updated_at": NOW}  # fmt: skip
    async with database.transaction(write=True) as conn:
        assert isinstance(conn, SqliteConnection)
        await conn.execute(
            bookings_repo._INSERT_NEW_BOOKING.statement, bookings_repo.row_values(by_sqlalchemy)
        )
        await conn.execute(insert(booking_events), {"booking_id": by_sqlalchemy.id, **event})
        await conn.execute(bookings_repo._ADD_TO_HOLDS["sqlite"], {**hold, "availability_id": "A"})
        await conn.execute(insert(departure_overrides), {**override, "availability_id": "A"})
        assert await bookings_repo.insert_new_booking(conn, by_driver, first)
        await driver.run(conn, bookings_repo._ADDING["sqlite"], {**hold, "availability_id": "B"})
        await conn.execute(insert(departure_overrides), {**override, "availability_id": "B"})
        # Taken: nothing written, as SQLAlchemy's ON CONFLICT DO NOTHING says.
        assert not await bookings_repo.insert_new_booking(conn, replace(by_driver, id="c-id"), first)
    await _same_rows(database)

    cancelled = Cancellation(refund="FULL", reason="weather", at=NOW.replace(microsecond=0))
    changed: dict[str, Any] = {
        "status": BookingStatus.CANCELLED,
        "cancellation": cancelled,
        "expires_at": None,
        "notes": "x",
    }
    async with database.transaction(write=True) as conn:
        assert isinstance(conn, SqliteConnection)
        values = bookings_repo.row_values(replace(by_sqlalchemy, **changed))
        values["booking_id"] = values.pop("id")
        await conn.execute(bookings_repo._SAVE_BOOKING.statement, values)
        await bookings_repo.save_booking(conn, replace(by_driver, **changed), by_driver, move_places=False)
    await _same_rows(database)

    async with database.transaction(write=False) as conn:
        read = (await conn.execute(bookings_repo._BY_UUID.statement, {"connection_id": connection.id,
                                                                       "uuid": "a-uuid"})).one()  # fmt: skip
        assert bookings_repo.booking_from_row(read) == replace(by_sqlalchemy, **changed)
        assert await bookings_repo.get_by_uuid(conn, connection.id, "b-uuid") == replace(by_driver, **changed)
        await _same_reads(conn)


async def _same_rows(database: Database) -> None:
    def read(sync: Connection) -> None:
        stored = _raw(sync, "bookings", "id")
        assert len(stored) == 2
        different = ("id", "uuid", "supplier_reference")
        assert _alike(stored[:1], *different) == _alike(stored[1:], *different)
        events = _raw(sync, "booking_events", "id")
        assert _alike(events[:1], "id", "booking_id") == _alike(events[1:], "id", "booking_id")
        holds = _raw(sync, "slot_holds", "availability_id")
        assert _alike(holds[:1], "availability_id") == _alike(holds[1:], "availability_id")

    async with database.transaction(write=False) as conn:
        await conn.run_sync(read)


async def _same_reads(conn: DbConnection) -> None:
    parameters = {"product_id": "walk", "option_id": "DEFAULT", "first": START, "last": START, "now": NOW}
    prepared = departures_repo._OVERRIDES_AND_HELD
    through_sqlalchemy = [tuple(row) for row in await conn.execute(prepared.statement, parameters)]
    through_driver = [tuple(row) for row in await driver.fetch(conn, prepared, parameters)]
    assert len(through_driver) == 4 and sorted(through_driver) == sorted(through_sqlalchemy)
    overrides, held = await departures_repo.overrides_and_held(conn, "walk", "DEFAULT", START, START, NOW)
    assert overrides["A"].closed is True and overrides["A"].updated_at == NOW.replace(microsecond=123456)
    assert held == {"A": 2, "B": 2}
    by_name = {row.kind + row.availability_id: row for row in await driver.fetch(conn, prepared, parameters)}
    assert by_name["oA"].slot_start == START and by_name["hB"].held == 2


@pytest.mark.sqlite  # the driver path is SQLite's; PostgreSQL's goes through SQLAlchemy
async def test_the_drivers_errors_are_sqlalchemys(services: Services) -> None:
    with pytest.raises(IntegrityError):  # no such booking: the foreign key refuses
        async with services.database.transaction(write=True) as conn:
            await bookings_repo.add_event(conn, "nobody", NOW, "reserved", "reseller", {})


def test_utc_datetimes_are_the_text_sqlalchemy_writes() -> None:
    dialect = sqlite_dialect()
    kind = UTCDateTime()
    through_sqlalchemy = kind.dialect_impl(dialect).bind_processor(dialect)
    assert through_sqlalchemy is not None
    paris = timezone(timedelta(hours=2))
    for value in (NOW, NOW.replace(microsecond=0), datetime(1, 1, 1, tzinfo=UTC),
                  datetime(2026, 3, 29, 1, 59, 59, 999999, tzinfo=paris), None):  # fmt: skip
        assert driver.utc_text(value) == through_sqlalchemy(value)
    with pytest.raises(ValueError):
        driver.utc_text(datetime(2026, 6, 1))
