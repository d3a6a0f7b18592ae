"""The web shop's pages over HTTP, on both databases: what a guest sees at each step, every
refusal in words and with nothing half-written, the holds as bookings of the shop's own
connection, the limits on holds, CSRF and the Content-Security-Policy, payment against a real
localstripe, and "manage my booking" (details, cancellation with a full refund)."""

from __future__ import annotations

import re
from collections.abc import AsyncIterator

import httpx
import pytest
from fastapi import FastAPI

from berth.container import Services
from berth.domain.bookings import BookingStatus
from berth.domain.payments import Outcome, RefundStatus
from berth.domain.staff import COMMAND_LINE
from berth.fake_stripe import FakeStripe
from berth.store.bookings_reads import BookingFilter
from tests.conftest import auth
from tests.pickups_helpers import STATION
from tests.questions_helpers import BORN, SWIM, WAIVER
from tests.shop_fixtures import app, paying, shop
from tests.shop_helpers import (
    DAY,
    SLOT,
    book_url,
    held,
    hidden_fields,
    hold,
    pay_with,
    problems,
    with_details,
)
from tests.stripe_helpers import VISA, localstripe

__all__ = ["app", "localstripe", "paying", "shop"]
KAYAK_SLOT = "2026-06-02T09:00:00+01:00"
COACH_SLOT = "2026-06-02T10:00:00+01:00"


@pytest.fixture
async def other(app: FastAPI) -> AsyncIterator[httpx.AsyncClient]:
    """Another browser (its own cookies) at the same address."""
    transport = httpx.ASGITransport(app=app, raise_app_exceptions=False)
    async with httpx.AsyncClient(transport=transport, base_url="http://berth.test") as browser:
        yield browser


async def shop_bookings(services: Services) -> list[BookingStatus]:
    connection = await services.shop.connection()
    assert connection is not None
    catalog = (await services.catalog.snapshot()).catalog
    found = await services.staff_bookings.find(catalog, BookingFilter(connection_id=connection.id))
    return [d.booking.status for d in found]


async def test_the_product_list_shows_each_product_with_its_from_price(client: httpx.AsyncClient) -> None:
    page = await client.get("/shop")
    assert page.status_code == 200
    assert 'href="/shop/thames-sightseeing"' in page.text and "Thames Sightseeing Cruise" in page.text
    assert "from €15.00" in page.text  # the cruise's child ticket, its lowest
    assert "berth_shop=" in page.headers["set-cookie"]


async def test_a_product_page_has_its_texts_and_a_calendar_of_days_with_their_lowest_price(
    client: httpx.AsyncClient,
) -> None:
    page = await client.get("/shop/thames-sightseeing")
    assert page.status_code == 200
    text = page.text
    assert "<h1>Thames Sightseeing Cruise</h1>" in text and "An hour on the Thames." in text
    assert "Free cancellation until" in text and "June 2026" in text
    day = re.search(r'<a href="(/shop/thames-sightseeing/2026-06-02\?[^"]+)"[^>]*>.*?</a>', text, re.S)
    assert day is not None and "€15.00" in day.group(0)
    assert 'href="/shop/thames-sightseeing?option=evening#dates"' in text  # its other option
    july = await client.get("/shop/thames-sightseeing?month=2026-07")
    assert "July 2026" in july.text and 'rel="prev"' in july.text


async def test_german_by_choice_or_by_the_browsers_languages(client: httpx.AsyncClient) -> None:
    german = await client.get("/shop/thames-sightseeing?lang=de")
    assert "Sightseeing-Bootsfahrt auf der Themse" in german.text and "Datum wählen" in german.text
    assert 'lang="de"' in german.text and "Juni 2026" in german.text
    assert "Datum wählen" in (await client.get("/shop/thames-sightseeing")).text  # remembered
    fresh = httpx.AsyncClient(transport=client._transport, base_url="http://berth.test")
    asked = await fresh.get("/shop", headers={"Accept-Language": "de-AT,de;q=0.9,en;q=0.5"})
    assert "Online buchen" in asked.text
    english = await fresh.get("/shop", headers={"Accept-Language": "fr, en;q=0.5"})
    assert "Book online" in english.text


