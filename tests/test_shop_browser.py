"""The web shop on a phone (390 x 844) in headless Chromium, against a real `berth serve --demo`
with its fake Stripe (localstripe): a guest browses, books and pays with 4242 4242 4242 4242
and gets the confirmation, the tickets and the receipt email; a declined card, then a good
one; a promo code mistyped, then applied, and 3-D Secure failed and passed; the guest's
cancellation from the manage page with its refund. axe checks every page the guest sees (Stripe's own card element excepted: in
production it is Stripe's frame, here localstripe's stand-in). Each step's screenshot goes to
test-artifacts/screenshots/shop-*.png (and to SHOP_SCREENSHOTS_TO as well, when it names a
folder: docs/screenshots keeps them)."""

from __future__ import annotations

import os
import re
import shutil
from collections.abc import Iterator
from datetime import datetime, timedelta
from pathlib import Path
from typing import Any
from zoneinfo import ZoneInfo

import httpx
import pytest
from axe_playwright_python.sync_playwright import Axe
from playwright.sync_api import Browser, Page, expect, sync_playwright

from tests.backoffice.test_browser import ADMIN, SCREENSHOTS, eventually
from tests.berth_process import berth_serve
from tests.chromium import CHROMIUM, CHROMIUM_ARGS

pytestmark = pytest.mark.browser
PHONE = {"width": 390, "height": 844}
VISA = "4242424242424242"
DECLINED = "4000000000000341"
THREE_D_SECURE = "4000002760003184"
AXE = Axe()
LONDON = ZoneInfo("Europe/London")


@pytest.fixture(scope="module")
def server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[tuple[str, Path]]:
    folder = tmp_path_factory.mktemp("shop-browser")
    log = folder / "serve.log"
    with berth_serve(f"sqlite+aiosqlite:///{folder / 'berth.db'}", "--demo", log=log) as base:
        yield base, log


@pytest.fixture(scope="module")
def browser() -> Iterator[Browser]:
    SCREENSHOTS.mkdir(parents=True, exist_ok=True)
    with sync_playwright() as playwright:
        launched = playwright.chromium.launch(executable_path=str(CHROMIUM), args=CHROMIUM_ARGS)
        yield launched
        launched.close()


@pytest.fixture
def page(browser: Browser, server: tuple[str, Path]) -> Iterator[Page]:
    """A phone's fresh tab; at the end, no script error and no request anywhere but Berth, its
    fake Stripe and the catalogue's pictures (which do not load here: the pages hide them)."""
    context = browser.new_context(base_url=server[0], viewport=PHONE, locale="en-GB")  # type: ignore[arg-type]
    context.set_default_timeout(20_000)
    tab = context.new_page()
    errors: list[str] = []
    tab.on("pageerror", lambda error: errors.append(str(error)))
    tab.on(
        "console",
        lambda m: errors.append(m.text) if m.type == "error" and "Content Security" in m.text else None,
    )
    tab.on("dialog", lambda dialog: dialog.accept())
    yield tab
    context.close()
    assert errors == []


def shot(page: Page, name: str) -> None:
    path = SCREENSHOTS / f"shop-{name}.png"
    page.screenshot(path=str(path), full_page=True)
    copies = os.environ.get("SHOP_SCREENSHOTS_TO")
    if copies and Path(copies).is_dir():
        shutil.copy(path, Path(copies) / path.name)


def accessible(page: Page) -> None:
    """No axe violation on the page (Stripe's card element excepted, see the module's doc)."""
    results = AXE.run(page, context={"exclude": [["#card"]]})
    assert results.violations_count == 0, results.generate_report()


def step(page: Page, name: str) -> None:
    accessible(page)
    shot(page, name)


