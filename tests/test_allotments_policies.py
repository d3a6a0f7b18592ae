"""Blocks on each capacity policy (issue 47, finding 1), over HTTP. On a departure whose places
come from resources (octo/resources) a block holds places of the resources' sum, as the
availability view counts them: the other resellers see and book only what is left, the holder
keeps its block, and seats and boats are then allocated as before. Rental options cannot have
blocks (the contract is refused; a block left on an option that became a rental is ignored);
on a freesale departure blocks do not apply. Clock: 2026-06-01T08:00Z."""

from __future__ import annotations

import uuid
from typing import Any

import httpx
import pytest

from berth.container import Services
from tests.builders import catalog, load, option, price, product, resource, resource_group, schedule, unit
from tests.conftest import ADMIN, KEY_A, KEY_B, auth
from tests.rentals_helpers import BIKES, rentals_catalog
from tests.resources_helpers import RIB, resources_catalog
from tests.statement_counts import counting
from tests.test_contracts import put_contract

RIB_ELEVEN = "2026-06-03T11:00:00+01:00"  # a Wednesday: RIB Falcon (6) and RIB Osprey (8)
RIB_BLOCK = {
    "allotments": [{"product": "river-rib", "startTimes": ["11:00"], "places": 10, "releaseHours": 0}]
}


def riders(count: int, availability_id: str = RIB_ELEVEN, product: dict[str, str] = RIB) -> dict[str, Any]:
    return {
        "uuid": str(uuid.uuid4()),
        **product,
        "availabilityId": availability_id,
        "unitItems": [{"unitId": "rider"}] * count,
    }


async def seen(
    client: httpx.AsyncClient, key: str, product: dict[str, str] = RIB, availability_id: str = RIB_ELEVEN
) -> dict[str, Any]:
    response = await client.post(
        "/octo/availability", json={**product, "availabilityIds": [availability_id]}, headers=auth(key)
    )
    assert response.status_code == 200, response.text
    found: dict[str, Any] = response.json()[0]
    return found


async def blocks(
    client: httpx.AsyncClient, product: dict[str, str], availability_id: str
) -> list[dict[str, Any]]:
    path = f"/admin/api/departures/{product['productId']}/{product['optionId']}/{availability_id}/blocks"
    response = await client.get(path, headers=ADMIN)
    assert response.status_code == 200, response.text
    found: list[dict[str, Any]] = response.json()
    return found


async def test_a_block_holds_places_of_a_departure_whose_places_come_from_resources(
    client: httpx.AsyncClient, services: Services
) -> None:
    await load(services, resources_catalog())
    assert (await put_contract(client, services, KEY_B, RIB_BLOCK)).status_code == 200
    a, b = await seen(client, KEY_A), await seen(client, KEY_B)
    assert (a["vacancies"], a["capacity"], b["vacancies"], b["capacity"]) == (4, 4, 14, 14)
    # Fourteen one-rider reservations from A: the four places outside the block only.
    answers = [await client.post("/octo/bookings", json=riders(1), headers=auth(KEY_A)) for _ in range(14)]
    assert [r.status_code for r in answers].count(200) == 4, "A took places of B's block"
    refused = answers[-1].json()
    assert refused["error"] == "UNPROCESSABLE_ENTITY"
    assert refused["errorMessage"] == f"Availability {RIB_ELEVEN} is sold out: 0 place(s) left, 1 requested"
    assert (await seen(client, KEY_A))["status"] == "SOLD_OUT"
    assert (await seen(client, KEY_B))["vacancies"] == 10
    ((block,),) = [await blocks(client, RIB, RIB_ELEVEN)]
    assert (block["used"], block["unused"]) == (0, 10)
    # B's block is all B's: a party of 8 rides Osprey (A's four riders sit in Falcon), then two.
    eight = await client.post(
        "/octo/bookings", json=riders(8), headers=auth(KEY_B, capabilities="octo/resources")
    )
    assert eight.status_code == 200, eight.text
    assert [a["resourceId"] for a in eight.json()["resourceAllocations"]] == ["osprey"]
    assert (await client.post("/octo/bookings", json=riders(2), headers=auth(KEY_B))).status_code == 200
    assert (await client.post("/octo/bookings", json=riders(1), headers=auth(KEY_B))).status_code == 400
    ((block,),) = [await blocks(client, RIB, RIB_ELEVEN)]
    assert (block["used"], block["unused"]) == (10, 0)
    assert [
        (s["status"], s["vacancies"]) for s in (await seen(client, KEY_A), await seen(client, KEY_B))
    ] == [
        ("SOLD_OUT", 0),
        ("SOLD_OUT", 0),
    ]


