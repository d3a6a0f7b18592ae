"""Departure operations (issue 21) over the admin API: the list, close and reopen, a capacity of
the departure's own, and what resellers see of each through OCTO, on the booking tests' own
catalogue (`tests.bookings_helpers.booking_catalog`)."""

from __future__ import annotations

from typing import Any

import httpx
import pytest

from berth.app import create_app
from berth.container import Services, build_services
from berth.settings import Settings
from tests.bookings_helpers import KAYAK, SLOT, TOUR, confirm, reservation, reserve, vacancies
from tests.conftest import ADMIN, KEY_B, Clock, auth
from tests.departures_helpers import changed_departure, departure_path, patch_departure
from tests.receivers import receiver
from tests.test_webhooks import drain, subscribe

KAYAK_SLOT = "2026-06-03T18:00:00+01:00"  # a Wednesday: the kayak's only departure that day


async def departures(client: httpx.AsyncClient, **params: str) -> list[dict[str, Any]]:
    response = await client.get("/admin/api/departures", params=params, headers=ADMIN)
    assert response.status_code == 200, response.text
    found: list[dict[str, Any]] = response.json()
    return found


async def octo_slot(
    client: httpx.AsyncClient, product: dict[str, str] = TOUR, availability_id: str = SLOT
) -> Any:
    response = await client.post(
        "/octo/availability", json={**product, "availabilityIds": [availability_id]}, headers=auth()
    )
    assert response.status_code == 200, response.text
    return response.json()[0]


async def test_list_shows_capacity_places_and_status(client: httpx.AsyncClient, bookable: Services) -> None:
    held = await reserve(client)
    confirmed = await reserve(client, reservation(("adult", "adult", "child")), key=KEY_B)
    await confirm(client, confirmed["uuid"], key=KEY_B)
    found = await departures(
        client, productId="thames-sightseeing", optionId="DEFAULT", localDate="2026-06-02"
    )
    assert [d["availabilityId"] for d in found] == [
        "2026-06-02T10:00:00+01:00", "2026-06-02T12:00:00+01:00",
        "2026-06-02T14:00:00+01:00", "2026-06-02T16:00:00+01:00",
    ]  # fmt: skip
    ten = found[0]
    assert ten == {
        "productId": "thames-sightseeing", "optionId": "DEFAULT", "availabilityId": SLOT,
        "localDateTimeStart": SLOT, "localDateTimeEnd": "2026-06-02T11:00:00+01:00",
        "status": "AVAILABLE", "available": True, "vacancies": 15, "capacity": 20,
        "catalogCapacity": 20, "capacityOverride": None, "placesHeld": 5, "placesConfirmed": 3,
        "closed": False, "closedInCatalog": False, "note": "", "updatedAt": None,
    }  # fmt: skip
    assert held["status"] == "ON_HOLD"
    # Every product and option over a range, by start time.
    both = await departures(client, localDateStart="2026-06-03", localDateEnd="2026-06-03")
    assert {(d["productId"], d["optionId"]) for d in both} >= {
        ("thames-sightseeing", "DEFAULT"),
        ("sunset-kayak", "DEFAULT"),
    }
    starts = [d["localDateTimeStart"] for d in both]
    assert starts == sorted(starts)


@pytest.mark.parametrize(
    ("params", "code", "words"),
    [
        ({"productId": "thames-sightseeing"}, "BAD_REQUEST", "localDate"),
        ({"localDate": "2026-06-02", "localDateStart": "2026-06-02", "localDateEnd": "2026-06-03"}, "BAD_REQUEST", "not both"),
        ({"localDateStart": "2026-06-02"}, "BAD_REQUEST", "localDateEnd"),
        ({"localDateStart": "2026-06-05", "localDateEnd": "2026-06-02"}, "BAD_REQUEST", "before"),
        ({"localDateStart": "2026-06-01", "localDateEnd": "2027-12-31"}, "BAD_REQUEST", "at most"),
        ({"localDate": "02/06/2026"}, "BAD_REQUEST", "localDate"),
        ({"localDate": "2026-06-02", "productId": "nope"}, "INVALID_PRODUCT_ID", "nope"),
        ({"localDate": "2026-06-02", "productId": "thames-sightseeing", "optionId": "nope"}, "INVALID_OPTION_ID", "nope"),
        ({"localDate": "2026-06-02", "optionId": "DEFAULT"}, "BAD_REQUEST", "productId"),
    ],
)  # fmt: skip
async def test_bad_list_queries(
    client: httpx.AsyncClient, bookable: Services, params: dict[str, str], code: str, words: str
) -> None:
    response = await client.get("/admin/api/departures", params=params, headers=ADMIN)
    assert response.status_code in (400, 404), response.text
    body = response.json()
    assert body["error"] == code and words in body["errorMessage"], body


