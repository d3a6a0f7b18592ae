"""octo/rentals through the OCTO routes, on the rentals tests' bike hire (`tests.rentals_helpers`:
Europe/London; 12 hybrid bikes picked up at 09:00, 11:00, 13:00, 15:00 and 17:00; 4 e-bikes
at 09:00 and 13:00).
Clock: 2026-06-01T08:00Z (Monday, 09:00 in London)."""

from __future__ import annotations

import uuid
from typing import Any

import httpx
from sqlalchemy import func, select

from berth.container import Services
from berth.domain.staff import COMMAND_LINE
from berth.store.tables import bookings
from tests.bookings_helpers import GUEST, booking_products, reservation, reserve
from tests.builders import catalog, included, load
from tests.conftest import auth
from tests.packages_helpers import city_pass
from tests.receivers import receiver
from tests.rentals_helpers import BIKES, EBIKES, bike_hire
from tests.test_catalog_import import MINIMAL
from tests.test_webhooks import drain, subscribe

RENTALS = "octo/rentals"
PRICED = "octo/pricing, octo/rentals"


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
    client: httpx.AsyncClient, path: str, body: Any, capabilities: str | None = RENTALS
) -> httpx.Response:
    return await client.post(path, json=body, headers=auth(capabilities=capabilities))


async def hire(
    client: httpx.AsyncClient, body: dict[str, Any], capabilities: str | None = RENTALS
) -> dict[str, Any]:
    """Reserve a rental (by default with octo/rentals, so its rentalDurationId applies)."""
    response = await post(client, "/octo/bookings", body, capabilities)
    assert response.status_code == 200, response.text
    booking: dict[str, Any] = response.json()
    return booking


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


async def test_rental_fields_only_with_the_capability(client: httpx.AsyncClient, rentable: Services) -> None:
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
    client: httpx.AsyncClient, rentable: Services
) -> None:
    path = "/octo/products/city-bike-hire"
    product = (await client.get(path, headers=auth(capabilities="octo/pricing, octo/rentals"))).json()
    bike = product["options"][0]["units"][0]
    assert [(p["currency"], p["retail"]) for p in bike["pricingFrom"]] == [("GBP", 1200), ("EUR", 1400)]
    # Without octo/rentals only the default duration (1 day, x 1) is sold: it is the lowest price.
    core = (await client.get(path, headers=auth(capabilities="octo/pricing"))).json()
    assert [(p["currency"], p["retail"]) for p in core["options"][0]["units"][0]["pricingFrom"]] == [
        ("GBP", 3000), ("EUR", 3500),
    ]  # fmt: skip
    ebike = core["options"][1]["units"][0]["pricingFrom"][0]
    assert (ebike["currency"], ebike["retail"]) == ("GBP", 3000)  # half-day, x 0.6
    check = {**BIKES, "availabilityIds": ["2026-06-02T09:00:00+01:00"], "rentalDurationId": "3-days"}
    slot = (await post(client, "/octo/availability", check, "octo/pricing")).json()[0]
    assert slot["unitPricing"][0]["retail"] == 3000  # the default day's price: 3 days is ignored


# --- availability ----------------------------------------------------------------------------