async def test_on_resources_a_confirmation_that_adds_riders_counts_the_others_blocks(
    client: httpx.AsyncClient, services: Services
) -> None:
    await load(services, resources_catalog())
    assert (await put_contract(client, services, KEY_B, RIB_BLOCK)).status_code == 200
    held = await client.post("/octo/bookings", json=riders(3), headers=auth(KEY_A))
    assert held.status_code == 200, held.text
    contact = {"firstName": "Ada", "lastName": "Lovelace", "emailAddress": "ada@example.com"}
    more = {"contact": contact, "unitItems": [{"unitId": "rider"}] * 5}
    refused = await client.post(
        f"/octo/bookings/{held.json()['uuid']}/confirm", json=more, headers=auth(KEY_A)
    )
    assert refused.status_code == 400, "A's confirmation took places of B's block"
    assert (
        refused.json()["errorMessage"]
        == f"Availability {RIB_ELEVEN} is sold out: 4 place(s) left, 5 requested"
    )
    four = {"contact": contact, "unitItems": [{"unitId": "rider"}] * 4}
    done = await client.post(f"/octo/bookings/{held.json()['uuid']}/confirm", json=four, headers=auth(KEY_A))
    assert done.status_code == 200, done.text


async def test_on_resources_a_move_onto_the_departure_counts_the_others_blocks(
    client: httpx.AsyncClient, services: Services
) -> None:
    await load(services, resources_catalog())
    assert (await put_contract(client, services, KEY_B, RIB_BLOCK)).status_code == 200
    three_pm = "2026-06-03T15:00:00+01:00"
    five = await client.post("/octo/bookings", json=riders(5, three_pm), headers=auth(KEY_A))
    assert five.status_code == 200, five.text
    path = f"/octo/bookings/{five.json()['uuid']}"
    moved = await client.patch(path, json={"availabilityId": RIB_ELEVEN}, headers=auth(KEY_A))
    assert moved.status_code == 400, "A's move took places of B's block"
    assert (
        moved.json()["errorMessage"] == f"Availability {RIB_ELEVEN} is sold out: 4 place(s) left, 5 requested"
    )
    four = {"availabilityId": RIB_ELEVEN, "unitItems": [{"unitId": "rider"}] * 4}
    assert (await client.patch(path, json=four, headers=auth(KEY_A))).status_code == 200
    assert (await seen(client, KEY_A))["vacancies"] == 0


def launch_tour(capacity: int) -> dict[str, Any]:
    """Launches of 12 and 8 places at 11:00, and a schedule capacity."""
    return product(
        LAUNCH_TOUR["productId"],
        options=[
            option(
                units=[unit("rider", "ADULT", prices=[price(1000)])],
                schedules=[schedule(("11:00",), capacity=capacity)],
                resourceGroups=[
                    resource_group("launches", [resource("swift", "Swift", capacity=12), resource("tern", "Tern", capacity=8)]),
                ],
            )
        ],
    )  # fmt: skip


LAUNCH_TOUR = {"productId": "launch-tour", "optionId": "DEFAULT"}
LAUNCH_BLOCK = {"allotments": [{"product": "launch-tour", "places": 4, "releaseHours": 0}]}
ELEVEN = "2026-06-03T11:00:00+01:00"


async def test_on_resources_with_a_schedule_capacity_the_launches_are_c_when_tighter(
    client: httpx.AsyncClient, services: Services
) -> None:
    """The schedule's 30 places, the launches' 20: C is 20, and B's block of 4 leaves A 16."""
    await load(services, catalog(launch_tour(30)))
    assert (await put_contract(client, services, KEY_B, LAUNCH_BLOCK)).status_code == 200
    assert [(await seen(client, key, LAUNCH_TOUR, ELEVEN))["vacancies"] for key in (KEY_A, KEY_B)] == [16, 20]
    answers = [await client.post("/octo/bookings", json=riders(1, ELEVEN, LAUNCH_TOUR), headers=auth(KEY_A)) for _ in range(20)]  # fmt: skip
    assert [a.status_code for a in answers].count(200) == 16, "A took places of B's block"
    for _ in range(4):
        held = await client.post("/octo/bookings", json=riders(1, ELEVEN, LAUNCH_TOUR), headers=auth(KEY_B))
        assert held.status_code == 200, held.text


