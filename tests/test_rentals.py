"""octo/rentals through the OCTO routes, on the demo's bike hire (Europe/London; 12 hybrid
bikes picked up at 09:00, 11:00, 13:00, 15:00 and 17:00; 4 e-bikes at 09:00 and 13:00).
Clock: 2026-06-01T08:00Z (Monday, 09:00 in London)."""

from __future__ import annotations

import uuid
from typing import Any

import httpx
from sqlalchemy import func, select

from berth.services.container import Services
from berth.store.tables import bookings
from tests.bookings_helpers import GUEST, reservation, reserve
from tests.conftest import auth
from tests.receivers import receiver
from tests.test_catalog_import import MINIMAL
from tests.test_webhooks import drain, subscribe

BIKES = {"productId": "city-bike-hire", "optionId": "DEFAULT"}
EBIKES = {"productId": "city-bike-hire", "optionId": "ebike"}
RENTALS = "octo/rentals"


def rental(
    availability_id: str, duration: str | None, bikes: int = 1, product: dict[str, str] = BIKES, **extra: Any
) -> dict[str, Any]:
    body: dict[str, Any] = {
        "uuid": str(uuid.uuid4()),
        **product,
        "availabilityId": availability_id,
        "unitItems": [{"unitId": "bike"}] * bikes,
        **extra,
    }
    if duration is not None:
        body["rentalDurationId"] = duration
    return body


async def post(
    client: httpx.AsyncClient, path: str, body: Any, capabilities: str | None = None
) -> httpx.Response:
    return await client.post(path, json=body, headers=auth(capabilities=capabilities))


async def free(
    client: httpx.AsyncClient, duration: str, start: str, end: str, product: dict[str, str] = BIKES
) -> dict[str, int]:
    """Vacancies per start for a duration over a range of dates."""
    body = {**product, "localDateStart": start, "localDateEnd": end, "rentalDurationId": duration}
    response = await post(client, "/octo/availability", body)
    assert response.status_code == 200, response.text
    return {slot["id"][5:16]: slot["vacancies"] for slot in response.json()}  # "06-02T09:00"


async def count_bookings(services: Services) -> int:
    async with services.database.transaction(write=False) as conn:
        return int(await conn.scalar(select(func.count()).select_from(bookings)) or 0)


# --- catalogue fields ----------------------------------------------------------------------


async def test_rental_fields_only_with_the_capability(client: httpx.AsyncClient, demo: Services) -> None:
    plain = (await client.get("/octo/products/city-bike-hire", headers=auth())).json()
    assert "isRental" not in plain and "rentalDurations" not in plain["options"][0]
    response = await client.get("/octo/products", headers=auth(capabilities=RENTALS))
    assert response.headers["Octo-Capabilities"] == "octo/rentals"
    products = {p["id"]: p for p in response.json()}
    assert products["city-bike-hire"]["isRental"] is True
    assert products["thames-sightseeing"]["isRental"] is False
    assert products["thames-sightseeing"]["options"][0]["rentalDurations"] == []
    hybrid = products["city-bike-hire"]["options"][0]
    assert [d["id"] for d in hybrid["rentalDurations"]] == ["2-hours", "half-day", "1-day", "3-days"]
    assert hybrid["rentalDurations"][1] == {
        "id": "half-day",
        "title": "Half day",
        "shortDescription": "4 hours",
        "durationAmount": 4.0,
        "durationUnit": "hour",
        "pricingMultiplier": 0.65,
    }
    assert hybrid["rentalDurations"][2]["pricingMultiplier"] == 1
    one = (await client.get("/octo/products/city-bike-hire", headers=auth(capabilities=RENTALS))).json()
    assert one == products["city-bike-hire"]


async def test_pricing_from_starts_at_the_cheapest_duration(
    client: httpx.AsyncClient, demo: Services
) -> None:
    product = (
        await client.get("/octo/products/city-bike-hire", headers=auth(capabilities="octo/pricing"))
    ).json()
    bike = product["options"][0]["units"][0]
    assert [(p["currency"], p["retail"]) for p in bike["pricingFrom"]] == [("GBP", 1200), ("EUR", 1400)]


# --- availability ----------------------------------------------------------------------------


