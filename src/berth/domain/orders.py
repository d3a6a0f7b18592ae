"""Orders (octo/cart): a group of bookings held, confirmed and cancelled together (OCTO.md §5.5)."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, replace
from datetime import datetime
from enum import StrEnum

from berth.domain.bookings import HOLDING, Booking, BookingStatus, Cancellation, Contact, as_of


class OrderStatus(StrEnum):
    ON_HOLD = "ON_HOLD"
    CONFIRMED = "CONFIRMED"
    PENDING = "PENDING"
    CANCELLED = "CANCELLED"
    EXPIRED = "EXPIRED"


# Orders that can still change: held, confirmed or awaiting the supplier.
LIVE = (OrderStatus.ON_HOLD, OrderStatus.CONFIRMED, OrderStatus.PENDING)


@dataclass(frozen=True)
class Order:
    id: str
    connection_id: str
    supplier_reference: str
    status: OrderStatus
    test_mode: bool
    currency: str | None
    contact: Contact
    email_receipt: bool
    created_at: datetime
    updated_at: datetime
    expires_at: datetime | None = None
    confirmed_at: datetime | None = None
    cancellation: Cancellation | None = None


def order_as_of(order: Order, now: datetime) -> Order:
    """An order whose hold has run out is EXPIRED (like its held bookings)."""
    if order.status is OrderStatus.ON_HOLD and order.expires_at is not None and order.expires_at <= now:
        return replace(
            order,
            status=OrderStatus.EXPIRED,
            updated_at=order.expires_at,
            cancellation=Cancellation(refund="FULL", reason=None, at=order.expires_at),
        )
    return order


def follow_bookings(order: Order, bookings: Sequence[Booking], now: datetime) -> Order:
    """The order as its bookings, each as it stands at `now`, make it:

    - while any booking is held, ON_HOLD until the last hold runs out (a booking confirmed
      on its own leaves the rest of the order to confirm);
    - else, with a confirmed, pending or redeemed booking, PENDING while one awaits the
      supplier, CONFIRMED otherwise: an order never expires around a booking it sold;
    - else (every booking ended) as its last booking ended: EXPIRED or CANCELLED (a rejection
      cancels), with that booking's cancellation. An ended order stays as it ended.

    An order without bookings lives by its own hold. A status the order reached when its hold
    ran out dates from then, so reading it before or after the sweep stores it gives one answer.
    """
    if not bookings:
        return order_as_of(order, now)
    current = [as_of(b, now) for b in bookings]
    held = [b.expires_at for b in current if b.status is BookingStatus.ON_HOLD and b.expires_at]
    if held:
        return _changed(order, replace(order, status=OrderStatus.ON_HOLD, expires_at=max(held)), now)
    ran_out = order.expires_at if order.expires_at is not None and order.expires_at <= now else now
    firm = [b for b in current if b.status in HOLDING]
    if firm:
        status = confirmed_status(firm)
        if order.status in (OrderStatus.CONFIRMED, OrderStatus.PENDING):
            return _changed(order, replace(order, status=status), now)
        confirmed = replace(
            order,
            status=status,
            expires_at=None,
            cancellation=None,
            confirmed_at=order.confirmed_at or ran_out,
        )
        return _changed(order, confirmed, ran_out)
    status, cancellation = max((_ending(b) for b in current), key=lambda ending: ending[1].at)
    if order.status is status:
        return order
    ended = replace(
        order,
        status=status,
        cancellation=cancellation,
        expires_at=order.expires_at if status is OrderStatus.EXPIRED else None,
    )
    return _changed(order, ended, cancellation.at)


def _changed(order: Order, new: Order, at: datetime) -> Order:
    return order if new == order else replace(new, updated_at=at)


def _ending(booking: Booking) -> tuple[OrderStatus, Cancellation]:
    """How an ended (as-of-now) booking ended, and when."""
    if booking.status is BookingStatus.REJECTED:
        at = booking.rejected_at or booking.updated_at or booking.created_at
        return OrderStatus.CANCELLED, Cancellation(refund="FULL", reason=booking.rejection_reason, at=at)
    status = OrderStatus.EXPIRED if booking.status is BookingStatus.EXPIRED else OrderStatus.CANCELLED
    return status, booking.cancellation or Cancellation(
        refund="FULL", reason=None, at=booking.updated_at or booking.created_at
    )


def confirmed_status(bookings: Sequence[Booking]) -> OrderStatus:
    """Of firm bookings: PENDING while any awaits the supplier, else CONFIRMED."""
    if any(b.status is BookingStatus.PENDING for b in bookings):
        return OrderStatus.PENDING
    return OrderStatus.CONFIRMED
