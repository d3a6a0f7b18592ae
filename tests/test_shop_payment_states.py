"""The payment page of a booking whose state changed while the guest's tab was open, over HTTP
against a real localstripe, on both databases: paid meanwhile (3-D Secure passed and the page
loaded again instead of the script asking Berth, a webhook or the sweep first), the hold run
out, cancelled by staff, paid too late and refunded, cancelled after payment with a refund.
Each state sends the guest to the page that says it: never a card form, a failure to start a
payment or an error page."""

from __future__ import annotations

import re

import httpx

from berth.container import Services
from berth.domain.bookings import Booking, BookingStatus
from berth.domain.payments import Outcome, RefundStatus
from berth.domain.staff import COMMAND_LINE
from berth.fake_stripe import PUBLISHABLE_KEY, FakeStripe
from tests.conftest import Clock
from tests.shop_fixtures import app, paying, shop
from tests.shop_helpers import SLOT, held, hidden_fields, with_details
from tests.stripe_helpers import (
    THREE_D_SECURE,
    VISA,
    Browser,
    hold,
    localstripe,
    payment_event,
    signed,
)

__all__ = ["app", "localstripe", "paying", "shop"]
PRICE = 5000  # two adults on the cruise, in euro cents


async def _booking(shop: Services, checkout: str) -> Booking:
    connection = await shop.shop.connection()
    assert connection is not None
    catalog = (await shop.catalog.snapshot()).catalog
    return (await shop.bookings.get(catalog, connection.id, checkout.split("/")[3])).booking


async def _card_given(client: httpx.AsyncClient, localstripe: FakeStripe, checkout: str, number: str) -> str:
    """The payment page loaded and the card given to Stripe (`confirmCardSetup`); the page's
    CSRF token."""
    pay = await client.get(checkout + "/pay")
    assert pay.status_code == 200, pay.text
    setup = re.search(r'data-setup="([^"]+)"', pay.text)
    assert setup is not None, pay.text
    secret = setup.group(1)
    card = {"number": number, "exp_month": "12", "exp_year": "2034", "cvc": "123"}
    confirm = f"{localstripe.url}/v1/setup_intents/{secret.split('_secret_')[0]}/confirm"
    sent = {"key": PUBLISHABLE_KEY, "client_secret": secret, "use_stripe_sdk": True}
    async with httpx.AsyncClient() as stripe_js:
        given = await stripe_js.post(
            confirm, json={**sent, "payment_method_data": {"type": "card", "card": card}}
        )
        if given.json().get("status") == "requires_action":  # the bank's challenge of the setup, passed
            given = await stripe_js.post(confirm, json=sent)
    assert given.status_code == 200 and given.json()["status"] == "succeeded", given.text
    return hidden_fields(pay.text)["csrf"]


async def _asked_for_3ds(client: httpx.AsyncClient, localstripe: FakeStripe) -> tuple[str, str, str]:
    """A hold with its details, charged with a card whose bank asks for 3-D Secure: its
    checkout path, the page's CSRF token and the payment's client secret."""
    checkout = await held(client)
    await with_details(client, checkout)
    csrf = await _card_given(client, localstripe, checkout, THREE_D_SECURE)
    charged = await client.post(checkout + "/charge", data={"csrf": csrf})
    assert charged.status_code == 200 and "action" in charged.json(), charged.text
    return checkout, csrf, charged.json()["action"]


async def test_a_payment_page_loaded_again_after_3_d_secure_passed_confirms_and_shows_the_confirmation(
    client: httpx.AsyncClient, shop: Services, localstripe: FakeStripe
) -> None:
    """The guest passed 3-D Secure, then reloaded the page or pressed back before the script
    asked Berth: Stripe holds the captured payment, Berth does not know it yet."""
    checkout, csrf, secret = await _asked_for_3ds(client, localstripe)
    Browser(localstripe).three_d_secure(secret, success=True)
    again = await client.get(checkout + "/pay")
    assert (again.status_code, again.headers.get("location")) == (303, checkout + "/done"), again.text
    booking = await _booking(shop, checkout)
    assert booking.status is BookingStatus.CONFIRMED
    ledger = await shop.payments.payments_for_booking(booking.id)
    assert [p.outcome for p in ledger.payments] == [Outcome.CLAIMED] and ledger.refunds == []
    # The form sent again (the page from the browser's history): on to the confirmation.
    for step in ("charge", "card", "settle"):
        answer = await client.post(f"{checkout}/{step}", data={"csrf": csrf})
        assert (answer.status_code, answer.json()) == (200, {"next": checkout + "/done"}), step
    done = await client.get(checkout + "/done")
    assert done.status_code == 200 and "Booking confirmed" in done.text


async def test_a_payment_page_open_while_a_webhook_confirmed_the_booking_sends_the_guest_on(
    client: httpx.AsyncClient, shop: Services, localstripe: FakeStripe
) -> None:
    checkout, csrf, secret = await _asked_for_3ds(client, localstripe)
    Browser(localstripe).three_d_secure(secret, success=True)
    payment_id = secret.split("_secret_")[0]
    await shop.payments.handle_webhook(
        *signed(payment_event("evt_paid", "payment_intent.succeeded", payment_id))
    )
    assert (await _booking(shop, checkout)).status is BookingStatus.CONFIRMED
    for step in ("charge", "card", "settle"):
        answer = await client.post(f"{checkout}/{step}", data={"csrf": csrf})
        assert (answer.status_code, answer.json()) == (200, {"next": checkout + "/done"}), step
    for step in ("pay", "paid"):
        page = await client.get(f"{checkout}/{step}")
        assert (page.status_code, page.headers.get("location")) == (303, checkout + "/done"), step


