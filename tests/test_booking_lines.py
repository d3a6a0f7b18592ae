"""What a booking shows, through one extension point (issue 38 §7): a capability added to the
registry appears on the ticket, at the gate (its party view and the scanner's page in headless
Chromium) and on the departure's manifest with nothing else changed; a line for staff only is
not printed on the ticket."""

from __future__ import annotations

from pathlib import Path
from urllib.parse import quote

import httpx
import pytest
from playwright.sync_api import Browser, expect

from berth.capabilities import registry
from berth.capabilities.base import Capability
from berth.container import Services
from berth.domain.bookings import UnitItem
from berth.domain.tickets import TicketLine
from berth.read_models.bookings import BookingDetails
from tests.backoffice.helpers import sign_in, text_of
from tests.backoffice.server import berth_on_clock
from tests.backoffice.test_browser import SCREENSHOTS, browser, open_page
from tests.backoffice.test_browser import sign_in as sign_in_page
from tests.backoffice.test_pages import manifest_path
from tests.builders import load
from tests.checkin_helpers import ON_THE_DAY, scan
from tests.conftest import START, Clock, auth
from tests.test_tickets import LEAD, booked, options, path_of
from tests.tickets_helpers import CRUISE, DEPARTURE, cruise_booking, pdf_text, tickets_catalog

__all__ = ["browser"]  # the module's Chromium, shared with tests.backoffice.test_browser


class Lockers(Capability):
    """A capability no module of Berth knows: a locker for each party, a key for each guest."""

    id = "test/lockers"

    def booking_lines(self, details: BookingDetails, item: UnitItem | None) -> list[TicketLine]:
        if item is None:
            return [
                TicketLine("Locker", f"bank {details.booking.supplier_reference[-2:]}"),
                TicketLine("Locker code", "4711", staff_only=True),
            ]
        return [TicketLine("Locker key", f"K-{item.supplier_reference}")]


async def test_a_registered_capability_shows_at_the_gate_on_the_manifest_and_the_ticket(
    client: httpx.AsyncClient, services: Services, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(registry, "CAPABILITIES", (*registry.CAPABILITIES, Lockers()))
    await load(services, tickets_catalog())
    booking = await booked(client, cruise_booking({"unitId": "adult"}, {"unitId": "adult"}))
    locker = f"bank {booking['supplierReference'][-2:]}"
    keys = [f"K-{item['supplierReference']}" for item in booking["unitItems"]]

    # The ticket: the voucher's page names the locker, each guest's page its key; never the code.
    voucher = await client.get(path_of(options(booking["voucher"])["PDF_URL"]), headers=auth())
    assert voucher.status_code == 200, voucher.text
    pages = pdf_text(voucher.content)
    assert f"Locker: {locker}" in pages[0] and "4711" not in " ".join(pages)
    assert [f"Locker key: {key}" in page for page, key in zip(pages[1:], keys, strict=True)] == [True, True]

    # The gate: the party's lines, and each ticket's beyond them; staff see the code.
    party = (await scan(client, booking["supplierReference"], gate=None))["booking"]
    assert {"label": "Locker", "text": locker} in party["lines"]
    assert {"label": "Locker code", "text": "4711"} in party["lines"]
    assert [u["lines"] for u in party["units"]] == [[{"label": "Locker key", "text": key}] for key in keys]

    # The manifest: each booking's lines beside its lead guest.
    await sign_in(client)
    page = await client.get(manifest_path(DEPARTURE, CRUISE["productId"]))
    assert page.status_code == 200, page.text
    assert f"Ada Lovelace ada@example.com Locker: {locker} Locker code: 4711" in text_of(page.text)


async def ticketed(services: Services) -> Services:
    return await load(services, tickets_catalog())


@pytest.mark.browser
def test_the_scanner_page_shows_a_registered_capabilitys_lines(
    browser: Browser, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The real scanner page, for a code typed at the gate: the party's lines as its facts,
    each ticket's own beside it, though the page names no capability."""
    monkeypatch.setattr(registry, "CAPABILITIES", (*registry.CAPABILITIES, Lockers()))
    clock = Clock(START)
    with berth_on_clock(tmp_path / "berth.db", clock, ticketed) as base:
        body = cruise_booking({"unitId": "adult"}, {"unitId": "adult"})
        held = httpx.post(base + "/octo/bookings", json=body, headers=auth())
        assert held.status_code == 200, held.text
        confirmed = httpx.post(
            base + f"/octo/bookings/{body['uuid']}/confirm", json={"contact": LEAD}, headers=auth()
        )
        assert confirmed.status_code == 200, confirmed.text
        booking = confirmed.json()
        clock.now = ON_THE_DAY  # the gate opens on the departure's day
        page, problems = open_page(browser, base, width=390, height=844)
        sign_in_page(page)
        page.goto(f"/admin/checkin/{CRUISE['productId']}/{CRUISE['optionId']}/{quote(DEPARTURE, safe='')}")
        expect(page.locator("#gate[data-ready=yes]")).to_be_attached()
        page.fill("#gate-code", booking["unitItems"][0]["supplierReference"])
        page.get_by_role("button", name="Check").click()
        expect(page.locator("#gate-verdict")).to_have_text("Admitted 1 of 2 in this party")
        party = page.locator("#gate-party")
        facts = party.locator("dl")
        expect(facts.locator("dt")).to_have_text(["Locker", "Locker code"])
        expect(facts.locator("dd")).to_have_text([f"bank {booking['supplierReference'][-2:]}", "4711"])
        expect(party.locator(".gate-units li")).to_contain_text(
            [f"Locker key: K-{item['supplierReference']}" for item in booking["unitItems"]]
        )
        page.screenshot(path=str(SCREENSHOTS / "checkin-capability-lines.png"), full_page=True)
        page.context.close()
        assert problems == []
