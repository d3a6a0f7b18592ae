"""The back office's actions: on bookings (redeem, accept, reject, cancel) and connections
(create, revoke). Each says what changed, and none runs without its form's CSRF token."""

from __future__ import annotations

import re
from typing import Any

import httpx

from berth.container import Services
from tests.backoffice.helpers import notice_of, text_of
from tests.backoffice.test_pages import KAYAK_SLOT, pending_kayak
from tests.bookings_helpers import confirm, reserve, vacancies
from tests.conftest import ADMIN, Clock, auth

KAYAK = {"productId": "sunset-kayak", "optionId": "DEFAULT"}


async def status_of(client: httpx.AsyncClient, booking_id: str) -> str:
    response = await client.get(f"/admin/api/bookings/{booking_id}", headers=ADMIN)
    value: str = response.json()["booking"]["status"]
    return value


async def act(client: httpx.AsyncClient, booking: dict[str, Any], action: str, **form: str) -> str:
    """POST a booking action's form; returns the notice on the page it leads back to."""
    response = await client.post(f"/admin/bookings/{booking['id']}/{action}", data=form)
    assert response.status_code == 303, response.text
    assert response.headers["location"] == f"/admin/bookings/{booking['id']}"
    page = await client.get(response.headers["location"])
    notice = notice_of(page.text)
    assert notice is not None
    assert notice_of((await client.get(response.headers["location"])).text) is None  # shown once
    return notice


async def confirmed(client: httpx.AsyncClient) -> dict[str, Any]:
    booking = await reserve(client)
    await confirm(client, booking["uuid"])
    return booking


async def test_redeem(client: httpx.AsyncClient, csrf: str, office: Services) -> None:
    booking = await confirmed(client)
    notice = await act(client, booking, "redeem", csrf_token=csrf)
    assert notice == (
        f"Booking {booking['supplierReference']} redeemed: CONFIRMED → REDEEMED. Its guests are checked in."
    )
    assert await status_of(client, booking["id"]) == "REDEEMED"
    page = text_of((await client.get(f"/admin/bookings/{booking['id']}")).text)
    assert "No action: the booking is redeemed." in page and "Redeemed supplier REDEEMED" in page
    again = await act(client, booking, "redeem", csrf_token=csrf)
    assert (
        again
        == f"Not redeemed: Booking {booking['supplierReference']} is REDEEMED; it takes no more actions."
    )


async def test_actions_need_the_csrf_token_and_a_session(
    client: httpx.AsyncClient, csrf: str, office: Services
) -> None:
    booking = await confirmed(client)
    for form in ({}, {"csrf_token": "forged"}, {"csrf_token": csrf[:-1]}):
        refused = await client.post(f"/admin/bookings/{booking['id']}/redeem", data=form)
        assert refused.status_code == 403
        assert "Nothing was changed" in text_of(refused.text)
    cancel = await client.post(f"/admin/bookings/{booking['id']}/cancel", data={"force": "true"})
    assert cancel.status_code == 403
    client.cookies.clear()
    stranger = await client.post(f"/admin/bookings/{booking['id']}/redeem", data={"csrf_token": csrf})
    assert stranger.status_code == 303 and stranger.headers["location"].startswith("/admin/sign-in")
    assert await status_of(client, booking["id"]) == "CONFIRMED"


async def test_accept_a_pending_booking(client: httpx.AsyncClient, csrf: str, office: Services) -> None:
    booking = await pending_kayak(client)
    page = text_of((await client.get(f"/admin/bookings/{booking['id']}")).text)
    assert "This booking waits for your decision." in page
    notice = await act(client, booking, "accept", csrf_token=csrf)
    assert notice == (
        f"Booking {booking['supplierReference']} accepted: PENDING → CONFIRMED. "
        "Its 2 place(s) on Sat 6 Jun 2026 18:00 BST stay taken."
    )
    assert await status_of(client, booking["id"]) == "CONFIRMED"
    assert await vacancies(client, KAYAK_SLOT, KAYAK) == 4


async def test_reject_a_pending_booking(client: httpx.AsyncClient, csrf: str, office: Services) -> None:
    booking = await pending_kayak(client)
    assert await vacancies(client, KAYAK_SLOT, KAYAK) == 4
    notice = await act(client, booking, "reject", csrf_token=csrf, reason="River closed")
    assert notice == (
        f"Booking {booking['supplierReference']} rejected: PENDING → REJECTED. "
        "Its 2 place(s) on Sat 6 Jun 2026 18:00 BST are free again."
    )
    assert await vacancies(client, KAYAK_SLOT, KAYAK) == 6
    page = text_of((await client.get(f"/admin/bookings/{booking['id']}")).text)
    assert "“River closed”" in page and "Rejected supplier REJECTED" in page


