"""What the gift voucher tests share: reseller A's contract selling gifts at 20 % commission,
a gift's body, and answers checked against Ventrata's `Gift` schema."""

from __future__ import annotations

import uuid
from typing import Any

import httpx

from berth.container import Services
from berth.domain.bookings import Contact
from berth.domain.staff import COMMAND_LINE
from berth.services.bookings.inputs import ReserveInput, UnitItemInput
from tests import ventrata_schema
from tests.bookings_helpers import SLOT, TOUR
from tests.conftest import KEY_A, auth

GIFTS = "octo/gifts, octo/pricing"
BUYER = {"firstName": "Ada", "lastName": "Lovelace", "emailAddress": "ada@example.com"}
FRIEND = {"firstName": "Grace", "lastName": "Hopper", "emailAddress": "grace@example.com"}


async def sell_gifts(services: Services, name: str = "Reseller A", **contract: Any) -> None:
    document = {"sellsGifts": True, "rate": {"commission": 20}, **contract}
    await services.contracts.save(name, document, base_version=None, actor=COMMAND_LINE)


def gift_body(**fields: Any) -> dict[str, Any]:
    return {
        "uuid": str(uuid.uuid4()),
        "amount": 5000,
        "currency": "EUR",
        "emailReceipt": True,
        "contact": BUYER,
        "recipient": FRIEND,
        "message": "Happy birthday!",
        **fields,
    }


async def send(
    client: httpx.AsyncClient, method: str, path: str, body: Any = None, key: str = KEY_A, caps: str = GIFTS
) -> httpx.Response:
    return await client.request(method, f"/octo{path}", json=body, headers=auth(key, capabilities=caps))


def answered(response: httpx.Response, caps: str = GIFTS) -> dict[str, Any]:
    """The gift answered, checked against Ventrata's `Gift` schema."""
    assert response.status_code == 200, response.text
    gift: dict[str, Any] = response.json()
    capabilities = {c.strip() for c in caps.split(",") if c.strip()}
    assert ventrata_schema.problems("Gift", gift, "octo/gifts") == []
    assert ("pricing" in gift) == ("octo/pricing" in capabilities)
    return gift


def refused(response: httpx.Response, code: str, fragment: str) -> dict[str, Any]:
    assert response.status_code == 400, response.text
    body: dict[str, Any] = response.json()
    assert body["error"] == code and fragment in body["errorMessage"], body
    return body


async def issued(client: httpx.AsyncClient, **fields: Any) -> dict[str, Any]:
    """A gift created and confirmed by reseller A."""
    created = answered(await send(client, "POST", "/gifts", gift_body(**fields)))
    return answered(await send(client, "POST", f"/gifts/{created['uuid']}/confirm", {}))


def code_of(gift: dict[str, Any]) -> str:
    code: str = gift["voucher"]["deliveryOptions"][0]["deliveryValue"]
    return code


async def held_booking(services: Services, day: int = 2) -> str:
    """A booking of reseller A held on the booking tests' cruise (on the 10:00 of June `day`):
    what a gift pays for."""
    catalog = (await services.catalog.snapshot()).catalog
    booker = await services.connections.ensure("Reseller A", KEY_A)
    reservation = ReserveInput(
        product_id=TOUR["productId"], option_id=TOUR["optionId"], availability_id=SLOT.replace("06-02", f"06-{day:02d}"),
        unit_items=(UnitItemInput("adult"),), contact=Contact(),
    )  # fmt: skip
    held = await services.bookings.reserve(catalog, booker.id, reservation)
    return held.booking.id
