"""The widget's script as Berth serves it (its address, caching and headers), the shop's pages
as the widget's frame gets them (the embedded version, the origins they answer, the CSP that
says who may frame them), and BERTH_SHOP_ORIGINS read as a browser writes origins. Its
behaviour in a browser: tests/test_widget_browser.py."""

from __future__ import annotations

import re

import httpx
import pytest
from fastapi import FastAPI

from berth.app import create_app
from berth.container import Services
from berth.domain.shop_access import embedding_origins, frame_ancestors
from berth.http.shop.widget import CACHE
from berth.settings import Settings
from tests.shop_helpers import open_shop

IN_A_FRAME = {"Sec-Fetch-Dest": "iframe"}
SITES = "https://www.harbourside.example, HTTPS://Harbourside.example:443/ http://127.0.0.1:8080"


@pytest.fixture
async def shop(services: Services) -> Services:
    services.settings.shop_origins = SITES
    return await open_shop(services)


@pytest.fixture
def app(shop: Services) -> FastAPI:
    return create_app(services=shop)


async def test_the_script_is_kept_a_day_then_revalidated_by_its_etag(client: httpx.AsyncClient) -> None:
    script = await client.get("/shop/widget/v1.js")
    assert script.status_code == 200
    assert script.headers["content-type"] == "text/javascript; charset=utf-8"
    assert script.headers["cache-control"] == CACHE == "public, max-age=86400, stale-while-revalidate=604800"
    assert script.headers["x-content-type-options"] == "nosniff"
    assert script.headers["cross-origin-resource-policy"] == "cross-origin"
    assert "data-berth-product" in script.text and "postMessage" in script.text
    etag = script.headers["etag"]
    again = await client.get("/shop/widget/v1.js", headers={"If-None-Match": etag})
    assert again.status_code == 304 and again.content == b"" and again.headers["etag"] == etag
    changed = await client.get("/shop/widget/v1.js", headers={"If-None-Match": '"another"'})
    assert changed.status_code == 200 and changed.content == script.content


async def test_no_other_version_of_the_script_exists(client: httpx.AsyncClient) -> None:
    answer = await client.get("/shop/widget/v2.js")
    assert answer.status_code == 404
    assert answer.headers["content-type"].startswith("text/html") and "Page not found" in answer.text


async def test_a_page_in_a_frame_has_no_header_and_names_the_origins_it_answers(
    client: httpx.AsyncClient,
) -> None:
    for path in ("/shop", "/shop/thames-sightseeing", "/shop/nope"):
        framed = await client.get(path, headers=IN_A_FRAME)
        origins = re.search(r'<html lang="en" class="embedded" data-parent-origins="([^"]*)">', framed.text)
        assert origins is not None, framed.text
        assert origins.group(1).split() == [
            "http://berth.test",
            "https://www.harbourside.example",
            "https://harbourside.example",
            "http://127.0.0.1:8080",
        ]
        assert '<header class="top">' not in framed.text and '<footer class="bottom">' not in framed.text
        assert framed.headers["vary"] == "Sec-Fetch-Dest"

        whole = await client.get(path, headers={"Sec-Fetch-Dest": "document"})
        assert '<header class="top">' in whole.text and "data-parent-origins" not in whole.text
        assert whole.headers["vary"] == "Sec-Fetch-Dest"


async def test_only_berth_and_the_listed_sites_may_frame_the_shop(client: httpx.AsyncClient) -> None:
    for headers in (IN_A_FRAME, {}):
        policy = (await client.get("/shop/thames-sightseeing", headers=headers)).headers[
            "content-security-policy"
        ]
        assert policy.endswith(
            "frame-ancestors 'self' https://www.harbourside.example https://harbourside.example http://127.0.0.1:8080"
        )


def test_origins_are_read_as_a_browser_writes_them() -> None:
    assert embedding_origins("") == []
    assert embedding_origins(
        " HTTPS://Shop.Example:443/ ,http://shop.example:80 http://shop.example:8080"
    ) == [
        "https://shop.example",
        "http://shop.example",
        "http://shop.example:8080",
    ]
    assert embedding_origins("https://[::1]:8443 https://shop.example https://shop.example/") == [
        "https://[::1]:8443",
        "https://shop.example",
    ]
    assert frame_ancestors("https://shop.example") == "'self' https://shop.example"
    assert frame_ancestors("") == "'self'"


@pytest.mark.parametrize(
    "origins",
    ["https://shop.example/book", "https://*.shop.example", "shop.example", "ftp://shop.example", "'none'"],
)
def test_anything_but_an_origin_is_refused_by_name(origins: str) -> None:
    with pytest.raises(ValueError, match=re.escape(repr(origins))):
        embedding_origins(f"https://fine.example {origins}")
    with pytest.raises(ValueError, match="BERTH_SHOP_ORIGINS"):
        Settings(database_url="sqlite+aiosqlite:///unused.db", shop_origins=origins)


async def test_a_shop_without_a_test_stripe_says_nothing_of_test_mode(client: httpx.AsyncClient) -> None:
    """Only a shop on Stripe's test keys or the fake Stripe says no card is charged (these
    tests' settings have no Stripe at all)."""
    page = await client.get("/shop/thames-sightseeing")
    assert page.status_code == 200 and "Test mode" not in page.text