def buttons(page: str) -> list[str]:
    """The labels of the booking page's action buttons, in order."""
    actions = page.split('<section class="card actions">')[1].split("</section>")[0]
    return re.findall(r'<button type="submit"[^>]*>([^<]+)</button>', actions)


async def test_each_status_offers_one_set_of_actions(
    client: httpx.AsyncClient, csrf: str, office: Services
) -> None:
    async def shown(booking: dict[str, Any]) -> tuple[list[str], str]:
        page = (await client.get(f"/admin/bookings/{booking['id']}")).text
        return buttons(page), text_of(page.split('<section class="card actions">')[1].split("</section>")[0])

    held = await reserve(client)
    assert await shown(held) == (
        ["Release the hold"],
        "Actions Reseller A holds these places until 1 Jun 2026 09:30 BST, then they are free "
        "again; it confirms the booking or lets it go. Reason for releasing Release the hold",
    )
    pending = await pending_kayak(client)
    assert (await shown(pending))[0] == ["Accept", "Reject"]
    assert "This booking waits for your decision." in (await shown(pending))[1]
    booking = await confirmed(client)
    assert (await shown(booking))[0] == ["Redeem: guests have arrived", "Cancel booking"]
    await act(client, booking, "redeem", csrf_token=csrf)
    assert await shown(booking) == ([], "Actions No action: the booking is redeemed.")
    await act(client, pending, "reject", csrf_token=csrf)
    assert await shown(pending) == ([], "Actions No action: the booking is rejected.")


async def test_actions_outside_a_statuses_set_are_refused(
    client: httpx.AsyncClient, csrf: str, office: Services
) -> None:
    pending = await pending_kayak(client)
    reference = pending["supplierReference"]
    refused = await act(client, pending, "cancel", csrf_token=csrf, force="true")
    assert refused == f"Not cancelled: Booking {reference} is PENDING; you can accept or reject it."
    assert await status_of(client, pending["id"]) == "PENDING"
    assert await act(client, pending, "release", csrf_token=csrf) == (
        f"Not released: Booking {reference} is PENDING; you can accept or reject it."
    )
    booking = await confirmed(client)
    assert await act(client, booking, "accept", csrf_token=csrf) == (
        f"Not accepted: Booking {booking['supplierReference']} is CONFIRMED; you can redeem or cancel it."
    )
    held = await reserve(client)
    assert await act(client, held, "redeem", csrf_token=csrf) == (
        f"Not redeemed: Booking {held['supplierReference']} is ON_HOLD; you can release the hold."
    )
    assert await status_of(client, booking["id"]) == "CONFIRMED"
    assert await status_of(client, held["id"]) == "ON_HOLD"


async def test_release_a_hold(client: httpx.AsyncClient, csrf: str, office: Services) -> None:
    held = await reserve(client)
    assert await vacancies(client) == 18
    notice = await act(client, held, "release", csrf_token=csrf, reason="Walk-in party")
    assert notice == (
        f"Booking {held['supplierReference']} released: ON_HOLD → CANCELLED. "
        "Its 2 place(s) on Tue 2 Jun 2026 10:00 BST are free again."
    )
    assert await vacancies(client) == 20 and await status_of(client, held["id"]) == "CANCELLED"
    again = await act(client, held, "release", csrf_token=csrf)
    assert again == f"Booking {held['supplierReference']} was already cancelled; nothing changed."


async def test_cancel_frees_the_places(client: httpx.AsyncClient, csrf: str, office: Services) -> None:
    booking = await confirmed(client)
    assert await vacancies(client) == 18
    notice = await act(client, booking, "cancel", csrf_token=csrf, reason="Guest called")
    assert notice == (
        f"Booking {booking['supplierReference']} cancelled: CONFIRMED → CANCELLED. "
        "Its 2 place(s) on Tue 2 Jun 2026 10:00 BST are free again."
    )
    assert await vacancies(client) == 20
    page = text_of((await client.get(f"/admin/bookings/{booking['id']}")).text)
    assert "“Guest called”" in page and "Cancelled supplier CANCELLED reason: Guest called" in page
    again = await act(client, booking, "cancel", csrf_token=csrf)
    assert again == f"Booking {booking['supplierReference']} was already cancelled; nothing changed."


