"""octo/rentals: rental durations on options, `isRental` on products and bookings, and the
booking's chosen duration. Rentals add no availability fields (OCTO.md §6.6); the duration
shapes availability (services) and prices (the pricing capability)."""

from __future__ import annotations

from typing import TYPE_CHECKING

from berth.capabilities.base import JSON, Capability, Nested, View
from berth.capabilities.ids import RENTALS
from berth.domain.catalog import Option, Product, RentalDuration

if TYPE_CHECKING:
    from berth.read_models.bookings import BookingDetails


def _number(value: int | float) -> int | float:
    """Whole multipliers as integers (the type [VT] gives `pricingMultiplier`)."""
    return int(value) if float(value).is_integer() else value


def rental_duration_json(duration: RentalDuration) -> JSON:
    return {
        "id": duration.id,
        "title": duration.title,
        "shortDescription": duration.short_description,
        "durationAmount": float(duration.duration_amount),
        "durationUnit": str(duration.duration_unit),
        "pricingMultiplier": _number(duration.pricing_multiplier),
    }


class RentalsCapability(Capability):
    id = RENTALS
    docs = "https://docs.ventrata.com/capabilities/rentals"

    def product_fields(self, product: Product, out: JSON, view: View) -> None:
        out["isRental"] = product.is_rental

    def option_fields(self, product: Product, option: Option, out: JSON, view: View) -> None:
        out["rentalDurations"] = [rental_duration_json(d) for d in option.rental_durations]

    def booking_fields(
        self, details: BookingDetails, out: JSON, view: View, nested: Nested[BookingDetails]
    ) -> None:
        booking = details.booking
        out["isRental"] = booking.rental_duration_id is not None
        out["rentalDurationId"] = booking.rental_duration_id
        out["rentalDuration"] = rental_duration_json(details.rental) if details.rental is not None else None
