"""octo/cart: bookings say which order they belong to."""

from __future__ import annotations

from typing import TYPE_CHECKING

from berth.capabilities.base import JSON, Capability, View

if TYPE_CHECKING:
    from berth.services.bookings import BookingDetails


class CartCapability(Capability):
    id = "octo/cart"
    docs = "https://docs.ventrata.com/capabilities/cart"

    def booking_fields(self, details: BookingDetails, out: JSON, view: View) -> None:
        out["orderId"] = details.booking.order_id
        out["orderReference"] = details.order_reference
        out["primary"] = details.booking.primary
