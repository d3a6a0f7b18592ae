"""The catalogue editor in headless Chromium (Debian's) against Berth served on a test clock from
an empty catalogue: a product added with two options, two currencies and a weekly schedule, then
booked through the OCTO API; a price changed and seen by octo/pricing; the older version
restored; a change that strands that booking refused, then forced by the admin; two people
editing the same product at once. Screenshots, desktop and phone, go to docs/screenshots/."""

from __future__ import annotations

import re
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import httpx
import pytest
from playwright.sync_api import Browser, Page, expect

from berth.container import Services
from tests.backoffice.server import berth_on_clock
from tests.backoffice.test_browser import browser, open_page, sign_in
from tests.conftest import KEY_A, SECRET_A, START, Clock

__all__ = ["browser"]  # the module's browser fixture, shared

pytestmark = pytest.mark.browser
DOCS_SCREENSHOTS = Path(__file__).resolve().parents[2] / "docs" / "screenshots"
RESELLER = {"Authorization": f"Bearer {KEY_A}"}
PHONE = {"width": 390, "height": 844}
SATURDAY = "2026-06-06"  # START is Monday 1 June 2026


async def connections_only(services: Services) -> object:
    """An empty catalogue: the editor makes it. Reseller A books."""
    await services.connections.ensure("Reseller A", KEY_A, SECRET_A)
    return services


