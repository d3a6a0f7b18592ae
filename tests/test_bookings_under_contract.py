"""A booking is its own, whatever its connection's contract says later (issue 47): once its
option or product has left the contract, or the contract has ended, it keeps its departure,
option, price lines and tickets through reads, notes-only changes, confirmation and
cancellation; a change that would be a new sale (another departure or option, more places, a
unit item it did not have) is refused as a new sale would be. Clock: 2026-06-01T08:00Z (a
Monday); the cruise's evening option runs Thursday to Saturday at 19:30."""

from __future__ import annotations

from typing import Any

import httpx

from berth.container import Services
from tests.bookings_helpers import GUEST, SLOT, TOUR, reservation
from tests.conftest import ADMIN, KEY_B, auth
from tests.departures_helpers import departure_path
from tests.test_contracts import put_contract

PRICING = "octo/pricing"
EVENING = {"productId": "thames-sightseeing", "optionId": "evening"}
THURSDAY_EVENING = "2026-06-04T19:30:00+01:00"
FRIDAY_EVENING = "2026-06-05T19:30:00+01:00"
NEXT_MORNING = "2026-06-03T10:00:00+01:00"
EVERYTHING = {"products": "ALL", "rate": {"commission": 15}}
DAYTIME_ONLY = {
    "products": [{"product": "thames-sightseeing", "options": ["DEFAULT"]}],
    "rate": {"commission": 15},
}
ONLY_THE_MUSEUM = {"products": [{"product": "tower-of-stories"}], "rate": {"commission": 15}}
ENDED = {"products": "ALL", "rate": {"commission": 15}, "validUntil": "2026-05-31"}


async def _contract(client: httpx.AsyncClient, services: Services, document: dict[str, Any]) -> None:
    saved = await put_contract(client, services, KEY_B, document)
    assert saved.status_code == 200, saved.text


async def _reserve(client: httpx.AsyncClient, body: dict[str, Any]) -> dict[str, Any]:
    held = await client.post("/octo/bookings", json=body, headers=auth(KEY_B, PRICING))
    assert held.status_code == 200, held.text
    found: dict[str, Any] = held.json()
    return found


async def _confirmed(client: httpx.AsyncClient, body: dict[str, Any]) -> dict[str, Any]:
    uuid = (await _reserve(client, body))["uuid"]
    confirmed = await client.post(
        f"/octo/bookings/{uuid}/confirm", json={"contact": GUEST}, headers=auth(KEY_B, PRICING)
    )
    assert confirmed.status_code == 200, confirmed.text
    found: dict[str, Any] = confirmed.json()
    return found


async def _get(client: httpx.AsyncClient, uuid: str) -> dict[str, Any]:
    response = await client.get(f"/octo/bookings/{uuid}", headers=auth(KEY_B, PRICING))
    assert response.status_code == 200, response.text
    found: dict[str, Any] = response.json()
    return found


async def _patch(client: httpx.AsyncClient, uuid: str, body: dict[str, Any]) -> httpx.Response:
    return await client.patch(f"/octo/bookings/{uuid}", json=body, headers=auth(KEY_B, PRICING))


def _placed(booking: dict[str, Any]) -> tuple[Any, ...]:
    """Where a booking is and what it was sold: its option, departure, unit items (with their
    references and tickets) and prices."""
    items = [
        (i["uuid"], i["unitId"], i["supplierReference"], i["ticket"], i["pricing"])
        for i in booking["unitItems"]
    ]
    return booking["optionId"], booking["availabilityId"], items, booking["pricing"]


async def _held(client: httpx.AsyncClient, product: dict[str, str], availability_id: str) -> int:
    departure = await client.get(departure_path(product, availability_id), headers=ADMIN)
    assert departure.status_code == 200, departure.text
    held: int = departure.json()["placesHeld"]
    return held


async def _on_manifest(client: httpx.AsyncClient, product: dict[str, str], availability_id: str) -> str:
    manifest = await client.get(departure_path(product, availability_id, "/manifest.csv"), headers=ADMIN)
    assert manifest.status_code == 200, manifest.text
    return manifest.text