async def test_a_day_lists_its_departures_with_the_partys_price_and_the_places_left(
    client: httpx.AsyncClient,
) -> None:
    for _ in range(2):  # a reseller holds 16 of the first departure's 20 places
        taken = await client.post(
            "/octo/bookings", headers=auth(),
            json={"productId": "thames-sightseeing", "optionId": "DEFAULT", "availabilityId": SLOT,
                  "unitItems": [{"unitId": "adult"}] * 8},
        )  # fmt: skip
        assert taken.status_code == 200, taken.text
    page = await client.get(f"/shop/thames-sightseeing/{DAY}?option=DEFAULT&unit-adult=2&unit-child=1")
    assert page.status_code == 200
    departures = re.findall(r'<li>\s*<a class="departure"(.*?)</a>', page.text, re.S)
    assert len(departures) == 4
    assert "10:00" in departures[0] and "4 left" in departures[0] and "€65.00" in departures[0]
    assert "left" not in departures[1] and "€65.00" in departures[1]
    five = await client.get(f"/shop/thames-sightseeing/{DAY}?option=DEFAULT&unit-adult=5")
    assert "Not enough places for your party" in five.text
    assert (
        five.text.count('<span class="departure unavailable">') == 1
        and five.text.count('<a class="departure"') == 3
    )


async def test_a_party_that_breaks_a_rule_is_told_so_and_cannot_choose_a_time(
    client: httpx.AsyncClient,
) -> None:
    page = await client.get(f"/shop/thames-sightseeing/{DAY}?option=DEFAULT&unit-child=2")
    assert page.status_code == 400
    assert "Child must come with Adult." in page.text
    assert "Choose your party first" in page.text and '<a class="departure"' not in page.text
    form = await client.get(book_url("thames-sightseeing", {"child": 2}))
    assert form.status_code == 400 and "Child must come with Adult." in form.text


async def test_every_wrong_choice_is_said_next_to_its_field_and_nothing_is_held(
    client: httpx.AsyncClient, shop: Services
) -> None:
    coach = await hold(client, "highland-coach", slot=COACH_SLOT, adult=2)
    assert coach.status_code == 400
    assert problems(coach.text) == ["Choose where we pick you up."]
    kayak = await hold(client, "sea-kayak", slot=KAYAK_SLOT, form={f"answer-0-{BORN}": "last May"}, paddler=2)
    assert kayak.status_code == 400
    assert problems(kayak.text) == [
        "Please answer this question.",  # the waiver
        "Please answer this question.",  # can everyone swim
        "This answer is not in the form asked for.",  # the first paddler's date of birth
        "Please answer this question.",  # the second's
    ]
    assert 'aria-invalid="true"' in kayak.text and "last May" in kayak.text  # kept as typed
    lunch = await hold(
        client, "lunch-cruise", slot="2026-06-02T12:00:00+01:00", form={"extra-photos": "3"}, guest=1
    )
    assert lunch.status_code == 400 and problems(lunch.text) == ["Photo package: choose at most 1."]
    assert await shop_bookings(shop) == []


async def test_a_hold_is_a_booking_of_the_shops_connection_with_every_choice(
    client: httpx.AsyncClient, shop: Services
) -> None:
    answers = {f"answer-{WAIVER}": "accept", f"answer-{SWIM}": "yes", f"answer-0-{BORN}": "1990-01-31"}
    answer = await hold(client, "sea-kayak", slot=KAYAK_SLOT, form=answers, paddler=1)
    assert answer.status_code == 303, problems(answer.text)
    uuid = answer.headers["location"].rsplit("/", 1)[1]
    connection = await shop.shop.connection()
    assert connection is not None and connection.contract.takes_payment and connection.contract.box_office
    catalog = (await shop.catalog.snapshot()).catalog
    details = await shop.bookings.get(catalog, connection.id, uuid)
    assert details.booking.status is BookingStatus.ON_HOLD and details.booking.pax == 1
    assert details.booking.contact.locales == ("en",)
    stored = details.booking.extensions["octo/questions"]
    assert WAIVER in str(stored) and "1990-01-31" in str(stored)
    coach = await hold(client, "highland-coach", slot=COACH_SLOT, form={"pickup": STATION}, adult=1)
    assert coach.status_code == 303
    coach_uuid = coach.headers["location"].rsplit("/", 1)[1]
    picked = await shop.bookings.get(catalog, connection.id, coach_uuid)
    assert STATION in str(picked.booking.extensions["octo/pickups"])


