"""An order's status as its bookings make it (domain/orders.py), without I/O."""

from __future__ import annotations

from dataclasses import replace
from datetime import UTC, datetime, timedelta
from typing import Any

from berth.domain.bookings import Booking, BookingStatus, Cancellation, Contact
from berth.domain.orders import Order, OrderStatus, follow_bookings

T0 = datetime(2026, 6, 1, 8, 0, tzinfo=UTC)
HOLD = T0 + timedelta(minutes=30)
ORDER = Order(
    id="o", connection_id="c", supplier_reference="REF", status=OrderStatus.ON_HOLD, test_mode=False,
    currency="EUR", contact=Contact(), email_receipt=False, created_at=T0, updated_at=T0, expires_at=HOLD,
)  # fmt: skip


def booking(status: BookingStatus = BookingStatus.ON_HOLD, **fields: Any) -> Booking:
    base = Booking(
        id="b", uuid="u", connection_id="c", test_mode=False, status=BookingStatus.ON_HOLD,
        product_id="p", option_id="DEFAULT", availability_id="a", slot_start=T0, local_date=None, pax=1,
        reseller_reference=None, supplier_reference="S", notes=None, contact=Contact(), unit_items=(),
        currency="EUR", freesale=False, request_fingerprint="f", created_at=T0, updated_at=T0,
        expires_at=HOLD, order_id="o",
    )  # fmt: skip
    if status is BookingStatus.CONFIRMED:
        base = replace(base, expires_at=None, confirmed_at=T0)
    elif status is BookingStatus.PENDING:
        base = replace(base, expires_at=None)
    elif status is BookingStatus.CANCELLED:
        base = replace(base, expires_at=None, cancellation=Cancellation("FULL", "changed", T0))
    return replace(base, status=status, **fields)


def test_held_bookings_keep_the_order_on_hold_until_the_last_hold() -> None:
    later = HOLD + timedelta(minutes=10)
    followed = follow_bookings(ORDER, [booking(), booking(expires_at=later)], T0)
    assert followed.status is OrderStatus.ON_HOLD and followed.expires_at == later
    assert followed.updated_at == T0
    assert follow_bookings(ORDER, [booking()], T0) == ORDER  # nothing to change


def test_a_confirmed_booking_with_a_hold_beside_it_leaves_the_order_on_hold() -> None:
    followed = follow_bookings(ORDER, [booking(BookingStatus.CONFIRMED), booking()], T0)
    assert followed == ORDER


def test_firm_bookings_confirm_the_order() -> None:
    now = T0 + timedelta(minutes=5)
    confirmed = follow_bookings(
        ORDER, [booking(BookingStatus.CONFIRMED), booking(BookingStatus.CANCELLED)], now
    )
    assert confirmed.status is OrderStatus.CONFIRMED and confirmed.expires_at is None
    assert confirmed.confirmed_at == now and confirmed.updated_at == now and confirmed.cancellation is None
    pending = follow_bookings(ORDER, [booking(BookingStatus.CONFIRMED), booking(BookingStatus.PENDING)], now)
    assert pending.status is OrderStatus.PENDING
    redeemed = follow_bookings(ORDER, [booking(BookingStatus.REDEEMED, confirmed_at=T0)], now)
    assert redeemed.status is OrderStatus.CONFIRMED
    # Accepted later: CONFIRMED, and confirmed when it was first confirmed.
    accepted = follow_bookings(pending, [booking(BookingStatus.CONFIRMED)] * 2, now + timedelta(hours=1))
    assert accepted.status is OrderStatus.CONFIRMED and accepted.confirmed_at == now


def test_an_order_with_a_firm_booking_never_expires() -> None:
    after = HOLD + timedelta(hours=1)
    followed = follow_bookings(ORDER, [booking(BookingStatus.CONFIRMED), booking()], after)
    assert followed.status is OrderStatus.CONFIRMED
    # It turned CONFIRMED when its last hold ran out, whenever this is worked out.
    assert followed.confirmed_at == followed.updated_at == HOLD and followed.expires_at is None
    assert follow_bookings(followed, [booking(BookingStatus.CONFIRMED), booking()], after) == followed


def test_an_order_ends_as_its_last_booking_did() -> None:
    after = HOLD + timedelta(hours=1)
    expired = follow_bookings(ORDER, [booking(), booking()], after)
    assert expired.status is OrderStatus.EXPIRED and expired.expires_at == HOLD
    assert expired.cancellation == Cancellation("FULL", None, HOLD) and expired.updated_at == HOLD
    cancelled_late = booking(
        BookingStatus.CANCELLED, cancellation=Cancellation("FULL", "late", HOLD + timedelta(minutes=1))
    )
    cancelled = follow_bookings(ORDER, [booking(), cancelled_late], after)
    assert cancelled.status is OrderStatus.CANCELLED and cancelled.expires_at is None
    assert cancelled.cancellation == cancelled_late.cancellation
    rejected = follow_bookings(
        replace(ORDER, status=OrderStatus.PENDING, expires_at=None),
        [booking(BookingStatus.REJECTED, expires_at=None, rejected_at=T0, rejection_reason="storm")],
        after,
    )
    assert rejected.status is OrderStatus.CANCELLED
    assert rejected.cancellation == Cancellation("FULL", "storm", T0)
    # An ended order stays as it ended.
    assert follow_bookings(cancelled, [booking(BookingStatus.CANCELLED)], after) == cancelled


def test_an_empty_order_lives_by_its_own_hold() -> None:
    assert follow_bookings(ORDER, [], T0) == ORDER
    assert follow_bookings(ORDER, [], HOLD).status is OrderStatus.EXPIRED
