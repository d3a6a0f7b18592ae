"""octo/cart: bookings say which order they belong to."""

from __future__ import annotations

from typing import TYPE_CHECKING

from berth.capabilities.base import JSON, Capability, Nested, View
from berth.capabilities.ids import CART

if TYPE_CHECKING:
    from berth.read_models.bookings import BookingDetails


class CartCapability(Capability):
    id = CART
    docs = "https://docs.ventrata.com/capabilities/cart"

    def booking_fields(
        self, details: BookingDetails, out: JSON, view: View, nested: Nested[BookingDetails]
    ) -> None:
        out["orderId"] = details.booking.order_id
        out["orderReference"] = details.order_reference
        out["primary"] = details.booking.primary
