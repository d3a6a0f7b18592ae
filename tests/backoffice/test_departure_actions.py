"""A departure's actions on its manifest page (issue 21): close and reopen, a capacity, a note,
cancel it. Closing, a capacity and a cancellation answer a confirmation step first, saying how
many bookings of which resellers it touches; nothing changes until it is confirmed."""

from __future__ import annotations

import httpx

from berth.container import Services
from tests.backoffice.helpers import notice_of, text_of
from tests.backoffice.test_pages import manifest_path
from tests.bookings_helpers import SLOT, confirm, reservation, reserve
from tests.conftest import ADMIN, KEY_B, auth


async def departure(client: httpx.AsyncClient) -> dict[str, object]:
    path = "/admin/api/departures/thames-sightseeing/DEFAULT/" + SLOT.replace("+", "%2B")
    found: dict[str, object] = (await client.get(path, headers=ADMIN)).json()
    return found


async def post(client: httpx.AsyncClient, action: str, **form: str) -> httpx.Response:
    return await client.post(manifest_path(SLOT) + "/" + action, data=form)


async def followed(client: httpx.AsyncClient, response: httpx.Response) -> str:
    """The notice on the manifest an action leads back to."""
    assert response.status_code == 303, response.text
    assert response.headers["location"] == manifest_path(SLOT)
    notice = notice_of((await client.get(response.headers["location"])).text)
    assert notice is not None
    return notice


async def two_resellers(client: httpx.AsyncClient) -> None:
    a = await reserve(client)
    await confirm(client, a["uuid"])
    await reserve(client, reservation(("adult",)))
    b = await reserve(client, reservation(("adult",)), key=KEY_B)
    await confirm(client, b["uuid"], key=KEY_B)


async def test_the_manifest_offers_the_actions(
    client: httpx.AsyncClient, csrf: str, office: Services
) -> None:
    await two_resellers(client)
    page = text_of((await client.get(manifest_path(SLOT))).text)
    assert (
        "Departure Sales open Capacity 20 places (the catalogue's) Live bookings 3 bookings of 2 resellers"
        in page
    )
    for button in ("Close for sale", "Change the capacity", "Save the note", "Cancel the departure"):
        assert button in page


async def test_close_asks_first_then_reopen(client: httpx.AsyncClient, csrf: str, office: Services) -> None:
    await two_resellers(client)
    step = await post(client, "close", csrf_token=csrf)
    assert step.status_code == 200
    text = text_of(step.text)
    assert "Close Thames Sightseeing · Tue 2 Jun 2026 10:00 BST?" in text
    assert "3 bookings of 2 resellers (Reseller A, Reseller B) stay booked" in text, text
    assert (await departure(client))["closed"] is False  # nothing yet
    notice = await followed(client, await post(client, "close", csrf_token=csrf, confirmed="yes"))
    assert notice.endswith("closed: resellers see it CLOSED.")
    assert (await departure(client))["closed"] is True
    seen = await client.post(
        "/octo/availability",
        json={"productId": "thames-sightseeing", "optionId": "DEFAULT", "availabilityIds": [SLOT]},
        headers=auth(),
    )
    assert seen.json()[0]["status"] == "CLOSED"
    page = text_of((await client.get(manifest_path(SLOT))).text)
    assert "CLOSED closed by staff" in page and "Reopen for sale" in page
    notice = await followed(client, await post(client, "reopen", csrf_token=csrf))
    assert notice.endswith("reopened: resellers can book it again.")
    assert (await departure(client))["closed"] is False


async def test_capacity_asks_first_and_refuses_below_the_places_held(
    client: httpx.AsyncClient, csrf: str, office: Services
) -> None:
    await two_resellers(client)  # 4 places held
    step = await post(client, "capacity", csrf_token=csrf, places="6")
    text = text_of(step.text)
    assert "Capacity 20 places → 6 places; 4 places are held." in text, text
    assert "3 bookings of 2 resellers" in text
    assert (await departure(client))["capacityOverride"] is None
    notice = await followed(
        client, await post(client, "capacity", csrf_token=csrf, places="6", confirmed="yes")
    )
    assert notice.endswith("capacity set to 6 places.")
    assert (await departure(client))["vacancies"] == 2
    refused = await followed(client, await post(client, "capacity", csrf_token=csrf, places="3"))
    assert refused.startswith("Capacity not changed: Departure") and "4 place(s) held" in refused
    word = await followed(client, await post(client, "capacity", csrf_token=csrf, places="many"))
    assert word == "Capacity not changed: 'many' is not a number of places."
    back = await followed(client, await post(client, "capacity", csrf_token=csrf, places="", confirmed="yes"))
    assert back.endswith("capacity set to the catalogue's (20 places).")
    assert (await departure(client))["capacityOverride"] is None


async def test_note(client: httpx.AsyncClient, csrf: str, office: Services) -> None:
    notice = await followed(client, await post(client, "note", csrf_token=csrf, text="Skipper: Jo"))
    assert notice.startswith("Note on ") and (await departure(client))["note"] == "Skipper: Jo"
    assert "Note Skipper: Jo" in text_of((await client.get(manifest_path(SLOT))).text)


