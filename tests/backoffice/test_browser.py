"""The back office in headless Chromium against a real `berth serve --demo`: what a member of
staff does, click by click. Each page is saved to test-artifacts/screenshots/."""

from __future__ import annotations

import re
import time
from collections.abc import Callable, Iterator
from datetime import datetime, timedelta
from pathlib import Path
from typing import Any
from zoneinfo import ZoneInfo

import httpx
import pytest
from playwright.sync_api import (
    Browser,
    ConsoleMessage,
    Dialog,
    Page,
    Request,
    Response,
    expect,
    sync_playwright,
)

from tests.backoffice.server import berth_on_clock, berth_serve, receiver_in_thread
from tests.chromium import CHROMIUM, CHROMIUM_ARGS
from tests.conftest import Clock

SCREENSHOTS = Path(__file__).resolve().parents[2] / "test-artifacts" / "screenshots"
RESELLER = {"Authorization": "Bearer demo-reseller-a"}
RESELLER_B = {"Authorization": "Bearer demo-reseller-b"}
ADMIN = {"Authorization": "Bearer demo-admin"}
# Seconds a test waits for the server in its thread, which shares the machine with the browser
# (httpx waits 5 s by default; a loaded CI machine can take longer).
SERVER_PATIENCE = 60

pytestmark = pytest.mark.browser


@pytest.fixture(scope="module")
def server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    with berth_serve(tmp_path_factory.mktemp("browser") / "berth.db", demo=True) as base:
        yield base


@pytest.fixture(scope="module")
def browser() -> Iterator[Browser]:
    SCREENSHOTS.mkdir(parents=True, exist_ok=True)
    with sync_playwright() as playwright:
        launched = playwright.chromium.launch(executable_path=str(CHROMIUM), args=CHROMIUM_ARGS)
        yield launched
        launched.close()


def open_page(
    browser: Browser, base: str, width: int = 1280, height: int = 900, **context_options: Any
) -> tuple[Page, list[str]]:
    """A fresh browser tab (no cookies) that accepts confirmation dialogs; the list collects
    requests to anywhere but Berth, files of a page that failed to load, and script errors
    (a page itself may answer 401 or 403: that is what it has to say). `context_options`: the
    browser's own time zone or language, say."""
    context = browser.new_context(
        base_url=base, viewport={"width": width, "height": height}, **context_options
    )
    context.set_default_timeout(10_000)
    tab = context.new_page()
    problems: list[str] = []

    def on_request(request: Request) -> None:
        if not request.url.startswith(base):
            problems.append(f"request to {request.url}")

    def on_response(response: Response) -> None:
        if response.request.resource_type != "document" and response.status >= 400:
            problems.append(f"{response.status} for {response.url}")

    def on_console(message: ConsoleMessage) -> None:
        if message.type == "error" and not message.text.startswith("Failed to load resource"):
            problems.append(f"console error: {message.text}")

    def on_dialog(dialog: Dialog) -> None:
        dialog.accept()

    tab.on("request", on_request)
    tab.on("response", on_response)
    tab.on("console", on_console)
    tab.on("dialog", on_dialog)
    return tab, problems


@pytest.fixture
def page(browser: Browser, server: str) -> Iterator[Page]:
    tab, problems = open_page(browser, server)
    yield tab
    tab.context.close()
    assert problems == []


def shot(page: Page, name: str) -> None:
    page.screenshot(path=str(SCREENSHOTS / f"{name}.png"), full_page=True)


def sign_in(page: Page) -> None:
    page.goto("/admin")
    page.fill("#password", "demo-admin")
    page.get_by_role("button", name="Sign in").click()
    expect(page.get_by_role("heading", name="Dashboard")).to_be_visible()


def eventually(check: Callable[[], bool], what: str, seconds: float = 15) -> None:
    """Wait for something the server's background worker does."""
    deadline = time.monotonic() + seconds
    while not check():
        if time.monotonic() > deadline:
            raise AssertionError(f"still waiting for {what}")
        time.sleep(0.05)


