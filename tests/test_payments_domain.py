"""The payments' pure rules (berth.domain.payments): what a booking costs its guest, a provider's
status as the ledger keeps it, and `settle_action`, the one rule that decides what becomes of a
captured payment, over every combination of the booking's state, its hold, its price, what was
paid and what the payment's outcome is so far."""

from __future__ import annotations

from dataclasses import replace
from datetime import UTC, datetime, timedelta
from itertools import product

import pytest
from hypothesis import given
from hypothesis import strategies as st

from berth.domain.bookings import Booking, BookingStatus, Contact
from berth.domain.catalog import Price
from berth.domain.errors import UnprocessableEntity
from berth.domain.payments import (
    OPEN,
    Action,
    Decision,
    Money,
    Outcome,
    PaymentStatus,
    RefundCause,
    amount_due,
    booking_price,
    payment_status,
    settle_action,
)
from berth.domain.price_lines import LineKind, PriceLine

NOW = datetime(2026, 6, 1, 8, 0, tzinfo=UTC)
PAID_STATUSES = (BookingStatus.CONFIRMED, BookingStatus.PENDING, BookingStatus.REDEEMED)


def line(retail: int, currency: str = "EUR", ref: str = "u1") -> PriceLine:
    return PriceLine(LineKind.UNIT, ref, "adult", Price(currency=currency, retail=retail))


def booking(
    status: BookingStatus = BookingStatus.ON_HOLD,
    expires_at: datetime | None = NOW + timedelta(minutes=10),
    lines: tuple[PriceLine, ...] = (line(2500, ref="u1"), line(2500, ref="u2")),
) -> Booking:
    return Booking(
        id="b", uuid="u", connection_id="shop", test_mode=False, status=status, product_id="p",
        option_id="DEFAULT", availability_id="a", slot_start=NOW + timedelta(days=1), local_date=None, pax=2,
        reseller_reference=None, supplier_reference="REF", notes=None, contact=Contact(), unit_items=(),
        currency="EUR", freesale=False, request_fingerprint="f", created_at=NOW, expires_at=expires_at,
        price_lines=lines,
    )  # fmt: skip


PRICE = Money(5000, "EUR")


# --- what a booking costs ------------------------------------------------------------------------


@given(st.lists(st.integers(0, 10**9), min_size=1, max_size=6), st.sampled_from(["EUR", "GBP", "JPY"]))
def test_a_booking_costs_the_retail_of_its_priced_lines(retails: list[int], currency: str) -> None:
    lines = tuple(line(r, currency, ref=f"u{i}") for i, r in enumerate(retails))
    assert booking_price(booking(lines=lines)) == Money(sum(retails), currency)


def test_a_booking_without_one_price_has_nothing_to_pay_by_card() -> None:
    assert booking_price(booking(lines=())) is None
    mixed = (line(2500, "EUR", "u1"), line(2000, "GBP", "u2"))
    assert booking_price(booking(lines=mixed)) is None
    for lines in ((), mixed, (line(0),)):
        with pytest.raises(UnprocessableEntity, match="REF"):
            amount_due(booking(lines=lines))
    assert amount_due(booking()) == PRICE


def test_a_providers_statuses_as_the_ledger_keeps_them() -> None:
    assert {word: payment_status(word) for word in (
        "requires_payment_method", "requires_confirmation", "requires_action", "requires_capture",
        "processing", "succeeded", "canceled", "a status Stripe adds one day",
    )} == {
        "requires_payment_method": PaymentStatus.CREATED, "requires_confirmation": PaymentStatus.CREATED,
        "requires_action": PaymentStatus.REQUIRES_ACTION, "requires_capture": PaymentStatus.PROCESSING,
        "processing": PaymentStatus.PROCESSING, "succeeded": PaymentStatus.SUCCEEDED,
        "canceled": PaymentStatus.CANCELED, "a status Stripe adds one day": PaymentStatus.PROCESSING,
    }  # fmt: skip
    # An unknown status is never taken for a capture nor for a payment that took nothing.
    assert PaymentStatus.PROCESSING in OPEN


# --- settle_action: every combination -------------------------------------------------------------

HOLDS = {
    "no expiry": None,
    "running": NOW + timedelta(minutes=10),
    "ends now": NOW,
    "ran out": NOW - timedelta(minutes=10),
}
PRICES = {
    "as paid": (line(2500, ref="u1"), line(2500, ref="u2")),
    "changed": (line(2500, ref="u1"),),
    "other currency": (line(2500, "GBP", "u1"), line(2500, "GBP", "u2")),
    "free": (line(0),),
    "none": (),
    "two currencies": (line(2500, "EUR", "u1"), line(2500, "GBP", "u2")),
}


