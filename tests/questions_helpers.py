"""The sea kayak trip the octo/questions tests book, stated here rather than taken from the
demo (Europe/London, departures at 09:00 of 8 places). Every booking signs the product's
waiver and says whether the party can swim; every paddler gives a date of birth; a paddler may
leave an email for the photos and a weight; the `guided` option asks nothing more."""

from __future__ import annotations

from berth.domain.catalog import Catalog
from tests.bookings_helpers import booking_products
from tests.builders import Document, catalog, option, price, product, question, schedule, unit

KAYAK = {"productId": "sea-kayak", "optionId": "DEFAULT"}
GUIDED = {"productId": "sea-kayak", "optionId": "guided"}
DEPARTURE = "2026-06-02T09:00:00+01:00"
WAIVER = "a0000000-0000-4000-8000-000000000001"
SWIM = "a0000000-0000-4000-8000-000000000002"
BORN = "a0000000-0000-4000-8000-000000000003"
PHOTOS = "a0000000-0000-4000-8000-000000000004"
WEIGHT = "a0000000-0000-4000-8000-000000000005"
DIET = "a0000000-0000-4000-8000-000000000006"
NOTES = "a0000000-0000-4000-8000-000000000007"


def sea_kayak() -> Document:
    paddler = {
        **unit("paddler", "ADULT", prices=[price(6000, currency="GBP")]),
        "questions": [
            question(PHOTOS, "Email for the photos", format="email"),
            question(WEIGHT, "Weight in kg", format="number", description="For the kayak's balance"),
        ],
    }
    return product(
        KAYAK["productId"], currency="GBP",
        questions=[
            question(WAIVER, "I accept the risks of sea kayaking", input_type="radio", options=["accept"],
                     required=True, internalName="waiver"),
        ],
        options=[
            option(
                units=[paddler], schedules=[schedule(("09:00",), capacity=8)], cutoff_hours=2,
                questions=[
                    question(SWIM, "Can everyone in the party swim?", input_type="radio", options=["yes", "no"],
                             required=True),
                    question(BORN, "Date of birth", format="date", required=True, perUnit=True),
                    question(DIET, "Lunch", input_type="select", options=["meat", "vegetarian", "vegan"]),
                    question(NOTES, "Anything we should know?", maxLength=20),
                ],
            ),
            option(GUIDED["optionId"], units=[unit("paddler", "ADULT", prices=[price(8000, currency="GBP")])],
                   schedules=[schedule(("09:00",), capacity=8)], cutoff_hours=2),
        ],
    )  # fmt: skip


def questions_catalog() -> Catalog:
    """The booking tests' products (no questions) and the sea kayak trip."""
    return catalog(*booking_products(), sea_kayak())
