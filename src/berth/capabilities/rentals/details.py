"""octo/rentals' part of a booking's details: the rental duration it booked."""

from __future__ import annotations

from dataclasses import replace

from berth.domain.catalog import Catalog
from berth.read_models.bookings import BookingDetails
from berth.store.connection import DbConnection


class RentalDetails:
    async def add(
        self, conn: DbConnection, catalog: Catalog, details: list[BookingDetails], exact: bool
    ) -> list[BookingDetails]:
        return [
            replace(d, rental=d.option.rental_duration(d.booking.rental_duration_id))
            if d.booking.rental_duration_id
            else d
            for d in details
        ]
