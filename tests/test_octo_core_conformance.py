"""Berth's answers against the official OCTO core document, over HTTP, through real flows.

Every answer of a reseller's journey on the demo (supplier, capabilities, products, each
product, availability check and calendar for every product and option, bookings reserved,
read, listed, changed, extended, confirmed and cancelled, orders' bookings under octo/cart, and
the usual errors) is validated against the schema the core document gives that operation and
status (tests/octo_core.py), with no capability, with octo/pricing, with octo/content (in
German, and in a language the catalogue lacks), with both, and with every capability Berth
implements. A core field whose type or presence drifts fails here.
"""

from __future__ import annotations

import uuid
from typing import Any

import httpx
import pytest

from berth.container import Services
from berth.domain.catalog import Catalog, Option
from tests.conftest import auth
from tests.octo_core import SHA256, check, component_problems, document_digest

EVERY = (
    "octo/content, octo/pricing, octo/cart, octo/rentals, octo/resources, octo/packages, "
    "vendor/mappings, octo/webhooks, octo/pickups, octo/questions, octo/extras"
)
CASES = {
    "core": ("", None),
    "pricing": ("octo/pricing", None),
    "content-de": ("octo/content", "de-DE"),
    "content-fallback": ("octo/content", "fr-FR"),
    "content-pricing": ("octo/content, octo/pricing", "en-GB"),
    "every-capability": (EVERY, "en-GB"),
}
WEEK = {"localDateStart": "2026-06-09", "localDateEnd": "2026-06-15"}
GUEST = {
    "firstName": "Ada",
    "lastName": "Lovelace",
    "emailAddress": "ada@example.com",
    "phoneNumber": "+447700900123",
    "locales": ["en-GB"],
}
# Products booked in every case: START_TIME per unit and per booking, OPENING_HOURS, a rental,
# resources (seat maps, split and unsplit groups).
BOOKED = ("thames-sightseeing", "tower-of-stories", "sunset-kayak", "city-bike-hire", "harbour-cruise")


def headers(case: str) -> dict[str, str]:
    capabilities, language = CASES[case]
    extra = {"Accept-Language": language} if language else {}
    return auth(capabilities=capabilities, **extra)


def capabilities_of(case: str) -> frozenset[str]:
    return frozenset(c.strip() for c in CASES[case][0].split(",") if c.strip())


def rental_fields(option: Option) -> dict[str, str]:
    """A rental option is asked at its first duration. (Without octo/rentals the id is ignored,
    and the option is sold at its default duration.)"""
    durations = option.rental_durations
    return {"rentalDurationId": durations[0].id} if durations else {}


def catalogue_option(catalogue: Catalog, product_id: str, option_id: str) -> Option:
    product = catalogue.product(product_id)
    option = product.option(option_id) if product else None
    assert option is not None
    return option


def test_the_vendored_document_is_the_official_one() -> None:
    assert document_digest() == SHA256


@pytest.mark.parametrize("case", list(CASES))
async def test_catalogue_and_availability_conform(
    client: httpx.AsyncClient, demo: Services, case: str
) -> None:
    caps, hdrs = capabilities_of(case), headers(case)
    check(await client.get("/octo/supplier", headers=hdrs), "/supplier/", "get", caps)
    check(await client.get("/octo/capabilities", headers=hdrs), "/capabilities/", "get", caps)
    products = check(await client.get("/octo/products", headers=hdrs), "/products/", "get", caps)
    catalogue = (await demo.catalog.snapshot()).catalog
    checked = 0
    for product in products:
        check(
            await client.get(f"/octo/products/{product['id']}", headers=hdrs), "/products/{id}", "get", caps
        )
        for option in product["options"]:
            fields = {
                "productId": product["id"],
                "optionId": option["id"],
                "units": [{"id": option["units"][0]["id"], "quantity": 1}],
                **rental_fields(catalogue_option(catalogue, product["id"], option["id"])),
            }
            days = check(
                await client.post("/octo/availability/calendar", json={**fields, **WEEK}, headers=hdrs),
                "/availability/calendar",
                "post",
                caps,
            )
            slots = check(
                await client.post("/octo/availability", json={**fields, **WEEK}, headers=hdrs),
                "/availability/",
                "post",
                caps,
            )
            assert days and slots, (product["id"], option["id"])
            checked += 1
    assert checked == sum(len(p.options) for p in catalogue.products)


async def first_open_slot(client: httpx.AsyncClient, hdrs: dict[str, str], fields: dict[str, Any]) -> str:
    slots = (await client.post("/octo/availability", json={**fields, **WEEK}, headers=hdrs)).json()
    open_ids = [slot["id"] for slot in slots if slot["available"]]
    assert open_ids, fields
    return str(open_ids[0])


