"""An order (octo/cart) with its bookings' details."""

from __future__ import annotations

from dataclasses import dataclass

from berth.domain.bookings import ENDED, BookingStatus
from berth.domain.orders import LIVE, Order, OrderStatus
from berth.read_models.bookings import BookingDetails


@dataclass(frozen=True)
class OrderDetails:
    order: Order
    bookings: tuple[BookingDetails, ...]

    @property
    def cancellable(self) -> bool:
        return self.order.status in LIVE and all(
            d.cancellable for d in self.bookings if d.booking.status not in ENDED
        )

    @property
    def confirmable(self) -> bool:
        return self.order.status is OrderStatus.ON_HOLD and any(
            d.booking.status is BookingStatus.ON_HOLD for d in self.bookings
        )
