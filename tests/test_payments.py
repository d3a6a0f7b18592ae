"""Card payments against a real localstripe: the guest's way (card given, charged, 3-D Secure),
declines, webhooks, refunds, and a payment that arrives after the hold ran out."""

from __future__ import annotations

import pytest

from berth.container import Services
from berth.domain.bookings import BookingStatus
from berth.domain.payments import Outcome, PaymentStatus, RefundStatus
from berth.fake_stripe import FakeStripe
from berth.services.bookings.inputs import UnitItemInput, UpdateInput
from berth.services.payments import SettlementState
from tests.conftest import Clock
from tests.stripe_helpers import (
    DECLINED,
    THREE_D_SECURE,
    TOUR_PRICE,
    VISA,
    Browser,
    hold,
    localstripe,
    payment_event,
    shop,
    signed,
)

__all__ = ["localstripe", "shop"]


async def test_a_card_that_succeeds_confirms_the_booking_once(
    shop: tuple[Services, str], localstripe: FakeStripe
) -> None:
    services, shop_id = shop
    catalog = (await services.catalog.snapshot()).catalog
    booking_uuid = await hold(services, shop_id)
    checkout = await services.payments.checkout(catalog, booking_uuid)
    assert (checkout.amount, checkout.currency) == (TOUR_PRICE, "EUR")
    assert checkout.stripe_js_url == f"{localstripe.url}/js.stripe.com/v3/"
    Browser(localstripe).give_card(checkout, VISA)
    settled = await services.payments.pay(catalog, booking_uuid)
    assert settled.state is SettlementState.CONFIRMED, settled.message
    assert settled.booking is not None and settled.booking.booking.status is BookingStatus.CONFIRMED
    again = await services.payments.settle(catalog, booking_uuid)
    assert again.state is SettlementState.CONFIRMED
    ledger = await services.payments.payments_for_booking(settled.booking.booking.id)
    assert [(p.status, p.outcome, p.amount) for p in ledger.payments] == [
        (PaymentStatus.SUCCEEDED, Outcome.CLAIMED, TOUR_PRICE)
    ]
    assert ledger.refunds == []


async def test_a_declined_card_keeps_the_hold_and_another_card_pays(
    shop: tuple[Services, str], localstripe: FakeStripe
) -> None:
    services, shop_id = shop
    catalog = (await services.catalog.snapshot()).catalog
    booking_uuid = await hold(services, shop_id)
    browser = Browser(localstripe)
    browser.give_card(await services.payments.checkout(catalog, booking_uuid), DECLINED)
    declined = await services.payments.pay(catalog, booking_uuid)
    assert declined.state is SettlementState.FAILED
    assert "declined" in declined.message
    assert declined.booking is not None and declined.booking.booking.status is BookingStatus.ON_HOLD
    browser.give_card(await services.payments.checkout(catalog, booking_uuid), VISA)
    paid = await services.payments.pay(catalog, booking_uuid)
    assert paid.state is SettlementState.CONFIRMED, paid.message
    assert paid.booking is not None
    ledger = await services.payments.payments_for_booking(paid.booking.booking.id)
    assert [p.status for p in ledger.payments] == [PaymentStatus.CANCELED, PaymentStatus.SUCCEEDED]


@pytest.mark.parametrize("passes", [True, False])
async def test_three_d_secure(shop: tuple[Services, str], localstripe: FakeStripe, passes: bool) -> None:
    services, shop_id = shop
    catalog = (await services.catalog.snapshot()).catalog
    booking_uuid = await hold(services, shop_id)
    browser = Browser(localstripe)
    browser.give_card(await services.payments.checkout(catalog, booking_uuid), THREE_D_SECURE)
    asked = await services.payments.pay(catalog, booking_uuid)
    assert asked.state is SettlementState.ACTION_REQUIRED, asked.message
    assert asked.client_secret is not None
    browser.three_d_secure(asked.client_secret, success=passes)
    settled = await services.payments.settle(catalog, booking_uuid)
    assert settled.booking is not None
    if passes:
        assert settled.state is SettlementState.CONFIRMED
        assert settled.booking.booking.status is BookingStatus.CONFIRMED
    else:
        assert settled.state is SettlementState.FAILED
        assert settled.booking.booking.status is BookingStatus.ON_HOLD


