"""A `berth serve` killed with SIGKILL inside the guest's charge request of the web shop (POST
/shop/checkout/{uuid}/charge): Stripe (localstripe, behind a loopback server that loses its
answer) has captured the card, and Berth has neither recorded it nor confirmed the booking. A
restarted server's payments sweep confirms the booking with exactly one capture and no refund,
or, where the hold ran out and the places were taken meanwhile, refunds the payment in full
exactly once."""

from __future__ import annotations

import asyncio
import os
import re
import signal
import subprocess
import time
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

import httpx
import pytest

from berth.container import Services, build_services
from berth.domain.bookings import BookingStatus
from berth.domain.payments import Outcome, PaymentStatus, RefundStatus
from berth.fake_stripe import PUBLISHABLE_KEY, FakeStripe
from berth.settings import Settings
from berth.store.payments_repo import PaymentFilter, PaymentRow
from tests.berth_process import BERTH, berth_environment, reserved_port
from tests.builders import confirmed_booking
from tests.conftest import KEY_A, Clock
from tests.shop_helpers import hidden_fields, hold, open_shop, with_details
from tests.stripe_helpers import TOUR_PRICE, VISA, listed, localstripe, next_week_slot, paying_settings
from tests.stripe_in_front import stripe_in_front

__all__ = ["localstripe"]

CONFIRM = "/confirm"  # Stripe's charge of a PaymentIntent: POST /v1/payment_intents/{id}/confirm


def _serve(port: int, settings: Settings, log: Path, **environment: str) -> subprocess.Popen[bytes]:
    env = berth_environment(settings.database_url, **environment)
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


async def _card_given(guest: httpx.AsyncClient, checkout: str, fake: FakeStripe) -> str:
    """The payment page loaded (the server's checkout) and the card given to Stripe as its
    script gives it; the page's CSRF token."""
    pay = await guest.get(checkout + "/pay")
    assert pay.status_code == 200, pay.text
    setup = re.search(r'data-setup="([^"]+)"', pay.text)
    assert setup is not None, pay.text
    secret = setup.group(1)
    card = {"number": VISA, "exp_month": "12", "exp_year": "2034", "cvc": "123"}
    async with httpx.AsyncClient() as stripe_js:
        given = await stripe_js.post(
            f"{fake.url}/v1/setup_intents/{secret.split('_secret_')[0]}/confirm",
            json={"key": PUBLISHABLE_KEY, "client_secret": secret, "use_stripe_sdk": True,
                  "payment_method_data": {"type": "card", "card": card}},
        )  # fmt: skip
    assert given.status_code == 200, given.text
    return hidden_fields(pay.text)["csrf"]


async def _places_taken(settings: Settings, fake: FakeStripe, slot: str) -> None:
    """Two hours later the hold has run out (marked so by the expiry sweep) and others have
    booked every place of the departure."""
    later = build_services(paying_settings(settings, fake), Clock(datetime.now(UTC) + timedelta(hours=2)))
    try:
        assert await later.expiry.expire_due() == 1
        for party in (12, 8):
            await confirmed_booking(
                later, ("Reseller A", KEY_A), "thames-sightseeing", slot, ["adult"] * party,
                {"firstName": "Other", "lastName": "Guest", "emailAddress": "other@example.com"},
            )  # fmt: skip
    finally:
        await later.close()


async def _settled(services: Services, booking_id: str, log: Path) -> PaymentRow:
    """The booking's one payment, once it has its outcome and its refunds are done."""
    deadline = time.monotonic() + 60
    while True:
        (row,), _ = await services.payments.list_payments(PaymentFilter(booking_id=booking_id), 10, 0)
        if row.payment.outcome is not None and all(r.status is RefundStatus.SUCCEEDED for r in row.refunds):
            return row
        assert time.monotonic() < deadline, f"not settled by the restarted server: see {log}"
        await asyncio.sleep(0.2)


def _intents(fake: FakeStripe, booking_id: str) -> list[dict[str, Any]]:
    return [pi for pi in listed(fake, "payment_intents") if pi["metadata"].get("berth_booking") == booking_id]


@pytest.mark.parametrize("places_taken", [False, True])
async def test_a_server_killed_in_the_charge_request_is_settled_by_the_next_ones_sweep(
    settings: Settings, localstripe: FakeStripe, tmp_path: Path, places_taken: bool
) -> None:
    services = build_services(paying_settings(settings, localstripe), Clock(datetime.now(UTC)))
    log = tmp_path / "serve.log"
    slot = next_week_slot()
    try:
        await open_shop(services)
        async with stripe_in_front(localstripe) as front:
            with reserved_port() as port:
                # The first server reaches Stripe through `front` and does no background work.
                base = f"http://127.0.0.1:{port}"
                at_front = {**localstripe.environment(), "BERTH_STRIPE_API_BASE": front.url}
                first = _serve(
                    port, settings, log, **at_front, BERTH_RUN_WORKER="false", BERTH_PUBLIC_URL=base
                )
                async with httpx.AsyncClient(base_url=base) as guest:
                    answer = await hold(guest, slot=slot, adult=2)
                    assert answer.status_code == 303, answer.text
                    checkout = answer.headers["location"]
                    assert (await with_details(guest, checkout)).status_code == 303
                    csrf = await _card_given(guest, checkout, localstripe)
                    charged = front.lose_answer(1, on=CONFIRM)
                    charging = asyncio.ensure_future(guest.post(checkout + "/charge", data={"csrf": csrf}))
                    await asyncio.wait_for(charged.wait(), 30)
                    os.kill(first.pid, signal.SIGKILL)  # Stripe charged; its answer on its way
                    first.wait()
                    with pytest.raises(httpx.TransportError):
                        await charging
                (unrecorded,), _ = await services.payments.list_payments(PaymentFilter(), 10, 0)
                booking_id = unrecorded.payment.booking_id
                (intent,) = _intents(localstripe, booking_id)
                assert intent["status"] == "succeeded"  # captured at Stripe, not in Berth's ledger
                assert (unrecorded.payment.status, unrecorded.payment.provider_id) == (
                    PaymentStatus.CREATED, intent["id"],
                )  # fmt: skip
                if places_taken:
                    await _places_taken(settings, localstripe, slot)
                second = _serve(
                    port, settings, log, **localstripe.environment(), BERTH_PAYMENT_SWEEP_SECONDS="0.2"
                )
                try:
                    row = await _settled(services, booking_id, log)
                finally:
                    second.send_signal(signal.SIGTERM)
                    second.wait(timeout=30)
        catalog = (await services.catalog.snapshot()).catalog
        booking = (await services.staff_bookings.get(catalog, booking_id))[0].booking
        assert [(pi["id"], pi["status"]) for pi in _intents(localstripe, booking_id)] == [
            (intent["id"], "succeeded")
        ]  # one payment, captured once
        refunds = [r for r in listed(localstripe, "refunds") if r.get("payment_intent") == intent["id"]]
        assert row.payment.status is PaymentStatus.SUCCEEDED
        if places_taken:
            assert row.payment.outcome is Outcome.REFUND
            assert [(r.amount, r.status) for r in row.refunds] == [(TOUR_PRICE, RefundStatus.SUCCEEDED)]
            assert [(r["amount"], r["status"]) for r in refunds] == [(TOUR_PRICE, "succeeded")]
            assert booking.status is BookingStatus.EXPIRED
        else:
            assert row.payment.outcome is Outcome.CLAIMED
            assert row.refunds == () and refunds == []
            assert booking.status is BookingStatus.CONFIRMED
    finally:
        await services.close()
