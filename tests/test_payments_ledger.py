"""The payments ledger: the desk's payments, the payments page's filters, and refunds followed
by the sweep until Stripe says they succeeded or failed (a failure kept for staff to see), with
Stripe's refunds left pending, failing later or refused (tests/stripe_in_front.py)."""

from __future__ import annotations

from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from datetime import timedelta

import pytest

from berth.container import Services, build_services
from berth.domain.audit import AuditFilter
from berth.domain.bookings import BookingStatus
from berth.domain.errors import BadRequest, NotFound, UnprocessableEntity
from berth.domain.payments import Outcome, PaymentStatus, RefundStatus
from berth.domain.staff import COMMAND_LINE
from berth.fake_stripe import FakeStripe
from berth.services.bookings.inputs import ConfirmInput
from berth.services.payments import SettlementState
from berth.settings import Settings
from berth.store.payments_repo import PaymentFilter
from tests.bookings_helpers import booking_catalog
from tests.builders import confirmed_booking, load
from tests.conftest import KEY_A, Clock
from tests.stripe_helpers import (
    DECLINED,
    GUEST,
    TOUR_PRICE,
    VISA,
    Browser,
    booking_id_of,
    hold,
    localstripe,
    open_shop,
    paying_settings,
    shop,
)
from tests.stripe_in_front import StripeInFront, stripe_in_front

__all__ = ["localstripe", "shop"]

CASH = 3000


async def _paid(services: Services, shop_id: str, fake: FakeStripe) -> str:
    catalog = (await services.catalog.snapshot()).catalog
    booking_uuid = await hold(services, shop_id)
    Browser(fake).give_card(await services.payments.checkout(catalog, booking_uuid), VISA)
    assert (await services.payments.pay(catalog, booking_uuid)).state is SettlementState.CONFIRMED
    return booking_uuid


# --- the desk ------------------------------------------------------------------------------------


async def test_the_desk_records_the_payments_it_took(shop: tuple[Services, str]) -> None:
    services, _ = shop
    sold = await confirmed_booking(
        services, ("Reseller A", KEY_A), "thames-sightseeing", "2026-06-02T10:00:00+01:00", ["adult"],
        {"firstName": "Walk", "lastName": "In", "emailAddress": "walk-in@example.com"},
    )  # fmt: skip
    booking_id = sold.booking.id
    cash = await services.payments.record_desk_payment(
        booking_id, "cash", CASH, "eur", COMMAND_LINE, "  till 2 "
    )
    card = await services.payments.record_desk_payment(
        booking_id, "card_terminal", 2000, "EUR", COMMAND_LINE, None
    )
    ledger = await services.payments.payments_for_booking(booking_id)
    assert [(p.provider, p.method, p.amount, p.currency, p.status, p.outcome, p.reference, p.actor, p.attempt)
            for p in ledger.payments] == [
        ("desk", "cash", CASH, "EUR", PaymentStatus.SUCCEEDED, None, "till 2", "command line", 1),
        ("desk", "card_terminal", 2000, "EUR", PaymentStatus.SUCCEEDED, None, None, "command line", 2),
    ]  # fmt: skip
    assert [p.id for p in ledger.payments] == [cash.id, card.id] and ledger.refunds == []
    entries, _ = await services.audit.search(AuditFilter(action="payment.desk"), 10, 0)
    assert sorted(e.details["method"] for e in entries) == ["card_terminal", "cash"]
    # The desk's payments are in the ledger only: nothing for the sweep, nothing to refund by card.
    catalog = (await services.catalog.snapshot()).catalog
    assert await services.payments.sweep(catalog) == 0
    with pytest.raises(UnprocessableEntity, match="no card payment"):
        await services.payments.refund(catalog, booking_id, None, "changed their mind", COMMAND_LINE)


@pytest.mark.parametrize(
    ("method", "amount", "currency", "error"),
    [
        ("cheque", 100, "EUR", "method: 'cash' or 'card_terminal'"),
        ("cash", 0, "EUR", "amount: a payment is more than 0"),
        ("cash", -5, "EUR", "amount: a payment is more than 0"),
        ("cash", 100, "EURO", "currency: a three-letter code"),
        ("cash", 100, "E1R", "currency: a three-letter code"),
    ],
)
async def test_a_desk_payment_with_a_bad_field_is_refused_and_nothing_written(
    shop: tuple[Services, str], method: str, amount: int, currency: str, error: str
) -> None:
    services, shop_id = shop
    booking_uuid = await hold(services, shop_id)
    with pytest.raises(BadRequest, match=error):
        await services.payments.record_desk_payment(
            booking_uuid, method, amount, currency, COMMAND_LINE, None
        )
    with pytest.raises(NotFound, match="No booking"):
        await services.payments.record_desk_payment("no-such-booking", "cash", 100, "EUR", COMMAND_LINE, None)
    ledger = await services.payments.payments_for_booking(await booking_id_of(services, booking_uuid))
    assert ledger.payments == []