async def test_a_three_day_rental_blocks_three_days_and_a_short_one_takes_what_is_left(
    client: httpx.AsyncClient, demo: Services
) -> None:
    assert set((await free(client, "2-hours", "2026-06-02", "2026-06-05")).values()) == {12}
    three = await reserve(client, rental("2026-06-02T09:00:00+01:00", "3-days", bikes=6))
    assert three["availability"]["localDateTimeEnd"] == "2026-06-05T09:00:00+01:00"
    await reserve(client, rental("2026-06-02T09:00:00+01:00", "3-days", bikes=4))
    short = await free(client, "2-hours", "2026-06-01", "2026-06-05")
    assert short["06-01T17:00"] == 12
    assert {short[f"06-0{d}T{h}:00"] for d in (2, 3, 4) for h in ("09", "11", "13", "15", "17")} == {2}
    assert short["06-05T09:00"] == 12  # due back at 09:00: free again from 09:00
    day = await free(client, "1-day", "2026-06-01", "2026-06-05")
    assert day["06-01T09:00"] == 0  # 09:00 in London now: past its sales cutoff (CLOSED)
    assert (day["06-01T11:00"], day["06-04T17:00"], day["06-05T09:00"]) == (2, 2, 12)

    await reserve(client, rental("2026-06-03T13:00:00+01:00", "2-hours"))
    short = await free(client, "2-hours", "2026-06-03", "2026-06-03")
    assert (short["06-03T11:00"], short["06-03T13:00"], short["06-03T15:00"]) == (2, 1, 2)
    assert (await free(client, "3-days", "2026-06-01", "2026-06-01"))["06-01T11:00"] == 1
    assert (await free(client, "half-day", "2026-06-03", "2026-06-03"))["06-03T11:00"] == 1

    before = await count_bookings(demo)
    refused = await post(client, "/octo/bookings", rental("2026-06-03T11:00:00+01:00", "half-day", bikes=2))
    assert refused.json()["error"] == "UNPROCESSABLE_ENTITY"
    assert "sold out for a rental until 2026-06-03T15:00:00+01:00" in refused.json()["errorMessage"]
    assert await count_bookings(demo) == before
    slot = (await post(client, "/octo/availability", {**BIKES, "availabilityIds": ["2026-06-03T13:00:00+01:00"],
                                                     "rentalDurationId": "2-hours", "units": [{"id": "bike", "quantity": 2}]})).json()  # fmt: skip
    assert (slot[0]["status"], slot[0]["vacancies"], slot[0]["capacity"]) == ("SOLD_OUT", 1, 12)
    assert slot[0]["localDateTimeEnd"] == "2026-06-03T15:00:00+01:00"
    assert "rentalDurationId" not in slot[0]  # rentals add no availability fields


async def test_stock_is_per_option(client: httpx.AsyncClient, demo: Services) -> None:
    await reserve(client, rental("2026-06-02T09:00:00+01:00", "1-day", bikes=4, product=EBIKES))
    assert await free(client, "half-day", "2026-06-02", "2026-06-03", EBIKES) == {
        "06-02T09:00": 0, "06-02T13:00": 0, "06-03T09:00": 4, "06-03T13:00": 4,
    }  # fmt: skip
    assert (await free(client, "2-hours", "2026-06-02", "2026-06-02"))["06-02T09:00"] == 12


async def test_calendar_and_batches_take_the_duration(client: httpx.AsyncClient, demo: Services) -> None:
    await reserve(client, rental("2026-06-02T13:00:00+01:00", "1-day", bikes=3, product=EBIKES))
    body = {**EBIKES, "localDateStart": "2026-06-01", "localDateEnd": "2026-06-04"}
    days = (await post(client, "/octo/availability/calendar", {**body, "rentalDurationId": "1-day"})).json()
    # A day from 09:00 or 13:00 on 1 June ends before or as the rental starts; 3 June 09:00 overlaps.
    assert [(d["localDate"], d["vacancies"]) for d in days] == [
        ("2026-06-01", 4), ("2026-06-02", 1), ("2026-06-03", 4), ("2026-06-04", 4),
    ]  # fmt: skip
    halves = (
        await post(client, "/octo/availability/calendar", {**body, "rentalDurationId": "half-day"})
    ).json()
    assert [d["vacancies"] for d in halves] == [4, 4, 4, 4]  # best start of each day
    batch = (
        await post(client, "/octo/availability/batch", [
            {**EBIKES, "localDate": "2026-06-03", "rentalDurationId": "half-day"},
            {**EBIKES, "localDate": "2026-06-03", "rentalDurationId": "1-day"},
        ])
    ).json()  # fmt: skip
    assert [(r["id"][11:16], r["vacancies"], r["localDateTimeEnd"][11:16]) for r in batch] == [
        ("09:00", 1, "13:00"), ("13:00", 4, "17:00"), ("09:00", 1, "09:00"), ("13:00", 4, "13:00"),
    ]  # fmt: skip
    calendars = (
        await post(client, "/octo/availability/calendar/batch", [{**body, "rentalDurationId": "1-day"}] * 2)
    ).json()
    assert [d["vacancies"] for d in calendars] == [4, 1, 4, 4] * 2
    wrong = await post(client, "/octo/availability/calendar/batch", [{**body, "rentalDurationId": "1-day"},
                                                                      {**body, "rentalDurationId": "3-days"}])  # fmt: skip
    assert wrong.json()["error"] == "INVALID_RENTAL_DURATION_ID"
    assert wrong.json()["errorMessage"].startswith("Request [1]: ")


