"""A `berth serve` killed with SIGKILL after a card payment succeeded at Stripe (localstripe) and
before Berth recorded it or confirmed the booking: a restarted server's payments sweep confirms
the booking with exactly one capture and no refund, or, where the places were taken meanwhile,
refunds the payment in full exactly once."""

from __future__ import annotations

import asyncio
import os
import signal
import subprocess
import time
from datetime import UTC, datetime, timedelta
from pathlib import Path

import httpx
import pytest

from berth.container import build_services
from berth.domain.bookings import BookingStatus
from berth.domain.payments import Outcome, PaymentStatus, RefundStatus
from berth.fake_stripe import FakeStripe
from berth.settings import Settings
from tests.berth_process import BERTH, berth_environment, reserved_port
from tests.conftest import Clock
from tests.stripe_helpers import (
    TOUR_PRICE,
    VISA,
    Browser,
    booking_id_of,
    hold,
    localstripe,
    next_week_slot,
    open_shop,
    paying_settings,
)

__all__ = ["localstripe"]


def _serve(
    port: int, settings: Settings, fake: FakeStripe, log: Path, **extra: str
) -> subprocess.Popen[bytes]:
    env = berth_environment(settings.database_url, **fake.environment(), **extra)
    process = subprocess.Popen(
        [str(BERTH), "serve", "--port", str(port)], env=env, stdout=log.open("ab"), stderr=subprocess.STDOUT
    )
    deadline = time.monotonic() + 60
    while True:
        assert process.poll() is None, log.read_text()
        try:
            if httpx.get(f"http://127.0.0.1:{port}/healthz", timeout=1).status_code == 200:
                return process
        except httpx.TransportError:
            assert time.monotonic() < deadline, log.read_text()
            time.sleep(0.1)


@pytest.mark.parametrize("places_taken", [False, True])
async def test_a_server_killed_after_the_capture_is_settled_by_the_next_ones_sweep(
    settings: Settings, localstripe: FakeStripe, tmp_path: Path, places_taken: bool
) -> None:
    from tests.bookings_helpers import booking_catalog
    from tests.builders import load

    # Where the places are taken, the hold was made two hours ago and has run out since.
    clock = Clock(datetime.now(UTC) - timedelta(hours=2 if places_taken else 0))
    services = build_services(paying_settings(settings, localstripe), clock)
    log = tmp_path / "serve.log"
    try:
        await load(services, booking_catalog())
        shop_id = await open_shop(services)
        slot = next_week_slot()
        booking_uuid = await hold(services, shop_id, slot=slot)
        catalog = (await services.catalog.snapshot()).catalog
        checkout = await services.payments.checkout(catalog, booking_uuid)
        Browser(localstripe).give_card(checkout, VISA)
        with reserved_port() as port:
            # The first server: it does no background work, and is killed while the payment
            # is captured at Stripe but not yet in Berth's ledger (pay's charge, unrecorded).
            first = _serve(port, settings, localstripe, log, BERTH_RUN_WORKER="false")
            provider = services.payments.provider
            assert provider is not None
            ledger = await services.payments.payments_for_booking(await booking_id_of(services, booking_uuid))
            (payment,) = ledger.payments
            assert payment.provider_id is not None and payment.provider_setup is not None
            setup = await provider.read_setup(payment.provider_setup)
            assert setup.payment_method is not None
            charged = await provider.pay(payment.provider_id, setup.payment_method)
            assert charged.status == "succeeded"
            os.kill(first.pid, signal.SIGKILL)
            first.wait()
            if places_taken:
                clock.advance(hours=2)
                await hold(services, shop_id, ("adult",) * 12, slot=slot)
                await hold(services, shop_id, ("adult",) * 8, slot=slot)
            second = _serve(port, settings, localstripe, log, BERTH_PAYMENT_SWEEP_SECONDS="0.2")
            try:
                deadline = time.monotonic() + 60
                while True:
                    ledger = await services.payments.payments_for_booking(payment.booking_id)
                    if ledger.payments[0].outcome is not None and all(
                        r.status is RefundStatus.SUCCEEDED for r in ledger.refunds
                    ):
                        break
                    assert time.monotonic() < deadline, log.read_text()
                    await asyncio.sleep(0.2)
            finally:
                second.send_signal(signal.SIGTERM)
                second.wait(timeout=30)
        (settled,) = ledger.payments
        assert settled.status is PaymentStatus.SUCCEEDED
        booking = (await services.staff_bookings.get(catalog, payment.booking_id))[0].booking
        if places_taken:
            assert settled.outcome is Outcome.REFUND
            assert [(r.amount, r.status) for r in ledger.refunds] == [(TOUR_PRICE, RefundStatus.SUCCEEDED)]
            assert booking.status is BookingStatus.EXPIRED
        else:
            assert settled.outcome is Outcome.CLAIMED
            assert ledger.refunds == []
            assert booking.status is BookingStatus.CONFIRMED
    finally:
        await services.close()