async def test_a_three_day_rental_blocks_three_days_and_a_short_one_takes_what_is_left(
    client: httpx.AsyncClient, rentable: Services
) -> None:
    assert set((await free(client, "2-hours", "2026-06-02", "2026-06-05")).values()) == {12}
    three = await hire(client, rental("2026-06-02T09:00:00+01:00", "3-days", bikes=6))
    assert three["availability"]["localDateTimeEnd"] == "2026-06-05T09:00:00+01:00"
    await hire(client, rental("2026-06-02T09:00:00+01:00", "3-days", bikes=4))
    short = await free(client, "2-hours", "2026-06-01", "2026-06-05")
    assert short["06-01T17:00"] == 12
    assert {short[f"06-0{d}T{h}:00"] for d in (2, 3, 4) for h in ("09", "11", "13", "15", "17")} == {2}
    assert short["06-05T09:00"] == 12  # due back at 09:00: free again from 09:00
    day = await free(client, "1-day", "2026-06-01", "2026-06-05")
    assert day["06-01T09:00"] == 0  # 09:00 in London now: past its sales cutoff (CLOSED)
    assert (day["06-01T11:00"], day["06-04T17:00"], day["06-05T09:00"]) == (2, 2, 12)

    await hire(client, rental("2026-06-03T13:00:00+01:00", "2-hours"))
    short = await free(client, "2-hours", "2026-06-03", "2026-06-03")
    assert (short["06-03T11:00"], short["06-03T13:00"], short["06-03T15:00"]) == (2, 1, 2)
    assert (await free(client, "3-days", "2026-06-01", "2026-06-01"))["06-01T11:00"] == 1
    assert (await free(client, "half-day", "2026-06-03", "2026-06-03"))["06-03T11:00"] == 1

    before = await count_bookings(rentable)
    refused = await post(client, "/octo/bookings", rental("2026-06-03T11:00:00+01:00", "half-day", bikes=2))
    assert refused.json()["error"] == "UNPROCESSABLE_ENTITY"
    assert "sold out for a rental until 2026-06-03T15:00:00+01:00" in refused.json()["errorMessage"]
    assert await count_bookings(rentable) == before
    slot = (await post(client, "/octo/availability", {**BIKES, "availabilityIds": ["2026-06-03T13:00:00+01:00"],
                                                     "rentalDurationId": "2-hours", "units": [{"id": "bike", "quantity": 2}]})).json()  # fmt: skip
    assert (slot[0]["status"], slot[0]["vacancies"], slot[0]["capacity"]) == ("SOLD_OUT", 1, 12)
    assert slot[0]["localDateTimeEnd"] == "2026-06-03T15:00:00+01:00"
    assert "rentalDurationId" not in slot[0]  # rentals add no availability fields


async def test_stock_is_per_option(client: httpx.AsyncClient, rentable: Services) -> None:
    await hire(client, rental("2026-06-02T09:00:00+01:00", "1-day", bikes=4, product=EBIKES))
    assert await free(client, "half-day", "2026-06-02", "2026-06-03", EBIKES) == {
        "06-02T09:00": 0, "06-02T13:00": 0, "06-03T09:00": 4, "06-03T13:00": 4,
    }  # fmt: skip
    assert (await free(client, "2-hours", "2026-06-02", "2026-06-02"))["06-02T09:00"] == 12


async def test_calendar_and_batches_take_the_duration(client: httpx.AsyncClient, rentable: Services) -> None:
    await hire(client, rental("2026-06-02T13:00:00+01:00", "1-day", bikes=3, product=EBIKES))
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


async def test_prices_follow_the_duration(client: httpx.AsyncClient, rentable: Services) -> None:
    body = {
        **BIKES,
        "availabilityIds": ["2026-06-02T09:00:00+01:00"],
        "units": [{"id": "bike", "quantity": 2}],
    }
    three = (
        await post(client, "/octo/availability", {**body, "rentalDurationId": "3-days", "currency": "EUR"},
                   "octo/pricing, octo/rentals")
    ).json()[0]  # fmt: skip
    assert three["unitPricing"][0]["retail"] == 8750
    assert three["unitPricing"][0]["includedTaxes"][0]["retail"] == 1458  # 583 x 2.5 = 1457.5, half up
    assert (three["pricing"]["retail"], three["pricing"]["includedTaxes"][0]["retail"]) == (17500, 2916)
    short = (
        await post(client, "/octo/availability", {**body, "rentalDurationId": "2-hours"}, PRICED)
    ).json()[0]
    assert (short["pricing"]["retail"], short["pricing"]["net"]) == (2400, 1920)
    day = (
        await post(client, "/octo/availability/calendar", {**BIKES, "localDateStart": "2026-06-02",
                   "localDateEnd": "2026-06-02", "rentalDurationId": "half-day"}, PRICED)
    ).json()[0]  # fmt: skip
    assert day["unitPricingFrom"][0]["retail"] == 1950  # 3000 x 0.65
    booking = await hire(client, rental("2026-06-02T09:00:00+01:00", "3-days", bikes=2), PRICED)
    assert booking["pricing"]["retail"] == 15000
    assert [item["pricing"]["retail"] for item in booking["unitItems"]] == [7500, 7500]


