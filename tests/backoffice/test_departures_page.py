"""The departures page in headless Chromium (issue 32): from the dashboard and from a catalogue
product, staff reach any departure a month at a time, with its places sold of its capacity,
state and note, and close a departure weeks ahead (next month's, ahead of a storm) and reopen it
from the list, through the same confirmation step and audit trail as the manifest's. Pages are
saved to test-artifacts/screenshots/ on a desktop and on a phone."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from urllib.parse import quote

import httpx
import pytest
from playwright.sync_api import Browser, expect

from berth.container import Services
from tests.backoffice.server import berth_on_clock
from tests.backoffice.test_browser import browser, open_page, shot, sign_in
from tests.backoffice.test_departure_browser import booked
from tests.bookings_helpers import booking_catalog
from tests.builders import load
from tests.conftest import ADMIN, KEY_A, KEY_B, START, Clock

__all__ = ["browser"]
pytestmark = pytest.mark.browser
# A Saturday sailing a month and more after START (1 Jun 2026): no dashboard shows it.
LATER = "2026-07-11T14:00:00+01:00"


async def booking_catalogue(services: Services) -> Services:
    return await load(services, booking_catalog())


@pytest.fixture
def served(tmp_path: Path) -> Iterator[str]:
    with berth_on_clock(tmp_path / "berth.db", Clock(START), booking_catalogue) as base:
        yield base


def state_of(base: str, availability_id: str) -> dict[str, object]:
    path = "/admin/api/departures/thames-sightseeing/DEFAULT/" + quote(availability_id, safe="")
    found: dict[str, object] = httpx.get(base + path, headers=ADMIN).json()
    return found


def audit_actions(base: str) -> list[tuple[str, str]]:
    entries = httpx.get(base + "/admin/api/audit", headers=ADMIN).json()["entries"]
    return [(e["action"], e["target"]["id"]) for e in entries]


def test_close_and_reopen_next_months_departure_from_the_list(browser: Browser, served: str) -> None:
    booked(served, KEY_A, ("adult", "adult"))  # on 2 Jun 10:00
    booked(served, KEY_B, ("adult", "child"))
    tab, problems = open_page(browser, served)
    sign_in(tab)
    tab.get_by_role("link", name="Every departure, a month at a time →").click()
    expect(tab.locator("h1")).to_contain_text("Departures")
    expect(tab.locator(".month-pager")).to_contain_text("1 Jun 2026 \N{EN DASH} 30 Jun 2026")
    first = tab.locator('tr[data-availability="2026-06-02T10:00:00+01:00"]')
    expect(first).to_contain_text("Tue 2 Jun 2026")
    expect(first).to_contain_text("4/20")
    expect(first).to_contain_text("AVAILABLE")
    expect(first.get_by_role("link", name="Manifest")).to_have_attribute(
        "href", "/admin/slots/thames-sightseeing/DEFAULT/2026-06-02T10%3A00%3A00%2B01%3A00"
    )
    shot(tab, "40-departures")

    tab.get_by_role("link", name="Later month →").click()
    expect(tab.locator(".month-pager")).to_contain_text("1 Jul 2026 \N{EN DASH} 31 Jul 2026")
    row = tab.locator(f'tr[data-availability="{LATER}"]')
    expect(row).to_contain_text("Sat 11 Jul 2026")
    expect(row).to_contain_text("14:00")
    row.get_by_role("button", name="Close…").click()
    expect(tab.locator("h1")).to_contain_text("Close Thames Sightseeing")
    expect(tab.locator(".consequences")).to_contain_text("0 bookings of 0 resellers stay booked")
    tab.get_by_role("button", name="Close the departure").click()
    expect(tab.locator(".notice.success")).to_contain_text("closed: resellers see it CLOSED.")
    expect(tab.locator(".month-pager")).to_contain_text("1 Jul 2026")  # back on the list
    expect(row).to_contain_text("CLOSED")
    expect(row).to_contain_text("by staff")
    assert state_of(served, LATER)["closed"] is True
    assert ("departure.close", f"thames-sightseeing/DEFAULT/{LATER}") in audit_actions(served)
    shot(tab, "41-departures-closed")

    row.get_by_role("button", name="Reopen").click()
    expect(tab.locator(".notice.success")).to_contain_text("reopened")
    expect(row).to_contain_text("AVAILABLE")
    assert state_of(served, LATER)["closed"] is False
    assert ("departure.reopen", f"thames-sightseeing/DEFAULT/{LATER}") in audit_actions(served)

    # From the catalogue: the product's departures, and each option's.
    tab.goto("/admin/catalog/thames-sightseeing")
    tab.get_by_role("link", name="Its departures", exact=True).click()
    expect(tab.locator("select[name=option]")).to_have_value("DEFAULT")
    tab.goto("/admin/catalog/thames-sightseeing")
    tab.get_by_role("link", name="its departures", exact=True).nth(1).click()
    expect(tab.locator("select[name=option]")).to_have_value("evening")
    expect(tab.locator("table.departure-list")).to_contain_text("19:30")
    tab.context.close()
    assert problems == []


def test_the_departures_page_fits_a_phone(browser: Browser, served: str) -> None:
    booked(served, KEY_A, ("adult", "adult"))
    phone, problems = open_page(browser, served, width=390, height=844)
    sign_in(phone)
    phone.goto("/admin/departures?product=thames-sightseeing&option=DEFAULT&month=2026-06")
    expect(phone.locator("table.departure-list")).to_be_visible()
    overflow = phone.evaluate("document.documentElement.scrollWidth - window.innerWidth")
    assert overflow <= 0, f"the departures page scrolls sideways by {overflow}px"
    shot(phone, "42-phone-departures")
    phone.context.close()
    assert problems == []
