"""A package in the web shop on a phone (390 x 844) in headless Chromium, against a real
`berth serve --demo` with its fake Stripe (localstripe): a guest books the Harbour City Pass
(a timed Thames cruise and the museum, the kayak trip as an optional extra), picks each
include's time on the pass's day page and pays with 4242 4242 4242 4242; the confirmation
lists every included booking with its tickets. axe checks every page the guest sees. The day
page's screenshot goes to test-artifacts/screenshots/shop-package-day.png (and to
SHOP_SCREENSHOTS_TO as well, when it names a folder: docs/screenshots keeps it)."""

from __future__ import annotations

from datetime import date, datetime, timedelta

import httpx
import pytest
from playwright.sync_api import Page, expect

from tests.test_shop_browser import (
    LONDON,
    VISA,
    accessible,
    admin_booking,
    browser,
    details,
    give_card,
    page,
    reference_of,
    server,
    step,
)

__all__ = ["browser", "page", "server"]
pytestmark = pytest.mark.browser


def pass_day(page: Page, earliest: date) -> None:
    """From the pass's calendar to the first day it can be booked from `earliest` on."""
    while True:
        for link in page.locator(".calendar td a").all():
            href = link.get_attribute("href") or ""
            if date.fromisoformat(href.split("?")[0].rsplit("/", 1)[1]) >= earliest:
                link.click()
                return
        page.get_by_role("link", name="Next month").click()


def test_a_guest_books_the_city_pass_with_its_includes_and_pays(
    page: Page, server: tuple[str, object]
) -> None:
    page.goto("/shop")
    page.get_by_role("link", name="Harbour City Pass", exact=True).click()
    expect(page.get_by_role("heading", name="What your package books")).to_be_visible()
    accessible(page)
    # Three days ahead: every include's cutoff (the kayak's is 48 hours) still to come.
    pass_day(page, datetime.now(LONDON).date() + timedelta(days=3))
    page.locator("#unit-adult").select_option("2")
    expect(page.locator("#unit-adult")).to_have_value("2")  # the form is sent on change
    page.locator("#include-cruise input:not([disabled])").first.check()
    expect(page.locator("#include-museum input:checked")).to_have_count(1)  # its one time, chosen
    kayak = page.locator("#include-kayak input:not([disabled])")
    expect(kayak.first).to_be_checked()  # "Not included"
    with_kayak = kayak.count() > 1
    if with_kayak:
        kayak.nth(1).check()
    step(page, "package-day")
    page.get_by_role("button", name="Continue").click()
    expect(page.get_by_text("Thames Sightseeing Cruise")).to_be_visible()
    page.get_by_role("button", name="Hold these places").click()
    expect(page.get_by_role("heading", name="Your details")).to_be_visible()
    expect(page.get_by_text("Included in your booking")).to_be_visible()
    accessible(page)
    if with_kayak:  # the kayak trip asks for a phone number
        page.get_by_label("Phone number").fill("+44 20 7946 0000")
    details(page)
    accessible(page)
    give_card(page, VISA)
    expect(page.get_by_role("heading", name="Booking confirmed")).to_be_visible()
    accessible(page)
    included = page.locator("ul.included > li")
    expect(included).to_have_count(3 if with_kayak else 2)
    expect(included.first).to_contain_text("Thames Sightseeing Cruise")
    pdf = page.locator("ul.included a").first.get_attribute("href") or ""
    ticket = httpx.get(pdf)
    assert ticket.status_code == 200 and ticket.headers["content-type"] == "application/pdf"
    booking = admin_booking(str(server[0]), reference_of(page))
    assert booking["status"] == "CONFIRMED" and booking["productId"] == "harbour-city-pass"
