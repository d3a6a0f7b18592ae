"""A package (octo/packages) in the web shop over HTTP, on both databases: the city pass's
calendar (a day whose required include is full cannot be booked), its day's page (the pass's
departure, the cruise's and the museum's, the kayak trip as an optional extra within its
group's count), the hold as a package booking with its included bookings, paid against a real
localstripe and confirmed with every include, their tickets, and cancelled from "manage my
booking" with its includes and a full refund; an include sold out meanwhile, or chosen against
the package's rules, said in the guest's words (English and German) with nothing held.
Clock: 2026-06-01T08:00Z (Monday; 09:00 in London)."""

from __future__ import annotations

import re
from urllib.parse import quote

import httpx

from berth.container import Services
from berth.domain.bookings import BookingStatus
from berth.domain.payments import Outcome, RefundStatus
from berth.fake_stripe import FakeStripe
from berth.read_models.bookings import BookingDetails
from berth.store.bookings_reads import BookingFilter
from tests.conftest import auth
from tests.shop_fixtures import app, paying, shop
from tests.shop_helpers import DAY, hidden_fields, pay_with, problems, with_details
from tests.stripe_helpers import VISA, localstripe

__all__ = ["app", "localstripe", "paying", "shop"]
PASS_SLOT = "2026-06-02T00:00:00+01:00"  # the pass on DAY (opening hours: one a day)
CRUISE = "2026-06-02T10:00:00+01:00"
MUSEUM = "2026-06-02T00:00:00+01:00"
KAYAK = "2026-06-03T18:00:00+01:00"  # the kayak trip of the day after (its validityDays: 2)
PASS_DAY = f"/shop/harbour-city-pass/{DAY}"


def pass_url(adults: int = 2, children: int = 0, **includes: str) -> str:
    """The pass's booking form for the party, with the includes chosen (id -> availability)."""
    chosen = "".join(f"&include-{include}={quote(slot)}" for include, slot in includes.items())
    party = f"&unit-adult={adults}" + (f"&unit-child={children}" if children else "")
    return f"/shop/harbour-city-pass/book?option=DEFAULT&slot={quote(PASS_SLOT)}{party}{chosen}"


async def fill(client: httpx.AsyncClient, availability_id: str, places: int) -> None:
    """A reseller books `places` adults on a departure of the cruise."""
    while places > 0:
        take = min(places, 10)
        taken = await client.post(
            "/octo/bookings", headers=auth(),
            json={"productId": "thames-sightseeing", "optionId": "DEFAULT", "availabilityId": availability_id,
                  "unitItems": [{"unitId": "adult"}] * take},
        )  # fmt: skip
        assert taken.status_code == 200, taken.text
        places -= take


async def shop_bookings(services: Services) -> list[BookingDetails]:
    connection = await services.shop.connection()
    assert connection is not None
    catalog = (await services.catalog.snapshot()).catalog
    return await services.staff_bookings.find(catalog, BookingFilter(connection_id=connection.id))


async def booking_of(services: Services, checkout: str) -> BookingDetails:
    connection = await services.shop.connection()
    assert connection is not None
    catalog = (await services.catalog.snapshot()).catalog
    return await services.bookings.get(catalog, connection.id, checkout.split("/")[3])


async def held_pass(client: httpx.AsyncClient, url: str) -> httpx.Response:
    form = await client.get(url)
    assert form.status_code == 200, form.text
    return await client.post("/shop/harbour-city-pass/book", data=hidden_fields(form.text))


async def test_the_pass_is_offered_with_what_it_books_and_a_day_whose_cruise_is_full_cannot_be_booked(
    client: httpx.AsyncClient,
) -> None:
    assert 'href="/shop/harbour-city-pass"' in (await client.get("/shop")).text
    for departure in ("10:00", "12:00", "14:00", "16:00"):
        await fill(client, f"2026-06-03T{departure}:00+01:00", 20)
    page = await client.get("/shop/harbour-city-pass")
    assert page.status_code == 200
    books = page.text.split("What your package books", 1)[1].split("Choose a date", 1)[0]
    assert "Included sights" in books and "Thames Sightseeing Cruise" in books and "Tower of Stories" in books
    assert "Optional extra" in books and "Sunset Kayak <span" in books and "(optional)" in books
    assert f'href="{PASS_DAY}?option=DEFAULT"' in page.text
    assert 'href="/shop/harbour-city-pass/2026-06-03?' not in page.text  # every cruise that day is full
    assert 'href="/shop/harbour-city-pass/2026-06-04?' in page.text
    assert (
        'href="/shop/thames-sightseeing/2026-06-03?'
        not in (await client.get("/shop/thames-sightseeing")).text
    )


