"""POST /availability, /availability/calendar and the batch forms, on the booking tests' own catalogue
(`tests.bookings_helpers.booking_catalog`).

The clock stands at 2026-06-01T08:00Z (Monday, 09:00 in London)."""

from __future__ import annotations

from typing import Any

import httpx

from berth.container import Services
from tests.conftest import auth

TOUR = {"productId": "thames-sightseeing", "optionId": "DEFAULT"}
MUSEUM = {"productId": "tower-of-stories", "optionId": "DEFAULT"}


async def check(
    client: httpx.AsyncClient, body: dict[str, Any], capabilities: str | None = None
) -> httpx.Response:
    return await client.post("/octo/availability", json=body, headers=auth(capabilities=capabilities))


async def test_one_day_of_departures(client: httpx.AsyncClient, bookable: Services) -> None:
    response = await check(client, {**TOUR, "localDate": "2026-06-02"})
    assert response.status_code == 200
    slots = response.json()
    assert [s["id"] for s in slots] == [
        "2026-06-02T10:00:00+01:00",
        "2026-06-02T12:00:00+01:00",
        "2026-06-02T14:00:00+01:00",
        "2026-06-02T16:00:00+01:00",
    ]
    assert slots[0] == {
        "id": "2026-06-02T10:00:00+01:00",
        "localDateTimeStart": "2026-06-02T10:00:00+01:00",
        "localDateTimeEnd": "2026-06-02T11:00:00+01:00",
        "utcCutoffAt": "2026-06-02T08:45:00Z",
        "allDay": False,
        "available": True,
        "status": "AVAILABLE",
        "vacancies": 20,
        "capacity": 20,
        "maxUnits": 12,
        "openingHours": [],
    }


async def test_range_and_availability_ids(client: httpx.AsyncClient, bookable: Services) -> None:
    ranged = (
        await check(client, {**TOUR, "localDateStart": "2026-06-02", "localDateEnd": "2026-06-04"})
    ).json()
    assert len(ranged) == 12
    ids = [ranged[5]["id"], ranged[0]["id"]]
    picked = (await check(client, {**TOUR, "availabilityIds": ids})).json()
    assert [s["id"] for s in picked] == ids


async def test_slots_already_past_their_cutoff_are_closed(
    client: httpx.AsyncClient, bookable: Services
) -> None:
    today = (await check(client, {**TOUR, "localDate": "2026-06-01"})).json()
    assert [s["status"] for s in today] == ["AVAILABLE"] * 4  # 09:00 in London: 10:00 cutoff is 09:45
    evening = (
        await check(
            client, {"productId": "thames-sightseeing", "optionId": "evening", "localDate": "2026-06-04"}
        )
    ).json()
    assert evening[0]["id"] == "2026-06-04T19:30:00+01:00"


async def test_opening_hours_product(client: httpx.AsyncClient, bookable: Services) -> None:
    week = (
        await check(client, {**MUSEUM, "localDateStart": "2026-06-01", "localDateEnd": "2026-06-07"})
    ).json()
    # Mondays shut: 1 June is listed CLOSED with the usual hours, as a holiday closure is.
    assert len(week) == 7
    assert {k: week[0][k] for k in ("id", "status", "available", "openingHours")} == {
        "id": "2026-06-01T00:00:00+01:00", "status": "CLOSED", "available": False,
        "openingHours": [{"from": "09:30", "to": "17:30"}],
    }  # fmt: skip
    day = week[1]
    assert day["allDay"] is True
    assert day["localDateTimeEnd"] == "2026-06-03T00:00:00+01:00"
    assert day["openingHours"] == [{"from": "09:30", "to": "17:30"}]
    assert day["utcCutoffAt"] == "2026-06-02T16:30:00Z"
    assert day["capacity"] == 300


async def test_requested_units_can_make_a_slot_sold_out(
    client: httpx.AsyncClient, bookable: Services
) -> None:
    units = [{"id": "adult", "quantity": 21}]
    slots = (await check(client, {**TOUR, "localDate": "2026-06-02", "units": units})).json()
    assert {s["status"] for s in slots} == {"SOLD_OUT"}
    assert {s["available"] for s in slots} == {False}
    family = [{"id": "family", "quantity": 2}]
    museum = (await check(client, {**MUSEUM, "localDate": "2026-06-02", "units": family})).json()
    assert museum[0]["status"] == "AVAILABLE"


async def test_selector_errors(client: httpx.AsyncClient, bookable: Services) -> None:
    for body in (
        {**TOUR},
        {**TOUR, "localDate": "2026-06-02", "availabilityIds": ["x"]},
        {**TOUR, "localDateStart": "2026-06-02", "localDateEnd": "2026-06-03", "availabilityIds": []},
        {**TOUR, "localDateStart": "2026-06-02"},
    ):
        response = await check(client, body)
        assert response.status_code == 400, body
        assert response.json()["error"] == "BAD_REQUEST", body


