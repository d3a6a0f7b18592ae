"""The API documentation (/docs: Swagger UI, /redoc: ReDoc) works with no internet: its scripts
and styles come from a package installed with Berth and the pages load nothing from elsewhere."""

from __future__ import annotations

import re
from collections.abc import Iterator

import httpx
import pytest
from playwright.sync_api import Browser, ConsoleMessage, Page, Route, expect, sync_playwright

from tests.backoffice.server import berth_serve
from tests.backoffice.test_browser import SCREENSHOTS
from tests.chromium import CHROMIUM, CHROMIUM_ARGS

_REFERENCES = re.compile(r'(?:src|href|spec-url)="([^"]*)"')


@pytest.mark.parametrize("path", ["/docs", "/redoc"])
async def test_the_docs_pages_refer_only_to_berth(client: httpx.AsyncClient, path: str) -> None:
    response = await client.get(path)
    assert response.status_code == 200
    assert response.headers["content-type"].startswith("text/html")
    references = _REFERENCES.findall(response.text)
    assert references, "the page loads no script at all"
    for reference in references:
        assert reference.startswith("/"), f"{path} refers to {reference}"
        asset = await client.get(reference)
        assert asset.status_code == 200, f"{reference} answers {asset.status_code}"
    policy = response.headers["content-security-policy"]
    assert "default-src 'self'" in policy and "http" not in policy
    assert response.headers["cache-control"] == "no-store"


# --- in a real browser, against a real `berth serve` -------------------------------------------


@pytest.fixture(scope="module")
def server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    with berth_serve(tmp_path_factory.mktemp("docs") / "berth.db", demo=True) as base:
        yield base


@pytest.fixture(scope="module")
def browser() -> Iterator[Browser]:
    SCREENSHOTS.mkdir(parents=True, exist_ok=True)
    with sync_playwright() as playwright:
        launched = playwright.chromium.launch(executable_path=str(CHROMIUM), args=CHROMIUM_ARGS)
        yield launched
        launched.close()


class Recorded:
    """Every request a tab makes (those to anywhere but Berth are recorded, then stopped, so
    nothing leaves the machine) and every script error."""

    def __init__(self, browser: Browser, base: str) -> None:
        self.base = base
        self.requests: list[str] = []
        self.errors: list[str] = []
        context = browser.new_context(base_url=base, viewport={"width": 1280, "height": 900})
        context.set_default_timeout(15_000)
        context.route("**/*", self._route)
        self.page: Page = context.new_page()
        self.page.on("console", self._console)
        self.page.on("pageerror", lambda error: self.errors.append(f"page error: {error}"))

    def _route(self, route: Route) -> None:
        self.requests.append(route.request.url)
        if route.request.url.startswith(self.base + "/"):
            route.continue_()
        else:
            route.abort()

    def _console(self, message: ConsoleMessage) -> None:
        if message.type == "error":
            self.errors.append(message.text)

    def outside(self) -> list[str]:
        return [url for url in self.requests if not url.startswith(self.base + "/")]

    def close(self) -> None:
        self.page.context.close()


def operations(base: str) -> set[tuple[str, str]]:
    document = httpx.get(base + "/openapi.json").json()
    return {(method.upper(), path) for path, methods in document["paths"].items() for method in methods}


@pytest.mark.browser
def test_swagger_ui_renders_every_operation_with_nothing_from_outside(browser: Browser, server: str) -> None:
    tab = Recorded(browser, server)
    tab.page.goto("/docs")
    # Generous, as ReDoc's below: the page renders every operation before it shows one.
    expect(tab.page.locator(".opblock-summary-path", has_text="/octo/supplier").first).to_be_visible(
        timeout=90_000
    )
    expected = operations(server)
    expect(tab.page.locator(".opblock")).to_have_count(len(expected))
    shown = tab.page.locator(".opblock").evaluate_all(
        "blocks => blocks.map(b => [b.querySelector('.opblock-summary-method').textContent,"
        " b.querySelector('.opblock-summary-path').dataset.path])"
    )
    assert {(method, path) for method, path in shown} == expected
    tab.page.screenshot(path=str(SCREENSHOTS / "api-docs-swagger.png"))

    # "Try it out" reaches Berth from under the page's policy, with a reseller's API key.
    tab.page.get_by_role("button", name="Authorize").first.click()
    tab.page.fill("#auth-bearer-value", "demo-reseller-a")
    tab.page.get_by_role("button", name="Apply credentials").click()
    tab.page.locator(".modal-ux button.btn-done").click()
    supplier = tab.page.locator(".opblock", has=tab.page.locator('[data-path="/octo/supplier"]'))
    supplier.locator(".opblock-summary").click()
    supplier.get_by_role("button", name="Try it out").click()
    supplier.get_by_role("button", name="Execute").click()
    expect(supplier.locator(".live-responses-table tbody .response-col_status")).to_have_text("200")
    expect(supplier.locator(".live-responses-table")).to_contain_text(f'"endpoint": "{server}/octo"')
    tab.close()
    assert tab.outside() == []
    assert tab.errors == []
    assert any(url.endswith("/openapi.json") for url in tab.requests)


@pytest.mark.browser
def test_redoc_renders_the_operations_with_nothing_from_outside(browser: Browser, server: str) -> None:
    tab = Recorded(browser, server)
    tab.page.goto("/redoc")
    supplier = tab.page.get_by_role("heading", name="The supplier behind this endpoint")
    # ReDoc lays out the whole API before it shows anything: 13 s on an idle machine here, more
    # when the suite's other workers share the cores (15 s was not enough in a fresh-clone run).
    expect(supplier).to_be_visible(timeout=90_000)
    expect(tab.page.get_by_role("heading", name=re.compile("^Berth"))).to_be_visible()
    tab.page.screenshot(path=str(SCREENSHOTS / "api-docs-redoc.png"))
    tab.close()
    assert tab.outside() == []
    # ReDoc's script shows Redocly's logo from Redocly's site in its "API docs by Redocly" link:
    # the page's Content-Security-Policy stops it before any request, and ReDoc hides the image.
    stopped = [error for error in tab.errors if "violates the following Content Security Policy" in error]
    assert [error for error in tab.errors if error not in stopped] == []
    assert all("'https://cdn.redoc.ly/redoc/logo-mini.svg'" in error for error in stopped)
