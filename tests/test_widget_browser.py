"""The widget on a supplier's own website, in headless Chromium: a plain HTML page served from
another loopback origin loads /shop/widget/v1.js from a real `berth serve --demo` (paying
through localstripe), and a guest books and pays in its overlay. Also: a site BERTH_SHOP_ORIGINS
does not list cannot frame the shop, messages from anywhere but the shop's frame are ignored,
and without JavaScript the link is a plain link to the shop. Screenshots of the overlay, desktop
and phone, go to docs/screenshots/."""

from __future__ import annotations

import threading
from collections.abc import Iterator
from contextlib import contextmanager
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path

import httpx
import pytest
from axe_playwright_python.sync_playwright import Axe
from playwright.sync_api import Browser, ConsoleMessage, FrameLocator, Locator, Page, expect, sync_playwright

from berth.fake_stripe import FakeStripe
from tests.berth_process import berth_serve, reserved_port
from tests.chromium import CHROMIUM, CHROMIUM_ARGS
from tests.stripe_helpers import VISA, localstripe

pytestmark = pytest.mark.browser
__all__ = ["localstripe"]

DOCS_SCREENSHOTS = Path(__file__).resolve().parents[1] / "docs" / "screenshots"
ADMIN = {"Authorization": "Bearer demo-admin"}
PHONE = {"width": 390, "height": 844}
OVERLAY = "[data-berth-overlay]"
AXE = Axe()


def supplier_page(berth: str) -> str:
    """A supplier's page as its web designer would write it: the snippet of docs/widget.md."""
    return f"""<!DOCTYPE html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<title>Harbourside Boat Tours</title>
<style>
  body {{ margin: 0; font-family: Georgia, serif; background: #fdfaf3; color: #222; }}
  header {{ background: #203a5c; color: #fff; padding: 1rem 2rem; }}
  main {{ max-width: 46rem; margin: 0 auto; padding: 1rem 2rem; line-height: 1.6; }}
  .book {{ display: inline-block; background: #c8102e; color: #fff; padding: 0.8rem 1.4rem; border: 0;
    border-radius: 6px; font: bold 1rem Georgia, serif; text-decoration: none; cursor: pointer; }}
</style>
</head>
<body>
<header><h1>Harbourside Boat Tours</h1></header>
<main>
  <h2>Thames sightseeing cruise</h2>
  <p>See London from the river, from Westminster to Tower Bridge, with a live guide on board.</p>
  <p>
    <a class="book" href="{berth}/shop/thames-sightseeing" data-berth-product="thames-sightseeing">Book now</a>
    <button class="book" type="button" data-berth-product="thames-sightseeing" data-berth-language="de">Jetzt buchen</button>
  </p>
  <p>Boats leave Harbour Pier every two hours from ten in the morning. Tickets on the pier cost more.</p>
</main>
<script src="{berth}/shop/widget/v1.js" async></script>
</body>
</html>
"""


def strict_page(berth: str) -> str:
    """A page of a site with a strict Content-Security-Policy of its own (`STRICT`)."""
    return f"""<!DOCTYPE html>
<html lang="en"><head><meta charset="utf-8"><title>Strict</title></head>
<body>
<p><a href="{berth}/shop/thames-sightseeing" data-berth-product="thames-sightseeing">Book now</a></p>
<p><a data-berth-product="" data-berth-language="de">Alle Touren</a></p>
<script src="{berth}/shop/widget/v1.js" async></script>
</body></html>
"""


def strict(berth: str) -> str:
    """The policy docs/widget.md asks such a site for: Berth's origin in script-src and frame-src."""
    return f"default-src 'none'; script-src {berth}; frame-src {berth}; style-src 'self'"


def framing_page(berth: str) -> str:
    """A page that frames the shop itself, without the widget, and keeps every message it hears."""
    return f"""<!DOCTYPE html>
<html lang="en"><head><meta charset="utf-8"><title>Framed</title></head>
<body>
<iframe id="shop" src="{berth}/shop/thames-sightseeing" style="width: 600px; height: 400px"></iframe>
<script>
  window.heard = [];
  window.addEventListener("message", (event) => window.heard.push([event.origin, event.data]));
</script>
</body></html>
"""