def book(base: str, reference: str) -> dict[str, Any]:
    """A confirmed cruise booking for two adults, a few days ahead (still cancellable)."""
    first = datetime.now(ZoneInfo("Europe/London")).date() + timedelta(days=3)
    query = {
        "productId": "thames-sightseeing",
        "optionId": "DEFAULT",
        "localDateStart": first.isoformat(),
        "localDateEnd": (first + timedelta(days=7)).isoformat(),
    }
    slots = httpx.post(
        base + "/octo/availability", json=query, headers=RESELLER, timeout=SERVER_PATIENCE
    ).json()
    slot = next(s for s in slots if s["available"])
    body = {
        "productId": "thames-sightseeing",
        "optionId": "DEFAULT",
        "availabilityId": slot["id"],
        "resellerReference": reference,
        "unitItems": [{"unitId": "adult"}, {"unitId": "adult"}],
    }
    held = httpx.post(base + "/octo/bookings", json=body, headers=RESELLER, timeout=SERVER_PATIENCE).json()
    contact = {"firstName": "Ada", "lastName": "Lovelace", "emailAddress": "ada@example.com"}
    confirmed: dict[str, Any] = httpx.post(
        base + f"/octo/bookings/{held['uuid']}/confirm", json={"contact": contact}, headers=RESELLER
    ).json()
    assert confirmed["status"] == "CONFIRMED", confirmed
    return confirmed


def status_of(base: str, booking_id: str) -> str:
    value: str = httpx.get(base + f"/admin/api/bookings/{booking_id}", headers=ADMIN).json()["booking"][
        "status"
    ]
    return value


def test_sign_in_find_a_booking_open_its_manifest_and_redeem_it(page: Page, server: str) -> None:
    booking = book(server, "E2E-REDEEM")
    reference = booking["supplierReference"]
    page.goto("/admin/bookings")
    expect(page).to_have_url(re.compile(r"/admin/sign-in\?next=/admin/bookings$"))
    page.fill("#password", "not-it")
    page.get_by_role("button", name="Sign in").click()
    expect(page.locator(".notice.error")).to_contain_text("the password must be the admin token")
    shot(page, "01-sign-in")
    page.fill("#password", "demo-admin")
    page.get_by_role("button", name="Sign in").click()
    expect(page.get_by_role("heading", name="Bookings")).to_be_visible()

    page.get_by_role("link", name="Dashboard").click()
    expect(page.get_by_role("heading", name="Today")).to_be_visible()
    shot(page, "02-dashboard")
    page.fill("#quick-reference", "E2E-REDEEM")
    page.get_by_role("button", name="Find").click()
    expect(page.locator("table.bookings tbody tr")).to_have_count(1)
    shot(page, "03-bookings-search")

    page.get_by_role("link", name=reference).click()
    expect(page.locator("h1")).to_contain_text(f"Booking {reference}")
    summary = page.locator(".card", has_text="Summary")
    expect(summary).to_contain_text("2 \N{MULTIPLICATION SIGN} Adult")
    expect(summary.locator("div", has=page.locator("dt", has_text="Places"))).to_have_text("Places2")
    shot(page, "04-booking")

    page.get_by_role("link", name="Manifest of this departure").click()
    manifest = page.locator("table.manifest")
    expect(manifest).to_contain_text("Ada Lovelace")
    expect(manifest).to_contain_text(reference)
    shot(page, "05-manifest")

    page.get_by_role("link", name=reference).click()
    page.get_by_role("button", name="Redeem: guests have arrived").click()
    expect(page.locator(".notice.success")).to_have_text(
        f"Booking {reference} redeemed: CONFIRMED → REDEEMED. Its guests are checked in."
    )
    expect(page.locator("h1")).to_contain_text("REDEEMED")
    shot(page, "06-booking-redeemed")
    assert status_of(server, booking["id"]) == "REDEEMED"


def test_cancel_a_booking_found_with_the_filters(page: Page, server: str) -> None:
    booking = book(server, "E2E-CANCEL")
    reference = booking["supplierReference"]
    sign_in(page)
    page.get_by_role("link", name="Bookings").click()
    page.select_option("#product", "thames-sightseeing")
    page.select_option("#status", "CONFIRMED")
    page.fill("#reference", "E2E-CANCEL")
    page.get_by_role("button", name="Search").click()
    page.get_by_role("link", name=reference).click()
    page.fill("#cancel-reason", "Storm warning")
    page.get_by_role("button", name="Cancel booking").click()  # the confirmation dialog is accepted
    expect(page.locator(".notice.success")).to_contain_text(
        f"Booking {reference} cancelled: CONFIRMED → CANCELLED. Its 2 place(s) on"
    )
    expect(page.locator("table.history")).to_contain_text("Storm warning")
    shot(page, "07-booking-cancelled")
    assert status_of(server, booking["id"]) == "CANCELLED"


