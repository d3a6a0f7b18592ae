"""No overselling of an extra's stock: many writers race for the last lunches of a departure
that has places to spare, from several "processes" on one database. The extras are counted
under the departure's slot lock, as its places are; with the lock switched off by the debug
setting the same race oversells, so the test is known to bite."""

from __future__ import annotations

import asyncio

from sqlalchemy import func, select

from berth.container import build_services
from berth.domain.errors import UnprocessableEntity
from berth.services.bookings.inputs import ReserveInput, UnitItemInput
from berth.settings import Settings
from berth.store.tables import booking_extras
from tests.conftest import Clock
from tests.extras_helpers import CRUISE, LUNCH_STOCK, NOON, extras_catalog
from tests.test_concurrency import replace_settings

RACERS = 30
PROCESSES = 5


async def race(settings: Settings, clock: Clock) -> tuple[int, int, int]:
    """Fire RACERS reservations of one guest with lunch at once; return (accepted, refused,
    lunches sold)."""
    fleet = [build_services(settings, clock) for _ in range(PROCESSES)]
    try:
        first = fleet[0]
        await first.catalog.replace(extras_catalog())
        connection = await first.connections.ensure("Racer", "racer-key")
        catalog = (await first.catalog.snapshot()).catalog
        lunch = {"octo/extras": {"unitItems": [{"extraItems": [{"extraId": "lunch"}]}]}}

        async def one(index: int) -> bool:
            request = ReserveInput(
                product_id=CRUISE["productId"],
                option_id=CRUISE["optionId"],
                availability_id=NOON,
                unit_items=(UnitItemInput("guest"),),
                extensions=lunch,
            )
            try:
                await fleet[index % PROCESSES].bookings.reserve(catalog, connection.id, request)
            except UnprocessableEntity:
                return False
            return True

        outcomes = await asyncio.gather(*(one(n) for n in range(RACERS)))
        async with first.database.transaction(write=False) as conn:
            sold = int(await conn.scalar(select(func.sum(booking_extras.c.quantity))) or 0)
        return sum(outcomes), outcomes.count(False), sold
    finally:
        for services in fleet:
            await services.close()


async def test_the_slot_lock_prevents_overselling_extras(settings: Settings, clock: Clock) -> None:
    accepted, refused, sold = await race(settings, clock)
    assert (accepted, refused, sold) == (LUNCH_STOCK, RACERS - LUNCH_STOCK, LUNCH_STOCK)


async def test_without_the_lock_extras_oversell(settings: Settings, clock: Clock) -> None:
    accepted, _, sold = await race(replace_settings(settings, debug_disable_slot_lock=True), clock)
    assert sold > LUNCH_STOCK, "the race did not happen: this test would not catch a missing lock"
    assert accepted > LUNCH_STOCK
