"""octo/gifts: gift vouchers a connection sells (routes in `berth.http.octo.gifts`, the service in
`berth.services.gifts`), and bookings paid with them: `giftPayment` on a confirmation and on
the booking (`payment.py`). Its routes answer without the capability too, as octo/webhooks'
do (docs/gifts.md)."""

from __future__ import annotations

from typing import TYPE_CHECKING

from berth.capabilities.base import JSON, Capability, Nested, View
from berth.capabilities.gifts.payment import FIELD, gift_payment
from berth.capabilities.ids import GIFTS

if TYPE_CHECKING:
    from berth.read_models.bookings import BookingDetails


class GiftsCapability(Capability):
    id = GIFTS
    docs = "https://docs.ventrata.com/capabilities/gifts"
    booking_request_fields = frozenset({FIELD})

    def booking_fields(
        self, details: BookingDetails, out: JSON, view: View, nested: Nested[BookingDetails]
    ) -> None:
        out[FIELD] = gift_payment(details.booking)
