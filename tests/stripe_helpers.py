"""A real fake Stripe for the payments tests (localstripe, through `berth.fake_stripe`), a paying
channel (the web shop's connection) and what a guest's browser does with Stripe.js: give a card
(`confirmCardSetup`) and pass or fail 3-D Secure (`confirmCardPayment`), sent to localstripe as
its Stripe.js stand-in sends them."""

from __future__ import annotations

import hashlib
import hmac
import json
import time as clock_time
import uuid
from collections.abc import AsyncIterator, Iterator
from dataclasses import dataclass
from datetime import UTC, datetime, time, timedelta
from typing import Any
from zoneinfo import ZoneInfo

import httpx
import pytest

from berth import fake_stripe
from berth.container import Services, build_services
from berth.domain.bookings import Contact
from berth.domain.staff import COMMAND_LINE
from berth.fake_stripe import FakeStripe
from berth.services.bookings.inputs import ReserveInput, UnitItemInput
from berth.services.payments import Checkout
from berth.settings import Settings
from berth.store import payments_repo
from tests.berth_process import reserved_port
from tests.bookings_helpers import SLOT, booking_catalog
from tests.builders import load
from tests.conftest import Clock

SHOP_KEY = "shop-test-key"
SHOP = ("Web shop", SHOP_KEY)
VISA = "4242424242424242"
DECLINED = "4000000000000341"  # declined when charged
THREE_D_SECURE = "4000002760003184"  # asks for 3-D Secure
GUEST = Contact({"firstName": "Ada", "lastName": "Lovelace", "emailAddress": "ada@example.com"})
TOUR_PRICE = 2 * 2500  # two adults of the booking catalogue's tour, in euro cents


@pytest.fixture(scope="module")
def localstripe() -> Iterator[FakeStripe]:
    with reserved_port() as port:
        fake = fake_stripe.start(port)
        try:
            yield fake
        finally:
            fake.stop()


@pytest.fixture
async def shop(
    settings: Settings, clock: Clock, localstripe: FakeStripe
) -> AsyncIterator[tuple[Services, str]]:
    """Services paying through localstripe over the booking tests' catalogue, with the web
    shop's connection; its id."""
    built = build_services(paying_settings(settings, localstripe), clock)
    await load(built, booking_catalog())
    shop_id = await open_shop(built)
    yield built, shop_id
    await built.close()


def next_week_slot() -> str:
    """The tour's 10:00 departure a week from today, for services on the real clock (as a
    `berth serve` beside the test runs)."""
    day = datetime.now(UTC).date() + timedelta(days=7)
    return datetime.combine(day, time(10), ZoneInfo("Europe/London")).isoformat()


def paying_settings(settings: Settings, fake: FakeStripe) -> Settings:
    """`settings` pointed at the fake Stripe (as `berth serve --demo` points itself)."""
    return Settings.model_validate({**settings.model_dump(), **_stripe_settings(fake)})


def _stripe_settings(fake: FakeStripe) -> dict[str, Any]:
    return {key.removeprefix("BERTH_").lower(): value for key, value in fake.environment().items()}


async def open_shop(services: Services) -> str:
    """The web shop's connection, a paying channel (`takesPayment`); its id."""
    shop = await services.connections.ensure(*SHOP)
    document = {"boxOffice": True, "takesPayment": True}
    await services.contracts.save(shop.id, document, base_version=None, actor=COMMAND_LINE)
    return shop.id


async def hold(
    services: Services,
    shop_id: str,
    units: tuple[str, ...] = ("adult", "adult"),
    contact: Contact = GUEST,
    slot: str = SLOT,
) -> str:
    """A booking of the shop held on the tour's `slot` for `contact`; its uuid."""
    catalog = (await services.catalog.snapshot()).catalog
    booking_uuid = str(uuid.uuid4())
    data = ReserveInput(
        product_id="thames-sightseeing",
        option_id="DEFAULT",
        unit_items=tuple(UnitItemInput(u) for u in units),
        uuid=booking_uuid,
        availability_id=slot,
        contact=contact,
    )
    await services.bookings.reserve(catalog, shop_id, data)
    return booking_uuid