async def test_a_hold_that_ran_out_while_the_page_was_open_says_so(
    client: httpx.AsyncClient, shop: Services, localstripe: FakeStripe, clock: Clock
) -> None:
    checkout = await held(client)
    await with_details(client, checkout)
    csrf = await _card_given(client, localstripe, checkout, VISA)
    clock.advance(hours=1)
    assert await shop.expiry.expire_due() == 1
    await _places_sold(shop)
    answer = await client.post(checkout + "/charge", data={"csrf": csrf})
    assert (answer.status_code, answer.json()) == (200, {"next": checkout}), answer.text
    for step in ("", "/pay", "/paid"):
        ended = await client.get(checkout + step, follow_redirects=True)
        assert ended.status_code == 410 and "released: nothing was paid" in ended.text, step
    booking = await _booking(shop, checkout)
    assert booking.status is BookingStatus.EXPIRED
    ledger = await shop.payments.payments_for_booking(booking.id)
    assert [p.outcome for p in ledger.payments] == [None] and ledger.refunds == []


async def test_a_hold_cancelled_by_staff_while_the_page_was_open_says_so(
    client: httpx.AsyncClient, shop: Services, localstripe: FakeStripe
) -> None:
    checkout = await held(client)
    await with_details(client, checkout)
    csrf = await _card_given(client, localstripe, checkout, VISA)
    catalog = (await shop.catalog.snapshot()).catalog
    booking = await _booking(shop, checkout)
    await shop.staff_bookings.cancel(catalog, booking.id, "boat broken", actor=COMMAND_LINE)
    answer = await client.post(checkout + "/charge", data={"csrf": csrf})
    assert (answer.status_code, answer.json()) == (200, {"next": checkout}), answer.text
    again = await client.post(checkout + "/card", data={"csrf": csrf})
    assert (again.status_code, again.json()) == (200, {"next": checkout})
    for step in ("", "/pay", "/paid"):
        ended = await client.get(checkout + step, follow_redirects=True)
        assert ended.status_code == 410 and "This booking was cancelled." in ended.text, step
    ledger = await shop.payments.payments_for_booking(booking.id)
    assert [p.outcome for p in ledger.payments] == [None] and ledger.refunds == []


async def test_a_payment_that_came_after_the_places_were_gone_shows_its_refund(
    client: httpx.AsyncClient, shop: Services, localstripe: FakeStripe, clock: Clock
) -> None:
    checkout, csrf, secret = await _asked_for_3ds(client, localstripe)
    clock.advance(hours=1)
    assert await shop.expiry.expire_due() == 1
    await _places_sold(shop)
    Browser(localstripe).three_d_secure(secret, success=True)
    refunded_page = "Your payment is refunded"
    for step in ("pay", "paid"):
        page = await client.get(f"{checkout}/{step}", follow_redirects=True)
        assert page.status_code == 200 and refunded_page in page.text, (step, page.text)
    answer = await client.post(checkout + "/charge", data={"csrf": csrf})
    assert (answer.status_code, answer.json()) == (200, {"next": checkout + "/paid"}), answer.text
    booking = await _booking(shop, checkout)
    assert booking.status is BookingStatus.EXPIRED
    ledger = await shop.payments.payments_for_booking(booking.id)
    assert [p.outcome for p in ledger.payments] == [Outcome.REFUND]
    assert [(r.amount, r.status) for r in ledger.refunds] == [(PRICE, RefundStatus.SUCCEEDED)]


async def test_a_paid_booking_cancelled_by_staff_with_a_refund_shows_it_cancelled(
    client: httpx.AsyncClient, shop: Services, localstripe: FakeStripe
) -> None:
    checkout = await held(client)
    await with_details(client, checkout)
    csrf = await _card_given(client, localstripe, checkout, VISA)
    paid = await client.post(checkout + "/charge", data={"csrf": csrf})
    assert paid.json() == {"next": checkout + "/done"}
    catalog = (await shop.catalog.snapshot()).catalog
    booking = await _booking(shop, checkout)
    await shop.payments.cancel(
        catalog, booking.uuid, refund=None, reason="storm", actor=COMMAND_LINE, force=True
    )
    for step in ("charge", "card"):
        answer = await client.post(f"{checkout}/{step}", data={"csrf": csrf})
        assert answer.status_code == 200 and answer.json()["next"] in (checkout, checkout + "/done"), step
    for step in ("pay", "paid", "done"):
        page = await client.get(f"{checkout}/{step}", follow_redirects=True)
        assert page.status_code == 410 and "This booking was cancelled." in page.text, step
    ledger = await shop.payments.payments_for_booking(booking.id)
    assert [(r.amount, r.status) for r in ledger.refunds] == [(PRICE, RefundStatus.SUCCEEDED)]


async def _places_sold(shop: Services) -> None:
    """The departure's 20 places held by others (through the booking core, as a reseller's
    or another guest's holds would take them)."""
    connection = await shop.shop.connection()
    assert connection is not None
    await hold(shop, connection.id, ("adult",) * 12, slot=SLOT)
    await hold(shop, connection.id, ("adult",) * 8, slot=SLOT)
