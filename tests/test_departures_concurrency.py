"""A capacity override and reservations race for one departure, from several "processes"
(service containers with their own pools) on one database: a change of the departure and a
reservation take turns under the slot's lock, so the departure never ends up holding more
places than its capacity. With the lock switched off by the debug setting, the same race
oversells, so the test is known to bite."""

from __future__ import annotations

import asyncio
import contextlib

from sqlalchemy.exc import IntegrityError

from berth.container import Services, build_services
from berth.domain.errors import UnprocessableEntity
from berth.domain.staff import COMMAND_LINE
from berth.services.bookings.inputs import ReserveInput, UnitItemInput
from berth.services.departures import DepartureChange
from berth.settings import Settings
from tests.conftest import Clock
from tests.test_catalog_import import MINIMAL
from tests.test_concurrency import replace_settings

SLOT = "2026-06-02T10:00:00+01:00"
RACERS = 24
OVERRIDE = 5
PROCESSES = 4


async def race(settings: Settings, clock: Clock) -> tuple[int, int | None]:
    """One-place reservations and capacity overrides down to OVERRIDE, all at once, against a
    catalogue capacity that alone would take every reservation. Returns (places held, the
    departure's capacity once every racer is done)."""
    fleet = [build_services(settings, clock) for _ in range(PROCESSES)]
    try:
        first = fleet[0]
        await first.catalog.import_text(MINIMAL.replace("capacity: 12", "capacity: 100"), actor=COMMAND_LINE)
        connection = await first.connections.ensure("Racer", "racer-key")
        catalog = (await first.catalog.snapshot()).catalog
        request = ReserveInput(
            product_id="walk", option_id="DEFAULT", availability_id=SLOT, unit_items=(UnitItemInput("adult"),)
        )

        async def reserve(services: Services) -> None:
            with contextlib.suppress(UnprocessableEntity):  # sold out
                await services.bookings.reserve(catalog, connection.id, request)

        async def shrink(services: Services) -> None:
            change = DepartureChange(set_capacity=True, capacity=OVERRIDE)
            try:
                await services.departures.change(catalog, "walk", "DEFAULT", SLOT, change, actor=COMMAND_LINE)
            except UnprocessableEntity:
                pass  # more places were already held
            except IntegrityError:
                assert settings.debug_disable_slot_lock  # unlocked: two first overrides collide

        racers = [
            (shrink if n % 3 == 1 else reserve)(fleet[n % PROCESSES]) for n in range(RACERS + RACERS // 2)
        ]
        await asyncio.gather(*racers)
        departure = await first.departures.get(catalog, "walk", "DEFAULT", SLOT)
        return departure.held, departure.state.capacity
    finally:
        for services in fleet:
            await services.close()


async def test_overrides_and_reservations_never_oversell(settings: Settings, clock: Clock) -> None:
    held, capacity = await race(settings, clock)
    assert capacity is not None and held <= capacity
    if capacity == OVERRIDE:
        assert held <= OVERRIDE


async def test_without_the_lock_the_same_race_oversells(settings: Settings, clock: Clock) -> None:
    unsafe = replace_settings(settings, debug_disable_slot_lock=True)
    held, capacity = await race(unsafe, clock)
    assert capacity is not None
    assert held > capacity, "the race did not happen: this test would not catch a missing lock"