async def test_cancel_asks_first_with_the_count(
    client: httpx.AsyncClient, csrf: str, office: Services
) -> None:
    await two_resellers(client)
    missing = await followed(client, await post(client, "cancel", csrf_token=csrf, reason=" "))
    assert missing == "Not cancelled: give a reason; resellers pass it on to their guests."
    step = await post(client, "cancel", csrf_token=csrf, reason="Storm")
    text = text_of(step.text)
    assert (
        "This cancels 3 bookings of 2 resellers (Reseller A, Reseller B), with the reason “Storm”." in text
    ), text
    assert (await departure(client))["placesHeld"] == 4
    notice = await followed(
        client, await post(client, "cancel", csrf_token=csrf, reason="Storm", confirmed="yes")
    )
    assert notice.endswith("cancelled: 3 bookings of 2 resellers cancelled; the departure is closed.")
    after = await departure(client)
    assert (after["placesHeld"], after["closed"]) == (0, True)


async def test_cancel_after_boarding_began_offers_the_choice_and_the_manifest_shows_who(
    client: httpx.AsyncClient, csrf: str, office: Services
) -> None:
    """One of a party's two tickets through the gate: the manifest marks it and names the ticket
    not through; the cancellation's step lists the party and asks what becomes of that ticket;
    confirmed without a choice it is refused, changing nothing; with CANCEL the manifest says
    which tickets went."""
    boarding = await reserve(client)
    await confirm(client, boarding["uuid"])
    waiting = await reserve(client, reservation(("adult",)))
    await confirm(client, waiting["uuid"])
    first, second = (u["supplierReference"] for u in boarding["unitItems"])
    scan = {"code": first, "nonce": "0123456789abcdef", "admitAnotherDay": True}
    assert (await client.post("/admin/api/checkin", json=scan, headers=ADMIN)).json()["result"] == "ADMITTED"
    page = (await client.get(manifest_path(SLOT))).text
    assert f'<code class="through" title="Through the gate">{first} ✓</code>' in page
    text = text_of(page)
    assert "Through the gate 1 of 3 tickets" in text
    assert (
        f"Boarding began Ada Lovelace {boarding['supplierReference']} : not through the gate {second}" in text
    )

    step = await post(client, "cancel", csrf_token=csrf, reason="Storm")
    text = text_of(step.text)
    assert (
        f"Ada Lovelace ({boarding['supplierReference']}): 1 of 2 through the gate; not through: Adult · {second}"
        in text
    ), text
    assert 'name="not_through" value="CANCEL"' in step.text and 'name="not_through" value="KEEP"' in step.text
    unsaid = await followed(
        client, await post(client, "cancel", csrf_token=csrf, reason="Storm", confirmed="yes")
    )
    assert unsaid.startswith("Not cancelled: Boarding began: 1 booking(s)")
    assert (await departure(client))["closed"] is False

    notice = await followed(
        client,
        await post(client, "cancel", csrf_token=csrf, reason="Storm", confirmed="yes", not_through="CANCEL"),
    )
    assert notice.endswith(
        "cancelled: 1 booking of 1 reseller cancelled; the departure is closed. "
        "1 ticket not through the gate (1 booking): cancelled."
    ), notice
    text = text_of((await client.get(manifest_path(SLOT))).text)
    assert "Cancelled 1 Jun 2026 09:00 BST by admin token: “Storm”" in text
    assert f"Tickets not through the gate cancelled: {boarding['supplierReference']} ( {second} )" in text
    assert "Boarding began" not in text


async def test_actions_need_the_csrf_token(client: httpx.AsyncClient, csrf: str, office: Services) -> None:
    for action, form in (
        ("close", {"confirmed": "yes"}),
        ("cancel", {"reason": "x", "confirmed": "yes"}),
        ("reopen", {}),
    ):
        refused = await post(client, action, csrf_token="forged", **form)
        assert refused.status_code == 403
    assert (await departure(client))["closed"] is False
    unknown = await client.post(
        manifest_path("2026-06-02T11:00:00+01:00") + "/close", data={"csrf_token": csrf}
    )
    assert unknown.status_code in (400, 404)


async def test_csv_downloads_for_a_signed_in_member_of_staff(
    client: httpx.AsyncClient, csrf: str, office: Services
) -> None:
    await two_resellers(client)
    manifest = await client.get(manifest_path(SLOT) + "/manifest.csv")
    assert manifest.status_code == 200 and manifest.headers["content-type"] == "text/csv; charset=utf-8"
    lines = manifest.text.splitlines()
    assert lines[0].startswith("\ufeffSupplier reference,") and len(lines) == 4
    assert 'href="' + manifest_path(SLOT) + '/manifest.csv"' in (await client.get(manifest_path(SLOT))).text
    search = await client.get("/admin/bookings", params={"product": "thames-sightseeing"})
    assert 'href="/admin/bookings.csv?product=thames-sightseeing"' in search.text
    found = await client.get(
        "/admin/bookings.csv", params={"product": "thames-sightseeing", "status": "CONFIRMED"}
    )
    assert len(found.text.splitlines()) == 3 and "Reseller B" in found.text
    bad = await client.get("/admin/bookings.csv", params={"date": "soon"})
    assert bad.status_code == 303
    assert notice_of((await client.get(bad.headers["location"])).text) == (
        "Nothing exported: The date 'soon' is not a date like 2026-06-02."
    )
    client.cookies.clear()
    stranger = await client.get(manifest_path(SLOT) + "/manifest.csv")
    assert stranger.status_code == 303 and stranger.headers["location"].startswith("/admin/sign-in")