@pytest.mark.parametrize("case", list(CASES))
async def test_booking_flows_conform(client: httpx.AsyncClient, demo: Services, case: str) -> None:
    caps, hdrs = capabilities_of(case), headers(case)
    catalogue = (await demo.catalog.snapshot()).catalog
    for product_id in BOOKED:
        product = catalogue.product(product_id)
        assert product is not None
        option = product.options[0]
        fields = {
            "productId": product_id,
            "optionId": option.id,
            "units": [{"id": option.units[0].id, "quantity": 2}],
            **rental_fields(option),
        }
        availability_id = await first_open_slot(client, hdrs, fields)
        booking_uuid, reference = str(uuid.uuid4()), f"conformance-{case}-{product_id}"
        body = {
            "uuid": booking_uuid,
            "productId": product_id,
            "optionId": option.id,
            "availabilityId": availability_id,
            "unitItems": [{"unitId": option.units[0].id}] * 2,
            "resellerReference": reference,
            "notes": "Window seats if possible",
            **rental_fields(option),
        }
        path = f"/octo/bookings/{booking_uuid}"
        held = check(await client.post("/octo/bookings", json=body, headers=hdrs), "/bookings/", "post", caps)
        assert held["status"] == "ON_HOLD"
        check(await client.get(path, headers=hdrs), "/bookings/{uuid}", "get", caps)
        check(
            await client.patch(path, json={"contact": {"firstName": "Ada"}}, headers=hdrs),
            "/bookings/{uuid}",
            "patch",
            caps,
        )
        check(
            await client.post(f"{path}/extend", json={"expirationMinutes": 45}, headers=hdrs),
            "/bookings/{uuid}/extend",
            "post",
            caps,
        )
        confirmed = check(
            await client.post(f"{path}/confirm", json={"contact": GUEST}, headers=hdrs),
            "/bookings/{uuid}/confirm",
            "post",
            caps,
        )
        assert confirmed["status"] in ("CONFIRMED", "PENDING")
        found = check(
            await client.get("/octo/bookings", params={"resellerReference": reference}, headers=hdrs),
            "/bookings/",
            "get",
            caps,
        )
        assert [b["uuid"] for b in found] == [booking_uuid]
        cancelled = check(
            await client.post(f"{path}/cancel", json={"reason": "Plans changed"}, headers=hdrs),
            "/bookings/{uuid}/cancel",
            "post",
            caps,
        )
        assert cancelled["status"] == "CANCELLED"


async def test_order_bookings_conform(client: httpx.AsyncClient, demo: Services) -> None:
    """The core document has no orders; the bookings an order embeds are core Bookings."""
    caps, hdrs = capabilities_of("every-capability"), headers("every-capability")
    fields = {"productId": "thames-sightseeing", "optionId": "DEFAULT"}
    availability_id = await first_open_slot(client, hdrs, fields)
    reservation = {**fields, "availabilityId": availability_id, "unitItems": [{"unitId": "adult"}]}
    response = await client.post(
        "/octo/orders",
        json={"bookings": [{"uuid": str(uuid.uuid4()), **reservation}], "contact": GUEST},
        headers=hdrs,
    )
    assert response.status_code == 200, response.text
    order = response.json()
    confirmed = await client.post(
        f"/octo/orders/{order['id']}/confirm", json={"contact": GUEST}, headers=hdrs
    )
    assert confirmed.status_code == 200, confirmed.text
    for answer in (order, confirmed.json()):
        assert answer["bookings"]
        for booking in answer["bookings"]:
            assert component_problems(booking, "Booking", caps) == []


@pytest.mark.parametrize("case", ["core", "content-pricing"])
async def test_errors_conform(client: httpx.AsyncClient, demo: Services, case: str) -> None:
    caps, hdrs = capabilities_of(case), headers(case)
    unknown = str(uuid.uuid4())
    for response, path, method in (
        (
            await client.post(
                "/octo/availability",
                json={"productId": "atlantis", "optionId": "DEFAULT", **WEEK},
                headers=hdrs,
            ),
            "/availability/",
            "post",
        ),
        (
            await client.post(
                "/octo/availability/calendar",
                json={"productId": "thames-sightseeing", "optionId": "NIGHT", **WEEK},
                headers=hdrs,
            ),
            "/availability/calendar",
            "post",
        ),
        (await client.get("/octo/products/atlantis", headers=hdrs), "/products/{id}", "get"),
        (await client.get(f"/octo/bookings/{unknown}", headers=hdrs), "/bookings/{uuid}", "get"),
        (
            await client.post(f"/octo/bookings/{unknown}/confirm", json={"contact": GUEST}, headers=hdrs),
            "/bookings/{uuid}/confirm",
            "post",
        ),
        (
            await client.post(
                "/octo/bookings",
                json={"productId": "thames-sightseeing", "optionId": "DEFAULT", "unitItems": []},
                headers=hdrs,
            ),
            "/bookings/",
            "post",
        ),
    ):
        assert response.status_code >= 400, response.text
        check(response, path, method, caps, status=response.status_code)
