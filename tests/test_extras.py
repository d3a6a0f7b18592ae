"""octo/extras through the OCTO routes, on the extras tests' lunch cruise
(`tests.extras_helpers`). Clock: 2026-06-01T08:00Z."""

from __future__ import annotations

import uuid
from typing import Any

import httpx
import pytest

from berth.container import Services
from tests.bookings_helpers import GUEST, reservation
from tests.builders import load
from tests.conftest import Clock, auth
from tests.extras_helpers import CRUISE, DECK, LUNCH_STOCK, NEXT_NOON, NOON, extras_catalog
from tests.receivers import receiver
from tests.test_bookings import count_bookings
from tests.test_webhooks import drain, subscribe

EXTRAS = "octo/extras"
PRICED = "octo/extras, octo/pricing"
LUNCH = {"extraId": "lunch"}
PHOTOS = {"extraId": "photos"}
CHAMPAGNE = {"extraId": "champagne"}


@pytest.fixture
async def cruise(services: Services) -> Services:
    return await load(services, extras_catalog())


def sailing(
    *items: dict[str, Any], product: dict[str, str] = CRUISE, availability_id: str = NOON, **extra: Any
) -> dict[str, Any]:
    return {
        "uuid": str(uuid.uuid4()),
        **product,
        "availabilityId": availability_id,
        "unitItems": [{"unitId": "guest", **item} for item in items] or [{"unitId": "guest"}],
        **extra,
    }


def with_lunch(guests: int) -> list[dict[str, Any]]:
    return [{"extraItems": [LUNCH]} for _ in range(guests)]


async def send(
    client: httpx.AsyncClient, method: str, path: str, body: Any, capabilities: str | None = EXTRAS
) -> httpx.Response:
    return await client.request(method, path, json=body, headers=auth(capabilities=capabilities))


async def reserved(client: httpx.AsyncClient, body: dict[str, Any], capabilities: str | None = EXTRAS) -> Any:
    response = await send(client, "POST", "/octo/bookings", body, capabilities)
    assert response.status_code == 200, response.text
    return response.json()


async def refused(response: httpx.Response, message: str, code: str = "BAD_REQUEST") -> dict[str, Any]:
    assert response.status_code == 400, response.text
    body: dict[str, Any] = response.json()
    assert (body["error"], body["errorMessage"]) == (code, message)
    return body


def extra_ids(items: list[dict[str, Any]]) -> list[str]:
    return [i["extraId"] for i in items]


# --- fields ------------------------------------------------------------------------------------


async def test_fields_absent_without_the_capability(client: httpx.AsyncClient, cruise: Services) -> None:
    product = (
        await client.get("/octo/products/lunch-cruise", headers=auth(capabilities="octo/pricing"))
    ).json()
    option = product["options"][0]
    assert "extras" not in option and "extras" not in option["units"][0]
    booking = await reserved(client, sailing(*with_lunch(1), extraItems=[PHOTOS]), "octo/pricing")
    assert "extraItems" not in booking and "extraPricing" not in booking
    assert "extraItems" not in booking["unitItems"][0]
    assert booking["pricing"]["retail"] == 3000  # nothing was read: no extras are charged


async def test_extras_on_options_and_units(client: httpx.AsyncClient, cruise: Services) -> None:
    response = await client.get("/octo/products/lunch-cruise", headers=auth(capabilities=EXTRAS))
    assert response.headers["Octo-Capabilities"] == EXTRAS
    product = response.json()
    assert "extras" not in product
    default, deck = product["options"]
    assert [e["id"] for e in default["extras"]] == ["photos", "champagne"]  # per booking
    assert [e["id"] for e in default["units"][0]["extras"]] == ["lunch"]  # per unit item
    assert default["units"][0]["extras"][0] == {
        "id": "lunch", "internalName": "Lunch", "title": "Two-course lunch", "shortDescription": None,
        "description": None, "reference": None,
        "restrictions": {"default": True, "required": False, "minQuantity": 0, "maxQuantity": 1},
    }  # fmt: skip
    assert deck["extras"][0]["restrictions"] == {
        "default": False,
        "required": True,
        "minQuantity": 1,
        "maxQuantity": 2,
    }
    plain = (await client.get("/octo/products/thames-sightseeing", headers=auth(capabilities=EXTRAS))).json()
    assert plain["options"][0]["extras"] == []

    priced = (await client.get("/octo/products/lunch-cruise", headers=auth(capabilities=PRICED))).json()
    lunch = priced["options"][0]["units"][0]["extras"][0]
    assert [(p["currency"], p["retail"], p["includedTaxes"][0]["retail"]) for p in lunch["pricingFrom"]] == [
        ("GBP", 1500, 250), ("EUR", 1700, 283),
    ]  # fmt: skip