async def test_a_desk_payment_does_not_confirm_a_booking_of_the_shop(shop: tuple[Services, str]) -> None:
    """The shop's bookings are confirmed for a captured card payment only."""
    services, shop_id = shop
    catalog = (await services.catalog.snapshot()).catalog
    booking_uuid = await hold(services, shop_id)
    await services.payments.record_desk_payment(booking_uuid, "cash", TOUR_PRICE, "EUR", COMMAND_LINE, None)
    with pytest.raises(UnprocessableEntity, match="paid by card"):
        await services.bookings.confirm(catalog, shop_id, booking_uuid, ConfirmInput(contact=GUEST))


# --- the payments page's filters -------------------------------------------------------------------


async def test_the_payments_are_listed_by_status_provider_booking_time_and_refunds(
    shop: tuple[Services, str], localstripe: FakeStripe, clock: Clock
) -> None:
    services, shop_id = shop
    catalog = (await services.catalog.snapshot()).catalog
    start = clock()
    paid = await _paid(services, shop_id, localstripe)
    await services.payments.refund(catalog, paid, 1000, "a late start", COMMAND_LINE)
    clock.advance(hours=1)
    declined = await hold(services, shop_id)
    Browser(localstripe).give_card(await services.payments.checkout(catalog, declined), DECLINED)
    assert (await services.payments.pay(catalog, declined)).state is SettlementState.FAILED
    clock.advance(hours=1)
    at_desk = await hold(services, shop_id)
    await services.payments.record_desk_payment(at_desk, "cash", CASH, "EUR", COMMAND_LINE, "till 1")
    paid_id, declined_id = await booking_id_of(services, paid), await booking_id_of(services, declined)

    async def listed(where: PaymentFilter, limit: int = 10, offset: int = 0) -> list[tuple[str, int]]:
        rows, total = await services.payments.list_payments(where, limit, offset)
        assert total == len(rows) or limit < total
        return [(row.payment.provider, row.payment.amount) for row in rows]

    every = await listed(PaymentFilter())
    assert every == [("desk", CASH), ("stripe", TOUR_PRICE), ("stripe", TOUR_PRICE)]  # newest first
    assert await listed(PaymentFilter(provider="desk")) == [("desk", CASH)]
    assert await listed(PaymentFilter(status=PaymentStatus.CANCELED)) == [("stripe", TOUR_PRICE)]
    assert await listed(PaymentFilter(booking_id=declined_id)) == [("stripe", TOUR_PRICE)]
    assert await listed(PaymentFilter(with_refunds=True)) == [("stripe", TOUR_PRICE)]
    hour = timedelta(hours=1)
    assert await listed(PaymentFilter(created_from=start + hour)) == every[:2]  # from: inclusive
    assert await listed(PaymentFilter(created_before=start + hour)) == every[2:]  # before: exclusive
    assert await listed(PaymentFilter(provider="stripe", created_from=start + hour)) == every[1:2]
    assert await listed(PaymentFilter(provider="nobody")) == []
    rows, total = await services.payments.list_payments(PaymentFilter(), 1, 1)
    assert total == 3 and [row.payment.amount for row in rows] == [TOUR_PRICE]
    (row,), _ = await services.payments.list_payments(PaymentFilter(booking_id=paid_id), 10, 0)
    assert (row.payment.outcome, row.refunded, [r.reason for r in row.refunds]) == (
        Outcome.CLAIMED, 1000, ["a late start"],
    )  # fmt: skip
    assert row.supplier_reference.strip() != ""


# --- refunds followed by the sweep -------------------------------------------------------------------


@asynccontextmanager
async def _through(
    settings: Settings, clock: Clock, fake: FakeStripe
) -> AsyncIterator[tuple[Services, str, StripeInFront]]:
    """Services that reach localstripe through `StripeInFront`, with the shop; its id."""
    async with stripe_in_front(fake) as front:
        at_front = Settings.model_validate(
            {**paying_settings(settings, fake).model_dump(), "stripe_api_base": front.url}
        )
        services = build_services(at_front, clock)
        try:
            await load(services, booking_catalog())
            yield services, await open_shop(services), front
        finally:
            await services.close()


async def test_a_refund_stripe_leaves_pending_is_followed_until_it_succeeds(
    settings: Settings, clock: Clock, localstripe: FakeStripe
) -> None:
    async with _through(settings, clock, localstripe) as (services, shop_id, front):
        catalog = (await services.catalog.snapshot()).catalog
        booking_uuid = await _paid(services, shop_id, localstripe)
        front.new_refunds = "pending"
        refund = await services.payments.refund(catalog, booking_uuid, 1000, "a late start", COMMAND_LINE)
        (made,) = front.made
        assert (refund.status, refund.provider_id) == (RefundStatus.PENDING, made)
        assert await services.payments.sweep(catalog) == 1
        ledger = await services.payments.payments_for_booking(await booking_id_of(services, booking_uuid))
        assert [r.status for r in ledger.refunds] == [RefundStatus.PENDING]  # still, as Stripe says
        front.refunds[made] = {"status": "succeeded"}
        await services.payments.sweep(catalog)
        ledger = await services.payments.payments_for_booking(ledger.payments[0].booking_id)
        assert [(r.status, r.amount, r.provider_id) for r in ledger.refunds] == [
            (RefundStatus.SUCCEEDED, 1000, made)
        ]
        assert await services.payments.sweep(catalog) == 0  # nothing left to follow
        assert front.made == [made]  # asked for once