class Site:
    """A plain web server on a loopback port, serving `pages` by path, at `host` (another
    name of the loopback address is another site)."""

    def __init__(self, port: int, host: str) -> None:
        self.origin = f"http://{host}:{port}"
        self.pages: dict[str, str] = {}
        self.policies: dict[str, str] = {}  # a page's Content-Security-Policy
        pages, policies = self.pages, self.policies

        class Handler(BaseHTTPRequestHandler):
            def do_GET(self) -> None:
                body = pages.get(self.path)
                self.send_response(200 if body is not None else 404)
                self.send_header("Content-Type", "text/html; charset=utf-8")
                if self.path in policies:
                    self.send_header("Content-Security-Policy", policies[self.path])
                self.end_headers()
                self.wfile.write((body or "not found").encode())

            def log_message(self, format: str, *args: object) -> None:
                pass

        self.server = ThreadingHTTPServer(("127.0.0.1", port), Handler)

    def url(self, path: str) -> str:
        return self.origin + path


@contextmanager
def site(host: str = "127.0.0.1") -> Iterator[Site]:
    with reserved_port() as port:
        served = Site(port, host)
        thread = threading.Thread(target=served.server.serve_forever, daemon=True)
        thread.start()
        try:
            yield served
        finally:
            served.server.shutdown()
            served.server.server_close()
            thread.join(10)


@pytest.fixture(scope="module")
def supplier() -> Iterator[Site]:
    """The supplier's website, which BERTH_SHOP_ORIGINS lists."""
    with site() as served:
        yield served


@pytest.fixture(scope="module")
def stranger() -> Iterator[Site]:
    """Another website, which it does not."""
    with site() as served:
        yield served


@pytest.fixture(scope="module")
def neighbour() -> Iterator[Site]:
    """A website it lists on another site than Berth's (`localhost`, Berth being `127.0.0.1`):
    Berth's cookies are third-party cookies there."""
    with site("localhost") as served:
        yield served


@pytest.fixture(scope="module")
def berth(
    tmp_path_factory: pytest.TempPathFactory,
    localstripe: FakeStripe,
    supplier: Site,
    stranger: Site,
    neighbour: Site,
) -> Iterator[str]:
    folder = tmp_path_factory.mktemp("widget")
    database = f"sqlite+aiosqlite:///{folder / 'berth.db'}"
    with berth_serve(
        database,
        "--demo",
        log=folder / "berth.log",
        BERTH_SHOP_ORIGINS=f"{supplier.origin} {neighbour.origin}",
        **localstripe.environment(),
    ) as base:
        localstripe.send_webhooks_to(base)
        for served in (supplier, stranger, neighbour):
            served.pages["/"] = supplier_page(base)
            served.pages["/framed"] = framing_page(base)
            served.pages["/strict"] = strict_page(base)
            served.policies["/strict"] = strict(base)
        yield base


@pytest.fixture(scope="module")
def browser() -> Iterator[Browser]:
    with sync_playwright() as playwright:
        launched = playwright.chromium.launch(executable_path=str(CHROMIUM), args=CHROMIUM_ARGS)
        yield launched
        launched.close()


@contextmanager
def tab(browser: Browser, **options: object) -> Iterator[tuple[Page, list[str]]]:
    """A fresh browser tab (no cookies), and the script errors and refusals its console shows
    (not files that did not load: the demo's pictures are on the Internet, which tests do not
    reach)."""
    context = browser.new_context(**options)  # type: ignore[arg-type]
    context.set_default_timeout(15_000)
    page = context.new_page()
    console: list[str] = []

    def on_console(message: ConsoleMessage) -> None:
        if message.type == "error" and not message.text.startswith("Failed to load resource"):
            console.append(message.text)

    page.on("console", on_console)
    try:
        yield page, console
    finally:
        context.close()


def overlay(page: Page) -> Locator:
    return page.locator(OVERLAY).get_by_role("dialog")


def shop(page: Page) -> FrameLocator:
    return page.frame_locator(f"{OVERLAY} iframe")


