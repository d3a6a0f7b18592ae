"""Orders (octo/cart): a group of bookings held, confirmed and cancelled together (OCTO.md §5.5)."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, replace
from datetime import datetime
from enum import StrEnum

from berth.domain.bookings import Booking, BookingStatus, Cancellation, Contact


class OrderStatus(StrEnum):
    ON_HOLD = "ON_HOLD"
    CONFIRMED = "CONFIRMED"
    PENDING = "PENDING"
    CANCELLED = "CANCELLED"
    EXPIRED = "EXPIRED"


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


def confirmed_status(bookings: Sequence[Booking]) -> OrderStatus:
    """After confirmation: PENDING while any booking awaits the supplier, else CONFIRMED."""
    if any(b.status is BookingStatus.PENDING for b in bookings):
        return OrderStatus.PENDING
    return OrderStatus.CONFIRMED


def merge_contact(base: Contact, override: Contact) -> Contact:
    """`override`'s fields win; the rest come from `base`."""
    return Contact(
        values={**base.values, **{k: v for k, v in override.values.items() if v is not None}},
        locales=override.locales or base.locales,
        allow_marketing=base.allow_marketing
        if override.allow_marketing is None
        else override.allow_marketing,
    )
