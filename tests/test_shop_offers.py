"""Offers (octo/offers) in the web shop, over HTTP on both databases against a real localstripe:
a promo code applied at the details step and removed, every refusal said in the guest's words
(English, German) with the booking unchanged, an automatic offer shown, the discount line by
line on every page of the booking, and the card charged the discounted total. Then the reading
of every reason domain.offer_rules gives back into the guest's words (no database)."""

from __future__ import annotations

import re
from collections.abc import AsyncIterator
from datetime import UTC, date, datetime
from decimal import Decimal
from typing import Any

import httpx
import pytest
from fastapi import FastAPI

from berth.container import Services
from berth.domain.bookings import Booking
from berth.domain.discounts import OfferTerms
from berth.domain.offer_rules import Sale, Uses, offer_for_code, unusable_reason, uses_reason
from berth.domain.offers import OfferRefused, parse_offers
from berth.domain.payments import Outcome, PaymentStatus
from berth.domain.shop_offers import OfferProblem, Why, offer_problem
from berth.domain.staff import COMMAND_LINE
from berth.fake_stripe import FakeStripe
from berth.http.shop.offer_words import refusal_text
from berth.translations import Words
from tests.shop_fixtures import app, paying, shop
from tests.shop_helpers import held, hidden_fields, pay_with, with_details
from tests.stripe_helpers import VISA, listed, localstripe

__all__ = ["app", "localstripe", "paying", "shop"]
MINUS = "\N{MINUS SIGN}"


def offer(offer_id: str, code: str | None, title: str, **fields: Any) -> dict[str, Any]:
    return {
        "id": offer_id,
        **({"code": code} if code else {}),
        "texts": {"en-GB": {"title": title}, "de-DE": {"title": f"{title} (de)"}},
        "discount": {"percent": 10},
        "channels": ["SHOP"],
        **fields,
    }


CRUISE = [{"product": "thames-sightseeing", "units": ["adult"]}]
CODES = [
    offer("cruise-ten", "CRUISE10", "Cruise 10", appliesTo=CRUISE, maxUsesPerEmail=1),
    offer("weekend", "WEEKEND", "Weekend", weekdays=["SAT", "SUN"]),
    offer("gone", "GONE", "Gone", saleUntil="2026-05-31T00:00:00Z"),
    offer("kayak", "KAYAK5", "Kayak", appliesTo=[{"product": "sunset-kayak"}]),
    offer("family", "FAMILY", "Family", minUnits=3),
    offer("big", "BIG", "Big", minTotal={"EUR": 10000}),
    offer("once", "ONCE", "Once", maxUses=1),
]


@pytest.fixture
async def offered(shop: Services) -> Services:
    await shop.offers.save({"offers": CODES}, base_version=None, actor=COMMAND_LINE)
    return shop


@pytest.fixture
async def other(app: FastAPI) -> AsyncIterator[httpx.AsyncClient]:
    """Another browser (its own cookies)."""
    transport = httpx.ASGITransport(app=app, raise_app_exceptions=False)
    async with httpx.AsyncClient(transport=transport, base_url="http://berth.test") as browser:
        yield browser


async def _booking(services: Services, checkout: str) -> Booking:
    connection = await services.shop.connection()
    assert connection is not None
    catalog = (await services.catalog.snapshot()).catalog
    return (await services.bookings.get(catalog, connection.id, checkout.split("/")[3])).booking


async def _code(client: httpx.AsyncClient, checkout: str, code: str, **extra: str) -> httpx.Response:
    page = await client.get(checkout)
    return await client.post(
        checkout + "/offer", data={"csrf": hidden_fields(page.text)["csrf"], "offerCode": code, **extra}
    )


def _rows(html: str) -> list[tuple[str, str]]:
    """The price summary's rows: each line's label (its notes after `|`) and amount."""
    rows = re.findall(r'<tr[^>]*><th scope="row">(.*?)</th><td class="amount">([^<]*)</td></tr>', html)
    return [
        (re.sub(r'<span class="tax">', "|", label).replace("</span>", ""), amount) for label, amount in rows
    ]


def _problem(html: str) -> str | None:
    found = re.search(r'<div class="problem" id="offerCode-problem"><p>([^<]*)</p>', html)
    return found.group(1).replace("&#39;", "'") if found else None


DISCOUNTED = [
    ("Adult ticket 1", "€25.00"),
    (f"Cruise 10 {MINUS}10%|€22.50 after the discount|includes VAT €3.75", f"{MINUS}€2.50"),
    ("Adult ticket 2", "€25.00"),
    (f"Cruise 10 {MINUS}10%|€22.50 after the discount|includes VAT €3.75", f"{MINUS}€2.50"),
    ("Total", "€45.00"),
    ("of which VAT", "€7.50"),
]


