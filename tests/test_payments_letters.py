"""What the guest of the web shop is told of a refund, in English and German: a payment refunded
in full at once says why (the places taken after the hold ran out, the booking cancelled before
the payment came), staff's refund (with or without cancelling the booking) quotes staff's reason and names the
amount."""

from __future__ import annotations

from berth.container import Services
from berth.domain.bookings import BookingStatus, Contact
from berth.domain.staff import COMMAND_LINE
from berth.fake_stripe import FakeStripe
from berth.services.payments import SettlementState
from berth.store import payments_repo
from berth.store.mail_repo import Written
from tests.conftest import Clock
from tests.stripe_helpers import GUEST, THREE_D_SECURE, VISA, Browser, hold, localstripe, shop

__all__ = ["localstripe", "shop"]

GERMAN_GUEST = Contact({**GUEST.values, "firstName": "Grete"}, locales=("de",))


async def _letters(services: Services, booking_uuid: str, kind: str) -> list[Written]:
    async with services.database.transaction(write=False) as conn:
        (booking,) = await payments_repo.bookings_by_uuid(conn, booking_uuid)
        messages = [m for m in await services.mail.messages_of(booking) if m.kind == kind]
        return [await services.mail.write(conn, message) for message in messages]


async def _paid(services: Services, shop_id: str, fake: FakeStripe, contact: Contact = GUEST) -> str:
    catalog = (await services.catalog.snapshot()).catalog
    booking_uuid = await hold(services, shop_id, contact=contact)
    Browser(fake).give_card(await services.payments.checkout(catalog, booking_uuid), VISA)
    assert (await services.payments.pay(catalog, booking_uuid)).state is SettlementState.CONFIRMED
    return booking_uuid


async def _asking_for_3ds(
    services: Services, shop_id: str, fake: FakeStripe, contact: Contact
) -> tuple[str, str]:
    catalog = (await services.catalog.snapshot()).catalog
    booking_uuid = await hold(services, shop_id, contact=contact)
    Browser(fake).give_card(await services.payments.checkout(catalog, booking_uuid), THREE_D_SECURE)
    asked = await services.payments.pay(catalog, booking_uuid)
    assert asked.state is SettlementState.ACTION_REQUIRED and asked.client_secret is not None
    return booking_uuid, asked.client_secret


async def test_a_payment_after_the_places_were_taken_is_refunded_saying_so(
    shop: tuple[Services, str], localstripe: FakeStripe, clock: Clock
) -> None:
    services, shop_id = shop
    said = {}
    for contact in (GUEST, GERMAN_GUEST):
        booking_uuid, secret = await _asking_for_3ds(services, shop_id, localstripe, contact)
        clock.advance(hours=1)
        await services.expiry.expire_due()
        await hold(services, shop_id, ("adult",) * 12)
        await hold(services, shop_id, ("adult",) * 8)  # every place of the departure held by others
        Browser(localstripe).three_d_secure(secret, success=True)
        catalog = (await services.catalog.snapshot()).catalog
        assert (await services.payments.settle(catalog, booking_uuid)).state is SettlementState.REFUNDED
        (letter,) = await _letters(services, booking_uuid, "refunded")
        said[letter.language[:2]] = letter
        clock.advance(hours=1)  # the others' holds run out: the next guest's turn
        await services.expiry.expire_due()
    english, german = said["en"], said["de"]
    assert english.subject.startswith("Refunded: booking")
    assert "after the hold on your places had run out" in english.text_body
    assert "€50.00 has been refunded to your card" in english.text_body
    assert "cancelled" not in english.text_body  # nothing was cancelled: the hold ran out
    assert german.subject.startswith("Erstattet: Buchung")
    assert "nachdem die Reservierung Ihrer Plätze abgelaufen war" in german.text_body
    assert "50,00\N{NO-BREAK SPACE}€ wurden auf Ihre Karte erstattet" in german.text_body
    assert "abgelaufen war" in german.html_body


async def test_a_payment_after_the_booking_was_cancelled_is_refunded_saying_so(
    shop: tuple[Services, str], localstripe: FakeStripe
) -> None:
    services, shop_id = shop
    catalog = (await services.catalog.snapshot()).catalog
    booking_uuid, secret = await _asking_for_3ds(services, shop_id, localstripe, GERMAN_GUEST)
    details, refund = await services.payments.cancel(
        catalog, booking_uuid, refund=None, reason="Das Boot ist kaputt", actor=COMMAND_LINE
    )
    assert details.booking.status is BookingStatus.CANCELLED and refund is None  # nothing paid yet
    Browser(localstripe).three_d_secure(secret, success=True)
    assert (await services.payments.settle(catalog, booking_uuid)).state is SettlementState.REFUNDED
    (letter,) = await _letters(services, booking_uuid, "refunded")
    assert "nachdem Ihre Buchung storniert worden war" in letter.text_body
    assert "abgelaufen" not in letter.text_body
    assert "50,00\N{NO-BREAK SPACE}€ wurden auf Ihre Karte erstattet" in letter.text_body


async def test_staffs_refund_tells_the_guest_staffs_reason(
    shop: tuple[Services, str], localstripe: FakeStripe
) -> None:
    services, shop_id = shop
    catalog = (await services.catalog.snapshot()).catalog
    booking_uuid = await _paid(services, shop_id, localstripe)
    await services.payments.refund(catalog, booking_uuid, 1000, "The tour started an hour late", COMMAND_LINE)
    (letter,) = await _letters(services, booking_uuid, "refunded")
    assert "Reason: The tour started an hour late" in letter.text_body
    assert "€10.00 has been refunded to your card" in letter.text_body
    assert "could not be confirmed" not in letter.text_body  # the booking stands
    assert await _letters(services, booking_uuid, "cancelled") == []


async def test_a_paid_bookings_cancellation_by_staff_tells_the_refund_and_staffs_reason(
    shop: tuple[Services, str], localstripe: FakeStripe
) -> None:
    services, shop_id = shop
    catalog = (await services.catalog.snapshot()).catalog
    by_staff = await _paid(services, shop_id, localstripe, GERMAN_GUEST)
    await services.payments.cancel(
        catalog, by_staff, refund=4000, reason="Sturmwarnung", actor=COMMAND_LINE, force=True
    )
    (cancelled,) = await _letters(services, by_staff, "cancelled")
    assert "Grund: Sturmwarnung" in cancelled.text_body
    (refunded,) = await _letters(services, by_staff, "refunded")
    assert "Grund: Sturmwarnung" in refunded.text_body
    assert "40,00\N{NO-BREAK SPACE}€ wurden auf Ihre Karte erstattet" in refunded.text_body
    # The guest's own cancellation: its letter is the cancellation's, no second one.
    by_guest = await _paid(services, shop_id, localstripe)
    await services.payments.cancel(catalog, by_guest, refund=None, reason="on the booking's page", actor=None)
    assert len(await _letters(services, by_guest, "cancelled")) == 1
    assert await _letters(services, by_guest, "refunded") == []
