"""The demo's mailbox in headless Chromium against a real `berth serve --demo` (no SMTP
server): a receipt confirmed over OCTO shows under Outbox, rendered in its sandboxed frame
with the guest's hostile name escaped; the booking page lists it and sends it again."""

from __future__ import annotations

import re
from collections.abc import Iterator

import httpx
import pytest
from playwright.sync_api import Browser, expect

from tests.backoffice.server import berth_serve
from tests.backoffice.test_browser import (
    RESELLER,
    SCREENSHOTS,
    book,
    browser,
    eventually,
    open_page,
    sign_in,
)

__all__ = ["browser"]  # the module's browser fixture, shared
pytestmark = pytest.mark.browser
ADMIN = {"Authorization": "Bearer demo-admin"}


@pytest.fixture(scope="module")
def served(tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    with berth_serve(tmp_path_factory.mktemp("outbox") / "berth.db", demo=True) as base:
        yield base


def test_the_mailbox_shows_the_receipt(browser: Browser, served: str) -> None:
    booking = book(served, "E2E-MAIL")  # confirmed without a receipt
    answer = httpx.post(f"{served}/admin/api/bookings/{booking['id']}/receipt", headers=ADMIN)
    assert answer.status_code == 200, answer.text
    queued = answer.json()
    assert queued["to"] == "ada@example.com"

    def filed() -> bool:
        found = httpx.get(f"{served}/admin/api/mail/{queued['id']}", headers=ADMIN).json()
        return bool(found["status"] == "mailbox")

    eventually(filed, "the worker to file the receipt in the mailbox")
    page, problems = open_page(browser, served)
    sign_in(page)
    page.get_by_role("link", name="Outbox").click()
    expect(page.get_by_role("heading", name=re.compile("Outbox"))).to_be_visible()
    expect(page.locator("table.outbox")).to_contain_text("ada@example.com")
    page.get_by_role("link", name=queued["subject"]).click()
    expect(page.locator(".mail-text")).to_contain_text(booking["supplierReference"])
    frame = page.frame_locator("iframe.mail-html")
    expect(frame.get_by_text(booking["supplierReference"]).first).to_be_visible()
    page.screenshot(path=str(SCREENSHOTS / "outbox-message.png"), full_page=True)

    page.goto(f"/admin/bookings/{booking['id']}")
    expect(page.locator("#emails table")).to_contain_text("MAILBOX")
    page.get_by_role("button", name="Resend receipt").click()
    expect(page.locator(".notice.success")).to_contain_text("Receipt queued for ada@example.com")
    expect(page.locator("#emails h2")).to_contain_text("2")
    page.screenshot(path=str(SCREENSHOTS / "outbox-booking.png"), full_page=True)
    page.context.close()
    assert problems == []


def test_a_hostile_name_is_only_text(browser: Browser, served: str) -> None:
    first = httpx.post(
        f"{served}/octo/availability",
        json={
            "productId": "thames-sightseeing",
            "optionId": "DEFAULT",
            "localDateStart": "2030-06-03",
            "localDateEnd": "2030-06-20",
        },
        headers=RESELLER,
    ).json()
    slot = next(s for s in first if s["available"])
    held = httpx.post(
        f"{served}/octo/bookings",
        json={
            "productId": "thames-sightseeing",
            "optionId": "DEFAULT",
            "availabilityId": slot["id"],
            "unitItems": [{"unitId": "adult"}],
        },
        headers=RESELLER,
    ).json()
    name = '<img src=x onerror="document.title=1"><script>document.title="owned"</script>'
    contact = {"fullName": name, "firstName": "Eve", "lastName": "Evil", "emailAddress": "eve@example.com"}
    confirmed = httpx.post(
        f"{served}/octo/bookings/{held['uuid']}/confirm",
        json={"contact": contact, "emailReceipt": True},
        headers=RESELLER,
    )
    assert confirmed.status_code == 200, confirmed.text
    found = httpx.get(f"{served}/admin/api/bookings/{confirmed.json()['id']}/mail", headers=ADMIN).json()
    [message] = found["messages"]
    page, problems = open_page(browser, served)
    sign_in(page)
    page.goto(f"/admin/outbox/{message['id']}")
    frame = page.frame_locator("iframe.mail-html")
    expect(frame.get_by_text(re.compile(r"<script>document\.title"))).to_be_visible()
    assert page.title() != "owned" and page.title() != "1"
    page.context.close()
    assert problems == []
