"""A `berth worker` killed with SIGKILL while it is sending guests' emails: after a restart
every queued email arrives, none is sent twice at once, and the repeats are at most the one
batch the dead worker had in flight (BERTH_MAIL_CONCURRENCY), each with its Message-ID."""

from __future__ import annotations

import asyncio
import os
import signal
import time
from datetime import timedelta

from berth.container import build_services
from berth.domain.bookings import Contact
from berth.services.availability import AvailabilityQuery
from berth.services.bookings.inputs import ConfirmInput, ReserveInput, UnitItemInput
from berth.settings import Settings
from berth.store import mail_repo
from tests.bookings_helpers import booking_catalog
from tests.builders import load
from tests.mail_helpers import smtp_sink
from tests.test_delivery_crash import start_worker

BURST = 40
CONCURRENCY = 4


async def test_mail_worker_killed_mid_send(settings: Settings) -> None:
    services = build_services(settings)  # the real clock: the worker process runs on it too
    try:
        await load(services, booking_catalog())
        connection = await services.connections.ensure("Crash", "crash-key")
        catalog = (await services.catalog.snapshot()).catalog
        today = services.clock().date()
        query = AvailabilityQuery(
            product_id="thames-sightseeing", option_id="DEFAULT",
            local_date_start=today + timedelta(days=2), local_date_end=today + timedelta(days=4),
        )  # fmt: skip
        open_slots = [s for s in await services.availability.check(catalog, query) if s.state.available]
        guest = Contact(values={"firstName": "Crash", "lastName": "Test", "emailAddress": "c@example.com"})
        for n in range(BURST):
            held = await services.bookings.reserve(
                catalog, connection.id,
                ReserveInput(product_id="thames-sightseeing", option_id="DEFAULT",
                             availability_id=open_slots[n % len(open_slots)].slot.id,
                             unit_items=(UnitItemInput("adult"),)),
            )  # fmt: skip
            await services.bookings.confirm(
                catalog, connection.id, held.booking.uuid, ConfirmInput(guest, email_receipt=True)
            )
        async with services.database.transaction(write=False) as conn:
            queued, total = await mail_repo.list_messages(conn, limit=1000)
        assert total == BURST and {m.status for m in queued} == {mail_repo.PENDING}

        async with smtp_sink() as sink:
            sink.delay = 0.2  # a wide window in which the worker has sends in flight
            env = {
                **os.environ,
                "BERTH_DATABASE_URL": settings.database_url,
                "BERTH_SMTP_URL": f"smtp://127.0.0.1:{sink.port}",
                "BERTH_MAIL_CONCURRENCY": str(CONCURRENCY),
                "BERTH_DELIVERY_POLL_SECONDS": "0.2",
                "BERTH_LOG_LEVEL": "WARNING",
            }
            worker = start_worker(env)
            deadline = time.monotonic() + 90
            while time.monotonic() < deadline:  # killed while sends are open
                if len(sink.received) >= 8 and sink.in_flight:
                    break
                await asyncio.sleep(0.02)
            os.kill(worker.pid, signal.SIGKILL)
            worker.wait()
            received_at_kill = len(sink.received)
            assert 0 < received_at_kill < BURST, "the burst must be cut in the middle"

            restarted = start_worker(env)
            try:
                while time.monotonic() < deadline:
                    async with services.database.transaction(write=False) as conn:
                        sent, _ = await mail_repo.list_messages(conn, status=mail_repo.SENT, limit=1000)
                    if len(sent) == BURST:
                        break
                    await asyncio.sleep(0.2)
            finally:
                restarted.terminate()
                restarted.wait(timeout=15)
        # Message-IDs are <message id@the sender's domain>: compared by the message's id.
        got = [str(m["Message-ID"]).strip("<>").split("@")[0] for m in sink.received]
        wanted = {m.id for m in queued}
        assert wanted <= set(got), f"{len(wanted - set(got))} queued emails never arrived"
        assert sink.overlapping == [], "an email was being sent twice at the same time"
        assert len(sent) == BURST
        # An email the server took but no attempt records is one the killed worker sent and
        # never wrote down: at most its one batch in flight.
        unrecorded = len(got) - sum(m.attempts for m in sent)
        assert 0 <= unrecorded <= CONCURRENCY, f"{unrecorded} sends were never recorded"
    finally:
        await services.close()