async def test_close_and_reopen(client: httpx.AsyncClient, bookable: Services) -> None:
    kept = await reserve(client)
    closed = await changed_departure(client, {"closed": True, "note": "Engine trouble"})
    assert closed["closed"] is True and closed["note"] == "Engine trouble" and closed["status"] == "CLOSED"
    assert closed["updatedAt"] == "2026-06-01T08:00:00Z" and closed["placesHeld"] == 2
    seen = await octo_slot(client)
    assert (seen["status"], seen["available"], seen["vacancies"]) == ("CLOSED", False, 0)
    refused = await client.post("/octo/bookings", json=reservation(), headers=auth())
    assert refused.status_code == 400 and refused.json()["error"] == "UNPROCESSABLE_ENTITY"
    assert "closed for sale" in refused.json()["errorMessage"]
    # A hold taken before the departure closed keeps its places and can still be confirmed.
    assert (await confirm(client, kept["uuid"])).json()["status"] == "CONFIRMED"
    # The calendar: the kayak's only departure of the day closed makes the day CLOSED.
    await changed_departure(client, {"closed": True}, KAYAK, KAYAK_SLOT)
    calendar = await client.post(
        "/octo/availability/calendar",
        json={**KAYAK, "localDateStart": "2026-06-03", "localDateEnd": "2026-06-04"},
        headers=auth(),
    )
    day = calendar.json()[0]
    assert (day["localDate"], day["status"], day["available"]) == ("2026-06-03", "CLOSED", False)
    reopened = await changed_departure(client, {"closed": False})
    assert (
        reopened["closed"] is False
        and reopened["note"] == "Engine trouble"
        and reopened["status"] == "AVAILABLE"
    )
    assert (await octo_slot(client))["vacancies"] == 18
    await reserve(client)
    assert await vacancies(client) == 16


async def test_capacity_override(client: httpx.AsyncClient, bookable: Services) -> None:
    await reserve(client, reservation(("adult",) * 4))
    smaller = await changed_departure(client, {"capacity": 6})
    assert (smaller["capacity"], smaller["catalogCapacity"], smaller["capacityOverride"]) == (6, 20, 6)
    assert (smaller["vacancies"], smaller["status"]) == (2, "LIMITED")
    assert (await octo_slot(client))["vacancies"] == 2
    sold_out = await client.post("/octo/bookings", json=reservation(("adult",) * 3), headers=auth())
    assert (
        sold_out.json()["error"] == "UNPROCESSABLE_ENTITY"
        and "2 place(s) left" in sold_out.json()["errorMessage"]
    )
    too_small = await patch_departure(client, {"capacity": 3})
    assert too_small.status_code == 400
    assert too_small.json()["error"] == "UNPROCESSABLE_ENTITY"
    assert "already has 4 place(s) held" in too_small.json()["errorMessage"]
    assert (await octo_slot(client))["vacancies"] == 2  # nothing changed
    bigger = await changed_departure(client, {"capacity": 40})
    assert bigger["vacancies"] == 36
    back = await changed_departure(client, {"capacity": None})
    assert (back["capacity"], back["capacityOverride"], back["vacancies"]) == (20, None, 16)
    # Exactly the places held is fine: sold out.
    full = await changed_departure(client, {"capacity": 4})
    assert full["status"] == "SOLD_OUT" and (await octo_slot(client))["status"] == "SOLD_OUT"