async def test_a_code_discounts_each_line_on_every_page_and_the_card_is_charged_the_discounted_total(
    client: httpx.AsyncClient, offered: Services, localstripe: FakeStripe
) -> None:
    checkout = await held(client)
    await with_details(client, checkout)
    assert "Pay €50.00" in (await client.get(checkout + "/pay")).text  # a payment opened at full price
    page = await client.get(checkout)  # "Change your details": back to the details step
    assert '<label for="offerCode">Promo code' in page.text and 'name="offerCode"' in page.text
    applied = await _code(client, checkout, " cruise10 ")
    assert (applied.status_code, applied.headers["location"]) == (303, checkout + "#promotion")
    page = await client.get(checkout)
    assert f"Promo code CRUISE10 applied: Cruise 10 {MINUS}10%" in page.text
    assert 'name="offerCode"' not in page.text and "Remove the discount" in page.text
    assert _rows(page.text) == DISCOUNTED
    booking = await _booking(offered, checkout)
    assert sum(line.price.retail for line in booking.price_lines) == 4500
    pay = await client.get(checkout + "/pay")
    assert _rows(pay.text) == DISCOUNTED and "Pay €45.00" in pay.text
    assert await pay_with(client, checkout, localstripe, VISA) == {"next": checkout + "/done"}
    intents = [
        i for i in listed(localstripe, "payment_intents") if i["metadata"].get("berth_booking") == booking.id
    ]
    assert sorted((i["amount"], i["currency"], i["status"]) for i in intents) == [
        (4500, "eur", "succeeded"),
        (5000, "eur", "canceled"),  # the one opened before the code: given up
    ]
    ledger = await offered.payments.payments_for_booking(booking.id)
    assert sorted((p.amount, p.status, p.outcome) for p in ledger.payments) == [
        (4500, PaymentStatus.SUCCEEDED, Outcome.CLAIMED),
        (5000, PaymentStatus.CANCELED, None),
    ]
    done = await client.get(checkout + "/done")
    assert "Booking confirmed" in done.text and _rows(done.text) == DISCOUNTED
    manage = re.search(r'href="http://[^"]+(/shop/manage/[A-Za-z0-9_-]{43})"', done.text)
    assert manage is not None
    assert _rows((await client.get(manage.group(1))).text) == DISCOUNTED
    assert await offered.mailer.send_due() == 1
    (receipt,) = await offered.mail.messages_of(booking)
    assert receipt.written is not None and "Price: €45.00" in receipt.written.text_body


async def test_a_code_removed_gives_the_full_price_back_and_the_field_again(
    client: httpx.AsyncClient, offered: Services
) -> None:
    checkout = await held(client)
    await _code(client, checkout, "CRUISE10")
    removed = await _code(client, checkout, "", remove="yes")
    assert (removed.status_code, removed.headers["location"]) == (303, checkout + "#promotion")
    page = await client.get(checkout)
    assert "applied" not in page.text and '<label for="offerCode">Promo code' in page.text
    assert _rows(page.text)[:3] == [
        ("Adult ticket 1|includes VAT €4.17", "€25.00"),
        ("Adult ticket 2|includes VAT €4.17", "€25.00"),
        ("Total", "€50.00"),
    ]
    booking = await _booking(offered, checkout)
    assert (
        sum(line.price.retail for line in booking.price_lines) == 5000
        and "octo/offers" not in booking.extensions
    )


REFUSED = [
    ("NOPE", "We do not know this code. Please check it and try again.",
     "Diesen Code kennen wir nicht. Bitte prüfen Sie ihn und versuchen Sie es erneut."),
    ("GONE", "This code has expired.", "Dieser Code ist abgelaufen."),
    ("KAYAK5", "This code cannot be used for Thames Sightseeing Cruise.",
     "Dieser Code gilt nicht für Sightseeing-Bootsfahrt auf der Themse."),
    ("WEEKEND", "This code is only for trips on Saturday or Sunday.",
     "Dieser Code gilt nur für Termine am Samstag oder Sonntag."),
    ("FAMILY", "This code needs at least 3 tickets it applies to in your booking.",
     "Dieser Code gilt erst ab 3 passenden Tickets in Ihrer Buchung."),
    ("BIG", "This code is for bookings of at least €100.00.", "Dieser Code gilt für Buchungen ab 100,00\N{NO-BREAK SPACE}€."),
    ("", "Please type your promo code.", "Bitte geben Sie Ihren Rabattcode ein."),
]  # fmt: skip


