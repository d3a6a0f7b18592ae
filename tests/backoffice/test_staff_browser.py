"""Staff accounts, the audit page and the dashboard charts in headless Chromium against a real
`berth serve --demo`, with accounts made by the real `berth staff create`. Screenshots go to
test-artifacts/screenshots/ (and to BACKOFFICE_SCREENSHOTS_TO as well, when it names a folder)."""

from __future__ import annotations

import os
import re
import shutil
from collections.abc import Iterator
from pathlib import Path

import pytest
from playwright.sync_api import Browser, Page, expect

from tests.backoffice.server import berth_serve
from tests.backoffice.test_browser import SCREENSHOTS, book, browser, open_page, status_of
from tests.berth_process import berth

__all__ = ["browser"]  # the module's browser fixture, shared

NEW_PASSWORD = "a long harbour password"
pytestmark = pytest.mark.browser


@pytest.fixture(scope="module")
def served(tmp_path_factory: pytest.TempPathFactory) -> Iterator[tuple[str, dict[str, str]]]:
    """The demo served, and a one-time password for each of a viewer and an operator."""
    database = tmp_path_factory.mktemp("staff-browser") / "berth.db"
    with berth_serve(database, demo=True) as base:
        passwords = {}
        for email, role in (("vera@example.com", "viewer"), ("otto@example.com", "operator")):
            made = berth("staff", "create", email, "--role", role, database_url=f"sqlite:///{database}")
            assert made.returncode == 0, made.stderr
            passwords[email] = made.stdout.strip().splitlines()[-1]
        yield base, passwords


def shot(page: Page, name: str) -> None:
    path = SCREENSHOTS / f"staff-{name}.png"
    page.screenshot(path=str(path), full_page=True)
    copies = os.environ.get("BACKOFFICE_SCREENSHOTS_TO")
    if copies and Path(copies).is_dir():
        shutil.copy(path, Path(copies) / f"i21b-{name}.png")


def first_sign_in(page: Page, email: str, once: str) -> None:
    """Sign in with the one-time password and choose NEW_PASSWORD."""
    page.goto("/admin")
    page.fill("#email", email)
    page.fill("#password", once)
    page.get_by_role("button", name="Sign in").click()
    expect(page.get_by_role("heading", name="Choose your password")).to_be_visible()
    page.fill("#current", once)
    page.fill("#new", NEW_PASSWORD)
    page.fill("#repeat", NEW_PASSWORD)
    page.get_by_role("button", name="Set my password").click()
    expect(page.locator(".notice.success")).to_have_text("Your new password is set.")


def test_sign_in_by_email_and_password(browser: Browser, served: tuple[str, dict[str, str]]) -> None:
    base, passwords = served
    page, problems = open_page(browser, base)
    page.goto("/admin")
    page.fill("#email", "otto@example.com")
    page.fill("#password", "not the password")
    page.get_by_role("button", name="Sign in").click()
    expect(page.locator(".notice.error")).to_contain_text("do not match an active staff account")
    shot(page, "sign-in")
    page.fill("#password", passwords["otto@example.com"])
    page.get_by_role("button", name="Sign in").click()
    expect(page.get_by_role("heading", name="Choose your password")).to_be_visible()
    shot(page, "password")
    page.fill("#current", passwords["otto@example.com"])
    page.fill("#new", NEW_PASSWORD)
    page.fill("#repeat", NEW_PASSWORD)
    page.get_by_role("button", name="Set my password").click()
    expect(page.get_by_role("heading", name="Dashboard")).to_be_visible()
    expect(page.locator(".who")).to_have_text(re.compile(r"otto@example.com\s*·\s*operator"))

    page.get_by_role("button", name="Sign out").click()
    page.fill("#email", "otto@example.com")
    page.fill("#password", NEW_PASSWORD)
    page.get_by_role("button", name="Sign in").click()
    expect(page.get_by_role("heading", name="Dashboard")).to_be_visible()
    page.context.close()
    assert problems == []