async def test_prices_follow_the_duration(client: httpx.AsyncClient, demo: Services) -> None:
    body = {
        **BIKES,
        "availabilityIds": ["2026-06-02T09:00:00+01:00"],
        "units": [{"id": "bike", "quantity": 2}],
    }
    three = (
        await post(client, "/octo/availability", {**body, "rentalDurationId": "3-days", "currency": "EUR"},
                   "octo/pricing")
    ).json()[0]  # fmt: skip
    assert three["unitPricing"][0]["retail"] == 8750
    assert three["unitPricing"][0]["includedTaxes"][0]["retail"] == 1458  # 583 x 2.5 = 1457.5, half up
    assert (three["pricing"]["retail"], three["pricing"]["includedTaxes"][0]["retail"]) == (17500, 2916)
    short = (
        await post(client, "/octo/availability", {**body, "rentalDurationId": "2-hours"}, "octo/pricing")
    ).json()[0]
    assert (short["pricing"]["retail"], short["pricing"]["net"]) == (2400, 1920)
    day = (
        await post(client, "/octo/availability/calendar", {**BIKES, "localDateStart": "2026-06-02",
                   "localDateEnd": "2026-06-02", "rentalDurationId": "half-day"}, "octo/pricing")
    ).json()[0]  # fmt: skip
    assert day["unitPricingFrom"][0]["retail"] == 1950  # 3000 x 0.65
    booking = await reserve(
        client, rental("2026-06-02T09:00:00+01:00", "3-days", bikes=2), capabilities="octo/pricing"
    )
    assert booking["pricing"]["retail"] == 15000
    assert [item["pricing"]["retail"] for item in booking["unitItems"]] == [7500, 7500]


# --- bookings --------------------------------------------------------------------------------


async def test_booking_fields_only_with_the_capability(client: httpx.AsyncClient, demo: Services) -> None:
    body = rental("2026-06-02T11:00:00+01:00", "half-day")
    plain = await reserve(client, body)
    assert not {"isRental", "rentalDurationId", "rentalDuration"} & plain.keys()
    assert plain["availability"]["localDateTimeEnd"] == "2026-06-02T15:00:00+01:00"
    shown = (await client.get(f"/octo/bookings/{body['uuid']}", headers=auth(capabilities=RENTALS))).json()
    assert shown["isRental"] is True and shown["rentalDurationId"] == "half-day"
    assert shown["rentalDuration"]["title"] == "Half day"
    assert shown["option"]["rentalDurations"][0]["id"] == "2-hours" and shown["product"]["isRental"] is True
    tour = await reserve(client, reservation(), capabilities=RENTALS)
    assert (tour["isRental"], tour["rentalDurationId"], tour["rentalDuration"]) == (False, None, None)
    listed = (
        await client.get(
            "/octo/bookings", params={"localDate": "2026-06-02"}, headers=auth(capabilities=RENTALS)
        )
    ).json()
    assert {b["uuid"]: b["rentalDurationId"] for b in listed} == {
        body["uuid"]: "half-day",
        tour["uuid"]: None,
    }
    cancelled = (
        await client.post(
            f"/octo/bookings/{body['uuid']}/cancel", json={}, headers=auth(capabilities=RENTALS)
        )
    ).json()
    assert cancelled["status"] == "CANCELLED" and cancelled["rentalDurationId"] == "half-day"
    assert (await free(client, "half-day", "2026-06-02", "2026-06-02"))["06-02T11:00"] == 12