def choose_a_departure(page: Page, product: str, screenshots: bool = False, ahead: int | None = None) -> None:
    """From the shop's list to the booking form of the first bookable day's first departure
    with room for two adults (`ahead`: a week from today's instead, still free to cancel)."""
    page.goto("/shop")
    if screenshots:
        step(page, "1-products")
    page.get_by_role("link", name=product, exact=True).click()
    expect(page.get_by_role("heading", level=1)).to_have_text(product)
    if screenshots:
        step(page, "2-product")
    if ahead is None:
        page.locator(".calendar td a").first.click()
    else:
        day = datetime.now(LONDON).date() + timedelta(days=ahead)
        while not page.locator(f'.calendar td a[href*="/{day.isoformat()}?"]').count():
            page.get_by_role("link", name="Next month").click()
        page.locator(f'.calendar td a[href*="/{day.isoformat()}?"]').click()
    page.locator("#unit-adult").select_option("2")
    expect(page.locator("#unit-adult")).to_have_value("2")  # the form is sent on change
    if screenshots:
        step(page, "3-day")
    page.locator("a.departure").first.click()
    expect(page.get_by_role("button", name="Hold these places")).to_be_visible()


def details(page: Page, email: str = "ada@example.com") -> None:
    page.get_by_label("First name").fill("Ada")
    page.get_by_label("Last name").fill("Lovelace")
    page.get_by_label("Email address").fill(email)
    page.get_by_label("I accept the booking terms").check()
    page.get_by_role("button", name="Continue to payment").click()
    expect(page.locator("#card input").first).to_be_visible()


def give_card(page: Page, number: str) -> None:
    """The card typed into the card element (localstripe's stand-in: number, month, year, CVC)."""
    fields = page.locator("#card input")
    for index, value in enumerate((number, "12", "34", "123")):
        fields.nth(index).fill(value)
    page.get_by_role("button", name=re.compile(r"^Pay ")).click()


def reference_of(page: Page) -> str:
    return page.locator(".reference strong").inner_text()


def admin_booking(base: str, reference: str) -> dict[str, Any]:
    found = httpx.get(base + "/admin/api/bookings", params={"reference": reference}, headers=ADMIN).json()
    (booking,) = found["bookings"]
    result: dict[str, Any] = booking
    return result


def test_a_guest_books_and_pays_with_a_card_and_gets_tickets_and_a_receipt(
    page: Page, server: tuple[str, Path]
) -> None:
    base = server[0]
    choose_a_departure(page, "Thames Sightseeing Cruise", screenshots=True)
    page.get_by_label("Riverside lunch box").select_option("1")
    step(page, "4-options")
    page.get_by_role("button", name="Hold these places").click()
    expect(page.get_by_role("heading", name="Your details")).to_be_visible()
    step(page, "5-details")
    page.get_by_role("button", name="Continue to payment").click()  # nothing filled in
    expect(page.get_by_text("Please accept the booking terms to go on.")).to_be_visible()
    step(page, "5-details-refused")
    details(page)
    expect(page.get_by_text("Test mode: no card is charged.")).to_be_visible()
    step(page, "6-pay")
    give_card(page, VISA)
    expect(page.get_by_role("heading", name="Booking confirmed")).to_be_visible()
    step(page, "7-confirmed")
    reference = reference_of(page)
    pdf = httpx.get(page.get_by_role("link", name="Tickets (PDF)").get_attribute("href") or "")
    assert pdf.status_code == 200 and pdf.headers["content-type"] == "application/pdf"
    booking = admin_booking(base, reference)
    assert booking["status"] == "CONFIRMED"

    def receipt() -> dict[str, Any] | None:
        listed = httpx.get(f"{base}/admin/api/bookings/{booking['id']}/mail", headers=ADMIN).json()[
            "messages"
        ]
        return next((m for m in listed if m["kind"] == "receipt" and m.get("subject")), None)

    eventually(lambda: receipt() is not None, "the receipt written out")
    found = receipt()
    assert found is not None
    letter = httpx.get(f"{base}/admin/api/mail/{found['id']}", headers=ADMIN).json()
    assert letter["to"] == "ada@example.com" and reference in letter["subject"]
    assert "/shop/manage/" in letter["text"]