# --- bookings --------------------------------------------------------------------------------


async def test_booking_fields_only_with_the_capability(client: httpx.AsyncClient, rentable: Services) -> None:
    body = rental("2026-06-02T11:00:00+01:00", "half-day")
    await hire(client, body)
    plain = (await client.get(f"/octo/bookings/{body['uuid']}", headers=auth())).json()
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


async def test_bad_durations(client: httpx.AsyncClient, rentable: Services) -> None:
    before = await count_bookings(rentable)
    slot = "2026-06-02T09:00:00+01:00"
    for body in (rental(slot, "fortnight"), rental(slot, "3-days", product=EBIKES), rental(slot, "")):
        answer = (await post(client, "/octo/bookings", body)).json()
        assert answer["error"] == "INVALID_RENTAL_DURATION_ID"
        assert answer["rentalDurationId"] == body["rentalDurationId"]
    on_a_cruise = (await post(client, "/octo/bookings", reservation(rentalDurationId="1-day"))).json()
    assert on_a_cruise["error"] == "BAD_REQUEST"
    not_text = (await post(client, "/octo/bookings", {**rental(slot, None), "rentalDurationId": 3})).json()
    assert not_text["error"] == "BAD_REQUEST"
    assert await count_bookings(rentable) == before
    check = {**BIKES, "localDate": "2026-06-02"}
    unknown = (await post(client, "/octo/availability", {**check, "rentalDurationId": "fortnight"})).json()
    assert unknown == {
        "error": "INVALID_RENTAL_DURATION_ID",
        "errorMessage": "The rental duration 'fortnight' is not a rental duration of option 'DEFAULT': "
        "send one of 2-hours, half-day, 1-day, 3-days, or leave rentalDurationId out for the default, 1-day",
        "rentalDurationId": "fortnight",
    }
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