async def test_a_booking_whose_option_left_the_contract_keeps_its_departure(
    client: httpx.AsyncClient, bookable: Services
) -> None:
    await _contract(client, bookable, EVERYTHING)
    sold = await _confirmed(client, reservation(("adult",), THURSDAY_EVENING, **EVENING, currency="EUR"))
    hold = await _reserve(client, reservation(("adult",), THURSDAY_EVENING, **EVENING, currency="EUR"))
    assert await _held(client, EVENING, THURSDAY_EVENING) == 2
    await _contract(client, bookable, DAYTIME_ONLY)

    assert _placed(await _get(client, sold["uuid"])) == _placed(sold)
    noted = await _patch(client, sold["uuid"], {"notes": "a window table"})
    assert noted.status_code == 200, noted.text
    assert noted.json()["notes"] == "a window table"
    assert _placed(noted.json()) == _placed(sold)
    assert await _held(client, EVENING, THURSDAY_EVENING) == 2
    assert sold["supplierReference"] in await _on_manifest(client, EVENING, THURSDAY_EVENING)
    # Sending the booking's own product, option and departure again moves nothing.
    echoed = await _patch(
        client,
        sold["uuid"],
        {**EVENING, "availabilityId": THURSDAY_EVENING, "contact": {"phoneNumber": "+441632960000"}},
    )
    assert echoed.status_code == 200, echoed.text
    assert _placed(echoed.json()) == _placed(sold)
    # The hold on that option is confirmed where it is, at the price it was held at.
    confirmed = await client.post(
        f"/octo/bookings/{hold['uuid']}/confirm", json={"contact": GUEST}, headers=auth(KEY_B, PRICING)
    )
    assert confirmed.status_code == 200, confirmed.text
    assert confirmed.json()["status"] == "CONFIRMED"
    assert _placed(confirmed.json())[:2] == _placed(hold)[:2]
    assert confirmed.json()["pricing"] == hold["pricing"]
    assert await _held(client, EVENING, THURSDAY_EVENING) == 2
    cancelled = await client.post(f"/octo/bookings/{sold['uuid']}/cancel", json={}, headers=auth(KEY_B))
    assert cancelled.status_code == 200 and cancelled.json()["status"] == "CANCELLED", cancelled.text
    assert cancelled.json()["optionId"] == "evening"
    assert await _held(client, EVENING, THURSDAY_EVENING) == 1


async def _refused(
    client: httpx.AsyncClient, uuid: str, body: dict[str, Any], error: str, says: str = ""
) -> None:
    before = await _get(client, uuid)
    refused = await _patch(client, uuid, body)
    assert refused.status_code == 400, (body, refused.text)
    assert refused.json()["error"] == error, (body, refused.text)
    assert says in refused.json()["errorMessage"], refused.text
    assert await _get(client, uuid) == before


async def test_a_product_out_of_the_contract_gets_nothing_a_new_sale_would_not(
    client: httpx.AsyncClient, bookable: Services
) -> None:
    await _contract(client, bookable, EVERYTHING)
    sold = await _confirmed(client, reservation(("adult", "adult"), currency="EUR"))
    first, _ = sold["unitItems"]
    assert [i["pricing"]["net"] for i in sold["unitItems"]] == [2125, 2125]
    await _contract(client, bookable, ONLY_THE_MUSEUM)

    six_evening_adults = [{"unitId": "adult"}] * 6
    for body in (
        {"availabilityId": NEXT_MORNING},
        {"optionId": "evening", "availabilityId": THURSDAY_EVENING, "unitItems": six_evening_adults},
        {"unitItems": [{"unitId": "adult"}] * 3},
        {"unitItems": [{"uuid": first["uuid"], "unitId": "adult"}, {"unitId": "child"}]},
    ):
        await _refused(client, sold["uuid"], body, "INVALID_PRODUCT_ID", "'thames-sightseeing'")
    assert await _held(client, TOUR, SLOT) == 2
    # Fewer places and notes are no sale: the place kept keeps its line.
    fewer = await _patch(client, sold["uuid"], {"unitItems": [{"uuid": first["uuid"], "unitId": "adult"}]})
    assert fewer.status_code == 200, fewer.text
    assert _placed(fewer.json()) == (
        "DEFAULT", SLOT, [_placed(sold)[2][0]], {**fewer.json()["pricing"], "retail": 2500, "net": 2125}
    )  # fmt: skip
    assert await _held(client, TOUR, SLOT) == 1

    await _contract(client, bookable, ENDED)
    await _refused(
        client,
        sold["uuid"],
        {"unitItems": [{"unitId": "adult"}] * 2},
        "INVALID_PRODUCT_ID",
        "contract ended on 2026-05-31",
    )
    noted = await _patch(client, sold["uuid"], {"notes": "late arrival"})
    assert noted.status_code == 200, noted.text
    assert _placed(noted.json()) == _placed(fewer.json())


