"""Departure operations on options whose places are not a schedule's capacity: resource-based
(a capacity override caps the places sold on top of the resources) and rentals (an override
is the items a rental starting at that time may find free over its whole interval)."""

from __future__ import annotations

import uuid
from typing import Any

import httpx

from berth.container import Services
from tests.conftest import auth
from tests.departures_helpers import cancel_departure, changed_departure, patch_departure
from tests.rentals_helpers import BIKES
from tests.resources_helpers import BOOKED_TEN, CRUISE


async def octo_slot(client: httpx.AsyncClient, product: dict[str, str], availability_id: str) -> Any:
    response = await client.post(
        "/octo/availability", json={**product, "availabilityIds": [availability_id]}, headers=auth()
    )
    assert response.status_code == 200, response.text
    return response.json()[0]


def booking(product: dict[str, str], availability_id: str, units: tuple[str, ...]) -> dict[str, Any]:
    return {
        "uuid": str(uuid.uuid4()), **product, "availabilityId": availability_id,
        "unitItems": [{"unitId": u} for u in units],
    }  # fmt: skip


async def test_resource_option(client: httpx.AsyncClient, seated: Services) -> None:
    before = await octo_slot(client, CRUISE, BOOKED_TEN)
    departure = await changed_departure(client, {"note": "look"}, CRUISE, BOOKED_TEN)
    held = departure["placesHeld"]
    assert held > 0 and departure["catalogCapacity"] is None and departure["capacity"] == before["capacity"]
    capped = await changed_departure(client, {"capacity": held + 1}, CRUISE, BOOKED_TEN)
    assert (capped["capacity"], capped["vacancies"], capped["capacityOverride"]) == (held + 1, 1, held + 1)
    assert (await octo_slot(client, CRUISE, BOOKED_TEN))["vacancies"] == 1
    refused = await client.post(
        "/octo/bookings", json=booking(CRUISE, BOOKED_TEN, ("adult", "adult")), headers=auth()
    )
    assert refused.json()["error"] == "UNPROCESSABLE_ENTITY" and "sold out" in refused.json()["errorMessage"]
    taken = await client.post("/octo/bookings", json=booking(CRUISE, BOOKED_TEN, ("adult",)), headers=auth())
    assert taken.status_code == 200, taken.text
    below = await patch_departure(client, {"capacity": held}, CRUISE, BOOKED_TEN)
    assert (
        below.json()["error"] == "UNPROCESSABLE_ENTITY"
        and f"{held + 1} place(s) held" in below.json()["errorMessage"]
    )
    await changed_departure(client, {"capacity": None}, CRUISE, BOOKED_TEN)
    assert (await octo_slot(client, CRUISE, BOOKED_TEN))["vacancies"] == before["vacancies"] - 1
    closed = await changed_departure(client, {"closed": True}, CRUISE, BOOKED_TEN)
    assert closed["status"] == "CLOSED"
    resources = await client.get(
        "/octo/availability/resources",
        params={**CRUISE, "availabilityId": BOOKED_TEN},
        headers=auth(capabilities="octo/resources"),
    )
    assert resources.status_code == 200, resources.text
    assert {group["status"] for group in resources.json()} == {"CLOSED"}
    again = await client.post("/octo/bookings", json=booking(CRUISE, BOOKED_TEN, ("adult",)), headers=auth())
    assert again.json()["error"] == "UNPROCESSABLE_ENTITY" and "closed" in again.json()["errorMessage"]


NINE = "2026-06-02T09:00:00+01:00"
ELEVEN = "2026-06-02T11:00:00+01:00"


async def test_rental_option(client: httpx.AsyncClient, rentable: Services) -> None:
    rented = await client.post("/octo/bookings", json=booking(BIKES, NINE, ("bike",) * 3), headers=auth())
    assert rented.status_code == 200, rented.text
    # A day's rental from 09:00 is out all through a rental starting at 11:00.
    eleven = await changed_departure(client, {"capacity": 5}, BIKES, ELEVEN)
    assert (eleven["capacity"], eleven["vacancies"]) == (5, 2)
    assert (await octo_slot(client, BIKES, ELEVEN))["vacancies"] == 2
    assert (await octo_slot(client, BIKES, NINE))["vacancies"] == 9  # other starts keep the catalogue's
    below = await patch_departure(client, {"capacity": 2}, BIKES, ELEVEN)
    assert (
        below.json()["error"] == "UNPROCESSABLE_ENTITY" and "3 place(s) held" in below.json()["errorMessage"]
    )
    refused = await client.post("/octo/bookings", json=booking(BIKES, ELEVEN, ("bike",) * 3), headers=auth())
    assert refused.json()["error"] == "UNPROCESSABLE_ENTITY"
    await changed_departure(client, {"closed": True}, BIKES, NINE)
    assert (await octo_slot(client, BIKES, NINE))["status"] == "CLOSED"
    closed = await client.post("/octo/bookings", json=booking(BIKES, NINE, ("bike",)), headers=auth())
    assert closed.json()["error"] == "UNPROCESSABLE_ENTITY" and "closed" in closed.json()["errorMessage"]
    fits = await client.post("/octo/bookings", json=booking(BIKES, ELEVEN, ("bike",) * 2), headers=auth())
    assert fits.status_code == 200, fits.text


async def test_cancelling_a_resource_departure_frees_its_seats(
    client: httpx.AsyncClient, seated: Services
) -> None:
    before = await octo_slot(client, CRUISE, BOOKED_TEN)
    response = await cancel_departure(client, "Fog in the harbour", CRUISE, BOOKED_TEN)
    assert response.status_code == 200, response.text
    done = response.json()
    assert len(done["cancelledBookingIds"]) == 3 and done["departure"]["placesHeld"] == 0
    await changed_departure(client, {"closed": False}, CRUISE, BOOKED_TEN)
    after = await octo_slot(client, CRUISE, BOOKED_TEN)
    assert after["vacancies"] == before["capacity"] > before["vacancies"]