async def test_a_form_sent_twice_holds_its_places_once(client: httpx.AsyncClient, shop: Services) -> None:
    page = await client.get(book_url("thames-sightseeing", {"adult": 2}))
    fields = hidden_fields(page.text)
    first = await client.post("/shop/thames-sightseeing/book", data=fields)
    second = await client.post("/shop/thames-sightseeing/book", data=fields)
    assert first.status_code == second.status_code == 303
    assert first.headers["location"] == second.headers["location"]
    assert await shop_bookings(shop) == [BookingStatus.ON_HOLD]


async def test_a_form_without_its_sessions_token_changes_nothing(
    client: httpx.AsyncClient, other: httpx.AsyncClient, shop: Services
) -> None:
    page = await client.get(book_url("thames-sightseeing", {"adult": 2}))
    fields = hidden_fields(page.text)
    forged = await client.post("/shop/thames-sightseeing/book", data={**fields, "csrf": "0" * 64})
    assert forged.status_code == 403 and "This page has expired" in forged.text
    elsewhere = await other.post("/shop/thames-sightseeing/book", data=fields)  # no session cookie
    assert elsewhere.status_code == 403
    cross_site = await client.post(
        "/shop/thames-sightseeing/book", data=fields, headers={"Origin": "https://evil.example"}
    )
    assert cross_site.status_code == 403
    assert await shop_bookings(shop) == []


async def test_one_browser_and_one_address_may_hold_only_so_much(
    client: httpx.AsyncClient, other: httpx.AsyncClient, shop: Services
) -> None:
    for _ in range(shop.settings.shop_holds_per_session):
        await held(client, adults=1)
    refused = await hold(client, adult=1)
    assert refused.status_code == 429
    assert "You already have bookings waiting for payment in this browser." in refused.text
    shop.settings.shop_places_per_address = 5
    too_many = await hold(other, adult=3)  # the address holds 3 already
    assert too_many.status_code == 429 and "Too many places are held unpaid" in too_many.text
    shop.settings.shop_holds_per_address = 4
    await held(other, adults=1)
    full = await hold(other, adult=1)
    assert full.status_code == 429 and "Too many bookings are waiting for payment" in full.text
    assert await shop_bookings(shop) == [BookingStatus.ON_HOLD] * 4


async def test_the_details_step_asks_what_the_tickets_need_and_the_terms(
    client: httpx.AsyncClient, other: httpx.AsyncClient, shop: Services
) -> None:
    checkout = await held(client)
    page = await client.get(checkout)
    assert page.status_code == 200
    assert "Adult ticket 1" in page.text and "includes VAT €4.17" in page.text and "€50.00" in page.text
    assert "Your places are held for you until 09:30 BST." in page.text
    empty = await client.post(
        checkout, data={"csrf": hidden_fields(page.text)["csrf"], "emailAddress": "ada@"}
    )
    assert empty.status_code == 400
    assert problems(empty.text) == [
        "Please fill this in.",
        "Please fill this in.",
        "This is not an email address we can send your tickets to.",
        "Please accept the booking terms to go on.",
    ]
    saved = await with_details(client, checkout, phoneNumber="+44 20 7946 0000")
    assert saved.status_code == 303 and saved.headers["location"] == checkout + "/pay"
    assert (await other.get(checkout)).status_code == 404  # another browser's: not found
    connection = await shop.shop.connection()
    assert connection is not None
    catalog = (await shop.catalog.snapshot()).catalog
    booking = (await shop.bookings.get(catalog, connection.id, checkout.rsplit("/", 1)[1])).booking
    assert (
        booking.contact.full_name == "Ada Lovelace"
        and booking.contact.get("phoneNumber") == "+44 20 7946 0000"
    )


