"""The expiry sweep on PostgreSQL never deadlocks (issue 20): not with a writer moving places
between slot_holds rows, and not with another process's sweep.

The observed deadlock: the sweep's `DELETE FROM slot_holds WHERE until <= now OR pax = 0` locked
the rows it matched in the table's physical order, while a reservation, confirm or cancel
upserts its rows in key order (`bookings_repo._count_holds`). A row late in key order but early
on disk was the sweep's, the writer held an earlier one, and each waited for the other."""

from __future__ import annotations

import asyncio
from datetime import timedelta

import pytest
from sqlalchemy import bindparam, select, text
from sqlalchemy.dialects.postgresql import insert

from berth.container import Services, build_services
from berth.domain.bookings import Contact
from berth.services.bookings.inputs import ConfirmInput, ReserveInput, UnitItemInput
from berth.settings import Settings
from berth.store import bookings_reads
from berth.store.tables import slot_holds
from tests.bookings_helpers import GUEST, booking_catalog
from tests.builders import load
from tests.conftest import Clock
from tests.test_faults import until

pytestmark = pytest.mark.postgresql  # row locks and deadlocks are PostgreSQL's

_ADDED = insert(slot_holds).values(
    product_id="cruise", option_id="DEFAULT", availability_id=bindparam("availability_id"),
    until=bindparam("until"), slot_start=bindparam("until"), pax=1,
)  # fmt: skip
# One more place on a row, as a reservation, confirm or cancel counts it.
UPSERT = _ADDED.on_conflict_do_update(
    index_elements=["product_id", "option_id", "availability_id", "until"],
    set_={"pax": slot_holds.c.pax + _ADDED.excluded.pax},
)
WAITING_ON_A_LOCK = text(
    "SELECT count(*) FROM pg_stat_activity WHERE datname = current_database() AND wait_event_type = 'Lock'"
)


async def test_the_sweep_does_not_wait_for_a_writers_rows(services: Services, clock: Clock) -> None:
    ended = clock.now - timedelta(minutes=1)
    rows = {"availability_id": "2026-06-02T10:00:00+01:00", "until": ended}
    later_row = {**rows, "availability_id": "2026-06-02T12:00:00+01:00"}
    async with services.database.transaction(write=True) as conn:  # on disk: 12:00, then 10:00
        await conn.execute(UPSERT, later_row)
        await conn.execute(UPSERT, rows)

    async with services.database.transaction(write=True) as writer:
        await writer.execute(UPSERT, rows)  # the writer's first row, in key order
        sweep = asyncio.create_task(services.expiry.expire_due())

        async def sweep_waits_or_ends() -> bool:
            async with services.database.transaction(write=False) as conn:
                return sweep.done() or bool(await conn.scalar(WAITING_ON_A_LOCK))

        await until(sweep_waits_or_ends)
        await writer.execute(UPSERT, later_row)  # its second row: the sweep must not hold it
    await sweep

    async with services.database.transaction(write=False) as conn:
        kept = (await conn.execute(select(slot_holds.c.availability_id, slot_holds.c.pax))).all()
    # The sweep skipped the row the writer held (the next sweep takes it) and dropped the other,
    # which the writer then counted afresh.
    assert sorted(kept) == [("2026-06-02T10:00:00+01:00", 2), ("2026-06-02T12:00:00+01:00", 1)]


async def test_due_holds_come_in_the_order_of_their_count_rows(services: Services, clock: Clock) -> None:
    """Two sweeps take the rows of the holds they expire in one order (the deadlock above, between
    sweeps): slot first, whatever ran out first."""
    await load(services, booking_catalog())
    catalog = (await services.catalog.snapshot()).catalog
    reseller = await services.connections.ensure("Sweeper", "sweep-order")
    for availability_id, minutes in (("2026-06-02T12:00:00+01:00", 1), ("2026-06-02T10:00:00+01:00", 2)):
        await services.bookings.reserve(catalog, reseller.id, ReserveInput(
            product_id="thames-sightseeing", option_id="DEFAULT", availability_id=availability_id,
            unit_items=(UnitItemInput("adult"),), expiration_minutes=minutes,
        ))  # fmt: skip
    clock.advance(minutes=3)
    async with services.database.transaction(write=True) as conn:
        due = await bookings_reads.due_holds(conn, clock.now, 10)
    assert [b.availability_id for b in due] == ["2026-06-02T10:00:00+01:00", "2026-06-02T12:00:00+01:00"]


async def test_sweeps_and_bookings_of_several_processes_never_deadlock(
    settings: Settings, clock: Clock
) -> None:
    """Four service containers on one database stand for four processes, each running the
    sweep while resellers hold, confirm and cancel on the same departures and holds run out."""
    fleet = [build_services(settings, clock) for _ in range(4)]
    try:
        await load(fleet[0], booking_catalog())
        catalog = (await fleet[0].catalog.snapshot()).catalog
        reseller = await fleet[0].connections.ensure("Racer", "sweep-racer")
        slots = [f"2026-06-0{day}T{hour}:00:00+01:00" for day in (2, 3) for hour in (10, 12, 14, 16)]

        async def book(process: Services, number: int) -> None:
            held = await process.bookings.reserve(catalog, reseller.id, ReserveInput(
                product_id="thames-sightseeing", option_id="DEFAULT", availability_id=slots[number % len(slots)],
                unit_items=(UnitItemInput("adult"),), expiration_minutes=1 + number % 3,
            ))  # fmt: skip
            uuid = held.booking.uuid
            if number % 3 == 0:
                await process.bookings.confirm(
                    catalog, reseller.id, uuid, ConfirmInput(Contact(values=dict(GUEST)))
                )
            if number % 4 == 0:
                await process.bookings.cancel(catalog, reseller.id, uuid, None)

        for round_ in range(40):
            outcomes = await asyncio.gather(
                *(book(fleet[i % 4], round_ * 8 + i) for i in range(8)),
                *(process.expiry.expire_due() for process in fleet),
                return_exceptions=True,
            )
            assert [o for o in outcomes if isinstance(o, BaseException)] == []
            clock.advance(minutes=1)
    finally:
        for built in fleet:
            await built.close()
