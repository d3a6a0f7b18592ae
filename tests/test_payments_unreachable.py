"""Stripe out of reach: a closed port (refused at once) or a server that never answers (each
call given up after BERTH_STRIPE_TIMEOUT_SECONDS and the library's retries). No booking is
confirmed, the guest gets a clear message, nothing is left half-written, the hold ends at its
expiry as any hold does, and once Stripe answers again the sweep settles what was left."""

from __future__ import annotations

from collections.abc import AsyncIterator
from contextlib import asynccontextmanager

import pytest

from berth.container import Services, build_services
from berth.domain.bookings import BookingStatus
from berth.domain.errors import ServiceUnavailable, UnprocessableEntity
from berth.domain.payments import PaymentStatus
from berth.fake_stripe import FakeStripe
from berth.services.availability import AvailabilityQuery
from berth.services.payments import SettlementState
from berth.settings import Settings
from berth.store import payments_repo
from tests.berth_process import free_port
from tests.bookings_helpers import SLOT
from tests.conftest import Clock
from tests.stripe_helpers import (
    VISA,
    Browser,
    booking_id_of,
    hold,
    listed,
    localstripe,
    paying_settings,
    payment_event,
    shop,
    signed,
)
from tests.stripe_in_front import silent_server

__all__ = ["localstripe", "shop"]

UNREACHABLE = "The payment provider cannot be reached just now"


@asynccontextmanager
async def _cut_off(settings: Settings, clock: Clock, fake: FakeStripe, base: str) -> AsyncIterator[Services]:
    """Services over the same database whose Stripe is at `base`, giving up on a call fast."""
    elsewhere = {
        **paying_settings(settings, fake).model_dump(),
        "stripe_api_base": base,
        "stripe_timeout_seconds": 0.2,
    }
    services = build_services(Settings.model_validate(elsewhere), clock)
    try:
        yield services
    finally:
        await services.close()


async def _places_left(services: Services) -> int:
    catalog = (await services.catalog.snapshot()).catalog
    query = AvailabilityQuery("thames-sightseeing", "DEFAULT", availability_ids=(SLOT,))
    (slot,) = await services.availability.check(catalog, query)
    assert slot.state.vacancies is not None
    return slot.state.vacancies


async def test_stripe_refusing_connections_confirms_nothing_and_the_hold_ends_at_its_expiry(
    shop: tuple[Services, str], settings: Settings, clock: Clock, localstripe: FakeStripe
) -> None:
    services, shop_id = shop
    catalog = (await services.catalog.snapshot()).catalog
    booking_uuid = await hold(services, shop_id)
    Browser(localstripe).give_card(await services.payments.checkout(catalog, booking_uuid), VISA)
    late_uuid = await hold(services, shop_id)
    async with _cut_off(settings, clock, localstripe, f"http://127.0.0.1:{free_port()}") as cut_off:
        paying = await cut_off.payments.pay(catalog, booking_uuid)
        assert paying.state is SettlementState.PENDING and paying.message.startswith(UNREACHABLE)
        with pytest.raises(UnprocessableEntity, match=f"{UNREACHABLE}: nothing was charged"):
            await cut_off.payments.checkout(catalog, late_uuid)
    booking_id, late_id = (
        await booking_id_of(services, booking_uuid),
        await booking_id_of(services, late_uuid),
    )
    (waiting,) = (await services.payments.payments_for_booking(booking_id)).payments
    assert waiting.status is PaymentStatus.CREATED  # as it was: nothing is concluded from no answer
    (never,) = (await services.payments.payments_for_booking(late_id)).payments
    assert (never.status, never.provider_id) == (PaymentStatus.CANCELED, None)  # nothing left open
    (intent,) = [pi for pi in listed(localstripe, "payment_intents") if pi["id"] == waiting.provider_id]
    assert intent["status"] == "requires_payment_method"  # nothing charged
    staff_view = (await services.staff_bookings.get(catalog, booking_id))[0].booking
    assert staff_view.status is BookingStatus.ON_HOLD and staff_view.expires_at is not None
    assert await _places_left(services) == 20 - 4
    clock.now = staff_view.expires_at
    assert await services.expiry.expire_due() == 2
    assert await _places_left(services) == 20  # both holds ended at their expiry
    # Stripe answers again: the sweep gives up the payment of the ended hold at Stripe.
    clock.advance(minutes=1)
    await services.payments.sweep(catalog)
    (given_up,) = (await services.payments.payments_for_booking(booking_id)).payments
    assert given_up.status is PaymentStatus.CANCELED and given_up.outcome is None
    (intent,) = [pi for pi in listed(localstripe, "payment_intents") if pi["id"] == waiting.provider_id]
    assert intent["status"] == "canceled"
    assert [r for r in listed(localstripe, "refunds") if r.get("payment_intent") == intent["id"]] == []


async def test_stripe_that_never_answers_is_given_up_on_and_its_webhook_delivered_again(
    shop: tuple[Services, str], settings: Settings, clock: Clock, localstripe: FakeStripe
) -> None:
    services, shop_id = shop
    catalog = (await services.catalog.snapshot()).catalog
    booking_uuid = await hold(services, shop_id)
    checkout = await services.payments.checkout(catalog, booking_uuid)
    Browser(localstripe).give_card(checkout, VISA)
    payment_id = checkout.client_secret.split("_secret_")[0]
    event = signed(payment_event("evt_slow", "payment_intent.succeeded", payment_id))
    async with silent_server() as base, _cut_off(settings, clock, localstripe, base) as slow:
        paying = await slow.payments.pay(catalog, booking_uuid)
        assert paying.state is SettlementState.PENDING and paying.message.startswith(UNREACHABLE)
        with pytest.raises(ServiceUnavailable, match="deliver the event again later"):
            await slow.payments.handle_webhook(*event)
    booking_id = await booking_id_of(services, booking_uuid)
    staff_view = (await services.staff_bookings.get(catalog, booking_id))[0].booking
    assert staff_view.status is BookingStatus.ON_HOLD
    assert not await _seen(services, "evt_slow")  # not processed: Stripe delivers it again
    # The guest pays once Stripe answers; the event delivered again is processed this time.
    assert (await services.payments.pay(catalog, booking_uuid)).state is SettlementState.CONFIRMED
    await services.payments.handle_webhook(*event)
    assert await _seen(services, "evt_slow")
    (paid,) = (await services.payments.payments_for_booking(booking_id)).payments
    assert paid.status is PaymentStatus.SUCCEEDED and paid.provider_id == payment_id


async def _seen(services: Services, event_id: str) -> bool:
    async with services.database.transaction(write=False) as conn:
        return await payments_repo.event_seen(conn, "stripe", event_id)