def test_browse_the_catalogue(page: Page) -> None:
    sign_in(page)
    page.get_by_role("link", name="Catalogue").click()
    expect(page.locator(".product-card")).to_have_count(9)
    shot(page, "08-catalogue")
    page.locator(".product-card", has_text="Thames sightseeing cruise").click()
    expect(page.locator(".option").first).to_contain_text("10:00, 12:00, 14:00, 16:00")
    shot(page, "09-product")


def test_seat_map_of_tomorrows_first_cruise(page: Page, server: str) -> None:
    """The demo seats three box office parties on tomorrow's first harbour cruise."""
    sign_in(page)
    tomorrow = datetime.now(ZoneInfo("Europe/London")).date() + timedelta(days=1)
    query = {"productId": "harbour-cruise", "optionId": "DEFAULT", "localDate": tomorrow.isoformat()}
    first = httpx.post(
        server + "/octo/availability", json=query, headers=RESELLER, timeout=SERVER_PATIENCE
    ).json()[0]["id"]
    page.goto(f"/admin/slots/harbour-cruise/DEFAULT/{first.replace('+', '%2B')}")
    expect(page.locator("table.seat-map")).to_have_count(2)
    heron = page.locator(".resource", has_text="MV Heron")
    expect(heron.locator("td.seat-taken")).to_have_count(12)
    expect(heron).to_contain_text("Grace Hopper")
    expect(page.locator(".resource", has_text="MV Kingfisher").locator("td.seat-blocked")).to_have_count(1)
    shot(page, "17-seat-map")
    heron.locator("td.seat-taken a").first.click()
    expect(page.locator("h1")).to_contain_text("Booking")


def test_create_and_revoke_a_connection(page: Page, server: str) -> None:
    sign_in(page)
    page.get_by_role("link", name="Connections").click()
    page.fill("#name", "E2E Travel")
    page.get_by_role("button", name="Create and show its API key").click()
    key = page.inner_text("#new-key").strip()
    assert key.startswith("berth_")
    shot(page, "10-connection-created")
    assert httpx.get(server + "/octo/supplier", headers={"Authorization": f"Bearer {key}"}).status_code == 200

    row = page.locator("tr", has_text="E2E Travel")
    row.get_by_role("button", name="Revoke").click()  # the confirmation dialog is accepted
    expect(page.locator(".notice.success")).to_have_text(
        f"Connection “E2E Travel” revoked: its API key …{key[-4:]} no longer works."
    )
    expect(page.locator("tr", has_text="E2E Travel")).to_contain_text("REVOKED")
    shot(page, "11-connections")
    assert httpx.get(server + "/octo/supplier", headers={"Authorization": f"Bearer {key}"}).status_code == 400


def test_pages_fit_a_phone(browser: Browser, server: str) -> None:
    phone, problems = open_page(browser, server, width=390, height=844)
    sign_in(phone)

    def fits(name: str) -> None:
        overflow = phone.evaluate("document.documentElement.scrollWidth - window.innerWidth")
        assert overflow <= 0, f"{name} scrolls sideways by {overflow}px"
        shot(phone, name)

    fits("12-phone-dashboard")
    phone.goto("/admin/bookings?product=sunset-kayak")
    fits("13-phone-bookings")
    phone.locator("table.bookings tbody a").first.click()
    expect(phone.locator("h1")).to_contain_text("Booking")
    fits("14-phone-booking")
    phone.get_by_role("link", name="Manifest of this departure").click()
    expect(phone.locator("table.manifest")).to_contain_text("Box Office")
    fits("15-phone-manifest")
    phone.goto("/admin/bookings?product=harbour-cruise")
    phone.locator("table.bookings tbody a").first.click()
    phone.get_by_role("link", name="Manifest of this departure").click()
    expect(phone.locator("table.seat-map").first).to_be_visible()
    fits("18-phone-seat-map")
    phone.context.close()
    assert problems == []


def test_without_an_admin_token_the_page_says_how_to_enable_it(browser: Browser, tmp_path: Path) -> None:
    with berth_serve(tmp_path / "berth.db", demo=False) as base:
        tab, problems = open_page(browser, base)
        tab.goto("/admin")
        expect(tab.get_by_role("heading", name="The back office is disabled")).to_be_visible()
        expect(tab.locator("pre")).to_contain_text("BERTH_ADMIN_TOKEN")
        shot(tab, "16-disabled")
        tab.context.close()
    assert problems == []