def test_a_declined_card_keeps_the_places_and_a_good_card_pays(page: Page) -> None:
    choose_a_departure(page, "Tower of Stories")
    page.get_by_role("button", name="Hold these places").click()
    details(page)
    give_card(page, DECLINED)
    expect(page.get_by_text("The payment did not go through")).to_be_visible()
    step(page, "6-pay-declined")
    give_card(page, VISA)
    expect(page.get_by_role("heading", name="Booking confirmed")).to_be_visible()


def test_a_promo_code_then_three_d_secure_failed_then_passed(page: Page) -> None:
    choose_a_departure(page, "Harbour Seat Cruise")
    page.get_by_role("button", name="Hold these places").click()
    code = page.get_by_label("Promo code")
    code.fill("HARBOUR1")
    page.get_by_role("button", name="Apply").click()
    expect(page.get_by_text("We do not know this code. Please check it and try again.")).to_be_visible()
    expect(code).to_be_focused()
    step(page, "5-details-code-refused")
    code.fill("harbour10")
    page.get_by_role("button", name="Apply").click()
    expect(page.get_by_text("Promo code HARBOUR10 applied: Harbour 10 \N{MINUS SIGN}10%")).to_be_visible()
    # Two adults at €32.00, each €3.20 off.
    expect(page.locator(".lines .discount")).to_have_count(2)
    expect(page.locator(".lines .total td")).to_have_text("€57.60")
    step(page, "5-details-code")
    details(page)
    expect(page.get_by_role("button", name="Pay €57.60")).to_be_visible()
    step(page, "6-pay-code")
    give_card(page, THREE_D_SECURE)
    challenge = page.get_by_role("button", name="Fail authentication")
    expect(challenge).to_be_visible()
    shot(page, "6-pay-3d-secure")
    challenge.click()
    expect(page.locator("#pay-problem")).to_be_visible()
    expect(page).to_have_url(re.compile(r"/pay$"))
    step(page, "6-pay-3d-secure-failed")
    give_card(page, THREE_D_SECURE)
    # The bank asks when the card is given, and localstripe asks again when it is charged.
    page.get_by_role("button", name="Complete authentication").click()
    page.get_by_role("button", name="Complete authentication").click()
    expect(page.get_by_role("heading", name="Booking confirmed")).to_be_visible()
    expect(page.locator(".lines .total td")).to_have_text("€57.60")


def test_the_guest_cancels_from_the_manage_page_and_is_refunded(page: Page, server: tuple[str, Path]) -> None:
    base, log = server
    choose_a_departure(page, "Thames Sightseeing Cruise", ahead=7)
    page.get_by_role("button", name="Hold these places").click()
    details(page, "grace@example.com")
    give_card(page, VISA)
    expect(page.get_by_role("heading", name="Booking confirmed")).to_be_visible()
    reference = reference_of(page)
    page.get_by_role("link", name="Manage your booking (your details, or cancel it)").click()
    expect(page.get_by_role("heading", level=1, name="Your booking")).to_be_visible()
    step(page, "8-manage")
    page.get_by_role("button", name="Cancel my booking").click()
    expect(page.get_by_text("Tick the box to confirm")).to_be_visible()
    page.get_by_label("Yes, cancel my booking").check()
    page.get_by_role("button", name="Cancel my booking").click()
    expect(page.get_by_text("Your booking is cancelled.")).to_be_visible()
    step(page, "9-cancelled")
    assert admin_booking(base, reference)["status"] == "CANCELLED"
    stripe = re.search(r"\(localstripe\)\s+at\s+(http://127\.0\.0\.1:\d+)", log.read_text())
    assert stripe is not None
    refunds = httpx.get(
        stripe.group(1) + "/v1/refunds", headers={"Authorization": "Bearer sk_test_berth_localstripe"}
    ).json()["data"]
    assert [(r["amount"], r["status"]) for r in refunds] == [(5000, "succeeded")]  # two adults, in full


def test_the_shop_in_german(page: Page) -> None:
    page.goto("/shop/thames-sightseeing?lang=de")
    expect(page.get_by_role("heading", level=1)).to_have_text("Sightseeing-Bootsfahrt auf der Themse")
    expect(page.get_by_role("heading", name="Datum wählen")).to_be_visible()
    step(page, "2-product-de")