async def test_bad_durations(client: httpx.AsyncClient, demo: Services) -> None:
    before = await count_bookings(demo)
    slot = "2026-06-02T09:00:00+01:00"
    for body in (rental(slot, "fortnight"), rental(slot, "3-days", product=EBIKES), rental(slot, "")):
        answer = (await post(client, "/octo/bookings", body)).json()
        assert answer["error"] == "INVALID_RENTAL_DURATION_ID"
        assert answer["rentalDurationId"] == body["rentalDurationId"]
    missing = (await post(client, "/octo/bookings", rental(slot, None))).json()
    assert missing["error"] == "INVALID_RENTAL_DURATION_ID" and missing["rentalDurationId"] is None
    assert "send rentalDurationId, one of 2-hours, half-day, 1-day, 3-days" in missing["errorMessage"]
    on_a_cruise = (await post(client, "/octo/bookings", reservation(rentalDurationId="1-day"))).json()
    assert on_a_cruise["error"] == "BAD_REQUEST"
    not_text = (await post(client, "/octo/bookings", {**rental(slot, None), "rentalDurationId": 3})).json()
    assert not_text["error"] == "BAD_REQUEST"
    assert await count_bookings(demo) == before
    check = {**BIKES, "localDate": "2026-06-02"}
    unknown = (await post(client, "/octo/availability", {**check, "rentalDurationId": "fortnight"})).json()
    assert unknown == {
        "error": "INVALID_RENTAL_DURATION_ID",
        "errorMessage": "The rental duration 'fortnight' is not a rental duration of option 'DEFAULT'",
        "rentalDurationId": "fortnight",
    }
    assert (await post(client, "/octo/availability", check)).json()["rentalDurationId"] is None
    cruise = {"productId": "thames-sightseeing", "optionId": "DEFAULT", "localDate": "2026-06-02"}
    assert (await post(client, "/octo/availability", {**cruise, "rentalDurationId": "1-day"})).json()[
        "error"
    ] == "BAD_REQUEST"
    calendar = {
        **BIKES,
        "localDateStart": "2026-06-02",
        "localDateEnd": "2026-06-03",
        "rentalDurationId": "x",
    }
    assert (await post(client, "/octo/availability/calendar", calendar)).json()["rentalDurationId"] == "x"


async def test_an_option_with_one_duration_needs_no_id(client: httpx.AsyncClient, demo: Services) -> None:
    await demo.catalog.import_text(
        MINIMAL.replace("capacity: 12", "capacity: 2").replace(
            "        units:\n",
            "        rentalDurations: [{id: 1d, title: 1 day, durationAmount: 1, durationUnit: day}]\n"
            "        units:\n",
        )
    )
    walk = {"productId": "walk", "optionId": "DEFAULT"}
    body = {"uuid": str(uuid.uuid4()), **walk, "availabilityId": "2026-06-02T10:00:00+01:00",
            "unitItems": [{"unitId": "adult"}]}  # fmt: skip
    booking = await reserve(client, body, capabilities=RENTALS)
    assert booking["rentalDurationId"] == "1d"
    assert booking["availability"]["localDateTimeEnd"] == "2026-06-03T10:00:00+01:00"
    slots = (await post(client, "/octo/availability", {**walk, "localDate": "2026-06-02"})).json()
    assert [(s["id"][11:16], s["vacancies"]) for s in slots] == [("10:00", 1), ("14:30", 1)]
    again = await reserve(client, body, capabilities=RENTALS)  # the same request: idempotent
    assert again["id"] == booking["id"]
    assert (await post(client, "/octo/bookings", {**body, "rentalDurationId": "1d"})).json()["error"] == (
        "INVALID_BOOKING_UUID"
    )  # the same uuid with another body