def frame_height(page: Page) -> float:
    height: float = page.locator(f"{OVERLAY} iframe").evaluate(
        "frame => frame.getBoundingClientRect().height"
    )
    return height


def wait_for_height(page: Page, fitted: bool = False) -> float:
    """Wait until the page in the overlay has said how tall it is (`fitted`: and the frame is as
    tall, which it is when that fits on the screen); that height, which is the page's."""
    inner = f"{OVERLAY} iframe"
    page.frame_locator(inner).locator("main").wait_for()
    handle = page.wait_for_function(
        """([host, fitted]) => {
            const frame = document.querySelector(host).shadowRoot.querySelector("iframe");
            const asked = parseFloat(frame.style.getPropertyValue("--berth-height"));
            const fits = Math.abs(frame.getBoundingClientRect().height - asked) < 1;
            return asked > 0 && (fits || !fitted) && asked;
        }""",
        arg=[OVERLAY, fitted],
    )
    asked: float = handle.json_value()
    content: float = (
        page.frame_locator(inner)
        .locator("html")
        .evaluate("root => Math.ceil(root.getBoundingClientRect().height)")
    )
    assert asked == content
    return asked


def accessible(page: Page) -> None:
    """No axe violation on the supplier's page with the overlay open (its dialog, close button
    and frame; the shop's pages themselves are checked by tests/test_shop_browser.py)."""
    results = AXE.run(page)
    assert results.violations_count == 0, results.generate_report()


def pay_with_card(frame: FrameLocator, number: str) -> None:
    """The guest's card typed into the card element (localstripe's stand-in of Stripe's)."""
    frame.locator("#card input[placeholder=number]").fill(number)
    frame.locator("#card input[placeholder=exp_month]").fill("12")
    frame.locator("#card input[placeholder=exp_year]").fill("34")
    frame.locator("#card input[placeholder=cvc]").fill("123")
    frame.locator("#pay-button").click()


def test_the_button_opens_the_shop_in_an_overlay_where_a_booking_is_paid(
    browser: Browser, berth: str, supplier: Site
) -> None:
    with tab(browser, viewport={"width": 1280, "height": 1800}) as (page, console):
        page.goto(supplier.url("/"))
        book = page.get_by_role("link", name="Book now")
        expect(book).to_have_attribute("aria-haspopup", "dialog")
        book.click()
        expect(overlay(page)).to_be_visible()
        assert page.evaluate("document.documentElement.style.overflow") == "hidden"  # no scroll behind
        frame = shop(page)
        expect(frame.get_by_role("heading", name="Thames Sightseeing Cruise")).to_be_visible()
        expect(frame.locator("header.top")).to_have_count(0)  # the embedded page: no header of its own
        accessible(page)
        product_height = wait_for_height(page, fitted=True)

        frame.locator(".calendar td.open a").first.click()
        expect(frame.get_by_role("heading", name="Choose a time")).to_be_visible()
        day_height = wait_for_height(page, fitted=True)
        assert day_height != product_height  # the overlay follows the page in it

        frame.locator("a.departure").first.click()
        frame.get_by_role("button", name="Hold these places").click()
        frame.get_by_label("First name").fill("Ada")
        frame.get_by_label("Last name").fill("Lovelace")
        frame.get_by_label("Email address").fill("ada@example.com")
        frame.locator("input[name=terms]").check()
        frame.get_by_role("button", name="Continue to payment").click()
        pay_with_card(frame, VISA)
        expect(frame.get_by_role("heading", name="Booking confirmed")).to_be_visible()
        wait_for_height(page, fitted=True)
        reference = frame.locator(".reference strong").inner_text()
        tickets = frame.get_by_role("link", name="Tickets (PDF)")
        expect(tickets).to_have_attribute("target", "_blank")  # a PDF leaves the overlay alone

        found = httpx.get(
            f"{berth}/admin/api/bookings", params={"reference": reference}, headers=ADMIN
        ).json()
        assert [b["status"] for b in found["bookings"]] == ["CONFIRMED"]

        frame.get_by_role("button", name="Close").click()  # the confirmation's own button
        expect(page.locator(OVERLAY)).to_have_count(0)
        expect(book).to_be_focused()
        assert page.evaluate("document.documentElement.style.overflow") == ""
        assert console == []