async def test_a_bookings_pages_state_its_own_cancellation_terms_as_its_receipt_does(
    client: httpx.AsyncClient,
) -> None:
    """The cruise is free to cancel until a day before it starts: a booking of tomorrow's 10:00
    says until when; one of today's 10:00 (it is 09:00) says it cannot be cancelled free."""
    ahead = await client.get(await held(client))
    assert "Free cancellation until Monday, 1 June 2026, 10:00 BST, with a full refund." in ahead.text
    today = await hold(client, slot="2026-06-01T10:00:00+01:00", adult=1)
    assert today.status_code == 303, today.text
    late = await client.get(today.headers["location"])
    assert "This booking cannot be cancelled free of charge." in late.text
    assert "before it starts" not in late.text


async def test_giving_up_a_hold_frees_its_places(client: httpx.AsyncClient, shop: Services) -> None:
    checkout = await held(client)
    page = await client.get(checkout)
    answer = await client.post(checkout + "/release", data={"csrf": hidden_fields(page.text)["csrf"]})
    assert answer.status_code == 303 and answer.headers["location"] == "/shop/thames-sightseeing"
    assert await shop_bookings(shop) == [BookingStatus.CANCELLED]
    assert (await client.get(checkout)).status_code == 410


async def test_every_page_has_a_strict_policy_and_only_the_payment_page_loads_stripe(
    client: httpx.AsyncClient, shop: Services, localstripe: FakeStripe
) -> None:
    shop.settings.shop_origins = "https://www.harbourside.example"
    checkout = await held(client)
    await with_details(client, checkout)
    for path in (
        "/shop",
        "/shop/thames-sightseeing",
        f"/shop/thames-sightseeing/{DAY}",
        checkout,
        "/shop/nope",
    ):
        seen = await client.get(path)
        assert "Test mode: no card is charged." in seen.text, path  # a fake Stripe's shop says so
        policy = seen.headers["content-security-policy"]
        assert "script-src 'self';" in policy and localstripe.url not in policy, path
        assert (
            "default-src 'none'" in policy
            and "frame-ancestors 'self' https://www.harbourside.example" in policy
        )
    pay = await client.get(checkout + "/pay")
    assert pay.status_code == 200, pay.text
    policy = pay.headers["content-security-policy"]
    assert (
        f"script-src 'self' {localstripe.url};" in policy
        and f"connect-src 'self' {localstripe.url}" in policy
    )
    assert f'<script src="{localstripe.url}/js.stripe.com/v3/"></script>' in pay.text
    assert "Test mode: no card is charged." in pay.text and "Pay €50.00" in pay.text


async def paid_booking(client: httpx.AsyncClient, localstripe: FakeStripe) -> str:
    checkout = await held(client)
    await with_details(client, checkout)
    answer = await pay_with(client, checkout, localstripe, VISA)
    assert answer == {"next": checkout + "/done"}
    return checkout


async def test_a_paid_booking_is_confirmed_with_its_tickets_and_a_receipt_linking_its_page(
    client: httpx.AsyncClient, shop: Services, localstripe: FakeStripe
) -> None:
    checkout = await paid_booking(client, localstripe)
    done = await client.get(checkout + "/done")
    assert done.status_code == 200 and "Booking confirmed" in done.text
    reference = re.search(r"Booking reference <strong>(\w+)</strong>", done.text)
    assert reference is not None
    tickets = re.search(r'href="(http://[^"]+/tickets/[^"]+\.pdf)"', done.text)
    assert tickets is not None
    assert "We have sent your receipt and tickets to ada@example.com." in done.text
    manage = re.search(r'href="http://[^"]+(/shop/manage/[A-Za-z0-9_-]{43})"', done.text)
    assert manage is not None
    assert await shop.mailer.send_due() == 1
    connection = await shop.shop.connection()
    assert connection is not None
    catalog = (await shop.catalog.snapshot()).catalog
    booking = (await shop.bookings.get(catalog, connection.id, checkout.split("/")[3])).booking
    (receipt,) = await shop.mail.messages_of(booking)
    assert receipt.written is not None and receipt.recipient == "ada@example.com"
    assert manage.group(1) in receipt.written.text_body and "€50.00" in receipt.written.text_body
    assert (await client.get(manage.group(1))).status_code == 200
    assert (await client.get(checkout + "/pay")).headers["location"] == checkout + "/done"