# The server's own worker delivers; a failed attempt is retried only after an hour, so what the
# receiver gets after the first answer is what staff asked for.
WEBHOOK_SETTINGS = {"BERTH_RETRY_SCHEDULE": "3600", "BERTH_WEBHOOK_ALLOW_PRIVATE_TARGETS": "true"}


def test_redeliver_a_failed_webhook_delivery(browser: Browser, tmp_path: Path) -> None:
    with (
        berth_serve(tmp_path / "berth.db", demo=True, environment=WEBHOOK_SETTINGS) as base,
        receiver_in_thread(500) as target,
    ):
        page, problems = open_page(browser, base)
        sign_in(page)
        page.get_by_role("link", name="Webhooks").click()
        expect(page.get_by_role("heading", name="No webhooks yet")).to_be_visible()
        expect(page.locator("section.empty")).to_contain_text(f"POST {base}/octo/webhooks")
        shot(page, "17-webhooks-empty")

        subscribed = httpx.post(
            base + "/octo/webhooks",
            json={"event": "booking_update", "url": target.url, "headers": {"X-Reseller-Token": "t0k3n"}},
            headers={**RESELLER, "Octo-Capabilities": "octo/pricing"},
        )
        assert subscribed.status_code == 200, subscribed.text
        reference = book(base, "E2E-WEBHOOK")["supplierReference"]
        eventually(lambda: len(target.requests) == 1, "the first delivery (answered 500)")

        page.reload()
        row = page.locator("table.webhooks tbody tr")
        expect(row).to_have_count(1)
        expect(row).to_contain_text(target.url)
        expect(row).to_contain_text("Demo reseller A")
        expect(row).to_contain_text("octo/pricing")
        shot(page, "18-webhooks")

        row.get_by_role("link", name="booking_update").click()
        expect(page.locator("h1")).to_contain_text("Webhook booking_update")
        delivery_row = page.locator("table.deliveries tbody tr", has_text=f"Booking {reference}")
        expect(delivery_row).to_contain_text("RETRYING")
        expect(delivery_row).to_contain_text("HTTP 500")
        shot(page, "19-webhook-deliveries")

        delivery_row.locator("a").first.click()
        expect(page.locator("h1")).to_contain_text(f"Delivery booking_update · Booking {reference}")
        expect(page.locator("table.attempts tbody tr")).to_have_count(1)
        expect(page.locator("table.attempts")).to_contain_text("answered 500")
        expect(page.locator("table.headers")).to_contain_text("X-Reseller-Token")
        expect(page.locator("pre.json")).to_contain_text('"event": "booking_update"')
        shot(page, "20-delivery-failed")

        page.get_by_role("button", name="Redeliver").click()
        expect(page.locator(".notice.success")).to_contain_text(
            f"(booking_update of Booking {reference}) requeued; it was waiting for a retry at"
        )
        shot(page, "21-delivery-requeued")
        eventually(lambda: len(target.requests) == 2, "the redelivery")
        assert target.requests[1].headers["webhook-id"] == target.requests[0].headers["webhook-id"]
        assert target.requests[1].json["booking"]["supplierReference"] == reference

        def delivered() -> bool:
            page.reload()
            return page.locator("table.attempts tbody tr").count() == 2

        eventually(delivered, "the redelivery's attempt on the page")
        expect(page.locator("h1")).to_contain_text("DELIVERED")
        expect(page.locator("table.attempts tbody tr").first).to_contain_text("answered 200")
        shot(page, "22-delivery-redelivered")

        page.locator(".crumbs a", has_text="booking_update").click()
        page.fill("#since", "2020-01-01T00:00")
        page.get_by_role("button", name="Redeliver since this time").click()  # the dialog is accepted
        expect(page.locator(".notice.success")).to_contain_text(
            "1 delivery made since 1 Jan 2020 00:00 GMT requeued"
        )
        eventually(lambda: len(target.requests) == 3, "the redelivery since a time")
        shot(page, "23-webhook-redelivered-since")

        page.get_by_role("link", name="Connections").click()
        connection = page.locator("tr", has_text="Demo reseller A")
        expect(connection.get_by_role("link", name="1")).to_be_visible()  # its webhooks
        connection.get_by_role("button", name="Rotate signing secret").click()  # the dialog is accepted
        expect(page.locator(".key-once")).to_contain_text("Signing secret of “Demo reseller A” rotated")
        assert page.inner_text("#rotated-secret").strip().startswith("whsec_")
        shot(page, "24-connection-secret-rotated")
        page.context.close()
        assert problems == []

        phone, problems = open_page(browser, base, width=390, height=844)
        sign_in(phone)

        def fits(name: str) -> None:
            overflow = phone.evaluate("document.documentElement.scrollWidth - window.innerWidth")
            assert overflow <= 0, f"{name} scrolls sideways by {overflow}px"
            shot(phone, name)

        phone.goto("/admin/webhooks")
        fits("25-phone-webhooks")
        phone.locator("table.webhooks tbody a").first.click()
        expect(phone.locator("h1")).to_contain_text("Webhook booking_update")
        fits("26-phone-webhook")
        phone.locator("table.deliveries tbody a").first.click()
        expect(phone.locator("h1")).to_contain_text("Delivery")
        fits("27-phone-delivery")
        phone.context.close()
        assert problems == []


