"""The lunch cruise the octo/extras tests book, stated here rather than taken from the demo
(Europe/London, GBP and EUR, departures at 12:00 of 30 places). Its DEFAULT option sells lunch
per guest (one each, 5 per departure), a photo package per booking (one at most) and
champagne per booking (2 bottles per departure); its `deck` option needs a blanket per booking."""

from __future__ import annotations

from berth.domain.catalog import Catalog
from tests.bookings_helpers import booking_products
from tests.builders import Document, catalog, extra, option, price, product, schedule, unit

CRUISE = {"productId": "lunch-cruise", "optionId": "DEFAULT"}
DECK = {"productId": "lunch-cruise", "optionId": "deck"}
NOON = "2026-06-02T12:00:00+01:00"
NEXT_NOON = "2026-06-03T12:00:00+01:00"
LUNCH_STOCK = 5


def lunch_cruise() -> Document:
    guest = unit("guest", "ADULT", prices=[price(3000, currency="GBP", vat=500), price(3500, vat=583)])
    return product(
        CRUISE["productId"], currency="GBP",
        options=[
            option(
                units=[guest], cutoff_hours=2, schedules=[schedule(("12:00",), capacity=30)],
                extras=[
                    extra("photos", [price(2000, currency="GBP"), price(2300)], title="Photo package", maxQuantity=1),
                    extra("champagne", [price(4500, currency="GBP", vat=750), price(5200, vat=867)], stock=2),
                    extra("lunch", [price(1500, currency="GBP", vat=250), price(1700, vat=283)], perUnit=True,
                          maxQuantity=1, stock=LUNCH_STOCK, title="Two-course lunch", default=True),
                ],
            ),
            option(
                DECK["optionId"], units=[guest], cutoff_hours=2, schedules=[schedule(("12:00",), capacity=30)],
                extras=[extra("blanket", [price(500, currency="GBP"), price(600)], minQuantity=1, maxQuantity=2)],
            ),
        ],
    )  # fmt: skip


def extras_catalog() -> Catalog:
    """The booking tests' products (no extras) and the lunch cruise."""
    return catalog(*booking_products(), lunch_cruise())