async def test_changing_the_duration_rechecks_the_stock(client: httpx.AsyncClient, demo: Services) -> None:
    blocker = rental("2026-06-03T09:00:00+01:00", "1-day", bikes=3, product=EBIKES)
    await reserve(client, blocker)
    body = rental("2026-06-02T09:00:00+01:00", "half-day", bikes=2, product=EBIKES)
    await reserve(client, body)
    path = f"/octo/bookings/{body['uuid']}"
    longer = await client.patch(path, json={"rentalDurationId": "1-day"}, headers=auth(capabilities=RENTALS))
    assert longer.status_code == 200, longer.text
    assert longer.json()["availability"]["localDateTimeEnd"] == "2026-06-03T09:00:00+01:00"
    # 1 day from 13:00 would overlap the blocker's 3 bikes from 09:00 on 3 June: 1 left, 2 wanted.
    moved = await client.patch(path, json={"availabilityId": "2026-06-02T13:00:00+01:00"}, headers=auth())
    assert moved.json()["error"] == "UNPROCESSABLE_ENTITY"
    unchanged = (await client.get(path, headers=auth(capabilities=RENTALS))).json()
    assert (unchanged["availabilityId"], unchanged["rentalDurationId"]) == (
        "2026-06-02T09:00:00+01:00",
        "1-day",
    )
    assert (await free(client, "half-day", "2026-06-02", "2026-06-02", EBIKES))["06-02T13:00"] == 2
    wrong = await client.patch(path, json={"rentalDurationId": "3-days"}, headers=auth())
    assert (
        wrong.json()["error"] == "INVALID_RENTAL_DURATION_ID" and wrong.json()["rentalDurationId"] == "3-days"
    )
    notes = await client.patch(path, json={"notes": "Helmets please"}, headers=auth(capabilities=RENTALS))
    assert notes.json()["rentalDurationId"] == "1-day" and notes.json()["notes"] == "Helmets please"
    # Confirming with a shorter duration frees the afternoon; with a longer one it is re-checked.
    too_long = await client.post(
        f"{path}/confirm", json={"contact": GUEST, "rentalDurationId": "3-days"}, headers=auth()
    )
    assert too_long.json()["error"] == "INVALID_RENTAL_DURATION_ID"
    confirmed = await client.post(
        f"{path}/confirm",
        json={"contact": GUEST, "rentalDurationId": "half-day"},
        headers=auth(capabilities=RENTALS),
    )
    assert confirmed.json()["status"] == "CONFIRMED" and confirmed.json()["rentalDurationId"] == "half-day"
    assert confirmed.json()["availability"]["localDateTimeEnd"] == "2026-06-02T13:00:00+01:00"
    assert (await free(client, "half-day", "2026-06-02", "2026-06-02", EBIKES))["06-02T13:00"] == 4
    tour = await reserve(client, reservation())
    on_tour = await client.patch(
        f"/octo/bookings/{tour['uuid']}", json={"rentalDurationId": "1-day"}, headers=auth()
    )
    assert on_tour.json()["error"] == "BAD_REQUEST"


async def test_confirm_with_a_longer_duration_is_refused_when_stock_runs_out(
    client: httpx.AsyncClient, demo: Services
) -> None:
    await reserve(client, rental("2026-06-02T13:00:00+01:00", "half-day", bikes=3, product=EBIKES))
    body = rental("2026-06-02T09:00:00+01:00", "half-day", bikes=2, product=EBIKES)
    await reserve(client, body)
    refused = await client.post(
        f"/octo/bookings/{body['uuid']}/confirm",
        json={"contact": GUEST, "rentalDurationId": "1-day"},
        headers=auth(),
    )
    assert refused.json()["error"] == "UNPROCESSABLE_ENTITY"
    held = (await client.get(f"/octo/bookings/{body['uuid']}", headers=auth(capabilities=RENTALS))).json()
    assert (held["status"], held["rentalDurationId"]) == ("ON_HOLD", "half-day")


async def test_a_rental_in_an_order(client: httpx.AsyncClient, demo: Services) -> None:
    before = await count_bookings(demo)
    order = await post(client, "/octo/orders", {"bookings": [
        rental("2026-06-02T09:00:00+01:00", "1-day", bikes=3, product=EBIKES),
        rental("2026-06-02T13:00:00+01:00", "half-day", bikes=2, product=EBIKES),
    ]}, "octo/cart, octo/rentals")  # fmt: skip
    assert order.json()["error"] == "UNPROCESSABLE_ENTITY"
    assert order.json()["errorMessage"].startswith("bookings[1]: ")
    assert await count_bookings(demo) == before
    fits = await post(client, "/octo/orders", {"bookings": [
        rental("2026-06-02T09:00:00+01:00", "1-day", bikes=3, product=EBIKES),
        rental("2026-06-02T13:00:00+01:00", "half-day", bikes=1, product=EBIKES),
    ]}, "octo/cart, octo/rentals")  # fmt: skip
    assert [b["rentalDurationId"] for b in fits.json()["bookings"]] == ["1-day", "half-day"]


async def test_availability_updates_cover_every_start_a_rental_overlaps(
    client: httpx.AsyncClient, demo: Services
) -> None:
    async with receiver() as target:
        await subscribe(client, target.url, event="availability_update")
        await reserve(client, rental("2026-06-02T13:00:00+01:00", "1-day", bikes=3, product=EBIKES))
        await drain(demo)
        seen = {p["availability"]["id"][5:16]: p["availability"] for p in target.payloads()}
        assert sorted(seen) == ["06-02T09:00", "06-02T13:00", "06-03T09:00"]
        # Described for the shortest duration (half-day): 09:00-13:00 on 2 June is free.
        assert {k: v["vacancies"] for k, v in seen.items()} == {
            "06-02T09:00": 4, "06-02T13:00": 1, "06-03T09:00": 1,
        }  # fmt: skip
        assert seen["06-02T09:00"]["localDateTimeEnd"] == "2026-06-02T13:00:00+01:00"
