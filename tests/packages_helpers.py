"""The package the octo/packages tests book, stated here rather than taken from the demo: a
one-day pass that bundles the booking tests' Thames cruise (timed) and Tower of Stories (opening
hours), with the kayak trip as an optional extra."""

from __future__ import annotations

from berth.domain.catalog import Catalog
from tests.bookings_helpers import booking_products
from tests.builders import Document, catalog, include_group, included, option, price, product, schedule, unit

PASS = {"productId": "harbour-city-pass", "optionId": "DEFAULT"}


def city_pass(extra: Document | None = None) -> Document:
    """The pass; `extra`: the include of its optional group (default: the kayak trip)."""
    extra = extra or included(
        "kayak", "sunset-kayak", required=False, availabilityRequired=True, validityDays=2
    )
    return product(
        PASS["productId"], availability_type="OPENING_HOURS", packageBookingAvailabilityRequired=True,
        options=[
            option(
                units=[
                    unit("adult", "ADULT", prices=[price(4500, vat=750)]),
                    unit("child", "CHILD", prices=[price(2200)], minAge=5, maxAge=15, accompaniedBy=["adult"]),
                ],
                cutoff_hours=24, restrictions={"minUnits": 1, "maxUnits": 10},
                schedules=[schedule(capacity=200, weekdays=("TUE", "WED", "THU", "FRI", "SAT", "SUN"),
                                    opening_hours=[("09:30", "17:30")])],
                packageIncludes=[
                    include_group("sights", [
                        included("cruise", "thames-sightseeing", availabilityRequired=True),
                        included("museum", "tower-of-stories", availabilityRequired=True),
                    ], title="Included sights"),
                    include_group("extras", [extra], title="Optional extra", count=1),
                ],
            )
        ],
    )  # fmt: skip


def packages_products() -> tuple[Document, ...]:
    return (*booking_products(), city_pass())


def packages_catalog() -> Catalog:
    """The booking tests' products and the pass."""
    return catalog(*packages_products())
