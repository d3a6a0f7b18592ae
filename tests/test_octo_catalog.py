"""GET /supplier, /products, /products/{id}, /capabilities, with and without capabilities, on
the catalogue of `listed` stated here: the booking tests' products with content and
translations, the rental, the package and the two products with resources."""

from __future__ import annotations

import httpx
import pytest

from berth.container import Services
from tests.bookings_helpers import booking_products
from tests.builders import catalog, load, supplier
from tests.conftest import ADMIN, KEY_A, auth
from tests.packages_helpers import city_pass
from tests.rentals_helpers import bike_hire
from tests.resources_helpers import resource_products
from tests.test_contracts import put_contract

CONTACT = {
    "website": "https://harbourside.example",
    "email": "bookings@harbourside.example",
    "telephone": "+442079460000",
    "address": "1 Harbour Walk, London SE1 9PP, United Kingdom",
}
LOGO = {"src": "https://harbourside.example/logo.png", "type": "image/png", "rel": "LOGO", "title": "Logo"}


@pytest.fixture
async def listed(services: Services) -> Services:
    cruise, kayak, museum = booking_products()
    cruise["content"] = {
        "en-GB": {
            "title": "Thames Sightseeing Cruise",
            "shortDescription": "An hour on the Thames.",
            "description": "Board at Harbour Pier.",
            "features": [{"type": "INCLUSION", "shortDescription": "Live commentary"}],
            "faqs": [{"question": "Pushchairs?", "answer": "Yes."}],
            "media": [
                {"src": "https://harbourside.example/cruise.jpg", "type": "image/jpeg", "rel": "COVER"}
            ],
            "locations": [
                {"title": "Harbour Pier", "types": ["START"], "place": {"latitude": 51.5, "longitude": -0.07}}
            ],
            "categoryLabels": ["boat-tours"],
            "commentary": [{"format": "IN_PERSON", "language": "en"}],
        },
        "de-DE": {"title": "Sightseeing-Bootsfahrt auf der Themse", "shortDescription": "Eine Stunde."},
    }
    day, evening = cruise["options"]
    day["content"] = {"en-GB": {"title": "Daytime cruise"}, "de-DE": {"title": "Tagesfahrt"}}
    day["units"][0]["content"] = {"en-GB": {"title": "Adult"}, "de-DE": {"title": "Erwachsene"}}
    evening["durationMinutes"] = 90
    museum["options"][0]["content"] = {"en-GB": {"title": "General admission"}}
    owner = supplier(
        "harbourside",
        "Harbourside Adventures",
        contact=CONTACT,
        content={"en-GB": {"shortDescription": "Boat tours and museum visits.", "media": [LOGO]}},
    )
    return await load(
        services, catalog(cruise, museum, kayak, bike_hire(), city_pass(), *resource_products(), owner=owner)
    )


CONTENT_PRODUCT_KEYS = {
    "title", "shortDescription", "description", "features", "faqs", "media", "locations",
    "categoryLabels", "durationMinutesFrom", "durationMinutesTo", "commentary",
}  # fmt: skip
PRICING_PRODUCT_KEYS = {"defaultCurrency", "availableCurrencies", "pricingPer"}


async def test_supplier_core_fields(client: httpx.AsyncClient, listed: Services) -> None:
    response = await client.get("/octo/supplier", headers=auth())
    assert response.status_code == 200
    body = response.json()
    assert body == {
        "id": "harbourside",
        "name": "Harbourside Adventures",
        "endpoint": "http://berth.test/octo",
        "contact": CONTACT,
    }
    assert response.headers["Octo-Capabilities"] == ""


async def test_supplier_endpoint_follows_each_request(client: httpx.AsyncClient, listed: Services) -> None:
    """The endpoint is the address each request arrived at, whatever another request used."""
    for host in ("berth.test", "tours.example:8443", "berth.test"):
        body = (await client.get("/octo/supplier", headers={**auth(), "Host": host})).json()
        assert body["endpoint"] == f"http://{host}/octo"


async def test_supplier_content(client: httpx.AsyncClient, listed: Services) -> None:
    body = (await client.get("/octo/supplier", headers=auth(capabilities="octo/content"))).json()
    assert body["shortDescription"].startswith("Boat tours")
    assert body["media"][0]["rel"] == "LOGO"


