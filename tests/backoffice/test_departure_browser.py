"""A departure's actions in headless Chromium (issue 21): on the manifest of a departure booked
by two resellers, staff change its capacity, close and reopen it, then cancel it for the
weather, each through its confirmation step. The pages are saved to test-artifacts/screenshots/."""

from __future__ import annotations

import uuid
from collections.abc import Iterator
from pathlib import Path
from urllib.parse import quote

import httpx
import pytest
from playwright.sync_api import Browser, Page, expect

from berth.container import Services
from tests.backoffice.server import berth_on_clock
from tests.backoffice.test_browser import browser, open_page, shot, sign_in
from tests.bookings_helpers import GUEST, SLOT, TOUR, booking_catalog
from tests.builders import load
from tests.conftest import ADMIN, KEY_A, KEY_B, START, Clock

__all__ = ["browser"]  # the module's Chromium, shared with tests.backoffice.test_browser
pytestmark = pytest.mark.browser
MANIFEST = "/admin/slots/thames-sightseeing/DEFAULT/" + quote(SLOT, safe="")


async def booking_catalogue(services: Services) -> Services:
    return await load(services, booking_catalog())


@pytest.fixture
def served(tmp_path: Path) -> Iterator[str]:
    with berth_on_clock(tmp_path / "berth.db", Clock(START), booking_catalogue) as base:
        yield base


@pytest.fixture
def tab(browser: Browser, served: str) -> Iterator[Page]:
    page, problems = open_page(browser, served)
    yield page
    page.context.close()
    assert problems == []


def booked(base: str, key: str, units: tuple[str, ...], confirm: bool = True) -> None:
    body = {
        "uuid": str(uuid.uuid4()),
        **TOUR,
        "availabilityId": SLOT,
        "unitItems": [{"unitId": u} for u in units],
    }
    headers = {"Authorization": f"Bearer {key}"}
    held = httpx.post(base + "/octo/bookings", json=body, headers=headers).json()
    if confirm:
        done = httpx.post(
            base + f"/octo/bookings/{held['uuid']}/confirm", json={"contact": GUEST}, headers=headers
        )
        assert done.json()["status"] == "CONFIRMED", done.text


def departure(base: str) -> dict[str, object]:
    found: dict[str, object] = httpx.get(
        base + "/admin/api" + MANIFEST.replace("/admin/slots", "/departures"), headers=ADMIN
    ).json()
    return found


def test_capacity_close_and_a_weather_cancellation(tab: Page, served: str) -> None:
    booked(served, KEY_A, ("adult", "adult"))
    booked(served, KEY_A, ("adult",), confirm=False)
    booked(served, KEY_B, ("adult", "child"))
    sign_in(tab)
    tab.goto(MANIFEST)
    actions = tab.locator("section.departure-actions")
    expect(actions).to_contain_text("3 bookings of 2 resellers")
    shot(tab, "20-departure-manifest")

    tab.fill("#departure-capacity", "8")
    tab.get_by_role("button", name="Change the capacity…").click()
    expect(tab.locator("h1")).to_contain_text("Change the capacity of Thames Sightseeing")
    expect(tab.locator(".consequences")).to_contain_text("Capacity 20 places → 8 places; 5 places are held.")
    shot(tab, "21-departure-capacity-confirmation")
    tab.get_by_role("button", name="Change the capacity").click()
    expect(tab.locator(".notice.success")).to_contain_text("capacity set to 8 places.")
    expect(actions).to_contain_text("8 places (catalogue: 20 places)")
    assert departure(served)["vacancies"] == 3

    tab.get_by_role("button", name="Close for sale…").click()
    expect(tab.locator(".consequences")).to_contain_text(
        "3 bookings of 2 resellers (Reseller A, Reseller B) stay booked"
    )
    tab.get_by_role("link", name="Keep the departure as it is").click()
    assert departure(served)["closed"] is False
    tab.get_by_role("button", name="Close for sale…").click()
    tab.get_by_role("button", name="Close the departure").click()
    expect(tab.locator(".notice.success")).to_contain_text("closed: resellers see it CLOSED.")
    expect(actions).to_contain_text("closed by staff")
    tab.get_by_role("button", name="Reopen for sale").click()
    expect(tab.locator(".notice.success")).to_contain_text("reopened")

    tab.fill("#departure-reason", "Storm warning: the river is closed")
    tab.get_by_role("button", name="Cancel the departure…").click()
    consequences = tab.locator(".consequences")
    expect(consequences).to_contain_text(
        "This cancels 3 bookings of 2 resellers (Reseller A, Reseller B), with the reason “Storm warning: the river is closed”."
    )
    shot(tab, "22-departure-cancel-confirmation")
    tab.get_by_role("button", name="Cancel the departure").click()
    expect(tab.locator(".notice.success")).to_contain_text(
        "cancelled: 3 bookings of 2 resellers cancelled; the departure is closed."
    )
    expect(tab.locator("table.manifest").first).to_contain_text("CANCELLED")
    shot(tab, "23-departure-cancelled")
    after = departure(served)
    assert (after["closed"], after["placesHeld"], after["status"]) == (True, 0, "CLOSED")


def test_a_cancellation_after_boarding_began_asks_about_the_tickets_not_through(
    tab: Page, served: str
) -> None:
    """One of a party's two tickets through the gate: the manifest names the other; the
    cancellation's step lists the party and offers to cancel or keep that ticket; cancelled,
    the manifest says so and the party keeps its admitted ticket, REDEEMED."""
    booked(served, KEY_A, ("adult", "adult"))
    [party] = httpx.get(
        served + "/admin/api/bookings", params={"productId": TOUR["productId"]}, headers=ADMIN
    ).json()["bookings"]
    first, second = (u["supplierReference"] for u in party["unitItems"])
    scan = {"code": first, "nonce": uuid.uuid4().hex, "admitAnotherDay": True}  # the day before
    assert httpx.post(served + "/admin/api/checkin", json=scan, headers=ADMIN).json()["result"] == "ADMITTED"
    sign_in(tab)
    tab.goto(MANIFEST)
    actions = tab.locator("section.departure-actions")
    expect(actions).to_contain_text(
        f"{GUEST['firstName']} {GUEST['lastName']} {party['supplierReference']}: not through the gate {second}"
    )
    expect(tab.locator("table.manifest code.through")).to_have_text(f"{first} ✓")
    tab.fill("#departure-reason", "Engine trouble")
    tab.get_by_role("button", name="Cancel the departure…").click()
    expect(tab.locator(".consequences")).to_contain_text(
        f"({party['supplierReference']}): 1 of 2 through the gate; not through: Adult · {second}"
    )
    shot(tab, "24-departure-cancel-after-boarding-began")
    tab.get_by_role("button", name="Cancel the departure and those tickets").click()
    expect(tab.locator(".notice.success")).to_contain_text(
        "1 ticket not through the gate (1 booking): cancelled."
    )
    expect(actions).to_contain_text(
        f"Tickets not through the gate cancelled: {party['supplierReference']} ({second})"
    )
    shot(tab, "25-departure-cancelled-after-boarding-began")
    after = httpx.get(served + f"/admin/api/bookings/{party['id']}", headers=ADMIN).json()["booking"]
    assert after["status"] == "REDEEMED" and [u["supplierReference"] for u in after["unitItems"]] == [first]
