"""An offer's use limit is exact under races: 50 reservations race for the last 5 uses of a code
from two "processes" (service containers with their own connection pools) on one database, and
exactly 5 get it. The uses are counted under a lock per offer (store.offers_repo.lock_offer):
without it, on PostgreSQL, the same race uses the code more often than it may be."""

from __future__ import annotations

import asyncio

from sqlalchemy import func, select

from berth.container import build_services
from berth.domain.offers import OfferRefused
from berth.domain.staff import COMMAND_LINE
from berth.services.bookings.inputs import ReserveInput, UnitItemInput
from berth.settings import Settings
from berth.store.tables import offer_uses
from tests.bookings_helpers import SLOT, TOUR, booking_catalog
from tests.conftest import Clock

RACERS = 50
PROCESSES = 2
LIMIT = 20
LEFT = 5


async def test_the_last_uses_of_a_code_go_to_exactly_as_many_bookings(
    settings: Settings, clock: Clock
) -> None:
    fleet = [build_services(settings, clock) for _ in range(PROCESSES)]
    try:
        first = fleet[0]
        await first.catalog.replace(booking_catalog())
        connection = await first.connections.ensure("Racer", "racer-key")
        catalog = (await first.catalog.snapshot()).catalog
        document = {
            "offers": [
                {
                    "id": "last",
                    "code": "LAST",
                    "texts": {"en": {"title": "Last"}},
                    "discount": {"percent": 10},
                    "maxUses": LIMIT,
                }
            ]
        }
        await first.offers.save(document, base_version=None, actor=COMMAND_LINE)

        def request(day: int) -> ReserveInput:
            return ReserveInput(
                product_id=TOUR["productId"],
                option_id=TOUR["optionId"],
                availability_id=SLOT.replace("06-02", f"06-{day:02d}"),
                unit_items=(UnitItemInput("adult"),),
                extensions={"octo/offers": {"offerCode": "LAST"}},
            )

        for _ in range(LIMIT - LEFT):  # used before the race
            await first.bookings.reserve(catalog, connection.id, request(2))

        async def one(index: int) -> bool:
            try:
                # Spread over departures: the race is for the code, not for places.
                await fleet[index % PROCESSES].bookings.reserve(
                    catalog, connection.id, request(3 + index % 4)
                )
            except OfferRefused:
                return False
            return True

        outcomes = await asyncio.gather(*(one(n) for n in range(RACERS)))
        async with first.database.transaction(write=False) as conn:
            used = int(await conn.scalar(select(func.count()).select_from(offer_uses)) or 0)
        assert (sum(outcomes), used) == (LEFT, LIMIT)
    finally:
        for services in fleet:
            await services.close()
