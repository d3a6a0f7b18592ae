"""The manifest's extras (octo/extras): what is sold of each against its stock, and who has what."""

from __future__ import annotations

import uuid

import httpx

from berth.container import Services
from tests.backoffice.helpers import sign_in, text_of
from tests.backoffice.test_pages import manifest_path
from tests.bookings_helpers import SLOT
from tests.builders import load
from tests.conftest import auth
from tests.extras_helpers import CRUISE, NOON, extras_catalog


async def test_the_manifest_shows_the_extras(client: httpx.AsyncClient, services: Services) -> None:
    await load(services, extras_catalog())
    await sign_in(client)
    lunch = {"unitId": "guest", "extraItems": [{"extraId": "lunch"}]}
    body = {
        "uuid": str(uuid.uuid4()), **CRUISE, "availabilityId": NOON, "unitItems": [lunch, lunch],
        "extraItems": [{"extraId": "photos"}], "contact": {"firstName": "Ada", "lastName": "Lovelace"},
    }  # fmt: skip
    held = await client.post("/octo/bookings", json=body, headers=auth(capabilities="octo/extras"))
    assert held.status_code == 200, held.text
    text = text_of((await client.get(manifest_path(NOON, "lunch-cruise"))).text)
    assert "Extras Extra Booked Stock Photo package 1 — Champagne 0 2 Two-course lunch 2 5" in text
    assert f"{held.json()['supplierReference']} Ada Lovelace: 1 x Photo package, 2 x Two-course lunch" in text
    assert "Extras Extra" not in text_of((await client.get(manifest_path(SLOT))).text)


async def test_the_booking_page_shows_its_extras_and_price_lines(
    client: httpx.AsyncClient, services: Services
) -> None:
    """Issue 49 §4: the booking page showed one price, not what it was made of."""
    await load(services, extras_catalog())
    await sign_in(client)
    lunch = {"unitId": "guest", "extraItems": [{"extraId": "lunch"}]}
    body = {
        "uuid": str(uuid.uuid4()), **CRUISE, "availabilityId": NOON, "unitItems": [lunch],
        "extraItems": [{"extraId": "photos"}], "contact": {"firstName": "Ada", "lastName": "Lovelace"},
    }  # fmt: skip
    held = await client.post("/octo/bookings", json=body, headers=auth(capabilities="octo/extras"))
    assert held.status_code == 200, held.text
    page = await client.get(f"/admin/bookings/{held.json()['id']}")
    assert page.status_code == 200, page.text
    text = text_of(page.text)
    assert (
        "Part Kind Retail Net Tax included Guest Unit 30.00 GBP 24.00 GBP VAT 5.00 GBP "
        "Photo package Extra 20.00 GBP 16.00 GBP — Two-course lunch Extra 15.00 GBP 12.00 GBP VAT 2.50 GBP"
    ) in text, text
