"""No overselling: many writers race for one slot, from several "processes" (service
containers with their own connection pools) on one database. With the slot lock switched off
by the debug setting, the same race oversells, so the test is known to bite."""

from __future__ import annotations

import asyncio

from sqlalchemy import func, select

from berth.container import Services, build_services
from berth.domain.errors import UnprocessableEntity
from berth.domain.staff import COMMAND_LINE
from berth.services.bookings.inputs import ReserveInput, UnitItemInput
from berth.settings import Settings
from berth.store.tables import bookings
from tests.conftest import Clock
from tests.test_catalog_import import MINIMAL

CAPACITY = 10
RACERS = 50
PROCESSES = 5
SLOT = "2026-06-02T10:00:00+01:00"


async def race(settings: Settings, clock: Clock) -> tuple[int, int, int]:
    """Fire RACERS one-place reservations at once; return (accepted, refused, places held)."""
    fleet = [build_services(settings, clock) for _ in range(PROCESSES)]
    try:
        first = fleet[0]
        await first.catalog.import_text(
            MINIMAL.replace("capacity: 12", f"capacity: {CAPACITY}"), actor=COMMAND_LINE
        )
        connection = await first.connections.ensure("Racer", "racer-key")
        catalog = (await first.catalog.snapshot()).catalog
        request = ReserveInput(
            product_id="walk", option_id="DEFAULT", availability_id=SLOT, unit_items=(UnitItemInput("adult"),)
        )

        async def one(services: Services) -> bool:
            try:
                await services.bookings.reserve(catalog, connection.id, request)
            except UnprocessableEntity:
                return False
            return True

        outcomes = await asyncio.gather(*(one(fleet[n % PROCESSES]) for n in range(RACERS)))
        async with first.database.transaction(write=False) as conn:
            held = int(await conn.scalar(select(func.coalesce(func.sum(bookings.c.pax), 0))) or 0)
        return sum(outcomes), outcomes.count(False), held
    finally:
        for services in fleet:
            await services.close()


async def test_the_slot_lock_prevents_overselling(settings: Settings, clock: Clock) -> None:
    accepted, refused, held = await race(settings, clock)
    assert (accepted, refused, held) == (CAPACITY, RACERS - CAPACITY, CAPACITY)


async def test_without_the_lock_the_same_race_oversells(settings: Settings, clock: Clock) -> None:
    unsafe = replace_settings(settings, debug_disable_slot_lock=True)
    accepted, _, held = await race(unsafe, clock)
    assert held == accepted
    assert held > CAPACITY, "the race did not happen: this test would not catch a missing lock"


def replace_settings(settings: Settings, **changes: object) -> Settings:
    return settings.model_copy(update=changes)