async def test_bad_dates(client: httpx.AsyncClient, bookable: Services) -> None:
    cases = {
        "localDate: must be a date, YYYY-MM-DD": {**TOUR, "localDate": "soon"},
        "localDateEnd 2026-06-01 is before localDateStart 2026-06-05": {
            **TOUR, "localDateStart": "2026-06-05", "localDateEnd": "2026-06-01",
        },
        "The range covers 367 days; at most 366 are allowed": {
            **TOUR, "localDateStart": "2026-06-01", "localDateEnd": "2027-06-02",
        },
        "The dates requested are in the past (today is 2026-06-01 in Europe/London)": {
            **TOUR, "localDate": "2026-05-31",
        },
    }  # fmt: skip
    for message, body in cases.items():
        response = await check(client, body)
        assert response.json() == {"error": "BAD_REQUEST", "errorMessage": message}


async def test_unknown_ids(client: httpx.AsyncClient, bookable: Services) -> None:
    response = await check(client, {"productId": "nope", "optionId": "DEFAULT", "localDate": "2026-06-02"})
    assert response.json()["error"] == "INVALID_PRODUCT_ID" and response.json()["productId"] == "nope"
    response = await check(client, {"optionId": "DEFAULT", "localDate": "2026-06-02"})
    assert response.json()["error"] == "INVALID_PRODUCT_ID"
    response = await check(client, {**TOUR, "optionId": "night", "localDate": "2026-06-02"})
    assert response.json()["error"] == "INVALID_OPTION_ID" and response.json()["optionId"] == "night"
    response = await check(client, {**TOUR, "availabilityIds": ["2026-06-02T11:00:00+01:00"]})
    assert response.json()["error"] == "INVALID_AVAILABILITY_ID"
    assert response.json()["availabilityId"] == "2026-06-02T11:00:00+01:00"
    response = await check(
        client, {**TOUR, "localDate": "2026-06-02", "units": [{"id": "dog", "quantity": 1}]}
    )
    assert response.json()["error"] == "INVALID_UNIT_ID" and response.json()["unitId"] == "dog"


async def test_pricing_on_availability(client: httpx.AsyncClient, bookable: Services) -> None:
    body = {
        **TOUR,
        "localDate": "2026-06-02",
        "units": [{"id": "adult", "quantity": 2}, {"id": "child", "quantity": 1}],
    }
    plain = (await check(client, body)).json()[0]
    assert "pricing" not in plain and "unitPricing" not in plain
    priced = (await check(client, body, "octo/pricing")).json()[0]
    assert [p["unitId"] for p in priced["unitPricing"]] == ["adult", "child"]
    assert priced["pricing"] == {
        "original": 2800 * 2 + 1500, "retail": 2500 * 2 + 1500, "net": 2000 * 2 + 1200, "currency": "EUR",
        "currencyPrecision": 2,
        "includedTaxes": [{"name": "VAT", "retail": 417 * 2 + 250, "original": 467 * 2 + 250, "net": 333 * 2 + 200}],
    }  # fmt: skip
    gbp = (await check(client, {**body, "currency": "GBP"}, "octo/pricing")).json()[0]
    assert gbp["pricing"]["retail"] == 2200 * 2 + 1300 and gbp["pricing"]["currency"] == "GBP"
    wrong = await check(client, {**body, "currency": "USD"}, "octo/pricing")
    assert wrong.json() == {
        "error": "BAD_REQUEST",
        "errorMessage": "Product 'thames-sightseeing' is not sold in 'USD' (it is priced in EUR, GBP)",
    }
    kayak = {"productId": "sunset-kayak", "optionId": "DEFAULT", "localDate": "2026-06-03"}
    per_booking = (await check(client, kayak, "octo/pricing")).json()[0]
    assert per_booking["pricing"]["retail"] == 24000 and "unitPricing" not in per_booking


async def test_calendar(client: httpx.AsyncClient, bookable: Services) -> None:
    body = {**MUSEUM, "localDateStart": "2026-06-01", "localDateEnd": "2026-06-07"}
    response = await client.post("/octo/availability/calendar", json=body, headers=auth())
    assert response.status_code == 200
    days = response.json()
    assert [d["localDate"] for d in days] == [f"2026-06-0{n}" for n in range(1, 8)]
    assert days[0] == {
        "localDate": "2026-06-01", "available": False, "status": "CLOSED", "vacancies": 0, "capacity": 300,
        "openingHours": [{"from": "09:30", "to": "17:30"}],
    }  # fmt: skip
    assert days[1] == {
        "localDate": "2026-06-02", "available": True, "status": "AVAILABLE", "vacancies": 300, "capacity": 300,
        "openingHours": [{"from": "09:30", "to": "17:30"}],
    }  # fmt: skip
    assert "hasResources" not in days[1] and "mappings" not in days[1]