# How the back office writes a mapping: its parts joined by single right-pointing angle quotes.
EVENING_ADULT = " \N{SINGLE RIGHT-POINTING ANGLE QUOTATION MARK} ".join(
    ("Thames sightseeing cruise", "Summer evening departure", "Adult")
)


def test_complete_a_mapping_and_see_the_reseller_notified(browser: Browser, tmp_path: Path) -> None:
    with (
        berth_serve(tmp_path / "berth.db", demo=True, environment=WEBHOOK_SETTINGS) as base,
        receiver_in_thread() as target,
    ):
        listing = {
            "resellerReference": "E2E-LISTING",
            "resellerProduct": "Evening cruise, adults",
            "unitRequired": True,
            "webhookUrl": target.url,
        }
        uploaded = httpx.put(base + "/octo/mappings", json=[listing], headers=RESELLER_B)
        assert uploaded.status_code == 200, uploaded.text

        page, problems = open_page(browser, base)
        sign_in(page)
        expect(page.locator(".callout", has_text="3 mapping rows wait for you")).to_be_visible()
        page.get_by_role("link", name="Mappings", exact=True).click()
        expect(page.locator("h1")).to_contain_text("Mappings 3 waiting")
        rows = page.locator("table.mappings tbody tr")
        expect(rows).to_have_count(5)
        # Rows are listed oldest first; the upload may share the demo rows' second, so the
        # listing is found by its reference, not its place.
        listing_row = rows.filter(has_text="E2E-LISTING")
        expect(listing_row).to_have_count(1)
        expect(listing_row).to_contain_text("WAITING")
        shot(page, "24-mappings")

        listing_row.get_by_role("link", name="Map", exact=True).click()
        expect(page.locator("h1")).to_contain_text("Mapping E2E-LISTING · Demo reseller B")
        shot(page, "25-mapping")
        # The lists narrow as the product and option are picked.
        expect(page.locator("#option option")).to_have_count(1)
        expect(page.locator("#option")).to_be_disabled()
        page.select_option("#product", "thames-sightseeing")
        expect(page.locator("#option option")).to_have_text(
            ["Choose an option", "Daytime departures (DEFAULT)", "Summer evening departure (evening)"]
        )
        page.select_option("#option", "thames-sightseeing/DEFAULT")
        expect(page.locator("#unit option")).to_have_text(["Choose a unit", "Adult (adult)", "Child (child)"])
        page.select_option("#option", "thames-sightseeing/evening")
        # The evening departure has one unit: it is picked.
        expect(page.locator("#unit option")).to_have_count(2)
        expect(page.locator("#unit")).to_have_value("thames-sightseeing/evening/adult")
        shot(page, "26-mapping-form-picked")

        page.get_by_role("button", name="Save and notify the reseller").click()
        expect(page.locator(".notice.success")).to_have_text(
            f"“E2E-LISTING” of Demo reseller B mapped to {EVENING_ADULT}. Demo reseller B will be notified at {target.url}; the notification "
            "shows below."
        )
        eventually(lambda: len(target.requests) == 1, "the mapping notification")
        body = target.requests[0].json
        assert (body["resellerReference"], body["productId"], body["optionId"], body["unitId"]) == (
            "E2E-LISTING",
            "thames-sightseeing",
            "evening",
            "adult",
        )

        def delivered() -> bool:
            page.reload()
            return "DELIVERED" in page.locator("table.notifications").inner_text()

        eventually(delivered, "the delivered notification on the row's page")
        expect(page.locator("table.notifications")).to_contain_text("answered 200")
        shot(page, "27-mapping-notified")

        page.locator("table.notifications tbody a").first.click()
        expect(page.locator("h1")).to_contain_text("Delivery mapping_update · Mapping E2E-LISTING")
        expect(page.locator("table.attempts")).to_contain_text("answered 200")
        shot(page, "28-mapping-delivery")
        page.get_by_role("link", name="Mapping E2E-LISTING").first.click()
        expect(page.locator("h1")).to_contain_text("MAPPED")

        page.goto("/admin/mappings?show=pending")
        expect(page.locator("table.mappings tbody tr")).to_have_count(2)
        page.goto("/admin/mappings")
        expect(page.locator("tr", has_text="E2E-LISTING")).to_contain_text("DELIVERED 1 attempt")
        shot(page, "29-mappings-after")
        page.context.close()
        assert problems == []


