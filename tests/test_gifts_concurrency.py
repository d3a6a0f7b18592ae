"""Two bookings paying with one voucher at the same moment never take more than its balance:
bookings race to pay with the same gift from two "processes" (service containers with their own
connection pools) on one database, each in its own transaction. The gift is locked before its
ledger is read (`GiftService.redeem_in`: FOR UPDATE on PostgreSQL, SQLite's write transaction):
exactly as many payments as the balance covers go through. With the lock switched off by the
debug setting, the same race on PostgreSQL takes more than the voucher holds, so the test is
known to bite (SQLite's write transaction serialises the race whatever the setting)."""

from __future__ import annotations

import asyncio

import pytest

from berth.container import build_services
from berth.domain.bookings import Contact
from berth.domain.gift_errors import GiftInsufficientBalance
from berth.domain.gifts import GiftInput
from berth.settings import Settings
from tests.bookings_helpers import booking_catalog
from tests.builders import load
from tests.conftest import KEY_A, Clock
from tests.gifts_helpers import held_booking, sell_gifts
from tests.test_concurrency import replace_settings

RACERS = 24
PROCESSES = 2
VALUE = 10_000
EACH = 1_500  # 6 payments fit in the voucher, the 7th would not


async def race(settings: Settings, clock: Clock) -> tuple[int, int, int]:
    """RACERS bookings pay EACH with one voucher of VALUE at once: (paid, refused, taken)."""
    fleet = [build_services(settings, clock) for _ in range(PROCESSES)]
    try:
        first = fleet[0]
        await load(first, booking_catalog())
        await sell_gifts(first)
        connection = await first.connections.ensure("Reseller A", KEY_A)
        data = GiftInput(
            uuid="5b0a2f8e-1111-4222-8333-444455556666", amount=VALUE, currency="EUR", contact=Contact()
        )
        gift = await first.gifts.create(connection, data)
        issued = await first.gifts.confirm(connection, data.uuid or "", GiftInput())
        assert issued.code is not None
        bookings = [await held_booking(first, day=2 + n % 6) for n in range(RACERS)]  # places to spare

        async def pay(index: int) -> bool:
            services = fleet[index % PROCESSES]
            try:
                async with services.database.transaction(write=True) as conn:
                    await services.gifts.redeem_in(
                        conn, issued.code or "", "EUR", EACH, bookings[index], clock()
                    )
            except GiftInsufficientBalance:
                return False
            return True

        outcomes = await asyncio.gather(*(pay(n) for n in range(RACERS)))
        taken = VALUE - await first.gifts.balance(gift.gift.id)
        return sum(outcomes), outcomes.count(False), taken
    finally:
        for services in fleet:
            await services.close()


async def test_a_voucher_never_pays_more_than_its_balance(settings: Settings, clock: Clock) -> None:
    paid, refused, taken = await race(settings, clock)
    assert (paid, refused, taken) == (VALUE // EACH, RACERS - VALUE // EACH, VALUE // EACH * EACH)


@pytest.mark.postgresql  # SQLite's write transaction serialises the race without the lock
async def test_without_the_lock_a_voucher_pays_more_than_it_holds(settings: Settings, clock: Clock) -> None:
    paid, _, taken = await race(replace_settings(settings, debug_disable_gift_lock=True), clock)
    assert taken > VALUE, "the race did not happen: this test would not catch a missing lock"
    assert paid > VALUE // EACH
    print(f"without the lock: {paid} of {RACERS} payments of {EACH} took {taken} from a voucher of {VALUE}")