async def test_asking_for_a_new_card_payment_on_a_paid_or_released_booking_sends_the_guest_on(
    client: httpx.AsyncClient, shop: Services, localstripe: FakeStripe
) -> None:
    """The page's script asking again (a second tab, a replay) after the booking was paid or
    released: not a failure to start a payment with "your places stay held", but on to the
    page that says how the booking stands, and no payment started."""
    checkout = await paid_booking(client, localstripe)
    csrf = hidden_fields((await client.get(book_url("thames-sightseeing", {"adult": 2}))).text)["csrf"]
    again = await client.post(checkout + "/card", data={"csrf": csrf})
    assert (again.status_code, again.json()) == (200, {"next": checkout + "/done"})
    released = await held(client)
    await with_details(client, released)
    await client.get(released + "/pay")
    assert (await client.post(released + "/release", data={"csrf": csrf})).status_code == 303
    after = await client.post(released + "/card", data={"csrf": csrf})
    assert (after.status_code, after.json()) == (200, {"next": released})
    assert sorted(await shop_bookings(shop)) == sorted([BookingStatus.CONFIRMED, BookingStatus.CANCELLED])


async def test_a_declined_card_keeps_the_hold_and_says_so(
    client: httpx.AsyncClient, shop: Services, localstripe: FakeStripe
) -> None:
    checkout = await held(client)
    await with_details(client, checkout)
    answer = await pay_with(client, checkout, localstripe, "4000000000000341")
    assert answer == {
        "problem": "The payment did not go through, and nothing was charged. Your places are still held: "
        "try again or use another card."
    }
    assert await shop_bookings(shop) == [BookingStatus.ON_HOLD]
    assert await pay_with(client, checkout, localstripe, VISA) == {"next": checkout + "/done"}


async def test_manage_my_booking_changes_the_details_and_cancels_with_a_full_refund(
    client: httpx.AsyncClient, other: httpx.AsyncClient, shop: Services, localstripe: FakeStripe
) -> None:
    checkout = await paid_booking(client, localstripe)
    done = await client.get(checkout + "/done")
    found = re.search(r'href="http://[^"]+(/shop/manage/[A-Za-z0-9_-]{43})"', done.text)
    assert found is not None
    manage = found.group(1)
    page = await other.get(manage)  # the link from the email, in another browser
    assert page.status_code == 200 and "You can cancel free of charge until" in page.text
    csrf = hidden_fields(page.text)["csrf"]
    wrong = await other.post(
        manage + "/contact", data={"csrf": csrf, "firstName": "Ada", "lastName": "", "emailAddress": "x"}
    )
    assert wrong.status_code == 400 and problems(wrong.text) == [
        "Please fill this in.", "This is not an email address we can send your tickets to.",
    ]  # fmt: skip
    changed = await other.post(
        manage + "/contact",
        data={"csrf": csrf, "firstName": "Ada", "lastName": "King", "emailAddress": "ada@example.org"},
    )
    assert changed.headers["location"] == manage + "?done=saved"
    assert "Your details are saved." in (await other.get(changed.headers["location"])).text
    unconfirmed = await other.post(manage + "/cancel", data={"csrf": csrf})
    assert unconfirmed.status_code == 400 and "Tick the box" in unconfirmed.text
    assert await shop_bookings(shop) == [BookingStatus.CONFIRMED]
    cancelled = await other.post(manage + "/cancel", data={"csrf": csrf, "confirm": "yes"})
    assert cancelled.headers["location"] == manage + "?done=cancelled"
    after = (await other.get(cancelled.headers["location"])).text
    assert "Your booking is cancelled." in after and "Free cancellation" not in after  # its terms are over
    assert await shop_bookings(shop) == [BookingStatus.CANCELLED]
    connection = await shop.shop.connection()
    assert connection is not None
    catalog = (await shop.catalog.snapshot()).catalog
    booking = (await shop.bookings.get(catalog, connection.id, checkout.split("/")[3])).booking
    assert booking.contact.get("emailAddress") == "ada@example.org"
    ledger = await shop.payments.payments_for_booking(booking.id)
    assert [p.outcome for p in ledger.payments] == [Outcome.CLAIMED]
    assert [(r.amount, r.status) for r in ledger.refunds] == [(5000, RefundStatus.SUCCEEDED)]
    while await shop.mailer.send_due():  # a booking's letters go one after another
        pass
    letters = {m.kind: m.written for m in await shop.mail.messages_of(booking)}
    notice = letters["cancelled"]
    assert notice is not None and notice.recipient == "ada@example.org"
    assert (
        "You cancelled this booking.\nThe price you paid is refunded in full to your card."
        in notice.text_body
    )