async def test_an_option_with_one_duration_needs_no_id(client: httpx.AsyncClient, rentable: Services) -> None:
    await rentable.catalog.import_text(
        MINIMAL.replace("capacity: 12", "capacity: 2").replace(
            "        units:\n",
            "        rentalDurations: [{id: 1d, title: 1 day, durationAmount: 1, durationUnit: day}]\n"
            "        units:\n",
        ),
        actor=COMMAND_LINE,
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


async def test_changing_the_duration_rechecks_the_stock(
    client: httpx.AsyncClient, rentable: Services
) -> None:
    blocker = rental("2026-06-03T09:00:00+01:00", "1-day", bikes=3, product=EBIKES)
    await hire(client, blocker)
    body = rental("2026-06-02T09:00:00+01:00", "half-day", bikes=2, product=EBIKES)
    await hire(client, body)
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
    wrong = await client.patch(path, json={"rentalDurationId": "3-days"}, headers=auth(capabilities=RENTALS))
    assert (
        wrong.json()["error"] == "INVALID_RENTAL_DURATION_ID" and wrong.json()["rentalDurationId"] == "3-days"
    )
    notes = await client.patch(path, json={"notes": "Helmets please"}, headers=auth(capabilities=RENTALS))
    assert notes.json()["rentalDurationId"] == "1-day" and notes.json()["notes"] == "Helmets please"
    # Confirming with a shorter duration frees the afternoon; with a longer one it is re-checked.
    too_long = await client.post(
        f"{path}/confirm",
        json={"contact": GUEST, "rentalDurationId": "3-days"},
        headers=auth(capabilities=RENTALS),
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
        f"/octo/bookings/{tour['uuid']}",
        json={"rentalDurationId": "1-day"},
        headers=auth(capabilities=RENTALS),
    )
    assert on_tour.json()["error"] == "BAD_REQUEST"


async def test_confirm_with_a_longer_duration_is_refused_when_stock_runs_out(
    client: httpx.AsyncClient, rentable: Services
) -> None:
    await hire(client, rental("2026-06-02T13:00:00+01:00", "half-day", bikes=3, product=EBIKES))
    body = rental("2026-06-02T09:00:00+01:00", "half-day", bikes=2, product=EBIKES)
    await hire(client, body)
    refused = await client.post(
        f"/octo/bookings/{body['uuid']}/confirm",
        json={"contact": GUEST, "rentalDurationId": "1-day"},
        headers=auth(capabilities=RENTALS),
    )
    assert refused.json()["error"] == "UNPROCESSABLE_ENTITY"
    held = (await client.get(f"/octo/bookings/{body['uuid']}", headers=auth(capabilities=RENTALS))).json()
    assert (held["status"], held["rentalDurationId"]) == ("ON_HOLD", "half-day")


async def test_a_rental_in_an_order(client: httpx.AsyncClient, rentable: Services) -> None:
    before = await count_bookings(rentable)
    order = await post(client, "/octo/orders", {"bookings": [
        rental("2026-06-02T09:00:00+01:00", "1-day", bikes=3, product=EBIKES),
        rental("2026-06-02T13:00:00+01:00", "half-day", bikes=2, product=EBIKES),
    ]}, "octo/cart, octo/rentals")  # fmt: skip
    assert order.json()["error"] == "UNPROCESSABLE_ENTITY"
    assert order.json()["errorMessage"].startswith("bookings[1]: ")
    assert await count_bookings(rentable) == before
    fits = await post(client, "/octo/orders", {"bookings": [
        rental("2026-06-02T09:00:00+01:00", "1-day", bikes=3, product=EBIKES),
        rental("2026-06-02T13:00:00+01:00", "half-day", bikes=1, product=EBIKES),
    ]}, "octo/cart, octo/rentals")  # fmt: skip
    assert [b["rentalDurationId"] for b in fits.json()["bookings"]] == ["1-day", "half-day"]


async def test_availability_updates_cover_every_start_a_rental_overlaps(
    client: httpx.AsyncClient, rentable: Services
) -> None:
    async with receiver() as target:
        await subscribe(client, target.url, event="availability_update")
        await hire(client, rental("2026-06-02T13:00:00+01:00", "1-day", bikes=3, product=EBIKES))
        await drain(rentable)
        seen = {p["availability"]["id"][5:16]: p["availability"] for p in target.payloads()}
        assert sorted(seen) == ["06-02T09:00", "06-02T13:00", "06-03T09:00"]
        # Described for the default duration (half-day): 09:00-13:00 on 2 June is free.
        assert {k: v["vacancies"] for k, v in seen.items()} == {
            "06-02T09:00": 4, "06-02T13:00": 1, "06-03T09:00": 1,
        }  # fmt: skip
        assert seen["06-02T09:00"]["localDateTimeEnd"] == "2026-06-02T13:00:00+01:00"


async def test_availability_updates_describe_the_default_duration(
    client: httpx.AsyncClient, rentable: Services
) -> None:
    async with receiver() as target:
        await subscribe(client, target.url, event="availability_update")
        await hire(client, rental("2026-06-02T13:00:00+01:00", "2-hours"))
        await drain(rentable)
        seen = {p["availability"]["id"]: p["availability"] for p in target.payloads()}
        # The hybrid bike's declared default is 1 day (not its shortest duration, 2 hours).
        one = seen["2026-06-02T13:00:00+01:00"]
        assert (one["localDateTimeEnd"], one["vacancies"]) == ("2026-06-03T13:00:00+01:00", 11)


# --- the default duration: without octo/rentals, or without a rentalDurationId ----------------

NO_RENTAL_KEYS = {"isRental", "rentalDurationId", "rentalDuration"}


async def test_without_the_capability_availability_is_for_the_default_duration(
    client: httpx.AsyncClient, rentable: Services
) -> None:
    check = {**BIKES, "localDate": "2026-06-02"}
    plain = await post(client, "/octo/availability", check, None)
    assert plain.status_code == 200, plain.text
    # Declared default of the hybrid bike: 1 day; the e-bike declares none: its first, half-day.
    assert [(s["id"][11:16], s["localDateTimeEnd"][5:16]) for s in plain.json()] == [
        ("09:00", "06-03T09:00"), ("11:00", "06-03T11:00"), ("13:00", "06-03T13:00"),
        ("15:00", "06-03T15:00"), ("17:00", "06-03T17:00"),
    ]  # fmt: skip
    for ignored in ("2-hours", "fortnight", ""):  # a rentalDurationId without octo/rentals is ignored
        again = await post(client, "/octo/availability", {**check, "rentalDurationId": ignored}, None)
        assert again.json() == plain.json()
    ebikes = await post(client, "/octo/availability", {**EBIKES, "localDate": "2026-06-02"}, None)
    assert [s["localDateTimeEnd"][11:16] for s in ebikes.json()] == ["13:00", "17:00"]
    cruise = {"productId": "thames-sightseeing", "optionId": "DEFAULT", "localDate": "2026-06-02"}
    on_a_cruise = await post(client, "/octo/availability", {**cruise, "rentalDurationId": "1-day"}, None)
    assert on_a_cruise.status_code == 200, on_a_cruise.text

    body = {**EBIKES, "localDateStart": "2026-06-01", "localDateEnd": "2026-06-03"}
    days = await post(client, "/octo/availability/calendar", body, None)
    assert days.status_code == 200, days.text
    assert [d["vacancies"] for d in days.json()] == [4, 4, 4]
    ignored_days = await post(client, "/octo/availability/calendar", {**body, "rentalDurationId": "x"}, None)
    assert ignored_days.json() == days.json()
    batch = await post(
        client, "/octo/availability/batch", [check, {**check, "rentalDurationId": "3-days"}], None
    )
    assert batch.status_code == 200, batch.text
    assert [r["localDateTimeEnd"][5:16] for r in batch.json()][:2] == ["06-03T09:00", "06-03T11:00"]
    assert batch.json()[:5] == batch.json()[5:]
    calendars = await post(
        client, "/octo/availability/calendar/batch", [body, {**body, "rentalDurationId": "x"}], None
    )
    assert calendars.status_code == 200, calendars.text
    assert [d["vacancies"] for d in calendars.json()] == [4, 4, 4] * 2

    # The default duration is what is held: a day from 13:00 on 2 June on 3 of the 4 e-bikes.
    await hire(client, rental("2026-06-02T13:00:00+01:00", "1-day", bikes=3, product=EBIKES))
    after = await post(client, "/octo/availability", {**EBIKES, "localDateStart": "2026-06-02",
                                                      "localDateEnd": "2026-06-03"}, None)  # fmt: skip
    assert [(s["id"][5:16], s["vacancies"]) for s in after.json()] == [
        ("06-02T09:00", 4), ("06-02T13:00", 1), ("06-03T09:00", 1), ("06-03T13:00", 4),
    ]  # fmt: skip
    assert not any(NO_RENTAL_KEYS & slot.keys() for slot in after.json())


async def test_without_the_capability_a_rental_is_booked_at_its_default_duration(
    client: httpx.AsyncClient, rentable: Services
) -> None:
    body = rental("2026-06-02T13:00:00+01:00", "3-days", bikes=5)  # its rentalDurationId is ignored
    booking = await hire(client, body, None)
    assert booking["availability"]["localDateTimeEnd"] == "2026-06-03T13:00:00+01:00"
    assert not NO_RENTAL_KEYS & booking.keys()
    path = f"/octo/bookings/{body['uuid']}"
    shown = (await client.get(path, headers=auth(capabilities=RENTALS))).json()
    assert (shown["isRental"], shown["rentalDurationId"]) == (True, "1-day")
    # Stored with its interval: 5 bikes out from 13:00 on 2 June to 13:00 on 3 June.
    short = await free(client, "2-hours", "2026-06-02", "2026-06-03")
    assert (short["06-02T11:00"], short["06-02T13:00"], short["06-03T11:00"], short["06-03T13:00"]) == (
        12, 7, 7, 12,
    )  # fmt: skip
    patched = await client.patch(
        path, json={"notes": "Helmets", "rentalDurationId": "2-hours"}, headers=auth()
    )
    assert patched.status_code == 200, patched.text
    assert patched.json()["availability"]["localDateTimeEnd"] == "2026-06-03T13:00:00+01:00"
    assert not NO_RENTAL_KEYS & patched.json().keys()
    confirmed = await client.post(
        f"{path}/confirm", json={"contact": GUEST, "rentalDurationId": "2-hours"}, headers=auth()
    )
    assert confirmed.status_code == 200, confirmed.text
    assert confirmed.json()["status"] == "CONFIRMED"
    assert confirmed.json()["availability"]["localDateTimeEnd"] == "2026-06-03T13:00:00+01:00"
    assert not NO_RENTAL_KEYS & confirmed.json().keys()
    assert (await client.get(path, headers=auth(capabilities=RENTALS))).json()["rentalDurationId"] == "1-day"

    ebike = await hire(client, rental("2026-06-02T09:00:00+01:00", None, product=EBIKES), None)
    assert ebike["availability"]["localDateTimeEnd"] == "2026-06-02T13:00:00+01:00"  # half-day
    tour = await reserve(client, reservation(rentalDurationId="1-day"))  # not a rental: ignored too
    assert not NO_RENTAL_KEYS & tour.keys()
    order = await post(client, "/octo/orders", {"bookings": [rental("2026-06-03T09:00:00+01:00", None)]},
                       "octo/cart")  # fmt: skip
    assert order.status_code == 200, order.text
    assert order.json()["bookings"][0]["availability"]["localDateTimeEnd"] == "2026-06-04T09:00:00+01:00"


async def test_with_the_capability_no_rental_duration_id_means_the_default(
    client: httpx.AsyncClient, rentable: Services
) -> None:
    slots = await post(client, "/octo/availability", {**BIKES, "localDate": "2026-06-02"})
    assert slots.status_code == 200, slots.text
    assert slots.json()[0]["localDateTimeEnd"] == "2026-06-03T09:00:00+01:00"
    days = await post(client, "/octo/availability/calendar",
                      {**EBIKES, "localDateStart": "2026-06-02", "localDateEnd": "2026-06-03"})  # fmt: skip
    assert days.status_code == 200, days.text
    batch = await post(client, "/octo/availability/batch", [{**EBIKES, "localDate": "2026-06-02"}])
    assert [s["localDateTimeEnd"][11:16] for s in batch.json()] == ["13:00", "17:00"]
    booking = await hire(client, rental("2026-06-02T11:00:00+01:00", None))
    assert (booking["rentalDurationId"], booking["rentalDuration"]["id"]) == ("1-day", "1-day")
    ebike = await hire(client, rental("2026-06-02T13:00:00+01:00", None, product=EBIKES))
    assert ebike["rentalDurationId"] == "half-day"
    assert ebike["availability"]["localDateTimeEnd"] == "2026-06-02T17:00:00+01:00"
    priced = await hire(client, rental("2026-06-03T11:00:00+01:00", None), PRICED)
    assert priced["pricing"]["retail"] == 3000  # the day's price, x 1


async def test_a_rental_keeps_its_own_duration_when_changed_without_the_capability(
    client: httpx.AsyncClient, rentable: Services
) -> None:
    body = rental("2026-06-02T09:00:00+01:00", "3-days", bikes=2)  # not the default (1 day)
    await hire(client, body)
    path = f"/octo/bookings/{body['uuid']}"
    notes = await client.patch(path, json={"notes": "Helmets"}, headers=auth())
    assert notes.json()["availability"]["localDateTimeEnd"] == "2026-06-05T09:00:00+01:00"
    moved = await client.patch(
        path,
        json={"availabilityId": "2026-06-02T11:00:00+01:00", "rentalDurationId": "2-hours"},
        headers=auth(),
    )
    assert moved.status_code == 200, moved.text
    assert moved.json()["availability"]["localDateTimeEnd"] == "2026-06-05T11:00:00+01:00"  # still 3 days
    null = await client.patch(path, json={"rentalDurationId": None}, headers=auth(capabilities=RENTALS))
    assert null.status_code == 200, null.text
    assert null.json()["rentalDurationId"] == "3-days"  # null is the same as leaving it out
    confirmed = await client.post(f"{path}/confirm", json={"contact": GUEST}, headers=auth())
    assert confirmed.json()["status"] == "CONFIRMED"
    assert confirmed.json()["availability"]["localDateTimeEnd"] == "2026-06-05T11:00:00+01:00"
    shown = (await client.get(path, headers=auth(capabilities=RENTALS))).json()
    assert (shown["rentalDurationId"], shown["availability"]["localDateTimeEnd"]) == (
        "3-days", "2026-06-05T11:00:00+01:00",
    )  # fmt: skip
    assert (await free(client, "2-hours", "2026-06-04", "2026-06-05"))["06-04T15:00"] == 10

    held = rental("2026-06-03T09:00:00+01:00", "half-day", product=EBIKES)  # the e-bike's default
    await hire(client, held)
    confirm = await client.post(
        f"/octo/bookings/{held['uuid']}/confirm", json={"contact": GUEST, "rentalDurationId": "1-day"},
        headers=auth(),
    )  # fmt: skip
    assert confirm.json()["availability"]["localDateTimeEnd"] == "2026-06-03T13:00:00+01:00"


async def test_an_ignored_rental_duration_id_does_not_make_a_repeat_differ(
    client: httpx.AsyncClient, rentable: Services
) -> None:
    before = await count_bookings(rentable)
    body = rental("2026-06-02T09:00:00+01:00", "3-days")
    first = await hire(client, body, None)
    assert (await hire(client, {**body, "rentalDurationId": "2-hours"}, None))["id"] == first["id"]
    without = {key: value for key, value in body.items() if key != "rentalDurationId"}
    assert (await hire(client, without, None))["id"] == first["id"]
    # With octo/rentals and no rentalDurationId it is the same request (the default duration) ...
    assert (await hire(client, without))["id"] == first["id"]
    # ... but naming 3 days asks for another booking than the day this uuid holds.
    differs = await post(client, "/octo/bookings", body)
    assert differs.json()["error"] == "INVALID_BOOKING_UUID"
    assert await count_bookings(rentable) == before + 1


async def test_a_package_books_a_rental_include_at_its_default_duration(
    client: httpx.AsyncClient, rentable: Services
) -> None:
    bikes = included("bikes", "city-bike-hire", required=False, availabilityRequired=True, validityDays=2)
    await load(rentable, catalog(*booking_products(), bike_hire(), city_pass(bikes)))
    for _ in range(2):  # every bike, until 3 June
        await hire(client, rental("2026-06-02T09:00:00+01:00", "1-day", bikes=6))
    day = {"productId": "harbour-city-pass", "optionId": "DEFAULT", "localDate": "2026-06-02"}
    found = await post(client, "/octo/availability", day, "octo/packages")
    assert found.status_code == 200, found.text
    bikes = {
        a["id"][11:16]: (a["vacancies"], a["localDateTimeEnd"][5:16])
        for a in found.json()[0]["packageAvailabilities"]
        if a["id"].startswith("2026-06-02T") and a["id"][11:16] in ("11:00", "15:00")
    }
    assert bikes == {"11:00": (0, "06-03T11:00"), "15:00": (0, "06-03T15:00")}
    museum = (await post(client, "/octo/availability", {"productId": "tower-of-stories", "optionId": "DEFAULT",
                                                        "localDate": "2026-06-02"}, None)).json()[0]["id"]  # fmt: skip
    package = {
        "uuid": str(uuid.uuid4()), **{k: day[k] for k in ("productId", "optionId")},
        "availabilityId": found.json()[0]["id"], "unitItems": [{"unitId": "adult"}],
        "packageBookings": [
            {"includeId": "cruise", "availabilityId": "2026-06-02T10:00:00+01:00"},
            {"includeId": "museum", "availabilityId": museum},
            {"includeId": "bikes", "availabilityId": "2026-06-03T09:00:00+01:00"},
        ],
    }  # fmt: skip
    booked = await post(client, "/octo/bookings", package, "octo/packages")
    assert booked.status_code == 200, booked.text
    member = next(b for b in booked.json()["packageBookings"] if b["productId"] == "city-bike-hire")
    assert member["availability"]["localDateTimeEnd"] == "2026-06-04T09:00:00+01:00"