async def test_on_resources_with_a_schedule_capacity_it_is_c_when_tighter(
    client: httpx.AsyncClient, services: Services
) -> None:
    """The schedule's 10 places, the launches' 20: C is 10. B's block of 4 leaves A 6, and a
    party too big for the schedule's places left is refused by them, with or without others'
    blocks beside it."""
    await load(services, catalog(launch_tour(10)))
    assert (await put_contract(client, services, KEY_B, LAUNCH_BLOCK)).status_code == 200
    assert [(await seen(client, key, LAUNCH_TOUR, ELEVEN))["vacancies"] for key in (KEY_A, KEY_B)] == [6, 10]

    async def book(key: str, count: int) -> httpx.Response:
        return await client.post("/octo/bookings", json=riders(count, ELEVEN, LAUNCH_TOUR), headers=auth(key))

    assert (await book(KEY_A, 4)).status_code == 200
    three = await book(KEY_A, 3)
    assert three.json()["errorMessage"] == f"Availability {ELEVEN} is sold out: 2 place(s) left, 3 requested"
    assert (await book(KEY_A, 2)).status_code == 200
    # B draws on its block, then finds one place left, not two (A has no block to count).
    assert (await book(KEY_B, 3)).status_code == 200
    refused = await book(KEY_B, 2)
    assert (
        refused.json()["errorMessage"] == f"Availability {ELEVEN} is sold out: 1 place(s) left, 2 requested"
    )
    assert (await book(KEY_B, 1)).status_code == 200
    assert [(await seen(client, key, LAUNCH_TOUR, ELEVEN))["status"] for key in (KEY_A, KEY_B)] == [
        "SOLD_OUT"
    ] * 2


@pytest.mark.postgresql  # one call is PostgreSQL's (SQLite's write lock is the transaction)
async def test_on_postgresql_a_reservation_on_resources_is_never_the_one_statement(
    client: httpx.AsyncClient, services: Services
) -> None:
    """The one-statement reservation (`Database.one_call`) checks a departure's schedule
    places only: a departure whose places come from resources is reserved in a transaction,
    its place count and allocation read under the departure's lock, and refused there."""
    await load(services, resources_catalog())
    assert (await put_contract(client, services, KEY_B, RIB_BLOCK)).status_code == 200
    for expected in (200,) * 4 + (400,):
        with counting(services.database) as sent:
            answer = await client.post("/octo/bookings", json=riders(1), headers=auth(KEY_A))
        assert answer.status_code == expected, answer.text
        assert not any("berth_hold_or_refuse" in text for text in sent.sent)
        kinds = sent.kinds()
        assert "BEGIN" in kinds and ("COMMIT" in kinds) == (expected == 200), kinds
    assert answer.json()["errorMessage"].endswith("is sold out: 0 place(s) left, 1 requested")


async def test_rental_options_cannot_have_blocks(client: httpx.AsyncClient, services: Services) -> None:
    await load(services, rentals_catalog())
    refused = await put_contract(
        client,
        services,
        KEY_B,
        {"allotments": [{"product": "city-bike-hire", "places": 4, "releaseHours": 0}]},
    )
    assert refused.status_code == 400
    assert "allotments[0]: 'city-bike-hire' is rented by duration" in refused.json()["errorMessage"]


async def test_a_block_on_an_option_that_became_a_rental_is_ignored(
    client: httpx.AsyncClient, services: Services
) -> None:
    """A catalogue imported after the contract may make a blocked option a rental: its
    departures are then rented by duration, and the block holds nothing there."""
    bikes = product(
        BIKES["productId"],
        options=[option(units=[unit("bike", "ADULT", prices=[price(3500)])], schedules=[schedule(("09:00",), capacity=12)])],
    )  # fmt: skip
    await load(services, catalog(bikes))
    block = {"allotments": [{"product": "city-bike-hire", "places": 10, "releaseHours": 0}]}
    assert (await put_contract(client, services, KEY_B, block)).status_code == 200
    day = "2026-06-03T09:00:00+01:00"
    assert (await seen(client, KEY_A, BIKES, day))["vacancies"] == 2
    await services.catalog.replace(rentals_catalog())
    assert (await seen(client, KEY_A, BIKES, day))["vacancies"] == 12
    assert await blocks(client, BIKES, day) == []
    hired = {**riders(12, day, BIKES), "unitItems": [{"unitId": "bike"}] * 6}
    assert (await client.post("/octo/bookings", json=hired, headers=auth(KEY_A))).status_code == 200
    assert (await seen(client, KEY_A, BIKES, day))["vacancies"] == 6


async def test_on_a_freesale_departure_blocks_do_not_apply(
    client: httpx.AsyncClient, services: Services
) -> None:
    walk = {"productId": "free-walk", "optionId": "DEFAULT"}
    free = product(
        walk["productId"],
        options=[option(units=[unit("rider", "ADULT", prices=[price(1000)])], schedules=[schedule(("11:00",), capacity=None)])],
    )  # fmt: skip
    await load(services, catalog(free))
    block = {"allotments": [{"product": "free-walk", "places": 10, "releaseHours": 0}]}
    assert (await put_contract(client, services, KEY_B, block)).status_code == 200
    day = "2026-06-03T11:00:00+01:00"
    for key in (KEY_A, KEY_B):
        assert (await seen(client, key, walk, day))["status"] == "FREESALE"
    for _ in range(3):
        assert (
            await client.post("/octo/bookings", json=riders(12, day, walk), headers=auth(KEY_A))
        ).status_code == 200