async def booking_id_of(services: Services, booking_uuid: str) -> str:
    """The id of the shop's booking `booking_uuid`."""
    async with services.database.transaction(write=False) as conn:
        (found,) = await payments_repo.bookings_by_uuid(conn, booking_uuid)
    return found.id


@dataclass
class Browser:
    """What the guest's browser sends to Stripe (here localstripe), with the publishable key."""

    fake: FakeStripe

    def _post(self, path: str, body: dict[str, Any]) -> dict[str, Any]:
        response = httpx.post(f"{self.fake.url}{path}", json={"key": fake_stripe.PUBLISHABLE_KEY, **body})
        answer: dict[str, Any] = response.json()
        return answer

    def give_card(self, checkout: Checkout, number: str, *, authenticate: bool = True) -> dict[str, Any]:
        """`stripe.confirmCardSetup(setup_client_secret, {payment_method: {card}})`, passing a
        3-D Secure challenge of the setup when asked (`authenticate`)."""
        setup_id = checkout.setup_client_secret.split("_secret_")[0]
        card = {"number": number, "exp_month": "12", "exp_year": "2034", "cvc": "123"}
        answer = self._post(
            f"/v1/setup_intents/{setup_id}/confirm",
            {
                "use_stripe_sdk": True,
                "client_secret": checkout.setup_client_secret,
                "payment_method_data": {"type": "card", "card": card},
            },
        )
        if answer.get("status") == "requires_action":
            verb = "confirm" if authenticate else "cancel"
            answer = self._post(
                f"/v1/setup_intents/{setup_id}/{verb}",
                {"use_stripe_sdk": True, "client_secret": checkout.setup_client_secret},
            )
        return answer

    def three_d_secure(self, client_secret: str, *, success: bool) -> dict[str, Any]:
        """`stripe.confirmCardPayment(client_secret)`: the guest passes or fails the challenge."""
        payment_id = client_secret.split("_secret_")[0]
        flag = "true" if success else "false"
        return self._post(
            f"/v1/payment_intents/{payment_id}/_authenticate?success={flag}", {"client_secret": client_secret}
        )


def signed(event: dict[str, Any]) -> tuple[bytes, str]:
    """A notification as Stripe signs it (`t=...,v1=HMAC-SHA256(secret, "t.payload")`)."""
    payload = json.dumps(event).encode()
    stamp = int(clock_time.time())
    mac = hmac.new(
        fake_stripe.WEBHOOK_SECRET.encode(), f"{stamp}.".encode() + payload, hashlib.sha256
    ).hexdigest()
    return payload, f"t={stamp},v1={mac}"


def payment_event(event_id: str, kind: str, payment_id: str) -> dict[str, Any]:
    """Stripe's event `kind` about the PaymentIntent `payment_id` (a `charge.*` event names it
    as its charge's `payment_intent`)."""
    if kind.startswith("charge."):
        about = {"id": f"ch_of_{payment_id}", "object": "charge", "payment_intent": payment_id}
    else:
        about = {"id": payment_id, "object": "payment_intent"}
    return {
        "id": event_id, "object": "event", "type": kind, "created": 0, "livemode": False,
        "data": {"object": about},
    }  # fmt: skip


def listed(fake: FakeStripe, kind: str) -> list[dict[str, Any]]:
    """Every object of `kind` (`payment_intents`, `refunds`) Stripe (localstripe) holds, read
    from its API page by page with the secret key, as a supplier's reconciliation reads it."""
    found: list[dict[str, Any]] = []
    after: dict[str, str] = {}
    while True:
        answer = httpx.get(
            f"{fake.url}/v1/{kind}", params={"limit": "100", **after}, auth=(fake_stripe.SECRET_KEY, "")
        )
        assert answer.status_code == 200, answer.text
        page = answer.json()
        found.extend(page["data"])
        if not page["has_more"]:
            return found
        after = {"starting_after": page["data"][-1]["id"]}
