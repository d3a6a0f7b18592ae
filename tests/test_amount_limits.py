"""One maximum for every amount (issue 47, finding 12): an amount above `MAX_AMOUNT` is refused
where it enters (a catalogue price or tax, a rental's price times its multiplier, a contract's
net) naming its field, and sums past 64 bits (a catalogue stored before the maximum) are still
answered exactly: the booking's answer after its hold is stored, and the month's statement.
Clock: 2026-06-01T08:00Z."""

from __future__ import annotations

import copy
from typing import Any

import httpx
import orjson
import pytest

from berth.container import Services
from berth.domain.catalog import Catalog
from tests.bookings_helpers import booking_products, confirm, reservation, reserve
from tests.builders import load, supplier
from tests.conftest import ADMIN, KEY_A, KEY_B
from tests.rentals_helpers import bike_hire
from tests.test_contracts import connection_id, put_contract

MAXIMUM = 10**12  # documented in docs/decisions.md and docs/catalog.md
HUGE = 10**19  # past the signed 64-bit range, within the unsigned one


def _cruise_adult_at(products: tuple[dict[str, Any], ...], retail: int) -> tuple[dict[str, Any], ...]:
    """`products` with the cruise's adult EUR ticket at `retail` (original and net too)."""
    changed = copy.deepcopy(products)
    adult = changed[0]["options"][0]["units"][0]
    assert adult["id"] == "adult" and adult["prices"][0]["currency"] == "EUR"
    adult["prices"][0].update({"retail": retail, "original": retail, "net": retail * 4 // 5})
    return changed


async def _import(client: httpx.AsyncClient, document: dict[str, Any]) -> httpx.Response:
    return await client.put(
        "/admin/api/catalog", content=orjson.dumps(document), params={"dryRun": "true"}, headers=ADMIN
    )


async def test_an_amount_above_the_maximum_is_refused_naming_its_field(
    client: httpx.AsyncClient, bookable: Services
) -> None:
    at_most = await _import(
        client, {"supplier": supplier(), "products": _cruise_adult_at(booking_products(), MAXIMUM)}
    )
    assert at_most.status_code == 200, at_most.text
    refused = await _import(
        client, {"supplier": supplier(), "products": _cruise_adult_at(booking_products(), HUGE)}
    )
    assert refused.status_code == 400, refused.text
    paths = {p["path"]: p["message"] for p in refused.json()["problems"]}
    where = "products[0].options[0].units[0].prices[0]"
    assert paths[f"{where}.retail"] == (
        "10000000000000000000 is above the maximum amount, 1,000,000,000,000 minor units"
    )
    assert {f"{where}.original", f"{where}.net"} <= set(paths)
    # A tax's amounts too.
    taxed = copy.deepcopy(booking_products())
    taxed[0]["options"][0]["units"][0]["prices"][0]["includedTaxes"][0]["retail"] = HUGE
    tax = await _import(client, {"supplier": supplier(), "products": taxed})
    assert f"{where}.includedTaxes[0].retail" in {p["path"] for p in tax.json()["problems"]}, tax.text


async def test_a_rental_price_times_its_multiplier_is_an_amount_too(
    client: httpx.AsyncClient, bookable: Services
) -> None:
    bikes = bike_hire()
    bikes["options"][0]["units"][0]["prices"][1].update({"retail": 10**9, "net": 8 * 10**8})
    del bikes["options"][0]["units"][0]["prices"][1]["includedTaxes"]
    bikes["options"][0]["rentalDurations"][3]["pricingMultiplier"] = 10_000
    refused = await _import(client, {"supplier": supplier(), "products": [bikes]})
    assert refused.status_code == 400, refused.text
    paths = {p["path"]: p["message"] for p in refused.json()["problems"]}
    assert paths == {
        "products[0].options[0].rentalDurations[3].pricingMultiplier": "a price of 1000000000 times it: "
        "10000000000000 is above the maximum amount, 1,000,000,000,000 minor units"
    }


async def test_a_contract_net_above_the_maximum_is_refused_naming_the_entry(
    client: httpx.AsyncClient, bookable: Services
) -> None:
    entry = {"product": "thames-sightseeing", "unit": "adult", "currency": "EUR", "net": HUGE}
    refused = await put_contract(
        client, bookable, KEY_B, {"rate": {"netPrices": [{**entry, "allowAboveRetail": True}]}}
    )
    assert refused.status_code == 400, refused.text
    assert refused.json()["problems"] == [
        "rate.netPrices[0].net: 10000000000000000000 is above the maximum amount, 1,000,000,000,000 minor units"
    ]
    cid = await connection_id(bookable, KEY_B)
    assert (await client.get(f"/admin/api/connections/{cid}/contract", headers=ADMIN)).json()["version"] == 0


@pytest.fixture
async def stored_before_the_maximum(services: Services) -> Services:
    """A catalogue stored before the maximum existed, with the cruise's adult ticket at 10^19
    (stored as it is, the way a catalogue older than the rule is)."""
    document = {"supplier": supplier(), "products": _cruise_adult_at(booking_products(), HUGE)}
    return await load(services, Catalog.model_validate(document))


async def test_sums_past_64_bits_are_answered_exactly(
    client: httpx.AsyncClient, stored_before_the_maximum: Services
) -> None:
    booking = await reserve(
        client, reservation(("adult", "adult"), currency="EUR"), **{"Octo-Capabilities": "octo/pricing"}
    )
    assert booking["pricing"]["retail"] == 2 * HUGE
    assert (await confirm(client, booking["uuid"])).status_code == 200
    cid = await connection_id(stored_before_the_maximum, KEY_A)
    statement = await client.get(f"/admin/api/connections/{cid}/statements/2026-06", headers=ADMIN)
    assert statement.status_code == 200, statement.text
    assert [(t["retail"], t["net"], t["commission"]) for t in statement.json()["totals"]] == [
        (2 * HUGE, 2 * (HUGE * 4 // 5), 2 * (HUGE - HUGE * 4 // 5))
    ]
    csv = await client.get(
        f"/admin/api/connections/{cid}/statements/2026-06", headers={**ADMIN, "Accept": "text/csv"}
    )
    assert csv.status_code == 200 and "200000000000000000.00" in csv.text
