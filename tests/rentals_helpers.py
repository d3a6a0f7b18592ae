"""The bike hire the octo/rentals tests book, stated here rather than taken from the demo
(Europe/London; 12 hybrid bikes picked up at 09:00, 11:00, 13:00, 15:00 and 17:00, by default
for a day; 4 e-bikes at 09:00 and 13:00, by default for half a day)."""

from __future__ import annotations

from berth.domain.catalog import Catalog
from tests.bookings_helpers import booking_products
from tests.builders import Document, catalog, option, price, product, rental_duration, schedule, unit

BIKES = {"productId": "city-bike-hire", "optionId": "DEFAULT"}
EBIKES = {"productId": "city-bike-hire", "optionId": "ebike"}


def bike_hire() -> Document:
    hybrid = unit(
        "bike", "ADULT", minAge=14, maxAge=99,
        prices=[price(3000, currency="GBP", vat=500), price(3500, vat=583)],
    )  # fmt: skip
    ebike = unit(
        "bike", "ADULT", minAge=16, maxAge=99,
        prices=[price(5000, currency="GBP", vat=833), price(5800, vat=967)],
    )  # fmt: skip
    return product(
        BIKES["productId"], currency="GBP",
        options=[
            option(
                units=[hybrid], cutoff_hours=2, restrictions={"minUnits": 1, "maxUnits": 6},
                schedules=[schedule(("09:00", "11:00", "13:00", "15:00", "17:00"), capacity=12)],
                defaultRentalDurationId="1-day",
                rentalDurations=[
                    rental_duration("2-hours", 2, "hour", multiplier=0.4, title="2 hours"),
                    rental_duration("half-day", 4, "hour", multiplier=0.65, title="Half day", shortDescription="4 hours"),
                    rental_duration("1-day", 1, "day", title="1 day"),
                    rental_duration("3-days", 3, "day", multiplier=2.5, title="3 days"),
                ],
            ),
            option(
                EBIKES["optionId"], units=[ebike], cutoff_hours=2, restrictions={"minUnits": 1, "maxUnits": 4},
                schedules=[schedule(("09:00", "13:00"), capacity=4)],
                rentalDurations=[  # no defaultRentalDurationId: the first, half-day, is the default
                    rental_duration("half-day", 4, "hour", multiplier=0.6, title="Half day", shortDescription="4 hours"),
                    rental_duration("1-day", 1, "day", title="1 day"),
                ],
            ),
        ],
    )  # fmt: skip


def rentals_catalog() -> Catalog:
    """The booking tests' products and the bike hire."""
    return catalog(*booking_products(), bike_hire())