async def test_a_refund_that_fails_later_is_kept_failed_with_stripes_reason(
    settings: Settings, clock: Clock, localstripe: FakeStripe
) -> None:
    async with _through(settings, clock, localstripe) as (services, shop_id, front):
        catalog = (await services.catalog.snapshot()).catalog
        booking_uuid = await _paid(services, shop_id, localstripe)
        booking_id = await booking_id_of(services, booking_uuid)
        front.new_refunds = "pending"
        details, refund = await services.payments.cancel(
            catalog, booking_uuid, refund=None, reason="storm", actor=COMMAND_LINE, force=True
        )
        assert details.booking.status is BookingStatus.CANCELLED
        assert refund is not None and (refund.status, refund.amount) == (RefundStatus.PENDING, TOUR_PRICE)
        (made,) = front.made
        front.refunds[made] = {"status": "failed", "failure_reason": "expired_or_canceled_card"}
        await services.payments.sweep(catalog)
        (row,), _ = await services.payments.list_payments(PaymentFilter(booking_id=booking_id), 10, 0)
        (failed,) = row.refunds
        assert (failed.status, failed.failure_reason) == (RefundStatus.FAILED, "expired_or_canceled_card")
        assert row.refunded == 0  # nothing went back to the guest
        front.refunds[made] = {"status": "succeeded"}  # a failed refund stays failed
        assert await services.payments.sweep(catalog) == 0
        # Staff see it and refund again: the amount that failed can be refunded once more.
        front.new_refunds = None
        again = await services.payments.refund(catalog, booking_uuid, None, "card replaced", COMMAND_LINE)
        assert (again.status, again.amount) == (RefundStatus.SUCCEEDED, TOUR_PRICE)


async def test_a_refund_stripe_refuses_is_failed_at_once_with_stripes_words(
    settings: Settings, clock: Clock, localstripe: FakeStripe
) -> None:
    async with _through(settings, clock, localstripe) as (services, shop_id, front):
        catalog = (await services.catalog.snapshot()).catalog
        booking_uuid = await _paid(services, shop_id, localstripe)
        front.refusal = (400, "Charge ch_1 has been charged back; it cannot be refunded.")
        refund = await services.payments.refund(catalog, booking_uuid, 500, "goodwill", COMMAND_LINE)
        assert refund.status is RefundStatus.FAILED
        assert refund.failure_reason == "Charge ch_1 has been charged back; it cannot be refunded."
        assert front.made == [] and await services.payments.sweep(catalog) == 0


async def test_a_full_refund_at_once_left_pending_is_followed_by_the_sweep(
    settings: Settings, clock: Clock, localstripe: FakeStripe
) -> None:
    """A payment that came after the places were taken: refunded in full at once, the refund
    pending at Stripe until it succeeds; the guest is told it is refunded all along."""
    async with _through(settings, clock, localstripe) as (services, shop_id, front):
        from tests.stripe_helpers import THREE_D_SECURE

        catalog = (await services.catalog.snapshot()).catalog
        booking_uuid = await hold(services, shop_id)
        browser = Browser(localstripe)
        browser.give_card(await services.payments.checkout(catalog, booking_uuid), THREE_D_SECURE)
        asked = await services.payments.pay(catalog, booking_uuid)
        assert asked.client_secret is not None
        clock.advance(hours=1)
        await services.expiry.expire_due()
        await hold(services, shop_id, ("adult",) * 12)
        await hold(services, shop_id, ("adult",) * 8)
        browser.three_d_secure(asked.client_secret, success=True)
        front.new_refunds = "pending"
        settled = await services.payments.settle(catalog, booking_uuid)
        assert settled.state is SettlementState.REFUNDED
        ledger = await services.payments.payments_for_booking(await booking_id_of(services, booking_uuid))
        assert [(r.status, r.amount) for r in ledger.refunds] == [(RefundStatus.PENDING, TOUR_PRICE)]
        front.refunds[front.made[0]] = {"status": "succeeded"}
        await services.payments.sweep(catalog)
        ledger = await services.payments.payments_for_booking(ledger.payments[0].booking_id)
        assert [(p.outcome, r.status) for p, r in zip(ledger.payments, ledger.refunds, strict=True)] == [
            (Outcome.REFUND, RefundStatus.SUCCEEDED)
        ]
        assert len(front.made) == 1