async def test_refunds_full_and_partial(shop: tuple[Services, str], localstripe: FakeStripe) -> None:
    from berth.domain.staff import COMMAND_LINE

    services, shop_id = shop
    catalog = (await services.catalog.snapshot()).catalog
    booking_uuid = await hold(services, shop_id)
    Browser(localstripe).give_card(await services.payments.checkout(catalog, booking_uuid), VISA)
    await services.payments.pay(catalog, booking_uuid)
    part = await services.payments.refund(catalog, booking_uuid, 1000, "a late start", COMMAND_LINE)
    assert (part.status, part.amount) == (RefundStatus.SUCCEEDED, 1000)
    details, rest = await services.payments.cancel(
        catalog, booking_uuid, refund=None, reason="storm", actor=COMMAND_LINE, force=True
    )
    assert details.booking.status is BookingStatus.CANCELLED
    assert rest is not None and (rest.status, rest.amount) == (RefundStatus.SUCCEEDED, TOUR_PRICE - 1000)


async def _three_d_secure_pending(services: Services, shop_id: str, browser: Browser) -> tuple[str, str]:
    catalog = (await services.catalog.snapshot()).catalog
    booking_uuid = await hold(services, shop_id)
    browser.give_card(await services.payments.checkout(catalog, booking_uuid), THREE_D_SECURE)
    asked = await services.payments.pay(catalog, booking_uuid)
    assert asked.state is SettlementState.ACTION_REQUIRED and asked.client_secret is not None
    return booking_uuid, asked.client_secret


async def test_success_after_the_hold_ran_out_confirms_when_the_places_are_still_there(
    shop: tuple[Services, str], localstripe: FakeStripe, clock: Clock
) -> None:
    services, shop_id = shop
    browser = Browser(localstripe)
    booking_uuid, secret = await _three_d_secure_pending(services, shop_id, browser)
    clock.advance(hours=1)
    assert await services.expiry.expire_due() == 1
    browser.three_d_secure(secret, success=True)
    catalog = (await services.catalog.snapshot()).catalog
    settled = await services.payments.settle(catalog, booking_uuid)
    assert settled.state is SettlementState.CONFIRMED, settled.message
    assert settled.booking is not None and settled.booking.booking.status is BookingStatus.CONFIRMED
    ledger = await services.payments.payments_for_booking(settled.booking.booking.id)
    assert [p.outcome for p in ledger.payments] == [Outcome.CLAIMED] and ledger.refunds == []


async def test_success_after_the_places_were_taken_is_refunded_in_full_and_the_guest_told(
    shop: tuple[Services, str], localstripe: FakeStripe, clock: Clock
) -> None:
    services, shop_id = shop
    browser = Browser(localstripe)
    booking_uuid, secret = await _three_d_secure_pending(services, shop_id, browser)
    clock.advance(hours=1)
    await services.expiry.expire_due()
    await hold(services, shop_id, ("adult",) * 12)
    await hold(services, shop_id, ("adult",) * 8)  # the departure's 20 places, all held again
    browser.three_d_secure(secret, success=True)
    catalog = (await services.catalog.snapshot()).catalog
    settled = await services.payments.settle(catalog, booking_uuid)
    assert settled.state is SettlementState.REFUNDED, settled.message
    assert settled.booking is not None and settled.booking.booking.status is BookingStatus.EXPIRED
    ledger = await services.payments.payments_for_booking(settled.booking.booking.id)
    assert [p.outcome for p in ledger.payments] == [Outcome.REFUND]
    assert [(r.status, r.amount) for r in ledger.refunds] == [(RefundStatus.SUCCEEDED, TOUR_PRICE)]
    letters = await services.mail.messages_of(settled.booking.booking)
    assert [m.kind for m in letters] == ["refunded"]


