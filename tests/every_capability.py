"""One catalogue with every capability's test products: the booking tests' cruise, kayak trip
and museum, the bike hire (rentals), the city pass (packages), and the harbour cruise and RIB
ride (resources)."""

from __future__ import annotations

from berth.domain.catalog import Catalog
from tests.bookings_helpers import booking_products
from tests.builders import catalog
from tests.packages_helpers import city_pass
from tests.rentals_helpers import bike_hire
from tests.resources_helpers import resource_products


def every_capability_catalog() -> Catalog:
    return catalog(*booking_products(), bike_hire(), city_pass(), *resource_products())
