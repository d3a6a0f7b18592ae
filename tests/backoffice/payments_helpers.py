"""The back office's payments tests: Berth's services paying through a real localstripe, the web
shop's connection, bookings paid by card through the payments service as a guest pays them, and
a signed-in back office client."""

from __future__ import annotations

import uuid
from collections.abc import AsyncIterator
from dataclasses import dataclass

import httpx
import pytest
from fastapi import FastAPI

from berth.app import create_app
from berth.container import Services, build_services
from berth.domain.bookings import BookingStatus
from berth.domain.staff import COMMAND_LINE
from berth.fake_stripe import FakeStripe
from berth.services.bookings.inputs import ReserveInput, UnitItemInput
from berth.services.payments import SettlementState
from berth.settings import Settings
from tests.backoffice.helpers import sign_in
from tests.bookings_helpers import SLOT, booking_catalog
from tests.builders import load
from tests.conftest import Clock
from tests.stripe_helpers import GUEST, SHOP, VISA, Browser, paying_settings


@dataclass
class Office:
    services: Services
    shop_id: str
    client: httpx.AsyncClient
    csrf: str
    fake: FakeStripe
    app: FastAPI

    async def paid(self, units: tuple[str, ...] = ("adult", "adult")) -> str:
        """A booking of the web shop paid by card and confirmed; its id."""
        return await pay_for(self.services, self.shop_id, self.fake, units)

    async def later(self, clock: Clock, **delta: float) -> None:
        """Move the clock on and sign in again (a day ends the back office's session)."""
        clock.advance(**delta)
        self.client.cookies.clear()
        self.csrf = await sign_in(self.client)

    async def post(self, path: str, **form: str) -> httpx.Response:
        return await self.client.post(path, data={"csrf_token": self.csrf, **form})


# The web shop's contract as the shop opens it: at retail (no commission), a paying channel.
SHOP_CONTRACT = {"products": "ALL", "rate": {"commission": 0}, "boxOffice": True, "takesPayment": True}


async def open_retail_shop(services: Services) -> str:
    """The web shop's connection with its contract at retail, a paying channel; its id."""
    shop = await services.connections.ensure(*SHOP)
    await services.contracts.save(shop.id, SHOP_CONTRACT, base_version=None, actor=COMMAND_LINE)
    return shop.id


async def pay_for(services: Services, shop_id: str, fake: FakeStripe, units: tuple[str, ...]) -> str:
    """A booking of the web shop on the tour's SLOT, sold at the shop's contract and paid by
    card as a guest pays (the card given to Stripe, then charged); its id."""
    catalog = (await services.catalog.snapshot()).catalog
    shop = await services.statements.connection(shop_id)
    booking_uuid = str(uuid.uuid4())
    data = ReserveInput(
        product_id="thames-sightseeing", option_id="DEFAULT", unit_items=tuple(UnitItemInput(u) for u in units),
        uuid=booking_uuid, availability_id=SLOT, contact=GUEST,
    )  # fmt: skip
    sold = services.contracts.snapshot(await services.catalog.snapshot(), shop).catalog
    await services.bookings.reserve(sold, shop_id, data)
    Browser(fake).give_card(await services.payments.checkout(catalog, booking_uuid), VISA)
    settled = await services.payments.pay(catalog, booking_uuid)
    assert settled.state is SettlementState.CONFIRMED, settled.message
    assert settled.booking is not None and settled.booking.booking.status is BookingStatus.CONFIRMED
    return settled.booking.booking.id


@pytest.fixture
async def office_paying(settings: Settings, clock: Clock, localstripe: FakeStripe) -> AsyncIterator[Office]:
    """The booking tests' catalogue, the resellers and the web shop, card payments through
    localstripe, and the back office signed in as the bootstrap admin."""
    services = build_services(paying_settings(settings, localstripe), clock)
    await load(services, booking_catalog())
    shop_id = await open_retail_shop(services)
    app = create_app(services=services)
    transport = httpx.ASGITransport(app=app, raise_app_exceptions=False)
    async with httpx.AsyncClient(transport=transport, base_url="http://berth.test") as client:
        yield Office(services, shop_id, client, await sign_in(client), localstripe, app)
    await services.close()
