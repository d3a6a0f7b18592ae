"""Stripe's webhooks over HTTP: localstripe itself signs and delivers its events to a running
`berth serve` (its endpoints registered with localstripe's `/_config/webhooks/{id}`), each
event twice (two endpoints to the same server), and once more signed with another secret. The
payment is settled by the webhook alone (the server runs no sweep, the guest never returns):
the booking confirmed once, the duplicate answered and changing nothing, the forged delivery
refused."""

from __future__ import annotations

import asyncio
import time
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from dataclasses import dataclass, field
from datetime import UTC, datetime
from pathlib import Path

import aiohttp
import httpx
from aiohttp import web

from berth.container import Services, build_services
from berth.domain.bookings import BookingStatus
from berth.domain.payments import Outcome, PaymentStatus
from berth.fake_stripe import WEBHOOK_PATH, WEBHOOK_SECRET, FakeStripe
from berth.services.payments import SettlementState
from berth.settings import Settings
from tests.berth_process import berth_serve, reserved_port
from tests.bookings_helpers import booking_catalog
from tests.builders import load
from tests.conftest import Clock
from tests.stripe_helpers import (
    THREE_D_SECURE,
    Browser,
    booking_id_of,
    hold,
    localstripe,
    next_week_slot,
    open_shop,
    paying_settings,
)

__all__ = ["localstripe"]

WAIT_SECONDS = 30  # localstripe delivers an event a second after it happens


@dataclass
class Relay:
    """Between localstripe and Berth for some endpoints: passes each delivery on as it came
    (body and signature) and notes the event and Berth's answer."""

    berth: str
    url: str = ""
    answered: list[tuple[str, str, int]] = field(default_factory=list)  # (endpoint, event type, status)

    async def pass_on(self, request: web.Request) -> web.Response:
        body = await request.read()
        headers = {
            "Stripe-Signature": request.headers.get("Stripe-Signature", ""),
            "Content-Type": "application/json",
        }
        async with (
            aiohttp.ClientSession() as session,
            session.post(self.berth + WEBHOOK_PATH, data=body, headers=headers) as answer,
        ):
            status = answer.status
        kind = (await request.json())["type"]
        self.answered.append((request.match_info["endpoint"], kind, status))
        return web.Response(status=status)


@asynccontextmanager
async def relay(berth: str) -> AsyncIterator[Relay]:
    passing = Relay(berth)
    app = web.Application()
    app.router.add_post("/{endpoint}", passing.pass_on)
    runner = web.AppRunner(app, access_log=None)
    await runner.setup()
    with reserved_port() as port:
        await web.TCPSite(runner, "127.0.0.1", port).start()
        passing.url = f"http://127.0.0.1:{port}"
        try:
            yield passing
        finally:
            await runner.cleanup()


def register(fake: FakeStripe, endpoint: str, url: str, secret: str) -> None:
    answer = httpx.post(f"{fake.url}/_config/webhooks/{endpoint}", data={"url": url, "secret": secret})
    assert answer.status_code == 200, answer.text


async def _waited(services: Services, booking_id: str, passing: Relay) -> None:
    """Until the payment is claimed and all three deliveries of its success were answered."""
    deadline = time.monotonic() + WAIT_SECONDS
    while True:
        ledger = await services.payments.payments_for_booking(booking_id)
        delivered = [a for a in passing.answered if a[1] == "payment_intent.succeeded"]
        if ledger.payments and ledger.payments[0].outcome is Outcome.CLAIMED and len(delivered) == 2:
            return
        assert time.monotonic() < deadline, (ledger, passing.answered)
        await asyncio.sleep(0.1)


async def test_localstripes_signed_webhooks_settle_the_payment_once(
    settings: Settings, localstripe: FakeStripe, tmp_path: Path
) -> None:
    # On the real clock, as the served Berth is.
    services = build_services(paying_settings(settings, localstripe), Clock(datetime.now(UTC)))
    environment = {**localstripe.environment(), "BERTH_RUN_WORKER": "false"}
    try:
        await load(services, booking_catalog())
        shop_id = await open_shop(services)
        catalog = (await services.catalog.snapshot()).catalog
        with berth_serve(settings.database_url, log=tmp_path / "serve.log", **environment) as berth:
            async with relay(berth) as passing:
                register(localstripe, "berth", berth + WEBHOOK_PATH, WEBHOOK_SECRET)
                register(localstripe, "berth-again", f"{passing.url}/again", WEBHOOK_SECRET)
                register(localstripe, "forged", f"{passing.url}/forged", "whsec_not_berths")
                booking_uuid = await hold(services, shop_id, slot=next_week_slot())
                browser = Browser(localstripe)
                browser.give_card(await services.payments.checkout(catalog, booking_uuid), THREE_D_SECURE)
                asked = await services.payments.pay(catalog, booking_uuid)
                assert asked.state is SettlementState.ACTION_REQUIRED and asked.client_secret is not None
                browser.three_d_secure(asked.client_secret, success=True)  # Stripe sends its events now
                booking_id = await booking_id_of(services, booking_uuid)
                await _waited(services, booking_id, passing)
        await _settled_once(services, booking_id, passing)
    finally:
        await services.close()


async def _settled_once(services: Services, booking_id: str, passing: Relay) -> None:
    catalog = (await services.catalog.snapshot()).catalog
    succeeded = sorted((e, s) for e, kind, s in passing.answered if kind == "payment_intent.succeeded")
    assert succeeded == [("again", 204), ("forged", 400)]
    ledger = await services.payments.payments_for_booking(booking_id)
    assert [(p.status, p.outcome) for p in ledger.payments] == [(PaymentStatus.SUCCEEDED, Outcome.CLAIMED)]
    assert ledger.refunds == []
    booking = (await services.staff_bookings.get(catalog, booking_id))[0].booking
    assert booking.status is BookingStatus.CONFIRMED
    letters = [m.kind for m in await services.mail.messages_of(booking)]
    assert letters == ["receipt"]  # one confirmation, one receipt
