"""A `berth worker` killed with SIGKILL in the middle of a burst: after a restart every
committed change is delivered at least once, no message is ever sent twice at once, and what
the dead worker held is leased for at most LEASE (retried within seconds, not after the send
timeout)."""

from __future__ import annotations

import asyncio
import os
import signal
import subprocess
import sys
import time
from datetime import UTC, datetime
from pathlib import Path

from sqlalchemy import select

from berth.capabilities.webhooks.service import WebhookInput
from berth.container import build_services
from berth.delivery.worker import LEASE
from berth.domain.bookings import Contact
from berth.services.availability import AvailabilityQuery
from berth.services.bookings.inputs import ConfirmInput, ReserveInput, UnitItemInput
from berth.settings import Settings
from berth.store.deliveries_repo import SENDING
from berth.store.tables import deliveries
from tests.bookings_helpers import booking_catalog
from tests.builders import load
from tests.receivers import receiver

BURST = 40


def start_worker(env: dict[str, str]) -> subprocess.Popen[bytes]:
    berth = Path(sys.executable).with_name("berth")
    return subprocess.Popen(
        [str(berth), "worker"], env=env, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL
    )


async def test_worker_killed_mid_burst(settings: Settings) -> None:
    services = build_services(settings)  # the real clock: the worker process runs on it too
    try:
        await load(services, booking_catalog())
        async with receiver(default_status=200) as target:
            target.delay = 0.2  # a wide window in which the worker has sends in flight
            connection = await services.connections.ensure("Crash", "crash-key")
            await services.webhooks.create(
                connection.id, WebhookInput(event="booking_update", url=target.url), frozenset()
            )
            catalog = (await services.catalog.snapshot()).catalog
            today = services.clock().date()
            slots = await services.availability.check(catalog, _query(today))
            open_slots = [s for s in slots if s.state.available]
            guest = Contact(
                values={"firstName": "Crash", "lastName": "Test", "emailAddress": "c@example.com"}
            )
            for n in range(BURST):
                slot = open_slots[n % len(open_slots)]
                held = await services.bookings.reserve(
                    catalog, connection.id,
                    ReserveInput(product_id="thames-sightseeing", option_id="DEFAULT", availability_id=slot.slot.id,
                                 unit_items=(UnitItemInput("adult"),)),
                )  # fmt: skip
                await services.bookings.confirm(
                    catalog, connection.id, held.booking.uuid, ConfirmInput(guest)
                )
            expected, _ = await services.webhooks.deliveries(limit=1000)
            assert len(expected) == BURST

            env = {
                **os.environ,
                "BERTH_DATABASE_URL": settings.database_url,
                "BERTH_WEBHOOK_ALLOW_PRIVATE_TARGETS": "true",
                "BERTH_DELIVERY_TIMEOUT_SECONDS": "10",  # the default: the lease no longer follows it
                "BERTH_DELIVERY_CONCURRENCY": "4",
                "BERTH_DELIVERY_POLL_SECONDS": "0.2",
                "BERTH_LOG_LEVEL": "WARNING",
            }
            worker = start_worker(env)
            deadline = time.monotonic() + 90
            for _ in range(3000):  # up to a minute for the first deliveries to arrive
                # Killed while sends are open, so the dead worker holds leased deliveries.
                if len(target.requests) >= 8 and target.in_flight:
                    break
                await asyncio.sleep(0.02)
            os.kill(worker.pid, signal.SIGKILL)
            worker.wait()
            killed_at = datetime.now(UTC)
            received_at_kill = len(target.requests)
            assert 0 < received_at_kill < BURST, "the burst must be cut in the middle"
            async with services.database.transaction(write=False) as conn:
                leases = (
                    await conn.scalars(select(deliveries.c.lease_until).where(deliveries.c.status == SENDING))
                ).all()
            # What the dead worker was sending comes free within LEASE of its death (its last
            # renewal was before it), however long a send may take.
            assert leases and all(lease <= killed_at + LEASE for lease in leases), (killed_at, leases)

            restarted = start_worker(env)
            try:
                wanted = {d.id for d in expected}
                while time.monotonic() < deadline:
                    delivered, _ = await services.webhooks.deliveries(status="delivered", limit=1000)
                    if len(delivered) == BURST:
                        break
                    await asyncio.sleep(0.2)
            finally:
                restarted.terminate()
                restarted.wait(timeout=15)
            got = [r.headers["webhook-id"] for r in target.requests]
            assert wanted <= set(got), f"{len(wanted - set(got))} committed changes were never delivered"
            assert target.overlapping == [], "a message was being sent twice at the same time"
            # A send the receiver saw but no attempt records is one the killed worker made and
            # never wrote down: at most its one batch in flight (= BERTH_DELIVERY_CONCURRENCY).
            # Other repeats are recorded retries (an attempt past its 1 s deadline on a busy
            # machine), which at-least-once delivery allows.
            unrecorded = len(got) - sum(d.attempts for d in delivered)
            assert 0 <= unrecorded <= 4, f"{unrecorded} sends were never recorded"
            assert len(delivered) == BURST
    finally:
        await services.close()


def _query(today: object) -> AvailabilityQuery:
    from datetime import date, timedelta

    assert isinstance(today, date)
    return AvailabilityQuery(
        product_id="thames-sightseeing", option_id="DEFAULT",
        local_date_start=today + timedelta(days=2), local_date_end=today + timedelta(days=4),
    )  # fmt: skip
