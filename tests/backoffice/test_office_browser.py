"""The office in headless Chromium (Debian's), on the demo served on a test clock (issue 49 §4):
the catalogue editor warns before unsaved changes are left and its Save is a few keys away; the
contract page fits 1280 and 1400 px windows without scrolling sideways; a block's Release now
asks first; the Offers page fits a phone and a desktop with no axe violation in its content, checks,
saves with Ctrl+S and asks before it restores a version; the Gifts pages (the list, a voucher) fit
and pass axe likewise, and cancelling a voucher asks first."""

from __future__ import annotations

import json
import uuid
from collections.abc import Iterator
from urllib.parse import quote

import httpx
import pytest
from axe_playwright_python.sync_playwright import Axe
from playwright.sync_api import Browser, Page, expect

from tests.backoffice.server import berth_on_clock
from tests.backoffice.test_browser import ADMIN, browser, open_page, sign_in
from tests.conftest import START, Clock

__all__ = ["browser"]  # the module's browser fixture, shared

pytestmark = pytest.mark.browser
EDIT = "/admin/catalog/thames-sightseeing/edit"


@pytest.fixture(scope="module")
def served(tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    with berth_on_clock(tmp_path_factory.mktemp("office") / "berth.db", Clock(START)) as base:
        yield base


@pytest.fixture
def tab(browser: Browser, served: str) -> Iterator[Page]:
    page, problems = open_page(browser, served)
    sign_in(page)
    yield page
    page.context.close()
    assert problems == []


def dialogs_of(page: Page) -> list[tuple[str, str]]:
    """The dialogs the page opens (type, message); open_page's own handler accepts them."""
    seen: list[tuple[str, str]] = []
    page.on("dialog", lambda dialog: seen.append((dialog.type, dialog.message)))
    return seen


def test_the_editor_asks_before_unsaved_changes_are_left(tab: Page) -> None:
    seen = dialogs_of(tab)
    tab.goto(EDIT)
    tab.get_by_role("link", name="Dashboard").click()  # nothing changed: no question
    expect(tab.get_by_role("heading", name="Dashboard")).to_be_visible()
    assert seen == []
    tab.goto(EDIT)
    tab.locator('[name="internalName"]').fill("Thames by night")
    tab.get_by_role("link", name="Dashboard").click()
    expect(tab.get_by_role("heading", name="Dashboard")).to_be_visible()  # open_page accepts: it leaves
    assert [kind for kind, _ in seen] == ["beforeunload"]


def test_a_preview_is_unsaved_and_saving_does_not_ask(tab: Page) -> None:
    seen = dialogs_of(tab)
    tab.goto(EDIT)
    tab.locator('[name="reference"]').fill("THAMES-1")
    tab.get_by_role("button", name="Preview changes").click()
    expect(tab.get_by_role("heading", name="Preview: what saving changes")).to_be_visible()
    tab.get_by_role("button", name="Save", exact=True).click()
    expect(tab.get_by_role("status")).to_contain_text("Saved as catalogue version")
    assert seen == []


def test_save_is_a_few_keys_away(tab: Page) -> None:
    """The form has hundreds of fields: a skip link, the first thing Tab reaches, leads to the
    actions (Tab, Enter, Tab, Tab: Save), and Ctrl+S saves."""
    tab.goto(EDIT)
    tab.keyboard.press("Tab")
    expect(tab.locator(":focus")).to_have_text("Skip to Save")
    tab.keyboard.press("Enter")
    tab.keyboard.press("Tab")
    tab.keyboard.press("Tab")
    expect(tab.locator(":focus")).to_have_text("Save")
    tab.locator('[name="reference"]').fill("THAMES-2")
    tab.keyboard.press("Control+s")
    expect(tab.get_by_role("status")).to_contain_text("Saved as catalogue version")


@pytest.mark.parametrize("width", [1280, 1400])
def test_the_contract_page_does_not_scroll_sideways(browser: Browser, served: str, width: int) -> None:
    page, problems = open_page(browser, served, width=width)
    sign_in(page)
    page.goto("/admin/connections")
    page.get_by_role("link", name="Reseller B").first.click()
    page.get_by_role("link", name="Contract").first.click()
    expect(page.get_by_role("heading", name="In force")).to_be_visible()
    widths = page.evaluate("[document.scrollingElement.scrollWidth, document.scrollingElement.clientWidth]")
    page.context.close()
    assert widths[0] <= widths[1], f"{widths[0]} px wide in a {widths[1]} px window"
    assert problems == []


def test_release_now_asks_first(tab: Page) -> None:
    """Demo Reseller B holds 10 places on each 10:00 cruise until 48 h before it: a cruise a
    week ahead still holds them. Release now asks (open_page accepts), then says when."""
    seen = dialogs_of(tab)
    tab.goto("/admin/slots/thames-sightseeing/DEFAULT/" + quote("2026-06-08T10:00:00+01:00", safe=""))
    blocks = tab.locator(".blocks-card")
    expect(blocks).to_contain_text("held")
    blocks.get_by_role("button", name="Release now").click()
    expect(tab.locator(".blocks-card")).to_contain_text("released early")
    assert seen == [
        ("confirm", "Release Demo reseller B's 10 unused places to general sale now? This cannot be undone.")
    ]


@pytest.mark.parametrize("width", [390, 1280])
def test_the_offers_page_fits_and_its_content_passes_axe(browser: Browser, served: str, width: int) -> None:
    page, problems = open_page(browser, served, width=width)
    sign_in(page)
    page.get_by_role("link", name="Offers").click()
    expect(page.get_by_role("heading", name="Every key of an offer")).to_be_visible()
    page.fill("#document", "offers:\n  - {id: a, code: x}\n")
    page.get_by_role("button", name="Check").click()
    expect(page.get_by_role("alert")).to_contain_text("Nothing was saved: 3 problems to fix.")
    widths = page.evaluate("[document.scrollingElement.scrollWidth, document.scrollingElement.clientWidth]")
    # The page's own content (the menu's colours are the whole back office's).
    results = Axe().run(page, context={"include": [["main"]]})
    page.context.close()
    assert widths[0] <= widths[1], f"{widths[0]} px wide in a {widths[1]} px window"
    assert results.violations_count == 0, results.generate_report()
    assert problems == []


def test_offers_are_checked_saved_with_ctrl_s_and_a_restore_asks_first(tab: Page, served: str) -> None:
    seen = dialogs_of(tab)
    current = httpx.get(served + "/admin/api/offers", headers=ADMIN).json()
    start = current["version"]
    mine = {"id": "browser", "code": "BROWSER5", "texts": {"en-GB": {"title": "Browser 5"}}}
    mine |= {"discount": {"percent": 5}, "channels": ["SHOP"]}

    def typed(code: str) -> str:
        return json.dumps({"offers": [*current["document"]["offers"], {**mine, "code": code}]}, indent=2)

    tab.goto("/admin/offers")
    tab.fill("#document", typed("BROWSER5"))
    tab.get_by_role("button", name="Check").click()
    expect(tab.get_by_role("status")).to_contain_text("The offers read well")
    tab.keyboard.press("Control+s")
    expect(tab.get_by_role("status")).to_contain_text(f"Offers saved as version {start + 1}.")
    expect(tab.locator("table.offer-list")).to_contain_text("BROWSER5")
    tab.fill("#document", typed("BROWSER6"))
    tab.keyboard.press("Control+s")
    expect(tab.locator("table.offer-list")).to_contain_text("BROWSER6")
    assert seen == []
    tab.get_by_role("button", name=f"Restore version {start + 1}").click()
    expect(tab.get_by_role("status")).to_contain_text(f"Version {start + 1} restored as version {start + 3}.")
    expect(tab.locator("table.offer-list")).to_contain_text("BROWSER5")
    assert seen == [
        ("confirm", f"Restore version {start + 1} of the offers? It is saved as version {start + 3}.")
    ]


def _voucher(served: str) -> str:
    """A voucher Demo reseller A sold (its contract made to sell gifts): its supplier reference."""
    contract = httpx.get(served + "/admin/api/connections/Demo reseller A/contract", headers=ADMIN).json()
    saved = httpx.put(
        served + "/admin/api/connections/Demo reseller A/contract",
        json={**contract["contract"], "sellsGifts": True},
        headers=ADMIN,
    )
    assert saved.status_code == 200, saved.text
    octo = {"Authorization": "Bearer demo-reseller-a", "Octo-Capabilities": "octo/gifts"}
    body = {
        "uuid": str(uuid.uuid4()),
        "amount": 5000,
        "currency": "EUR",
        "contact": {"fullName": "Ada Lovelace"},
    }
    created = httpx.post(served + "/octo/gifts", json=body, headers=octo)
    assert created.status_code == 200, created.text
    confirmed = httpx.post(served + f"/octo/gifts/{body['uuid']}/confirm", json={}, headers=octo)
    assert confirmed.status_code == 200, confirmed.text
    reference: str = confirmed.json()["supplierReference"]
    return reference


@pytest.mark.parametrize("width", [390, 1280])
def test_the_gifts_pages_fit_and_their_content_passes_axe(browser: Browser, served: str, width: int) -> None:
    reference = _voucher(served)
    page, problems = open_page(browser, served, width=width)
    sign_in(page)
    page.get_by_role("link", name="Gifts", exact=True).click()
    page.fill("#code", reference.lower())
    page.get_by_role("button", name="Search").click()
    expect(page.locator("table.gifts")).to_contain_text(reference)
    checked = []
    for step in ("list", "voucher"):
        if step == "voucher":
            page.get_by_role("link", name=reference).click()
            expect(page.get_by_role("heading", name="Balance history")).to_be_visible()
        widths = page.evaluate(
            "[document.scrollingElement.scrollWidth, document.scrollingElement.clientWidth]"
        )
        checked.append((step, widths, Axe().run(page, context={"include": [["main"]]})))
    page.context.close()
    for url, widths, results in checked:
        assert widths[0] <= widths[1], f"{url}: {widths[0]} px wide in a {widths[1]} px window"
        assert results.violations_count == 0, results.generate_report()
    assert problems == []


def test_cancelling_a_voucher_asks_first(tab: Page, served: str) -> None:
    reference = _voucher(served)
    seen = dialogs_of(tab)
    tab.goto("/admin/gifts?code=" + reference)
    tab.get_by_role("link", name=reference).click()
    tab.fill("#cancel-reason", "bought twice")
    tab.get_by_role("button", name="Cancel the voucher").click()
    expect(tab.get_by_role("status")).to_contain_text("refund it by hand")
    expect(tab.locator(".gift-movements")).to_contain_text("Cancelled")
    assert seen == [
        (
            "confirm",
            f"Cancel gift voucher {reference}? Its balance of 50.00 EUR is cancelled and the code pays "
            "nothing more. This cannot be undone.",
        )
    ]