@pytest.fixture(scope="module")
def served(tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    with berth_on_clock(
        tmp_path_factory.mktemp("editor") / "berth.db", Clock(START), connections_only
    ) as base:
        yield base


@pytest.fixture(scope="module")
def state() -> dict[str, Any]:
    """What the tests of this module hand on to each other, in order."""
    return {}


def shot(page: Page, name: str, at: str | None = None) -> None:
    """The window's view of the page (the editor's pages are long, their notices on top), or
    of the element `at`."""
    DOCS_SCREENSHOTS.mkdir(parents=True, exist_ok=True)
    if at is None:
        page.evaluate("window.scrollTo(0, 0)")
    else:
        page.evaluate(f"document.querySelector({at!r}).scrollIntoView()")
    page.screenshot(path=str(DOCS_SCREENSHOTS / f"catalog-{name}.png"))


def phone_shot(browser: Browser, base: str, path: str, name: str) -> None:
    tab, problems = open_page(browser, base, **PHONE)
    sign_in(tab)
    tab.goto(path)
    shot(tab, f"{name}-phone")
    tab.context.close()
    assert problems == []


def fill(page: Page, values: dict[str, str]) -> None:
    for name, value in values.items():
        field = page.locator(f'[name="{name}"]')
        if field.evaluate("e => e.tagName") == "SELECT":
            field.select_option(value)
        else:
            field.fill(value)


def availability(base: str, product: str, option: str, day: str) -> list[dict[str, Any]]:
    query = {"productId": product, "optionId": option, "localDateStart": day, "localDateEnd": day}
    headers = {**RESELLER, "Octo-Capabilities": "octo/pricing"}
    response = httpx.post(base + "/octo/availability", json=query, headers=headers)
    assert response.status_code == 200, response.text
    found: list[dict[str, Any]] = response.json()
    return found


def adult_price(base: str, currency: str = "GBP") -> int:
    slot = availability(base, "harbour-walk", "DEFAULT", SATURDAY)[0]
    query = {
        "productId": "harbour-walk",
        "optionId": "DEFAULT",
        "localDateStart": SATURDAY,
        "localDateEnd": SATURDAY,
        "currency": currency,
    }
    headers = {**RESELLER, "Octo-Capabilities": "octo/pricing"}
    slot = httpx.post(base + "/octo/availability", json=query, headers=headers).json()[0]
    unit = next(u for u in slot["unitPricing"] if u["unitId"] == "adult")
    return int(unit["retail"])


def test_add_a_product_from_an_empty_catalogue_and_book_it(
    browser: Browser, served: str, state: dict[str, Any]
) -> None:
    page, problems = open_page(browser, served)
    sign_in(page)
    page.goto("/admin/catalog")
    expect(page.get_by_role("heading", name="No products yet")).to_be_visible()
    page.get_by_role("link", name="Add a product").first.click()
    expect(page.get_by_role("heading", name="Add a product")).to_be_visible()
    fill(
        page,
        {
            "id": "harbour-walk",
            "internalName": "Harbour walk",
            "timeZone": "Europe/London",
            "content.new.language": "en-GB",
            "content.new.title": "A walk round the harbour",
            "options.0.id": "DEFAULT",
            "options.0.internalName": "Weekend morning",
            "options.0.schedules.0.startTimes": "09:30, 11:00",
            "options.0.schedules.0.capacity": "2",
            "options.0.units.0.id": "adult",
            "options.0.units.0.internalName": "Adult",
            "options.0.units.0.type": "ADULT",
            "options.0.units.0.prices.0.currency": "GBP",
            "options.0.units.0.prices.0.retail": "12.50",
            "options.0.units.0.prices.0.tax.name": "VAT",
            "options.0.units.0.prices.0.tax.rate": "20",
        },
    )
    for day in ("MON", "TUE", "WED", "THU", "FRI"):
        page.uncheck(f'[name="options.0.schedules.0.weekdays"][value="{day}"]')
    page.locator('[name="defaultOption"][value="0"]').check()
    shot(page, "new-product")
    page.get_by_role("button", name="Preview changes").click()
    expect(page.locator(".preview pre")).to_contain_text("+ added product harbour-walk")
    # The preview shows the form again, with a new row for a second price and a second option.
    fill(
        page,
        {
            "options.0.units.0.prices.1.currency": "EUR",
            "options.0.units.0.prices.1.retail": "14.50",
            "options.1.id": "evening",
            "options.1.internalName": "Evening walk",
            "options.1.schedules.0.startTimes": "18:00",
            "options.1.schedules.0.capacity": "10",
            "options.1.units.0.id": "adult",
            "options.1.units.0.internalName": "Adult",
            "options.1.units.0.type": "ADULT",
            "options.1.units.0.prices.0.currency": "GBP",
            "options.1.units.0.prices.0.retail": "15.00",
        },
    )
    page.get_by_role("button", name="Preview changes").click()
    # Every currency of the product must price every unit: the import's rule, in words.
    expect(page.locator(".problem-summary")).to_contain_text(
        "no price in EUR, which other prices of the product use"
    )
    fill(page, {"options.1.units.0.prices.1.currency": "EUR", "options.1.units.0.prices.1.retail": "17.00"})
    shot(page, "new-options", at="#f-options-1")
    page.get_by_role("button", name="Save", exact=True).click()
    expect(page.locator(".notice.success")).to_have_text(re.compile(r"Saved as catalogue version \d+\."))
    expect(page.get_by_role("heading", name="Harbour walk")).to_be_visible()
    state["first_version"] = int(re.findall(r"\d+", page.locator(".notice.success").inner_text())[0])

    products = httpx.get(served + "/octo/products", headers=RESELLER).json()
    assert [(p["id"], [o["id"] for o in p["options"]]) for p in products] == [
        ("harbour-walk", ["DEFAULT", "evening"])
    ]
    slots = availability(served, "harbour-walk", "DEFAULT", SATURDAY)
    assert [s["localDateTimeStart"][11:16] for s in slots] == ["09:30", "11:00"]
    assert availability(served, "harbour-walk", "DEFAULT", "2026-06-08") == []  # a Monday
    body = {
        "productId": "harbour-walk",
        "optionId": "DEFAULT",
        "availabilityId": slots[0]["id"],
        "resellerReference": "WALK-1",
        "unitItems": [{"unitId": "adult"}, {"unitId": "adult"}],
    }
    held = httpx.post(served + "/octo/bookings", json=body, headers=RESELLER).json()
    assert held["status"] == "ON_HOLD", held
    contact = {"firstName": "Ada", "lastName": "Lovelace", "emailAddress": "ada@example.com"}
    confirmed = httpx.post(
        served + f"/octo/bookings/{held['uuid']}/confirm", json={"contact": contact}, headers=RESELLER
    ).json()
    assert confirmed["status"] == "CONFIRMED", confirmed
    state["booking"] = confirmed
    state["slot"] = slots[0]["id"]
    page.context.close()
    assert problems == []
    phone_shot(browser, served, "/admin/catalog/harbour-walk/edit", "edit")


def test_a_price_change_shows_in_octo_pricing_and_the_history(
    browser: Browser, served: str, state: dict[str, Any]
) -> None:
    assert adult_price(served) == 1250
    page, problems = open_page(browser, served)
    sign_in(page)
    page.goto("/admin/catalog/harbour-walk")
    page.get_by_role("link", name="Edit", exact=True).click()
    fill(page, {"options.0.units.0.prices.0.retail": "-1"})
    page.get_by_role("button", name="Save", exact=True).click()
    summary = page.locator(".problem-summary")
    expect(summary).to_contain_text(
        'Option 1 "DEFAULT" \N{SINGLE RIGHT-POINTING ANGLE QUOTATION MARK} Unit 1 "adult" '
        "\N{SINGLE RIGHT-POINTING ANGLE QUOTATION MARK} Price 1 (GBP) \N{SINGLE RIGHT-POINTING ANGLE QUOTATION MARK} Price"
    )
    expect(summary).to_contain_text("must be at least 0")
    expect(page.locator("#f-options-0-units-0-prices-0-retail-error")).to_have_text("must be at least 0")
    shot(page, "problems")
    fill(page, {"options.0.units.0.prices.0.retail": "14.00"})
    page.get_by_role("button", name="Preview changes").click()
    expect(page.locator(".preview pre")).to_contain_text(
        "~ changed unit harbour-walk/DEFAULT/adult (prices): GBP 12.50 -> 14.00"
    )
    # The VAT given as 20 % follows the price: 14.00 x 20 / 120.
    expect(page.locator('[name="options.0.units.0.prices.0.tax.retail"]')).to_have_value("2.33")
    shot(page, "preview")
    page.get_by_role("button", name="Save", exact=True).click()
    expect(page.locator(".notice.success")).to_contain_text("Saved as catalogue version")
    assert adult_price(served) == 1400

    page.goto("/admin/catalog/history")
    rows = page.locator("table.versions tbody tr")
    expect(rows.first).to_contain_text("Changed unit harbour-walk/DEFAULT/adult: prices (GBP 12.50 -> 14.00)")
    expect(rows.first).to_contain_text("Back office")
    shot(page, "history")
    rows.first.get_by_role("link").click()
    expect(page.locator("pre.diff")).to_contain_text("retail: 1400")
    expect(page.locator("ul.change-words")).to_contain_text("Changed unit harbour-walk/DEFAULT/adult: prices")
    shot(page, "version")
    page.context.close()
    assert problems == []
    phone_shot(browser, served, "/admin/catalog/history", "history")


def test_restoring_the_older_version_brings_the_price_back(
    browser: Browser, served: str, state: dict[str, Any]
) -> None:
    page, problems = open_page(browser, served)
    sign_in(page)
    page.goto(f"/admin/catalog/history/{state['first_version']}")
    page.get_by_role("button", name="Preview restoring").click()
    expect(page.locator(".preview pre")).to_contain_text("~ changed unit harbour-walk/DEFAULT/adult (prices)")
    page.get_by_role("button", name=f"Restore version {state['first_version']}").click()
    expect(page.locator(".notice.success")).to_contain_text(
        f"Version {state['first_version']} restored as catalogue version"
    )
    assert adult_price(served) == 1250
    summaries = page.locator("table.versions tbody tr td.wide").all_inner_texts()
    assert summaries[0].startswith(
        f"Restored version {state['first_version']}: Changed unit harbour-walk/DEFAULT/adult: prices"
    )
    assert summaries[1] == "Changed unit harbour-walk/DEFAULT/adult: prices (GBP 12.50 -> 14.00)"
    assert summaries[2] == "Added product harbour-walk"
    page.context.close()
    assert problems == []


def test_a_change_that_strands_a_booking_is_refused_then_forced_by_an_admin(
    browser: Browser, served: str, state: dict[str, Any]
) -> None:
    page, problems = open_page(browser, served)
    sign_in(page)
    page.goto("/admin/catalog/harbour-walk/edit")
    page.locator('[name="options.0.schedules.0.remove"]').check()
    page.get_by_role("button", name="Save", exact=True).click()
    refused = page.locator(".refused")
    expect(refused).to_contain_text("Not saved: this removes or shrinks what 1 live booking hold.")
    expect(refused).to_contain_text(state["booking"]["supplierReference"])
    expect(refused).to_contain_text("WALK-1")
    shot(page, "refused")
    page.get_by_role("button", name="Save anyway over 1 live booking").click()
    expect(page.locator(".notice.success")).to_have_text(
        re.compile(r"Saved as catalogue version \d+ over 1 live booking\(s\)\.")
    )
    assert availability(served, "harbour-walk", "DEFAULT", SATURDAY) == []
    booking = httpx.get(served + f"/octo/bookings/{state['booking']['uuid']}", headers=RESELLER).json()
    assert booking["status"] == "CONFIRMED"  # the booking stays as it was
    page.context.close()
    assert problems == []


def test_two_people_editing_the_same_product(browser: Browser, served: str) -> None:
    first, first_problems = open_page(browser, served)
    second, second_problems = open_page(browser, served)
    for tab in (first, second):
        sign_in(tab)
        tab.goto("/admin/catalog/harbour-walk/edit")
    fill(first, {"internalName": "Harbour walk with coffee"})
    first.get_by_role("button", name="Save", exact=True).click()
    expect(first.locator(".notice.success")).to_contain_text("Saved as catalogue version")
    fill(second, {"options.1.units.0.prices.0.retail": "16.00"})
    second.get_by_role("button", name="Save", exact=True).click()
    conflict = second.locator(".conflict")
    expect(conflict).to_contain_text("Someone else saved the catalogue while you edited it.")
    expect(conflict).to_contain_text("Changed product harbour-walk: internal name")
    expect(second.locator('[name="options.1.units.0.prices.0.retail"]')).to_have_value("16.00")  # kept
    shot(second, "conflict")
    products = httpx.get(
        served + "/octo/products", headers={**RESELLER, "Octo-Capabilities": "octo/pricing"}
    ).json()
    evening = next(o for o in products[0]["options"] if o["id"] == "evening")
    assert evening["units"][0]["pricingFrom"][0]["retail"] == 1500  # not overwritten
    for tab in (first, second):
        tab.context.close()
    assert first_problems == [] and second_problems == []
