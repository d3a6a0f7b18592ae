"""octo/offers' part of a booking's details: the offers its channel is shown for it (from the
offers document this process last read), each usable or not, and why."""

from __future__ import annotations

from dataclasses import replace

from berth.domain.catalog import Catalog
from berth.domain.offer_rules import Sale, choices
from berth.read_models.bookings import BookingDetails
from berth.services.clock import Clock
from berth.services.offers import OffersService
from berth.store.connection import DbConnection


class OfferDetails:
    def __init__(self, offers: OffersService, clock: Clock) -> None:
        self._offers = offers
        self._clock = clock

    async def add(
        self, conn: DbConnection, catalog: Catalog, details: list[BookingDetails], exact: bool
    ) -> list[BookingDetails]:
        current = await self._offers.current_in(conn)
        if not current.document.offers:
            return details
        now = self._clock()
        result = []
        for d in details:
            booking = d.booking
            sale = Sale(
                channel=booking.connection_id,
                shop=booking.connection_id == current.shop_connection_id,
                product_id=booking.product_id,
                option_id=booking.option_id,
                travel_date=booking.local_date,
                now=now,
                currency=booking.currency,
                unit_ids=tuple(item.unit_id for item in booking.unit_items),
                total=sum(line.price.original_or_retail for line in booking.price_lines) or None,
            )
            result.append(replace(d, offer_choices=choices(current.document, sale)))
        return result
