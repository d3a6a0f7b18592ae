"""The dashboard's charts from the database: bookings confirmed per day by reseller (counted on
the supplier's day, test bookings and unconfirmed holds left out), and the next 14 days'
occupancy by product, embedded as SVG with their titles."""

from __future__ import annotations

import html
import re

import httpx

from berth.container import Services
from tests.backoffice.helpers import sign_in
from tests.bookings_helpers import confirm, reservation, reserve
from tests.conftest import KEY_A, KEY_B, Clock

_BAR_TITLES = re.compile(r"<rect [^>]*><title>([^<]*)</title></rect>")


def chart_of(page: str, chart_id: str) -> str:
    found = re.search(rf'<figure class="chart" id="{chart_id}">(.*?)</figure>', page, re.S)
    assert found is not None, f"no {chart_id} on the page"
    return found.group(1)


def bar_titles(chart: str) -> list[str]:
    return [html.unescape(title) for title in _BAR_TITLES.findall(chart)]


async def booked(client: httpx.AsyncClient, slot: str, key: str = KEY_A) -> None:
    booking = await reserve(client, reservation(availability_id=slot), key=key)
    assert (await confirm(client, booking["uuid"], key=key)).status_code == 200


async def test_bookings_per_day_by_reseller(
    client: httpx.AsyncClient, csrf: str, office: Services, clock: Clock
) -> None:
    clock.advance(hours=-24)  # 31 May 09:00 BST
    await booked(client, "2026-06-04T10:00:00+01:00")
    clock.advance(hours=24 + 15)  # 2 Jun 00:00 BST (still 1 Jun in UTC): counted on 2 Jun
    await booked(client, "2026-06-04T10:00:00+01:00", key=KEY_B)
    await booked(client, "2026-06-04T10:00:00+01:00", key=KEY_B)
    await reserve(
        client, reservation(availability_id="2026-06-04T10:00:00+01:00")
    )  # a hold: not a booking yet
    await sign_in(client)
    page = (await client.get("/admin")).text
    chart = chart_of(page, "bookings-chart")
    assert 'role="img"' in chart and 'aria-labelledby="bookings-chart-title bookings-chart-desc"' in chart
    assert (
        '<title id="bookings-chart-title">Bookings confirmed per day, last 30 days, by reseller</title>'
        in chart
    )
    titles = bar_titles(chart)
    # The box office's seated parties were confirmed on 1 Jun (tests.resources_helpers).
    assert [t for t in titles if not t.startswith("1 Jun")] == [
        "31 May: Reseller A, 1 booking",
        "2 Jun: Reseller B, 2 bookings",
    ]
    assert [t for t in titles if t.startswith("1 Jun")] == ["1 Jun: Harbourside box office, 3 bookings"]
    assert (
        html.unescape(chart).count(
            "6 bookings over 30 days: Harbourside box office 3, Reseller B 2, Reseller A 1."
        )
        == 2
    )
    assert "Busiest day: 1 Jun with 3." in html.unescape(chart)
    legend = re.findall(r'class="chart-text">([^<]*\(\d+\))</text>', chart)
    assert legend == ["Harbourside box office (3)", "Reseller B (2)", "Reseller A (1)"]


async def test_occupancy_of_the_next_14_days(client: httpx.AsyncClient, csrf: str, office: Services) -> None:
    await booked(client, "2026-06-02T10:00:00+01:00")
    product = (await office.catalog.snapshot()).catalog.product("thames-sightseeing")
    assert product is not None
    page = (await client.get("/admin")).text
    chart = chart_of(page, "occupancy-chart")
    assert "Places sold, next 14 days, by product" in chart
    titles = bar_titles(chart)
    row = [t for t in titles if t.startswith(product.internal_name + ",")]
    assert len(row) == 14
    second = next(t for t in row if ", 2 Jun: " in t)
    assert second.endswith("% sold") and not second.endswith(" 0% sold")
    catalog = (await office.catalog.snapshot()).catalog
    assert {t.split(",")[0] for t in titles} == {p.internal_name for p in catalog.products}
    assert "<script" not in chart
