"""What the shop's catalogue pages read, on both databases: a page read again while nothing was
committed reads nothing from the database but the change mark (the catalogue and the places it
showed are kept, `berth.services.answers`), and whatever another process commits (a booking, a
catalogue) shows on the very next page."""

from __future__ import annotations

import re
from collections.abc import AsyncIterator

import httpx
import pytest

from berth.app import create_app
from berth.container import Services, build_services
from berth.domain.catalog import Catalog
from berth.settings import Settings
from tests.conftest import Clock, auth
from tests.shop_fixtures import app, shop
from tests.shop_helpers import DAY, SLOT, shop_catalog
from tests.statement_counts import counting

PAGES = (
    "/shop/thames-sightseeing",
    "/shop/thames-sightseeing?option=DEFAULT&month=2026-07",
    f"/shop/thames-sightseeing/{DAY}?option=DEFAULT&unit-adult=2",
)

DAY_PAGE = PAGES[2]

__all__ = ["app", "shop"]


@pytest.fixture
async def elsewhere(settings: Settings, clock: Clock, shop: Services) -> AsyncIterator[httpx.AsyncClient]:
    """Another Berth process on the same database (its own services and connections)."""
    other = build_services(settings, clock)
    transport = httpx.ASGITransport(app=create_app(services=other))
    try:
        async with httpx.AsyncClient(transport=transport, base_url="http://other.test") as client:
            yield client
    finally:
        await other.close()


async def test_a_page_read_again_with_nothing_committed_reads_nothing_from_the_database(
    client: httpx.AsyncClient, shop: Services
) -> None:
    for path in PAGES:
        first = await client.get(path)
        assert first.status_code == 200, first.text
        with counting(shop.database) as sent:
            again = await client.get(path)
        assert again.status_code == 200 and again.text == first.text
        assert sent.kinds() == [], path


def _first_departure(html: str) -> str:
    found = re.search(r'<li>\s*<(?:a|span) class="departure(.*?)</li>', html, re.S)
    assert found is not None, html
    return found.group(1)


async def _book(client: httpx.AsyncClient, adults: int) -> None:
    body = {
        "productId": "thames-sightseeing",
        "optionId": "DEFAULT",
        "availabilityId": SLOT,
        "unitItems": [{"unitId": "adult"}] * adults,
    }
    answer = await client.post("/octo/bookings", headers=auth(), json=body)
    assert answer.status_code == 200, answer.text


async def test_a_booking_made_through_another_process_shows_on_the_next_page(
    client: httpx.AsyncClient, elsewhere: httpx.AsyncClient
) -> None:
    for _ in range(2):  # the second read is the kept one
        assert "left" not in _first_departure((await client.get(DAY_PAGE)).text)
    await _book(elsewhere, 12)
    await _book(elsewhere, 4)
    assert "4 left" in _first_departure((await client.get(DAY_PAGE)).text)
    await _book(elsewhere, 4)
    assert "Sold out" in _first_departure((await client.get(DAY_PAGE)).text)


def _renamed(catalog: Catalog, product_id: str, title: str) -> Catalog:
    products = []
    for product in catalog.products:
        if product.id == product_id:
            content = {k: c.model_copy(update={"title": title}) for k, c in product.content.items()}
            product = product.model_copy(update={"content": content})
        products.append(product)
    return catalog.model_copy(update={"products": tuple(products)})


async def test_a_catalogue_saved_by_another_process_shows_on_the_next_page(
    client: httpx.AsyncClient, settings: Settings, clock: Clock
) -> None:
    for path in PAGES:
        assert "Thames Sightseeing Cruise" in (await client.get(path)).text
    other = build_services(settings, clock)
    try:
        await other.catalog.replace(_renamed(shop_catalog(), "thames-sightseeing", "Thames by Night"))
    finally:
        await other.close()
    for path in PAGES:
        page = (await client.get(path)).text
        assert "Thames by Night" in page and "Thames Sightseeing Cruise" not in page, path
