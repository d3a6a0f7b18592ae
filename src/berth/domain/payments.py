"""Payments: what a booking costs its guest, the states of a payment and of a refund, and the
one rule that decides what becomes of a captured payment.

The promise (docs/payments.md): every captured payment ends in exactly one confirmed booking
or a full refund, and no booking of a paying channel is confirmed without a captured payment
of its amount. A captured payment is *claimed* by the confirmation it pays for (in the
confirmation's transaction), or *refunded* in full; `settle_action` says which, from the
booking as it stands, and nothing else decides it.
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime
from enum import StrEnum

from berth.domain.bookings import Booking, BookingStatus
from berth.domain.errors import UnprocessableEntity


@dataclass(frozen=True)
class Money:
    amount: int  # minor units of the currency
    currency: str


def booking_price(booking: Booking) -> Money | None:
    """What the guest pays for `booking`: the retail of its stored priced lines (a sale keeps
    its price), never a price sent by the browser; None when it has no single price (nothing
    priced, or lines in more than one currency)."""
    currencies = {line.price.currency for line in booking.price_lines}
    if not booking.price_lines or len(currencies) != 1:
        return None
    return Money(sum(line.price.retail for line in booking.price_lines), currencies.pop())


def amount_due(booking: Booking) -> Money:
    """`booking_price`, for a booking to be paid by card. Raises UNPROCESSABLE_ENTITY when
    there is nothing to pay."""
    price = booking_price(booking)
    if price is None:
        raise UnprocessableEntity(f"Booking {booking.supplier_reference} has no price to pay by card")
    if price.amount <= 0:
        raise UnprocessableEntity(
            f"Booking {booking.supplier_reference} costs nothing: there is nothing to pay"
        )
    return price


class PaymentStatus(StrEnum):
    """A payment's state in the ledger, as Berth last read it from the provider."""

    CREATED = "created"  # the provider's payment exists; no card has been given for it
    REQUIRES_ACTION = "requires_action"  # the guest's bank asks for 3-D Secure
    PROCESSING = "processing"
    SUCCEEDED = "succeeded"  # captured: the money is taken
    FAILED = "failed"  # declined or failed authentication: this attempt takes nothing
    CANCELED = "canceled"  # given up (a newer attempt, or the hold ended): takes nothing


OPEN = (PaymentStatus.CREATED, PaymentStatus.REQUIRES_ACTION, PaymentStatus.PROCESSING)


class Outcome(StrEnum):
    """What became of a captured payment: the promise holds when each has exactly one."""

    CLAIMED = "claimed"  # it paid for its booking's confirmation
    REFUND = "refund"  # it is refunded in full (see its refund row)


class RefundStatus(StrEnum):
    REQUESTED = "requested"  # written in the ledger; the provider not asked yet (or no answer)
    PENDING = "pending"  # the provider took it and has not finished
    SUCCEEDED = "succeeded"
    FAILED = "failed"  # the provider could not refund: staff must act (failure_reason says why)


def payment_status(provider_status: str) -> PaymentStatus:
    """A Stripe PaymentIntent's `status` as the ledger keeps it. `requires_payment_method`
    after an attempt is a failure (declined, or authentication failed): the caller tells it
    from a fresh one by the attempt's last error."""
    return {
        "requires_payment_method": PaymentStatus.CREATED,
        "requires_confirmation": PaymentStatus.CREATED,
        "requires_action": PaymentStatus.REQUIRES_ACTION,
        "requires_capture": PaymentStatus.PROCESSING,
        "processing": PaymentStatus.PROCESSING,
        "succeeded": PaymentStatus.SUCCEEDED,
        "canceled": PaymentStatus.CANCELED,
    }.get(provider_status, PaymentStatus.PROCESSING)


class Action(StrEnum):
    NOTHING = "nothing"  # already claimed or refunded
    CONFIRM = "confirm"  # the booking is on hold: confirm it, the confirmation claims the payment
    REINSTATE = "reinstate"  # the hold ran out: take the places again, then confirm
    REFUND = "refund"  # the booking cannot be had for this payment: refund it in full


class RefundCause(StrEnum):
    """Why a payment is refunded, as the guest's letter says it."""

    PLACES_TAKEN = "places_taken"  # the hold ran out and its places could not be held again
    CANCELLED = "cancelled"  # the booking was cancelled (or rejected) before the payment came
    PRICE_CHANGED = "price_changed"  # the booking no longer costs what was paid
    ALREADY_PAID = "already_paid"  # another payment paid for it (the guest gets no letter)
    NOT_CONFIRMED = "not_confirmed"  # its confirmation was refused for another reason
    STAFF = "staff"  # staff refunded it, saying why


@dataclass(frozen=True)
class Decision:
    action: Action
    reason: str = ""  # for the ledger and the log
    cause: RefundCause | None = None  # REFUND: why, for the guest

    def refused(self, why: str) -> Decision:
        """The full refund that follows when the booking's confirmation (or the new hold of
        its places) this decision asked for is refused, `why`."""
        cause = RefundCause.PLACES_TAKEN if self.action is Action.REINSTATE else RefundCause.NOT_CONFIRMED
        return Decision(Action.REFUND, f"the booking could not be confirmed: {why}", cause)


def settle_action(
    booking: Booking,
    paid: Money,
    outcome: Outcome | None,
    now: datetime,
    *,
    claimed_by_other: bool,
) -> Decision:
    """What to do with a captured payment of `paid` for `booking` (as of `now`), whose outcome
    so far is `outcome`. `claimed_by_other`: another payment already paid for the booking."""
    if outcome is not None:
        return Decision(Action.NOTHING)
    if claimed_by_other:
        return Decision(Action.REFUND, "the booking was already paid", RefundCause.ALREADY_PAID)
    status = booking.status
    if status in (BookingStatus.CONFIRMED, BookingStatus.PENDING, BookingStatus.REDEEMED):
        # Confirmed without this payment's claim: another channel's confirmation, which a
        # paying channel's booking cannot have; refund rather than take the money twice.
        return Decision(Action.REFUND, "the booking was already confirmed", RefundCause.ALREADY_PAID)
    if status in (BookingStatus.CANCELLED, BookingStatus.REJECTED):
        return Decision(Action.REFUND, f"the booking is {status.value.lower()}", RefundCause.CANCELLED)
    try:
        due = amount_due(booking)
    except UnprocessableEntity as exc:
        return Decision(Action.REFUND, exc.message, RefundCause.PRICE_CHANGED)
    if due != paid:
        return Decision(
            Action.REFUND,
            f"the booking now costs {due.amount} {due.currency}, not {paid.amount} {paid.currency}",
            RefundCause.PRICE_CHANGED,
        )
    if status is BookingStatus.ON_HOLD and booking.expires_at is not None and booking.expires_at > now:
        return Decision(Action.CONFIRM)
    if status is BookingStatus.EXPIRED or (
        status is BookingStatus.ON_HOLD and booking.expires_at is not None
    ):
        return Decision(Action.REINSTATE, "the hold ran out before the payment arrived")
    return Decision(Action.REFUND, f"the booking is {status.value.lower()}", RefundCause.NOT_CONFIRMED)