async def test_products_without_capabilities_are_plain_core(
    client: httpx.AsyncClient, listed: Services
) -> None:
    response = await client.get("/octo/products", headers=auth())
    assert response.status_code == 200
    products = response.json()
    assert [p["id"] for p in products] == [
        "thames-sightseeing",
        "tower-of-stories",
        "sunset-kayak",
        "city-bike-hire",
        "harbour-city-pass",
        "harbour-cruise",
        "river-rib",
    ]
    for product in products:
        assert not (CONTENT_PRODUCT_KEYS | PRICING_PRODUCT_KEYS | {"isRental"}) & product.keys()
        for option in product["options"]:
            assert "pricingFrom" not in option and "title" not in option
            assert "rentalDurations" not in option
            for unit in option["units"]:
                assert "pricingFrom" not in unit and "title" not in unit
    tour = products[0]
    assert tour["timeZone"] == "Europe/London"
    assert tour["availabilityType"] == "START_TIME"
    assert tour["options"][0]["availabilityLocalStartTimes"] == ["10:00", "12:00", "14:00", "16:00"]
    assert tour["options"][0]["default"] is True and tour["options"][1]["default"] is False
    assert tour["options"][0]["cancellationCutoff"] == "24 hours"
    child = tour["options"][0]["units"][1]
    assert child["restrictions"]["accompaniedBy"] == ["adult"]
    museum = products[1]
    assert museum["availabilityType"] == "OPENING_HOURS"
    assert museum["options"][0]["availabilityLocalStartTimes"] == []


async def test_products_with_content_and_pricing(client: httpx.AsyncClient, listed: Services) -> None:
    response = await client.get("/octo/products", headers=auth(capabilities="octo/content, octo/pricing"))
    assert response.status_code == 200
    assert response.headers["Octo-Capabilities"] == "octo/content, octo/pricing"
    assert response.headers["Content-Language"] == "en-GB"
    assert response.headers["Available-Languages"] == "en-GB, de-DE"
    assert response.headers["Octo-Available-Languages"] == "en-GB, de-DE"
    tour, museum, kayak, *_others = response.json()
    assert tour.keys() >= CONTENT_PRODUCT_KEYS | PRICING_PRODUCT_KEYS
    assert tour["title"] == "Thames Sightseeing Cruise"
    assert tour["durationMinutesFrom"] == 60 and tour["durationMinutesTo"] == 90
    assert tour["defaultCurrency"] == "EUR" and tour["availableCurrencies"] == ["EUR", "GBP"]
    assert tour["pricingPer"] == "UNIT"
    adult = tour["options"][0]["units"][0]
    assert adult["title"] == "Adult"
    assert adult["pricingFrom"] == [
        {
            "original": 2800, "retail": 2500, "net": 2000, "currency": "EUR", "currencyPrecision": 2,
            "includedTaxes": [{"name": "VAT", "retail": 417, "original": 467, "net": 333}],
        },
        {
            "original": 2200, "retail": 2200, "net": 1760, "currency": "GBP", "currencyPrecision": 2,
            "includedTaxes": [{"name": "VAT", "retail": 367, "original": 367, "net": 293}],
        },
    ]  # fmt: skip
    assert "pricingFrom" not in tour["options"][0]
    assert kayak["pricingPer"] == "BOOKING"
    assert kayak["options"][0]["pricingFrom"][0]["retail"] == 24000
    assert "pricingFrom" not in kayak["options"][0]["units"][0]
    assert museum["options"][0]["title"] == "General admission"


async def test_only_requested_capability_applies(client: httpx.AsyncClient, listed: Services) -> None:
    tour = (
        await client.get("/octo/products/thames-sightseeing", headers=auth(capabilities="octo/pricing"))
    ).json()
    assert tour.keys() >= PRICING_PRODUCT_KEYS
    assert not CONTENT_PRODUCT_KEYS & tour.keys()


async def test_unknown_capabilities_are_ignored(client: httpx.AsyncClient, listed: Services) -> None:
    response = await client.get(
        "/octo/products/thames-sightseeing", headers=auth(capabilities="octo/unknown, ,octo/content")
    )
    assert response.headers["Octo-Capabilities"] == "octo/content"
    assert "title" in response.json()


async def test_accept_language_selects_translation(client: httpx.AsyncClient, listed: Services) -> None:
    headers = auth(capabilities="octo/content", **{"Accept-Language": "fr;q=0.9, de;q=0.8, en;q=0.1"})
    response = await client.get("/octo/products/thames-sightseeing", headers=headers)
    assert response.headers["Content-Language"] == "de-DE"
    body = response.json()
    assert body["title"] == "Sightseeing-Bootsfahrt auf der Themse"
    assert body["options"][0]["units"][0]["title"] == "Erwachsene"
    # A product without that translation falls back to its own locale.
    museum = (await client.get("/octo/products/tower-of-stories", headers=headers)).json()
    assert museum["title"] == "Tower of Stories"