async def test_an_option_out_of_the_contract_gets_nothing_a_new_sale_would_not(
    client: httpx.AsyncClient, bookable: Services
) -> None:
    await _contract(client, bookable, EVERYTHING)
    sold = await _confirmed(client, reservation(("adult",), THURSDAY_EVENING, **EVENING, currency="EUR"))
    hold = await _reserve(client, reservation(("adult",), THURSDAY_EVENING, **EVENING, currency="EUR"))
    await _contract(client, bookable, DAYTIME_ONLY)

    for body in (
        {"availabilityId": FRIDAY_EVENING},
        {"unitItems": [{"unitId": "adult"}] * 2},
        {"optionId": "evening", "availabilityId": FRIDAY_EVENING},
    ):
        await _refused(client, sold["uuid"], body, "INVALID_OPTION_ID", "'evening'")
    more = await client.post(
        f"/octo/bookings/{hold['uuid']}/confirm",
        json={"contact": GUEST, "unitItems": [{"unitId": "adult"}] * 2},
        headers=auth(KEY_B, PRICING),
    )
    assert more.status_code == 400 and more.json()["error"] == "INVALID_OPTION_ID", more.text
    assert (await _get(client, hold["uuid"]))["status"] == "ON_HOLD"
    assert await _held(client, EVENING, THURSDAY_EVENING) == 2
    # A move to what the contract sells is a new sale there, at the contract's rate.
    moved = await _patch(client, sold["uuid"], {**TOUR, "availabilityId": SLOT})
    assert moved.status_code == 200, moved.text
    assert (moved.json()["optionId"], moved.json()["availabilityId"]) == ("DEFAULT", SLOT)
    assert (moved.json()["pricing"]["retail"], moved.json()["pricing"]["net"]) == (2500, 2125)
    assert await _held(client, EVENING, THURSDAY_EVENING) == 1


async def test_more_places_on_a_stopped_departure_are_a_new_sale(
    client: httpx.AsyncClient, bookable: Services
) -> None:
    sold = await _confirmed(client, reservation(("adult", "adult")))
    hold = await _reserve(client, reservation(("adult",)))
    stop = {"stopSells": [{"product": "thames-sightseeing", "from": "2026-06-02", "until": "2026-06-02"}]}
    await _contract(client, bookable, stop)
    first, _ = sold["unitItems"]
    await _refused(
        client,
        sold["uuid"],
        {"unitItems": [{"unitId": "adult"}] * 3},
        "INVALID_AVAILABILITY_ID",
        "not on sale",
    )
    more = await client.post(
        f"/octo/bookings/{hold['uuid']}/confirm",
        json={"contact": GUEST, "unitItems": [{"unitId": "adult"}] * 2},
        headers=auth(KEY_B),
    )
    assert more.status_code == 400 and more.json()["error"] == "INVALID_AVAILABILITY_ID", more.text
    fewer = await _patch(client, sold["uuid"], {"unitItems": [{"uuid": first["uuid"], "unitId": "adult"}]})
    assert fewer.status_code == 200, fewer.text
    assert (await client.post(f"/octo/bookings/{hold['uuid']}/confirm", json={"contact": GUEST}, headers=auth(KEY_B))).status_code == 200  # fmt: skip
    assert await _held(client, TOUR, SLOT) == 2