def test_a_viewer_sees_no_actions_and_an_operators_redeem_is_audited(
    browser: Browser, served: tuple[str, dict[str, str]]
) -> None:
    base, passwords = served
    booking = book(base, "E2E-ROLES")

    viewer, problems = open_page(browser, base)
    first_sign_in(viewer, "vera@example.com", passwords["vera@example.com"])
    viewer.goto(f"/admin/bookings/{booking['id']}")
    expect(viewer.locator(".role-note")).to_contain_text(
        "Your role, viewer, does not allow acting on bookings"
    )
    expect(viewer.get_by_role("button", name=re.compile("Redeem"))).to_have_count(0)
    expect(viewer.get_by_role("button", name="Cancel booking")).to_have_count(0)
    shot(viewer, "viewer-booking")
    viewer.goto("/admin/connections")
    expect(viewer.get_by_role("button", name="Create and show its API key")).to_have_count(0)
    expect(viewer.get_by_role("button", name="Revoke")).to_have_count(0)
    viewer.context.close()

    operator, more = open_page(browser, base)
    operator.goto("/admin")
    operator.fill("#email", "otto@example.com")
    operator.fill("#password", NEW_PASSWORD)
    operator.get_by_role("button", name="Sign in").click()
    expect(operator.get_by_role("heading", name="Dashboard")).to_be_visible()
    operator.goto("/admin/connections")
    expect(operator.get_by_role("button", name="Revoke")).to_have_count(0)
    operator.goto(f"/admin/bookings/{booking['id']}")
    operator.get_by_role("button", name=re.compile("Redeem")).click()
    expect(operator.locator(".notice.success")).to_contain_text("redeemed: CONFIRMED → REDEEMED")
    assert status_of(base, booking["id"]) == "REDEEMED"

    operator.get_by_role("link", name="Audit").click()
    expect(operator.get_by_role("heading", name="Audit trail")).to_be_visible()
    first = operator.locator("table.audit tbody tr").first
    expect(first).to_contain_text("otto@example.com")
    expect(first).to_contain_text(f"Redeemed booking {booking['supplierReference']}")
    operator.fill("#actor", "vera@example.com")
    operator.get_by_role("button", name="Filter").click()
    expect(operator.locator("table.audit tbody tr")).to_have_count(1)  # her own new password
    expect(operator.locator("table.audit tbody tr")).to_contain_text("Changed the password of")
    operator.get_by_role("link", name="Clear").click()
    shot(operator, "audit")
    operator.context.close()
    assert problems == [] and more == []


def test_the_dashboard_charts(browser: Browser, served: tuple[str, dict[str, str]]) -> None:
    base, _ = served
    book(base, "E2E-CHART")
    page, problems = open_page(browser, base)
    page.goto("/admin")
    page.fill("#password", "demo-admin")
    page.get_by_role("button", name="Sign in").click()
    bookings = page.get_by_role(
        "img", name=re.compile("Bookings confirmed per day, last 30 days, by reseller")
    )
    occupancy = page.get_by_role("img", name=re.compile("Places sold, next 14 days, by product"))
    expect(bookings).to_be_visible()
    expect(occupancy).to_be_visible()
    assert bookings.locator("rect title").count() > 0  # bars
    assert "Demo reseller A" in (bookings.locator("desc").text_content() or "")
    legend = bookings.locator("text.chart-text").all_text_contents()
    assert any(text.startswith("Demo reseller A (") for text in legend)
    box = bookings.bounding_box()
    assert box is not None and box["width"] > 600 and box["height"] > 150
    assert occupancy.locator("rect title").count() >= 14
    page.locator(".charts").scroll_into_view_if_needed()
    page.locator(".charts").screenshot(path=str(SCREENSHOTS / "staff-charts.png"))
    copies = os.environ.get("BACKOFFICE_SCREENSHOTS_TO")
    if copies and Path(copies).is_dir():
        shutil.copy(SCREENSHOTS / "staff-charts.png", Path(copies) / "i21b-charts.png")
    shot(page, "dashboard")
    page.get_by_role("link", name="Staff").click()
    expect(page.locator("table.staff tbody tr")).to_have_count(2)
    expect(page.locator("table.staff")).to_contain_text("otto@example.com")
    shot(page, "staff")

    phone, more = open_page(browser, base, width=390, height=844)
    phone.goto("/admin")
    phone.fill("#password", "demo-admin")
    phone.get_by_role("button", name="Sign in").click()
    chart = phone.get_by_role("img", name=re.compile("Bookings confirmed per day"))
    width = chart.bounding_box()
    assert width is not None and width["width"] <= 390  # scales down to the screen
    phone.context.close()
    page.context.close()
    assert problems == [] and more == []