async def test_single_product_and_trailing_slash(client: httpx.AsyncClient, listed: Services) -> None:
    every = (await client.get("/octo/products/", headers=auth())).json()
    one = await client.get("/octo/products/tower-of-stories/", headers=auth())
    assert one.status_code == 200
    assert one.json() == every[1]


async def test_unknown_product(client: httpx.AsyncClient, listed: Services) -> None:
    response = await client.get("/octo/products/no-such-tour", headers=auth())
    assert response.status_code == 400
    assert response.json() == {
        "error": "INVALID_PRODUCT_ID",
        "errorMessage": "The product 'no-such-tour' does not exist",
        "productId": "no-such-tour",
    }


async def test_capabilities_route(client: httpx.AsyncClient, listed: Services) -> None:
    response = await client.get("/octo/capabilities", headers=auth())
    assert response.status_code == 200
    ids = [c["id"] for c in response.json()]
    assert ids == [
        "octo/content",
        "octo/pricing",
        "octo/cart",
        "vendor/mappings",
        "octo/rentals",
        "octo/packages",
        "octo/resources",
        "octo/webhooks",
        "octo/pickups",
        "octo/questions",
        "octo/extras",
        "octo/offers",
        "octo/gifts",
    ]
    assert set(response.json()[0]) == {"id", "revision", "required", "dependencies", "docs"}


async def test_empty_berth_serves_a_default_supplier(client: httpx.AsyncClient, services: Services) -> None:
    await services.connections.ensure("Only", "only-key")
    assert (await client.get("/octo/products", headers=auth("only-key"))).json() == []
    assert (await client.get("/octo/supplier", headers=auth("only-key"))).json()["id"] == "berth"


async def test_prepared_answers_follow_a_catalogue_save_and_a_contract_at_once(
    client: httpx.AsyncClient, listed: Services
) -> None:
    """/supplier, /products and /products/{id} are made once per catalogue snapshot, contract
    and view, then sent as they are (issue 41): a save or a new contract is answered at once,
    and each view keeps its own answer."""
    pricing = auth(capabilities="octo/pricing")
    german = auth(capabilities="octo/content", **{"Accept-Language": "de"})

    async def answers() -> list[httpx.Response]:
        return [
            await client.get("/octo/supplier", headers=auth()),
            await client.get("/octo/products", headers=pricing),
            await client.get("/octo/products/thames-sightseeing", headers=german),
        ]

    first = await answers()
    again = await answers()
    assert [(a.content, a.headers["Octo-Capabilities"]) for a in again] == [
        (a.content, a.headers["Octo-Capabilities"]) for a in first
    ]
    assert again[2].headers["Content-Language"] == "de-DE"
    assert again[2].json()["title"] == "Sightseeing-Bootsfahrt auf der Themse"
    assert "title" not in again[1].json()[0]
    assert "title" in (await client.get("/octo/products", headers=german)).json()[0]  # each view its own
    net = first[1].json()[0]["options"][0]["units"][0]["pricingFrom"][0]["net"]

    exported = (await client.get("/admin/api/catalog", headers=ADMIN)).text
    renamed = exported.replace("Harbourside Adventures", "Harbourside Tours", 1).replace(
        "Sightseeing-Bootsfahrt auf der Themse", "Themsefahrt", 1
    )
    saved = await client.put("/admin/api/catalog", content=renamed.encode(), headers=ADMIN)
    assert saved.status_code == 200, saved.text
    supplier, products, cruise = await answers()
    assert supplier.json()["name"] == "Harbourside Tours"
    assert cruise.json()["title"] == "Themsefahrt"
    assert products.content == first[1].content  # what the save did not change reads the same

    half = await put_contract(client, listed, KEY_A, {"rate": {"commission": 50}})
    assert half.status_code == 200, half.text
    supplier, products, cruise = await answers()
    retail = products.json()[0]["options"][0]["units"][0]["pricingFrom"][0]["retail"]
    assert products.json()[0]["options"][0]["units"][0]["pricingFrom"][0]["net"] == retail // 2 != net
    assert cruise.json()["title"] == "Themsefahrt"
    assert supplier.json()["name"] == "Harbourside Tours"