async def test_cancel_past_the_cutoff_needs_force(
    client: httpx.AsyncClient, csrf: str, office: Services, clock: Clock
) -> None:
    booking = await confirmed(client)
    clock.advance(hours=2)  # the cruise's cancellation cutoff is 24 hours before its start
    page = text_of((await client.get(f"/admin/bookings/{booking['id']}")).text)
    assert "Cancel even though the cutoff has passed" in page
    refused = await act(client, booking, "cancel", csrf_token=csrf)
    assert refused.startswith("Not cancelled: Booking")
    assert "the cutoff was Mon 1 Jun 2026 10:00 BST" in refused, refused  # in the product's time
    assert refused.endswith("Tick “Cancel even though the cutoff has passed” to cancel it anyway.")
    assert await status_of(client, booking["id"]) == "CONFIRMED"
    forced = await act(client, booking, "cancel", csrf_token=csrf, force="true")
    assert forced.startswith(f"Booking {booking['supplierReference']} cancelled: CONFIRMED → CANCELLED.")
    assert await status_of(client, booking["id"]) == "CANCELLED"


async def test_actions_on_an_unknown_booking(client: httpx.AsyncClient, csrf: str, office: Services) -> None:
    for action in ("redeem", "accept", "reject", "cancel", "release"):
        response = await client.post(f"/admin/bookings/nope/{action}", data={"csrf_token": csrf})
        assert response.status_code == 404, action
        assert "No booking with id 'nope'" in text_of(response.text)


async def test_create_a_connection_shows_its_secrets_once(
    client: httpx.AsyncClient, csrf: str, office: Services
) -> None:
    created = await client.post("/admin/connections", data={"name": "City Tours Online", "csrf_token": csrf})
    assert created.status_code == 200
    assert created.headers["cache-control"] == "no-store"
    key = re.search(r'<code id="new-key" class="break">([^<]+)</code>', created.text)
    secret = re.search(r'<code id="new-secret" class="break">([^<]+)</code>', created.text)
    assert key is not None and secret is not None
    assert "Connection “City Tours Online” created" in text_of(created.text)
    assert (await client.get("/octo/supplier", headers=auth(key.group(1)))).status_code == 200
    listing = await client.get("/admin/connections")
    assert "City Tours Online" in listing.text
    assert key.group(1) not in listing.text and secret.group(1) not in listing.text
    assert f"…{key.group(1)[-4:]}" in listing.text


async def test_create_a_connection_explains_what_is_wrong(
    client: httpx.AsyncClient, csrf: str, office: Services
) -> None:
    duplicate = await client.post("/admin/connections", data={"name": "Reseller A", "csrf_token": csrf})
    assert duplicate.status_code == 400
    assert "A connection named 'Reseller A' already exists" in text_of(duplicate.text)
    assert 'value="Reseller A"' in duplicate.text  # the form keeps what was typed
    blank = await client.post("/admin/connections", data={"name": "  ", "csrf_token": csrf})
    assert blank.status_code == 400 and "A connection needs a name" in text_of(blank.text)
    forged = await client.post("/admin/connections", data={"name": "Forged"})
    assert forged.status_code == 403
    assert "Forged" not in (await client.get("/admin/connections")).text


async def test_revoke_a_connection(client: httpx.AsyncClient, csrf: str, office: Services) -> None:
    connections = (await client.get("/admin/api/connections", headers=ADMIN)).json()
    reseller_a = next(c for c in connections if c["name"] == "Reseller A")
    path = f"/admin/connections/{reseller_a['id']}/revoke"
    assert (await client.post(path)).status_code == 403
    assert (await client.get("/octo/supplier", headers=auth())).status_code == 200
    response = await client.post(path, data={"csrf_token": csrf})
    assert response.status_code == 303 and response.headers["location"] == "/admin/connections"
    page = await client.get("/admin/connections")
    assert notice_of(page.text) == "Connection “Reseller A” revoked: its API key …er-a no longer works."
    assert path not in page.text and "REVOKED" in text_of(page.text)
    refused = await client.get("/octo/supplier", headers=auth())
    assert refused.status_code == 400 and refused.json()["error"] == "UNAUTHORIZED"
    missing = await client.post("/admin/connections/nope/revoke", data={"csrf_token": csrf})
    assert missing.status_code == 404
