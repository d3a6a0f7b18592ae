"""The back office's money pages in headless Chromium, with card payments through a real
localstripe (issue 48 §3): a paid booking's page with its payment, cancelled with a partial
refund; a payment taken at the desk; the payments page and its filters; the monthly sales
report. The tests run in order, each on what the one before left. Screenshots go to
docs/screenshots/ (the staff's section of docs/payments.md shows them)."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest
from playwright.sync_api import Browser, Page, expect

from berth.container import Services
from berth.fake_stripe import FakeStripe
from tests.backoffice.payments_helpers import open_retail_shop, pay_for
from tests.backoffice.server import berth_on_clock
from tests.backoffice.test_browser import browser, open_page, sign_in
from tests.bookings_helpers import SLOT, booking_catalog
from tests.builders import confirmed_booking, load
from tests.conftest import KEY_A, START, Clock
from tests.stripe_helpers import localstripe

__all__ = ["browser", "localstripe"]

pytestmark = pytest.mark.browser
DOCS_SCREENSHOTS = Path(__file__).resolve().parents[2] / "docs" / "screenshots"
GUEST = {"firstName": "Grace", "lastName": "Hopper", "emailAddress": "grace@example.com"}


def shot(page: Page, name: str) -> None:
    DOCS_SCREENSHOTS.mkdir(parents=True, exist_ok=True)
    page.screenshot(path=str(DOCS_SCREENSHOTS / f"{name}.png"), full_page=True)


@pytest.fixture(scope="module")
def served(
    tmp_path_factory: pytest.TempPathFactory, localstripe: FakeStripe
) -> Iterator[tuple[str, list[str]]]:
    """Berth paying through localstripe, with a booking of the web shop paid by card and one of
    reseller A; yields the base URL and their ids."""
    made: list[str] = []

    async def paid_and_sold(services: Services) -> None:
        await load(services, booking_catalog())
        shop_id = await open_retail_shop(services)
        made.append(await pay_for(services, shop_id, localstripe, ("adult", "adult")))
        sold = await confirmed_booking(
            services, ("Reseller A", KEY_A), "thames-sightseeing", SLOT, ["adult"], GUEST
        )
        made.append(sold.booking.id)

    stripe = {key.removeprefix("BERTH_").lower(): value for key, value in localstripe.environment().items()}
    database = tmp_path_factory.mktemp("payments-browser") / "berth.db"
    with berth_on_clock(database, Clock(START), paid_and_sold, stripe) as base:
        yield base, made


@pytest.fixture
def tab(browser: Browser, served: tuple[str, list[str]]) -> Iterator[Page]:
    page, problems = open_page(browser, served[0])
    sign_in(page)
    yield page
    page.context.close()
    assert problems == []


def test_staff_cancel_a_paid_booking_with_a_partial_refund(tab: Page, served: tuple[str, list[str]]) -> None:
    paid, _ = served[1]
    tab.goto(f"/admin/bookings/{paid}")
    payments = tab.locator("#payments")
    expect(payments.get_by_role("heading", name="Payments")).to_be_visible()
    expect(payments).to_contain_text("Received 50.00 EUR")
    expect(payments.locator("code").first).to_contain_text("pi_")
    form = tab.locator("form.cancel-paid")
    expect(form.get_by_label("Full refund: 50.00 EUR")).to_be_checked()
    form.get_by_label("Reason for cancelling").fill("Engine trouble")
    form.get_by_label("Partial refund of").check()
    form.get_by_label("Amount to refund (EUR)").fill("12.50")
    shot(tab, "booking-payments")
    form.get_by_role("button", name="Cancel booking").click()  # open_page accepts the question
    notice = tab.locator(".notice.success")
    expect(notice).to_contain_text("cancelled: CONFIRMED → CANCELLED")
    expect(notice).to_contain_text("Refunded 12.50 EUR (re_")
    refunds = tab.locator("table.booking-refunds")
    expect(refunds).to_contain_text("12.50 EUR")
    expect(refunds).to_contain_text("SUCCEEDED")
    expect(refunds).to_contain_text("Engine trouble")
    expect(payments).to_contain_text("refunded 12.50 EUR")
    expect(tab.get_by_role("heading", name="Refund without cancelling")).to_be_visible()  # 37.50 left
    shot(tab, "booking-refunded")


def test_staff_record_a_desk_payment(tab: Page, served: tuple[str, list[str]]) -> None:
    _, sold = served[1]
    tab.goto(f"/admin/bookings/{sold}")
    form = tab.locator("form.desk-form")
    expect(form.get_by_label("Amount (EUR)")).to_have_value("25.00")
    form.get_by_label("Method").select_option("card_terminal")
    form.get_by_label("Reference").fill("T-0042")
    form.get_by_role("button", name="Record payment").click()
    expect(tab.locator(".notice.success")).to_contain_text(
        "card terminal payment of 25.00 EUR recorded (ref. T-0042)"
    )
    expect(tab.locator("table.booking-payments")).to_contain_text("T-0042")


def test_the_payments_page_and_the_sales_report(tab: Page, served: tuple[str, list[str]]) -> None:
    tab.get_by_role("link", name="Payments").first.click()
    expect(tab.get_by_role("heading", name="Payments", exact=True)).to_be_visible()
    rows = tab.locator("table.payments tbody tr")
    expect(rows).to_have_count(3)  # the card payment, its refund, the desk's
    expect(tab.locator("table.ledger-totals")).to_contain_text("75.00 EUR")
    expect(tab.locator("table.ledger-totals")).to_contain_text("62.50 EUR")  # net of the refund
    shot(tab, "payments")
    tab.get_by_label("Type").select_option("refund")
    tab.get_by_role("button", name="Search").click()
    expect(rows).to_have_count(1)
    expect(rows.first).to_contain_text("-12.50 EUR")
    expect(rows.first).to_contain_text("re_")
    with tab.expect_download() as download:
        tab.get_by_role("link", name="Download as CSV").click()
    assert download.value.suggested_filename == "payments.csv"
    text = Path(download.value.path()).read_text(encoding="utf-8-sig")
    assert text.splitlines()[0].startswith("Type,Provider id,Payment intent,Gross,Currency,Time (UTC)")
    assert ",-12.50,EUR,2026-06-01 08:00:00," in text
    tab.get_by_role("link", name="Monthly sales by channel →").click()
    sales = tab.locator("table.sales")
    expect(tab.get_by_role("heading", name="Sales in June 2026 by channel")).to_be_visible()
    expect(sales).to_contain_text("Web shop")
    expect(sales).to_contain_text("Reseller A")
    expect(sales.locator("tfoot")).to_contain_text("62.50 EUR")
    shot(tab, "sales")