async def test_a_link_that_names_no_booking_finds_nothing(client: httpx.AsyncClient) -> None:
    for token in ("nope", "A" * 43):
        page = await client.get(f"/shop/manage/{token}")
        assert page.status_code == 404 and "Page not found" in page.text


async def test_an_unknown_product_or_day_is_not_found_and_a_closed_shop_sells_nothing(
    client: httpx.AsyncClient, shop: Services
) -> None:
    assert (await client.get("/shop/no-such-thing")).status_code == 404
    assert (await client.get("/shop/thames-sightseeing/2020-01-01")).status_code == 404
    assert (await client.get("/shop/thames-sightseeing/not-a-day")).status_code == 400
    assert (await client.get("/shop/thames-sightseeing?option=nope")).status_code == 404
    connection = await shop.shop.connection()
    assert connection is not None
    await shop.connections.revoke(connection.id, actor=COMMAND_LINE)
    shop.shop._channel = None  # what another process sees a second later
    closed = await client.get("/shop")
    assert closed.status_code == 404 and "The shop is closed" in closed.text


async def test_opening_hours_rentals_and_a_choice_of_boat(client: httpx.AsyncClient, shop: Services) -> None:
    museum = await client.get(f"/shop/tower-of-stories/{DAY}?option=DEFAULT&unit-family=1&unit-child=1")
    assert "Open 09:30 to 17:30" in museum.text and "€57.00" in museum.text
    day = re.search(r'<a class="departure" href="([^"]+)"', museum.text)
    assert day is not None
    bikes = await client.get("/shop/city-bike-hire")
    assert '<select id="duration" name="duration" data-submit-on-change>' in bikes.text
    assert '<option value="1-day" selected>1 day</option>' in bikes.text  # the option's default
    hire = await client.get(f"/shop/city-bike-hire/{DAY}?option=DEFAULT&duration=2-hours&unit-bike=1")
    assert "09:00 BST, back by 11:00 BST" in hire.text and "£12.00" in hire.text  # a day's £30.00 x 0.4
    rented = await hold(
        client, "city-bike-hire", slot="2026-06-02T09:00:00+01:00", form={"duration": "2-hours"}, bike=1
    )
    assert rented.status_code == 303, problems(rented.text)
    connection = await shop.shop.connection()
    assert connection is not None
    catalog = (await shop.catalog.snapshot()).catalog
    booking = (
        await shop.bookings.get(catalog, connection.id, rented.headers["location"].rsplit("/", 1)[1])
    ).booking
    assert booking.rental_duration_id == "2-hours"
    boats = await client.get(book_url("harbour-cruise", {"adult": 2}))
    assert '<option value="heron">MV Heron (12 free)</option>' in boats.text
    seated = await hold(client, "harbour-cruise", form={"resource-boats": "heron"}, adult=2)
    assert seated.status_code == 303, problems(seated.text)
    nowhere = await hold(client, "harbour-cruise", form={"resource-boats": "no-such-boat"}, adult=2)
    assert nowhere.status_code == 409 and "Sorry" in nowhere.text