async def test_calendar_errors_and_pricing(client: httpx.AsyncClient, bookable: Services) -> None:
    response = await client.post(
        "/octo/availability/calendar", json={**TOUR, "localDateStart": "2026-06-01"}, headers=auth()
    )
    assert response.json() == {
        "error": "BAD_REQUEST",
        "errorMessage": "localDateStart and localDateEnd are required",
    }
    year = {**TOUR, "localDateStart": "2026-06-01", "localDateEnd": "2027-06-01"}
    response = await client.post("/octo/availability/calendar", json=year, headers=auth())
    assert response.status_code == 200 and len(response.json()) == 366
    body = {
        **TOUR,
        "localDateStart": "2026-06-02",
        "localDateEnd": "2026-06-02",
        "units": [{"id": "adult", "quantity": 3}],
    }
    day = (
        await client.post("/octo/availability/calendar", json=body, headers=auth(capabilities="octo/pricing"))
    ).json()[0]
    assert day["pricingFrom"]["retail"] == 7500
    assert [u["unitId"] for u in day["unitPricingFrom"]] == ["adult", "child"]


async def test_batches_keep_request_order(client: httpx.AsyncClient, bookable: Services) -> None:
    body = [{**MUSEUM, "localDate": "2026-06-02"}, {**TOUR, "localDate": "2026-06-02"}]
    rows = (await client.post("/octo/availability/batch", json=body, headers=auth())).json()
    assert [(r["productId"], r["optionId"]) for r in rows] == [("tower-of-stories", "DEFAULT")] + [
        ("thames-sightseeing", "DEFAULT")
    ] * 4
    assert rows[1]["id"] == "2026-06-02T10:00:00+01:00"
    calendar = [
        {**TOUR, "localDateStart": "2026-06-02", "localDateEnd": "2026-06-03"},
        {**MUSEUM, "localDateStart": "2026-06-01", "localDateEnd": "2026-06-01"},
    ]
    days = (await client.post("/octo/availability/calendar/batch", json=calendar, headers=auth())).json()
    assert [(d["productId"], d["localDate"]) for d in days] == [
        ("thames-sightseeing", "2026-06-02"), ("thames-sightseeing", "2026-06-03"), ("tower-of-stories", "2026-06-01"),
    ]  # fmt: skip
    broken = [{**TOUR, "localDate": "2026-06-02"}, {**TOUR, "optionId": "nope", "localDate": "2026-06-02"}]
    response = await client.post("/octo/availability/batch", json=broken, headers=auth())
    assert response.json()["error"] == "INVALID_OPTION_ID"
    assert response.json()["errorMessage"].startswith("Request [1]: ")
    assert (await client.post("/octo/availability/batch", json={}, headers=auth())).json()[
        "error"
    ] == "BAD_REQUEST"
    assert (await client.post("/octo/availability/batch", json=[], headers=auth())).json()[
        "error"
    ] == "BAD_REQUEST"


async def test_daylight_saving_days(client: httpx.AsyncClient, bookable: Services, clock: Any) -> None:
    from datetime import UTC, datetime

    clock.now = datetime(2026, 3, 1, tzinfo=UTC)
    spring = (
        await check(client, {**TOUR, "localDateStart": "2026-03-28", "localDateEnd": "2026-03-29"})
    ).json()
    assert [s["id"] for s in spring][3:5] == ["2026-03-28T16:00:00+00:00", "2026-03-29T10:00:00+01:00"]
    assert spring[4]["utcCutoffAt"] == "2026-03-29T08:45:00Z"
    assert spring[3]["utcCutoffAt"] == "2026-03-28T15:45:00Z"
    autumn = (
        await check(client, {**MUSEUM, "localDateStart": "2026-10-24", "localDateEnd": "2026-10-25"})
    ).json()
    assert [(s["localDateTimeStart"], s["localDateTimeEnd"]) for s in autumn] == [
        ("2026-10-24T00:00:00+01:00", "2026-10-25T00:00:00+01:00"),
        ("2026-10-25T00:00:00+01:00", "2026-10-26T00:00:00+00:00"),
    ]
    assert [s["utcCutoffAt"] for s in autumn] == ["2026-10-24T16:30:00Z", "2026-10-25T17:30:00Z"]


async def test_every_opening_hours_day_carries_opening_hours(
    client: httpx.AsyncClient, bookable: Services
) -> None:
    """Shut weekdays (Mondays) and holiday closures (25 December) alike: CLOSED, not available,
    with the hours the museum keeps, in the calendar and in the check."""
    body = {**MUSEUM, "localDateStart": "2026-12-20", "localDateEnd": "2027-01-10"}
    days = (await client.post("/octo/availability/calendar", json=body, headers=auth())).json()
    checked = (await check(client, body)).json()
    assert len(days) == len(checked) == 22
    hours = [{"from": "09:30", "to": "17:30"}]
    assert all(d["openingHours"] == hours for d in days + checked)
    closed = {"2026-12-21", "2026-12-25", "2026-12-26", "2026-12-28", "2027-01-01", "2027-01-04"}
    assert {d["localDate"] for d in days if d["status"] == "CLOSED"} == closed
    assert {c["id"][:10] for c in checked if c["status"] == "CLOSED"} == closed
    assert not any(d["available"] for d in days + checked if d["status"] == "CLOSED")
