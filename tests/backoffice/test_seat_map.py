"""The manifest's seat map (octo/resources): each seat with who sits in it, blocked seats,
the resources that do not take seats, and what a booking's own page says."""

from __future__ import annotations

import re

import httpx

from berth.container import Services
from tests.backoffice.helpers import text_of
from tests.backoffice.test_pages import manifest_path
from tests.conftest import ADMIN, auth
from tests.resources_helpers import BOOKED_TEN


async def test_seat_map_shows_who_sits_where(client: httpx.AsyncClient, csrf: str, office: Services) -> None:
    slot = (
        await client.get(f"/admin/api/slots/harbour-cruise/DEFAULT/{BOOKED_TEN}/resources", headers=ADMIN)
    ).json()
    heron = next(r for r in slot["resourceGroups"][0]["resources"] if r["resourceId"] == "heron")
    seat_of = {seat: a["supplierReference"] for a in heron["allocations"] for seat in a["seatIds"]}

    page = await client.get(manifest_path(BOOKED_TEN, "harbour-cruise"))
    assert page.status_code == 200
    html = page.text
    assert html.count('<table class="seat-map"') == 2
    for seat, reference in seat_of.items():
        cell = re.search(rf'<td class="seat seat-taken" title="{seat}: [^"]+"><span class="seat-label">{seat}</span>'
                         rf'<a href="/admin/bookings/[^"]+">([A-Z0-9]+)</a></td>', html)  # fmt: skip
        assert cell is not None and cell.group(1) == reference
    assert '<td class="seat seat-blocked" title="1A: not sold">' in html  # Kingfisher's guide seat
    text = text_of(html)
    assert "Resources and seats" in text and "Boats 12/27 taken · one per party" in text
    assert "MV Heron 12 of 12 12/12 Guide: Tom Reyes" in text
    assert "Coaches from Harbour Station 12/28 taken · a party may be split" in text
    assert "Coach 1 0 of 16 0/16 Driver: Sam Patel · +447700900101 Nobody on it yet." in text
    assert "Grace Hopper · 3 places · seats 1A, 1B, 1C" in text

    # A booking's own page names its resources and seats.
    grace = next(a for a in heron["allocations"] if a["leadName"] == "Grace Hopper")
    booking_page = text_of((await client.get(f"/admin/bookings/{grace['bookingId']}")).text)
    assert "Resources MV Heron seats 1A, 1B, 1C Coach 2" in booking_page


async def test_no_seat_map_without_resources(client: httpx.AsyncClient, csrf: str, office: Services) -> None:
    page = await client.get(manifest_path("2026-06-02T10:00:00+01:00"))
    assert page.status_code == 200 and "Resources and seats" not in page.text


async def test_a_cancelled_party_leaves_its_seats(
    client: httpx.AsyncClient, csrf: str, office: Services
) -> None:
    body = {
        "productId": "river-rib", "optionId": "DEFAULT", "availabilityId": "2026-06-03T11:00:00+01:00",
        "unitItems": [{"unitId": "rider"}] * 4,
    }  # fmt: skip
    held = (await client.post("/octo/bookings", json=body, headers=auth())).json()
    path = manifest_path("2026-06-03T11:00:00+01:00", "river-rib")
    assert "RIB Falcon 4 of 6 4/6" in text_of((await client.get(path)).text)
    await client.post(f"/octo/bookings/{held['uuid']}/cancel", headers=auth())
    text = text_of((await client.get(path)).text)
    assert "RIB Falcon 0 of 6 0/6" in text and "RIBs 0/14 taken · one per party" in text
    booking_page = text_of((await client.get(f"/admin/bookings/{held['id']}")).text)
    assert "Resources RIB Falcon (released)" in booking_page


async def test_the_catalogue_page_lists_resources(
    client: httpx.AsyncClient, csrf: str, office: Services
) -> None:
    text = text_of((await client.get("/admin/catalog/harbour-cruise")).text)
    assert "Start times Places All year Every day 10:00, 13:00, 16:00 From the resources" in text
    assert (
        "Boats boats Required · one per party · counted by pax MV Kingfisher kingfisher 15 seats (1A blocked) "
        "Every departure Guide Ines Okafor MV Heron heron 12 seats at 10:00, 16:00 Guide Tom Reyes"
    ) in text
    assert "Coach 2 coach-2 12 Every departure Driver Ada Nwosu" in text
    assert "Resources" not in text_of((await client.get("/admin/catalog/tower-of-stories")).text)