def expected(
    status: BookingStatus, hold: str, price: str, outcome: Outcome | None, claimed_by_other: bool
) -> tuple[Action, RefundCause | None]:
    """The rule, written out as a table from the promise (docs/payments.md)."""
    if outcome is not None:
        return Action.NOTHING, None
    if claimed_by_other or status in PAID_STATUSES:
        return Action.REFUND, RefundCause.ALREADY_PAID
    if status in (BookingStatus.CANCELLED, BookingStatus.REJECTED):
        return Action.REFUND, RefundCause.CANCELLED
    if price != "as paid":
        return Action.REFUND, RefundCause.PRICE_CHANGED
    if status is BookingStatus.ON_HOLD and hold == "running":
        return Action.CONFIRM, None
    if status is BookingStatus.EXPIRED or (status is BookingStatus.ON_HOLD and hold != "no expiry"):
        return Action.REINSTATE, None
    return Action.REFUND, RefundCause.NOT_CONFIRMED  # on hold without an expiry


COMBINATIONS = list(product(BookingStatus, HOLDS, PRICES, (None, *Outcome), (False, True)))


@pytest.mark.parametrize(("status", "hold", "price", "outcome", "claimed_by_other"), COMBINATIONS)
def test_settle_action_in_every_state(
    status: BookingStatus, hold: str, price: str, outcome: Outcome | None, claimed_by_other: bool
) -> None:
    decision = settle_action(
        booking(status, HOLDS[hold], PRICES[price]), PRICE, outcome, NOW, claimed_by_other=claimed_by_other
    )
    assert (decision.action, decision.cause) == expected(status, hold, price, outcome, claimed_by_other)
    if decision.action is Action.REFUND:
        assert decision.reason  # the ledger and the log say why


statuses = st.sampled_from(BookingStatus)
moments = st.datetimes(min_value=datetime(2026, 1, 1), max_value=datetime(2027, 1, 1), timezones=st.just(UTC))
monies = st.builds(Money, st.integers(0, 10**6), st.sampled_from(["EUR", "GBP"]))
price_lines = st.lists(st.tuples(st.integers(0, 10**6), st.sampled_from(["EUR", "GBP"])), max_size=4).map(
    lambda drawn: tuple(line(r, c, f"u{i}") for i, (r, c) in enumerate(drawn))
)


@given(
    statuses,
    st.none() | moments,
    price_lines,
    monies,
    st.none() | st.sampled_from(Outcome),
    st.booleans(),
    moments,
)
def test_every_captured_payment_gets_exactly_one_way_to_an_outcome(
    status: BookingStatus,
    expires_at: datetime | None,
    lines: tuple[PriceLine, ...],
    paid: Money,
    outcome: Outcome | None,
    claimed_by_other: bool,
    now: datetime,
) -> None:
    """A payment without an outcome is never left as it is; only one of its booking's price,
    for a booking that can still be had, is ever confirmed with; every refund says why."""
    held = booking(status, expires_at, lines)
    decision = settle_action(held, paid, outcome, now, claimed_by_other=claimed_by_other)
    if outcome is not None:
        assert decision == Decision(Action.NOTHING)
        return
    assert decision.action is not Action.NOTHING
    if decision.action in (Action.CONFIRM, Action.REINSTATE):
        assert not claimed_by_other
        assert booking_price(held) == paid and paid.amount > 0
        assert status in (BookingStatus.ON_HOLD, BookingStatus.EXPIRED)
        assert decision.cause is None
        running = status is BookingStatus.ON_HOLD and expires_at is not None and expires_at > now
        assert (decision.action is Action.CONFIRM) == running
    else:
        assert decision.reason and decision.cause is not None
    if status in PAID_STATUSES or claimed_by_other:
        assert (decision.action, decision.cause) == (Action.REFUND, RefundCause.ALREADY_PAID)


@given(st.sampled_from([Action.CONFIRM, Action.REINSTATE]), st.text(min_size=1, max_size=40))
def test_a_refused_confirmation_is_a_full_refund_saying_why(action: Action, why: str) -> None:
    refused = Decision(action).refused(why)
    assert refused.action is Action.REFUND and why in refused.reason
    assert refused.cause is (
        RefundCause.PLACES_TAKEN if action is Action.REINSTATE else RefundCause.NOT_CONFIRMED
    )


def test_a_hold_that_ran_out_is_reinstated_whatever_the_time_says() -> None:
    """`as_of` makes a hold past its expiry EXPIRED; one read before it did is ON_HOLD with its
    expiry passed: both are held again, never confirmed as they stand."""
    ran_out = booking(expires_at=NOW - timedelta(seconds=1))
    assert settle_action(ran_out, PRICE, None, NOW, claimed_by_other=False).action is Action.REINSTATE
    expired = replace(ran_out, status=BookingStatus.EXPIRED)
    assert settle_action(expired, PRICE, None, NOW, claimed_by_other=False).action is Action.REINSTATE