# --- booking extras ------------------------------------------------------------------------------


async def test_extras_are_echoed_and_priced(client: httpx.AsyncClient, cruise: Services) -> None:
    body = sailing(*with_lunch(2), {}, extraItems=[PHOTOS, CHAMPAGNE, CHAMPAGNE])
    booking = await reserved(client, body, PRICED)
    assert extra_ids(booking["extraItems"]) == ["photos", "champagne", "champagne"]
    assert len({i["id"] for i in booking["extraItems"]}) == 3
    assert [extra_ids(item["extraItems"]) for item in booking["unitItems"]] == [["lunch"], ["lunch"], []]
    photos = booking["extraItems"][0]
    assert (photos["extra"]["title"], photos["pricing"]["retail"], photos["pricing"]["currency"]) == (
        "Photo package", 2000, "GBP",
    )  # fmt: skip
    # 3 guests at 30.00, 2 lunches at 15.00, photos 20.00, 2 bottles at 45.00
    assert booking["pricing"]["retail"] == 9000 + 3000 + 2000 + 9000
    assert booking["pricing"]["includedTaxes"] == [
        {"name": "VAT", "retail": 1500 + 500 + 1500, "original": 1500 + 500 + 1500, "net": 1200 + 400 + 1200}
    ]
    assert {p["extraId"]: p["retail"] for p in booking["extraPricing"]} == {
        "photos": 2000, "champagne": 9000, "lunch": 3000,
    }  # fmt: skip
    in_euros = await reserved(client, sailing(*with_lunch(1), currency="EUR"), PRICED)
    assert in_euros["unitItems"][0]["extraItems"][0]["pricing"]["retail"] == 1700
    assert in_euros["pricing"]["retail"] == 3500 + 1700
    # Without octo/pricing the pieces still show what they cost (ExtraItem.pricing is required).
    plain = await reserved(client, sailing(extraItems=[PHOTOS]))
    assert plain["extraItems"][0]["pricing"]["retail"] == 2000 and "extraPricing" not in plain
    assert "pricingFrom" not in plain["extraItems"][0]["extra"]


async def test_bad_extras_are_refused_and_nothing_is_written(
    client: httpx.AsyncClient, cruise: Services
) -> None:
    before = await count_bookings(cruise)
    post = "POST", "/octo/bookings"
    error = await refused(
        await send(client, *post, sailing(extraItems=[{"extraId": "caviar"}])),
        "extraItems[0]: 'caviar' is not an extra of option 'DEFAULT'",
    )
    assert error["extraId"] == "caviar"
    await refused(
        await send(client, *post, sailing(extraItems=[LUNCH])),
        "extraItems[0]: extra 'lunch' is booked per unit item, in unitItems[].extraItems",
    )
    await refused(
        await send(client, *post, sailing({"extraItems": [PHOTOS]})),
        "unitItems[0].extraItems[0]: extra 'photos' is booked per booking, in extraItems",
    )
    await refused(
        await send(client, *post, sailing(extraItems=[PHOTOS, PHOTOS])),
        "extraItems: at most 1 of extra 'photos' per booking; 2 given",
    )
    await refused(
        await send(client, *post, sailing({"extraItems": [LUNCH, LUNCH]})),
        "unitItems[0].extraItems: at most 1 of extra 'lunch' per unit item; 2 given",
    )
    await refused(
        await send(client, *post, reservation(extraItems=[PHOTOS])),
        "extraItems[0]: 'photos' is not an extra of option 'DEFAULT'",
    )
    assert await count_bookings(cruise) == before


async def test_a_departures_stock_is_not_oversold(
    client: httpx.AsyncClient, cruise: Services, clock: Clock
) -> None:
    first = await reserved(client, sailing(*with_lunch(3)))
    refusal = await refused(
        await send(client, "POST", "/octo/bookings", sailing(*with_lunch(3))),
        f"Extra 'lunch' is sold out on availability {NOON}: 2 left, 3 requested",
        "UNPROCESSABLE_ENTITY",
    )
    assert refusal["extraId"] == "lunch"
    second = await reserved(client, sailing(*with_lunch(2)))
    assert len(second["unitItems"]) == 2
    # Another departure has its own stock.
    assert (await reserved(client, sailing(*with_lunch(3), availability_id=NEXT_NOON)))["status"] == "ON_HOLD"
    # A cancelled booking gives its extras back, as its places.
    await client.post(f"/octo/bookings/{first['uuid']}/cancel", headers=auth())
    assert (await reserved(client, sailing(*with_lunch(3))))["status"] == "ON_HOLD"
    # So does a hold that runs out.
    clock.advance(minutes=31)
    assert (await reserved(client, sailing(*with_lunch(LUNCH_STOCK))))["status"] == "ON_HOLD"