@pytest.mark.parametrize(
    ("body", "code", "words"),
    [
        ({"capacity": -1}, "BAD_REQUEST", "capacity"),
        ({"capacity": "5"}, "BAD_REQUEST", "capacity"),
        ({"capacity": 2.5}, "BAD_REQUEST", "capacity"),
        ({"closed": "yes"}, "BAD_REQUEST", "closed"),
        ({"note": "x" * 2001}, "BAD_REQUEST", "note"),
        ({"colour": "red"}, "BAD_REQUEST", "colour"),
    ],
)
async def test_bad_changes_store_nothing(
    client: httpx.AsyncClient, bookable: Services, body: dict[str, Any], code: str, words: str
) -> None:
    response = await patch_departure(client, body)
    assert response.status_code == 400 and response.json()["error"] == code, response.text
    assert words in response.json()["errorMessage"]
    assert (
        await departures(client, productId="thames-sightseeing", optionId="DEFAULT", localDate="2026-06-02")
    )[0]["updatedAt"] is None


async def test_unknown_departures(client: httpx.AsyncClient, bookable: Services) -> None:
    missing = await client.patch(
        departure_path(TOUR, "2026-06-02T11:00:00+01:00"), json={"closed": True}, headers=ADMIN
    )
    assert missing.json()["error"] == "INVALID_AVAILABILITY_ID"
    product = await client.patch(
        departure_path({"productId": "nope", "optionId": "DEFAULT"}), json={"closed": True}, headers=ADMIN
    )
    assert product.json()["error"] == "INVALID_PRODUCT_ID"
    for headers in ({}, auth()):  # no token, a reseller's key
        refused = await client.patch(departure_path(), json={"closed": True}, headers=headers)
        assert refused.json()["error"] == "UNAUTHORIZED"
    # The raw availability id (':' and '+' unencoded) names the same departure.
    raw = await client.get(f"/admin/api/departures/thames-sightseeing/DEFAULT/{SLOT}", headers=ADMIN)
    assert raw.status_code == 200 and raw.json()["availabilityId"] == SLOT


async def test_every_change_announces_the_slot(client: httpx.AsyncClient, bookable: Services) -> None:
    async with receiver() as a, receiver() as b:
        await subscribe(client, a.url, event="availability_update")
        await subscribe(client, b.url, event="availability_update", key=KEY_B)
        await changed_departure(client, {"closed": True})
        await drain(bookable)
        await changed_departure(client, {"closed": False, "capacity": 8})
        await drain(bookable)
        await changed_departure(client, {"note": "Only a note"})  # nothing resellers see changed
        await drain(bookable)
        for target in (a, b):
            seen = [
                (p["availability"]["id"], p["availability"]["status"], p["availability"]["vacancies"])
                for p in target.payloads()
            ]
            assert seen == [(SLOT, "CLOSED", 0), (SLOT, "AVAILABLE", 8)]


async def test_cached_answers_follow_a_change(
    client: httpx.AsyncClient, bookable: Services, settings: Settings, clock: Clock
) -> None:
    """Availability answers are reused while the database's change mark stands: a departure's
    change is a commit, so the very next check sees it, in this process and in another one
    (its own Services on the same database) whose answer was just asked and kept."""
    assert bookable.settings.answer_cache_seconds > 0
    other = build_services(settings, clock)
    try:
        transport = httpx.ASGITransport(app=create_app(services=other))
        async with httpx.AsyncClient(transport=transport, base_url="http://other") as elsewhere:
            assert (await octo_slot(elsewhere))["status"] == "AVAILABLE"
            assert (await octo_slot(elsewhere))["status"] == "AVAILABLE"  # the kept answer
            await changed_departure(client, {"closed": True})
            assert (await octo_slot(elsewhere))["status"] == "CLOSED"
            assert (await octo_slot(client))["status"] == "CLOSED"
            await changed_departure(client, {"closed": False, "capacity": 5})
            assert (await octo_slot(elsewhere))["vacancies"] == 5
            assert (await octo_slot(client))["vacancies"] == 5
    finally:
        await other.close()