async def test_the_days_page_asks_the_passs_time_and_each_includes_with_the_places_left(
    client: httpx.AsyncClient,
) -> None:
    await fill(client, CRUISE, 16)
    await fill(client, "2026-06-02T12:00:00+01:00", 20)
    page = await client.get(f"{PASS_DAY}?option=DEFAULT&unit-adult=2")
    assert page.status_code == 200
    text = page.text
    assert '<form method="get" action="/shop/harbour-city-pass/book" class="package">' in text
    assert f'name="slot" value="{PASS_SLOT}" required checked>' in text  # the one time: chosen
    cruise = text.split('id="include-cruise"', 1)[1].split("</fieldset>", 1)[0]
    assert "<legend>Thames Sightseeing Cruise</legend>" in cruise
    assert re.search(r'value="2026-06-02T10:00:00\+01:00" required>.*?10:00 BST.*?4 left', cruise, re.S)
    assert re.search(r'value="2026-06-02T12:00:00\+01:00" required disabled>.*?Sold out', cruise, re.S)
    assert cruise.count("checked") == 0  # three times to choose from: the guest chooses
    museum = text.split('id="include-museum"', 1)[1].split("</fieldset>", 1)[0]
    assert f'value="{MUSEUM}" required checked>' in museum and "Open 09:30 to 17:30" in museum
    kayak = text.split('id="include-kayak"', 1)[1].split("</fieldset>", 1)[0]
    assert '<legend>Sunset Kayak <span class="optional">(optional)</span></legend>' in kayak
    assert 'value="" checked> <span>Not included</span>' in kayak
    assert f'value="{KAYAK}">' in kayak and "Wednesday, 3 June 2026, 18:00 BST" in kayak
    assert "Price for your party: €90.00" in text
    with_child = await client.get(f"{PASS_DAY}?option=DEFAULT&unit-adult=1&unit-child=1")
    assert "<strong>Sunset Kayak</strong>: Not for your party" in with_child.text  # paddlers are adults
    german = await client.get(f"{PASS_DAY}?option=DEFAULT&unit-adult=2&lang=de")
    assert "Nicht enthalten" in german.text and "Ihr Paket" in german.text


async def test_the_pass_is_held_paid_and_confirmed_with_its_includes_their_contact_and_tickets(
    client: httpx.AsyncClient, shop: Services, localstripe: FakeStripe
) -> None:
    form = await client.get(pass_url(cruise=CRUISE, museum=MUSEUM, kayak=KAYAK))
    assert form.status_code == 200, form.text
    assert "<dt>Thames Sightseeing Cruise</dt><dd>Tuesday, 2 June 2026, 10:00 BST</dd>" in form.text
    assert "<dt>Sunset Kayak</dt><dd>Wednesday, 3 June 2026, 18:00 BST</dd>" in form.text
    answer = await client.post("/shop/harbour-city-pass/book", data=hidden_fields(form.text))
    assert answer.status_code == 303, problems(answer.text)
    checkout = answer.headers["location"]
    details = await booking_of(shop, checkout)
    assert details.booking.status is BookingStatus.ON_HOLD
    assert [(m.booking.package_include_id, m.booking.availability_id, m.booking.status) for m in details.package_bookings] == [
        ("cruise", CRUISE, BookingStatus.ON_HOLD), ("museum", MUSEUM, BookingStatus.ON_HOLD),
        ("kayak", KAYAK, BookingStatus.ON_HOLD),
    ]  # fmt: skip
    page = await client.get(checkout)
    assert "Included in your booking" in page.text and "Tower of Stories" in page.text
    assert "Total" in page.text and "€90.00" in page.text  # the pass's price: what is charged
    no_phone = await with_details(client, checkout)
    assert no_phone.status_code == 400 and problems(no_phone.text) == ["Please fill this in."]  # the kayak's
    saved = await with_details(client, checkout, phoneNumber="+44 20 7946 0000")
    assert saved.headers["location"] == checkout + "/pay"
    assert await pay_with(client, checkout, localstripe, VISA) == {"next": checkout + "/done"}
    done = await client.get(checkout + "/done")
    assert done.status_code == 200 and "Booking confirmed" in done.text
    included = done.text.split("Included in your booking", 1)[1].split("</ul>", 1)[0]
    assert "Thames Sightseeing Cruise" in included and "(to be confirmed by the supplier)" in included
    assert re.search(
        r'href="http://[^"]+/tickets/[^"]+\.pdf"[^>]*>Tickets \(PDF\)<span class="sr">: Thames', included
    )
    paid = await booking_of(shop, checkout)
    assert paid.booking.status is BookingStatus.CONFIRMED
    assert [(m.booking.package_include_id, m.booking.status) for m in paid.package_bookings] == [
        ("cruise", BookingStatus.CONFIRMED), ("museum", BookingStatus.CONFIRMED), ("kayak", BookingStatus.PENDING),
    ]  # fmt: skip
    assert {m.booking.contact.get("phoneNumber") for m in (paid, *paid.package_bookings)} == {
        "+44 20 7946 0000"
    }
    ledger = await shop.payments.payments_for_booking(paid.booking.id)
    assert [(p.amount, p.outcome) for p in ledger.payments] == [(9000, Outcome.CLAIMED)]
    for member in paid.package_bookings:
        assert (await shop.payments.payments_for_booking(member.booking.id)).payments == []