@pytest.mark.parametrize("language", ["en", "de"])
async def test_a_refused_code_says_why_next_to_the_field_and_changes_nothing(
    client: httpx.AsyncClient, offered: Services, language: str
) -> None:
    await client.get(f"/shop?lang={language}")
    checkout = await held(client)
    before = await _booking(offered, checkout)
    for code, english, german in REFUSED:
        refused = await _code(client, checkout, code)
        assert refused.status_code == 400, code
        assert _problem(refused.text) == (english if language == "en" else german), code
        field = re.search(r'<input id="offerCode"[^>]*>', refused.text)
        assert field is not None and f'value="{code}"' in field.group(0)
        assert 'aria-invalid="true" aria-describedby="offerCode-problem" autofocus' in field.group(0)
    assert await _booking(offered, checkout) == before


async def test_a_code_used_up_and_one_used_up_for_the_guests_email(
    client: httpx.AsyncClient, other: httpx.AsyncClient, offered: Services
) -> None:
    first = await held(client, adults=1)
    assert (await _code(client, first, "ONCE")).status_code == 303
    used_up = await _code(other, await held(other, adults=1), "ONCE")
    assert _problem(used_up.text) == "This code has been used up."
    await _code(client, first, "", remove="yes")
    await _code(client, first, "CRUISE10")
    assert (await with_details(client, first)).status_code == 303  # ada@example.com uses it once
    second = await held(other, adults=1)
    assert (await _code(other, second, "CRUISE10")).status_code == 303  # no email given yet
    before = await _booking(offered, second)
    refused = await with_details(other, second)
    assert refused.status_code == 400
    assert (
        _problem(refused.text)
        == "This code has already been used as often as it may be with your email address."
    )
    assert re.search(
        r'<button type="submit" name="remove" value="yes" class="link" aria-describedby="offerCode-problem" autofocus>',
        refused.text,
    )
    assert 'value="Ada"' in refused.text  # what the guest typed stays
    assert await _booking(offered, second) == before


async def test_an_automatic_offer_is_shown_with_its_title_and_one_used_up_leaves_the_full_price(
    client: httpx.AsyncClient, other: httpx.AsyncClient, shop: Services
) -> None:
    early = offer("early", None, "Early bird", discount={"percent": 15}, maxUses=1)
    await shop.offers.save({"offers": [early]}, base_version=None, actor=COMMAND_LINE)
    checkout = await held(client, adults=1)
    page = await client.get(checkout)
    assert _rows(page.text)[:2] == [
        ("Adult ticket 1", "€25.00"),
        (f"Early bird {MINUS}15%|€21.25 after the discount|includes VAT €3.54", f"{MINUS}€3.75"),
    ]
    assert 'id="promotion"' not in page.text  # no code to type, and the automatic offer stays
    await client.get("/shop?lang=de")
    german = await client.get(checkout)
    nbsp = "\N{NO-BREAK SPACE}"
    assert _rows(german.text)[1] == (
        f"Early bird (de) {MINUS}15{nbsp}%|21,25{nbsp}€ nach Rabatt|inkl. VAT 3,54{nbsp}€",
        f"{MINUS}3,75{nbsp}€",
    )
    full = await held(other, adults=1)  # its one use is taken: this hold is at full price
    booking = await _booking(shop, full)
    assert sum(line.price.retail for line in booking.price_lines) == 2500 and not booking.extensions.get(
        "octo/offers"
    )


# --- the reasons in the guest's words (no database) ------------------------------------------

SALE = Sale(
    channel="shop", shop=True, product_id="cruise", option_id="DEFAULT", travel_date=date(2026, 6, 2),
    now=datetime(2026, 6, 1, 8, tzinfo=UTC), currency="EUR", unit_ids=("adult", "adult"), total=5000,
)  # fmt: skip


def _reason(**fields: Any) -> str:
    document = parse_offers({"offers": [offer("x", "X10", "X", **fields)]})
    reason = unusable_reason(document.offers[0], SALE)
    assert reason is not None
    return reason


def _kept_units_reason(**fields: Any) -> str:
    document = parse_offers({"offers": [offer("x", "X10", "X", **fields)]})
    reason = OfferTerms.of(document.offers[0], "cruise", "DEFAULT", "EUR").units_reason(["adult"] * 2)
    assert reason is not None
    return reason


def _unknown() -> str:
    with pytest.raises(OfferRefused) as refused:
        offer_for_code(parse_offers({"offers": []}), "NOPE", SALE)
    return refused.value.reason


def _used(**fields: Any) -> str:
    reason = uses_reason(parse_offers({"offers": [offer("x", "X10", "X", **fields)]}).offers[0], Uses(1, 1))
    assert reason is not None
    return reason


