"""The catalogue the octo/resources tests book, stated here rather than taken from the demo:
the booking tests' products, a harbour cruise with two seated boats (a party sits on one) and
two coaches (a party may be split), and a RIB ride whose two boats (6 and 8 places) never
split a party. `seat_parties` puts three box-office parties on one departure."""

from __future__ import annotations

from berth.container import Services
from berth.domain.catalog import Catalog
from tests.bookings_helpers import booking_products
from tests.builders import (
    Document,
    catalog,
    confirmed_booking,
    option,
    price,
    product,
    resource,
    resource_group,
    schedule,
    seat_map,
    unit,
)

CRUISE = {"productId": "harbour-cruise", "optionId": "DEFAULT"}
RIB = {"productId": "river-rib", "optionId": "DEFAULT"}
BOOKED_TEN = "2026-06-02T10:00:00+01:00"  # the `seated` fixture's departure with SEATED_PARTIES
BOX_OFFICE = ("Harbourside box office", "box-office-key")
# Twelve guests in three parties: they fill MV Heron.
SEATED_PARTIES = (
    ("Grace", "Hopper", ("adult", "adult", "child", "infant")),
    ("Alan", "Turing", ("adult", "adult")),
    ("Mary", "Somerville", ("adult",) * 7),
)


def resources_catalog() -> Catalog:
    """The booking tests' products and `resource_products`."""
    return catalog(*booking_products(), *resource_products())


def resource_products() -> tuple[Document, Document]:
    """The harbour cruise and the RIB ride."""
    cruise = product(
        CRUISE["productId"],
        options=[
            option(
                units=[
                    unit("adult", "ADULT", prices=[price(3200)], minAge=16, maxAge=99),
                    unit("child", "CHILD", prices=[price(1800)], minAge=3, maxAge=15, accompaniedBy=["adult"]),
                    unit("infant", "INFANT", prices=[price(0)], minAge=0, maxAge=2, paxCount=0, accompaniedBy=["adult"]),
                ],
                schedules=[schedule(("10:00", "13:00", "16:00"), capacity=None)],
                cutoff_hours=2, salesCutoffMinutes=10, required_contact=("firstName", "lastName"),
                restrictions={"minUnits": 1, "maxUnits": 10},
                resourceGroups=[
                    resource_group(
                        "boats",
                        [
                            resource("kingfisher", "MV Kingfisher", seats=seat_map(4, blocked=["1A"]),
                                     guide={"id": "guide-ines", "name": "Ines Okafor", "tags": ["english", "french"]}),
                            resource("heron", "MV Heron", seats=seat_map(3), start_times=("10:00", "16:00"),
                                     guide={"id": "guide-tom", "name": "Tom Reyes", "tags": ["english"]}),
                        ],
                    ),
                    resource_group(
                        "coaches",
                        [
                            resource("coach-1", "Coach 1", capacity=16,
                                     driver={"id": "driver-sam", "name": "Sam Patel", "phoneNumber": "+447700900101"}),
                            resource("coach-2", "Coach 2", capacity=12,
                                     driver={"id": "driver-ada", "name": "Ada Nwosu", "phoneNumber": "+447700900102"}),
                        ],
                        title="Coaches from Harbour Station", split=True,
                    ),
                ],
            )
        ],
    )  # fmt: skip
    rib = product(
        RIB["productId"],
        options=[
            option(
                units=[unit("rider", "ADULT", prices=[price(4500)], minAge=12, maxAge=70)],
                schedules=[schedule(("11:00", "15:00"), capacity=None, weekdays=("WED", "THU", "FRI", "SAT", "SUN"))],
                restrictions={"minUnits": 1, "maxUnits": 12},
                resourceGroups=[
                    resource_group("ribs", [resource("falcon", "RIB Falcon", capacity=6),
                                            resource("osprey", "RIB Osprey", capacity=8)], title="RIBs"),
                ],
            )
        ],
    )  # fmt: skip
    return cruise, rib


async def seat_parties(services: Services, availability_id: str) -> None:
    """The box office's three parties (SEATED_PARTIES), on the harbour cruise's `availability_id`."""
    for first_name, last_name, units in SEATED_PARTIES:
        await confirmed_booking(
            services, BOX_OFFICE, CRUISE["productId"], availability_id, units,
            {"firstName": first_name, "lastName": last_name}, reseller_reference="BOX-OFFICE",
        )  # fmt: skip
