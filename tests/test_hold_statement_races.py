"""Races on the statements of a reservation's write (issue 31), from several "processes"
(service containers with their own pools) on one database:

- `hold_if_room` checks and counts a hold in one statement under the slot's lock: parties of
  different sizes never take more than the departure's capacity as staff set it, holds that ran
  out (still in slot_holds, not yet swept) count nothing, and a refused party did not fit;
- `insert_new_booking` checks the uuid in the insert: one request repeated at once makes one
  booking, holding its places once, and every answer is that booking.

Both were seen to fail with their guard removed (the statement's condition; the lock on
PostgreSQL; see docs/decisions.md, "A reservation checks and holds in one statement")."""

from __future__ import annotations

import asyncio

from sqlalchemy import func, select

from berth.container import Services, build_services
from berth.domain.errors import UnprocessableEntity
from berth.domain.staff import COMMAND_LINE
from berth.services.bookings.inputs import ReserveInput, UnitItemInput
from berth.services.departures import DepartureChange
from berth.settings import Settings
from berth.store.tables import bookings, slot_holds
from tests.conftest import Clock
from tests.test_catalog_import import MINIMAL

SLOT = "2026-06-02T10:00:00+01:00"
PROCESSES = 5
STAFF_CAPACITY = 9
PARTIES = (1, 2, 3) * 12
RAN_OUT = 4  # places of holds that ran out before the race


def _request(pax: int, uuid: str | None = None) -> ReserveInput:
    return ReserveInput(
        product_id="walk", option_id="DEFAULT", availability_id=SLOT,
        unit_items=tuple(UnitItemInput("adult") for _ in range(pax)), uuid=uuid, expiration_minutes=30,
    )  # fmt: skip


async def _fleet(settings: Settings, clock: Clock) -> list[Services]:
    fleet = [build_services(settings, clock) for _ in range(PROCESSES)]
    await fleet[0].catalog.import_text(MINIMAL.replace("capacity: 12", "capacity: 40"), actor=COMMAND_LINE)
    return fleet


async def _live_places(services: Services, now: object) -> tuple[int, int]:
    """(places of the bookings that hold them now, places slot_holds counts now)."""
    async with services.database.transaction(write=False) as conn:
        booked = await conn.scalar(
            select(func.coalesce(func.sum(bookings.c.pax), 0)).where(
                bookings.c.status.in_(["ON_HOLD", "CONFIRMED"]), bookings.c.expires_at.is_(None)
                | (bookings.c.expires_at > now)
            )
        )  # fmt: skip
        counted = await conn.scalar(
            select(func.coalesce(func.sum(slot_holds.c.pax), 0)).where(slot_holds.c.until > now)
        )
    return int(booked or 0), int(counted or 0)


async def test_parties_never_take_more_than_the_departure_holds(settings: Settings, clock: Clock) -> None:
    fleet = await _fleet(settings, clock)
    try:
        first = fleet[0]
        connection = await first.connections.ensure("Racer", "racer-key")
        catalog = (await first.catalog.snapshot()).catalog
        await first.bookings.reserve(catalog, connection.id, _request(RAN_OUT))
        clock.advance(minutes=31)  # that hold ran out; no sweep has run
        change = DepartureChange(set_capacity=True, capacity=STAFF_CAPACITY)
        await first.departures.change(catalog, "walk", "DEFAULT", SLOT, change, actor=COMMAND_LINE)

        async def one(services: Services, pax: int) -> int:
            try:
                await services.bookings.reserve(catalog, connection.id, _request(pax))
            except UnprocessableEntity:
                return -pax
            return pax

        outcomes = await asyncio.gather(*(one(fleet[n % PROCESSES], pax) for n, pax in enumerate(PARTIES)))
        taken = sum(o for o in outcomes if o > 0)
        booked, counted = await _live_places(first, clock())
        assert (booked, counted) == (taken, taken)
        assert taken <= STAFF_CAPACITY
        left = STAFF_CAPACITY - taken
        # Places only ever went, so every refused party was larger than what is left now.
        assert all(-o > left for o in outcomes if o < 0), (outcomes, left)
    finally:
        for services in fleet:
            await services.close()


async def test_one_request_repeated_at_once_makes_one_booking(settings: Settings, clock: Clock) -> None:
    fleet = await _fleet(settings, clock)
    try:
        first = fleet[0]
        connection = await first.connections.ensure("Racer", "racer-key")
        catalog = (await first.catalog.snapshot()).catalog
        request = _request(2, uuid="raced-uuid")
        answers = await asyncio.gather(
            *(fleet[n % PROCESSES].bookings.reserve(catalog, connection.id, request) for n in range(15))
        )
        assert {a.booking.id for a in answers} == {answers[0].booking.id}
        async with first.database.transaction(write=False) as conn:
            rows = await conn.scalar(select(func.count()).select_from(bookings))
        assert rows == 1
        assert await _live_places(first, clock()) == (2, 2)
    finally:
        for services in fleet:
            await services.close()