async def test_cancelling_from_manage_my_booking_cancels_every_include_and_refunds_in_full(
    client: httpx.AsyncClient, shop: Services, localstripe: FakeStripe
) -> None:
    answer = await held_pass(client, pass_url(adults=1, cruise=CRUISE, museum=MUSEUM))
    checkout = answer.headers["location"]
    await with_details(client, checkout)
    assert await pay_with(client, checkout, localstripe, VISA) == {"next": checkout + "/done"}
    found = re.search(
        r'href="http://[^"]+(/shop/manage/[A-Za-z0-9_-]{43})"', (await client.get(checkout + "/done")).text
    )
    assert found is not None
    manage = found.group(1)
    page = await client.get(manage)
    assert "Included in your booking" in page.text and "You can cancel free of charge until" in page.text
    changed = await client.post(
        manage + "/contact",
        data={"csrf": hidden_fields(page.text)["csrf"], "firstName": "Ada", "lastName": "King", "emailAddress": "ada@example.org"},
    )  # fmt: skip
    assert changed.headers["location"] == manage + "?done=saved"
    cancelled = await client.post(
        manage + "/cancel", data={"csrf": hidden_fields(page.text)["csrf"], "confirm": "yes"}
    )
    assert cancelled.headers["location"] == manage + "?done=cancelled"
    after = await booking_of(shop, checkout)
    assert [after.booking.status, *(m.booking.status for m in after.package_bookings)] == [
        BookingStatus.CANCELLED
    ] * 3
    assert {m.booking.contact.get("lastName") for m in (after, *after.package_bookings)} == {"King"}
    ledger = await shop.payments.payments_for_booking(after.booking.id)
    assert [(r.amount, r.status) for r in ledger.refunds] == [(4500, RefundStatus.SUCCEEDED)]


async def test_an_include_sold_out_meanwhile_is_said_in_the_guests_words_and_nothing_is_held(
    client: httpx.AsyncClient, shop: Services
) -> None:
    for language, said in (
        ("en", "Sorry, Thames Sightseeing Cruise has just sold out at the time you chose. Please choose another time."),
        ("de", "Leider ist Sightseeing-Bootsfahrt auf der Themse zur gewählten Zeit gerade ausgebucht. Bitte wählen Sie eine andere Zeit."),
    ):  # fmt: skip
        form = await client.get(pass_url(cruise=CRUISE, museum=MUSEUM) + f"&lang={language}")
        assert form.status_code == 200
        await fill(client, CRUISE, 19 if language == "en" else 1)  # one place left, then none
        refused = await client.post("/shop/harbour-city-pass/book", data=hidden_fields(form.text))
        assert refused.status_code == 409 and said in refused.text
    assert await shop_bookings(shop) == []


async def test_includes_chosen_against_the_packages_rules_are_said_with_the_way_back(
    client: httpx.AsyncClient, shop: Services
) -> None:
    missing = await client.get(pass_url(museum=MUSEUM))
    assert missing.status_code == 400
    assert "Thames Sightseeing Cruise: choose a time." in missing.text
    back = re.search(r'<a class="button" href="([^"]+)">Back to your choices</a>', missing.text)
    assert back is not None and back.group(1).startswith(PASS_DAY + "?")
    form = await client.get(pass_url(cruise=CRUISE, museum=MUSEUM))
    forged = {**hidden_fields(form.text), "include-cruise": ""}
    refused = await client.post("/shop/harbour-city-pass/book", data=forged)
    assert refused.status_code == 400 and "Thames Sightseeing Cruise: choose a time." in refused.text
    elsewhere = {**hidden_fields(form.text), "include-cruise": "2026-06-09T10:00:00+01:00"}  # another day
    gone = await client.post("/shop/harbour-city-pass/book", data=elsewhere)
    assert gone.status_code == 409 and "can no longer be booked at the time you chose" in gone.text
    child = await client.get(
        pass_url(adults=1, children=1, cruise=CRUISE, museum=MUSEUM, kayak=KAYAK) + "&lang=de"
    )
    # The kayak's paddlers are adults; "Child" is the catalogue's title of the pass's unit.
    assert child.status_code == 400 and "Sunset Kayak ist für Child nicht buchbar." in child.text
    assert await shop_bookings(shop) == []
