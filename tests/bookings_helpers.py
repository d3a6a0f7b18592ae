"""Small builders for booking tests, and the catalogue the booking lifecycle tests book
(`booking_catalog`, loaded by the `bookable` fixture)."""

from __future__ import annotations

import uuid
from typing import Any

import httpx

from berth.domain.catalog import Catalog
from tests.builders import EVERY_DAY, Document, catalog, option, price, product, schedule, unit
from tests.conftest import KEY_A, auth

SLOT = "2026-06-02T10:00:00+01:00"
TOUR = {"productId": "thames-sightseeing", "optionId": "DEFAULT"}
KAYAK = {"productId": "sunset-kayak", "optionId": "DEFAULT"}
MUSEUM = {"productId": "tower-of-stories", "optionId": "DEFAULT"}
GUEST = {"firstName": "Ada", "lastName": "Lovelace", "emailAddress": "ada@example.com"}


def reservation(
    units: tuple[str, ...] = ("adult", "adult"), availability_id: str = SLOT, **extra: Any
) -> dict[str, Any]:
    return {
        "uuid": str(uuid.uuid4()),
        **TOUR,
        "availabilityId": availability_id,
        "unitItems": [{"unitId": u} for u in units],
        **extra,
    }


async def reserve(
    client: httpx.AsyncClient, body: dict[str, Any] | None = None, key: str = KEY_A, **headers: str
) -> dict[str, Any]:
    response = await client.post("/octo/bookings", json=body or reservation(), headers=auth(key, **headers))
    assert response.status_code == 200, response.text
    result: dict[str, Any] = response.json()
    return result


async def confirm(
    client: httpx.AsyncClient, booking_uuid: str, key: str = KEY_A, **extra: Any
) -> httpx.Response:
    return await client.post(
        f"/octo/bookings/{booking_uuid}/confirm", json={"contact": GUEST, **extra}, headers=auth(key)
    )


async def vacancies(
    client: httpx.AsyncClient, availability_id: str = SLOT, product: dict[str, str] = TOUR
) -> int:
    response = await client.post(
        "/octo/availability", json={**product, "availabilityIds": [availability_id]}, headers=auth()
    )
    value = response.json()[0]["vacancies"]
    assert isinstance(value, int)
    return value


def booking_catalog() -> Catalog:
    """What the booking lifecycle tests book, stated here rather than taken from the demo:
    a cruise of 20 places at four daily departures (with an evening option), a kayak trip the
    supplier confirms by hand, and a museum open by the day."""
    return catalog(*booking_products())


def booking_products() -> tuple[Document, ...]:
    """The products of `booking_catalog`, for tests that add their own to them."""
    adult = unit(
        "adult",
        "ADULT",
        prices=[price(2500, original=2800, vat=417, vat_original=467), price(2200, currency="GBP", vat=367)],
        minAge=16,
    )
    child = unit(
        "child", "CHILD", prices=[price(1500, vat=250), price(1300, currency="GBP", vat=217)],
        minAge=3, maxAge=15, accompaniedBy=["adult"],
    )  # fmt: skip
    evening_adult = unit("adult", "ADULT", prices=[price(3500), price(3000, currency="GBP")], minAge=18)
    cruise = product(
        TOUR["productId"],
        deliveryFormats=["QRCODE", "AZTECCODE"],
        content={
            "en-GB": {"title": "Thames Sightseeing Cruise", "shortDescription": "An hour on the Thames."},
            "de-DE": {"title": "Sightseeing-Bootsfahrt auf der Themse", "shortDescription": "Eine Stunde."},
        },
        options=[
            option(
                units=[adult, child],
                schedules=[schedule(("10:00", "12:00", "14:00", "16:00"), capacity=20)],
                salesCutoffMinutes=15, restrictions={"minUnits": 1, "maxUnits": 12}, closedDates=["2026-12-25"],
            ),
            option(
                "evening", units=[evening_adult], cutoff_hours=2,
                schedules=[schedule(("19:30",), capacity=30, weekdays=("THU", "FRI", "SAT"),
                                    valid_from="2026-04-01", valid_until="2026-10-31")],
            ),
        ],
    )  # fmt: skip
    kayak = product(
        KAYAK["productId"], instantConfirmation=False, deliveryFormats=["CODE128"], deliveryMethods=["VOUCHER"],
        redemptionMethod="MANIFEST", pricingPer="BOOKING",
        options=[
            option(
                units=[unit("paddler", "ADULT", minAge=12, maxAge=75)], cutoff_hours=48,
                required_contact=("firstName", "lastName", "emailAddress", "phoneNumber"),
                schedules=[schedule(("18:00",), capacity=6, weekdays=("WED", "FRI", "SAT", "SUN"))],
                bookingPrices=[price(24000)],
            )
        ],
    )  # fmt: skip
    museum = product(
        MUSEUM["productId"], availability_type="OPENING_HOURS", content={"en-GB": {"title": "Tower of Stories"}},
        options=[
            option(
                units=[
                    unit("adult", "ADULT", prices=[price(1800, vat=300)]),
                    unit("child", "CHILD", prices=[price(900)], minAge=5, maxAge=15, accompaniedBy=["adult", "family"]),
                    unit("family", "FAMILY", prices=[price(4800)], paxCount=4, maxQuantity=2),
                ],
                required_contact=("firstName", "lastName"),
                closedDates=["2026-12-25", "2026-12-26", "2027-01-01"],
                schedules=[schedule(capacity=300, weekdays=EVERY_DAY[1:], opening_hours=[("09:30", "17:30")])],
            )
        ],
    )  # fmt: skip
    return cruise, kayak, museum
