"""The shipped demo as a product: what `berth serve --demo` must offer a reseller trying Berth,
or certifying it with the OCTO validator. (Other tests load a variant with the figures they
depend on: tests/conftest.py `demo_catalog_for_tests`.)"""

from __future__ import annotations

import uuid
from datetime import timedelta

import httpx

from berth.capabilities.registry import CATALOG_RULES
from berth.container import Services
from berth.demo.loader import SOLD_OUT_PRODUCT, demo_catalog_text, load_demo
from berth.domain.catalog import AvailabilityType
from berth.domain.catalog.document import parse_catalog
from tests.conftest import auth

# A conformance run holds about 130 places of one departure of the first START_TIME product
# (some 15 holds of up to 10 adults) and never releases them.
CONFORMANCE_HOLDS = 15
CONFORMANCE_PARTY = 10


def test_the_first_start_time_product_carries_a_conformance_run() -> None:
    catalog = parse_catalog(demo_catalog_text(), CATALOG_RULES)
    first = next(p for p in catalog.products if p.availability_type is AvailabilityType.START_TIME)
    option = first.default_option
    assert option.schedules
    for schedule in option.schedules:
        assert schedule.capacity is not None and schedule.capacity >= 150
    assert option.restrictions.max_units is None or option.restrictions.max_units >= CONFORMANCE_PARTY


async def test_a_conformance_run_fits_one_departure_and_sold_out_is_still_shown(
    client: httpx.AsyncClient, services: Services
) -> None:
    await load_demo(services)
    products = (await client.get("/octo/products", headers=auth())).json()
    first = next(p for p in products if p["availabilityType"] == "START_TIME")
    option = next(o for o in first["options"] if o["default"])
    adult = next(u for u in option["units"] if u["type"] == "ADULT")
    selector = {"productId": first["id"], "optionId": option["id"]}
    today = services.clock().date()
    start, end = today.isoformat(), (today + timedelta(days=27)).isoformat()
    window = {**selector, "localDateStart": start, "localDateEnd": end}
    slots = (await client.post("/octo/availability", json=window, headers=auth())).json()
    departure = next(s for s in slots if s["available"])
    for _ in range(CONFORMANCE_HOLDS):
        body = {
            "uuid": str(uuid.uuid4()),
            **selector,
            "availabilityId": departure["id"],
            "unitItems": [{"unitId": adult["id"]}] * CONFORMANCE_PARTY,
        }
        response = await client.post("/octo/bookings", json=body, headers=auth())
        assert response.status_code == 200, response.text
    after = (await client.post("/octo/availability", json={**selector, "availabilityIds": [departure["id"]]},
                               headers=auth())).json()[0]  # fmt: skip
    assert (
        after["available"]
        and after["vacancies"] == departure["vacancies"] - CONFORMANCE_HOLDS * CONFORMANCE_PARTY
    )
    # A small product keeps showing sold-out departures.
    kayak = {"productId": SOLD_OUT_PRODUCT, "optionId": "DEFAULT", "localDateStart": start,
             "localDateEnd": end}  # fmt: skip
    kayak_slots = (await client.post("/octo/availability", json=kayak, headers=auth())).json()
    assert any(s["status"] == "SOLD_OUT" for s in kayak_slots)
