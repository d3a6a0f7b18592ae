"""No seat twice, no resource over capacity: many parties race for the last seats of a boat,
from several "processes" (service containers with their own pools) on one database (SQLite,
or PostgreSQL with BERTH_TEST_POSTGRES_URL). With the slot lock switched off by the debug
setting, a boat without a seat map oversells (so the test is known to bite), and on a seated
boat only the (slot, seat) key of `booking_seats` stops the same seat being sold twice."""

from __future__ import annotations

import asyncio
from collections import Counter

from sqlalchemy import func, select

from berth.container import Services, build_services
from berth.domain.bookings import Booking
from berth.domain.errors import BadRequest, UnprocessableEntity
from berth.domain.staff import COMMAND_LINE
from berth.services.bookings.inputs import ReserveInput, UnitItemInput
from berth.settings import Settings
from berth.store.bookings_reads import BookingFilter
from berth.store.tables import booking_resources, booking_seats
from tests.conftest import Clock
from tests.test_catalog_import import MINIMAL
from tests.test_concurrency import PROCESSES, replace_settings

SLOT = "2026-06-02T10:00:00+01:00"
SEATS = [f"{row}{column}" for row in (1, 2, 3) for column in "ABCD"]  # 12 seats


def _catalogue(resource: str) -> str:
    return MINIMAL.replace(
        "            capacity: 12\n",
        f"""            capacity: null
        resourceGroups:
          - id: boats
            title: Boats
            split: false
            resources:
{resource}""",
    )


SEATED = _catalogue(
    "              - id: boat\n                title: Boat\n                seatMap:\n                  seats:\n"
    + "".join(f"                    - {{id: {s}, row: {s[0]}, column: {s[1]}}}\n" for s in SEATS)
)
UNSEATED = _catalogue("              - {id: launch, title: Launch, capacity: 10}\n")


def party(size: int) -> ReserveInput:
    return ReserveInput(
        product_id="walk", option_id="DEFAULT", availability_id=SLOT,
        unit_items=tuple(UnitItemInput("adult") for _ in range(size)),
    )  # fmt: skip


async def race(
    settings: Settings, clock: Clock, catalogue: str, sizes: list[int], prefill: int = 0
) -> tuple[list[tuple[int, str]], list[Booking], int, int]:
    """Fire one reservation per size at once. Returns each party's size and outcome
    (accepted, sold out, conflict), the bookings, and the places and seats the index holds."""
    fleet = [build_services(settings, clock) for _ in range(PROCESSES)]
    try:
        first = fleet[0]
        await first.catalog.import_text(catalogue, actor=COMMAND_LINE)
        connection = await first.connections.ensure("Racer", "racer-key")
        catalog = (await first.catalog.snapshot()).catalog
        if prefill:
            await first.bookings.reserve(catalog, connection.id, party(prefill))

        async def one(services: Services, size: int) -> str:
            try:
                await services.bookings.reserve(catalog, connection.id, party(size))
            except UnprocessableEntity:
                return "sold out"
            except BadRequest:  # the seat key refused a seat another racer had just taken
                return "conflict"
            return "accepted"

        outcomes = await asyncio.gather(*(one(fleet[n % PROCESSES], s) for n, s in enumerate(sizes)))
        found = await first.staff_bookings.find(catalog, BookingFilter(product_id="walk"))
        async with first.database.transaction(write=False) as conn:
            places = int(
                await conn.scalar(select(func.coalesce(func.sum(booking_resources.c.places), 0))) or 0
            )
            seats = int(await conn.scalar(select(func.count()).select_from(booking_seats)) or 0)
        return list(zip(sizes, outcomes, strict=True)), [d.booking for d in found], places, seats
    finally:
        for services in fleet:
            await services.close()


def given_seats(found: list[Booking]) -> list[str]:
    return [seat for b in found for a in b.resource_allocations for seat in a.seat_ids]


async def test_parties_racing_for_the_last_seats_never_share_one(settings: Settings, clock: Clock) -> None:
    sizes = [1, 2, 3] * 10  # 30 parties for the 6 seats left after a party of 6
    results, found, places, seats = await race(settings, clock, SEATED, sizes, prefill=6)
    outcomes = Counter(outcome for _, outcome in results)
    assert outcomes["conflict"] == 0  # with the lock, nobody even tries a taken seat
    assert outcomes["accepted"] >= 2 and len(found) == 1 + outcomes["accepted"]
    taken = given_seats(found)
    assert len(taken) == len(set(taken))  # no seat twice
    assert set(taken) <= set(SEATS)
    assert sum(b.pax for b in found) == places == seats == len(taken) <= len(SEATS)  # never over capacity
    assert sum(size for size, outcome in results if outcome == "accepted") == len(taken) - 6
    # Every refusal was right: seats only get fewer, and each refused party was bigger than
    # what was left when it asked, so bigger than what is left now.
    left = len(SEATS) - len(taken)
    assert all(left < size for size, outcome in results if outcome == "sold out")


async def test_last_seats_go_to_exactly_as_many_parties_as_fit(settings: Settings, clock: Clock) -> None:
    results, found, places, seats = await race(settings, clock, SEATED, [2] * 30, prefill=6)
    outcomes = Counter(outcome for _, outcome in results)
    assert (outcomes["accepted"], outcomes["sold out"], outcomes["conflict"]) == (3, 27, 0)
    taken = given_seats(found)
    assert sorted(taken) == sorted(SEATS) and places == seats == 12


async def test_without_the_lock_a_boat_oversells(settings: Settings, clock: Clock) -> None:
    unsafe = replace_settings(settings, debug_disable_slot_lock=True)
    results, found, places, _ = await race(unsafe, clock, UNSEATED, [1] * 50)
    outcomes = Counter(outcome for _, outcome in results)
    assert places == sum(b.pax for b in found) == outcomes["accepted"]
    assert places > 10, "the race did not happen: this test would not catch a missing lock"


async def test_without_the_lock_the_seat_key_still_refuses_a_seat_twice(
    settings: Settings, clock: Clock
) -> None:
    unsafe = replace_settings(settings, debug_disable_slot_lock=True)
    results, found, _, seats = await race(unsafe, clock, SEATED, [2] * 30)
    outcomes = Counter(outcome for _, outcome in results)
    taken = given_seats(found)
    assert len(taken) == len(set(taken)) == seats <= len(SEATS)
    assert outcomes["conflict"] > 0, "the race did not happen: the seat key was never needed"
