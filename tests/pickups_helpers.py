"""The coach tour the octo/pickups tests book, stated here rather than taken from the demo
(Europe/London, departures at 10:00 of 20 places): the DEFAULT option collects every guest at
one of two points; the `meet` option offers a pickup at the hotel but does not require one."""

from __future__ import annotations

from berth.domain.catalog import Catalog
from tests.bookings_helpers import booking_products
from tests.builders import Document, catalog, option, pickup_point, price, product, schedule, unit

COACH = {"productId": "highland-coach", "optionId": "DEFAULT"}
MEET = {"productId": "highland-coach", "optionId": "meet"}
DEPARTURE = "2026-06-02T10:00:00+01:00"
GRAND = "0b7e4c1e-3c55-4d4b-9a55-1f7f4a1d6a01"
STATION = "5d2f8f7a-8a0e-4c52-a0c0-4b3b0e9e7c02"
BRIDGE = "9c1d2e3f-4a5b-4c6d-8e7f-0a1b2c3d4e03"


def coach_tour() -> Document:
    adult = unit("adult", "ADULT", prices=[price(4500, currency="GBP", vat=750)])
    grand = pickup_point(
        GRAND, "Grand Hotel", 45, window=15, directions="Wait at the main entrance",
        street="1 Princes Street", postalCode="EH2 2EQ", locality="Edinburgh", country="GB",
        latitude=55.9533, longitude=-3.1883, googlePlaceId="ChIJ-grand",
    )  # fmt: skip
    station = pickup_point(STATION, "Waverley Station", 30, address="Waverley Bridge, Edinburgh")
    bridge = pickup_point(BRIDGE, "North Bridge", 20, window=5)
    return product(
        COACH["productId"], currency="GBP",
        options=[
            option(units=[adult], schedules=[schedule(("10:00",), capacity=20)], pickupRequired=True,
                   pickupPoints=[grand, station, bridge]),
            option(MEET["optionId"], units=[adult], schedules=[schedule(("10:00",), capacity=20)],
                   pickupPoints=[grand]),
        ],
    )  # fmt: skip


def pickups_catalog() -> Catalog:
    """The booking tests' products (no pickups) and the coach tour."""
    return catalog(*booking_products(), coach_tour())