async def test_webhooks_in_any_order_and_number_settle_the_payment_once(
    shop: tuple[Services, str], localstripe: FakeStripe
) -> None:
    from berth.domain.errors import BadRequest

    services, shop_id = shop
    catalog = (await services.catalog.snapshot()).catalog
    browser = Browser(localstripe)
    booking_uuid = await hold(services, shop_id)
    browser.give_card(await services.payments.checkout(catalog, booking_uuid), THREE_D_SECURE)
    asked = await services.payments.pay(catalog, booking_uuid)
    assert asked.client_secret is not None and asked.booking is not None
    payment_id = asked.client_secret.split("_secret_")[0]
    browser.three_d_secure(asked.client_secret, success=True)
    # The success arrives twice, and an older "requires action" after it: each is read from
    # Stripe again, so order and number change nothing.
    for event in (
        payment_event("evt_2", "payment_intent.succeeded", payment_id),
        payment_event("evt_1", "payment_intent.requires_action", payment_id),
        payment_event("evt_2", "payment_intent.succeeded", payment_id),
    ):
        await services.payments.handle_webhook(*signed(event))
    payload, signature = signed(payment_event("evt_3", "payment_intent.succeeded", payment_id))
    with pytest.raises(BadRequest):
        await services.payments.handle_webhook(payload + b" ", signature)
    ledger = await services.payments.payments_for_booking(asked.booking.booking.id)
    assert [(p.status, p.outcome) for p in ledger.payments] == [(PaymentStatus.SUCCEEDED, Outcome.CLAIMED)]
    assert ledger.refunds == []
    settled = await services.payments.settle(catalog, booking_uuid)
    assert settled.booking is not None and settled.booking.booking.status is BookingStatus.CONFIRMED


async def test_a_paying_channels_booking_is_not_confirmed_without_its_payment(
    shop: tuple[Services, str],
) -> None:
    from berth.domain.errors import UnprocessableEntity
    from berth.services.bookings.inputs import ConfirmInput
    from tests.stripe_helpers import GUEST

    services, shop_id = shop
    catalog = (await services.catalog.snapshot()).catalog
    booking_uuid = await hold(services, shop_id)
    with pytest.raises(UnprocessableEntity, match="paid by card"):
        await services.bookings.confirm(catalog, shop_id, booking_uuid, ConfirmInput(contact=GUEST))


async def test_a_booking_that_costs_more_than_its_open_payment_is_not_charged_the_old_amount(
    shop: tuple[Services, str], localstripe: FakeStripe
) -> None:
    """The party grew after the payment was started (the booking updated): charging the card
    the smaller amount would only be refunded in full, so nothing is charged and the guest
    pays the booking's price on a new payment."""
    services, shop_id = shop
    catalog = (await services.catalog.snapshot()).catalog
    booking_uuid = await hold(services, shop_id)
    checkout = await services.payments.checkout(catalog, booking_uuid)
    grown = UpdateInput(unit_items=tuple(UnitItemInput(u) for u in ("adult", "adult", "adult")))
    await services.bookings.update(catalog, shop_id, booking_uuid, grown)
    Browser(localstripe).give_card(checkout, VISA)
    settled = await services.payments.pay(catalog, booking_uuid)
    assert settled.state is SettlementState.FAILED, settled.message
    held = await services.bookings.get(catalog, shop_id, booking_uuid)
    assert held.booking.status is BookingStatus.ON_HOLD
    ledger = await services.payments.payments_for_booking(held.booking.id)
    assert [(p.status, p.captured_at) for p in ledger.payments] == [(PaymentStatus.CANCELED, None)]
    assert ledger.refunds == []
    again = await services.payments.checkout(catalog, booking_uuid)
    assert again.amount == TOUR_PRICE * 3 // 2
