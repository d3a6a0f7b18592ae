"""PostgreSQL: the pool keeps as many connections as a process uses at once, so a steady load
reuses them instead of opening (and closing) a server process per request; and a request never
needs two of them at once."""

from __future__ import annotations

import asyncio

import pytest
from sqlalchemy import text

from berth.capabilities.webhooks.service import WebhookInput
from berth.container import build_services
from berth.domain.bookings import BookingStatus
from berth.settings import Settings
from berth.store.database import Database
from tests.bookings_helpers import GUEST, SLOT, TOUR, booking_catalog
from tests.builders import confirmed_booking, load
from tests.conftest import KEY_A, Clock


async def _backends_of_a_burst(database: Database, concurrency: int) -> set[int]:
    async def one() -> int:
        async with database.single_read() as conn:
            # Long enough that every request of the burst holds a connection at once.
            return int(await conn.scalar(text("SELECT pg_backend_pid() FROM pg_sleep(0.05)")))

    return set(await asyncio.gather(*(one() for _ in range(concurrency))))


@pytest.mark.postgresql  # SQLite connections are files opened in-process
@pytest.mark.parametrize(("pool_size", "reused"), [(8, True), (2, False)])
async def test_a_steady_load_reuses_the_pools_connections(
    database_url: str, pool_size: int, reused: bool
) -> None:
    database = Database(database_url, pool_size=pool_size, max_overflow=8)
    try:
        first = await _backends_of_a_burst(database, 8)
        second = await _backends_of_a_burst(database, 8)
    finally:
        await database.dispose()
    assert len(first) == len(second) == 8
    # A pool smaller than the load closes its extra connections and opens new ones next time.
    assert (second == first) is reused, (first, second)


@pytest.mark.postgresql
async def test_a_booking_change_is_announced_on_its_own_connection(settings: Settings, clock: Clock) -> None:
    """A confirmation that queues a booking_update completes with a pool of one connection:
    what runs inside the booking's transaction reads on that transaction's connection. (It
    used to ask the pool for a second one: once every pooled connection was so held, each
    request waited for another's until the pool's timeout, and answered 500.)"""
    services = build_services(
        settings.model_copy(update={"database_pool_size": 1, "database_max_overflow": 0}), clock
    )
    try:
        await load(services, booking_catalog())
        booker = await services.connections.ensure("Reseller A", KEY_A)
        await services.webhooks.create(
            booker.id, WebhookInput(event="booking_update", url="http://127.0.0.1:9/hook"), frozenset()
        )
        async with asyncio.timeout(10):  # the pool's own timeout is 30 s
            booking = await confirmed_booking(
                services, ("Reseller A", KEY_A), TOUR["productId"], SLOT, ["adult"], GUEST
            )
        queued, _ = await services.webhooks.deliveries(limit=10)
    finally:
        await services.close()
    assert booking.booking.status == BookingStatus.CONFIRMED
    assert {d.subject_key for d in queued} == {f"booking:{booking.booking.id}"}