def test_the_mapping_form_works_without_scripts_and_on_a_phone(browser: Browser, server: str) -> None:
    kayak = next(
        r
        for r in httpx.get(server + "/admin/api/mappings", headers=ADMIN).json()["mappings"]
        if r["resellerReference"] == "RA-KAYAK-SUNSET"
    )
    context = browser.new_context(
        base_url=server, java_script_enabled=False, viewport={"width": 1280, "height": 900}
    )
    plain = context.new_page()
    sign_in(plain)
    plain.goto(f"/admin/mappings/{kayak['id']}")
    # Without scripts every product's options show, grouped; a mismatch is refused and shown again.
    expect(plain.locator('#option optgroup[label="Thames sightseeing cruise"]')).to_have_count(1)
    expect(plain.locator('#option optgroup[label="Sunset kayak trip"]')).to_have_count(1)
    plain.select_option("#product", "sunset-kayak")
    plain.select_option("#option", "thames-sightseeing/evening")
    plain.get_by_role("button", name="Save and notify the reseller").click()
    expect(plain.locator("#option-error")).to_contain_text(
        "“Summer evening departure” is an option of Thames sightseeing cruise, not of Sunset kayak trip"
    )
    expect(plain.locator("#product")).to_have_value("sunset-kayak")
    shot(plain, "30-mapping-form-errors")
    context.close()

    phone, problems = open_page(browser, server, width=390, height=844)
    sign_in(phone)

    def fits(name: str) -> None:
        overflow = phone.evaluate("document.documentElement.scrollWidth - window.innerWidth")
        assert overflow <= 0, f"{name} scrolls sideways by {overflow}px"
        shot(phone, name)

    phone.goto("/admin/mappings")
    expect(phone.locator("table.mappings tbody tr").first).to_contain_text("WAITING")
    fits("31-phone-mappings")
    phone.goto(f"/admin/mappings/{kayak['id']}")
    phone.select_option("#product", "sunset-kayak")
    expect(phone.locator("#option")).to_have_value("sunset-kayak/DEFAULT")  # its only option
    fits("32-phone-mapping")
    phone.context.close()
    assert problems == []


# A Monday in British Summer Time: 09:00 in London.
MORNING = datetime(2026, 6, 1, 8, 0, tzinfo=ZoneInfo("UTC"))


def reserve_on(
    base: str, product: str, availability_id: str, *units: str, confirm: bool = True
) -> dict[str, Any]:
    body = {
        "productId": product,
        "optionId": "DEFAULT",
        "availabilityId": availability_id,
        "unitItems": [{"unitId": unit} for unit in units],
    }
    held: dict[str, Any] = httpx.post(
        base + "/octo/bookings", json=body, headers=RESELLER, timeout=SERVER_PATIENCE
    ).json()
    assert held["status"] == "ON_HOLD", held
    if not confirm:
        return held
    contact = {
        "firstName": "Ada",
        "lastName": "Lovelace",
        "emailAddress": "ada@example.com",
        "phoneNumber": "+447700900001",
    }
    done: dict[str, Any] = httpx.post(
        base + f"/octo/bookings/{held['uuid']}/confirm", json={"contact": contact}, headers=RESELLER
    ).json()
    return done