async def test_patch_and_confirm_change_extras(client: httpx.AsyncClient, cruise: Services) -> None:
    booking = await reserved(client, sailing(*with_lunch(2), extraItems=[CHAMPAGNE]))
    path = f"/octo/bookings/{booking['uuid']}"
    bottle = booking["extraItems"][0]["id"]
    more = await send(client, "PATCH", path, {"extraItems": [CHAMPAGNE, CHAMPAGNE, PHOTOS]})
    assert more.status_code == 200, more.text
    items = more.json()["extraItems"]
    assert extra_ids(items) == ["champagne", "champagne", "photos"] and items[0]["id"] == bottle
    # The departure has 2 bottles: another booking gets none.
    other = await send(client, "POST", "/octo/bookings", sailing(extraItems=[CHAMPAGNE]))
    await refused(
        other,
        f"Extra 'champagne' is sold out on availability {NOON}: 0 left, 1 requested",
        "UNPROCESSABLE_ENTITY",
    )
    # Unit items keep their extras by uuid; left out, the booking keeps its own extras.
    first = booking["unitItems"][0]["uuid"]
    kept = (await send(client, "PATCH", path, {"unitItems": [{"unitId": "guest", "uuid": first}]})).json()
    assert [extra_ids(i["extraItems"]) for i in kept["unitItems"]] == [["lunch"]]
    assert extra_ids(kept["extraItems"]) == ["champagne", "champagne", "photos"]
    # Moving to another departure takes its stock there.
    moved = await send(client, "PATCH", path, {"availabilityId": NEXT_NOON})
    assert moved.status_code == 200, moved.text
    assert (await reserved(client, sailing(extraItems=[CHAMPAGNE, CHAMPAGNE])))["status"] == "ON_HOLD"
    # Cleared at confirm.
    done = await send(client, "POST", f"{path}/confirm", {"contact": GUEST, "extraItems": []})
    assert done.status_code == 200, done.text
    assert (done.json()["status"], done.json()["extraItems"]) == ("CONFIRMED", [])


async def test_a_required_extra_is_needed_to_confirm(client: httpx.AsyncClient, cruise: Services) -> None:
    booking = await reserved(client, sailing(product=DECK))
    path = f"/octo/bookings/{booking['uuid']}/confirm"
    await refused(
        await send(client, "POST", path, {"contact": GUEST}),
        "extraItems: at least 1 of extra 'blanket' per booking; 0 given. Request octo/extras and send its extraItems",
        "UNPROCESSABLE_ENTITY",
    )
    done = await send(client, "POST", path, {"contact": GUEST, "extraItems": [{"extraId": "blanket"}]})
    assert done.status_code == 200, done.text
    # A confirmed booking keeps it.
    await refused(
        await send(client, "PATCH", f"/octo/bookings/{booking['uuid']}", {"extraItems": []}),
        "extraItems: at least 1 of extra 'blanket' per booking; 0 given. Request octo/extras and send its extraItems",
        "UNPROCESSABLE_ENTITY",
    )


async def test_same_uuid_with_other_extras_is_another_request(
    client: httpx.AsyncClient, cruise: Services
) -> None:
    body = sailing(extraItems=[PHOTOS])
    first = await reserved(client, body)
    assert (await reserved(client, body))["id"] == first["id"]
    clash = await send(client, "POST", "/octo/bookings", {**body, "extraItems": [CHAMPAGNE]})
    assert clash.status_code == 400 and clash.json()["error"] == "INVALID_BOOKING_UUID"


async def test_cart_orders_add_up_their_extras(client: httpx.AsyncClient, cruise: Services) -> None:
    body = {"bookings": [sailing(*with_lunch(1), extraItems=[PHOTOS])], "contact": GUEST}
    order = await send(client, "POST", "/octo/orders", body, "octo/cart, octo/extras, octo/pricing")
    assert order.status_code == 200, order.text
    assert order.json()["pricing"]["retail"] == 3000 + 1500 + 2000


async def test_webhook_payloads_carry_the_extras(client: httpx.AsyncClient, cruise: Services) -> None:
    async with receiver() as target:
        await subscribe(client, target.url, capabilities=EXTRAS)
        booking = await reserved(client, sailing(*with_lunch(1), extraItems=[PHOTOS]))
        confirmed = await send(
            client, "POST", f"/octo/bookings/{booking['uuid']}/confirm", {"contact": GUEST}
        )
        assert confirmed.status_code == 200
        await drain(cruise)
        payload = [p for p in target.payloads() if p["booking"]["uuid"] == booking["uuid"]][-1]["booking"]
        assert extra_ids(payload["extraItems"]) == ["photos"]
        assert extra_ids(payload["unitItems"][0]["extraItems"]) == ["lunch"]
