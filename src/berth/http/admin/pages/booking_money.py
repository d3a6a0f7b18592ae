"""A booking's money on its page: its payments and refunds from the ledger, and the staff's
money actions (operators and admins, each recorded in the audit trail by the payments service):
a refund of its card payment without cancelling it, and a payment taken at the desk (cash or a
card terminal). Cancelling a paid booking with a full, partial or no refund is the booking's
cancel form (pages/bookings.py), through `refund_asked` and `refund_notice` here."""

from __future__ import annotations

from dataclasses import dataclass
from decimal import Decimal

from fastapi import APIRouter, Depends, Form
from starlette.responses import Response

from berth.domain.bookings import ENDED, Booking
from berth.domain.errors import BadRequest, OctoError, UnprocessableEntity
from berth.domain.ledger import typed_amount
from berth.domain.payments import Outcome, PaymentStatus, RefundStatus, booking_price
from berth.http.admin.pages.errors import PageRoute
from berth.http.admin.pages.rendering import ledger_money, redirect
from berth.http.admin.pages.session import Notice, Staff, operator_form
from berth.store.payments_repo import Payment, Refund
from berth.translations import currency_precision

router = APIRouter(route_class=PageRoute)
DESK_METHODS = {"cash": "Cash", "card_terminal": "Card terminal"}
REFUND_CHOICES = ("full", "partial", "none")


@dataclass(frozen=True)
class BookingMoney:
    """What the booking's page says of its money (amounts in minor units of `currency`)."""

    payments: list[Payment]
    refunds: list[Refund]
    currency: str | None  # the booking's price's (or the ledger's, for a booking with no price)
    price: int | None
    received: int  # payments that succeeded, by card or at the desk
    refunded: int  # refunds that succeeded
    refunding: int  # refunds asked and not finished
    refundable: int  # what is left of its card payments to refund (failed refunds gave nothing)
    card_payments: bool  # card payments are set up (BERTH_STRIPE_SECRET_KEY)

    @property
    def failed_refunds(self) -> list[Refund]:
        return [r for r in self.refunds if r.status is RefundStatus.FAILED]

    @property
    def due(self) -> int | None:
        """What is still to pay of the booking's price (None: it has no price); a refund given
        after the payment leaves nothing to pay."""
        return None if self.price is None else max(0, self.price - self.received)

    @property
    def desk_default(self) -> str:
        """The desk form's amount: what is still to pay (blank when nothing is)."""
        if not self.due or self.currency is None:
            return ""
        return f"{Decimal(self.due).scaleb(-currency_precision(self.currency))}"

    def payment_of(self, refund: Refund) -> Payment | None:
        return next((p for p in self.payments if p.id == refund.payment_id), None)


async def booking_money(me: Staff, booking: Booking) -> BookingMoney:
    ledger = await me.services.payments.payments_for_booking(booking.id)
    price = booking_price(booking)
    claimed = {
        p.id: p.amount for p in ledger.payments if p.provider != "desk" and p.outcome is Outcome.CLAIMED
    }
    currency = price.currency if price else next((p.currency for p in ledger.payments), booking.currency)
    return BookingMoney(
        payments=ledger.payments,
        refunds=ledger.refunds,
        currency=currency,
        price=price.amount if price else None,
        received=sum(p.amount for p in ledger.payments if p.status is PaymentStatus.SUCCEEDED),
        refunded=sum(r.amount for r in ledger.refunds if r.status is RefundStatus.SUCCEEDED),
        refunding=sum(
            r.amount for r in ledger.refunds if r.status in (RefundStatus.REQUESTED, RefundStatus.PENDING)
        ),
        refundable=sum(claimed.values())
        - sum(
            r.amount
            for r in ledger.refunds
            if r.payment_id in claimed and r.status is not RefundStatus.FAILED
        ),
        card_payments=me.services.payments.provider is not None,
    )


def refund_asked(choice: str, amount: str, money: BookingMoney) -> int | None:
    """The refund a cancel form asks for (`refund` of Payments.cancel: None in full, 0 none);
    BadRequest saying what is wrong."""
    if choice not in REFUND_CHOICES:
        raise BadRequest("choose a full, a partial or no refund of its card payment")
    if choice == "none":
        return 0
    if not money.card_payments:
        raise BadRequest("card payments are not set up (BERTH_STRIPE_SECRET_KEY), so no refund can be made")
    if choice == "full":
        return None
    return _within(amount, money, "The refund")