def test_escape_and_the_close_button_close_it_and_focus_stays_in_it(
    browser: Browser, berth: str, supplier: Site
) -> None:
    with tab(browser, viewport={"width": 1280, "height": 800}) as (page, console):
        page.goto(supplier.url("/"))
        button = page.get_by_role("button", name="Jetzt buchen")
        button.click()
        frame = shop(page)
        expect(frame.get_by_role("heading", name="Datum wählen")).to_be_visible()  # data-berth-language="de"
        close = overlay(page).get_by_role("button", name="Schließen")
        expect(close).to_be_focused()
        for _ in range(40):  # the supplier's page behind is inert: Tab never reaches it
            page.keyboard.press("Tab")
            assert page.evaluate("document.activeElement.matches('[data-berth-overlay], body')")
        frame.get_by_role("link", name="Alle Angebote").focus()
        page.keyboard.press("Escape")  # in the shop's page: it asks the overlay to close
        expect(page.locator(OVERLAY)).to_have_count(0)
        expect(button).to_be_focused()

        button.click()
        expect(overlay(page)).to_be_visible()
        page.keyboard.press("Escape")  # on the overlay's own close button
        expect(page.locator(OVERLAY)).to_have_count(0)

        button.click()
        overlay(page).get_by_role("button", name="Schließen").click()
        expect(page.locator(OVERLAY)).to_have_count(0)

        page.evaluate("""() => {  // a button the site's own scripts add later, with every option
            const later = document.createElement("button");
            later.textContent = "Evening cruise";
            later.dataset.berthProduct = "thames-sightseeing";
            later.dataset.berthOption = "evening";
            later.dataset.berthDate = "2030-06-04";
            document.querySelector("main").append(later);
        }""")
        page.get_by_role("button", name="Evening cruise").click()
        src = page.locator(f"{OVERLAY} iframe").get_attribute("src")
        assert src == f"{berth}/shop/thames-sightseeing/2030-06-04?option=evening"
        assert console == []


def test_a_site_with_a_strict_policy_of_its_own_needs_only_berth_in_script_and_frame_src(
    browser: Browser, berth: str, supplier: Site
) -> None:
    with tab(browser, viewport={"width": 1280, "height": 800}) as (page, console):
        page.goto(supplier.url("/strict"))
        page.get_by_role("link", name="Book now").click()
        expect(shop(page).get_by_role("heading", name="Thames Sightseeing Cruise")).to_be_visible()
        wait_for_height(page)
        box = overlay(page).bounding_box()
        assert box is not None and box["width"] == 42 * 16  # the overlay's own styles apply
        assert page.evaluate("document.documentElement.style.overflow") == "hidden"
        assert console == []  # nothing refused
        overlay(page).get_by_role("button", name="Close").click()
        all_tours = page.get_by_role("link", name="Alle Touren")  # a link without href gets one
        expect(all_tours).to_have_attribute("href", f"{berth}/shop?lang=de")
        all_tours.click()
        expect(shop(page).locator("a[href='/shop/thames-sightseeing']").first).to_be_visible()
        expect(shop(page).locator("html")).to_have_attribute("lang", "de")


def test_messages_from_anything_but_the_shops_frame_are_ignored(
    browser: Browser, berth: str, supplier: Site
) -> None:
    with tab(browser, viewport={"width": 1280, "height": 800}) as (page, _):
        page.goto(supplier.url("/"))
        page.get_by_role("link", name="Book now").click()
        wait_for_height(page)
        before = frame_height(page)
        page.evaluate("""() => {
            window.postMessage({ berth: "height", height: 50 }, "*");
            window.postMessage({ berth: "close" }, "*");
        }""")
        page.evaluate("() => new Promise((done) => setTimeout(done, 0))")  # the messages are handled
        expect(overlay(page)).to_be_visible()
        assert frame_height(page) == before