def test_an_evening_in_the_back_office(browser: Browser, tmp_path: Path) -> None:
    """At 19:30 every departure of the day has left: the dashboard folds them away with the
    day's totals; a manifest counts guests and places apart; each booking offers the actions of
    its status; every time is in London time, labelled."""
    clock = Clock(MORNING)
    with berth_on_clock(tmp_path / "berth.db", clock) as base:
        reserve_on(base, "thames-sightseeing", "2026-06-01T10:00:00+01:00", "adult", "adult")
        reserve_on(base, "harbour-cruise", "2026-06-01T13:00:00+01:00", "adult", "adult", "child", "infant")
        query = {"productId": "sunset-kayak", "optionId": "DEFAULT", "localDateStart": "2026-06-01",
                 "localDateEnd": "2026-06-30"}  # fmt: skip
        kayak = next(s for s in httpx.post(base + "/octo/availability", json=query, headers=RESELLER, timeout=SERVER_PATIENCE).json()
                     if s["available"])  # fmt: skip
        pending = reserve_on(base, "sunset-kayak", kayak["id"], "paddler", "paddler")
        assert pending["status"] == "PENDING"
        confirmed = reserve_on(base, "thames-sightseeing", "2026-06-02T14:00:00+01:00", "adult", "child")
        clock.advance(hours=10, minutes=30)  # 19:30 in London
        held = reserve_on(base, "thames-sightseeing", "2026-06-02T16:00:00+01:00", "adult", confirm=False)

        page, problems = open_page(browser, base)
        sign_in(page)
        today = page.locator("section.day").first
        expect(today.locator(".day-totals")).to_have_text("2 bookings · 6 guests · 5 of 945 places sold")
        departed = today.locator("details.departed")
        expect(departed.locator("summary")).to_have_text(
            "Departed today: 17 departures · 2 bookings · 6 guests"
        )
        expect(departed.locator("table")).to_be_hidden()  # folded until opened
        expect(today).to_contain_text("Nothing more departs today.")
        tomorrow = page.locator("section.day").nth(1)
        expect(tomorrow.locator("h2")).to_have_text("Tomorrow Tue 2 Jun 2026")
        expect(tomorrow.locator("thead th").first).to_have_text("Time BST")
        shot(page, "40-evening-dashboard")
        departed.locator("summary").click()
        expect(departed.locator("tbody tr")).to_have_count(17)
        expect(departed.locator("tr", has_text="Thames sightseeing cruise").first).to_contain_text("2/200")
        shot(page, "41-evening-dashboard-departed-open")

        tomorrow.locator("tr", has_text="Harbour seat cruise").first.get_by_role(
            "link", name="Manifest"
        ).click()
        facts = page.locator("dl.facts-grid")
        expect(facts).to_contain_text("Time10:00 BST")
        expect(facts).to_contain_text("Guests13 people in 3 bookings")
        expect(facts).to_contain_text("Places sold12 of 27")
        grace = page.locator("table.manifest tr", has_text="Grace Hopper")
        expect(grace.locator("td.num")).to_have_text(["4", "3"])  # guests, places
        shot(page, "42-manifest-guests-and-places")

        page.goto(f"/admin/bookings/{pending['id']}")
        actions = page.locator("section.actions")
        expect(actions.get_by_role("button")).to_have_text(["Accept", "Reject"])
        expect(page.locator("table.history")).to_contain_text("1 Jun 2026 09:00 BST")
        shot(page, "43-booking-pending")

        page.goto(f"/admin/bookings/{confirmed['id']}")
        expect(actions.get_by_role("button")).to_have_text(["Redeem: guests have arrived", "Cancel booking"])
        expect(page.locator("dl.facts-grid")).to_contain_text("WhenTue 2 Jun 2026 14:00 BST")
        shot(page, "44-booking-confirmed")

        page.goto(f"/admin/bookings/{held['id']}")
        expect(actions.get_by_role("button")).to_have_text(["Release the hold"])
        expect(actions).to_contain_text("Demo reseller A holds these places until 1 Jun 2026 20:00 BST")
        shot(page, "45-booking-on-hold")
        page.context.close()
        assert problems == []

        phone, problems = open_page(browser, base, width=390, height=844)
        sign_in(phone)
        phone.locator("details.departed summary").click()
        overflow = phone.evaluate("document.documentElement.scrollWidth - window.innerWidth")
        assert overflow <= 0, f"the evening dashboard scrolls sideways by {overflow}px"
        shot(phone, "46-phone-evening-dashboard")
        phone.context.close()
        assert problems == []