@pytest.mark.parametrize(
    ("reason", "problem", "english", "german"),
    [
        (_unknown(), OfferProblem(Why.UNKNOWN), "We do not know this code.", "Diesen Code kennen wir nicht."),
        (_reason(active=False), OfferProblem(Why.PAUSED), "at the moment", "zurzeit"),
        (_reason(saleFrom="2026-07-01T00:00:00Z"), OfferProblem(Why.NOT_YET), "cannot be used yet", "noch nicht"),
        (_reason(saleUntil="2026-05-01T00:00:00Z"), OfferProblem(Why.EXPIRED), "has expired", "abgelaufen"),
        (_reason(channels=["other"]), OfferProblem(Why.CHANNEL), "in our online shop", "Online-Shop"),
        (_reason(appliesTo=[{"product": "kayak"}]), OfferProblem(Why.PRODUCT), "for Cruise.", "für Cruise."),
        (unusable_reason(parse_offers({"offers": [offer("x", "X10", "X", weekdays=["MON"])]}).offers[0],
                         Sale("shop", True, "cruise", "DEFAULT", None, SALE.now)),
         OfferProblem(Why.PRODUCT), "for Cruise.", "für Cruise."),
        (_reason(travelFrom="2026-07-01"), OfferProblem(Why.TRAVEL_FROM, day=date(2026, 7, 1)),
         "trips from Wednesday, 1 July 2026.", "ab Mittwoch, 1. Juli 2026."),
        (_reason(travelUntil="2026-05-31"), OfferProblem(Why.TRAVEL_UNTIL, day=date(2026, 5, 31)),
         "trips until Sunday, 31 May 2026.", "bis Sonntag, 31. Mai 2026."),
        (_reason(weekdays=["MON", "WED", "FRI"]), OfferProblem(Why.WEEKDAYS, weekdays=(0, 2, 4)),
         "on Monday, Wednesday or Friday.", "am Montag, Mittwoch oder Freitag."),
        (_reason(weekdays=["SUN"]), OfferProblem(Why.WEEKDAYS, weekdays=(6,)), "only for trips on Sunday.", "am Sonntag."),
        (_reason(minDaysAhead=21), OfferProblem(Why.DAYS_AHEAD, count=21), "at least 21 days before", "21 Tage"),
        (_reason(discount={"amounts": {"GBP": 500}}), OfferProblem(Why.CURRENCY, currency="EUR"), "paying in EUR.", "in EUR."),
        (_reason(appliesTo=[{"product": "cruise", "units": ["child"]}]), OfferProblem(Why.NO_UNITS),
         "any of the tickets", "keines der Tickets"),
        (_reason(minUnits=3), OfferProblem(Why.MIN_UNITS, count=3), "at least 3 tickets", "ab 3 passenden"),
        (_kept_units_reason(minUnits=3), OfferProblem(Why.MIN_UNITS, count=3), "at least 3 tickets", "ab 3 passenden"),
        (_reason(maxUnits=1), OfferProblem(Why.MAX_UNITS, count=1), "at most 1 tickets", "höchstens 1 Tickets"),
        (_kept_units_reason(maxUnits=1), OfferProblem(Why.MAX_UNITS, count=1), "at most 1 tickets", "höchstens 1"),
        (_reason(minTotal={"EUR": 10050}), OfferProblem(Why.MIN_TOTAL, currency="EUR", amount=10050),
         "at least €100.50.", "ab 100,50\N{NO-BREAK SPACE}€."),
        (_used(maxUses=1), OfferProblem(Why.USED_UP), "has been used up.", "aufgebraucht"),
        (_used(maxUsesPerEmail=1), OfferProblem(Why.USED_UP_BY_EMAIL), "with your email address.", "E-Mail-Adresse"),
        ("a reason written later", OfferProblem(Why.OTHER), "cannot be used for this booking.", "diese Buchung"),
    ],
)  # fmt: skip
def test_every_reason_the_core_gives_is_said_in_the_guests_words(
    reason: str, problem: OfferProblem, english: str, german: str
) -> None:
    assert offer_problem(reason) == problem
    assert english in refusal_text(Words("en-GB"), reason, "Cruise")
    assert german in refusal_text(Words("de-DE"), reason, "Cruise")


def test_an_amount_in_a_currency_without_decimals_is_read_whole() -> None:
    assert offer_problem("it needs a total of at least JPY 5000; the booking's is JPY 300") == OfferProblem(
        Why.MIN_TOTAL, currency="JPY", amount=5000, precision=0
    )
    assert Words("en-GB").percent(Decimal("12.5")) == "12.5%"