def test_an_embedded_page_answers_only_the_window_that_frames_it_and_only_after_hello(
    browser: Browser, berth: str, supplier: Site
) -> None:
    with tab(browser) as (page, _):
        page.goto(supplier.url("/framed"))
        framed = next(frame for frame in page.frames if frame.url.startswith(berth))
        framed.wait_for_load_state("load")
        expect(framed.locator("main")).to_be_visible()
        assert page.evaluate("window.heard") == []  # nothing before hello
        page.evaluate(
            f"document.getElementById('shop').contentWindow.postMessage({{berth: 'hello'}}, '{berth}')"
        )
        page.wait_for_function("window.heard.length > 0")
        origin, message = page.evaluate("window.heard[0]")
        assert origin == berth and message["berth"] == "height" and message["height"] > 0


def test_a_site_berth_does_not_list_cannot_frame_the_shop(
    browser: Browser, berth: str, stranger: Site
) -> None:
    with tab(browser) as (page, console):
        page.goto(stranger.url("/"))
        page.get_by_role("link", name="Book now").click()
        expect(overlay(page)).to_be_visible()
        expect(shop(page).locator("main")).to_have_count(0)
        assert any("frame-ancestors" in line for line in console), console
        policy = httpx.get(f"{berth}/shop/thames-sightseeing").headers["content-security-policy"]
        assert stranger.origin not in policy


def test_where_the_browser_keeps_no_cookies_for_the_frame_the_booking_page_opens_in_the_tab(
    browser: Browser, berth: str, neighbour: Site
) -> None:
    with tab(browser) as (page, _):
        page.goto(neighbour.url("/"))
        page.get_by_role("link", name="Book now").click()
        page.wait_for_url(f"{berth}/shop/thames-sightseeing")
        expect(page.locator("header.top")).to_be_visible()
        page.locator(".calendar td.open a").first.click()
        page.locator("a.departure").first.click()
        page.get_by_role("button", name="Hold these places").click()
        expect(page.get_by_role("heading", name="Your details")).to_be_visible()  # its session works


def test_on_a_phone_the_overlay_fills_the_screen(browser: Browser, berth: str, supplier: Site) -> None:
    DOCS_SCREENSHOTS.mkdir(parents=True, exist_ok=True)
    with tab(browser, viewport=PHONE, device_scale_factor=1, is_mobile=True, has_touch=True) as (
        page,
        console,
    ):
        page.goto(supplier.url("/"))
        page.screenshot(path=str(DOCS_SCREENSHOTS / "widget-phone-page.png"))
        page.get_by_role("link", name="Book now").click()
        frame = shop(page)
        expect(frame.get_by_role("heading", name="Thames Sightseeing Cruise")).to_be_visible()
        box = overlay(page).bounding_box()
        assert box == {"x": 0, "y": 0, **PHONE}
        frame.locator(".calendar td.open a").first.click()
        expect(frame.get_by_role("heading", name="Choose a time")).to_be_visible()
        page.screenshot(path=str(DOCS_SCREENSHOTS / "widget-phone.png"))
        assert console == []


def test_the_desktop_screenshot(browser: Browser, berth: str, supplier: Site) -> None:
    DOCS_SCREENSHOTS.mkdir(parents=True, exist_ok=True)
    with tab(browser, viewport={"width": 1280, "height": 800}) as (page, console):
        page.goto(supplier.url("/"))
        page.get_by_role("link", name="Book now").click()
        expect(shop(page).get_by_role("heading", name="Thames Sightseeing Cruise")).to_be_visible()
        wait_for_height(page)
        page.screenshot(path=str(DOCS_SCREENSHOTS / "widget-desktop.png"))
        assert console == []


def test_without_javascript_the_link_goes_to_the_shop(browser: Browser, berth: str, supplier: Site) -> None:
    with tab(browser, java_script_enabled=False) as (page, _):
        page.goto(supplier.url("/"))
        page.get_by_role("link", name="Book now").click()
        page.wait_for_url(f"{berth}/shop/thames-sightseeing")
        expect(page.get_by_role("heading", name="Thames Sightseeing Cruise")).to_be_visible()
        expect(page.locator("header.top")).to_be_visible()  # the shop's own page, not the embedded one
