"""No overselling of rental stock: many writers race for the last items with rentals that start
at different times and last different lengths but all overlap, from several "processes" on one
database. Locking only each rental's start slot would let rentals with different starts pass
each other; the option's rental lock makes them take turns. With the lock switched off by the
debug setting the same race oversells, so the test is known to bite."""

from __future__ import annotations

import asyncio
from datetime import UTC

from sqlalchemy import select

from berth.capabilities.registry import CATALOG_RULES, asked_fields
from berth.container import build_services
from berth.domain.errors import UnprocessableEntity
from berth.domain.rentals import HeldInterval, peak_held
from berth.domain.staff import COMMAND_LINE
from berth.services.bookings.inputs import ReserveInput, UnitItemInput
from berth.settings import Settings
from berth.store.tables import bookings
from tests.conftest import Clock
from tests.test_catalog_import import MINIMAL
from tests.test_concurrency import replace_settings

STOCK = 3
RACERS = 30
PROCESSES = 5
CATALOG = MINIMAL.replace("capacity: 12", f"capacity: {STOCK}").replace(
    "        units:\n",
    "        rentalDurations:\n"
    "          - {id: 2h, title: 2 hours, durationAmount: 2, durationUnit: hour}\n"
    "          - {id: 1d, title: 1 day, durationAmount: 1, durationUnit: day}\n"
    "          - {id: 2d, title: 2 days, durationAmount: 2, durationUnit: day}\n"
    "        units:\n",
)
# Three kinds of rental, all out on 2 June from 14:30 to 16:30 (the walk starts 10:00 and 14:30).
KINDS = (
    ("2026-06-02T10:00:00+01:00", "1d"),  # to 3 June 10:00
    ("2026-06-02T14:30:00+01:00", "2h"),  # to 16:30
    ("2026-06-01T14:30:00+01:00", "2d"),  # to 3 June 14:30
)


async def race(settings: Settings, clock: Clock) -> tuple[int, int, int]:
    """Fire RACERS one-item rentals at once; return (accepted, refused, peak items out)."""
    fleet = [build_services(settings, clock) for _ in range(PROCESSES)]
    try:
        first = fleet[0]
        await first.catalog.import_text(CATALOG, actor=COMMAND_LINE)
        connection = await first.connections.ensure("Racer", "racer-key")
        catalog = (await first.catalog.snapshot()).catalog

        async def one(index: int) -> bool:
            availability_id, duration = KINDS[index % len(KINDS)]
            request = ReserveInput(
                product_id="walk",
                option_id="DEFAULT",
                availability_id=availability_id,
                asked=asked_fields(duration),
                unit_items=(UnitItemInput("adult"),),
            )
            try:
                await fleet[index % PROCESSES].bookings.reserve(catalog, connection.id, request)
            except UnprocessableEntity:
                return False
            return True

        outcomes = await asyncio.gather(*(one(n) for n in range(RACERS)))
        async with first.database.transaction(write=False) as conn:
            rows = (
                await conn.execute(select(bookings.c.slot_start, bookings.c.slot_end, bookings.c.pax))
            ).all()
        held = [HeldInterval(start, end, pax) for start, end, pax in rows]
        first_start = min(h.start for h in held).astimezone(UTC)
        last_end = max(h.end for h in held).astimezone(UTC)
        (peak,) = peak_held(held, [(first_start, last_end)])
        return sum(outcomes), outcomes.count(False), peak
    finally:
        for services in fleet:
            await services.close()


async def test_the_rental_lock_prevents_overselling(settings: Settings, clock: Clock) -> None:
    accepted, refused, peak = await race(settings, clock)
    assert (accepted, refused, peak) == (STOCK, RACERS - STOCK, STOCK)


async def test_without_the_lock_overlapping_rentals_oversell(settings: Settings, clock: Clock) -> None:
    accepted, _, peak = await race(replace_settings(settings, debug_disable_slot_lock=True), clock)
    assert peak > STOCK, "the race did not happen: this test would not catch a missing lock"
    assert accepted > STOCK


async def test_the_three_kinds_of_rental_overlap() -> None:
    """The premise of the race: any two kinds share an instant, so only STOCK can be out."""
    from berth.domain.catalog.document import parse_catalog
    from berth.domain.rentals import rental_duration_for, rental_slot
    from berth.domain.slots import slot_for_id

    product = parse_catalog(CATALOG, CATALOG_RULES).products[0]
    option = product.options[0]
    windows = []
    for availability_id, duration in KINDS:
        slot = slot_for_id(product, option, availability_id)
        rental = rental_duration_for(option, duration)
        assert slot is not None and rental is not None
        window = rental_slot(slot, rental)
        windows.append(HeldInterval(window.start, window.end, 1))
    assert peak_held(windows, [(windows[1].start, windows[1].end)]) == [3]
