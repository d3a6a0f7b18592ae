"""What the back office says to staff (issue 32): one booking is one booking ("1 booking of 1
reseller stays booked"), a departure is named as staff know it and never by its availability id,
a departure seated by resources has the resources' capacity (not "no limit"), dates are typed
and shown in the supplier's style rather than the browser's, and the manifest lists who is
booked before its forms."""

from __future__ import annotations

import httpx

from berth.container import Services
from tests.backoffice.helpers import notice_of, text_of
from tests.backoffice.test_pages import manifest_path
from tests.bookings_helpers import SLOT, confirm, reservation, reserve
from tests.resources_helpers import BOOKED_TEN, CRUISE


async def test_one_booking_is_spoken_of_in_the_singular(
    client: httpx.AsyncClient, csrf: str, office: Services
) -> None:
    one = await reserve(client, reservation(("adult",)))
    await confirm(client, one["uuid"])
    close = text_of((await client.post(manifest_path(SLOT) + "/close", data={"csrf_token": csrf})).text)
    assert (
        "1 booking of 1 reseller (Reseller A) stays booked and keeps its places: cancel the departure to cancel it."
        in close
    ), close
    capacity = await client.post(manifest_path(SLOT) + "/capacity", data={"csrf_token": csrf, "places": "5"})
    text = text_of(capacity.text)
    assert "Capacity 20 places → 5 places; 1 place is held." in text, text
    assert "1 booking of 1 reseller (Reseller A) keeps its places;" in text, text


async def test_a_refused_capacity_names_the_departure_not_its_id(
    client: httpx.AsyncClient, csrf: str, office: Services
) -> None:
    booked = await reserve(client, reservation(("adult", "adult")))
    await confirm(client, booked["uuid"])
    refused = await client.post(manifest_path(SLOT) + "/capacity", data={"csrf_token": csrf, "places": "1"})
    notice = notice_of((await client.get(refused.headers["location"])).text)
    assert notice is not None
    assert SLOT not in notice and "2026-06-02T10" not in notice, notice
    assert "Tue 2 Jun 2026 10:00 BST already has 2 place(s) held" in notice, notice


async def test_a_departure_seated_by_resources_has_their_capacity(
    client: httpx.AsyncClient, csrf: str, office: Services
) -> None:
    page = text_of((await client.get(manifest_path(BOOKED_TEN, CRUISE["productId"]))).text)
    assert "no limit" not in page, page
    assert "places, from the resources (the catalogue's)" in page, page
    step = await client.post(
        manifest_path(BOOKED_TEN, CRUISE["productId"]) + "/capacity",
        data={"csrf_token": csrf, "places": "20"},
    )
    text = text_of(step.text)
    assert "no limit" not in text and "places, from the resources → 20 places" in text, text


async def test_date_fields_follow_the_supplier_not_the_browser(
    client: httpx.AsyncClient, csrf: str, office: Services
) -> None:
    for path, value in (
        ("/admin/bookings?date=2026-06-02", "Tue 2 Jun 2026"),
        ("/admin/audit?from=2026-06-02", "Tue 2 Jun 2026"),
    ):
        page = (await client.get(path)).text
        assert 'type="date"' not in page and 'type="datetime-local"' not in page, path
        assert value in text_of(page), path
    hooks = (await client.get("/admin/webhooks")).text
    assert 'type="datetime-local"' not in hooks


async def test_the_manifest_lists_who_is_booked_before_its_forms(
    client: httpx.AsyncClient, csrf: str, office: Services
) -> None:
    booked = await reserve(client)
    await confirm(client, booked["uuid"])
    page = (await client.get(manifest_path(SLOT))).text
    assert page.index("<h2>Booked</h2>") < page.index('class="card actions departure-actions"')