def _within(amount: str, money: BookingMoney, what: str) -> int:
    assert money.currency is not None
    wanted = typed_amount(amount, currency_precision(money.currency), what)
    if wanted > money.refundable:
        raise BadRequest(
            f"{what} of {ledger_money(wanted, money.currency)} is more than the "
            f"{ledger_money(money.refundable, money.currency)} left to refund"
        )
    return wanted


def refund_notice(refund: Refund, prefix: str = "") -> Notice:
    """What became of a refund staff asked for, as the page says it."""
    amount = ledger_money(refund.amount, refund.currency)
    at = f" ({refund.provider_id})" if refund.provider_id else ""
    if refund.status is RefundStatus.SUCCEEDED:
        return Notice("success", f"{prefix}Refunded {amount}{at}.")
    if refund.status is RefundStatus.PENDING:
        return Notice(
            "success", f"{prefix}Refund of {amount} asked{at}: Stripe is making it; its state shows below."
        )
    if refund.status is RefundStatus.REQUESTED:
        return Notice(
            "success",
            f"{prefix}Refund of {amount} recorded, but Stripe did not answer yet: Berth asks it again "
            "until it does (the payments sweep); its state shows below.",
        )
    return Notice(
        "error",
        f"{prefix}The refund of {amount} FAILED: {refund.failure_reason or 'Stripe refused it'}. "
        "Nothing was given back: refund again, or settle with the guest another way.",
    )


def _back(booking_id: str, me: Staff, notice: Notice) -> Response:
    return redirect(f"/admin/bookings/{booking_id}#payments", me, notice)


async def _booking(me: Staff, booking_id: str) -> Booking:
    details, _ = await me.services.staff_bookings.get(me.catalog.catalog, booking_id)
    return details.booking


@router.post("/bookings/{booking_id}/refund")
async def refund(
    booking_id: str,
    amount: str = Form(default="", max_length=40),
    reason: str = Form(default="", max_length=500),
    me: Staff = Depends(operator_form),
) -> Response:
    """Refund the booking's card payment (blank amount: all that is left) without cancelling it."""
    booking = await _booking(me, booking_id)
    money = await booking_money(me, booking)
    label = f"Booking {booking.supplier_reference}"
    try:
        if money.refundable <= 0:
            raise UnprocessableEntity(f"{label} has no card payment left to refund")
        if not money.card_payments:
            raise UnprocessableEntity("card payments are not set up (BERTH_STRIPE_SECRET_KEY)")
        if not reason.strip():
            raise BadRequest("give a reason; it is kept with the refund")
        wanted = _within(amount, money, "The refund") if amount.strip() else None
        made = await me.services.payments.refund(
            me.catalog.catalog, booking_id, wanted, reason.strip(), me.actor
        )
    except OctoError as exc:
        return _back(booking_id, me, Notice("error", f"Not refunded: {exc.message.rstrip('.')}."))
    return _back(booking_id, me, refund_notice(made, f"{label}: "))


@router.post("/bookings/{booking_id}/desk-payment")
async def desk_payment(
    booking_id: str,
    method: str = Form(default="", max_length=20),
    amount: str = Form(default="", max_length=40),
    reference: str = Form(default="", max_length=200),
    me: Staff = Depends(operator_form),
) -> Response:
    """Record a payment staff took at the desk (cash or a card terminal) in the ledger."""
    booking = await _booking(me, booking_id)
    money = await booking_money(me, booking)
    label = f"Booking {booking.supplier_reference}"
    try:
        if booking.status in ENDED:
            raise UnprocessableEntity(
                f"{label} is {booking.status.value}: a payment is recorded on a booking that stands"
            )
        if method not in DESK_METHODS:
            raise BadRequest("choose cash or card terminal")
        if money.currency is None:
            raise UnprocessableEntity(f"{label} has no price, so no currency to record a payment in")
        minor = typed_amount(amount, currency_precision(money.currency))
        made = await me.services.payments.record_desk_payment(
            booking_id, method, minor, money.currency, me.actor, reference.strip() or None
        )
    except OctoError as exc:
        return _back(booking_id, me, Notice("error", f"No payment recorded: {exc.message.rstrip('.')}."))
    said = f"{label}: {DESK_METHODS[method].lower()} payment of {ledger_money(made.amount, made.currency)} recorded"
    return _back(
        booking_id, me, Notice("success", said + (f" (ref. {made.reference})." if made.reference else "."))
    )
